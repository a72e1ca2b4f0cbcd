// The deployment in deploy/ (issue 32), run here: Debian's nginx with a self-signed certificate in
// front of the server, both on loopback, and Chromium over https. nginx runs the checked-in site
// file with only its listen ports, certificate folder and upstream port replaced; the server runs
// with the environment tessera.service and tessera.env.example give it, secrets and paths
// replaced; systemd-analyze checks the unit itself. A missing nginx, openssl or systemd-analyze
// fails the suite (scripts/setup.sh --test installs them).
//
// The server is `target/debug/tessera` (built with its site, like the release binary) unless
// TESSERA_DEPLOY_BINARY names another, e.g. target/release/tessera after `make release`.
import { type APIRequestContext, type Browser, type BrowserContext, request as playwrightRequest } from '@playwright/test';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, freePort, test, waitForHydration } from './helpers';

const root = path.resolve(__dirname, '..', '..');
const deployDir = path.join(root, 'deploy');
const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(root, 'target');
const binary = process.env.TESSERA_DEPLOY_BINARY ?? path.join(targetDir, 'debug', 'tessera');

const apiToken = 'deploy-token-0123456789abcdef';
const adminPassword = 'deploy-admin-password';
// TESSERA_BODY_LIMIT's default, which the site's `client_max_body_size 1m` must equal.
const bodyLimit = 1_048_576;

/** One running deployment: nginx and the server, in a temporary folder that goes with them. */
class Deployment {
  readonly children: ChildProcess[] = [];

  constructor(
    readonly folder: string,
    readonly httpsPort: number,
    readonly httpPort: number,
    readonly appPort: number,
  ) {}

  get base(): string {
    return `https://127.0.0.1:${this.httpsPort}`;
  }

  /** Starts `command`, its output appended to `log` in the folder. */
  start(command: string, args: string[], env: NodeJS.ProcessEnv, log: string): ChildProcess {
    const output = openSync(path.join(this.folder, log), 'a');
    const child = spawn(command, args, { cwd: this.folder, env, stdio: ['ignore', output, output] });
    closeSync(output);
    this.children.push(child);
    // A worker that dies without afterAll still takes them along.
    process.once('exit', () => child.kill('SIGKILL'));
    return child;
  }

  /** What the processes wrote, for a failure message. */
  logs(): string {
    return ['nginx.log', 'error.log', 'server.log']
      .map((log) => path.join(this.folder, log))
      .filter((file) => existsSync(file))
      .map((file) => `--- ${path.basename(file)}\n${readFileSync(file, 'utf8').slice(-4000)}`)
      .join('\n');
  }

