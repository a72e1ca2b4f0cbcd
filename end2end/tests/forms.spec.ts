// The every-field-type page at /components/try: a person fills in one field of every kind, submits,
// and the page shows the JSON the mechanical decoder produced (DESIGN.md §5). The same with
// JavaScript off, the refusal of wrong values (422, values kept, a message beside the field) and Cancel.
import type { Locator, Page, Response } from '@playwright/test';

import { expect, expectNoSeriousA11yViolations, test, waitForHydration } from './helpers';

// Dates are typed in the en-US order (month, day, year) the date field shows under this locale.
test.use({ locale: 'en-US' });
// The gallery is an admin page: a tool reads it with the API token, as this file does.
test.use({ extraHTTPHeaders: { Authorization: 'Bearer e2e-token-0123456789abcdef' } });

/** What the decoder must produce for the answers `fillEveryField` gives, minus the aliases. */
const EXPECTED = {
  full_name: 'Ada Lovelace',
  email: 'ada@example.com',
  age: 36,
  budget: 1250.5,
  website: 'https://ada.example.org/notes',
  start_date: '2025-03-14',
  passphrase: 'correct horse battery',
  bio: 'Mathematician.\nWrites notes on engines.',
  subscribe: true,
  plan: 'pro',
  country: 'fr',
  topics: ['billing', 'security'],
  languages: ['en', 'fr'],
  invoices: ['inv-1', 'inv-3'],
};

test('every field type, filled in as a person would, decodes to the expected JSON', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/components/try');
  await waitForHydration(page);
  const form = page.getByTestId('page-form');
  const add = form.getByTestId('multi-text-add');
  await expect(add).toHaveAttribute('data-hydrated', 'true');
  await fillEveryField(page);

  // After hydration the MultiTextInput island adds a third row and focuses it.
  await add.click();
  const thirdAlias = page.getByRole('textbox', { name: 'Other names, row 3' });
  await expect(thirdAlias).toBeFocused();
  await page.keyboard.type('Enchantress of Numbers');

  const response = await submit(page, () => form.getByRole('button', { name: 'Submit' }).click());
  expect(response.status()).toBe(200);
  expect(await decodedJson(page)).toEqual({
    ...EXPECTED,
    aliases: ['Countess of Lovelace', 'A. A. Lovelace', 'Enchantress of Numbers'],
  });
  // A valid submission starts the form afresh.
  await expect(byLabel(page, 'Full name')).toHaveValue('');
  expect(errors, errors.join('\n')).toEqual([]);
});

test.describe('with JavaScript disabled', () => {
  test.use({ javaScriptEnabled: false });

  test('every field type still decodes to the expected JSON', async ({ page }) => {
    await page.goto('/components/try');
    const form = page.getByTestId('page-form');
    // Without the island the button stays disabled; the two server-rendered rows are enough.
    await expect(form.getByTestId('multi-text-add')).toBeDisabled();
    await fillEveryField(page);
    // Enter in a text field submits the form through its first submit button, as a person might.
    const response = await submit(page, () => byLabel(page, 'Full name').press('Enter'));
    expect(response.status()).toBe(200);
    expect(await decodedJson(page)).toEqual({ ...EXPECTED, aliases: ['Countess of Lovelace', 'A. A. Lovelace'] });
  });

  test('a wrong value comes back with status 422, every value kept and a message beside the field', async ({ page }) => {
    await page.goto('/components/try');
    await fillEveryField(page, { email: 'ada.example.com', age: '17' });
    // Browsers check type=email and min themselves; the server must not rely on that, so the
    // form is sent as a browser without those checks would send it.
    const response = await submit(page, () => page.getByRole('button', { name: 'Submit' }).click(), { noValidate: true });
    expect(response.status()).toBe(422);
    await expectRefusalKeepsAnswers(page);
  });
});

