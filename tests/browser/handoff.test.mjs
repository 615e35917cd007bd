// handoff.test.mjs -- issue 26's hand-off notes, "Where HEAD has been" and
// deleted Space recovery in a real headless Chromium against a real
// `smriti serve`: a note written in the UI is read back by `smriti head`
// (on the database, and through the server with --remote); a past
// checkpoint is restored and handed off in one step; the reflog view lists
// every move and restores one; a deleted Space is recovered from the Spaces
// list.  Every page is guarded (browser.mjs), each new view and dialog
// passes axe and is shot light, dark and 420 px wide into
// tests/browser/screenshots/ (not committed).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok, run } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

const NOTE = 'do not drop the foreign keys';
let tmp;
let srv;
let browser;
let page;

before(async () => {
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'payments', '--description', 'Moving payments to the new schema']);
  for (const [title, decision, author] of [['Schema drafted', 'Keep the foreign keys', 'claude'],
    ['Tables copied', 'Copy in batches of 1000', 'codex'], ['Old tables dropped', 'Drop the old tables', 'codex']]) {
    ok(tmp.db, ['checkpoint', 'create', 'payments', '--title', title, '--decision', decision, '--author', author]);
  }
  ok(tmp.db, ['space', 'create', 'scratch-line']);
  ok(tmp.db, ['checkpoint', 'create', 'scratch-line', '--title', 'Scratch work', '--author', 'gemini']);
  srv = await startServer(tmp.db, { args: ['--quiet'] });
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
  return page;
}

async function done() {
  page.guard.check();
  await page.close();
}

