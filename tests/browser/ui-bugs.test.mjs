// ui-bugs.test.mjs -- the bugs issue 26 found in the web UI, each a test
// that failed before its fix, in a real headless Chromium against a real
// `smriti serve` on loopback: a fork opening on another Space's checkpoint;
// a merge checkpoint's second parent; chat opening and staying at the newest
// turn; a reader on the editor's URL; signing out on a Space the next user
// cannot read; Esc, the remembered provider and Retry in chat; the narrow
// layout; and the words of the Spaces list.  Every page is guarded
// (browser.mjs); screenshots go to tests/browser/screenshots/ (not committed).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { providerEnv } from '../js/draft-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let fake;
let tmp;
let srv;
let longSession;
let browser;
let page;

// A long session whose turns vary in length, some much taller than the
// placeholder height the browser assumes before it lays them out.
function longTranscript(turns) {
  const out = [];
  for (let i = 1; i <= turns; i++) {
    const lines = i % 3 === 0 ? 40 : i % 2 ? 2 : 12;
    const body = Array.from({ length: lines }, (_, j) => `Line ${j + 1} of turn ${i}: the payments migration keeps its foreign keys.`).join('\n\n');
    out.push(`${i % 2 ? 'User' : 'Assistant'}: ${body}`);
  }
  return out.join('\n\n');
}

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  tmp = tempDb();
  const db = tmp.db;
  ok(db, ['space', 'create', 'payments']);
  for (let i = 1; i <= 3; i++) {
    ok(db, ['checkpoint', 'create', 'payments', '--replace', '--title', `Step ${i}`, '--decision', `Decision ${i}`, '--author', 'codex']);
  }
  // a merge: a fork's work merged back into the Space it came from
  ok(db, ['space', 'create', 'plan']);
  ok(db, ['checkpoint', 'create', 'plan', '--title', 'Base', '--decision', 'Ship in May']);
  ok(db, ['fork', 'plan', '--into', 'plan-side']);
  ok(db, ['checkpoint', 'create', 'plan-side', '--title', 'Side work', '--decision', 'Add a beta']);
  ok(db, ['checkpoint', 'create', 'plan', '--title', 'Main work', '--task', 'Write the notes']);
  ok(db, ['merge', 'plan', 'plan-side', '--ours', '--author', 'person']);
  const file = path.join(path.dirname(db), 'long.txt');
  writeFileSync(file, longTranscript(90));
  longSession = ok(db, ['ingest', file, '--space', 'payments', '--format', 'text', '--title', 'Long talk', '--json']).session.id;
  srv = await startServer(db, { args: ['--quiet'], env: providerEnv(fake, { SMRITI_PROVIDER_TIMEOUT_MS: '3000' }) });
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

const inspectorTitle = () => page.locator('.detail h2.ck-title').textContent();

describe('history', () => {
  test('a forked Space opens on its own HEAD, not on the Space it came from', async () => {
    await open('#/s/payments');
    await page.locator('.vlist .row', { hasText: 'Step 2' }).click();
    await page.locator('.detail h2.ck-title', { hasText: 'Step 2' }).waitFor();
    await page.click('text=Fork…');
    await page.fill('dialog input[name=into]', 'payments-no-fk-drop');
    await page.click('dialog >> button:has-text("Fork")');
    await page.waitForURL(/#\/s\/payments-no-fk-drop$/);
    await page.locator('.vlist .row', { hasText: 'Step 3' }).waitFor();
    await page.locator('.detail h2.ck-title').waitFor();
    assert.equal(await inspectorTitle(), 'Step 2', 'the inspector shows the new Space\'s HEAD');
    assert.equal(await page.locator('.detail button', { hasText: 'Restore…' }).count(), 0, 'HEAD offers no restore');
    await shot(page, 'bug-fork-opens-own-head');
    // and on a fresh load
    await page.guard.reload();
    await page.locator('.vlist .row', { hasText: 'Step 3' }).waitFor();
    await page.locator('.detail h2.ck-title').waitFor();
    assert.equal(await inspectorTitle(), 'Step 2');
    assert.equal(await page.locator('.detail button', { hasText: 'Restore…' }).count(), 0);
    await done();
  });

  test('a merge checkpoint shows both its parents as links', async () => {
    await open('#/s/plan');
    await page.locator('.vlist .row').first().waitFor();
    await page.locator('.detail h2.ck-title').waitFor();
    const c = await page.evaluate(async () => {
      const g = await (await fetch('/v4/repos/plan/graph')).json();
      return g.nodes.find((n) => n.merge_parent);
    });
    assert.ok(c, 'the fixture has a merge checkpoint');
    await page.goto(`${srv.url}/#/s/plan/c/${c.hash}`);
    const meta = page.locator('.detail .ck-meta');
    await meta.waitFor();
    const hrefs = await meta.locator('a.hash').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(hrefs, [`#/s/plan/c/${c.parent}`, `#/s/plan/c/${c.merge_parent}`]);
    assert.match(await meta.textContent(), /parents/);
    await axe(page, 'a merge checkpoint');
    await shot(page, 'bug-merge-parents');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'a merge checkpoint, dark');
    await shot(page, 'bug-merge-parents-dark');
    await meta.locator('a.hash').nth(1).click();
    await page.locator('.detail h2.ck-title', { hasText: 'Side work' }).waitFor();
    await done();
  });
});

