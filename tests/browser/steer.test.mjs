// steer.test.mjs -- steering a Space from the history in a real headless
// Chromium against a real `smriti serve` on loopback: a restore previews
// what changes and can be undone (and neither writes over a HEAD another
// writer moved meanwhile); each history row says what its checkpoint
// changed; the inspector's Blame says who introduced each item, and where;
// Compare goes side by side, against the merge base, and against a Space
// picked by name.  Pages are guarded (browser.mjs) and each new
// dialog passes axe; screenshots, light, dark and 420 px wide, go to
// tests/browser/screenshots/ (not committed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let tmp;
let srv;
let browser;
let page;

before(async () => {
  tmp = tempDb();
  const db = tmp.db;
  ok(db, ['space', 'create', 'plan']);
  ok(db, ['checkpoint', 'create', 'plan', '--replace', '--title', 'Start', '--decision', 'Use Postgres',
    '--task', 'Write schema', '--question', 'Which host?', '--author', 'claude']);
  ok(db, ['checkpoint', 'create', 'plan', '--replace', '--title', 'Switch to SQLite', '--decision', 'Use SQLite',
    '--assumption', 'One writer', '--task', 'Write schema', '--author', 'codex']);
  ok(db, ['space', 'create', 'rows']);
  ok(db, ['checkpoint', 'create', 'rows', '--replace', '--title', 'Begin', '--decision', 'Ship weekly',
    '--assumption', 'Two people', '--task', 'Write tests', '--task', 'Set up CI']);
  ok(db, ['checkpoint', 'create', 'rows', '--title', 'Grow', '--decision', 'Use Postgres', '--decision', 'Review every PR',
    '--drop', 'assumption=Two people', '--done', 'Write tests']);
  ok(db, ['checkpoint', 'create', 'rows', '--title', 'Rename only']);
  ok(db, ['space', 'create', 'who']);
  ok(db, ['checkpoint', 'create', 'who', '--replace', '--title', 'Plan', '--decision', 'Use Kafka', '--task', 'Write ADR', '--author', 'ann']);
  const drafted = path.join(tmp.dir, 'drafted.json');
  writeFileSync(drafted, JSON.stringify({ title: 'Plan', decisions: ['Use Kafka', 'Drop Redis'], tasks: [{ text: 'Write ADR', status: 'open' }],
    metadata: { draft: { session_id: 's-42', turn_range: { first_seq: 3, last_seq: 9 } } } }));
  ok(db, ['checkpoint', 'create', 'who', '--from-json', drafted, '--author', 'bo']);
  ok(db, ['checkpoint', 'create', 'who', '--decision', 'Ship Friday', '--author', 'cy']);
  ok(db, ['space', 'create', 'cmp']);
  ok(db, ['checkpoint', 'create', 'cmp', '--replace', '--title', 'Base', '--decision', 'Shared', '--task', 'Pick a queue']);
  ok(db, ['fork', 'cmp', '--into', 'cmp-side']);
  ok(db, ['checkpoint', 'create', 'cmp-side', '--title', 'Side idea', '--decision', 'Side only']);
  ok(db, ['checkpoint', 'create', 'cmp', '--title', 'Main idea', '--decision', 'Main only', '--done', 'Pick a queue']);
  srv = await startServer(db, { args: ['--quiet'] });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  tmp?.cleanup();
});

async function open(hash) {
  page = await guardedPage(browser, { origin: srv.url });
  await page.goto(`${srv.url}/${hash}`);
  await page.waitForSelector('.vlist .row');
  return page;
}

async function done() {
  page.guard.check();
  await page.close();
}

const head = (space = 'plan') => ok(tmp.db, ['head', space, '--json']);
const rowTitles = () => page.locator('.vlist .row .row-title').allTextContents();

async function openRestore(title) {
  await page.locator('.vlist .row', { hasText: title }).last().click();
  await page.locator('.detail h2.ck-title', { hasText: title }).waitFor();
  await page.click('text=Restore…');
  return page.locator('dialog');
}

