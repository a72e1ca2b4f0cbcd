// A new user's path through the chat, offline (the deterministic planner): log in, open /chat,
// ask to delete completed items, see the execution header and the generated confirm view (every
// item ticked, scope choice, danger confirm with the count), reload and find the pending approval
// still there, confirm, and see the result view with its CSV download. Then the same without
// JavaScript.
import type { Page } from '@playwright/test';

import { expect, expectNoSeriousA11yViolations, openAsAdmin, test } from './helpers';

async function chatFlow(page: Page, request: string, javaScriptEnabled: boolean): Promise<void> {
  await openAsAdmin(page, '/chat');
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
  // The confirm view is a generated page: a selectable table (every item ticked), the scope
  // choice, a danger confirm naming code's count, and Deny.
  const view = page.getByTestId('confirm-view');
  const ticks = view.locator('input[name="ids"]');
  const rows = await ticks.count();
  expect(rows).toBeGreaterThan(0);
  for (let index = 0; index < rows; index += 1) await expect(ticks.nth(index)).toBeChecked();
  await expect(view.getByRole('radio', { name: 'Only this once' })).toBeChecked();
  await expect(view.getByRole('radio', { name: /Always allow “bulk delete items”/ })).toBeVisible();
  const confirm = view.getByRole('button', { name: new RegExp(`^Delete ${rows} items?$`) });
  await expect(confirm).toBeVisible();
  await expect(view.getByRole('button', { name: 'Deny' })).toBeVisible();
  if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);

  // The approval lives in the store, not the browser: a reload still shows it.
  await page.reload();
  await expect(page.getByTestId('pending-approval')).toBeVisible();
  await expect(page.getByTestId('confirm-view').locator('input[name="ids"]')).toHaveCount(rows);

  await page
    .getByTestId('confirm-view')
    .getByRole('button', { name: new RegExp(`^Delete ${rows} items?$`) })
    .click();
  await expect(page).toHaveURL(/\/chat$/);
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);
  await expect(page.getByTestId('conversation')).toContainText(`Deleted ${rows} item`);
  await expect(
    page.getByTestId('execution-header').last().locator('[data-status="succeeded"]').last(),
  ).toContainText('bulk delete items');

  // The result view lists every item's outcome and offers CSV and JSON downloads built by the server.
  const result = page.getByTestId('result-view').last();
  await expect(result).toBeVisible();
  const csvLink = result.getByRole('link', { name: /as CSV/ });
  await expect(csvLink).toBeVisible();
  await expect(result.getByRole('link', { name: /as JSON/ })).toBeVisible();
  const href = await csvLink.getAttribute('href');
  expect(href).toMatch(/^\/chat\/results\/[0-9a-f-]+\/.+\.csv$/);
  const download = await page.request.get(href ?? '');
  expect(download.headers()['content-type']).toBe('text/csv; charset=utf-8');
  expect(download.headers()['content-disposition']).toMatch(/^attachment; filename="bulkDeleteItems-/);
  const lines = (await download.text()).trim().split('\r\n');
  expect(lines[0]).toBe('id,title,status,error');
  expect(lines).toHaveLength(rows + 1);
  if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
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
