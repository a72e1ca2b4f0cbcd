// Shared browser-test helpers: the `test` every spec uses (it checks the HTML of every document a
// test opens with the Nu HTML checker), accessibility checks with axe-core, and screenshots.
import { test as base, expect, type APIRequestContext, type Browser, type BrowserContext, type Frame, type Page, type Response } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export { expect };

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const artifacts = path.resolve(__dirname, '..', 'artifacts');

/** Runs axe-core in the page (or a frame of it) and fails on any serious or critical violation, listing them. */
export async function expectNoSeriousA11yViolations(page: Page | Frame): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's CSP (which forbids inline scripts) does not apply.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // @ts-expect-error axe is injected above
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation: { id: string; impact: string; help: string; nodes: { target: string[] }[] }) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  const serious = violations.filter((violation: { impact: string }) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
}

/** Waits until the page's islands have hydrated (the theme toggle sets the marker from an effect). */
export async function waitForHydration(page: Page): Promise<void> {
  await page.locator('[data-testid="theme-toggle"][data-hydrated="true"]').waitFor({ state: 'attached', timeout: 15_000 });
}

/** The e2e server's API token, as the header that carries it. */
export const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

/** Opens admin page `target`, logging in on the way. */
export async function openAsAdmin(page: Page, target: string): Promise<void> {
  await page.goto(target);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Admin password').fill('e2e-admin-password');
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(new RegExp(`${target}$`));
}

/** Creates an ask through the API (201 expected); answers its id and its link. */
export async function createAsk(request: APIRequestContext, body: unknown): Promise<{ id: string; link: string }> {
  const response = await request.post('/api/asks', { headers: auth, data: body });
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as { id: string; link: string };
}

/** Ask `id` as the API reads it: its status and its response. */
export async function askStatus(request: APIRequestContext, id: string): Promise<{ status: string; response: unknown }> {
  const response = await request.get(`/api/asks/${id}`, { headers: auth });
  return (await response.json()) as { status: string; response: unknown };
}

/** The response to ask `id`, once it is submitted (waits up to 20 s for that). */
export async function answerOf(request: APIRequestContext, id: string): Promise<unknown> {
  await expect.poll(async () => (await askStatus(request, id)).status, { timeout: 20_000 }).toBe('submitted');
  return (await askStatus(request, id)).response;
}

/** A document the browser received for a navigation: the server's HTML, before any script ran. */
export type VisitedDocument = { url: string; status: number; html: string };

/** One error the Nu HTML checker found in a document. */
export type HtmlError = { url: string; line: number; column: number; message: string; extract: string };

type VnuMessage = {
  type: string;
  subType?: string;
  message: string;
  lastLine?: number;
  lastColumn?: number;
  extract?: string;
};

/**
 * The Nu HTML checker (the `vnu-jar` package) as a local HTTP service: one JVM per worker, because
 * starting it costs seconds, while checking a document afterwards takes milliseconds.
 */
export class HtmlChecker {
  private constructor(
    private readonly process: ChildProcess,
    private readonly url: string,
  ) {}

  /** Starts the checker on a free port and waits until it answers. */
  static async start(): Promise<HtmlChecker> {
    const port = await freePort();
    const jar = require.resolve('vnu-jar/build/dist/vnu.jar');
    let output = '';
    const child = spawn(
      'java',
      ['-Xss4m', '-Dnu.validator.servlet.bind-address=127.0.0.1', '-Dnu.validator.messages.limit=1000000', '-Dnu.validator.servlet.max-file-size=67108864', '-cp', jar, 'nu.validator.servlet.Main', String(port)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const checker = new HtmlChecker(child, `http://127.0.0.1:${port}/`);
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break;
      try {
        await fetch(checker.url);
        return checker;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    child.kill();
    throw new Error(`the Nu HTML checker (java -cp ${jar}) did not start; is Java installed?\n${output}`);
  }

  /** The checker's errors in `document`, except Leptos's `<!>` hydration markers. */
  async check(document: VisitedDocument): Promise<HtmlError[]> {
    const response = await fetch(`${this.url}?out=json`, {
      method: 'POST',
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: document.html,
    });
    const report = (await response.json()) as { messages: VnuMessage[] };
    const lines = document.html.split('\n');
    return report.messages
      .filter((message) => message.type === 'error' || message.type === 'non-document-error')
      .filter((message) => !isHydrationMarker(message, lines))
      .map((message) => ({
        url: document.url,
        line: message.lastLine ?? 0,
        column: message.lastColumn ?? 0,
        message: message.message,
        extract: message.extract ?? '',
      }));
  }

  stop(): void {
    this.process.kill();
  }
}

/**
 * Leptos marks where dynamic text ends with the empty comment `<!>`, which HTML calls a bogus
 * comment; the hydration needs it, and browsers parse it as a comment.
 */
function isHydrationMarker(message: VnuMessage, lines: string[]): boolean {
  if (message.message !== 'Bogus comment.' || !message.lastLine || !message.lastColumn) return false;
  const line = lines[message.lastLine - 1] ?? '';
  return line.slice(message.lastColumn - 3, message.lastColumn) === '<!>';
}

/** A TCP port on 127.0.0.1 that nothing listens on at the moment. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Formats checker errors as one line each, for a failure message. */
export function describeHtmlErrors(errors: HtmlError[]): string {
  return errors.map((error) => `${error.url}:${error.line}:${error.column}: ${error.message}\n    ${error.extract}`).join('\n');
}

/** Reads the HTML of `response` when it is a top-level document with a body. */
function documentOf(response: Response): Promise<VisitedDocument | null> | null {
  const request = response.request();
  if (!request.isNavigationRequest() || response.frame().parentFrame() !== null) return null;
  const status = response.status();
  if (status >= 300 && status < 400) return null;
  if (!(response.headers()['content-type'] ?? '').includes('text/html')) return null;
  return response
    .text()
    .then((html) => ({ url: response.url(), status, html }))
    // A document the test navigated away from at once may be gone; the next one is still checked.
    .catch(() => null);
}

/**
 * The `test` of every spec: besides Playwright's fixtures, each test's documents (every context it
 * uses, including ones it opens itself) go through the Nu HTML checker when the test ends, and
 * the test fails listing any error.
 */
export const test = base.extend<{ visitedDocuments: Promise<VisitedDocument | null>[] }, { htmlChecker: HtmlChecker }>({
  htmlChecker: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const checker = await HtmlChecker.start();
      try {
        await use(checker);
      } finally {
        checker.stop();
      }
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  visitedDocuments: [
    async ({ context, browser, htmlChecker }, use, testInfo) => {
      const visited: Promise<VisitedDocument | null>[] = [];
      const watch = (watched: BrowserContext) =>
        watched.on('response', (response) => {
          const document = documentOf(response);
          if (document) visited.push(document);
        });
      watch(context);
      const newContext = browser.newContext.bind(browser);
      (browser as Browser).newContext = async (...options) => {
        const opened = await newContext(...options);
        watch(opened);
        return opened;
      };
      try {
        await use(visited);
      } finally {
        browser.newContext = newContext;
      }
      // A test that already failed keeps its own failure as the message.
      if (testInfo.status !== testInfo.expectedStatus) return;
      const documents = (await Promise.all(visited)).filter((document): document is VisitedDocument => document !== null);
      const errors = (await Promise.all(documents.map((document) => htmlChecker.check(document)))).flat();
      expect(errors, `Nu HTML checker errors:\n${describeHtmlErrors(errors)}`).toEqual([]);
    },
    { auto: true },
  ],
});
