// The MCP server at /mcp driven by the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package.json), a client no one here wrote, while the browser answers the generated page as a
// person would: list tools; ask_person → the person submits → the typed answer; URL-mode
// elicitation with a client that declares the capability (its handler opens the page in the
// browser), the fallback link for one that does not; a bad schema → a tool error naming the field;
// a wrong token → 401.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { Page } from '@playwright/test';
import { expect, test } from './helpers';

const token = 'e2e-token-0123456789abcdef';

type Ask = { id: string; status: string; link: string | null; response: unknown };

async function connect(baseURL: string, options: { urlElicitation?: boolean; token?: string } = {}) {
  const client = new Client(
    { name: 'tessera-e2e', version: '1.0.0' },
    { capabilities: options.urlElicitation ? { elicitation: { url: {} } } : {} },
  );
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseURL), {
    requestInit: { headers: { Authorization: `Bearer ${options.token ?? token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

function askOf(result: CallToolResult): Ask {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Ask;
}

const expenseSchema = {
  type: 'object',
  properties: {
    amount: { type: 'integer', title: 'Amount', minimum: 1 },
    comment: { type: 'string', title: 'Comment' },
  },
  required: ['amount'],
};

/** Answers the page as a person: fills the form and submits it. */
async function answerPage(page: Page, amount: string, comment: string) {
  await page.getByLabel('Amount').fill(amount);
  await page.getByLabel('Comment').fill(comment);
  await page.locator('button[name="_action"][value="submit"]').click();
  await expect(page).toHaveURL(/\/done$/);
}

test('an MCP client lists the ask tools on revision 2025-11-25', async ({ baseURL }) => {
  const { client, transport } = await connect(baseURL!);
  expect(client.getServerVersion()?.name).toBe('tessera');
  expect(transport.protocolVersion).toBe('2025-11-25');
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(['ask_person', 'get_answer', 'cancel_ask', 'list_asks']);
  expect(tools[0].inputSchema.required).toEqual(['prompt']);
  await client.close();
});

test('ask_person gives the link; the person submits the page; get_answer returns the typed answer', async ({ baseURL, page }) => {
  const { client } = await connect(baseURL!);
  const created = askOf(
    (await client.callTool({
      name: 'ask_person',
      arguments: { prompt: 'Log the taxi to {{ city }}', schema: expenseSchema, data: { city: 'Berlin' } },
    })) as CallToolResult,
  );
  expect(created.status).toBe('waiting');
  expect(created.link).toMatch(/\/p\/[0-9a-f]{48}$/);

  await page.goto(created.link!);
  await expect(page.getByText('Log the taxi to Berlin')).toBeVisible();
  await answerPage(page, '42', 'Airport run');

  const answered = askOf(
    (await client.callTool({ name: 'get_answer', arguments: { ask_id: created.id, wait_seconds: 20 } })) as CallToolResult,
  );
  expect(answered.status).toBe('submitted');
  expect(answered.response).toEqual({ amount: 42, comment: 'Airport run' });
  expect(answered.link).toBeNull();
  await client.close();
});

test('URL-mode elicitation: the client opens the page, the person submits, the tool returns the answer', async ({ baseURL, page }) => {
  const { client } = await connect(baseURL!, { urlElicitation: true });
  const completed: string[] = [];
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId);
  });
  let elicitation: { url: string; elicitationId: string; message: string } | undefined;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    if (request.params.mode !== 'url') return { action: 'decline' };
    elicitation = request.params;
    // What a client does with URL mode: open the link in the person's browser, out of band.
    await page.goto(request.params.url);
    return { action: 'accept' };
  });
  const progress: Progress[] = [];
  const call = client.callTool(
    { name: 'ask_person', arguments: { prompt: 'Log the hotel', schema: expenseSchema, elicit: 'url', wait_seconds: 60 } },
    CallToolResultSchema,
    { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true, timeout: 90_000 },
  );

  await expect.poll(() => elicitation?.url, { timeout: 20_000 }).toMatch(/\/p\/[0-9a-f]{48}$/);
  expect(elicitation!.message).toBe('Log the hotel');
  await expect(page.getByText('Log the hotel')).toBeVisible();
  // The tool waits, telling the client so.
  await expect.poll(() => progress.length, { timeout: 10_000 }).toBeGreaterThan(0);
  await answerPage(page, '180', 'Two nights');

  const answered = askOf((await call) as CallToolResult);
  expect(answered.id).toBe(elicitation!.elicitationId);
  expect(answered.status).toBe('submitted');
  expect(answered.response).toEqual({ amount: 180, comment: 'Two nights' });
  await expect.poll(() => completed, { timeout: 10_000 }).toContain(answered.id);
  await client.close();
});

test('a client without URL-mode elicitation gets the link in the result', async ({ baseURL, page }) => {
  const { client } = await connect(baseURL!);
  const result = (await client.callTool({
    name: 'ask_person',
    arguments: { prompt: 'Log the train', schema: expenseSchema, elicit: 'url' },
  })) as CallToolResult;
  const created = askOf(result);
  expect(created.status).toBe('waiting');
  expect(result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')).toContain('give the person the link');

  await page.goto(created.link!);
  await answerPage(page, '25', 'Return ticket');
  const answered = askOf(
    (await client.callTool({ name: 'get_answer', arguments: { ask_id: created.id, wait_seconds: 20 } })) as CallToolResult,
  );
  expect(answered.response).toEqual({ amount: 25, comment: 'Return ticket' });
  await client.close();
});

test('a bad schema is a tool error naming the field', async ({ baseURL }) => {
  const { client } = await connect(baseURL!);
  const result = (await client.callTool({
    name: 'ask_person',
    arguments: { prompt: 'Where do you live?', schema: { type: 'object', properties: { address: { type: 'object' } } } },
  })) as CallToolResult;
  expect(result.isError).toBe(true);
  const text = result.content[0].type === 'text' ? result.content[0].text : '';
  expect(text).toMatch(/^schema\.properties\.address: /);
  await client.close();
});

test('a wrong token is refused with 401', async ({ baseURL, request }) => {
  // The SDK's transport error carries the HTTP status as its code.
  const refused = await connect(baseURL!, { token: 'not-the-token' }).then(
    () => undefined,
    (error: { code?: number }) => error,
  );
  expect(refused?.code).toBe(401);
  const response = await request.post('/mcp', {
    headers: { Authorization: 'Bearer not-the-token', Accept: 'application/json, text/event-stream' },
    data: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } } },
  });
  expect(response.status()).toBe(401);
});
