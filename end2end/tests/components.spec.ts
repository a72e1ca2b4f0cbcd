// The component gallery at /components: every default component rendered from its example by the
// page renderer. It is the visual, accessibility and keyboard test target of the catalog.
import type { Page } from '@playwright/test';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, test, waitForHydration } from './helpers';

const COMPONENT_COUNT = 31;
// The gallery is an admin page: a tool reads it with the API token, as this file does.
test.use({ extraHTTPHeaders: { Authorization: 'Bearer e2e-token-0123456789abcdef' } });

test('the gallery shows all 31 components, each rendered and with its tool definition', async ({ page }) => {
  const response = await page.goto('/components');
  expect(response?.status()).toBe(200);
  const entries = page.getByTestId('gallery-entry');
  await expect(entries).toHaveCount(COMPONENT_COUNT);
  const names = await entries.evaluateAll((sections) => sections.map((section) => section.getAttribute('data-component')));
  expect(new Set(names).size).toBe(COMPONENT_COUNT);
  for (const name of ['Form', 'Input', 'MultiTextInput', 'Table', 'Chart', 'DownloadLink', 'Timeline', 'Code', 'Fieldset', 'RecordList']) {
    expect(names).toContain(name);
  }
  // No example renders the error box a broken node gets instead of its component.
  await expect(page.getByTestId('node-error')).toHaveCount(0);
  await expect(page.getByRole('heading', { level: 1, name: 'Components', exact: true })).toBeVisible();
  // People get every prop documented; the tool definition a model gets is terse and leaves out
  // the props code takes from the response schema.
  const input = entries.filter({ has: page.getByRole('heading', { level: 2, name: 'Input', exact: true }) });
  const props = input.getByTestId('gallery-props');
  await props.locator('summary').click();
  const step = props.getByRole('row').filter({ has: page.getByRole('cell', { name: 'step', exact: true }) });
  await expect(step).toContainText('Granularity of a number');
  await expect(step).toContainText('not offered to the model');
  await expect(input.locator('pre code')).not.toContainText('"step"');
});

test('the gallery has no serious or critical axe violations in the light and the dark theme', async ({ page }) => {
  await page.goto('/components');
  await waitForHydration(page);
  await expect(page.locator('html')).not.toHaveClass(/\bdark\b/);
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'gallery.png'), fullPage: true });

  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveClass(/\bdark\b/);
  await expectNoSeriousA11yViolations(page);
  await page.screenshot({ path: path.join(artifacts, 'gallery-dark.png'), fullPage: true });
});

test('pressing Tab from the top reaches every form field in the gallery', async ({ page }) => {
  await page.goto('/components');
  await waitForHydration(page);
  const wanted = await fieldKeys(page);
  // Every field example is there: text inputs, a textarea, selects, tick boxes, radios, rows, table boxes.
  expect(wanted.length).toBeGreaterThanOrEqual(10);
  expect(wanted, 'every field has an id').not.toContain('id:');

  const reached = new Set<string>();
  await page.locator('body').focus();
  const maxPresses = 400;
  let presses = 0;
  for (; presses < maxPresses && reached.size < wanted.length; presses += 1) {
    await page.keyboard.press('Tab');
    const key = await page.evaluate(() => {
      const active = document.activeElement;
      if (!(active instanceof HTMLInputElement || active instanceof HTMLSelectElement || active instanceof HTMLTextAreaElement)) {
        return null;
      }
      // A radio group is one tab stop (arrow keys move within it), so it counts by its name.
      return active instanceof HTMLInputElement && active.type === 'radio' ? `radio:${active.name}` : `id:${active.id}`;
    });
    if (key && wanted.includes(key)) reached.add(key);
  }
  const missed = wanted.filter((key) => !reached.has(key));
  expect(missed, `not reached by Tab within ${presses} presses`).toEqual([]);
});

test('the MultiTextInput "Add another" button appends a row after hydration and focuses it', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto('/components');
  const entry = page.locator('[data-testid="gallery-entry"][data-component="MultiTextInput"]');
  const rows = entry.getByTestId('multi-text-rows').getByRole('textbox');
  const add = entry.getByTestId('multi-text-add');
  await expect(rows).toHaveCount(2);
  await expect(add).toHaveAttribute('data-hydrated', 'true', { timeout: 15_000 });
  await expect(add).toBeEnabled();

  await rows.first().fill('ada@example.com');
  await add.click();
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(2)).toBeFocused();
  await expect(rows.nth(2)).toHaveAccessibleName('Also notify, row 3');
  await page.keyboard.type('grace@example.com');
  await expect(rows.nth(2)).toHaveValue('grace@example.com');
  // The rows typed before the island re-rendered keep their text.
  await expect(rows.first()).toHaveValue('ada@example.com');
  expect(errors, errors.join('\n')).toEqual([]);
});

/** The keys (see the Tab test) of every visible, enabled form field in the gallery examples. */
async function fieldKeys(page: Page): Promise<string[]> {
  const keys = await page
    .locator('[data-testid="gallery-entry"]')
    .locator('input:not([type=hidden]), select, textarea')
    .evaluateAll((fields) =>
      fields
        .filter((field) => {
          const control = field as HTMLInputElement;
          const box = control.getBoundingClientRect();
          const style = getComputedStyle(control);
          return !control.disabled && box.width > 0 && box.height > 0 && style.visibility !== 'hidden';
        })
        .map((field) => {
          const control = field as HTMLInputElement;
          return control.type === 'radio' ? `radio:${control.name}` : `id:${control.id}`;
        }),
    );
  return [...new Set(keys)];
}