  /** Stops both processes (TERM, then KILL after 5 s) and removes the folder. */
  async stop(): Promise<void> {
    await Promise.all(this.children.map(stopChild));
    rmSync(this.folder, { recursive: true, force: true });
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

function nginxBinary(): string {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('nginx is not installed; `scripts/setup.sh --test` (make test) installs Debian\'s nginx-light');
}

/** `text` with `from` replaced by `to`, failing when the shipped `file` no longer says `from`. */
function substitute(text: string, from: string, to: string, file = 'deploy/nginx/tessera.conf'): string {
  if (!text.includes(from)) throw new Error(`${file} no longer contains \`${from}\`; update deploy.spec.ts with it`);
  return text.split(from).join(to);
}

/** Whether this machine has an IPv6 loopback address (containers often have none). */
function hasIpv6Loopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

/** The shipped nginx site with this deployment's ports and certificate. */
function renderSite(deployment: Deployment, tls: string, ipv6: boolean): string {
  const v6 = (port: number, rest: string) => (ipv6 ? `listen [::1]:${port}${rest};` : '# no IPv6 loopback here');
  let site = readFileSync(path.join(deployDir, 'nginx', 'tessera.conf'), 'utf8');
  site = substitute(site, 'listen 443 ssl http2;', `listen 127.0.0.1:${deployment.httpsPort} ssl http2;`);
  site = substitute(site, 'listen [::]:443 ssl http2;', v6(deployment.httpsPort, ' ssl http2'));
  site = substitute(site, 'listen 80;', `listen 127.0.0.1:${deployment.httpPort};`);
  site = substitute(site, 'listen [::]:80;', v6(deployment.httpPort, ''));
  site = substitute(site, '/etc/letsencrypt/live/tessera.example.com/', `${tls}/`);
  site = substitute(site, 'server 127.0.0.1:3000;', `server 127.0.0.1:${deployment.appPort};`);
  return site;
}

/**
 * nginx's main file around the site: everything it writes stays in the folder, and one process
 * (no master, no privilege drop) so that stopping it stops everything, whoever runs the suite.
 */
function mainConfig(folder: string): string {
  const temp = (name: string) => `${name}_temp_path ${path.join(folder, 'temp', name)};`;
  return `master_process off;
daemon off;
pid ${path.join(folder, 'nginx.pid')};
error_log ${path.join(folder, 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log ${path.join(folder, 'access.log')};
    ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}
    include ${path.join(folder, 'tessera.conf')};
}
`;
}

/** KEY=value lines of `text`; `Environment=KEY=value` lines when `prefix` is given. */
function environmentLines(text: string, prefix = ''): Record<string, string> {
  const found: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${prefix}([A-Z][A-Z0-9_]*)=(.*)$`).exec(line.trim());
    if (match) found[match[1]] = match[2];
  }
  return found;
}

/**
 * The server's environment as the unit gives it: its `Environment=` lines, then the example
 * environment file on top (systemd's order), then this deployment's addresses, paths and secrets.
 * Nothing else is inherited, so the deployment needs no setting the example leaves out.
 */
function serverEnvironment(deployment: Deployment): NodeJS.ProcessEnv {
  const unit = environmentLines(readFileSync(path.join(deployDir, 'tessera.service'), 'utf8'), 'Environment=');
  const example = environmentLines(readFileSync(path.join(deployDir, 'tessera.env.example'), 'utf8'));
  const shipped = { ...unit, ...example };
  const replaced: Record<string, string> = {
    TESSERA_ADDR: `127.0.0.1:${deployment.appPort}`,
    DATABASE_URL: `sqlite://${path.join(deployment.folder, 'state', 'tessera.db')}`,
    TESSERA_WORKFLOWS_DIR: path.join(deployment.folder, 'workflows'),
    TESSERA_PUBLIC_URL: deployment.base,
    TESSERA_API_TOKEN: apiToken,
    TESSERA_ADMIN_PASSWORD: adminPassword,
    TESSERA_WEBHOOK_SECRET: 'deploy-webhook-secret-0123456789',
    TESSERA_METRICS_TOKEN: 'deploy-metrics-token-0123456789',
  };
  for (const key of Object.keys(replaced)) {
    if (!(key in shipped)) throw new Error(`neither deploy/tessera.service nor tessera.env.example sets ${key}`);
  }
  return { PATH: process.env.PATH, HOME: deployment.folder, ...shipped, ...replaced };
}

/** Polls `url` through `client` until it answers 200, or fails with the processes' output. */
async function waitUntilReady(deployment: Deployment, client: APIRequestContext, url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const exited = deployment.children.find((child) => child.exitCode !== null);
    if (exited) break;
    try {
      if ((await client.get(url, { timeout: 2_000 })).status() === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200\n${deployment.logs()}`);
}

async function deploy(): Promise<Deployment> {
  const nginx = nginxBinary();
  if (!existsSync(binary)) throw new Error(`no server binary at ${binary}; run \`make build\` (or set TESSERA_DEPLOY_BINARY)`);
  const folder = mkdtempSync(path.join(tmpdir(), 'tessera-deploy-'));
  const deployment = new Deployment(folder, await freePort(), await freePort(), await freePort());
  try {
    for (const dir of ['tls', 'state', 'workflows', 'temp']) mkdirSync(path.join(folder, dir));
    const tls = path.join(folder, 'tls');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', path.join(tls, 'privkey.pem'), '-out', path.join(tls, 'fullchain.pem'),
    ], { stdio: 'pipe' });
    writeFileSync(path.join(folder, 'tessera.conf'), renderSite(deployment, tls, await hasIpv6Loopback()));
    writeFileSync(path.join(folder, 'nginx.conf'), mainConfig(folder));
    const nginxArgs = ['-p', folder, '-e', path.join(folder, 'error.log'), '-c', path.join(folder, 'nginx.conf')];
    execFileSync(nginx, ['-t', '-q', ...nginxArgs], { stdio: 'pipe' });
    deployment.start(nginx, nginxArgs, { PATH: process.env.PATH }, 'nginx.log');
    deployment.start(binary, [], serverEnvironment(deployment), 'server.log');
    const client = await playwrightRequest.newContext({ ignoreHTTPSErrors: true });
    try {
      await waitUntilReady(deployment, client, `${deployment.base}/readyz`);
    } finally {
      await client.dispose();
    }
    return deployment;
  } catch (error) {
    await deployment.stop();
    throw error;
  }
}

