// MCP Apps: an MCP client (the official TypeScript SDK) that declares `io.modelcontextprotocol/ui`
// calls ask_person; a host page written to the spec (mcp-host.ts) loads the tool's ui:// resource
// into an iframe sandboxed without `allow-forms`, under the spec's default CSP, and the person
// answers inside it: a wrong value first, then the answer get_answer returns typed, with the run
// resumed once; a decline; a selection paged through its form; a reloaded view shows the receipt.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { APIRequestContext, Frame, FrameLocator, Page } from '@playwright/test';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, test } from './helpers';
import { DEFAULT_CSP, HOST_HTML, type HostContext } from './mcp-host';

const token = 'e2e-token-0123456789abcdef';
const auth = { Authorization: `Bearer ${token}` };
const MIME = 'text/html;profile=mcp-app';

type HostState = { opened: string[]; sizes: number[]; refusedCalls: string[]; initialized: number; toolResults: number };

async function connectApp(baseURL: string) {
  const client = new Client(
    { name: 'tessera-e2e-host', version: '1.0.0' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', baseURL), { requestInit: { headers: auth } }),
  );
  return client;
}

const lightContext: HostContext = {
  theme: 'light',
  displayMode: 'inline',
  availableDisplayModes: ['inline'],
  containerDimensions: { width: 720, maxHeight: 4000 },
  styles: { variables: { '--color-background-primary': 'rgb(255, 253, 247)', '--font-sans': 'Georgia, serif' } },
};

/** Calls ask_person as the model would and shows its view in the host page; the view's frame. */
async function askInHost(page: Page, client: Client, args: Record<string, unknown>, context = lightContext) {
  const { tools } = await client.listTools();
  const askPerson = tools.find((tool) => tool.name === 'ask_person') as Tool;
  const uri = (askPerson._meta as { ui: { resourceUri: string } }).ui.resourceUri;
  const resource = await client.readResource({ uri });
  const html = (resource.contents[0] as { text: string }).text;
  const result = (await client.callTool({ name: 'ask_person', arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();

  await page.exposeFunction('hostCallTool', async (name: string, callArgs: Record<string, unknown>) =>
    client.callTool({ name, arguments: callArgs }),
  );
  await page.setContent(HOST_HTML);
  await page.evaluate(
    (view) => (window as unknown as { hostShow: (view: unknown) => void }).hostShow(view),
    { html, csp: DEFAULT_CSP, tools, toolInput: args, toolResult: result, context },
  );
  const view = page.frameLocator('#view');
  const askId = (result.structuredContent as { id: string }).id;
  return { view, askId, result, html };
}

function viewFrame(page: Page): Frame {
  const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
  if (!frame) throw new Error('the view has no frame');
  return frame;
}

async function hostState(page: Page): Promise<HostState> {
  return page.evaluate(() => (window as unknown as { hostState: HostState }).hostState);
}

async function getAnswer(client: Client, askId: string) {
  const result = (await client.callTool({ name: 'get_answer', arguments: { ask_id: askId, wait_seconds: 20 } })) as CallToolResult;
  return result.structuredContent as { status: string; response: unknown; answers: unknown[] };
}

async function runOf(request: APIRequestContext, id: string) {
  await expect
    .poll(async () => ((await (await request.get(`/api/runs/${id}`, { headers: auth })).json()) as { status: string }).status, { timeout: 20_000 })
    .toBe('succeeded');
  return (await (await request.get(`/api/runs/${id}`, { headers: auth })).json()) as { steps: { name: string; attempts: number }[] };
}

/** Waits until the host has sized the iframe to the view's last reported height. */
async function sized(page: Page) {
  await expect
    .poll(async () => {
      const { sizes } = await hostState(page);
      const height = await page.locator('#view').evaluate((frame: HTMLIFrameElement) => frame.style.height);
      return sizes.length > 0 && height === `${sizes[sizes.length - 1]}px`;
    })
    .toBe(true);
}

/**
 * A screenshot of the host with the whole view: the viewport grows to the page first, since
 * Chromium paints a sandboxed (out-of-process) iframe only where the viewport shows it.
 */
async function shoot(page: Page, name: string) {
  await sized(page);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: 1280, height: Math.max(720, height) });
  await page.screenshot({ path: path.join(artifacts, name) });
  await page.setViewportSize({ width: 1280, height: 720 });
}

/** Console messages that mean the sandbox or CSP stopped something the view tried. */
function watchRefusals(page: Page): string[] {
  const refused: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    if (/Content Security Policy|Blocked form submission|allow-forms|Refused to/i.test(text)) refused.push(text);
  });
  return refused;
}

