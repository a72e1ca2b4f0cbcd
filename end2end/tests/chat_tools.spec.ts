// Manual tools as forms and the live chat stream, as a person uses them: open a tool from the
// side panel, fill its generated form, see the result in the conversation; with JavaScript on,
// approve a chunked bulk update and watch its progress arrive without a page load; and a
// destructive manual tool with JavaScript off, which still waits for an approval.
import type { Page } from '@playwright/test';

import { expect, expectNoSeriousA11yViolations, openAsAdmin, test, waitForHydration } from './helpers';

async function waitForStream(page: Page): Promise<void> {
  await waitForHydration(page);
  await page.locator('[data-testid="chat-live"][data-stream="open"]').waitFor({ state: 'attached' });
}

test('a person opens a manual tool, fills its form and sees the result in the conversation', async ({ page }) => {
  await openAsAdmin(page, '/chat');
  await page.getByRole('link', { name: 'createItem', exact: true }).click();
  await expect(page).toHaveURL(/\/chat\/tools\/createItem$/);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expectNoSeriousA11yViolations(page);

  await page.getByLabel('Title').fill('Water the office ferns');
  await page.getByLabel('Due date').fill('2026-12-01');
  await page.getByRole('radio', { name: 'High' }).check();
  await page.getByRole('button', { name: 'Run' }).click();

  await expect(page).toHaveURL(/\/chat$/);
  const conversation = page.getByTestId('conversation');
  await expect(conversation).toContainText('/tool createItem');
  await expect(conversation).toContainText('Water the office ferns');
  // The page names the tool in words; its name is under the header's Details.
  await expect(conversation).toContainText('create item ran.');
  await expect(page.getByTestId('execution-header').last().locator('[data-status="succeeded"]')).toContainText('create item');
});

// The generated confirm view's confirm button: code names it "<verb> <count> item(s)".
function confirmButton(page: Page) {
  return page
    .getByTestId('confirm-view')
    .getByRole('button', { name: /^(Approve|Delete) \d+ items?$/ });
}

test('with JavaScript, an approved chunked update streams its progress without a page load', async ({ page }) => {
  await openAsAdmin(page, '/chat');
  await waitForStream(page);
  // A page load would drop this marker; the streamed turns must keep it.
  await page.evaluate(() => {
    (window as unknown as { streamMarker: string }).streamMarker = 'still here';
  });

  // More than one chunk's worth of items: first move the in-progress ones to open, then all of
  // those back. Completed items stay as they are (chat.spec.ts deletes those).
  await page.getByLabel('Message').fill('set all in progress items to open');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('pending-approval')).toBeVisible();
  await confirmButton(page).click();
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);

  await page.getByLabel('Message').fill('set all open items to in progress');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('message-user').last()).toContainText('set all open items to in progress');
  const approve = confirmButton(page);
  await expect(approve).toBeVisible();
  const label = (await approve.textContent()) ?? '';
  const count = Number(/(\d+)/.exec(label)?.[1] ?? '0');
  expect(count, label).toBeGreaterThan(100);
  const chunks = Math.ceil(count / 100);
  await approve.click();

  const progress = page.getByTestId('live-progress').last();
  await expect(progress).toContainText(`${count} of ${count}`);
  await expect(progress).toContainText(`Chunk ${chunks} of ${chunks}`);
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);
  await expect(page.getByTestId('conversation')).toContainText(`Updated ${count} items.`);
  expect(await page.evaluate(() => (window as unknown as { streamMarker?: string }).streamMarker)).toBe('still here');
  await expectNoSeriousA11yViolations(page);
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('a destructive manual tool waits for an approval, then runs', async ({ page }) => {
    await openAsAdmin(page, '/chat');
    await page.getByRole('link', { name: 'deleteItem', exact: true }).click();
    await expect(page).toHaveURL(/\/chat\/tools\/deleteItem$/);
    await page.getByLabel('Id').fill('item-0003');
    await page.getByRole('button', { name: 'Run' }).click();

    await expect(page).toHaveURL(/\/chat$/);
    const approval = page.getByTestId('pending-approval');
    await expect(approval).toBeVisible();
    await expect(approval).toContainText('deleteItem');
    const confirm = confirmButton(page);
    await expect(confirm).toHaveText('Delete 1 item');
    await confirm.click();
    await expect(page).toHaveURL(/\/chat$/);
    await expect(page.getByTestId('pending-approval')).toHaveCount(0);
    await expect(
      page.getByTestId('execution-header').last().locator('[data-status="succeeded"]').last(),
    ).toContainText('delete item');
  });
});
