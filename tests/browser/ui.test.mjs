// ui.test.mjs -- the web UI in a real headless Chromium against a real
// `smriti serve` and the fake provider on loopback, covering the ten points
// of the UI issue: Spaces; the history graph with a fork and a restore;
// inspecting; comparing; steering (restore, fork, chat from here, hand-off);
// chat (switching provider mid-session, badges, the mount boundary, what the
// model sees, the nudge, a provider error with retry, inert hostile text, no
// provider); Draft with AI, editing and saving, a stale-parent save; review;
// ingest; the keyboard, themes and a narrow window; an agent's CLI write
// appearing without a reload; the token cookie.  Every page is guarded (see
// browser.mjs) and every main view passes axe.  Screenshots go to
// tests/browser/screenshots/ (not committed).  The streaming tests (Stop,
// reconnect) run only once the server streams (GET /v4/generations exists).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok, run } from '../js/helpers.mjs';
import { startServer, request, expectStatus } from '../js/http-helpers.mjs';
import { providerEnv, TRANSCRIPT, EXTRACTED, ingestSession } from '../js/draft-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let fake;
let tmp;
let srv;
let browser;
let page;

const HOSTILE = 'Look: <img src=x onerror=alert(1)> and <script>alert(2)</script> and '
  + '[click me](javascript:alert(3)) and <thinking>hidden?</thinking>';

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  tmp = tempDb();
  const db = tmp.db;
  ok(db, ['space', 'create', 'trip', '--description', 'Planning the Kyoto trip']);
  ok(db, ['checkpoint', 'create', 'trip', '--replace', '--title', 'Dates fixed', '--decision', 'Travel 3-10 April',
    '--assumption', 'Blossoms peak early April', '--task', 'Book flights', '--question', 'Ryokan or hotel?',
    '--entity', 'Kyoto', '--author', 'claude']);
  ok(db, ['checkpoint', 'create', 'trip', '--replace', '--title', 'Flights booked', '--decision', 'Fly via Helsinki',
    '--task', 'Book the ryokan', '--author', 'codex']);
  ok(db, ['fork', 'trip~1', '--into', 'trip-alt']);
  ok(db, ['checkpoint', 'create', 'trip-alt', '--replace', '--title', 'Try Osaka instead', '--decision', 'Base in Osaka', '--author', 'gemini']);
  ok(db, ['restore', 'trip', 'trip~1', '--author', 'person']);
  srv = await startServer(db, { args: ['--quiet'], env: providerEnv(fake, { SMRITI_NUDGE_TURNS: '2', SMRITI_PROVIDER_TIMEOUT_MS: '3000' }) });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

async function open(hash, opts) {
  page = await guardedPage(browser, { origin: srv.url, ...opts });
  await page.goto(`${srv.url}/${hash}`);
  return page;
}

async function done() {
  page.guard.check();
  await page.close();
}

const rowTitles = () => page.locator('.vlist .row .row-title').allTextContents();
// The history's chips (or titles) shown cut short ("HEAD of…"), by their text.
const cutChips = (what = '.chip') => page.locator(`.vlist .row ${what}`).evaluateAll((els) => els.filter((e) => {
  const text = document.createRange();
  const style = getComputedStyle(e);
  text.selectNodeContents(e);
  return text.getBoundingClientRect().width + parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) >
    e.getBoundingClientRect().width + 0.01;
}).map((e) => e.textContent));

