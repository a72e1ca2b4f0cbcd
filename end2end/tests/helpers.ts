// Shared browser-test helpers: accessibility checks with axe-core and screenshots.
import { expect, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const artifacts = path.resolve(__dirname, '..', 'artifacts');

/** Runs axe-core in the page and fails on any serious or critical violation, listing them. */
export async function expectNoSeriousA11yViolations(page: Page): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's CSP (which forbids inline scripts) does not apply.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // @ts-expect-error axe is injected above
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation: { id: string; impact: string; help: string; nodes: { target: string[] }[] }) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  const serious = violations.filter((violation: { impact: string }) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(serious, JSON.stringify(serious, null, 2)).toEqual([]);
}

/** Waits until the page's islands have hydrated (the theme toggle sets the marker from an effect). */
export async function waitForHydration(page: Page): Promise<void> {
  await page.locator('[data-testid="theme-toggle"][data-hydrated="true"]').waitFor({ state: 'attached', timeout: 15_000 });
}
