// Pages built by the offline heuristic model through POST /api/pages/generate, rendered by the
// preview API and shown with the real stylesheet: what a person would get with no model configured.
import type { APIRequestContext, Page } from '@playwright/test';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, test } from './helpers';

const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

type Generated = {
  tree: unknown;
  validation: { ok: boolean; errors: unknown[] };
  generation: { provider: string; outcome: string; turns: number };
};

/** Generates a page with the heuristic model, checks it validated, and shows it in `page`. */
async function showGenerated(
  page: Page,
  request: APIRequestContext,
  baseURL: string | undefined,
  body: { prompt: string; schema?: unknown; data?: unknown },
): Promise<Generated> {
  const response = await request.post('/api/pages/generate', { headers: auth, data: { ...body, model: 'heuristic' } });
  expect(response.status()).toBe(200);
  const generated = (await response.json()) as Generated;
  expect(generated.validation.ok, JSON.stringify(generated.validation.errors)).toBe(true);
  expect(generated.generation.provider).toBe('heuristic');
  expect(generated.generation.outcome).toBe('ok');

  const preview = await request.post('/api/pages/preview', {
    headers: auth,
    data: { tree: generated.tree, schema: body.schema, data: body.data },
  });
  expect(preview.status()).toBe(200);
  const { html } = (await preview.json()) as { html: string };
  await page.setContent(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${body.prompt}</title>` +
      `<link rel="stylesheet" href="${baseURL}/pkg/tessera.css"></head>` +
      `<body class="bg-slate-50 text-slate-900"><main class="mx-auto max-w-3xl p-6">${html}</main></body></html>`,
  );
  await expect(page.getByRole('heading', { level: 1 })).toHaveCSS('font-size', '30px');
  await expect(page.getByTestId('node-error')).toHaveCount(0);
  return generated;
}

const emails = Array.from({ length: 6 }, (_, index) => ({
  id: `m${index + 1}`,
  from: ['news@example.com', 'billing@example.com', 'team@example.com'][index % 3],
  subject: ['Weekly news', 'Invoice, January', 'Offsite photos', 'Your receipt', 'Security alert', 'Old thread'][index],
  date: `2023-0${(index % 9) + 1}-04`,
}));

test('an archive request becomes a selectable table with a note, a priority and two buttons', async ({ page, request, baseURL }) => {
  await showGenerated(page, request, baseURL, {
    prompt: 'Archive old emails. Tick the emails you no longer need; they move to the archive folder.',
    schema: {
      type: 'object',
      properties: {
        archive_ids: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'ids of the emails to archive' },
        note: { type: ['string', 'null'], description: 'Anything the team should know' },
        priority: { type: 'string', enum: ['low', 'normal', 'high'] },
      },
      required: ['archive_ids', 'priority'],
    },
    data: { mailbox: 'ada@example.com', emails },
  });
  await expect(page.getByRole('heading', { level: 1, name: 'Archive old emails' })).toBeVisible();
  await expect(page.getByRole('checkbox')).toHaveCount(emails.length);
  await expect(page.getByRole('radio')).toHaveCount(3);
  await expect(page.getByRole('textbox', { name: 'Note' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Archive' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Cancel' })).toBeVisible();
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'heuristic-archive.png'), fullPage: true });
});

test('a registration schema gets the right field for every type', async ({ page, request, baseURL }) => {
  await showGenerated(page, request, baseURL, {
    prompt: 'Register for RustConf. We send the ticket to your email.',
    schema: {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', title: 'Work email' },
        arrival: { type: 'string', format: 'date' },
        guests: { type: 'integer', minimum: 0, maximum: 4, description: 'People coming with you' },
        track: { type: 'string', enum: ['web', 'embedded', 'data', 'games', 'tooling', 'security', 'async'] },
        workshops: { type: 'array', items: { type: 'string', enum: ['intro', 'macros', 'unsafe'] } },
        dietary: { type: 'array', items: { type: 'string' }, description: 'One requirement per row' },
        newsletter: { type: 'boolean', title: 'Send me the newsletter' },
        comments: { type: ['string', 'null'] },
      },
      required: ['email', 'arrival', 'guests', 'track'],
    },
    data: { event: { name: 'RustConf', city: 'Montreal', seats_left: 120 } },
  });
  await expect(page.getByLabel('Work email')).toHaveAttribute('type', 'email');
  await expect(page.getByLabel('Arrival')).toHaveAttribute('type', 'date');
  await expect(page.getByLabel('Guests')).toHaveAttribute('type', 'number');
  await expect(page.getByRole('combobox', { name: 'Track' })).toBeVisible();
  await expect(page.getByRole('checkbox', { name: 'Send me the newsletter' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Comments' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Register' })).toBeVisible();
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'heuristic-registration.png'), fullPage: true });
});

test('data without a schema becomes a display page with stats, facts and a table', async ({ page, request, baseURL }) => {
  const generated = await showGenerated(page, request, baseURL, {
    prompt: "This month's orders. Numbers are for the EU store.",
    data: {
      orders: 87,
      revenue: 12045,
      refunds: 3,
      currency: 'EUR',
      top_products: [
        { sku: 'A-1', name: 'Mug', sold: 40, revenue: 480 },
        { sku: 'B-7', name: 'T-shirt', sold: 25, revenue: 625 },
        { sku: 'C-3', name: 'Poster', sold: 22, revenue: 330 },
      ],
    },
  });
  // The stats row is placed with its Stats inside: the whole page in one model turn.
  expect(generated.generation.turns).toBe(1);
  await expect(page.getByTestId('page-form')).toHaveCount(0);
  await expect(page.getByRole('table')).toBeVisible();
  await expect(page.getByText('12,045', { exact: true })).toBeVisible();
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'heuristic-dashboard.png'), fullPage: true });
});
