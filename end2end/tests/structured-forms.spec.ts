// Forms with structure (issue 26), asked through the asks API and answered in Chromium with
// JavaScript on and off: the invoice correction (6 line items bound to the scanned rows), the
// delivery address (a fieldset), a decision and a reason per claim, and 5 contacts filled from
// empty — adding and removing records (the island without a round trip, the page's own buttons
// without JavaScript), and a 422 that keeps every value.
import type { Page } from '@playwright/test';
import path from 'node:path';

import {
  answerOf,
  artifacts,
  askStatus,
  createAsk,
  expect,
  expectNoSeriousA11yViolations,
  test,
  waitForHydration,
} from './helpers';

function submitButton(page: Page) {
  return page.locator('button[name="_action"][value="submit"]:visible');
}

async function open(page: Page, link: string, javaScriptEnabled: boolean) {
  await page.goto(link);
  if (javaScriptEnabled) {
    await waitForHydration(page);
    const editors = page.getByTestId('record-editor');
    for (let index = 0; index < (await editors.count()); index += 1) {
      await expect(editors.nth(index)).toHaveAttribute('data-hydrated', 'true');
    }
  }
}

/// Clicks a record button: without JavaScript it is a navigation POST answered with the page.
async function press(page: Page, name: string | RegExp, javaScriptEnabled: boolean) {
  const button = page.getByRole('button', { name });
  if (javaScriptEnabled) {
    // The island adds or removes in place: nothing is posted.
    let posts = 0;
    const count = (request: { method(): string }) => {
      if (request.method() === 'POST') posts += 1;
    };
    page.on('request', count);
    await button.click();
    await page.waitForTimeout(100);
    page.off('request', count);
    expect(posts).toBe(0);
    return;
  }
  const [response] = await Promise.all([page.waitForNavigation(), button.click()]);
  expect(response?.status()).toBe(200);
}

const items = [
  { sku: 'A-100', quantity: 10, unit_price: 4.5 },
  { sku: 'B-220', quantity: 2, unit_price: 61 },
  { sku: 'C-310', quantity: 1, unit_price: 12.9 },
  { sku: 'D-400', quantity: 5, unit_price: 3.2 },
  { sku: 'E-510', quantity: 12, unit_price: 0.99 },
  { sku: 'F-620', quantity: 3, unit_price: 150 },
];

const invoiceSchema = {
  type: 'object',
  properties: {
    line_items: {
      type: 'array',
      title: 'Line items',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string', title: 'SKU' },
          quantity: { type: 'integer', minimum: 1, title: 'Quantity' },
          unit_price: { type: 'number', minimum: 0, multipleOf: 0.01, title: 'Unit price' },
        },
        required: ['sku', 'quantity', 'unit_price'],
      },
    },
  },
  required: ['line_items'],
};

const addressSchema = {
  type: 'object',
  properties: {
    address: {
      type: 'object',
      title: 'Delivery address',
      description: 'Where the parcel goes.',
      properties: {
        street: { type: 'string', title: 'Street and number' },
        postal_code: { type: 'string', title: 'Postal code', pattern: '^[0-9]{5}$' },
        city: { type: 'string', title: 'City' },
        country: { type: 'string', title: 'Country', enum: ['DE', 'FR', 'NL'] },
      },
      required: ['street', 'postal_code', 'city', 'country'],
    },
  },
  required: ['address'],
};

const decisionSchema = {
  type: 'object',
  properties: {
    decisions: {
      type: 'array',
      title: 'Decisions',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', title: 'Claim' },
          decision: { type: 'string', enum: ['approve', 'reject'], title: 'Decision' },
          reason: { type: 'string', title: 'Reason' },
        },
        required: ['id', 'decision'],
      },
    },
  },
  required: ['decisions'],
};

const claims = [
  { id: 'CLM-1', amount: 120, note: 'Taxi to the client' },
  { id: 'CLM-2', amount: 40, note: 'Team lunch' },
  { id: 'CLM-3', amount: 900, note: 'Conference ticket' },
];

const contactsSchema = {
  type: 'object',
  properties: {
    contacts: {
      type: 'array',
      title: 'New hires',
      minItems: 1,
      maxItems: 5,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Full name' },
          email: { type: 'string', format: 'email', title: 'Work email' },
          phone: { type: 'string', title: 'Phone' },
        },
        required: ['name', 'email'],
      },
    },
  },
  required: ['contacts'],
};