test('restore previews the change from HEAD; Undo brings the old HEAD back as a new checkpoint', async () => {
  await open('#/s/plan');
  const before = head();
  const dlg = await openRestore('Start');
  const preview = dlg.locator('.restore-preview');
  await preview.waitFor();
  assert.match(await preview.locator('[data-field=decisions] li.add').textContent(), /Use Postgres/);
  assert.match(await preview.locator('[data-field=decisions] li.del').textContent(), /Use SQLite/);
  assert.match(await preview.locator('[data-field=assumptions] li.del').textContent(), /One writer/);
  assert.match(await preview.locator('[data-field=title]').textContent(), /Switch to SQLite.*Start/s);
  await axe(page, 'Restore preview');
  await shot(page, 'restore-preview');
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, 'Restore preview, dark');
  await shot(page, 'restore-preview-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  // the keyboard: Tab reaches Restore, Enter presses it
  await dlg.locator('button', { hasText: /^Restore$/ }).focus();
  await page.keyboard.press('Enter');
  const undo = page.locator('#toasts button', { hasText: 'Undo restore' });
  await undo.waitFor();
  assert.deepEqual(head().decisions.map((d) => d.text ?? d), ['Use Postgres']);
  assert.equal(head().title, 'Start');
  assert.equal(head().parent_hash, before.commit_hash);
  await axe(page, 'Undo notice');
  await shot(page, 'restore-undo');
  await undo.focus();
  await page.keyboard.press('Enter');
  await page.locator('#toasts', { hasText: 'Undone' }).waitFor();
  const now = head();
  assert.equal(now.title, 'Switch to SQLite');
  assert.deepEqual(now.decisions, before.decisions);
  assert.deepEqual(now.assumptions, before.assumptions);
  assert.equal(now.metadata.restored_from, before.commit_hash);
  // the history shows both moves: the restore and its undo, each linked to what it brought back
  await page.waitForFunction(() => document.querySelectorAll('.vlist .row').length === 4);
  assert.deepEqual(await rowTitles(), ['Switch to SQLite', 'Start', 'Switch to SQLite', 'Start']);
  assert.equal(await page.locator('.vlist .row').nth(0).locator('.chip.restore').count(), 1);
  assert.equal(await page.locator('.vlist .row').nth(1).locator('.chip.restore').count(), 1);
  assert.match(await page.locator('.vlist .row').nth(0).textContent(), /HEAD/);
  const reflog = ok(tmp.db, ['reflog', 'plan', '--json']);
  assert.deepEqual(reflog.slice(0, 2).map((e) => e.action), ['restore', 'restore']);
  await done();
});

test('Undo is refused, and says so, when another writer moved HEAD after the restore', async () => {
  await open('#/s/plan');
  const dlg = await openRestore('Start');
  await dlg.locator('.restore-preview').waitFor();
  await dlg.locator('button', { hasText: /^Restore$/ }).click();
  const undo = page.locator('#toasts button', { hasText: 'Undo restore' });
  await undo.waitFor();
  ok(tmp.db, ['checkpoint', 'create', 'plan', '--replace', '--title', 'Agent moved on', '--decision', 'Use Postgres 16', '--author', 'agent']);
  page.guard.expect(409, '/api/ops/restore');
  await undo.click();
  const alert = page.locator('#toasts .toast.error');
  await alert.waitFor();
  assert.match(await alert.textContent(), /Not undone: HEAD of “plan” moved since the restore \(another writer\)/);
  assert.equal(head().title, 'Agent moved on');
  await done();
});

test('a restore previewed against a HEAD that moved before confirming is refused, nothing written', async () => {
  await open('#/s/plan');
  const before = head();
  const dlg = await openRestore('Switch to SQLite');
  await dlg.locator('.restore-preview').waitFor();
  const moved = ok(tmp.db, ['checkpoint', 'create', 'plan', '--replace', '--title', 'Meanwhile', '--decision', 'Keep going', '--author', 'agent', '--json']);
  assert.notEqual(moved.commit_hash, before.commit_hash);
  page.guard.expect(409, '/api/ops/restore');
  await dlg.locator('button', { hasText: /^Restore$/ }).click();
  const alert = page.locator('#toasts .toast.error');
  await alert.waitFor();
  assert.match(await alert.textContent(), /moved while the preview was open/);
  assert.equal(head().commit_hash, moved.commit_hash);
  await done();
});

test('the restore preview and the Undo notice fit a 420 px window', async () => {
  page = await guardedPage(browser, { origin: srv.url });
  await page.setViewportSize({ width: 420, height: 820 });
  await page.goto(`${srv.url}/#/s/plan`);
  await page.waitForSelector('.vlist .row');
  const dlg = await openRestore('Start');
  await dlg.locator('.restore-preview').waitFor();
  await axe(page, 'Restore preview, narrow');
  await shot(page, 'restore-preview-narrow');
  const overflow = await page.evaluate(() => document.querySelector('dialog').scrollWidth - document.querySelector('dialog').clientWidth);
  assert.ok(overflow <= 1, `the dialog does not scroll sideways (${overflow}px)`);
  await dlg.locator('button', { hasText: /^Restore$/ }).click();
  await page.locator('#toasts button', { hasText: 'Undo restore' }).waitFor();
  await shot(page, 'restore-undo-narrow');
  await done();
});

