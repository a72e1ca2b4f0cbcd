// A new user's path through the chat, offline (the deterministic planner): log in, open /chat,
// ask to delete completed items, see the execution header and the preview table, reload and find
// the pending approval still there, confirm, and see the result. Then the same without JavaScript.
import { expect, test, type Page } from '@playwright/test';

import { expectNoSeriousA11yViolations } from './helpers';

async function logIn(page: Page): Promise<void> {
  await page.goto('/chat');
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Admin password').fill('e2e-admin-password');
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/chat$/);
}

async function chatFlow(page: Page, request: string, javaScriptEnabled: boolean): Promise<void> {
  await logIn(page);
  await expect(page.getByRole('heading', { level: 1, name: 'Chat' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Manual tools' })).toBeVisible();

  await page.getByLabel('Message').fill(request);
  await page.getByTestId('send').click();
  await expect(page).toHaveURL(/\/chat$/);

  // The reply starts with the execution header code built; the preview table lists the items.
  await expect(page.getByTestId('message-user').last()).toContainText(request);
  await expect(page.getByTestId('execution-header').last()).toContainText('searchItems');
  const approval = page.getByTestId('pending-approval');
  await expect(approval).toBeVisible();
  await expect(approval).toContainText('bulkDeleteItems');
  const rows = await page.getByTestId('preview-row').count();
  expect(rows).toBeGreaterThan(0);
  const confirm = page.getByTestId('approve');
  await expect(confirm).toHaveText(new RegExp(`^Delete ${rows} items?$`));
  if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);

  // The approval lives in the store, not the browser: a reload still shows it.
  await page.reload();
  await expect(page.getByTestId('pending-approval')).toBeVisible();
  await expect(page.getByTestId('preview-row')).toHaveCount(rows);

  await page.getByTestId('approve').click();
  await expect(page).toHaveURL(/\/chat$/);
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);
  await expect(page.getByTestId('conversation')).toContainText(`Deleted ${rows} item`);
  await expect(
    page.getByTestId('execution-header').last().locator('[data-status="succeeded"]').last(),
  ).toContainText('bulkDeleteItems');
}

test('a new user deletes completed items from last month after a preview and a confirmation', async ({ page }) => {
  await chatFlow(page, 'delete all completed items from last month', true);
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the same chat works with plain form posts', async ({ page }) => {
    // The first test deleted last month's; the older completed items are still there.
    await chatFlow(page, 'delete all completed items', false);
  });
});
