// A person's sign-in by e-mailed link and their inbox (issue 31), with JavaScript on and off. The
// mail is read from a real SMTP server (tests/support/mailbox.py on E2E_SMTP_PORT, where the e2e
// server sends its mail; playwright.config.ts).
import type { APIRequestContext, Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, test, waitForHydration } from './helpers';

const root = path.resolve(__dirname, '..', '..');
const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };
const schema = { type: 'object', properties: { note: { type: 'string', title: 'Note' } } };

type Mail = { rcpt_to: string[]; data: string };

let mailbox: ChildProcess | undefined;
let mailFile = '';

test.beforeAll(async () => {
  mailFile = path.join(mkdtempSync(path.join(tmpdir(), 'tessera-mail-')), 'mail.jsonl');
  const python = path.join(root, '.tools', 'py', 'bin', 'python');
  expect(existsSync(python), `${python} is missing: run scripts/setup.sh --test`).toBe(true);
  mailbox = spawn(python, [path.join(root, 'tests', 'support', 'mailbox.py'), mailFile, process.env.E2E_SMTP_PORT ?? '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    mailbox?.stdout?.once('data', (line: Buffer) =>
      line.toString().startsWith('listening') ? resolve() : reject(new Error(`the mailbox said ${line}`)),
    );
    mailbox?.once('exit', (code) => reject(new Error(`the mailbox exited with ${code}`)));
  });
});

test.afterAll(() => {
  mailbox?.kill();
});

function mails(): Mail[] {
  if (!existsSync(mailFile)) return [];
  return readFileSync(mailFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Mail);
}

/** The sign-in link in the latest sign-in mail to `address`, waiting for it. */
async function signInLink(address: string): Promise<string> {
  let link: string | undefined;
  await expect
    .poll(
      () => {
        const mail = mails()
          .filter((candidate) => candidate.rcpt_to.includes(address) && candidate.data.includes('Your sign-in link for Tessera'))
          .pop();
        // Quoted-printable: soft line breaks joined, `=3D` read as `=`.
        const text = mail?.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
        link = text?.match(/https?:\/\/\S+\/sign-in\/[0-9a-f]{48}\S*/)?.[0];
        return link !== undefined;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  return link as string;
}

async function ask(request: APIRequestContext, prompt: string, assignees: string[]): Promise<void> {
  const response = await request.post('/api/asks', { headers: auth, data: { prompt, schema, assignees } });
  expect(response.status(), await response.text()).toBe(201);
}

async function expectNoAdminLinks(page: Page): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const name of ['Runs', 'Components', 'Chat']) {
    await expect(nav.getByRole('link', { name, exact: true })).toHaveCount(0);
  }
}

for (const javaScriptEnabled of [true, false]) {
  const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';
  const suffix = javaScriptEnabled ? 'js' : 'nojs';

  test.describe(mode, () => {
    test.use({ javaScriptEnabled });

    test(`a person signs in from an e-mailed link, sees their inbox and answers from it (${mode})`, async ({ browser, page, request }) => {
      const person = `dana-${suffix}@example.com`;
      await ask(request, 'Approve the offsite budget?', [person, 'erik@example.com']);
      await ask(request, 'Approve the new laptops?', ['erik@example.com']);

      await page.goto('/sign-in');
      if (javaScriptEnabled) await waitForHydration(page);
      await expectNoAdminLinks(page);
      await page.getByLabel('E-mail address').fill(person);
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(page);
        await page.screenshot({ path: path.join(artifacts, 'signin-form.png'), fullPage: true });
      }
      await page.getByTestId('sign-in-submit').click();
      await expect(page.getByTestId('sign-in-sent')).toContainText('If this address may sign in, a link is on its way');
      if (javaScriptEnabled) {
        await page.screenshot({ path: path.join(artifacts, 'signin-sent.png'), fullPage: true });
      }

      // The link shows a button (a mail scanner fetching it signs nobody in); pressing it does.
      await page.goto(await signInLink(person));
      const confirm = page.getByTestId('sign-in-confirm');
      await expect(confirm).toHaveText(`Sign in as ${person}`);
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(page);
        await page.screenshot({ path: path.join(artifacts, 'signin-confirm.png'), fullPage: true });
      }
      await confirm.click();
      await expect(page).toHaveURL(/\/inbox$/);

      const items = page.getByTestId('inbox-item');
      await expect(items).toHaveCount(1);
      await expect(items.first()).toContainText('Approve the offsite budget?');
      await expect(items.first().getByTestId('inbox-status')).toHaveText('Waiting for your answer');
      await expect(page.getByTestId('signed-in-as')).toHaveText(person);
      await expectNoAdminLinks(page);
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(page);
        await page.screenshot({ path: path.join(artifacts, 'inbox-open.png'), fullPage: true });
      }

      // Admin pages are not theirs.
      const runs = await page.goto('/runs');
      expect(runs?.status()).toBe(403);
      await page.goto('/inbox');

      await items.first().getByTestId('inbox-answer').click();
      await expect(page.getByTestId('page-for')).toContainText(`For ${person}.`);
      await page.getByLabel('Note').fill('Fine by me');
      await page.locator('button[name="_action"][value="submit"]').click();
      await expect(page.getByTestId('receipt')).toBeVisible();

      await page.goto('/inbox');
      await expect(items.first().getByTestId('inbox-status')).toContainText('You answered on');
      await expect(items.first().getByTestId('inbox-answer')).toHaveCount(0);
      if (javaScriptEnabled) {
        await page.screenshot({ path: path.join(artifacts, 'inbox-answered.png'), fullPage: true });
      }

      // An ask that wants its assignee signed in: the link alone shows the sign-in form for them.
      const required = await request.post('/api/asks', {
        headers: auth,
        data: { prompt: 'Approve the vendor contract?', schema, assignees: [person], sign_in: 'required' },
      });
      expect(required.status(), await required.text()).toBe(201);
      const link = ((await required.json()) as { links: { link: string }[] }).links[0].link;
      const stranger = await browser.newContext({ javaScriptEnabled });
      const gate = await stranger.newPage();
      await gate.goto(link);
      await expect(gate.getByTestId('sign-in-to-answer')).toContainText(`This request is for ${person}, who must sign in before answering.`);
      await expect(gate.getByLabel('E-mail address')).toHaveValue(person);
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(gate);
        await gate.screenshot({ path: path.join(artifacts, 'signin-required.png'), fullPage: true });
      }
      await stranger.close();
      // Signed in as that person, the same link is the page itself.
      await page.goto(link);
      await expect(page.getByTestId('page-for')).toContainText(`For ${person}.`);

      await page.getByTestId('sign-out').click();
      await expect(page).toHaveURL(/\/sign-in$/);
      await page.goto('/inbox');
      await expect(page).toHaveURL(/\/sign-in\?next=/);
    });
  });
}