// Light, dark and 420 px wide shots of what is on screen now.
async function shots(name) {
  await shot(page, `${name}-light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 420, height: 820 });
  await shot(page, `${name}-420`);
  await page.setViewportSize(size);
}

const head = (args = []) => ok(tmp.db, ['head', 'payments', '--json', ...args]);

describe('hand-off notes', () => {
  test('a note written in the UI is what `smriti head` shows, on the database and through the server', async () => {
    await open('#/s/payments');
    await page.locator('.vlist .row', { hasText: 'Old tables dropped' }).waitFor();
    await page.getByRole('button', { name: 'Hand to next agent' }).click();
    const dlg = page.locator('dialog');
    await dlg.locator('textarea[name=note]').waitFor();
    await dlg.locator('textarea[name=note]').fill(NOTE);
    await axe(page, 'Hand-off dialog with a note');
    await shots('handoff-note-dialog');
    await dlg.getByRole('button', { name: 'Hand off with note' }).click();
    await page.locator('.toast', { hasText: 'Handed off with your note' }).waitFor();
    // the CLI on the same database
    const h = head();
    assert.equal(h.title, 'Old tables dropped', 'HEAD did not move');
    assert.equal(h.handoff.note, NOTE);
    assert.equal(h.handoff.author, 'tester', 'the server\'s own default author (the UI names nobody)');
    assert.equal(h.handoff.on_head, true);
    assert.match(ok(tmp.db, ['head', 'payments']), /Hand-off note \(tester, [^)]+\):\n {4}do not drop the foreign keys/);
    // the CLI through the server
    const remote = run(tmp.db, ['--remote', srv.url, 'head', 'payments']);
    assert.equal(remote.code, 0, remote.stderr);
    assert.match(remote.stdout, /do not drop the foreign keys/);
    // the inspector shows it above HEAD
    const shown = page.locator('.detail .handoff-note');
    await shown.waitFor();
    assert.match(await shown.textContent(), /do not drop the foreign keys.*left on HEAD/s);
    await shots('handoff-note-inspector');
    await done();
  });

  test('restore a past checkpoint and hand it off in one step', async () => {
    await open('#/s/payments');
    await page.locator('.vlist .row', { hasText: 'Schema drafted' }).click();
    await page.getByRole('button', { name: 'Hand to next agent' }).click();
    const dlg = page.locator('dialog');
    // the last note is shown, and where it was left
    assert.match(await dlg.locator('.handoff-note').textContent(), /do not drop the foreign keys.*left on HEAD/s);
    await dlg.locator('textarea[name=note]').fill('Start again from the schema; keep the foreign keys');
    await shots('handoff-restore-dialog');
    await dlg.getByRole('button', { name: 'Restore and hand off' }).click();
    await page.locator('.toast', { hasText: 'Restored and handed off' }).waitFor();
    const h = head();
    assert.equal(h.title, 'Schema drafted');
    assert.ok(h.metadata.restored_from);
    assert.equal(h.handoff.note, 'Start again from the schema; keep the foreign keys');
    assert.equal(h.handoff.checkpoint, h.commit_hash);
    assert.equal(h.handoff.on_head, true);
    // the new HEAD is selected, with the note above it
    await page.locator('.detail .handoff-note', { hasText: 'Start again' }).waitFor();
    await done();
  });

  test('an empty note saves nothing', async () => {
    const before = head();
    await open('#/s/payments');
    await page.getByRole('button', { name: 'Hand to next agent' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Hand off with note' }).click();
    await page.locator('.toast.error', { hasText: 'nothing was saved' }).waitFor();
    assert.deepEqual(head(), before);
    await done();
  });
});

describe('Where HEAD has been', () => {
  test('lists every move with actor, time, old and new checkpoint; restores one', async () => {
    const reflog = ok(tmp.db, ['reflog', 'payments', '--json']);
    await open('#/s/payments');
    await page.getByRole('link', { name: 'Where HEAD has been' }).click();
    await page.waitForURL(/#\/s\/payments\/reflog$/);
    const rows = page.locator('.reflog-table tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), reflog.length);
    const top = await rows.first().textContent();
    assert.match(top, /@\{0\}.*Restored.*tester/s);
    assert.match(top, /HEAD now/);
    const third = rows.nth(2);
    assert.match(await third.textContent(), new RegExp(`${reflog[2].actor}.*${reflog[2].new.slice(0, 12)}`, 's'));
    await axe(page, 'Where HEAD has been');
    await shots('reflog');
    // a checkpoint link opens it in the history
    await third.locator('a.hash').last().click();
    await page.waitForURL(new RegExp(`/c/${reflog[2].new}$`));
    await page.goBack();
    await page.locator('.reflog-table tbody tr').first().waitFor();
    // restore the state after move @{2}, from the keyboard
    const btn = page.getByRole('button', { name: 'Restore @{2}' });
    await btn.focus();
    await page.keyboard.press('Enter');
    await page.locator('dialog').waitFor();
    await shots('reflog-restore-dialog');
    await page.locator('dialog').getByRole('button', { name: 'Restore' }).click();
    await page.locator('.toast', { hasText: 'Restored as a new checkpoint' }).waitFor();
    const h = head();
    assert.equal(h.metadata.restored_from, reflog[2].new);
    await page.locator('.reflog-table tbody tr').nth(reflog.length).waitFor();
    assert.equal(await page.locator('.reflog-table tbody tr').count(), reflog.length + 1);
    // the note left before stays readable, saying HEAD moved
    assert.equal(h.handoff.on_head, false);
    await done();
  });
});

describe('deleted Spaces', () => {
  test('a deleted Space is listed on the Spaces page and recovered with its history', async () => {
    const before = ok(tmp.db, ['log', 'scratch-line', '--json']);
    ok(tmp.db, ['space', 'delete', 'scratch-line', '--yes']);
    await open('');
    await page.locator('.space-row[data-name="payments"]').waitFor();
    assert.equal(await page.locator('.space-row[data-name="scratch-line"]').count(), 0);
    await page.locator('details.deleted summary').focus();
    await page.keyboard.press('Enter');
    const row = page.locator('.deleted-row[data-name="scratch-line"]');
    await row.waitFor();
    assert.match(await row.textContent(), new RegExp(before[0].commit_hash.slice(0, 12)));
    await axe(page, 'Recently deleted Spaces');
    await shots('deleted-spaces');
    await row.getByRole('button', { name: 'Recover scratch-line' }).click();
    const dlg = page.locator('dialog');
    assert.equal(await dlg.locator('input[name=name]').inputValue(), 'scratch-line');
    await axe(page, 'Recover dialog');
    await shots('deleted-recover-dialog');
    await dlg.getByRole('button', { name: 'Recover' }).click();
    await page.locator('.toast', { hasText: 'Recovered as “scratch-line”' }).waitFor();
    await page.locator('.space-row[data-name="scratch-line"]').waitFor();
    assert.deepEqual(ok(tmp.db, ['log', 'scratch-line', '--json']).map((c) => c.commit_hash),
      before.map((c) => c.commit_hash));
    await done();
  });
});