// Waits until the browser has laid out what it has (two animation frames).
const settled = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

// Where an element sits in the turn list: 'in view', 'above' or 'below'.
function placeInTurns(locator) {
  return locator.evaluate((el) => {
    const box = el.closest('.turns').getBoundingClientRect();
    const r = el.getBoundingClientRect();
    if (r.bottom > box.bottom + 2) return 'below';
    if (r.bottom < box.top) return 'above';
    return 'in view';
  });
}

describe('chat', () => {
  test('a long session opens at its newest turn, and a new reply is in sight', async () => {
    await open(`#/s/payments/chat/${longSession}`);
    const last = page.locator('.turns .turn').last();
    await last.locator('text=Line 2 of turn 90').waitFor();
    await settled();
    assert.equal(await placeInTurns(last), 'in view', 'the newest turn shows on opening');
    await shot(page, 'bug-chat-opens-at-newest');
    const reply = Array.from({ length: 30 }, (_, i) => `Paragraph ${i + 1} of the answer.`).join('\n\n') + '\n\nThe end of the answer.';
    fake.script([{ reply, provider: 'openai' }]);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await page.fill('textarea[aria-label=Message]', 'Summarise, at length');
    await page.keyboard.press('Enter');
    const answer = page.locator('.turn.assistant:not(.streaming)', { hasText: 'The end of the answer.' });
    await answer.waitFor();
    await settled();
    assert.equal(await placeInTurns(answer), 'in view', 'the new reply shows once it has come');
    await done();
  });

  test('Esc stops a streaming reply', async () => {
    await open(`#/s/payments/chat/${longSession}`);
    await page.locator('.turns .turn').last().waitFor();
    fake.script([{ reply: 'too late', delay_ms: 4000, provider: 'openai' }]);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await page.fill('textarea[aria-label=Message]', 'Take your time');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('.composer button.danger')?.disabled);
    await page.keyboard.press('Escape');
    await page.locator('.turn.assistant .badge.status-stopped').last().waitFor();
    await done();
  });

  test('the provider picked is kept across a reload', async () => {
    await open(`#/s/payments/chat/${longSession}`);
    await page.locator('.turns .turn').last().waitFor();
    await page.selectOption('select[aria-label=Provider]', 'anthropic');
    await page.guard.reload();
    await page.locator('.turns .turn').last().waitFor();
    assert.equal(await page.locator('select[aria-label=Provider]').inputValue(), 'anthropic');
    assert.match(await page.locator('input[aria-label=Model]').inputValue(), /claude|fake/);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await done();
  });

  test('a reply that fails mid-stream offers Retry; a failed turn keeps its Retry after another message', async () => {
    await open('#/s/plan/chat');
    await page.click('text=New session');
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    page.guard.expect(502, '/v4/chat/send');
    page.guard.expect(502, '/v4/generations/');
    fake.script([{ reply: 'Half of an answer that will break off here', stream_error: true, fail_after: 2, provider: 'openai' }]);
    await page.fill('textarea[aria-label=Message]', 'First question');
    await page.keyboard.press('Enter');
    const failed = page.locator('.turn.assistant', { has: page.locator('.badge.status-error') }).last();
    await failed.waitFor();
    await shot(page, 'bug-chat-failed-reply');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'bug-chat-failed-reply-dark');
    fake.script([{ reply: 'A whole answer.', provider: 'openai' }]);
    await failed.getByRole('button', { name: 'Retry' }).click();
    await page.locator('.turn.assistant:not(.streaming)', { hasText: 'A whole answer.' }).waitFor();
    // Retry answers the same question again beside the failed reply, which is kept (issue 26's message actions)
    assert.equal(await page.locator('.turn.user', { hasText: 'First question' }).count(), 1, 'the question is asked once');
    await page.locator('.turn.assistant', { hasText: 'A whole answer.' }).locator('.version-n', { hasText: '2 / 2' }).waitFor();

    // a question that fails outright, then another message: its Retry stays
    fake.script([{ status: 500, message: 'upstream exploded', provider: 'openai' },
      { status: 500, message: 'upstream exploded', provider: 'openai' }]);
    await page.fill('textarea[aria-label=Message]', 'Will this fail?');
    await page.keyboard.press('Enter');
    const err = page.locator('.turn.user', { hasText: 'Will this fail?' }).locator('.turn-error');
    await err.waitFor();
    fake.script([{ reply: 'Something else answered.', provider: 'openai' }]);
    await page.fill('textarea[aria-label=Message]', 'Something else');
    await page.keyboard.press('Enter');
    await page.locator('.turn.assistant:not(.streaming)', { hasText: 'Something else answered.' }).waitFor();
    await err.getByRole('button', { name: 'Retry' }).waitFor();
    fake.script([{ reply: 'Now it works.', provider: 'openai' }]);
    await err.getByRole('button', { name: 'Retry' }).click();
    await page.locator('.turn.assistant:not(.streaming)', { hasText: 'Now it works.' }).waitFor();
    assert.equal(await err.getByRole('button', { name: 'Retry' }).count(), 0, 'a question asked again offers no more Retry');
    await axe(page, 'chat with a failed reply');
    await shot(page, 'bug-chat-retry');
    await done();
  });
});

