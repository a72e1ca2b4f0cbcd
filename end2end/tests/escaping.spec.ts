// Everything model-written or data-bound is escaped (issue 4, renderer): a page tree whose every
// string prop and every bound data cell holds an injection payload is rendered in Chromium, through
// the author's preview page and through the preview API's HTML, and no script runs while the
// payloads show as literal text.
import type { Locator, Page } from '@playwright/test';
import { expect, openAsAdmin, test } from './helpers';

const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';
const JS_URL = 'javascript:window.__pwned=1';
// Browsers ignore case, leading blanks and tabs or newlines inside a URL scheme.
const JS_URL_DISGUISED = ' JaVa\tScRiPt:window.__pwned=1';
const ATTR = '" onmouseover="window.__pwned=1';
const ATTR_SINGLE = "' onmouseover='window.__pwned=1";
// Inside a <textarea> only its end tag is special.
const TEXTAREA = '</textarea><img src=x onerror="window.__pwned=1">';
// A placeholder inside data is text, never expanded again. (In props a placeholder is the model's
// own binding and is resolved, so this payload only ever sits in data, reached by bindings.)
const CURLY = '{{/secret}}';
const SECRET = 'SECRET-MUST-NOT-SHOW';

const PAYLOADS = [SCRIPT, IMG, JS_URL, ATTR, ATTR_SINGLE, TEXTAREA, CURLY];

const data = {
  secret: SECRET,
  script: SCRIPT,
  img: IMG,
  js: JS_URL,
  attr: ATTR,
  curly: CURLY,
  textarea: TEXTAREA,
  rows: [
    { id: ATTR, name: SCRIPT, note: IMG, link: JS_URL, curly: CURLY },
    { id: ATTR_SINGLE, name: CURLY, note: TEXTAREA, link: ATTR, curly: SCRIPT },
  ],
  items: [SCRIPT, IMG, CURLY, ATTR, TEXTAREA],
  pairs: [
    { label: SCRIPT, value: IMG },
    { label: CURLY, value: ATTR },
  ],
  events: [
    { date: CURLY, title: SCRIPT, description: IMG },
    { date: ATTR, title: TEXTAREA, description: CURLY },
  ],
  options: [{ value: ATTR, label: SCRIPT }, { value: CURLY, label: IMG }, JS_URL],
  chart: [
    { label: SCRIPT, value: 3 },
    { label: IMG, value: 5 },
    { label: CURLY, value: 4 },
  ],
  image: JS_URL,
};

