// The Nu HTML checker every spec runs on the pages it opens (see `test` in helpers.ts) is real:
// it reports invalid markup, skips only Leptos's hydration markers, and sees every document.
import { expect, test } from './helpers';

test('the HTML checker reports invalid markup and lets only the hydration markers pass', async ({ htmlChecker }) => {
  const errors = await htmlChecker.check({
    url: 'inline',
    status: 200,
    html:
      '<!DOCTYPE html>\n<html lang="en"><head><title>x</title>' +
      '<link rel="modulepreload" href="/a.js" crossorigin="Yg1fPRveVw3Svt1Gu5rKtg"></head>\n' +
      '<body><p>Ada<!> wrote</p><p>an<!- odd comment -></p></body></html>',
  });
  const messages = errors.map((error) => error.message);
  expect(messages.some((message) => message.includes('crossorigin')), messages.join('\n')).toBe(true);
  expect(messages.filter((message) => message === 'Bogus comment.'), messages.join('\n')).toHaveLength(1);
});

test('every document a test opens goes to the checker, error pages too', async ({ page, visitedDocuments }) => {
  await page.goto('/');
  await page.goto('/no/such/page');
  const documents = (await Promise.all(visitedDocuments)).filter((document) => document !== null);
  expect(documents.map((document) => [new URL(document?.url ?? '').pathname, document?.status])).toEqual([
    ['/', 200],
    ['/no/such/page', 404],
  ]);
});
