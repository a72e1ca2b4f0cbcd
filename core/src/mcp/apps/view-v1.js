// The view side of MCP Apps (revision 2026-01-26) for a Tessera page, written to the spec: JSON-RPC
// 2.0 over postMessage with the host. The page itself is rendered by the server; this script only
// shows it, sends what the person entered through the app-only tool `submit_answer`, and swaps in
// what comes back. It never relies on the form's own submission: hosts sandbox the view without
// `allow-forms`, where a form never submits and nothing says so. It needs no network (the host's
// default CSP allows none): everything reaches the server as a tool call through the host.
(() => {
  'use strict';
  const PROTOCOL = '2026-01-26';
  const PAGE_META = 'tessera/page';
  const POLL_MS = 2000;
  const MAX_POLLS = 300;

  const page = document.getElementById('tessera-page');
  const status = document.getElementById('tessera-status');
  const openBar = document.getElementById('tessera-open');
  const openButton = document.getElementById('tessera-open-link');

  let nextId = 0;
  const pending = new Map();
  let hostCapabilities = {};
  let view = null;
  let link = null;
  let busy = false;
  let polls = 0;
  let submissions = 0;

  const post = (message) => window.parent.postMessage(message, '*');

  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ jsonrpc: '2.0', id, method, params });
    });
  }

  function notify(method, params) {
    post(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (typeof message.method === 'string') {
      if (message.id !== undefined && message.id !== null) answerHost(message);
      else onNotification(message.method, message.params || {});
      return;
    }
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(message.error.message || 'the host refused'));
    else waiting.resolve(message.result);
  });

  function answerHost(message) {
    if (message.method === 'ui/resource-teardown' || message.method === 'ping') {
      post({ jsonrpc: '2.0', id: message.id, result: {} });
    } else {
      post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    }
  }

  function onNotification(method, params) {
    if (method === 'ui/notifications/tool-result') onToolResult(params);
    else if (method === 'ui/notifications/host-context-changed') applyContext(params);
    else if (method === 'ui/notifications/tool-cancelled') showText('The request was cancelled before its page was shown.');
  }

  function applyContext(context) {
    if (!context || typeof context !== 'object') return;
    if (context.theme === 'dark' || context.theme === 'light') {
      document.documentElement.classList.toggle('dark', context.theme === 'dark');
    }
    const variables = context.styles && context.styles.variables;
    if (variables && typeof variables === 'object') {
      for (const [name, value] of Object.entries(variables)) {
        if (name.startsWith('--') && typeof value === 'string') {
          document.documentElement.style.setProperty(name, value);
        }
      }
    }
  }

  const say = (text) => { status.textContent = text; };
  const pageMeta = (result) => (result && result._meta && result._meta[PAGE_META]) || null;
  const statusOf = (result) => (result && result.structuredContent && result.structuredContent.status) || null;
  const textOf = (result) => ((result && result.content) || [])
    .filter((block) => block && block.type === 'text')
    .map((block) => block.text)
    .join(' ');

  function showText(text) {
    const paragraph = document.createElement('p');
    paragraph.textContent = text;
    page.replaceChildren(paragraph);
    page.removeAttribute('aria-busy');
  }

  // The server rendered and escaped this HTML, as it does for the page's own link.
  function show(html, state) {
    if (typeof html !== 'string') return false;
    page.innerHTML = html;
    page.dataset.state = state || '';
    page.removeAttribute('aria-busy');
    return true;
  }

  function onToolResult(result) {
    const meta = pageMeta(result);
    if (result && result.isError) {
      showText(`This request could not be made: ${textOf(result)}`);
      return;
    }
    if (meta && meta.status === 'elsewhere') {
      showText('This request went to the people it names; each answers through a link of their own.');
      return;
    }
    if (!meta || typeof meta.view !== 'string') {
      showText('There is nothing to answer here.');
      return;
    }
    view = meta.view;
    if (typeof meta.link === 'string' && hostCapabilities.openLinks) {
      link = meta.link;
      openBar.hidden = false;
    }
    show(meta.html, 'open');
    // A view reloaded after the answer shows the receipt, not the form it was first given.
    refresh('');
  }

  // Asks again while the page is being prepared, also after a failed call, a bounded number of times.
  function pollAgain(query) {
    polls += 1;
    if (polls < MAX_POLLS) setTimeout(() => refresh(query), POLL_MS);
    else say('The page is taking long to prepare. Reopen this conversation later to answer it.');
  }

  async function refresh(query) {
    const asked = submissions;
    const result = await callTool('show_page', query ? { view, query } : { view });
    // A submission answered meanwhile showed something newer than this reply.
    if (asked !== submissions) return;
    if (!result) {
      if (!page.dataset.state) pollAgain(query); // nothing shown yet: keep asking
      return;
    }
    const state = statusOf(result);
    if (state === 'preparing') {
      say('The page is being prepared…');
      pollAgain(query);
      return;
    }
    if (state === 'open' && page.dataset.state === 'open' && !query) {
      say('');
      return; // keep what the person may have typed already
    }
    const meta = pageMeta(result);
    show(meta && meta.html, state);
    say(state === 'closed' ? 'This request is no longer open.' : '');
  }

  async function callTool(name, args) {
    try {
      const result = await request('tools/call', { name, arguments: args });
      if (result && result.isError) {
        say(textOf(result) || 'The server did not accept this.');
        return null;
      }
      return result;
    } catch (error) {
      say(`The page could not reach the server (${error.message}). Your answers are still here; try again.`);
      return null;
    }
  }

  const isSubmitter = (element) =>
    element instanceof HTMLButtonElement ? element.type === 'submit' : element instanceof HTMLInputElement;

  // A form's own properties, read from the prototype: a field named `elements` or
  // `reportValidity` (names come from the page's schema) hides them on the form itself.
  const formGet = (form, name) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name).get.call(form);
  const controlsOf = (form) => Array.from(formGet(form, 'elements'));
  const TEXT_TYPES = ['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month', 'week', 'time',
    'datetime-local', 'number'];

  // What Enter in a field presses, as a browser decides: the form's first submit button; with
  // none, the form is sent only when it has a single text field.
  function implicitSubmitter(form) {
    const controls = controlsOf(form);
    const button = controls.find((element) => isSubmitter(element) && ['submit', 'image'].includes(element.type));
    if (button) return { button };
    const fields = controls.filter((element) => element instanceof HTMLInputElement && TEXT_TYPES.includes(element.type));
    return fields.length === 1 ? { button: null } : null;
  }

  async function submit(form, button) {
    if (busy || !view) return;
    if (button && button.disabled) return;
    const validate = !formGet(form, 'noValidate') && !(button && button.formNoValidate);
    if (validate && !HTMLFormElement.prototype.reportValidity.call(form)) return;
    const data = new FormData(form);
    if (button && button.name) data.append(button.name, button.value);
    const body = new URLSearchParams();
    for (const [name, value] of data) {
      if (typeof value === 'string') body.append(name, value);
    }
    busy = true;
    submissions += 1;
    page.setAttribute('aria-busy', 'true');
    say('Sending…');
    const result = await callTool('submit_answer', { view, body: body.toString() });
    busy = false;
    page.removeAttribute('aria-busy');
    if (!result) return; // the form stays as it was, with what callTool said
    const state = statusOf(result);
    const meta = pageMeta(result);
    show(meta && meta.html, state === 'navigated' || state === 'invalid' ? 'open' : state);
    const said = {
      submitted: 'Your answer was sent.',
      invalid: 'Some answers need correcting; see the messages on the page.',
      closed: 'This request is no longer open; your answer was not recorded.',
    };
    say(said[state] || '');
    const target = state === 'invalid'
      ? page.querySelector('[aria-invalid="true"]') || page.querySelector('[role="alert"]')
      : state === 'navigated' ? null : page.querySelector('h1, h2');
    if (target) {
      if (!target.matches('input, select, textarea, button, a[href]')) target.setAttribute('tabindex', '-1');
      target.focus();
    }
  }

  function follow(anchor) {
    const href = anchor.getAttribute('href') || '';
    if (href.startsWith('?')) {
      refresh(href.slice(1)); // a table's page or sort on a page without a form
    } else if (/^https?:\/\//i.test(href) && hostCapabilities.openLinks) {
      request('ui/open-link', { url: href }).catch(() => say('The host did not open the link.'));
    }
  }

  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    if (!target || !page.contains(target)) return;
    const button = target.closest('button, input[type="submit"], input[type="image"]');
    if (button && button.form && isSubmitter(button)) {
      event.preventDefault();
      submit(button.form, button);
      return;
    }
    const anchor = target.closest('a[href]');
    if (anchor) {
      event.preventDefault();
      follow(anchor);
    }
  });

  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.isComposing) return;
    const field = event.target;
    if (!(field instanceof HTMLInputElement) || !field.form || !page.contains(field)) return;
    if (['button', 'submit', 'reset', 'image', 'file'].includes(field.type)) return;
    event.preventDefault();
    const implicit = implicitSubmitter(field.form);
    if (implicit) submit(field.form, implicit.button);
  });

  // Where a host does allow forms, a submission still goes through the tool, never a navigation.
  document.addEventListener('submit', (event) => {
    event.preventDefault();
    if (event.target instanceof HTMLFormElement) submit(event.target, event.submitter || null);
  });

  openButton.addEventListener('click', () => {
    if (!link) return;
    request('ui/open-link', { url: link })
      .then((result) => { if (result && result.isError) say('The host did not open the link.'); })
      .catch(() => say('The host did not open the link.'));
  });

  let reported = 0;
  function reportSize() {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === reported) return;
    reported = height;
    notify('ui/notifications/size-changed', { height });
  }

  async function start() {
    try {
      const initialized = await request('ui/initialize', {
        appInfo: { name: 'tessera-page', version: '1' },
        appCapabilities: {},
        protocolVersion: PROTOCOL,
      });
      hostCapabilities = (initialized && initialized.hostCapabilities) || {};
      applyContext(initialized && initialized.hostContext);
    } catch (error) {
      showText(`This page cannot be shown here (${error.message}).`);
      return;
    }
    notify('ui/notifications/initialized');
    new ResizeObserver(reportSize).observe(document.body);
    reportSize();
  }

  start();
})();