describe('narrow window', () => {
  test('at 420 px each stacked pane is as tall as it needs, and the page scrolls', async () => {
    await open(`#/s/payments/chat/${longSession}`);
    await page.setViewportSize({ width: 420, height: 800 });
    await page.locator('.turns .turn').last().waitFor();
    await settled();
    const turns = await page.locator('.turns').evaluate((t) => t.clientHeight);
    assert.ok(turns >= 400, `the turns get most of the window, not a slot (${turns} px)`);
    await shot(page, 'bug-narrow-chat');
    await page.locator('.turns .turn').last().scrollIntoViewIfNeeded();
    await shot(page, 'bug-narrow-chat-scrolled');
    await page.goto(`${srv.url}/#/s/payments`);
    await page.locator('.detail h2.ck-title').waitFor();
    await settled();
    const d = await page.locator('.detail').evaluate((el) => ({ client: el.clientHeight, scroll: el.scrollHeight }));
    assert.ok(d.scroll <= d.client + 1, `the inspector shows all of itself (${d.client} of ${d.scroll} px)`);
    const list = await page.locator('.vlist').evaluate((el) => el.clientHeight);
    assert.ok(list >= 3 * 40, `the history list shows its rows (${list} px)`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'bug-narrow-history');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'the history at 420 px, dark');
    await shot(page, 'bug-narrow-history-dark');
    await page.goto(`${srv.url}/#/s/payments/chat/${longSession}`);
    await page.locator('.turns .turn').last().waitFor();
    await shot(page, 'bug-narrow-chat-dark');
    await done();
  });
});

describe('Spaces', () => {
  test('deleting: the words fit an empty Space, and a mistyped name can be corrected', async () => {
    await open('');
    await page.fill('input[name=name]', 'empty-one');
    await page.click('text=Create Space');
    await page.waitForURL(/#\/s\/empty-one$/);
    await page.click('nav.crumbs >> text=Spaces');
    const row = page.locator('.space-row[data-name="empty-one"]');
    await row.locator('button', { hasText: 'Delete' }).click();
    const dlg = page.locator('dialog');
    await dlg.waitFor();
    const words = await dlg.textContent();
    assert.doesNotMatch(words, /its nothing/);
    assert.match(words, /no checkpoints/);
    await dlg.locator('input[name=confirm]').fill('empty-on');
    await dlg.locator('button', { hasText: 'Delete Space' }).click();
    await dlg.locator('[role=alert]', { hasText: /does not match/ }).waitFor();
    assert.ok(await dlg.isVisible(), 'the dialog stays open to correct the name');
    await axe(page, 'the delete dialog with a mistyped name');
    await shot(page, 'bug-delete-mistyped');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'the delete dialog, dark');
    await shot(page, 'bug-delete-mistyped-dark');
    await dlg.locator('input[name=confirm]').fill('empty-one');
    await dlg.locator('button', { hasText: 'Delete Space' }).click();
    await row.waitFor({ state: 'detached' });
    await done();
  });
});

describe('editor', () => {
  test('each list\'s Add button names one item of it ("Add entity", not "Add entitie")', async () => {
    await open('#/s/payments/new');
    const adds = page.locator('fieldset.edit-list > button');
    await adds.first().waitFor();
    const words = await adds.allTextContents();
    assert.deepEqual(words, ['Add decision', 'Add assumption', 'Add task', 'Add open question', 'Add entity', 'Add artifact']);
    await done();
  });
});