const expense = {
  prompt: 'Log the taxi to {{ city }}',
  schema: {
    type: 'object',
    properties: {
      amount: { type: 'integer', title: 'Amount', minimum: 1 },
      comment: { type: 'string', title: 'Comment' },
    },
    required: ['amount'],
  },
  data: { city: 'Berlin' },
};

async function submitIn(view: FrameLocator) {
  await view.locator('button[name="_action"][value="submit"]').click();
}

test('the person answers inline in a sandboxed view: a wrong value first, then the typed answer, once', async ({ baseURL, page, request, htmlChecker }) => {
  const refused = watchRefusals(page);
  const client = await connectApp(baseURL!);
  const { view, askId, result, html } = await askInHost(page, client, expense);
  // The model was told in words; the view got the page.
  expect(JSON.stringify(result.content)).toContain('A page was shown to the person');
  expect(JSON.stringify(result.content) + JSON.stringify(result.structuredContent)).not.toMatch(/\/p\/|[0-9a-f]{48}/);
  // The document is valid HTML (the site's stylesheet, checked nowhere else either, left aside).
  const document = html.replace(/<style>[\s\S]*?<\/style>/, '<style></style>');
  expect(await htmlChecker.check({ url: 'ui://tessera/page/v1', status: 200, html: document })).toEqual([]);

  await expect(view.getByRole('heading', { name: 'Log the taxi to Berlin' })).toBeVisible();
  // The host's theme variables reach the view.
  await expect(view.locator('body')).toHaveCSS('background-color', 'rgb(255, 253, 247)');
  await expect(view.locator('body')).toHaveCSS('font-family', 'Georgia, serif');
  // It reports its size: the host grows the iframe to the page.
  await expect.poll(async () => (await hostState(page)).sizes.length).toBeGreaterThan(0);
  await expect.poll(async () => (await page.locator('#view').boundingBox())?.height ?? 0).toBeGreaterThan(300);

  // The browser refuses the wrong value first; nothing is sent.
  await view.getByLabel('Amount').fill('0');
  await view.getByLabel('Comment').fill('Airport run');
  await submitIn(view);
  expect(await view.getByLabel('Amount').evaluate((input: HTMLInputElement) => input.validity.valid)).toBe(false);
  expect((await getAnswer(client, askId)).status).toBe('waiting');

  // A browser that checks nothing sends it: the server refuses it, with the values kept.
  await view.locator('form').evaluate((form: HTMLFormElement) => { form.noValidate = true; });
  await submitIn(view);
  await expect(view.locator('#tessera-status')).toContainText('need correcting');
  await expect(view.getByLabel('Amount')).toHaveValue('0');
  await expect(view.getByLabel('Amount')).toHaveAttribute('aria-invalid', 'true');
  await expect(view.getByLabel('Comment')).toHaveValue('Airport run');
  await expect(view.getByLabel('Amount')).toBeFocused();
  await expectNoSeriousA11yViolations(viewFrame(page));
  await shoot(page, 'mcp-app-wrong-value.png');

  // Enter in a box sends it, as in a browser tab.
  await view.getByLabel('Amount').fill('42');
  await view.getByLabel('Amount').press('Enter');
  await expect(view.locator('#tessera-status')).toContainText('Your answer was sent');
  await expect(view.getByText('your answer was received')).toBeVisible();
  await expectNoSeriousA11yViolations(viewFrame(page));
  await shoot(page, 'mcp-app-receipt.png');

  const answer = await getAnswer(client, askId);
  expect(answer.status).toBe('submitted');
  expect(answer.response).toEqual({ amount: 42, comment: 'Airport run' });
  expect(answer.answers).toHaveLength(1);
  const run = await runOf(request, askId);
  expect(run.steps.every((step) => step.attempts === 1), JSON.stringify(run.steps)).toBe(true);

  // A reloaded view is shown the receipt, not the form again.
  await page.evaluate(() => (window as unknown as { hostReload: () => void }).hostReload());
  await expect(page.frameLocator('#view').getByText('your answer was received')).toBeVisible();
  await expect(page.frameLocator('#view').getByLabel('Amount')).toHaveCount(0);
  expect((await hostState(page)).refusedCalls).toEqual([]);
  expect(refused).toEqual([]);
  await client.close();
});