test('the browser refuses the wrong values first; the server refuses them too (422) and the page is accessible', async ({ page }) => {
  await page.goto('/components/try');
  await waitForHydration(page);
  await fillEveryField(page, { email: 'ada.example.com', age: '17' });
  const submitButton = page.getByRole('button', { name: 'Submit' });

  // The browser's own constraint validation stops the first attempt; nothing is posted.
  let posted = false;
  page.on('request', (request) => {
    if (request.method() === 'POST') posted = true;
  });
  await submitButton.click();
  expect(await byLabel(page, 'Email').evaluate((input: HTMLInputElement) => input.validity.typeMismatch)).toBe(true);
  expect(await byLabel(page, 'Age').evaluate((input: HTMLInputElement) => input.validity.rangeUnderflow)).toBe(true);
  expect(posted).toBe(false);

  const response = await submit(page, () => submitButton.click(), { noValidate: true });
  expect(response.status()).toBe(422);
  await expectRefusalKeepsAnswers(page);
  await expectNoSeriousA11yViolations(page);

  // Correct the two fields and the same page accepts the submission.
  await byLabel(page, 'Email').fill('ada@example.com');
  await byLabel(page, 'Age').fill('36');
  // Passwords are never sent back to the browser, so the person types it again.
  await byLabel(page, 'Passphrase').pressSequentially(EXPECTED.passphrase);
  const accepted = await submit(page, () => page.getByRole('button', { name: 'Submit' }).click());
  expect(accepted.status()).toBe(200);
  const decoded = await decodedJson(page);
  expect(decoded).toEqual({ ...EXPECTED, aliases: ['Countess of Lovelace', 'A. A. Lovelace'] });
});

test('Cancel skips validation and gives the cancelled outcome', async ({ page }) => {
  await page.goto('/components/try');
  // Nothing filled in: required fields do not stop a cancel (the button has formnovalidate).
  await byLabel(page, 'Email').pressSequentially('not an email');
  const response = await submit(page, () => page.getByRole('button', { name: 'Cancel' }).click());
  expect(response.status()).toBe(200);
  expect(await decodedJson(page)).toBe('cancelled');
  await expect(page.getByTestId('field-error')).toHaveCount(0);
});

type Overrides = { email?: string; age?: string };

/** Fills every field with the keyboard and the mouse, the way a person does. */
async function fillEveryField(page: Page, overrides: Overrides = {}): Promise<void> {
  const form = page.getByTestId('page-form');
  const type = async (field: Locator, text: string) => {
    await field.click();
    await field.pressSequentially(text);
  };
  await type(byLabel(form, 'Full name'), EXPECTED.full_name);
  // Tab moves on to the next field, as a person moving through the form would.
  await page.keyboard.press('Tab');
  await expect(byLabel(form, 'Email')).toBeFocused();
  await page.keyboard.type(overrides.email ?? EXPECTED.email);
  await type(byLabel(form, 'Age'), overrides.age ?? String(EXPECTED.age));
  await type(byLabel(form, 'Budget (EUR)'), '1250.50');
  await type(byLabel(form, 'Website'), EXPECTED.website);
  // A date field takes its parts by keyboard: month, day, year.
  await byLabel(form, 'Start date').click();
  await byLabel(form, 'Start date').press('Home');
  await page.keyboard.type('03142025');
  await type(byLabel(form, 'Passphrase'), EXPECTED.passphrase);
  const bio = byLabel(form, 'Short bio');
  await type(bio, 'Mathematician.');
  await bio.press('Enter');
  await page.keyboard.type('Writes notes on engines.');

  await form.getByText('Send me the monthly newsletter').click();
  // A radio group takes the arrow keys: click the first choice, then move to the next one.
  await form.getByText('Free', { exact: true }).click();
  await page.keyboard.press('ArrowDown');
  await expect(form.getByRole('radio', { name: 'Pro' })).toBeChecked();

  await byLabel(form, 'Country').selectOption('fr');
  await form.getByText('Billing', { exact: true }).click();
  // Space ticks the focused box: Tab from Billing past Product to Security.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(form.getByRole('checkbox', { name: 'Security' })).toBeFocused();
  await page.keyboard.press('Space');
  await byLabel(form, 'Languages').selectOption(['en', 'fr']);

  await type(byLabel(form, 'Other names'), 'Countess of Lovelace');
  await type(form.getByRole('textbox', { name: 'Other names, row 2' }), 'A. A. Lovelace');

  // Table rows are ticked through their labels ("Select <first cell>").
  await byLabel(form, 'Select Acme').check();
  await byLabel(form, 'Select Initech').check();

  await expect(form.getByRole('checkbox', { name: 'Send me the monthly newsletter' })).toBeChecked();
  await expect(form.getByRole('checkbox', { name: 'Select Globex' })).not.toBeChecked();
  await expect(byLabel(form, 'Start date')).toHaveValue(EXPECTED.start_date);
}

