// Selections from data, through the asks API and the served link, with JavaScript on and off:
// a per-row decision table for two id arrays over the same claims (a 422 keeps the choices), a
// 5,000-row selection searched and paged through its form with every tick kept, a selection over
// its maxItems (a message before sending with JavaScript, a 422 without), and the chat's confirm
// view for many items with its Delete button in view.
import { expect, test, type Page } from '@playwright/test';
import path from 'node:path';

import {
  answerOf,
  artifacts,
  askStatus,
  auth,
  createAsk,
  expectNoSeriousA11yViolations,
  openAsAdmin,
  waitForHydration,
} from './helpers';

function submitButton(page: Page) {
  return page.locator('button[name="_action"][value="submit"]');
}

const claims = [
  { id: 'CLM-1', amount: 120, reason: 'Taxi from the airport to the client office after the delayed flight from Berlin, receipt attached' },
  { id: 'CLM-2', amount: 40, reason: 'Team lunch' },
  { id: 'CLM-3', amount: 900, reason: 'Conference ticket' },
  { id: 'CLM-4', amount: 65, reason: 'Books' },
];

const claimSchema = {
  type: 'object',
  properties: {
    approved_ids: { type: 'array', items: { type: 'string' }, description: 'ids from /claims' },
    rejected_ids: { type: 'array', items: { type: 'string' }, maxItems: 1, description: 'ids from /claims' },
  },
};

function users(count: number) {
  return Array.from({ length: count }, (_, index) => ({
    id: `u${index + 1}`,
    name: `User ${index + 1}`,
    email: `user${index + 1}@example.com`,
  }));
}

