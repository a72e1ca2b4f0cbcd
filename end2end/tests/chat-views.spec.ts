// What a person sees in the chat, offline (the deterministic planner and the heuristic views):
// a read is a table that pages by plain links over the rows stored with the turn, with CSV and
// JSON downloads; an update's approval says per item what changes (old → new) and in one plain
// line; a delete's approval names what goes. Tool names, hashes and arguments are only under a
// collapsed "Details". Each view is screenshotted in end2end/artifacts/ and checked with axe and
// the HTML checker.
import path from 'node:path';

import type { Locator, Page } from '@playwright/test';

import { artifacts, expect, expectNoSeriousA11yViolations, openAsAdmin, test, waitForHydration } from './helpers';

async function logIn(page: Page): Promise<void> {
  await openAsAdmin(page, '/chat');
  await waitForHydration(page);
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message').fill(text);
  await page.getByTestId('send').click();
  await expect(page.getByTestId('message-user').last()).toContainText(text);
}

// What a person reads of `area` with every Details closed: no tool name, no backticks, no hash.
async function expectPlainWords(area: Locator, toolNames: string[]): Promise<void> {
  const visible = await area.innerText();
  for (const name of toolNames) expect(visible, `${name} outside Details`).not.toContain(name);
  expect(visible).not.toContain('`');
  expect(visible.toLowerCase()).not.toContain('hash');
}

const TOOLS = ['searchItems', 'bulkUpdateItems', 'bulkDeleteItems', 'deleteItem', 'updateItem'];

test('a read is a table that pages over the stored rows, with downloads', async ({ page }) => {
  await logIn(page);
  // Other specs change statuses and delete completed items; priorities stay.
  await send(page, 'show me the medium priority items');
  const message = page.getByTestId('message-assistant').last();
  const view = message.getByTestId('read-view');
  await expect(view).toBeVisible();
  await expect(view.getByRole('heading', { name: 'Show me the medium priority items' })).toBeVisible();
  const table = view.getByRole('table');
  await expect(table.locator('tbody tr')).toHaveCount(25);
  const firstRow = await table.locator('tbody tr').first().innerText();
  await expectPlainWords(message, TOOLS);
  await expect(message.getByTestId('header-details')).not.toHaveAttribute('open', /.*/);
  await expectNoSeriousA11yViolations(page);
  await message.screenshot({ path: path.join(artifacts, 'chat-read-view.png') });

  // Paging is a plain link that keeps the rest of the page: the next rows, from the store.
  await view.getByRole('link', { name: 'Next' }).click();
  await expect(page).toHaveURL(/\/chat\?page=v/);
  const paged = page.getByTestId('read-view').last().getByRole('table');
  await expect(paged.locator('tbody tr').first()).not.toHaveText(firstRow);

  // The downloads are the stored rows, built by the server.
  const csv = page.getByTestId('read-view').last().getByRole('link', { name: /as CSV/ });
  const href = await csv.getAttribute('href');
  expect(href).toMatch(/^\/chat\/reads\/[0-9a-f-]+\/.+\.csv$/);
  const download = await page.request.get(href ?? '');
  expect(download.headers()['content-type']).toBe('text/csv; charset=utf-8');
  const lines = (await download.text()).trim().split('\r\n');
  expect(lines[0]).toMatch(/^id,title,status,priority/);
  expect(lines.length).toBeGreaterThan(26);
});

test('an update approval says per item what changes and in one line', async ({ page }) => {
  await logIn(page);
  await send(page, 'set all low priority items to medium priority');
  const approval = page.getByTestId('pending-approval');
  await expect(approval).toBeVisible();
  await expect(approval.getByTestId('approval-summary')).toHaveText(
    /^Set priority to medium on \d+ items \(now low\)$/,
  );
  const view = approval.getByTestId('confirm-view');
  await expect(view.getByRole('columnheader', { name: /Priority/ })).toBeVisible();
  await expect(view.getByRole('cell', { name: 'low → medium' }).first()).toBeVisible();
  // The tool, the hash and the arguments are there, folded away.
  const details = approval.getByTestId('approval-details');
  await expect(details).not.toHaveAttribute('open', /.*/);
  await expect(details).toContainText('bulkUpdateItems');
  await expectPlainWords(approval, TOOLS);
  await expectPlainWords(page.getByTestId('message-assistant').last(), TOOLS);
  await expectNoSeriousA11yViolations(page);
  await approval.screenshot({ path: path.join(artifacts, 'chat-update-approval.png') });
  await details.locator('summary').click();
  await expect(details).toContainText('"priority": "medium"');
  await view.getByRole('button', { name: 'Deny' }).click();
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);
});

test('a delete approval names the items that go', async ({ page }) => {
  await logIn(page);
  await send(page, 'delete all high priority items');
  const approval = page.getByTestId('pending-approval');
  await expect(approval).toBeVisible();
  await expect(approval.getByTestId('approval-summary')).toHaveText(/^Delete \d+ items?/);
  const view = approval.getByTestId('confirm-view');
  await expect(view.getByRole('columnheader', { name: /Title/ })).toBeVisible();
  await expect(view.getByRole('button', { name: /^Delete \d+ items?$/ })).toBeVisible();
  await expectPlainWords(approval, TOOLS);
  await expectNoSeriousA11yViolations(page);
  await approval.screenshot({ path: path.join(artifacts, 'chat-delete-approval.png') });
  await view.getByRole('button', { name: 'Deny' }).click();
  await expect(page.getByTestId('pending-approval')).toHaveCount(0);
});