let deployment: Deployment;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  testInfo.setTimeout(60_000);
  deployment = await deploy();
});

test.afterAll(async () => {
  await deployment?.stop();
});

/** A browser context on the deployment, taking its self-signed certificate. */
function httpsContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ baseURL: deployment.base, ignoreHTTPSErrors: true });
}

/** A client of the API through nginx, with the bearer token. */
function apiClient(): Promise<APIRequestContext> {
  return playwrightRequest.newContext({
    baseURL: deployment.base,
    ignoreHTTPSErrors: true,
    extraHTTPHeaders: { Authorization: `Bearer ${apiToken}` },
  });
}

test('the admin logs in over https through nginx and gets a __Host- session cookie', async ({ browser }) => {
  const context = await httpsContext(browser);
  const page = await context.newPage();
  await page.goto('/runs');
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.screenshot({ path: path.join(artifacts, 'deploy-login.png'), fullPage: true });
  await page.getByLabel('Admin password').fill(adminPassword);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(`${deployment.base}/runs`);
  await waitForHydration(page);
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'deploy-runs.png'), fullPage: true });

  // Over HTTP/2, with the islands' JavaScript and wasm served through nginx (hydration above).
  const protocol = await page.evaluate(
    () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).nextHopProtocol,
  );
  expect(protocol).toBe('h2');

  const sessions = (await context.cookies()).filter((cookie) => cookie.name.includes('tessera_session'));
  expect(sessions).toHaveLength(1);
  expect(sessions[0]).toMatchObject({ name: '__Host-tessera_session', secure: true, httpOnly: true, path: '/', domain: '127.0.0.1' });
  await context.close();

  // Plain http is sent to https.
  const plain = await playwrightRequest.newContext();
  const redirected = await plain.get(`http://127.0.0.1:${deployment.httpPort}/runs?x=1`, { maxRedirects: 0 });
  expect(redirected.status()).toBe(301);
  expect(redirected.headers()['location']).toBe('https://127.0.0.1/runs?x=1');
  await plain.dispose();
});

test('an ask created over the API through nginx is answered in the browser and the caller reads the answer', async ({ browser }) => {
  const api = await apiClient();
  const created = await api.post('/api/asks', {
    data: {
      prompt: 'May the team order the new standing desks?',
      schema: {
        type: 'object',
        properties: { note: { type: 'string', title: 'Note for the office manager' } },
        required: ['note'],
      },
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const ask = (await created.json()) as { id: string; link: string };
  expect(ask.link.startsWith(`${deployment.base}/p/`), ask.link).toBe(true);

  const context = await httpsContext(browser);
  const page = await context.newPage();
  await page.goto(ask.link);
  await waitForHydration(page);
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'deploy-page.png'), fullPage: true });
  await page.getByLabel('Note for the office manager').fill('Yes, four of them.');
  await page.locator('button[name="_action"][value="submit"]').click();
  await expect(page.getByTestId('receipt')).toBeVisible();
  await page.screenshot({ path: path.join(artifacts, 'deploy-receipt.png'), fullPage: true });
  await context.close();

  await expect
    .poll(async () => ((await (await api.get(`/api/asks/${ask.id}`)).json()) as { status: string }).status, { timeout: 20_000 })
    .toBe('submitted');
  const answered = (await (await api.get(`/api/asks/${ask.id}`)).json()) as { response: unknown };
  expect(answered.response).toEqual({ note: 'Yes, four of them.' });
  await api.dispose();
});

