// A YAML workflow from the runs page, as a person uses it: start `expense-approval` (shipped in
// workflows/), open its page, approve with a reason, and see the run finish down the approval
// branch with the decision posted to the demo expenses API.
import { expect, expectNoSeriousA11yViolations, openAsAdmin, test } from './helpers';

const API = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

test('the YAML expense approval runs from the runs page to the demo API', async ({ page }) => {
  await openAsAdmin(page, '/runs');
  await page.getByTestId('start-expense-approval').click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop() ?? '';
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId('run-waiting')).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await page.getByTestId('reissue-link').click();
  const link = (await page.getByTestId('page-link').getAttribute('href')) ?? '';

  await page.goto(new URL(link).pathname);
  await expect(page.getByText('Katherine Johnson').first()).toBeVisible();
  await expectNoSeriousA11yViolations(page);
  await page.getByLabel('approve', { exact: false }).first().check();
  await page.getByRole('textbox', { name: /reason/i }).fill('Training budget covers it.');
  await page.locator('form button[type="submit"]:not([value="cancel"])').first().click();
  await expect(page.getByText(/Thank you/)).toBeVisible();

  await expect(async () => {
    const response = await page.request.get(`/api/runs/${id}`, { headers: API });
    const run = (await response.json()) as { status: string; steps: { name: string }[] };
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((step) => step.name)).toContain('record-approval');
  }).toPass({ timeout: 30_000 });
  const claim = await page.request.get('/demo-api/expenses/exp-104');
  const body = (await claim.json()) as { decision: { decision: string; reason: string } };
  expect(body.decision.decision).toBe('approve');
  expect(body.decision.reason).toBe('Training budget covers it.');
  await page.goto(`/runs/${id}`);
  await expect(page.getByTestId('run-status').first()).toHaveText('succeeded');
});