/** Every component that shows text, each string prop a payload, literal or bound. */
const tree = {
  nodes: {
    heading: { component: 'Heading', props: { text: SCRIPT, level: 1 } },
    heading2: { component: 'Heading', props: { text: '{{/img}} / {{/curly}}', level: 2 } },
    text: { component: 'Text', props: { text: `${IMG} ${ATTR}` } },
    'text-bound': { component: 'Text', props: { text: 'Bound: {{/script}} {{/curly}} {{/textarea}}' } },
    alert: { component: 'Alert', props: { tone: 'error', title: SCRIPT, text: '{{/attr}}' } },
    badge: { component: 'Badge', props: { text: IMG, tone: 'warning' } },
    card: { component: 'Card', props: { title: SCRIPT, description: ATTR_SINGLE }, children: ['kv', 'list'] },
    kv: { component: 'KeyValue', props: { items: { $data: '/pairs' } } },
    'kv-literal': {
      component: 'KeyValue',
      props: { items: [{ label: ATTR, value: '{{/script}}' }, { label: TEXTAREA, value: { $data: '/curly' } }] },
    },
    list: { component: 'List', props: { items: { $data: '/items' }, emptyText: SCRIPT } },
    'list-keyed': { component: 'List', props: { items: { $data: '/rows' }, itemKey: 'name', ordered: true } },
    table: {
      component: 'Table',
      props: {
        caption: SCRIPT,
        rows: { $data: '/rows' },
        columns: [
          { key: 'name', label: IMG },
          { key: 'note', label: ATTR },
          { key: 'link', label: JS_URL },
          { key: 'curly', label: '{{/curly}}' },
        ],
        emptyText: TEXTAREA,
      },
    },
    'table-empty': { component: 'Table', props: { caption: ATTR, rows: [], columns: [{ key: 'x', label: 'X' }], emptyText: SCRIPT } },
    link: { component: 'Link', props: { href: JS_URL, label: SCRIPT } },
    'link-disguised': { component: 'Link', props: { href: JS_URL_DISGUISED, label: IMG } },
    'link-bound': { component: 'Link', props: { href: '{{/js}}', label: '{{/attr}}' } },
    'link-attr': { component: 'Link', props: { href: `https://example.com/${ATTR}`, label: ATTR_SINGLE } },
    'link-empty-label': { component: 'Link', props: { href: JS_URL, label: '' } },
    image: { component: 'Image', props: { src: JS_URL, alt: SCRIPT, caption: IMG } },
    'image-bound': { component: 'Image', props: { src: { $data: '/image' }, alt: ATTR } },
    'image-html': { component: 'Image', props: { src: `data:text/html,${SCRIPT}`, alt: TEXTAREA } },
    'image-attr': { component: 'Image', props: { src: `https://example.com/x.png${ATTR}`, alt: ATTR_SINGLE } },
    code: { component: 'Code', props: { code: `${SCRIPT}\n${IMG}\n${TEXTAREA}`, language: ATTR } },
    'code-bound': { component: 'Code', props: { code: { $data: '/curly' }, language: SCRIPT } },
    timeline: { component: 'Timeline', props: { events: { $data: '/events' } } },
    details: { component: 'Details', props: { summary: SCRIPT, open: true }, children: ['details-text'] },
    'details-text': { component: 'Text', props: { text: '{{/img}}' } },
    stat: { component: 'Stat', props: { label: SCRIPT, value: { $data: '/img' }, delta: ATTR } },
    progress: { component: 'ProgressBar', props: { label: IMG, value: 2, max: 3 } },
    chart: {
      component: 'Chart',
      props: { kind: 'bar', title: SCRIPT, data: { $data: '/chart' }, labelKey: 'label', valueKey: 'value', xLabel: ATTR, yLabel: IMG },
    },
    'chart-line': {
      component: 'Chart',
      props: { kind: 'line', title: TEXTAREA, data: { $data: '/chart' }, labelKey: 'label', valueKey: 'value' },
    },
    download: { component: 'DownloadLink', props: { label: SCRIPT, format: 'csv', data: { $data: '/rows' }, filename: ATTR } },
    'n" onmouseover="window.__pwned=1': { component: 'Divider', props: {} },
    form: {
      component: 'Form',
      props: { title: SCRIPT, description: IMG },
      children: ['input', 'input-bound', 'textarea', 'checkbox', 'select', 'select-multi', 'radio', 'boxes', 'multi', 'pick', 'submit'],
    },
    input: { component: 'Input', props: { name: 'a', label: SCRIPT, help: IMG, placeholder: ATTR, value: ATTR_SINGLE } },
    'input-bound': { component: 'Input', props: { name: 'b', label: '{{/curly}}', help: '{{/textarea}}', placeholder: '{{/attr}}', value: { $data: '/img' } } },
    textarea: { component: 'TextArea', props: { name: 'c', label: ATTR, help: SCRIPT, placeholder: IMG, value: TEXTAREA } },
    checkbox: { component: 'Checkbox', props: { name: 'd', label: SCRIPT, help: ATTR } },
    select: { component: 'Select', props: { name: 'e', label: IMG, help: '{{/curly}}', placeholder: SCRIPT, options: { $data: '/options' }, value: ATTR } },
    'select-multi': {
      component: 'Select',
      props: { name: 'f', label: TEXTAREA, multiple: true, options: [{ value: SCRIPT, label: ATTR }, IMG], value: [IMG] },
    },
    radio: { component: 'RadioGroup', props: { name: 'g', label: SCRIPT, help: IMG, options: { $data: '/options' }, value: { $data: '/curly' } } },
    boxes: { component: 'CheckboxGroup', props: { name: 'h', label: ATTR, options: [{ value: ATTR_SINGLE, label: TEXTAREA }, SCRIPT], values: [SCRIPT] } },
    multi: { component: 'MultiTextInput', props: { name: 'i', label: IMG, help: SCRIPT, placeholder: ATTR, values: [SCRIPT, TEXTAREA] } },
    pick: {
      component: 'Table',
      props: {
        caption: IMG,
        rows: { $data: '/rows' },
        columns: [{ key: 'name', label: SCRIPT }],
        selectable: { name: 'j', idKey: 'id', label: SCRIPT },
      },
    },
    submit: { component: 'Button', props: { label: SCRIPT, variant: 'danger' } },
  },
  order: [
    'heading', 'heading2', 'text', 'text-bound', 'alert', 'badge', 'card', 'kv-literal', 'list-keyed', 'table', 'table-empty',
    'link', 'link-disguised', 'link-bound', 'link-attr', 'link-empty-label', 'image', 'image-bound', 'image-html', 'image-attr',
    'code', 'code-bound', 'timeline', 'details', 'stat', 'progress', 'chart', 'chart-line', 'download',
    'n" onmouseover="window.__pwned=1', 'form',
  ],
};