for (const javaScriptEnabled of [true, false]) {
  const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';

  test.describe(mode, () => {
    test.use({ javaScriptEnabled });

    test(`claims are decided row by row and arrive as separate arrays (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, {
        prompt: 'Review the expense claims. Approve or reject each one; leave the ones you are unsure of.',
        schema: claimSchema,
        data: { claims },
      });
      await page.goto(link);
      if (javaScriptEnabled) await waitForHydration(page);
      const table = page.getByTestId('decision-table');
      await expect(table).toBeVisible();
      await expect(page.getByRole('textbox')).toHaveCount(0);
      // Long reasons are cut, with the whole text one click away.
      await expect(table.locator('details summary').first()).toContainText('…');

      await page.getByRole('radio', { name: 'Approved: CLM-1' }).check();
      await page.getByRole('radio', { name: 'Rejected: CLM-2' }).check();
      await page.getByRole('radio', { name: 'Rejected: CLM-3' }).check();
      if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
      await page.screenshot({ path: path.join(artifacts, `selections-decisions-${javaScriptEnabled ? 'js' : 'nojs'}.png`), fullPage: true });

      // Two rejections where one is allowed: refused, every choice kept.
      const [refused] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        submitButton(page).click(),
      ]);
      expect(refused.status()).toBe(422);
      await expect(page.getByTestId('field-error')).toBeVisible();
      await expect(page.getByRole('radio', { name: 'Approved: CLM-1' })).toBeChecked();
      await expect(page.getByRole('radio', { name: 'Rejected: CLM-2' })).toBeChecked();
      await expect(page.getByRole('radio', { name: 'Rejected: CLM-3' })).toBeChecked();
      await expect(page.getByRole('radio', { name: 'No decision: CLM-4' })).toBeChecked();

      await page.getByRole('radio', { name: 'No decision: CLM-3' }).check();
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      expect(await answerOf(request, id)).toEqual({ approved_ids: ['CLM-1'], rejected_ids: ['CLM-2'] });
    });

    test(`a 5,000-row selection is searched and paged and every tick arrives (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, {
        prompt: 'Deactivate the users who left the company.',
        schema: {
          type: 'object',
          properties: { deactivate_ids: { type: 'array', items: { type: 'string' }, maxItems: 500 } },
        },
        data: { users: users(5000) },
      });
      await page.goto(link);
      if (javaScriptEnabled) await waitForHydration(page);
      await expect(page.getByRole('checkbox')).toHaveCount(50);
      await expect(page.getByTestId('table-search')).toContainText('5000 rows');
      await page.screenshot({ path: path.join(artifacts, `selections-5000-${javaScriptEnabled ? 'js' : 'nojs'}.png`), fullPage: false });

      await page.getByRole('checkbox', { name: 'Select u3', exact: true }).check();
      if (javaScriptEnabled) await expect(page.getByTestId('selection-count')).toContainText('1 selected');
      await page.getByRole('spinbutton', { name: 'Page' }).fill('7');
      await page.getByRole('button', { name: 'Go', exact: true }).click();
      await expect(page.getByRole('spinbutton', { name: 'Page' })).toHaveValue('7');
      await page.getByRole('checkbox', { name: 'Select u310', exact: true }).check();

      await page.getByRole('searchbox', { name: 'Search users' }).fill('user4999@');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect(page.getByRole('checkbox')).toHaveCount(1);
      await expect(page.getByTestId('selection-count')).toContainText('2 selected');
      await page.getByRole('checkbox', { name: 'Select u4999', exact: true }).check();
      await page.screenshot({ path: path.join(artifacts, `selections-5000-search-${javaScriptEnabled ? 'js' : 'nojs'}.png`), fullPage: true });
      expect((await askStatus(request, id)).status).toBe('waiting');

      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      const answer = (await answerOf(request, id)) as { deactivate_ids: string[] };
      expect([...answer.deactivate_ids].sort()).toEqual(['u3', 'u310', 'u4999']);
    });

    test(`ticking more than maxItems is stopped before sending or refused (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, {
        prompt: 'Deactivate the users who left the company.',
        schema: {
          type: 'object',
          properties: { deactivate_ids: { type: 'array', items: { type: 'string' }, maxItems: 2 } },
        },
        data: { users: users(8) },
      });
      await page.goto(link);
      if (javaScriptEnabled) await waitForHydration(page);
      await expect(page.getByTestId('selection-count')).toContainText('at most 2');
      for (const user of ['u1', 'u2', 'u5']) await page.getByRole('checkbox', { name: `Select ${user}`, exact: true }).check();
      if (javaScriptEnabled) {
        await expect(page.getByTestId('selection-count')).toContainText('3 selected');
        await submitButton(page).click();
        await expect(page.getByTestId('selection-over-limit')).toContainText('at most 2');
        await expect(page).not.toHaveURL(/\/done$/);
        await page.screenshot({ path: path.join(artifacts, 'selections-over-limit-js.png'), fullPage: true });
      } else {
        const [refused] = await Promise.all([
          page.waitForResponse((response) => response.request().method() === 'POST'),
          submitButton(page).click(),
        ]);
        expect(refused.status()).toBe(422);
        await expect(page.getByTestId('field-error')).toBeVisible();
        for (const user of ['u1', 'u2', 'u5']) await expect(page.getByRole('checkbox', { name: `Select ${user}`, exact: true })).toBeChecked();
      }
      expect((await askStatus(request, id)).status).toBe('waiting');
      await page.getByRole('checkbox', { name: 'Select u5' }).uncheck();
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      expect(await answerOf(request, id)).toEqual({ deactivate_ids: ['u1', 'u2'] });
    });
  });
}

test('the chat confirm view keeps Delete and the count in view and asks once', async ({ page, request }) => {
  // Its own 91 completed items with long descriptions, whatever other specs deleted before.
  for (let index = 1; index <= 91; index += 1) {
    const created = await request.post('/demo-api/items', {
      headers: auth,
      data: {
        title: `Archived report ${index}`,
        description: `Quarterly report ${index}, superseded by the new template; kept only until the audit closes and then safe to remove.`,
        status: 'completed',
      },
    });
    expect(created.status()).toBe(201);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await openAsAdmin(page, '/chat');
  await page.getByLabel('Message').fill('delete all completed items');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('pending-approval')).toBeVisible();
  await waitForHydration(page);
  await page.evaluate(() => window.scrollTo(0, 0));

  await page.screenshot({ path: path.join(artifacts, 'selections-chat-confirm.png') });
  const view = page.getByTestId('confirm-view');
  const ticks = await view.locator('input[name="ids"]').count();
  expect(ticks).toBeGreaterThanOrEqual(91);
  const confirm = view.getByRole('button', { name: `Delete ${ticks} items` });
  await expect(confirm).toBeInViewport({ ratio: 1 });
  await expect(view.getByRole('button', { name: 'Deny' })).toBeInViewport({ ratio: 1 });
  const box = await confirm.boundingBox();
  expect(box && box.y + box.height).toBeLessThanOrEqual(800);
  // The approval question is printed once.
  const text = await page.locator('main').innerText();
  expect(text.split('Nothing has been sent yet').length - 1).toBe(1);
  await expectNoSeriousA11yViolations(page);
});

test('a tick altered to name a claim the page never offered is refused with the other choices kept', async ({ page, request }) => {
  const { id, link } = await createAsk(request, {
    prompt: 'Review the expense claims. Approve or reject each one; leave the ones you are unsure of.',
    schema: claimSchema,
    data: { claims },
  });
  await page.goto(link);
  await waitForHydration(page);
  await page.getByRole('radio', { name: 'Approved: CLM-1' }).check();
  await page.getByRole('radio', { name: 'Approved: CLM-2' }).check();
  // What an attacker does in the browser's developer tools: the CLM-2 radio now files its row
  // under an id no row of this page holds.
  await page.getByRole('radio', { name: 'Approved: CLM-2' }).evaluate((radio) => {
    const input = radio as HTMLInputElement;
    input.name = input.name.replace(/CLM-2$/, 'NEVER-SHOWN-999');
  });
  const [refused] = await Promise.all([
    page.waitForResponse((response) => response.request().method() === 'POST'),
    submitButton(page).click(),
  ]);
  expect(refused.status()).toBe(422);
  await expect(page.getByTestId('field-error').first()).toContainText('NEVER-SHOWN-999');
  await expect(page.getByRole('radio', { name: 'Approved: CLM-1' })).toBeChecked();
  await page.screenshot({ path: path.join(artifacts, 'selections-not-offered.png'), fullPage: true });
  await expectNoSeriousA11yViolations(page);
  expect((await askStatus(request, id)).status).toBe('waiting');

  await submitButton(page).click();
  await expect(page).toHaveURL(/\/done$/);
  expect(await answerOf(request, id)).toEqual({ approved_ids: ['CLM-1'], rejected_ids: [] });
});
