// Named people (issue 27), with JavaScript on and off: an ask for two assignees who must both
// approve; each opens their own link, sees whom it is for, and answers; the run page lists who
// answered. A Decline without the reason the ask requires is shown again with the box named,
// then recorded with it.
import type { APIRequestContext } from '@playwright/test';
import path from 'node:path';

import { artifacts, expect, expectNoSeriousA11yViolations, openAsAdmin, test, waitForHydration } from './helpers';

const auth = { Authorization: 'Bearer e2e-token-0123456789abcdef' };

type Created = { id: string; link: string | null; links: { assignee: string; link: string }[] };
type Ask = { status: string; response: unknown; answers: { answered_by: string | null; outcome: string; reason?: string }[] };

async function ask(request: APIRequestContext, body: unknown): Promise<Created> {
  const response = await request.post('/api/asks', { headers: auth, data: body });
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as Created;
}

async function read(request: APIRequestContext, id: string): Promise<Ask> {
  return (await (await request.get(`/api/asks/${id}`, { headers: auth })).json()) as Ask;
}

const schema = {
  type: 'object',
  properties: { note: { type: 'string', title: 'Note for the finance team' } },
};

for (const javaScriptEnabled of [true, false]) {
  const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';

  test.describe(mode, () => {
    test.use({ javaScriptEnabled });

    test(`two people answer from their own links and the run page says who (${mode})`, async ({ browser, page, request }) => {
      const created = await ask(request, {
        prompt: 'Approve the Q3 marketing budget of {{ total }} EUR?',
        data: { total: 12400, lines: [{ item: 'Trade fair stand', cost: 8200 }, { item: 'Ads', cost: 4200 }] },
        schema,
        assignees: ['ana@example.com', 'bo@example.com'],
        approvals: { required: 2 },
      });
      expect(created.link).toBeNull();
      expect(created.links.map((link) => link.assignee)).toEqual(['ana@example.com', 'bo@example.com']);

      // Each person in a browser of their own.
      for (const [index, person] of created.links.entries()) {
        const context = await browser.newContext({ javaScriptEnabled });
        const own = await context.newPage();
        await own.goto(person.link);
        if (javaScriptEnabled) await waitForHydration(own);
        await expect(own.getByTestId('page-for')).toContainText(`For ${person.assignee}.`);
        await expect(own.getByTestId('page-for')).toContainText(`${index} have so far`);
        if (index === 0 && javaScriptEnabled) {
          await expectNoSeriousA11yViolations(own);
          await own.screenshot({ path: path.join(artifacts, 'people-page-for-ana.png'), fullPage: true });
        }
        await own.getByLabel('Note for the finance team').fill(`ok from ${person.assignee}`);
        await own.locator('button[name="_action"][value="submit"]').click();
        await expect(own.getByTestId('receipt')).toBeVisible();
        if (index === 0) {
          await expect(own.getByTestId('receipt')).toContainText('Not decided yet: 1 of the 2 approvals');
          expect((await read(request, created.id)).status).toBe('waiting');
        }
        await context.close();
      }

      await expect.poll(async () => (await read(request, created.id)).status, { timeout: 20_000 }).toBe('submitted');
      const answered = await read(request, created.id);
      expect(answered.answers.map((answer) => answer.answered_by)).toEqual(['ana@example.com', 'bo@example.com']);
      expect(answered.response).toEqual({ note: 'ok from bo@example.com' });

      // Ana's link now shows the decision and who made it.
      await page.goto(created.links[0].link);
      await expect(page.getByTestId('receipt')).toContainText('approved by ana@example.com, bo@example.com');

      await openAsAdmin(page, `/runs/${created.id}`);
      const answers = page.getByTestId('page-answers');
      await expect(answers.getByTestId('page-answer')).toHaveCount(2);
      await expect(answers).toContainText('ana@example.com');
      await expect(answers).toContainText('bo@example.com');
      await expect(page.getByTestId('page-approvals')).toHaveText('2 of 2 approvals needed');
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(page);
        await page.screenshot({ path: path.join(artifacts, 'people-run-page.png'), fullPage: true });
      }
    });

    test(`a decline needs the reason the ask asks for, then ends it (${mode})`, async ({ page, request }) => {
      const created = await ask(request, {
        prompt: 'Ship release 1.4 today?',
        schema,
        assignees: ['ana@example.com', 'bo@example.com'],
        approvals: { required: 2 },
        decline: { reason: 'required' },
      });
      await page.goto(created.links[1].link);
      if (javaScriptEnabled) await waitForHydration(page);
      const decline = page.getByTestId('decline');
      await decline.locator('summary').click();
      await decline.getByTestId('decline-button').click();
      await expect(page.getByText('Say why you decline: this request needs a reason.')).toBeVisible();
      expect((await read(request, created.id)).status).toBe('waiting');
      if (javaScriptEnabled) {
        await expectNoSeriousA11yViolations(page);
        await page.screenshot({ path: path.join(artifacts, 'people-decline-needs-a-reason.png'), fullPage: true });
      }

      await page.getByLabel('Why you decline (required)').fill('The changelog is missing');
      await page.getByTestId('decline-button').click();
      await expect(page.getByTestId('receipt')).toContainText('declined by bo@example.com');
      await expect(page.getByTestId('receipt')).toContainText('The changelog is missing');
      await expect.poll(async () => (await read(request, created.id)).status, { timeout: 20_000 }).toBe('declined');
      const declined = await read(request, created.id);
      expect(declined.answers).toEqual([
        expect.objectContaining({ answered_by: 'bo@example.com', outcome: 'declined', reason: 'The changelog is missing' }),
      ]);
    });
  });
}