describe('1 Spaces', () => {
  test('list with HEAD title, author and activity; create, rename, delete with confirmation', async () => {
    await open('');
    const trip = page.locator('.space-row[data-name="trip"]');
    await trip.waitFor();
    assert.match(await trip.locator('.space-head').textContent(), /Dates fixed.*person/);
    assert.match(await trip.locator('.space-meta').textContent(), /0 sessions · (just now|\d+ min ago)/);
    await axe(page, 'Spaces');
    await shot(page, 'spaces');
    await page.fill('input[name=name]', 'scratch');
    await page.click('text=Create Space');
    await page.waitForURL(/#\/s\/scratch$/);
    await page.click('nav.crumbs >> text=Spaces');
    const row = page.locator('.space-row[data-name="scratch"]');
    await row.getByRole('button', { name: 'Rename' }).click();
    await page.fill('dialog input[name=name]', 'scratch two');
    await page.click('dialog button:has-text("Rename")');
    const renamed = page.locator('.space-row[data-name="scratch two"]');
    await renamed.waitFor();
    await renamed.getByRole('button', { name: 'Delete' }).click();
    await page.fill('dialog input[name=confirm]', 'wrong name');
    await page.click('dialog >> text=Delete Space');
    await page.locator('dialog [role=alert]', { hasText: 'does not match' }).waitFor();
    assert.equal(await renamed.count(), 1, 'a wrong name deletes nothing');
    // the dialog stays open to correct the name
    await page.fill('dialog input[name=confirm]', 'scratch two');
    await page.click('dialog >> text=Delete Space');
    await renamed.waitFor({ state: 'detached' });
    await done();
  });
});

describe('2-4 History, inspect, compare', () => {
  test('the graph shows the fork and the restore; the inspector shows every field and raw JSON', async () => {
    await open('#/s/trip');
    await page.waitForSelector('.vlist .row');
    const titles = await rowTitles();
    assert.deepEqual(titles, ['Dates fixed', 'Try Osaka instead', 'Flights booked', 'Dates fixed']);
    assert.equal(await page.locator('.vlist .chip.head', { hasText: 'HEAD of trip-alt' }).count(), 1);
    assert.equal(await page.locator('.vlist .chip.restore').count(), 1);
    assert.equal(await page.locator('.vlist .row').first().locator('path.dashed').count(), 1, 'the restore is linked by a dashed lane');
    await page.locator('.vlist .row').nth(3).click();
    const detail = page.locator('.detail');
    await detail.locator('h2.ck-title', { hasText: 'Dates fixed' }).waitFor();
    for (const section of ['Decisions', 'Assumptions', 'Tasks', 'Open questions', 'Entities']) {
      assert.equal(await detail.locator('h3', { hasText: section }).count(), 1, section);
    }
    assert.match(await detail.textContent(), /Blossoms peak early April/);
    await axe(page, 'History');
    await shot(page, 'history');
    assert.deepEqual(await cutChips(), [], 'the titles give way, not the chips');
    assert.deepEqual(await cutChips('.row-title'), [], 'and the changes give way before the titles');
    await page.click('text=JSON');
    const raw = JSON.parse(await detail.locator('pre.raw').textContent());
    assert.equal(raw.title, 'Dates fixed');
    assert.deepEqual(raw.tasks, [{ text: 'Book flights', status: 'open' }]);
    await done();
  });

  test('compare with parent and any two; j/k and c on the keyboard', async () => {
    await open('#/s/trip');
    await page.waitForSelector('.vlist .row.selected');
    await page.keyboard.press('j');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    await page.keyboard.press('j');
    await page.locator('.detail h2.ck-title', { hasText: 'Flights booked' }).waitFor();
    await page.keyboard.press('c');
    await page.waitForURL(/\/compare\//);
    const diff = page.locator('.diff-view');
    await diff.waitFor();
    assert.match(await diff.locator('[data-field=decisions] li.add').textContent(), /Fly via Helsinki/);
    assert.match(await diff.locator('[data-field=decisions] li.del').textContent(), /Travel 3-10 April/);
    await axe(page, 'Compare');
    await shot(page, 'compare');
    // any two: pick "Try Osaka instead" after "Flights booked"
    await page.click('text=Back to checkpoint');
    await page.click('text=Compare with…');
    await page.locator('.vlist .row', { hasText: 'Try Osaka instead' }).click();
    await page.waitForURL(/\/compare\//);
    assert.match(await page.locator('.diff-view [data-field=decisions]').textContent(), /Base in Osaka/);
    await page.keyboard.press('k');
    await page.waitForURL(/\/c\//);
    await done();
  });

  test('viewing never writes: browsing every view leaves the state version where it was', async () => {
    const version = async () => (await expectStatus(srv, 'GET', '/v4/changes?space=trip', 200)).version;
    const v0 = await version();
    const dbBefore = run(tmp.db, ['log', 'trip', '--json']).stdout;
    await open('#/');
    await page.locator('.space-row').first().waitFor();
    for (const hash of ['#/s/trip', '#/s/trip/chat', '#/s/trip/new', '#/s/trip/ingest', '#/s/trip-alt']) {
      await page.goto(`${srv.url}/${hash}`);
      await page.waitForTimeout(250);
    }
    await page.goto(`${srv.url}/#/s/trip`);
    await page.locator('.vlist .row').nth(2).click();
    await page.click('text=Compare with parent');
    await page.locator('.diff-view').waitFor();
    assert.equal(await version(), v0);
    assert.equal(run(tmp.db, ['log', 'trip', '--json']).stdout, dbBefore);
    await done();
  });

  test("an agent's CLI write appears without a reload", async () => {
    await open('#/s/trip');
    await page.waitForSelector('.vlist .row');
    const t0 = Date.now();
    ok(tmp.db, ['checkpoint', 'create', 'trip', '--replace', '--title', 'Agent hand-off', '--decision', 'Fly via Helsinki', '--author', 'codex']);
    await page.locator('.vlist .row .row-title', { hasText: 'Agent hand-off' }).waitFor({ timeout: 5000 });
    const ms = Date.now() - t0;
    console.log(`# figure: CLI write visible in the open history after ${ms} ms`);
    assert.match(await page.locator('.space-info').textContent(), /HEAD/);
    await done();
  });
});

describe('5 Steer', () => {
  test('restore asks first and adds a checkpoint; fork makes a Space; hand-off copies', async () => {
    await open('#/s/trip');
    await page.locator('.vlist .row', { hasText: 'Flights booked' }).click();
    await page.click('text=Restore…');
    assert.match(await page.locator('dialog').textContent(), /Nothing is deleted/);
    await page.click('dialog >> text=Cancel');
    const before = (await rowTitles()).length;
    await page.click('text=Restore…');
    await page.click('dialog >> button:has-text("Restore")');
    await page.waitForFunction((n) => document.querySelectorAll('.vlist .row').length > n, before);
    const top = page.locator('.vlist .row').first();
    assert.match(await top.textContent(), /Flights booked.*HEAD/);
    assert.equal(await top.locator('.chip.restore').count(), 1);
    // hand to the next agent: this is HEAD now
    await page.click('text=Hand to next agent');
    const dlg = page.locator('dialog');
    const hash = await dlg.locator('input[aria-label=Hash]').inputValue();
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.equal(await dlg.locator('input[aria-label=CLI]').inputValue(), "smriti head 'trip' --json");
    assert.deepEqual(JSON.parse(await dlg.locator('input[aria-label="MCP call"]').inputValue()),
      { name: 'read_head', arguments: { space: 'trip' } });
    await dlg.locator('.copy-field').first().getByRole('button', { name: 'Copy' }).click();
    await dlg.locator('button', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), hash);
    await axe(page, 'Hand-off dialog');
    await shot(page, 'handoff');
    await page.keyboard.press('Escape');
    // fork from an older checkpoint
    await page.locator('.vlist .row', { hasText: 'Try Osaka instead' }).click();
    await page.click('text=Fork…');
    await page.fill('dialog input[name=into]', 'osaka-line');
    await page.click('dialog >> button:has-text("Fork")');
    await page.waitForURL(/#\/s\/osaka-line$/);
    // the fork's graph holds its relatives too; its own HEAD is the checkpoint forked from
    const own = page.locator('.vlist .row', { has: page.locator('.chip.head', { hasText: /^HEAD$/ }) });
    await own.waitFor();
    assert.match(await own.locator('.row-title').textContent(), /Try Osaka instead/);
    await done();
    const trip = await expectStatus(srv, 'GET', '/v4/repos/trip-alt', 200);
    assert.ok(trip.head, 'the original Space is untouched');
  });
});

describe('6 Chat', () => {
  let sessionId;
  test('mount a checkpoint: banner, boundary, what the model sees; send, switch provider, badges', async () => {
    await open('#/s/trip');
    await page.locator('.vlist .row', { hasText: 'Try Osaka instead' }).waitFor();
    await page.locator('.vlist .row').first().click();
    await page.click('text=Chat from here');
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    sessionId = page.url().split('/').pop();
    await page.locator('.banner.mount').waitFor();
    assert.match(await page.locator('.banner.mount').textContent(), /Mounted/);
    await page.locator('.boundary').waitFor();
    assert.doesNotMatch(await page.locator('.session-head').textContent(), /null|undefined/);
    fake.script([{ reply: 'Helsinki has good connections. **Noted.**', provider: 'openai' }]);
    await page.fill('textarea[aria-label=Message]', 'Which airport do we fly through?');
    await page.keyboard.press('Enter');
    const reply = page.locator('.turn.assistant:not(.streaming)').last();
    await reply.locator('.badge.model', { hasText: /^openai\// }).waitFor();
    assert.equal(await reply.locator('strong', { hasText: 'Noted.' }).count(), 1, 'Markdown rendered');
    // switch provider mid-session: the same session, the reply badged with the new model
    await page.selectOption('select[aria-label=Provider]', 'anthropic');
    fake.script([{ reply: 'Claude here: same context.', provider: 'anthropic' }]);
    await page.fill('textarea[aria-label=Message]', 'And the hotel?');
    await page.click('button:has-text("Send")');
    await page.locator('.turn.assistant:not(.streaming) .badge.model', { hasText: /^anthropic\// }).waitFor();
    assert.equal(await page.locator('.turn.assistant').count(), 2);
    assert.equal(page.url().split('/').pop(), sessionId, 'still the same session');
    // the nudge (SMRITI_NUDGE_TURNS=2) is a subtle indicator, never an action
    await page.locator('button.nudge').waitFor();
    const mounted = fake.requests().filter((r) => r.step_used && !r.step_used.default).at(-1);
    assert.match(JSON.stringify(mounted.body), /Try Osaka instead|Flights booked|Dates fixed/);
    await page.click('text=What the model sees');
    const ctxDlg = page.locator('dialog');
    await ctxDlg.locator('h3', { hasText: 'System' }).waitFor();
    assert.match(await ctxDlg.textContent(), /checkpoint [0-9a-f]{12}/);
    assert.match(await ctxDlg.textContent(), /Which airport do we fly through\?/);
    await axe(page, 'What the model sees');
    await page.keyboard.press('Escape');
    await axe(page, 'Chat');
    await shot(page, 'chat');
    await done();
  });

  test('hostile text in turns renders as inert text', async () => {
    await open(`#/s/trip/chat/${sessionId}`);
    fake.script([{ reply: HOSTILE, provider: 'anthropic' }]);
    await page.selectOption('select[aria-label=Provider]', 'anthropic');
    await page.fill('textarea[aria-label=Message]', HOSTILE);
    await page.keyboard.press('Enter');
    await page.locator('.turn.assistant', { hasText: 'hidden?' }).last().waitFor();
    const turns = page.locator('.turns');
    assert.equal(await turns.locator('img').count(), 0, 'no image element');
    assert.equal(await turns.locator('script').count(), 0, 'no script element');
    assert.equal(await turns.locator('a[href^="javascript"]').count(), 0, 'no javascript: link');
    assert.match(await turns.locator('.turn.user').last().textContent(), /<img src=x onerror=alert\(1\)>/);
    assert.match(await turns.locator('.turn.assistant').last().textContent(), /<thinking>hidden\?<\/thinking>/);
    assert.match(await turns.locator('.turn.assistant').last().textContent(), /\[click me\]\(javascript:alert\(3\)\)/);
    await page.waitForTimeout(300);
    await done();   // an alert() or a request for "x" would fail here
  });

  test('a provider error keeps the turn, says what failed, and Retry sends again', async () => {
    await open(`#/s/trip/chat/${sessionId}`);
    await page.locator('.turn').first().waitFor();
    page.guard.expect(502, '/v4/chat/send');
    // the picker remembers the last test's anthropic (per browser)
    await page.selectOption('select[aria-label=Provider]', 'openai');
    fake.script([{ status: 500, message: 'upstream exploded', provider: 'openai' },
      { status: 500, message: 'upstream exploded', provider: 'openai' }]);
    await page.fill('textarea[aria-label=Message]', 'Will this fail?');
    await page.keyboard.press('Enter');
    const err = page.locator('.turn.user .turn-error');
    await err.waitFor();
    assert.match(await err.textContent(), /upstream exploded/);
    fake.script([{ reply: 'Second time lucky.', provider: 'openai' }]);
    await err.getByRole('button', { name: 'Retry' }).click();
    await page.locator('.turn.assistant', { hasText: 'Second time lucky.' }).waitFor();
    assert.equal(await page.locator('.turn.user', { hasText: 'Will this fail?' }).count(), 1, 'the turn was reused, not repeated');
    await done();
  });

  // Streaming (issue 10, docs/http.md "Streaming chat"): these run once the
  // server streams; until then they skip, saying why.
  test('streaming: Stop before the first token keeps the turn, badged stopped', async (t) => {
    const why = await noStreaming();
    if (why) return t.skip(why);
    await open(`#/s/trip/chat/${sessionId}`);
    await page.locator('.turn').first().waitFor();
    fake.script([{ reply: 'too late', delay_ms: 4000, provider: 'openai' }]);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await page.fill('textarea[aria-label=Message]', 'Take your time');
    await page.keyboard.press('Enter');
    const stop = page.locator('button:has-text("Stop")');
    await page.waitForFunction(() => !document.querySelector('.composer button.danger')?.disabled);
    await stop.click();
    await page.locator('.turn.assistant .badge.status-stopped').last().waitFor();
    assert.equal(await page.locator('.turn.user', { hasText: 'Take your time' }).count(), 1);
    await done();
  });

  test('streaming: a reload during a reply reattaches and shows the whole reply', async (t) => {
    const why = await noStreaming();
    if (why) return t.skip(why);
    await open(`#/s/trip/chat/${sessionId}`);
    await page.locator('.turn').first().waitFor();
    fake.script([{ reply: 'Worth the wait.', delay_ms: 1500, provider: 'openai' }]);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await page.fill('textarea[aria-label=Message]', 'Reply after a pause');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('.composer button.danger')?.disabled);
    await page.guard.reload();
    await page.locator('.turn.assistant', { hasText: 'Worth the wait.' }).waitFor({ timeout: 10000 });
    await done();
  });

  test('no provider configured: a notice, sending off, everything else works', async () => {
    const bare = await startServer(tmp.db, { args: ['--quiet'], env: { SMRITI_PROVIDER: 'openai' } });
    try {
      page = await guardedPage(browser);
      await page.goto(`${bare.url}/#/s/trip/chat/${sessionId}`);
      await page.locator('.notice-slot .banner.warn').waitFor();
      assert.match(await page.locator('.notice-slot').textContent(), /No provider is configured/);
      assert.equal(await page.locator('button:has-text("Send")').isDisabled(), true);
      assert.ok(await page.locator('.turn').count() > 0, 'the turns still show');
      await done();
    } finally {
      await bare.stop();
    }
  });
});

describe('7 Draft, edit, save', () => {
  test('Draft with AI shows progress, opens against HEAD, edits lists and saves with Ctrl+S', async () => {
    const s = await ingestSession(srv, 'trip', TRANSCRIPT);
    const before = await expectStatus(srv, 'GET', '/repos/trip/head', 200);
    const headTexts = before.decisions.map((d) => d.text);
    assert.ok(headTexts.length > 0);
    // what the editor holds after "Edit every field": HEAD's decisions, then the draft's new ones
    const planned = [...headTexts, ...EXTRACTED.decisions.map((d) => d.text).filter((t) => !headTexts.includes(t))];
    fake.script([{ json: EXTRACTED, delay_ms: 600 }]);
    await open(`#/s/trip/chat/${s.id}`);
    await page.click('text=Draft checkpoint');
    await page.waitForURL(/\/new\/[0-9a-f-]+$/);
    await page.locator('.banner.progress').waitFor();
    await page.locator('.editor-status', { hasText: 'Draft ready' }).waitFor({ timeout: 15000 });
    assert.equal(await page.inputValue('label.block >> input[aria-label=Title]'), 'Lisbon offsite');
    const side = page.locator('.against');
    await side.locator('[data-field=decisions] li.add', { hasText: 'Hold the offsite in Lisbon in May' }).waitFor();
    assert.equal(await side.locator('li.del').count(), 0, "saving a draft drops nothing of HEAD's");
    await page.locator('.review-list[data-field=decisions] .review-head li', { hasText: headTexts[0] }).first().waitFor();
    // every field: the checkpoint the draft would save (HEAD's items and the draft's) in the editor
    await page.click('button:has-text("Edit every field instead")');
    // edit: add a decision, move it up, remove another, mark the task done, change the title
    const decisions = page.locator('fieldset[data-field=decisions]');
    await decisions.locator('button', { hasText: 'Add decision' }).click();
    await decisions.locator('li').last().locator('input').fill('Stay near the river');
    await decisions.locator('li').last().getByRole('button', { name: /up$/ }).click();
    assert.equal(await decisions.locator('li').nth(planned.length - 1).locator('input').inputValue(), 'Stay near the river');
    await decisions.locator('li').first().getByRole('button', { name: /^Remove/ }).click();
    await side.locator('[data-field=decisions] li.del', { hasText: headTexts[0] }).first().waitFor();
    await page.locator('fieldset[data-field=tasks] li input[type=checkbox]').first().check();
    await page.fill('label.block >> input[aria-label=Title]', 'Lisbon offsite, edited');
    await side.locator('[data-field=decisions] li.add', { hasText: 'Stay near the river' }).waitFor();
    await axe(page, 'Editor');
    await shot(page, 'editor');
    await page.locator('label.block >> input[aria-label=Title]').focus();
    await page.keyboard.press('Control+s');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    const head = await expectStatus(srv, 'GET', '/repos/trip/head', 200);
    assert.equal(head.title, 'Lisbon offsite, edited');
    const expected = [...planned];
    expected.splice(expected.length - 1, 0, 'Stay near the river');
    expected.shift();
    assert.deepEqual(head.decisions.map((d) => d.text), expected);
    assert.deepEqual(head.entities, before.entities, "HEAD's entities kept");
    assert.equal(head.tasks[0].status, 'done');
    assert.equal(head.metadata.draft.session_id, s.id, 'draft provenance kept');
    await page.locator('.detail', { hasText: 'Drafted with AI from turns 1–4' }).waitFor();
    await done();
  });

  test('a stale parent is refused, shows the conflict and offers to reload', async () => {
    await open('#/s/trip/new');
    await page.locator('label.block >> input[aria-label=Title]').waitFor();
    await page.fill('label.block >> input[aria-label=Title]', 'My view of it');
    ok(tmp.db, ['checkpoint', 'create', 'trip', '--replace', '--title', 'Written meanwhile', '--decision', 'x', '--author', 'codex']);
    page.guard.expect(409, '/chat/commit');
    await page.click('button:has-text("Save checkpoint")');
    const banner = page.locator('.banner.warn', { hasText: 'HEAD moved' });
    await banner.waitFor();
    assert.equal((await expectStatus(srv, 'GET', '/repos/trip/head', 200)).title, 'Written meanwhile');
    await shot(page, 'conflict');
    await banner.getByRole('button', { name: /Reload HEAD/ }).click();
    await page.locator('.editor-status', { hasText: 'Written meanwhile' }).waitFor();
    assert.equal(await page.inputValue('label.block >> input[aria-label=Title]'), 'My view of it', 'edits kept');
    await page.click('button:has-text("Save checkpoint")');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    const head = await expectStatus(srv, 'GET', '/repos/trip/head', 200);
    assert.equal(head.title, 'My view of it');
    await done();
  });
});

describe('8-9 Review and ingest', () => {
  test('review findings are grouped by type and link to the items', async () => {
    const ck = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: {
      repo_id: 'trip', title: 'Storage', decisions: ['Use Postgres for orders', 'Use MySQL for every table'],
      entities: [{ name: 'Kafka', kind: 'system' }] } });
    fake.script([{ json: { findings: [{ type: 'contradiction', message: 'Postgres and MySQL cannot both hold',
      items: [{ field: 'decisions', index: 0 }, { field: 'decisions', index: 1 }] }] } }]);
    await open(`#/s/trip/c/${ck.commit_hash}`);
    await page.click('button:has-text("Review")');
    const box = page.locator('.review-box');
    await box.locator('.finding-group[data-type=contradiction]').waitFor();
    assert.ok(await box.locator('.finding-group[data-type=disconnected_entity]').count() >= 1, 'deterministic pass too');
    await box.locator('.finding-group[data-type=contradiction] button', { hasText: 'decisions #2' }).first().click();
    await page.locator('#item-decisions-1.flash-item').waitFor();
    await axe(page, 'Review');
    await shot(page, 'review');
    await done();
  });

  test('a pasted transcript becomes a new session', async () => {
    await open('#/s/trip/ingest');
    await page.fill('textarea[aria-label=Transcript]', TRANSCRIPT);
    await page.fill('input[aria-label="Session title"]', 'Offsite notes');
    await axe(page, 'Ingest');
    await page.click('button:has-text("Create session")');
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    await page.locator('.turn').nth(3).waitFor();
    assert.equal(await page.locator('.turn').count(), 4);
    assert.match(await page.locator('.session-head h2').textContent(), /Offsite notes/);
    await done();
  });
});

describe('10 Keyboard, themes, narrow window, token', () => {
  test('? lists the shortcuts, Esc closes; dark theme and a narrow window stay readable', async () => {
    await open('#/s/trip');
    await page.waitForSelector('.vlist .row');
    await page.keyboard.press('?');
    await page.locator('dialog', { hasText: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('dialog').waitFor({ state: 'detached' });
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'History, dark');
    await shot(page, 'history-dark');
    await page.goto(`${srv.url}/#/s/trip/chat`);
    await page.locator('.session-list li').first().click();
    await page.locator('.turn').first().waitFor();
    await axe(page, 'Chat, dark');
    await shot(page, 'chat-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 420, height: 820 });
    await page.goto(`${srv.url}/#/s/trip`);
    await page.waitForSelector('.vlist .row');
    await axe(page, 'History, narrow');
    await shot(page, 'history-narrow');
    const heads = await page.locator('.vlist .chip.head').allTextContents();
    assert.ok(heads.includes('HEAD of 2 Spaces'), `two other Spaces' HEADs in one chip (${heads.join(' | ')})`);
    assert.deepEqual(await cutChips(), [], 'no chip of a narrow history is cut');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no sideways scrolling in a narrow window (${overflow}px)`);
    await done();
  });

  test('with SMRITI_TOKEN the UI asks once and keeps it in an HttpOnly cookie', async () => {
    const t = tempDb();
    const guarded = await startServer(t.db, { args: ['--quiet'], env: { SMRITI_TOKEN: 'browser-token-42' } });
    try {
      page = await guardedPage(browser);
      await page.goto(`${guarded.url}/`);
      await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
      await page.fill('dialog input[name=token]', 'browser-token-42');
      await page.click('dialog >> text=Sign in');
      await page.locator('h1', { hasText: 'Spaces' }).waitFor();
      assert.equal(await page.evaluate(() => document.cookie), '', 'no script can read the token');
      await page.reload();
      await page.locator('h1', { hasText: 'Spaces' }).waitFor();
      assert.equal(await page.locator('dialog').count(), 0, 'asked once');
      await done();
    } finally {
      await guarded.stop();
      t.cleanup();
    }
  });
});

async function noStreaming() {
  // the streaming server (docs/http.md, "Streaming chat") answers GET /v4/generations/{id}
  if (!srv) return 'server not started';
  const r = await request(srv, 'GET', '/v4/generations/none');
  return r.status === 404 && r.json?.error?.message?.startsWith('no route') ? 'the server does not stream yet' : false;
}