const treeJson = JSON.stringify(tree, null, 2);
const dataJson = JSON.stringify(data, null, 2);

test('payloads in every prop and data cell render as text on the preview page, and no script runs', async ({ page }) => {
  test.setTimeout(120_000);
  const watch = watchForScripts(page);
  // The preview is for the admin: log in on the way.
  await openAsAdmin(page, '/preview');
  const form = page.locator('form[action="/preview"]');
  await form.getByLabel('Page tree (JSON)').fill(treeJson);
  await form.getByLabel('Response schema (JSON Schema, optional)').fill('');
  await form.getByLabel('Data (JSON)').fill(dataJson);
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.request().method() === 'POST' && new URL(candidate.url()).pathname === '/preview'),
    form.getByRole('button', { name: 'Preview' }).click(),
  ]);
  expect(response.status()).toBe(200);

  // The editor gives the pasted text back unchanged: a `</textarea>` inside it does not end the box.
  await expect(page.getByLabel('Page tree (JSON)')).toHaveValue(treeJson);
  await expect(page.getByLabel('Data (JSON)')).toHaveValue(dataJson);
  await expect(page.getByTestId('validation-report')).toBeVisible();

  const rendered = page.locator('section[aria-label="Result"]').getByTestId('page-tree');
  await expect(rendered).toBeVisible();
  await expectRenderedSafely(page, rendered);
  await moveAndClickOverEverything(page, '[data-testid="page-tree"]');
  await expectNothingRan(page, watch);
});

