// draft-review.test.mjs -- saving a Draft with AI from the editor, in a real
// headless Chromium against `smriti serve` and the fake provider (issue 24,
// items 3 and 5): on a rich HEAD the review shows HEAD's items kept and
// each draft item with what saving does; leaving a draft item and dropping
// a HEAD item are the person's choices; the save keeps every other HEAD
// item, adds the new ones once and marks the done task done.  Replacing
// HEAD's state is an explicit choice that writes exactly the draft.  A
// stale HEAD is refused and can be reloaded.  The editor refuses a
// duplicate item with the server's words and saves nothing.  Screenshots
// (light, dark, 420 px) go to tests/browser/screenshots/ (not committed).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer, expectStatus } from '../js/http-helpers.mjs';
import { providerEnv, TRANSCRIPT, RICH, LATEST, ingestSession, draft } from '../js/draft-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let fake;
let tmp;
let srv;
let browser;
let page;
let sessionId;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'rich', '--description', 'A long line of work']);
  srv = await startServer(tmp.db, { args: ['--quiet'], env: providerEnv(fake) });
  sessionId = (await ingestSession(srv, 'rich', TRANSCRIPT)).id;
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

async function open(hash) {
  page = await guardedPage(browser, { origin: srv.url });
  await page.goto(`${srv.url}/${hash}`);
  return page;
}

async function done() {
  page.guard.check();
  await page.close();
}

// A fresh rich HEAD and a finished draft of LATEST; returns { head, job }.
async function richAndDraft() {
  const head = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: { repo_id: 'rich', ...RICH, author: 'claude' } });
  fake.script([{ json: LATEST }]);
  const job = await draft(srv, { session_id: sessionId });
  assert.equal(job.status, 'done', job.error);
  return { head, job };
}

const texts = (list) => list.map((i) => i.text ?? i.name);
const list = (f) => page.locator(`.review-list[data-field=${f}]`);

async function openReview(job) {
  await open(`#/s/rich/new/${job.job_id}`);
  await page.locator('.editor-status', { hasText: 'Draft ready' }).waitFor({ timeout: 15000 });
  await list('decisions').waitFor();
  await page.locator('.plan-said').waitFor();
}

