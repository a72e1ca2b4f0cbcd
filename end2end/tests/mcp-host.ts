// A minimal MCP Apps host (revision 2026-01-26), written to the spec in plain browser JavaScript
// rather than with @modelcontextprotocol/ext-apps's AppBridge, whose build needs a bundler. It is
// strict where real hosts are strict: the view runs in an iframe sandboxed with `allow-scripts`
// only (no `allow-forms`, no `allow-same-origin`), under the spec's default CSP (no network);
// nothing is sent to the view before `ui/notifications/initialized`; `tool-input` comes before
// `tool-result`; a `tools/call` from the view reaches the server only for a tool whose
// visibility includes "app". The MCP connection itself stays in the test (the official
// TypeScript SDK), reached through `window.hostCallTool`, which the spec exposes.

export const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none';";

export type HostContext = Record<string, unknown>;

export const HOST_HTML = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Test MCP host</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; padding: 16px; background: #e2e8f0; }
  .turn { max-width: 760px; margin: 0 auto; background: #fff; border-radius: 12px; padding: 16px; }
  .turn p { margin: 0 0 12px; color: #334155; }
  iframe { width: 100%; border: 1px solid #cbd5e1; border-radius: 8px; height: 200px; display: block; }
</style></head>
<body><div class="turn"><p>Assistant: I asked you on a page below.</p><div id="slot"></div></div>
<script>
(() => {
  const state = { opened: [], sizes: [], refusedCalls: [], initialized: 0, toolResults: 0, shown: null };
  window.hostState = state;
  let current = null;

  function show(view) {
    state.shown = view;
    if (current) { window.removeEventListener('message', current.listener); current.iframe.remove(); }
    const iframe = document.createElement('iframe');
    iframe.id = 'view';
    iframe.title = 'Tessera page';
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.srcdoc = view.html.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + view.csp + '">');
    const appTools = new Set(view.tools
      .filter((tool) => ((tool._meta && tool._meta.ui && tool._meta.ui.visibility) || ['model', 'app']).includes('app'))
      .map((tool) => tool.name));
    const send = (message) => iframe.contentWindow.postMessage(message, '*');
    const respond = (id, result) => send({ jsonrpc: '2.0', id, result });
    const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });
    let ready = false;
    const listener = async (event) => {
      if (event.source !== iframe.contentWindow) return;
      const message = event.data;
      if (!message || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return;
      const params = message.params || {};
      switch (message.method) {
        case 'ui/initialize':
          if (!params.appInfo || !params.appCapabilities || !params.protocolVersion) return fail(message.id, -32603, 'invalid ui/initialize');
          return respond(message.id, {
            protocolVersion: '2026-01-26',
            hostInfo: { name: 'tessera-test-host', version: '1.0.0' },
            hostCapabilities: { openLinks: {}, serverTools: {}, logging: {} },
            hostContext: view.context,
          });
        case 'ui/notifications/initialized':
          if (ready) return;
          ready = true;
          state.initialized += 1;
          send({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: view.toolInput } });
          send({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: view.toolResult });
          state.toolResults += 1;
          return;
        case 'ui/notifications/size-changed':
          if (typeof params.height === 'number') { iframe.style.height = params.height + 'px'; state.sizes.push(params.height); }
          return;
        case 'ui/open-link':
          state.opened.push(params.url);
          return respond(message.id, {});
        case 'tools/call':
          if (!ready) return fail(message.id, -32600, 'not initialized');
          if (!appTools.has(params.name)) { state.refusedCalls.push(params.name); return fail(message.id, -32602, 'tool not available to apps'); }
          try { return respond(message.id, await window.hostCallTool(params.name, params.arguments || {})); }
          catch (error) { return fail(message.id, -32603, String(error)); }
        default:
          if (message.id !== undefined) return fail(message.id, -32601, 'Method not found');
      }
    };
    window.addEventListener('message', listener);
    current = { iframe, listener, ready: () => ready };
    document.getElementById('slot').append(iframe);
  }

  window.hostShow = show;
  // A host reloads a view at will: a new iframe, the same tool input and result replayed.
  window.hostReload = () => show(state.shown);
  // Like every message to the view, only once it said it is initialized.
  window.hostSetContext = (context) => {
    if (!current || !current.ready()) throw new Error('the view is not initialized yet');
    current.iframe.contentWindow.postMessage(
      { jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: context }, '*');
  };
})();
</script>
</body>
</html>`;
