// Five requests of the page-quality suite (tests/quality/*.json), built by the offline heuristic
// through POST /api/pages/generate, rendered by the preview API with the real stylesheet, checked
// the way a person would look at them and saved as full-page screenshots (artifacts/quality-*.png).
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { artifacts, expectNoSeriousA11yViolations } from './helpers';

const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

type Fixture = { name: string; prompt: string; schema?: unknown; data: unknown };

function fixture(name: string): Fixture {
  const file = path.resolve(__dirname, '..', '..', 'tests', 'quality', `${name}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as Fixture;
}

/** Generates `name`'s page with the heuristic, checks it validated, and shows it in `page`. */
async function showFixture(page: Page, request: APIRequestContext, baseURL: string | undefined, name: string): Promise<void> {
  const { prompt, schema, data } = fixture(name);
  const response = await request.post('/api/pages/generate', {
    headers: auth,
    data: { prompt, schema, data, model: 'heuristic', cache: 'bypass' },
  });
  expect(response.status()).toBe(200);
  const generated = (await response.json()) as { tree: unknown; validation: { ok: boolean; errors: unknown[] } };
  expect(generated.validation.ok, JSON.stringify(generated.validation.errors)).toBe(true);
  const preview = await request.post('/api/pages/preview', { headers: auth, data: { tree: generated.tree, schema, data } });
  expect(preview.status()).toBe(200);
  const { html } = (await preview.json()) as { html: string };
  await page.setContent(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>` +
      `<link rel="stylesheet" href="${baseURL}/pkg/tessera.css"></head>` +
      `<body class="bg-slate-50 text-slate-900"><main class="mx-auto max-w-3xl p-6">${html}</main></body></html>`,
  );
  await expect(page.getByTestId('node-error')).toHaveCount(0);
  await expect(page.locator('body')).not.toContainText('{{');
}

async function screenshot(page: Page, name: string): Promise<void> {
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, `quality-${name}.png`), fullPage: true });
}

test('the sales dashboard shows totals, a chart per day and the top products, with nothing to answer', async ({ page, request, baseURL }) => {
  await showFixture(page, request, baseURL, 'sales-dashboard');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText("This week's sales dashboard");
  await expect(page.getByText('Total amount', { exact: true })).toBeVisible();
  await expect(page.getByRole('img', { name: 'Amount per day' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Top 5 products by amount' }).locator('tbody tr')).toHaveCount(5);
  await expect(page.getByTestId('page-form')).toHaveCount(0);
  await screenshot(page, 'sales-dashboard');
});

test('the expense review says what is asked and shows the computed total', async ({ page, request, baseURL }) => {
  await showFixture(page, request, baseURL, 'expense-review');
  await expect(page.getByText(/^Please answer:/)).toBeVisible();
  await expect(page.getByText('707', { exact: true })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Approve' })).toBeVisible();
  await screenshot(page, 'expense-review');
});

test('deactivating accounts is a tick list with a danger button', async ({ page, request, baseURL }) => {
  await showFixture(page, request, baseURL, 'deactivate-accounts');
  await expect(page.getByRole('checkbox')).toHaveCount(12);
  await expect(page.getByRole('button', { name: 'Deactivate' })).toHaveClass(/bg-red-700/);
  await screenshot(page, 'deactivate-accounts');
});

test('the project status charts hours per week and groups tasks by owner', async ({ page, request, baseURL }) => {
  await showFixture(page, request, baseURL, 'project-status');
  await expect(page.getByRole('img', { name: 'Hours per week' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Tasks by owner' })).toBeVisible();
  await screenshot(page, 'project-status');
});

test('approving refunds shows the total of the refunds and a tick list', async ({ page, request, baseURL }) => {
  await showFixture(page, request, baseURL, 'approve-refunds');
  await expect(page.getByText('249', { exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Approve' })).toHaveClass(/bg-indigo-700/);
  await screenshot(page, 'approve-refunds');
});