test('each history row says what its checkpoint changed against its parent', async () => {
  await open('#/s/rows');
  const row = (title) => page.locator('.vlist .row', { hasText: title });
  await row('Grow').locator('.row-changes').waitFor();
  assert.equal(await row('Grow').locator('.row-changes').textContent(), '+2 decisions, −1 assumption, 1 task done');
  assert.equal(await row('Begin').locator('.row-changes').textContent(), '+1 decision, +1 assumption, +2 tasks');
  assert.equal(await row('Rename only').locator('.row-changes').count(), 0, 'a title-only change names no items');
  await axe(page, 'History with changes');
  await shot(page, 'history-changes');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'history-changes-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 820 });
  await shot(page, 'history-changes-narrow');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no sideways scrolling in a narrow window (${overflow}px)`);
  await done();
});

test('Blame in the inspector: who introduced each item, in which checkpoint or session turns', async () => {
  await open('#/s/who');
  await page.locator('.detail h2.ck-title', { hasText: 'Plan' }).waitFor();
  const blameBtn = page.locator('.detail button', { hasText: /^Blame$/ });
  await blameBtn.focus();
  await page.keyboard.press('Enter');
  await page.locator('.detail article.blamed').waitFor();
  assert.equal(await blameBtn.getAttribute('aria-pressed'), 'true');
  const note = (field, i) => page.locator(`.detail #item-${field}-${i} .blame`);
  assert.match(await note('decisions', 0).textContent(), /^by ann in “Plan”/);
  assert.match(await note('decisions', 1).textContent(), /^by bo in “Plan”.*drafted from turns 3–9/);
  assert.equal(await note('decisions', 2).textContent(), 'new in this checkpoint');
  assert.match(await note('tasks', 0).textContent(), /^by ann/);
  assert.match(await page.locator('.detail .blame-title').first().textContent(), /^Title by ann/);
  // the link opens the checkpoint that introduced the item; the turns link opens the session
  assert.equal(await note('decisions', 1).locator('a', { hasText: 'turns 3–9' }).getAttribute('href'), '#/s/who/chat/s-42');
  await axe(page, 'Inspector with blame');
  await shot(page, 'inspector-blame');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'inspector-blame-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 820 });
  await note('decisions', 1).scrollIntoViewIfNeeded();
  await shot(page, 'inspector-blame-narrow');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no sideways scrolling in a narrow window (${overflow}px)`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await note('decisions', 0).locator('a').click();
  await page.locator('.detail article.blamed h2.ck-title', { hasText: 'Plan' }).waitFor();
  assert.equal(await page.locator('.vlist .row.selected .row-author').textContent(), 'ann');
  await blameBtn.click();
  await page.waitForFunction(() => !document.querySelector('.detail .blame'));
  await done();
});

test('Compare: the other side picked by Space name, the merge base, side by side', async () => {
  await open('#/s/cmp');
  await page.locator('.detail h2.ck-title', { hasText: 'Main idea' }).waitFor();
  await page.click('text=Compare with parent');
  await page.locator('.diff-view').waitFor();
  const [base, main] = page.url().match(/compare\/([0-9a-f]{64})\/([0-9a-f]{64})$/).slice(1);
  // the other side by a Space's name (its HEAD), from the keyboard
  await page.locator('#other-side').focus();
  await page.keyboard.type('cmp-side');
  await page.keyboard.press('Enter');
  const side = ok(tmp.db, ['head', 'cmp-side', '--json']).commit_hash;
  await page.waitForURL(new RegExp(`/compare/${side}/${main}$`));
  await page.locator('.compare-head', { hasText: 'Side idea' }).waitFor();
  const diff = page.locator('.diff-view [data-field=decisions]');
  assert.match(await diff.locator('li.add').textContent(), /Main only/);
  assert.match(await diff.locator('li.del').textContent(), /Side only/);
  // against the merge base: where the two lines parted
  await page.click('text=Compare with merge base');
  await page.waitForURL(new RegExp(`/compare/${base}/${main}$`));
  await page.locator('.compare-head', { hasText: 'Base' }).waitFor();
  // side by side: the left holds the base's items, the right the checkpoint's, marked
  await page.locator('button', { hasText: 'Side by side' }).click();
  const sbs = page.locator('.sbs-view [data-field=decisions]');
  await sbs.waitFor();
  const cols = sbs.locator('ul.sbs-col');
  assert.deepEqual(await cols.nth(0).locator('li').allTextContents(), [' Shared']);
  assert.match(await cols.nth(1).locator('li.add').textContent(), /Main only/);
  assert.match(await page.locator('.sbs-view [data-field=tasks] ul.sbs-col').nth(1).locator('li.chg').textContent(), /Pick a queue \(done\)/);
  assert.equal(await page.locator('button', { hasText: 'Side by side' }).getAttribute('aria-pressed'), 'true');
  await axe(page, 'Compare side by side');
  await shot(page, 'compare-side-by-side');
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, 'Compare side by side, dark');
  await shot(page, 'compare-side-by-side-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 820 });
  await sbs.scrollIntoViewIfNeeded();
  await shot(page, 'compare-side-by-side-narrow');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no sideways scrolling in a narrow window (${overflow}px)`);
  // a name that is neither a Space nor a checkpoint says so
  page.guard.expect(404, '/api/ops/show');
  await page.fill('#other-side', 'no-such-space');
  await page.locator('form.other-side button').click();
  assert.match(await page.locator('#toasts .toast.error').textContent(), /There is no Space or checkpoint “no-such-space”/);
  await done();
});
