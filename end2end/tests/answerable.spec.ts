// Pages a person can answer well: an ask through POST /api/asks with the offline heuristic model,
// answered in Chromium with its own constraint validation on. A required yes/no answer must be
// sendable as `false` and a money field must take cents (`12.50`), a half-hour field `7.5`.
import { expect, test } from '@playwright/test';
import path from 'node:path';

import { artifacts, expectNoSeriousA11yViolations } from './helpers';

const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

test('an unticked box sends false and a money field takes cents, through the browser', async ({ page, request }) => {
  const created = await request.post('/api/asks', {
    headers: auth,
    data: {
      prompt: 'Log the {{ trip.name }} expenses. One claim per trip.',
      data: { trip: { name: 'Berlin offsite' } },
      schema: {
        type: 'object',
        properties: {
          amount: { type: 'number', minimum: 0, title: 'Amount (EUR)', examples: [42.5] },
          hours: { type: 'number', multipleOf: 0.5, minimum: 0, maximum: 24, title: 'Hours travelled' },
          billable: { type: 'boolean', title: 'Bill the client' },
        },
        required: ['amount', 'hours', 'billable'],
      },
    },
  });
  expect(created.status()).toBe(201);
  const ask = (await created.json()) as { id: string; link: string };
  const link = new URL(ask.link);

  await page.goto(link.pathname);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Log the Berlin offsite expenses');
  await page.getByLabel('Amount (EUR)').fill('12.50');
  await page.getByLabel('Hours travelled').fill('7.5');
  await expect(page.getByLabel('Bill the client')).not.toBeChecked();
  await page.screenshot({ path: path.join(artifacts, 'answerable-filled.png'), fullPage: true });
  await expectNoSeriousA11yViolations(page);

  // Chromium's own constraint validation must allow the submit.
  const valid = await page.locator('form').evaluate((form: HTMLFormElement) => form.checkValidity());
  expect(valid).toBe(true);
  await page.locator('form button[type="submit"]').first().click();
  await expect(page.locator('form')).toHaveCount(0);

  let response: unknown = null;
  await expect
    .poll(async () => {
      const status = await request.get(`/api/asks/${ask.id}`, { headers: auth });
      const body = (await status.json()) as { status: string; response: unknown };
      response = body.response;
      return body.status;
    })
    .toBe('submitted');
  expect(response).toEqual({ amount: 12.5, hours: 7.5, billable: false });
});

test('a display-only ask is a page with no form', async ({ page, request }) => {
  const created = await request.post('/api/asks', {
    headers: auth,
    data: { prompt: 'Spending this quarter: {{ total }}', display: true, data: { total: '€12,400' } },
  });
  expect(created.status()).toBe(201);
  const ask = (await created.json()) as { link: string };
  await page.goto(new URL(ask.link).pathname);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Spending this quarter: €12,400');
  await expect(page.locator('form')).toHaveCount(0);
  await page.screenshot({ path: path.join(artifacts, 'answerable-display.png'), fullPage: true });
});