test('payloads in every prop and data cell render as text from the preview API HTML, and no script runs', async ({ page, request, baseURL }) => {
  test.setTimeout(120_000);
  const response = await request.post('/api/pages/preview', {
    headers: { Authorization: 'Bearer e2e-token-0123456789abcdef' },
    data: { tree, data },
  });
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { html: string; validation: unknown };
  expect(typeof body.html).toBe('string');
  expect(body.html).not.toContain(SECRET);

  // No CSP here: only the escaping itself stands between the payloads and the page.
  const watch = watchForScripts(page);
  await page.setContent(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Preview</title>` +
      `<link rel="stylesheet" href="${baseURL}/pkg/tessera.css"></head>` +
      `<body class="bg-slate-50 p-6 text-slate-900"><main>${body.html}</main></body></html>`,
  );
  // The stylesheet applies (text-3xl on the level-1 heading comes only from Tailwind).
  await expect(page.getByRole('heading', { level: 1 })).toHaveCSS('font-size', '30px');
  const rendered = page.getByTestId('page-tree');
  await expectRenderedSafely(page, rendered);
  await moveAndClickOverEverything(page, '[data-testid="page-tree"]');
  // Keyboard too: focus every control and link in turn.
  for (let press = 0; press < 80; press += 1) await page.keyboard.press('Tab');
  await expectNothingRan(page, watch);
});

type Watch = { dialogs: string[]; cspViolations: string[]; errors: string[] };

/** Records dialogs (dismissing them), CSP refusals and page errors from now on. */
function watchForScripts(page: Page): Watch {
  const watch: Watch = { dialogs: [], cspViolations: [], errors: [] };
  page.on('dialog', async (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    await dialog.dismiss();
  });
  page.on('console', (message) => {
    // A payload that reached the DOM as markup would be stopped by the CSP and show up here.
    if (/Content Security Policy/i.test(message.text())) watch.cspViolations.push(message.text());
  });
  page.on('pageerror', (error) => watch.errors.push(error.message));
  return watch;
}

async function expectNothingRan(page: Page, watch: Watch): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(watch.dialogs).toEqual([]);
  expect(watch.cspViolations).toEqual([]);
  expect(watch.errors).toEqual([]);
}

/** The payloads are in the page as text, and nothing in the DOM could run one of them. */
async function expectRenderedSafely(page: Page, rendered: Locator): Promise<void> {
  // Every component rendered: no error boxes instead of components.
  await expect(rendered.getByTestId('node-error')).toHaveCount(0);

  // Literal text, visible, for each kind of payload.
  await expect(rendered.getByText(SCRIPT, { exact: true }).first()).toBeVisible();
  await expect(rendered.getByRole('heading', { level: 1 })).toHaveText(SCRIPT);
  await expect(rendered.getByText(IMG, { exact: true }).first()).toBeVisible();
  await expect(rendered.getByText(`${IMG} ${ATTR}`, { exact: true })).toBeVisible();
  await expect(rendered.getByText(`Bound: ${SCRIPT} ${CURLY} ${TEXTAREA}`, { exact: true })).toBeVisible();
  await expect(rendered.getByText(CURLY, { exact: true }).first()).toBeVisible();
  await expect(rendered.getByText(TEXTAREA, { exact: true }).first()).toBeVisible();
  await expect(rendered.getByText(ATTR_SINGLE, { exact: true }).first()).toBeVisible();
  // Unsafe URLs become plain text (the label, or the href itself when there is no label).
  await expect(rendered.getByTestId('unsafe-link')).toHaveCount(4);
  await expect(rendered.getByTestId('unsafe-link').filter({ hasText: JS_URL })).toHaveCount(1);
  await expect(rendered.getByTestId('unsafe-image')).toHaveCount(3);
  await expect(rendered.getByText(`Image not shown: ${SCRIPT}`, { exact: true })).toBeVisible();
  // The table's header and cells, the code block and the form controls hold the payloads as values.
  const table = rendered.locator('[id="t-table"] table');
  await expect(table.locator('caption')).toHaveText(SCRIPT);
  await expect(table.locator('thead th')).toHaveText([IMG, ATTR, JS_URL, CURLY].map((label) => new RegExp(`^${escapeRegExp(label)}`)));
  await expect(table.locator('tbody tr').first().locator('td')).toHaveText([SCRIPT, IMG, JS_URL, CURLY]);
  await expect(rendered.locator('pre code').first()).toHaveText(`${SCRIPT}\n${IMG}\n${TEXTAREA}`);
  await expect(rendered.getByPlaceholder(ATTR, { exact: true }).first()).toHaveValue(ATTR_SINGLE);
  await expect(rendered.locator('input[name="b"]')).toHaveValue(IMG);
  await expect(rendered.locator('input[name="b"]')).toHaveAttribute('placeholder', ATTR);
  await expect(rendered.locator('textarea[name="c"]')).toHaveValue(TEXTAREA);
  await expect(rendered.locator('select[name="e"] option')).toHaveText([SCRIPT, SCRIPT, IMG, JS_URL]);
  expect(await rendered.locator('select[name="e"] option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual([
    '',
    ATTR,
    CURLY,
    JS_URL,
  ]);
  await expect(rendered.locator('select[name="e"]')).toHaveValue(ATTR);
  await expect(rendered.locator('input[name="g"]:checked')).toHaveValue(CURLY);
  await expect(rendered.locator('input[name="h"]:checked')).toHaveValue(SCRIPT);
  await expect(rendered.locator('input[name="i"]').first()).toHaveValue(SCRIPT);
  await expect(rendered.locator('input[name="i"]').nth(1)).toHaveValue(TEXTAREA);
  await expect(rendered.locator('input[name="j"]').first()).toHaveValue(ATTR);

  // A placeholder found in data stays text: the secret it names never appears.
  await expect(rendered.getByText(SECRET)).toHaveCount(0);
  expect(await rendered.innerHTML()).not.toContain(SECRET);

  // Nothing in the DOM could run a payload: no script carrying one, no inline handlers anywhere,
  // no javascript: URL on a link, image, frame or form, no image made from markup.
  const dangers = await page.evaluate(() => {
    const found: string[] = [];
    for (const script of document.querySelectorAll('script')) {
      if ((script.textContent ?? '').includes('__pwned')) found.push(`script: ${script.outerHTML.slice(0, 80)}`);
    }
    for (const element of document.querySelectorAll('*')) {
      for (const attribute of element.getAttributeNames()) {
        if (attribute.startsWith('on')) found.push(`${element.tagName} has ${attribute}`);
      }
      for (const name of ['href', 'src', 'action', 'formaction', 'xlink:href', 'data']) {
        const value = element.getAttribute(name);
        if (value === null) continue;
        let scheme = '';
        try {
          scheme = new URL(value, document.baseURI).protocol;
        } catch {
          continue;
        }
        if (scheme === 'javascript:' || scheme === 'vbscript:' || (scheme === 'data:' && !value.startsWith('data:image/'))) {
          found.push(`${element.tagName} ${name}=${value}`);
        }
      }
    }
    for (const image of document.querySelectorAll('img')) {
      if (image.getAttribute('src') === 'x') found.push('img src=x');
    }
    for (const tag of ['iframe', 'object', 'embed']) {
      if (document.querySelector(tag)) found.push(tag);
    }
    return found;
  });
  expect(dangers).toEqual([]);
  for (const payload of PAYLOADS) {
    // Each payload shows up in the rendered page as text or as a control's value, never lost.
    const shown = await rendered.evaluate(
      (root, text) =>
        (root as HTMLElement).innerText.includes(text) ||
        [...root.querySelectorAll('input, textarea, option')].some((control) => (control as HTMLInputElement).value === text),
      payload,
    );
    expect(shown, payload).toBe(true);
  }
}

/** Moves the mouse over every visible element of the rendered tree and clicks it. */
async function moveAndClickOverEverything(page: Page, rootSelector: string): Promise<void> {
  // Keep clicks from leaving the page: links that go somewhere and form submissions are stopped,
  // but a javascript: link (if one existed) would still run, which is what is being tested.
  await page.evaluate(() => {
    document.addEventListener(
      'click',
      (event) => {
        const link = (event.target as Element | null)?.closest?.('a');
        if (link && link.protocol !== 'javascript:') event.preventDefault();
      },
      true,
    );
    document.addEventListener('submit', (event) => event.preventDefault(), true);
  });
  // A viewport as tall as the page keeps every element on screen, so one set of coordinates holds.
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: 1280, height: Math.min(height + 100, 16_000) });
  const points = await page.evaluate((selector) => {
    const root = document.querySelector(selector);
    return [...(root?.querySelectorAll('*') ?? [])]
      .map((element) => ({ box: element.getBoundingClientRect(), tag: element.tagName }))
      .filter(({ box }) => box.width > 0 && box.height > 0)
      .map(({ box, tag }) => ({ x: box.x + box.width / 2, y: box.y + box.height / 2, tag }));
  }, rootSelector);
  expect(points.length).toBeGreaterThan(100);
  for (const { x, y } of points) await page.mouse.move(x, y);
  // Bottom up, so a click that changes the layout (a <details> closing) only moves what is done.
  for (const { x, y, tag } of [...points].reverse()) {
    await page.mouse.click(x, y);
    if (tag === 'SELECT') await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Escape');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