describe('saving a draft from the editor', () => {
  test('a rich HEAD keeps every item; the person leaves a draft item and drops a HEAD item', async () => {
    const { job } = await richAndDraft();
    await openReview(job);
    assert.equal(await page.inputValue('label.block >> input[aria-label=Title]'), LATEST.title);
    // HEAD's items are shown kept, every one of them
    assert.equal(await list('decisions').locator('.review-head li').count(), 35);
    assert.equal(await list('tasks').locator('.review-head li').count(), 32);
    assert.equal(await list('entities').locator('.review-head li').count(), 3);
    assert.equal(await list('artifacts').locator('.review-head li').count(), 1);
    assert.match(await list('decisions').locator('h3', { hasText: 'In HEAD' }).textContent(), /35 of 35 kept/);
    // each draft item says what saving does with it
    const status = async (f, text) => list(f).locator('.review-draft li', { hasText: text }).first().getAttribute('data-status');
    assert.equal(await status('decisions', 'Decision 7'), 'in_head');
    assert.equal(await status('decisions', 'Fly on Monday'), 'new');
    assert.equal(await status('tasks', 'Task 3'), 'done');
    assert.equal(await status('entities', 'Priya'), 'in_head');
    assert.equal(await list('decisions').locator('.review-draft li[data-status=repeated]').count(), 1);
    assert.equal(await list('decisions').locator('.review-draft li', { hasText: 'Decision 7' }).locator('input').count(), 0,
      'an item HEAD has cannot be added again');
    assert.match(await page.locator('.plan-said').textContent(), /\+2 decisions, \+1 task, 1 task done, \+1 entity/);
    assert.equal(await page.locator('.against [data-field=decisions] li.del').count(), 0, 'nothing of HEAD is dropped');
    assert.equal(await page.locator('input[type=radio][value=add]').isChecked(), true, 'adding to HEAD is the default');
    await axe(page, 'Draft review');
    await shot(page, 'draft-review');
    const scrollTo = (sel) => page.locator(sel).first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await scrollTo('.review-list[data-field=decisions]');
    await shot(page, 'draft-review-lists');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'Draft review, dark');
    await shot(page, 'draft-review-lists-dark');
    await scrollTo('.editor-status');
    await shot(page, 'draft-review-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 420, height: 900 });
    await axe(page, 'Draft review, narrow');
    await shot(page, 'draft-review-narrow');
    await scrollTo('.review-list[data-field=tasks]');
    await shot(page, 'draft-review-narrow-lists');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no sideways scrolling at 420 px (${overflow}px)`);
    await page.setViewportSize({ width: 1280, height: 800 });
    // the person's choices: leave one draft item, drop one HEAD item
    await page.getByRole('checkbox', { name: 'Take decision: Fly on Monday', exact: true }).uncheck();
    await page.getByRole('button', { name: 'Drop decision: Decision 1', exact: true }).click();
    await list('decisions').locator('.review-head li.dropped', { hasText: 'Decision 1' }).waitFor();
    await page.locator('.plan-said', { hasText: '+1 decision, -1 decision' }).waitFor();
    await page.locator('.against [data-field=decisions] li.del', { hasText: 'Decision 1' }).waitFor();
    await page.locator('label.block >> input[aria-label=Title]').focus();
    await page.keyboard.press('Control+s');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    const head = await expectStatus(srv, 'GET', '/repos/rich/head', 200);
    assert.deepEqual(texts(head.decisions), [...texts(RICH.decisions).slice(1), 'Book the Alfama venue']);
    assert.deepEqual(texts(head.tasks), [...texts(RICH.tasks), 'Priya books the flights']);
    assert.equal(head.tasks.find((t) => t.text === 'Task 3').status, 'done');
    assert.equal(head.tasks.find((t) => t.text === 'Task 4').status, 'done', "HEAD's done task stays done");
    assert.deepEqual(texts(head.entities), ['Lisbon', 'Priya', 'Alfama', 'Alfama venue']);
    assert.deepEqual(head.artifacts, RICH.artifacts);
    assert.deepEqual(head.assumptions, RICH.assumptions);
    assert.deepEqual(head.open_questions, RICH.open_questions);
    assert.equal(head.title, LATEST.title);
    assert.equal(head.metadata.draft.job_id, job.job_id);
    await done();
  });

  test("replacing HEAD's state is an explicit choice and writes exactly the draft", async () => {
    const { job } = await richAndDraft();
    await openReview(job);
    await page.getByRole('radio', { name: /Replace HEAD's state with the draft/ }).check();
    await list('decisions').locator('h3', { hasText: 'all dropped' }).waitFor();
    assert.equal(await list('decisions').locator('.review-head li.dropped').count(), 35);
    await page.locator('.against [data-field=decisions] li.del').first().waitFor();
    await axe(page, 'Draft review, replace');
    await shot(page, 'draft-review-replace');
    await page.click('button:has-text("Save checkpoint")');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    const head = await expectStatus(srv, 'GET', '/repos/rich/head', 200);
    assert.deepEqual(texts(head.decisions), ['Book the Alfama venue', 'Decision 7', 'Fly on Monday']);
    assert.deepEqual(head.tasks, LATEST.tasks);
    assert.deepEqual(head.entities, LATEST.entities);
    assert.deepEqual(head.artifacts, []);
    await done();
  });

  test("a compare of HEAD that answers after the draft's plan does not take its place", async () => {
    const { job } = await richAndDraft();
    page = await guardedPage(browser, { origin: srv.url });
    // Hold the editor's first compare until the plan has been drawn, the
    // order a loaded server can answer in.
    let planDrawn;
    const drawn = new Promise((r) => { planDrawn = r; });
    await page.route('**/api/ops/diff.proposal', async (route) => {
      await drawn;
      await route.continue();
    });
    await page.goto(`${srv.url}/#/s/rich/new/${job.job_id}`);
    await page.locator('.plan-said').waitFor();
    planDrawn();
    await page.waitForResponse('**/api/ops/diff.proposal');
    await page.waitForTimeout(200);   // the late answer has had its chance to draw
    assert.equal(await page.locator('.plan-said').count(), 1, "the plan stays in the pane");
    await page.unroute('**/api/ops/diff.proposal');
    await done();
  });

  test('a stale HEAD is refused, nothing written; reloading reviews against the new HEAD', async () => {
    const { job } = await richAndDraft();
    await openReview(job);
    ok(tmp.db, ['commit', 'rich', '-m', 'Written meanwhile', '--decision', 'Meanwhile decided', '--author', 'codex']);
    const moved = await expectStatus(srv, 'GET', '/repos/rich/head', 200);
    page.guard.expect(409, '/save');
    await page.click('button:has-text("Save checkpoint")');
    const banner = page.locator('.banner.warn', { hasText: 'HEAD moved' });
    await banner.waitFor();
    assert.equal((await expectStatus(srv, 'GET', '/repos/rich/head', 200)).commit_hash, moved.commit_hash);
    await banner.getByRole('button', { name: /Reload HEAD/ }).click();
    await page.locator('.editor-status', { hasText: 'Written meanwhile' }).waitFor();
    await list('decisions').locator('.review-head li', { hasText: 'Meanwhile decided' }).waitFor();
    await page.click('button:has-text("Save checkpoint")');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    const head = await expectStatus(srv, 'GET', '/repos/rich/head', 200);
    assert.equal(head.parent_hash, moved.commit_hash);
    assert.ok(texts(head.decisions).includes('Meanwhile decided'));
    assert.equal(head.decisions.length, 38);
    await done();
  });

  test('the editor refuses a duplicate item with the server\'s words and saves nothing', async () => {
    const was = await expectStatus(srv, 'GET', '/repos/rich/head', 200);
    await open('#/s/rich/new');
    const decisions = page.locator('fieldset[data-field=decisions]');
    await decisions.locator('li').first().waitFor();
    await decisions.locator('button', { hasText: 'Add decision' }).click();
    await decisions.locator('li').last().locator('input').fill(was.decisions[1].text);
    const msg = `decision '${was.decisions[1].text}' is already there (a list holds each item once)`;
    await page.locator('.against .refusal', { hasText: msg }).waitFor();   // said before saving
    page.guard.expect(422, '/chat/commit');
    await page.click('button:has-text("Save checkpoint")');
    const banner = page.locator('.banner.error', { hasText: 'is already there' });
    await banner.waitFor();
    assert.equal(await banner.textContent(), msg, 'the same words as every other surface');
    assert.ok(await banner.isVisible() && await banner.evaluate((el) => el.getBoundingClientRect().top >= 0), 'the refusal is in view');
    await shot(page, 'editor-duplicate');
    assert.equal((await expectStatus(srv, 'GET', '/repos/rich/head', 200)).commit_hash, was.commit_hash, 'nothing saved');
    await done();
  });
});
