// A new user's path through the demo: log in, start the email digest, follow the page link,
// choose three emails, submit once, and see the run finish with exactly those three.
import type { Browser, Page } from '@playwright/test';

import { expect, expectNoSeriousA11yViolations, openAsAdmin, test } from './helpers';

const API = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

async function startRun(page: Page, workflow: string): Promise<{ id: string; link: string }> {
  await page.getByTestId(`start-${workflow}`).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop() ?? '';
  // The runner generates the page in the background; once the run waits, the admin gets a
  // working link (a fresh one, shown once: only its hash is stored).
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId('run-waiting')).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await expect(page.getByTestId('page-link')).toHaveCount(0);
  await page.getByTestId('reissue-link').click();
  await expect(page.getByTestId('page-link')).toBeVisible();
  await expect(page.getByText(/Any link sent earlier no longer works/).first()).toBeVisible();
  const link = (await page.getByTestId('page-link').getAttribute('href')) ?? '';
  expect(link).toMatch(/\/p\/[0-9a-f]{48}$/);
  return { id, link };
}

async function runState(page: Page, id: string): Promise<Record<string, unknown>> {
  const response = await page.request.get(`/api/runs/${id}`, { headers: API });
  return (await response.json()) as Record<string, unknown>;
}

async function digestFlow(page: Page, browser: Browser, javaScriptEnabled: boolean): Promise<void> {
  await openAsAdmin(page, '/runs');
  const { id, link } = await startRun(page, 'email-digest');
  const path = new URL(link).pathname;

  // A second copy of the form, opened before the first is sent: its submit must be refused.
  const staleContext = await browser.newContext({ javaScriptEnabled });
  const stale = await staleContext.newPage();
  await stale.goto(path);

  await page.goto(path);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
  const boxes = page.locator('input[type="checkbox"][name="archive_ids"]');
  expect(await boxes.count()).toBeGreaterThanOrEqual(3);
  const chosen: string[] = [];
  for (const index of [0, 2, 4]) {
    const box = boxes.nth(index);
    await box.check();
    chosen.push((await box.getAttribute('value')) ?? '');
  }
  await page.getByRole('textbox', { name: /note/i }).fill('Old newsletters, archive them.');
  await page.locator('form button[type="submit"]:not([value="cancel"])').first().click();
  await expect(page.getByText(/Thank you/)).toBeVisible();
  await expect(page.getByTestId('receipt')).toContainText('Old newsletters, archive them.');

  // The stale copy is sent after the first: 409 with the receipt of the first answer.
  const response = stale.waitForResponse((reply) => reply.request().method() === 'POST');
  await stale.locator('form button[type="submit"]:not([value="cancel"])').first().click();
  expect((await response).status()).toBe(409);
  await expect(stale.getByTestId('receipt')).toContainText('Old newsletters, archive them.');
  await staleContext.close();

  await expect(async () => {
    const run = await runState(page, id);
    expect(run.status).toBe('succeeded');
    expect((run.state as { archived: string[] }).archived).toEqual(chosen);
  }).toPass({ timeout: 30_000 });
  await page.goto(`/runs/${id}`);
  await expect(page.getByTestId('run-status').first()).toHaveText('succeeded');
}

test('a new user runs the email digest end to end', async ({ page, browser }) => {
  await digestFlow(page, browser, true);
});

test.describe('with JavaScript disabled', () => {
  test.use({ javaScriptEnabled: false });

  test('the email digest works end to end without JavaScript', async ({ page, browser }) => {
    await digestFlow(page, browser, false);
  });
});

test('a wrong answer re-renders with the person’s choices kept and a message', async ({ page }) => {
  await openAsAdmin(page, '/runs');
  const { link } = await startRun(page, 'bulk-approval');
  await page.goto(new URL(link).pathname);
  const boxes = page.locator('input[type="checkbox"][name="claim_ids"]');
  await boxes.nth(1).check();
  await page.getByRole('radio').first().check();
  // The reason is required: leave it empty and bypass the browser's own check to reach the server.
  await page.locator('form').first().evaluate((form) => form.setAttribute('novalidate', ''));
  const response = page.waitForResponse((reply) => reply.request().method() === 'POST');
  await page.locator('form button[type="submit"]:not([value="cancel"])').first().click();
  expect((await response).status()).toBe(422);
  await expect(boxes.nth(1)).toBeChecked();
  await expect(page.getByRole('radio').first()).toBeChecked();
  const reason = page.getByRole('textbox', { name: /reason/i });
  await expect(reason).toHaveAttribute('aria-invalid', 'true');
  const describedBy = (await reason.getAttribute('aria-describedby')) ?? '';
  expect(describedBy).toContain('error');
  await expectNoSeriousA11yViolations(page);
});