for (const javaScriptEnabled of [true, false]) {
  const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';
  const suffix = javaScriptEnabled ? 'js' : 'nojs';

  test.describe(mode, () => {
    test.use({ javaScriptEnabled });

    test(`the invoice's line items are corrected in a table bound to the scan (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, {
        prompt: 'The scanner read 6 line items from invoice INV-2231. Correct any quantity or unit price.',
        schema: invoiceSchema,
        data: { invoice: 'INV-2231', items },
      });
      await open(page, link, javaScriptEnabled);
      const list = page.getByTestId('record-list');
      await expect(list.locator('tbody tr')).toHaveCount(6);
      await expect(list.getByTestId('read-only').first()).toHaveText('A-100');
      await expect(page.getByText('line_items')).toHaveCount(0);
      await expect(page.getByRole('spinbutton', { name: 'Quantity, line item 2' })).toHaveValue('2');
      if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
      await page.screenshot({ path: path.join(artifacts, `structured-invoice-${suffix}.png`), fullPage: true });

      // A quantity of 0 is refused (the browser would stop it; skip its check to reach the server).
      await page.getByRole('spinbutton', { name: 'Quantity, line item 2' }).fill('3');
      await page.getByRole('spinbutton', { name: 'Unit price, line item 5' }).fill('1.09');
      await page.getByRole('spinbutton', { name: 'Quantity, line item 3' }).fill('0');
      await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
      const [refused] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        submitButton(page).click(),
      ]);
      expect(refused.status()).toBe(422);
      await expect(page.getByTestId('field-error').first()).toBeVisible();
      await expect(page.getByRole('spinbutton', { name: 'Quantity, line item 2' })).toHaveValue('3');
      await expect(page.getByRole('spinbutton', { name: 'Unit price, line item 5' })).toHaveValue('1.09');
      await page.screenshot({ path: path.join(artifacts, `structured-invoice-422-${suffix}.png`), fullPage: true });

      await page.getByRole('spinbutton', { name: 'Quantity, line item 3' }).fill('1');
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      const answer = (await answerOf(request, id)) as { line_items: { sku: string; quantity: number; unit_price: number }[] };
      expect(answer.line_items).toHaveLength(6);
      expect(answer.line_items[1]).toEqual({ sku: 'B-220', quantity: 3, unit_price: 61 });
      expect(answer.line_items[4].unit_price).toBe(1.09);
    });

    test(`the delivery address is a fieldset of its own (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, { prompt: 'Enter the corrected delivery address.', schema: addressSchema });
      await open(page, link, javaScriptEnabled);
      const group = page.getByRole('group', { name: 'Delivery address' });
      await expect(group).toBeVisible();
      await group.getByLabel('Street and number').fill('Hauptstraße 5');
      await group.getByLabel('Postal code').fill('10115');
      await group.getByLabel('City').fill('Berlin');
      await group.getByRole('radio', { name: 'DE' }).check();
      if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
      await page.screenshot({ path: path.join(artifacts, `structured-address-${suffix}.png`), fullPage: true });
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      expect(await answerOf(request, id)).toEqual({
        address: { street: 'Hauptstraße 5', postal_code: '10115', city: 'Berlin', country: 'DE' },
      });
    });

    test(`each claim gets a decision and a rejected one a reason (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, {
        prompt: 'Decide on each claim; give a reason for each rejection.',
        schema: decisionSchema,
        data: { claims },
      });
      await open(page, link, javaScriptEnabled);
      const list = page.getByTestId('record-list');
      await expect(list.locator('tbody tr')).toHaveCount(3);
      await list.locator('tbody tr').nth(0).getByRole('radio', { name: 'Approve' }).check();
      await list.locator('tbody tr').nth(1).getByRole('radio', { name: 'Reject' }).check();
      await page.getByRole('textbox', { name: 'Reason, decision 2' }).fill('Not a business expense');
      await list.locator('tbody tr').nth(2).getByRole('radio', { name: 'Approve' }).check();
      if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
      await page.screenshot({ path: path.join(artifacts, `structured-decisions-${suffix}.png`), fullPage: true });
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      expect(await answerOf(request, id)).toEqual({
        decisions: [
          { id: 'CLM-1', decision: 'approve' },
          { id: 'CLM-2', decision: 'reject', reason: 'Not a business expense' },
          { id: 'CLM-3', decision: 'approve' },
        ],
      });
    });

    test(`five contacts are filled from empty, adding and removing records (${mode})`, async ({ page, request }) => {
      const { id, link } = await createAsk(request, { prompt: 'Enter the contacts of the 5 new hires.', schema: contactsSchema });
      await open(page, link, javaScriptEnabled);
      const list = page.getByTestId('record-list');
      await expect(list.locator('tbody tr')).toHaveCount(1);
      await expect(page.getByRole('button', { name: /^Remove/ })).toBeHidden();
      const people = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov'];
      // Six records typed one after the other, the third removed again: five remain.
      const typed = [...people.slice(0, 2), 'Mistake Person', ...people.slice(2)];
      let count = 0;
      for (const [index, name] of typed.entries()) {
        if (count > 0) await press(page, 'Add new hire', javaScriptEnabled);
        count += 1;
        await page.getByRole('textbox', { name: `Full name, new hire ${count}` }).fill(name);
        const login = name.split(' ')[0].toLowerCase();
        await page.getByRole('textbox', { name: `Work email, new hire ${count}` }).fill(`${login}@example.com`);
        if (index === 4) {
          // At five (maxItems), no more records can be added.
          await expect(page.getByRole('button', { name: 'Add new hire' })).toBeHidden();
          await press(page, 'Remove new hire 3', javaScriptEnabled);
          count -= 1;
          await expect(page.getByRole('textbox', { name: 'Full name, new hire 3' })).toHaveValue('Alan Turing');
          await expect(page.getByRole('button', { name: 'Add new hire' })).toBeVisible();
        }
      }
      await expect(list.locator('tbody tr')).toHaveCount(5);
      await expect(page.getByRole('textbox', { name: 'Full name, new hire 1' })).toHaveValue('Ada Lovelace');
      if (javaScriptEnabled) await expectNoSeriousA11yViolations(page);
      await page.screenshot({ path: path.join(artifacts, `structured-contacts-${suffix}.png`), fullPage: true });
      await expect.poll(async () => (await askStatus(request, id)).status).toBe('waiting');

      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      expect(await answerOf(request, id)).toEqual({
        contacts: people.map((name) => ({ name, email: `${name.split(' ')[0].toLowerCase()}@example.com` })),
      });
    });

    test(`a 500-line invoice pages on the server and keeps an edit made on every page (${mode})`, async ({ page, request }) => {
      const many = Array.from({ length: 500 }, (_, index) => ({
        sku: `S-${String(index).padStart(3, '0')}`,
        quantity: (index % 7) + 1,
        unit_price: 2.5,
      }));
      const { id, link } = await createAsk(request, {
        prompt: 'The scanner read 500 line items from invoice INV-9000. Correct any quantity.',
        schema: invoiceSchema,
        data: { invoice: 'INV-9000', items: many },
      });
      await open(page, link, javaScriptEnabled);
      const list = page.getByTestId('record-list');
      await expect(list.locator('tbody tr')).toHaveCount(50);
      await page.getByRole('spinbutton', { name: 'Quantity, line item 2', exact: true }).fill('40');
      // The pager is the form's own button: the edit travels with it, nothing is recorded.
      const next = list.getByRole('button', { name: 'Next' });
      await Promise.all([page.waitForNavigation(), next.click()]);
      await expect(page.getByRole('spinbutton', { name: 'Quantity, line item 51', exact: true })).toBeVisible();
      await expect(page.getByRole('spinbutton', { name: 'Quantity, line item 2', exact: true })).toHaveCount(0);
      await page.getByRole('spinbutton', { name: 'Quantity, line item 60', exact: true }).fill('41');
      expect((await askStatus(request, id)).status).toBe('waiting');
      await page.screenshot({ path: path.join(artifacts, `structured-500-page-2-${suffix}.png`), fullPage: false });
      await submitButton(page).click();
      await expect(page).toHaveURL(/\/done$/);
      const answer = (await answerOf(request, id)) as { line_items: { sku: string; quantity: number }[] };
      expect(answer.line_items).toHaveLength(500);
      expect(answer.line_items[1]).toEqual({ sku: 'S-001', quantity: 40, unit_price: 2.5 });
      expect(answer.line_items[59]).toEqual({ sku: 'S-059', quantity: 41, unit_price: 2.5 });
      expect(answer.line_items[499]).toEqual({ sku: 'S-499', quantity: (499 % 7) + 1, unit_price: 2.5 });
    });
  });
}