test('the person declines inline, saying why', async ({ baseURL, page }) => {
  const client = await connectApp(baseURL!);
  const { view, askId } = await askInHost(page, client, expense);
  await expect(view.getByRole('heading', { name: 'Log the taxi to Berlin' })).toBeVisible();
  // The host switches to dark while the view is open: the view follows.
  await page.evaluate(() =>
    (window as unknown as { hostSetContext: (context: unknown) => void }).hostSetContext({ theme: 'dark' }),
  );
  await expect(view.locator('html')).toHaveClass(/dark/);
  await view.getByText('Decline…').click();
  await view.getByLabel('Why you decline (optional)').fill('Not my trip');
  await view.getByTestId('decline-button').click();
  await expect(view.locator('#tessera-status')).toContainText('Your answer was sent');
  const answer = await getAnswer(client, askId);
  expect(answer.status).toBe('declined');
  expect((answer.answers[0] as { reason: string }).reason).toBe('Not my trip');
  await client.close();
});

test('a selection is paged through its form inside the view and every tick arrives', async ({ baseURL, page }) => {
  const client = await connectApp(baseURL!);
  const users = Array.from({ length: 120 }, (_, index) => ({ id: `u${index + 1}`, name: `User ${index + 1}` }));
  const { view, askId } = await askInHost(page, client, {
    prompt: 'Deactivate the users who left the company.',
    schema: { type: 'object', properties: { deactivate_ids: { type: 'array', items: { type: 'string' } } } },
    data: { users },
  }, { ...lightContext, theme: 'dark', styles: { variables: {} } });
  await expect(view.getByRole('checkbox')).toHaveCount(50);
  // The host asked for dark: the page follows.
  await expect(view.locator('html')).toHaveClass(/dark/);
  await view.getByRole('checkbox', { name: 'Select u3', exact: true }).check();
  await view.getByRole('spinbutton', { name: 'Page' }).fill('3');
  await view.getByRole('button', { name: 'Go', exact: true }).click();
  await expect(view.getByRole('spinbutton', { name: 'Page' })).toHaveValue('3');
  await view.getByRole('checkbox', { name: 'Select u110', exact: true }).check();
  await expectNoSeriousA11yViolations(viewFrame(page));
  await shoot(page, 'mcp-app-selection-dark.png');
  await submitIn(view);
  await expect(view.locator('#tessera-status')).toContainText('Your answer was sent');
  const answer = await getAnswer(client, askId);
  expect([...(answer.response as { deactivate_ids: string[] }).deactivate_ids].sort()).toEqual(['u110', 'u3']);
  await client.close();
});

test('the view offers the page in the browser through the host', async ({ baseURL, page }) => {
  const client = await connectApp(baseURL!);
  const { view } = await askInHost(page, client, expense);
  await view.getByRole('button', { name: 'Open this page in the browser' }).click();
  await expect.poll(async () => (await hostState(page)).opened).toHaveLength(1);
  const [link] = (await hostState(page)).opened;
  expect(link).toMatch(/\/p\/[0-9a-f]{48}$/);
  // The link opens the same page in a tab.
  const tab = await page.context().newPage();
  await tab.goto(link);
  await expect(tab.getByRole('heading', { name: 'Log the taxi to Berlin' })).toBeVisible();
  await client.close();
});