test('nginx refuses a body over TESSERA_BODY_LIMIT and passes one at the limit to the server', async () => {
  const api = await apiClient();
  const body = (bytes: number) => {
    const frame = '{"prompt":"","schema":{}}';
    return `{"prompt":"${'a'.repeat(bytes - frame.length)}","schema":{}}`;
  };
  const atLimit = await api.post('/api/asks', { headers: { 'content-type': 'application/json' }, data: body(bodyLimit) });
  expect(atLimit.status(), 'the server, not nginx, judges a body at the limit').not.toBe(413);
  expect(atLimit.headers()['content-type']).toContain('application/json');

  const over = await api.post('/api/asks', { headers: { 'content-type': 'application/json' }, data: body(bodyLimit + 1) });
  expect(over.status()).toBe(413);
  expect(await over.text(), 'nginx answered, before the server saw it').toContain('<center>nginx</center>');
  await api.dispose();
});

/** An open server-sent-event stream through nginx (HTTP/1.1) and the text received so far. */
function openEventStream(url: string): Promise<{ received: () => string; close: () => void }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const request = https.get(url, { rejectUnauthorized: false, headers: { Authorization: `Bearer ${apiToken}`, Accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      request.setTimeout(0);
      resolve({ received: () => text, close: () => request.destroy() });
    });
    // Buffered by nginx, not even the response's head would arrive.
    request.setTimeout(5_000, () => request.destroy(new Error(`${url}: no response within 5 s`)));
    request.on('error', reject);
  });
}

test('server-sent events reach the client through nginx as the server writes them', async () => {
  const api = await apiClient();
  const session = await api.post('/api/chat/sessions', { data: {} });
  expect(session.status(), await session.text()).toBe(200);
  const { id } = (await session.json()) as { id: string };
  const events = await openEventStream(`${deployment.base}/api/chat/sessions/${id}/events`);
  try {
    const turn = await api.post(`/api/chat/sessions/${id}/turns`, { data: { text: 'What can you do?' } });
    expect(turn.status(), await turn.text()).toBe(200);
    // The stream stays open; held in nginx's buffers the events would only come once they filled.
    await expect.poll(events.received, { timeout: 5_000 }).toContain('event: turn_routed');
  } finally {
    events.close();
    await api.dispose();
  }
});

test('the systemd unit is valid and its sandbox rates OK', async () => {
  // Pointed at the binary under test, since `verify` checks that ExecStart exists.
  const unit = substitute(
    readFileSync(path.join(deployDir, 'tessera.service'), 'utf8'),
    'ExecStart=/usr/local/bin/tessera',
    `ExecStart=${binary}`,
    'deploy/tessera.service',
  );
  const file = path.join(deployment.folder, 'tessera.service');
  writeFileSync(file, unit);
  // systemd need not run here: both commands read the file alone.
  const verify = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  expect(verify.error, 'systemd-analyze (Debian package systemd) is missing').toBeUndefined();
  expect(`${verify.stdout}${verify.stderr}`, 'systemd-analyze verify says nothing').toBe('');
  expect(verify.status).toBe(0);
  // Exposure 2.0 or lower of 10 ("OK"); the unit rates 1.2 today.
  const security = spawnSync('systemd-analyze', ['security', '--offline=true', '--threshold=20', file], { encoding: 'utf8' });
  expect(security.status, security.stdout.split('\n').filter((line) => line.includes('✗')).join('\n')).toBe(0);
});

// Last: it leaves this client throttled.
test('a forged X-Forwarded-For does not hide a client from the login throttle', async () => {
  const client = await playwrightRequest.newContext({ baseURL: deployment.base, ignoreHTTPSErrors: true });
  const attempt = (index: number) =>
    client.post('/login', {
      form: { password: `wrong-${index}`, next: '/runs' },
      headers: { 'X-Forwarded-For': `198.51.100.${index}` },
      maxRedirects: 0,
    });
  // Five wrong passwords, each claiming another address: nginx appends the real one, which the
  // server counts.
  for (let index = 1; index <= 5; index += 1) expect((await attempt(index)).status()).toBe(401);
  const throttled = await attempt(6);
  expect(throttled.status()).toBe(429);
  expect(throttled.headers()['retry-after']).toBeTruthy();
  await client.dispose();
});
