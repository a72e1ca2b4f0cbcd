// Browser tests against a real Tessera server on a free port with a fresh SQLite file.
// Chromium is Debian's (/usr/bin/chromium): Playwright cannot download browsers here.
import { defineConfig } from '@playwright/test';
import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

// The config file is evaluated by the runner and again by each worker: compute the port and the
// database once and hand them on through the environment so every process agrees.
if (!process.env.E2E_PORT) {
  process.env.E2E_PORT = execSync(
    `python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'`,
  )
    .toString()
    .trim();
}
// The SMTP port: sign-in.spec.ts runs tests/support/mailbox.py there to read the mail; while
// nothing listens, mails are refused at once (and, as everywhere, never fail a step).
if (!process.env.E2E_SMTP_PORT) {
  process.env.E2E_SMTP_PORT = execSync(
    `python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'`,
  )
    .toString()
    .trim();
}
if (!process.env.E2E_DB_DIR) {
  process.env.E2E_DB_DIR = mkdtempSync(path.join(tmpdir(), 'tessera-e2e-'));
}
const port = process.env.E2E_PORT;
const baseURL = `http://127.0.0.1:${port}`;
const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(root, 'target');
const serverBinary = process.env.E2E_SERVER_BIN ?? path.join(targetDir, 'debug', 'tessera');

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  workers: 1,
  retries: 0,
  timeout: 30_000,
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['./reporter.ts']],
  use: {
    baseURL,
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: chromiumArgs },
    trace: 'retain-on-failure',
  },
  // No TESSERA_SITE_ROOT: the CSS, JavaScript and wasm come from the copy built into the binary
  // (`make e2e` builds the front end first so the copy is whole; after a plain
  // `cargo leptos build` the server falls back to target/site, which is why cwd is the checkout).
  webServer: {
    command: serverBinary,
    cwd: root,
    url: `${baseURL}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      TESSERA_ADDR: `127.0.0.1:${port}`,
      TESSERA_PUBLIC_URL: baseURL,
      DATABASE_URL: `sqlite://${path.join(process.env.E2E_DB_DIR, 'e2e.db')}`,
      TESSERA_API_TOKEN: 'e2e-token-0123456789abcdef',
      TESSERA_ADMIN_PASSWORD: 'e2e-admin-password',
      TESSERA_CONFIG: path.join(root, 'end2end', 'no-config.toml'),
      TESSERA_LOG: 'warn',
      // Asks in people.spec.ts name assignees; only these addresses are allowed. The allowlist
      // needs an SMTP server: sign-in.spec.ts starts one on E2E_SMTP_PORT for its own tests;
      // otherwise nothing listens there, so mails fail quickly and never fail a step.
      TESSERA_ASK_EMAIL_TO: '@example.com',
      TESSERA_SMTP_HOST: '127.0.0.1',
      TESSERA_SMTP_PORT: process.env.E2E_SMTP_PORT,
      TESSERA_SMTP_TLS: 'none',
      TESSERA_SMTP_FROM: 'Tessera <tessera@example.com>',
      TESSERA_NOTIFY_EMAIL_TO: 'ops@example.com',
    },
  },
});