/** Runs `action` and waits for the POST it causes and the page it loads. */
async function submit(page: Page, action: () => Promise<void>, options: { noValidate?: boolean } = {}): Promise<Response> {
  if (options.noValidate) {
    // Sent as a browser without constraint validation would; the server has to catch the mistakes.
    await page.getByTestId('page-form').evaluate((form: HTMLFormElement) => {
      form.noValidate = true;
    });
  }
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.request().method() === 'POST' && new URL(candidate.url()).pathname === '/components/try'),
    action(),
  ]);
  await page.waitForLoadState('domcontentloaded');
  return response;
}

/** The JSON in the Code block the page shows after a submission. */
async function decodedJson(page: Page): Promise<unknown> {
  const code = page.locator('#t-decoded code');
  await expect(code).toBeVisible();
  return JSON.parse(await code.innerText());
}

/** The 422 page: a summary, the two messages beside their fields, and every other answer kept. */
async function expectRefusalKeepsAnswers(page: Page): Promise<void> {
  const summary = page.getByTestId('form-error');
  await expect(summary).toBeVisible();
  await expect(summary).toBeInViewport();
  await expect(summary).toHaveText('2 fields need your attention; your answers are kept below.');
  await expect(page.getByTestId('field-error')).toHaveCount(2);

  for (const [label, message] of [
    ['Email', /email address/],
    ['Age', /18/],
  ] as const) {
    const field = byLabel(page, label);
    await expect(field).toHaveAttribute('aria-invalid', 'true');
    await expect(field).toHaveAccessibleDescription(message);
    const describedBy = (await field.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId, `aria-describedby of ${label}: ${describedBy}`).toBeTruthy();
    const note = page.locator(`[id="${errorId}"]`);
    await expect(note).toHaveText(message);
    await expect(note).toHaveAttribute('data-testid', 'field-error');
    // Beside the field: the message follows it inside the same field block.
    expect(await field.evaluate((input, id) => input.parentElement?.contains(document.getElementById(id)) ?? false, errorId)).toBe(true);
  }

  const form = page.getByTestId('page-form');
  await expect(byLabel(form, 'Full name')).toHaveValue(EXPECTED.full_name);
  await expect(byLabel(form, 'Email')).toHaveValue('ada.example.com');
  await expect(byLabel(form, 'Age')).toHaveValue('17');
  await expect(byLabel(form, 'Budget (EUR)')).toHaveValue('1250.50');
  await expect(byLabel(form, 'Website')).toHaveValue(EXPECTED.website);
  await expect(byLabel(form, 'Start date')).toHaveValue(EXPECTED.start_date);
  // A password is deliberately not sent back in the page.
  await expect(byLabel(form, 'Passphrase')).toHaveValue('');
  await expect(byLabel(form, 'Short bio')).toHaveValue(EXPECTED.bio);
  await expect(form.getByRole('checkbox', { name: 'Send me the monthly newsletter' })).toBeChecked();
  await expect(form.getByRole('radio', { name: 'Pro' })).toBeChecked();
  await expect(byLabel(form, 'Country')).toHaveValue('fr');
  await expect(form.getByRole('checkbox', { name: 'Billing' })).toBeChecked();
  await expect(form.getByRole('checkbox', { name: 'Product' })).not.toBeChecked();
  await expect(form.getByRole('checkbox', { name: 'Security' })).toBeChecked();
  expect(await byLabel(form, 'Languages').evaluate((select: HTMLSelectElement) => [...select.selectedOptions].map((option) => option.value))).toEqual(
    EXPECTED.languages,
  );
  await expect(byLabel(form, 'Other names')).toHaveValue('Countess of Lovelace');
  await expect(form.getByRole('textbox', { name: 'Other names, row 2' })).toHaveValue('A. A. Lovelace');
  await expect(form.getByRole('checkbox', { name: 'Select Acme' })).toBeChecked();
  await expect(form.getByRole('checkbox', { name: 'Select Globex' })).not.toBeChecked();
  await expect(form.getByRole('checkbox', { name: 'Select Initech' })).toBeChecked();
}

function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return errors;
}

/** The field whose label is exactly `text`, with or without the "(required)" a required field's label adds. */
function byLabel(scope: Page | Locator, text: string): Locator {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return scope.getByLabel(new RegExp(`^${escaped}\\*?(\\s*\\(required\\))?$`));
}
