import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, test, waitForHydration } from './helpers';

test('the home page is server-rendered, styled by Tailwind and accessible', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  expect(response?.headers()['cache-control']).toBe('no-store');
  await expect(page).toHaveTitle('Tessera');
  const name = page.getByTestId('app-name');
  await expect(name).toHaveText('Tessera');
  // text-4xl and font-bold come only from the compiled Tailwind stylesheet.
  await expect(name).toHaveCSS('font-size', '36px');
  await expect(name).toHaveCSS('font-weight', '700');
  await expect(page.getByTestId('database')).toHaveText('sqlite');
  await expect(page.getByTestId('model')).toHaveText('heuristic');
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'home.png'), fullPage: true });
});

test('the theme toggle island works after hydration and remembers the choice', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto('/');
  await waitForHydration(page);
  const toggle = page.getByTestId('theme-toggle');
  await expect(toggle).toBeEnabled();
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  const background = () => page.locator('body').evaluate((body) => getComputedStyle(body).backgroundColor);
  const light = await background();
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('html')).toHaveClass(/\bdark\b/);
  // bg-slate-50 → dark:bg-slate-900: the dark variant from the compiled stylesheet applies.
  await expect.poll(background).not.toBe(light);
  await page.reload();
  await waitForHydration(page);
  await expect(page.locator('html')).toHaveClass(/\bdark\b/);
  await expect(page.getByTestId('theme-toggle')).toHaveAttribute('aria-pressed', 'true');
  expect(errors, errors.join('\n')).toEqual([]);
});

test.describe('with JavaScript disabled', () => {
  test.use({ javaScriptEnabled: false });

  test('the home page stays usable and its links work', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId('app-name')).toHaveText('Tessera');
    await expect(page.getByTestId('theme-toggle')).toBeDisabled();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tessera' }).click();
    await expect(page).toHaveURL(/\/$/);
    await expectLandmarks(page);
  });
});

test('unknown pages get the styled, accessible 404', async ({ page }) => {
  const response = await page.goto('/definitely/not/here');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Page not found');
  await expect(page.getByRole('link', { name: 'Go to the home page' })).toBeVisible();
  await expectNoSeriousA11yViolations(page);
});

// axe needs script execution; with JavaScript off we still check the landmarks a screen reader relies on.
async function expectLandmarks(page: import('@playwright/test').Page): Promise<void> {
  await expect(page.getByRole('main')).toHaveCount(1);
  await expect(page.getByRole('heading', { level: 1 })).toHaveCount(1);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
}
