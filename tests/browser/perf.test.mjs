// perf.test.mjs -- figures of the web UI measured in the browser (reported,
// never asserted: speed is not a test's business): the time to a rendered,
// scrollable history of a Space with 5,000 checkpoints and to a session of
// 2,000 turns, the time until a checkpoint the CLI writes shows in an open
// page, the Spaces page with 10,000 Spaces (what it draws is asserted), and
// the size of the UI's files, raw and gzipped.  The big
// Space is written straight into SQLite in one transaction (the hashes are
// placeholders: the views do not recompute them), the long session through
// the ingest operation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants as zc } from 'node:zlib';
import path from 'node:path';
import { tempDb, ok, ROOT } from '../js/helpers.mjs';
import { startServer, request, expectStatus } from '../js/http-helpers.mjs';
import { launch, guardedPage, shot } from './browser.mjs';

const CHECKPOINTS = 5000;
const TURNS = 2000;
const SPACES = 10000;
let tmp;
let srv;
let browser;

function sql(db, text) {
  return execFileSync('sqlite3', [db], { input: text, encoding: 'utf8' }).trim();
}

before(async () => {
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'big']);
  const id = sql(tmp.db, "SELECT id FROM repos WHERE name = 'big';");
  sql(tmp.db, `BEGIN;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CHECKPOINTS})
    INSERT INTO commits (repo_id, commit_hash, title, summary, decisions, assumptions, tasks,
      open_questions, entities, artifacts, metadata_, author, created_at)
    SELECT '${id}', printf('%064x', 4294967296 + i), 'Checkpoint ' || i, 'Summary of step ' || i,
      '[{"text":"Decision ' || i || '"}]', '[]', '[{"text":"Task ' || i || '","status":"open"}]', '[]', '[]', '[]', '{}',
      CASE i % 3 WHEN 0 THEN 'claude' WHEN 1 THEN 'codex' ELSE 'person' END,
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes') FROM n;
    UPDATE commits SET parent_commit_id = id - 1
      WHERE repo_id = '${id}' AND id > (SELECT min(id) FROM commits WHERE repo_id = '${id}');
    INSERT OR REPLACE INTO refs (repo_id, name, commit_id)
      VALUES ('${id}', 'main', (SELECT max(id) FROM commits WHERE repo_id = '${id}'));
    COMMIT;`);
  srv = await startServer(tmp.db, { args: ['--quiet'] });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  tmp?.cleanup();
});

test(`history of ${CHECKPOINTS} checkpoints: time to rendered and scrollable, and to the oldest`, async () => {
  const page = await guardedPage(browser);
  const asked = [];
  page.on('request', (r) => asked.push(r.url()));
  await page.goto(`${srv.url}/`);
  await page.locator('.space-row').first().waitFor();
  const ms = await page.evaluate(() => new Promise((resolve) => {
    const t0 = performance.now();
    location.hash = '#/s/big';
    const tick = () => {
      const list = document.querySelector('.vlist');
      if (list && list.querySelector('.row:not(.placeholder)') && list.scrollHeight > list.clientHeight) resolve(performance.now() - t0);
      else requestAnimationFrame(tick);
    };
    tick();
  }));
  console.log(`# figure: history of ${CHECKPOINTS} checkpoints rendered and scrollable in ${ms.toFixed(0)} ms`);
  // whether the Space is a fork is the forks' standing: its whole reflog (a million entries for a
  // Space of a million checkpoints) is read by the reflog tab alone, a page at a time
  assert.deepEqual(asked.filter((u) => /\/reflog(\?|$)/.test(u)), []);
  // a page costs what it shows: the count says what is loaded until the oldest is
  assert.match(await page.locator('.count-line').textContent(), /^\d+\+ checkpoints$/);
  const last = await page.evaluate(() => new Promise((resolve) => {
    const list = document.querySelector('.vlist');
    const t0 = performance.now();
    list.scrollTop = list.scrollHeight;
    const tick = () => {
      list.scrollTop = list.scrollHeight;
      const titles = [...list.querySelectorAll('.row-title')].map((e) => e.textContent);
      if (titles.includes('Checkpoint 1')) resolve(performance.now() - t0);
      else setTimeout(tick, 20);
    };
    tick();
  }));
  console.log(`# figure: scrolled to the oldest of ${CHECKPOINTS} checkpoints (all pages loaded) in ${last.toFixed(0)} ms`);
  assert.match(await page.locator('.count-line').textContent(), new RegExp(`^${CHECKPOINTS} checkpoints$`));
  await shot(page, 'history-5000');
  page.guard.check();
  await page.close();
});

test(`session of ${TURNS} turns: time to rendered and scrollable`, async () => {
  const lines = [];
  for (let i = 1; i <= TURNS / 2; i++) {
    lines.push(`User: Question ${i}: what about *item* ${i}?`);
    lines.push(`Assistant: Answer ${i}.\n\n- point **one**\n- point \`two\`\n\nMore text for turn ${i}.`);
  }
  const r = await expectStatus(srv, 'POST', '/v1/ingest', 201,
    { body: { space: 'big', transcript: lines.join('\n\n'), format: 'text', title: 'long' } });
  assert.equal(r.turns, TURNS);
  const page = await guardedPage(browser);
  await page.goto(`${srv.url}/#/s/big/chat`);
  await page.locator('.session-list li').first().waitFor();
  const ms = await page.evaluate((id) => new Promise((resolve) => {
    const t0 = performance.now();
    location.hash = `#/s/big/chat/${id}`;
    const tick = () => {
      const box = document.querySelector('.turns');
      if (box && box.querySelector('.turn') && box.scrollHeight > box.clientHeight && box.scrollTop > 0) resolve(performance.now() - t0);
      else requestAnimationFrame(tick);
    };
    tick();
  }), r.session.id);
  console.log(`# figure: session of ${TURNS} turns rendered and scrollable (newest in view) in ${ms.toFixed(0)} ms`);
  await page.locator('.turn', { hasText: `More text for turn ${TURNS / 2}.` }).waitFor();
  await page.evaluate(() => { document.querySelector('.turns').scrollTop = 0; });
  await page.locator('.turns .earlier, .turn').first().waitFor();
  await shot(page, 'session-2000');
  page.guard.check();
  await page.close();
});

test('a checkpoint written by the CLI: time until an open page shows it', async () => {
  ok(tmp.db, ['space', 'create', 'watched']);
  ok(tmp.db, ['commit', 'watched', '-m', 'First step', '--decision', 'Use C']);
  const page = await guardedPage(browser);
  await page.goto(`${srv.url}/#/s/watched`);
  await page.locator('.row-title', { hasText: 'First step' }).waitFor();
  const times = [];
  for (let i = 1; i <= 5; i++) {
    const title = `Agent step ${i}`;
    const t0 = performance.now();
    ok(tmp.db, ['commit', 'watched', '-m', title, '--decision', `Decision ${i}`, '--author', 'codex']);
    const written = performance.now() - t0;
    await page.locator('.row-title', { hasText: title }).waitFor();
    times.push([written, performance.now() - t0]);
  }
  const shown = times.map(([, t]) => t.toFixed(0)).join(', ');
  const cli = times.map(([w]) => w.toFixed(0)).join(', ');
  console.log(`# figure: a CLI write shown in an open page after ${shown} ms (the CLI itself took ${cli} ms of that)`);
  assert.equal(await page.locator('.row-title', { hasText: 'Agent step' }).count(), 5);
  page.guard.check();
  await page.close();
});

test('size of the UI files, raw, gzipped and with brotli', async () => {
  const dir = path.join(ROOT, 'src/ui');
  const names = [...readdirSync(dir).filter((f) => /\.(html|css|js|svg)$/.test(f)),
    ...readdirSync(path.join(dir, 'vendor')).filter((f) => f.endsWith('.mjs'))];
  let raw = 0;
  let gz = 0;
  let br = 0;
  const rows = [];
  for (const name of names) {
    const res = await request(srv, 'GET', name === 'index.html' ? '/' : `/ui/${name}`);
    assert.equal(res.status, 200, name);
    const bytes = Buffer.from(res.text, 'utf8');
    const z = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gz += z;
    br += brotliCompressSync(bytes, { params: { [zc.BROTLI_PARAM_QUALITY]: 11 } }).length;
    rows.push(`${name} ${bytes.length}/${z}`);
  }
  console.log(`# figure: UI files ${names.length}, ${(raw / 1024).toFixed(1)} KiB raw, ${(gz / 1024).toFixed(1)} KiB gzipped, ${(br / 1024).toFixed(1)} KiB with brotli (${rows.join(', ')})`);
});

test(`${SPACES} Spaces: the Spaces page asks for the 100 most recently active, more on demand, and its filter finds any`, async () => {
  sql(tmp.db, `BEGIN;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${SPACES})
    INSERT INTO repos (id, name, description, created_at)
    SELECT printf('00000000-0000-4000-8000-%012d', i), printf('s%05d', i), 'Space number ' || i,
      strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01', '+' || i || ' minutes') FROM n;
    INSERT INTO refs (repo_id, name, commit_id)
      SELECT id, 'main', NULL FROM repos WHERE id GLOB '00000000-0000-4000-8000-*';
    COMMIT;`);
  const total = (SPACES + 2).toLocaleString('en');   // and "big" and "watched", active today
  const page = await guardedPage(browser);
  const overviews = [];
  page.on('response', async (r) => {
    if (r.url().includes('/v4/overview')) overviews.push([new URL(r.url()).search, (await r.body()).length]);
  });
  const t0 = performance.now();
  await page.goto(`${srv.url}/`);
  await page.locator('.space-row').first().waitFor();
  const first = performance.now() - t0;
  assert.equal(await page.locator('.space-row').count(), 100);
  assert.equal(await page.locator('.count-line').textContent(), 'the 100 most recently active Spaces');
  // a page of them, not the 3.7 MB of every Space
  assert.deepEqual(overviews.map(([q]) => q), ['?limit=101']);
  // j moves the selection without drawing the list again (it drew every Space for each j)
  const j = await page.evaluate(() => {
    const t = performance.now();
    for (let i = 0; i < 50; i++) document.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
    return (performance.now() - t) / 50;
  });
  console.log(`# figure: Spaces page with ${total} Spaces: first rows after ${first.toFixed(0)} ms (page load included; the overview answered ${overviews[0][1]} bytes), j moves the selection in ${j.toFixed(2)} ms`);
  assert.equal(await page.locator('.space-row.selected').getAttribute('data-name'), 's09952');
  // j past the last row drawn asks for the next hundred
  for (let i = 0; i < 50; i++) await page.keyboard.press('j');
  await page.locator('.space-row').nth(199).waitFor();
  assert.equal(await page.locator('.space-row').count(), 200);
  assert.equal(await page.locator('.space-row.selected').count(), 1);
  assert.equal(await page.locator('.space-row').nth(100).getAttribute('data-name'), 's09902');
  assert.match(await page.locator('.space-row').nth(100).getAttribute('class'), /selected/);
  await page.getByRole('button', { name: 'Show 100 more' }).click();
  await page.locator('.space-row').nth(299).waitFor();
  assert.equal(await page.locator('.space-row').count(), 300);
  assert.equal(await page.locator('.count-line').textContent(), 'the 300 most recently active Spaces');
  // the filter looks through every Space, not only those drawn: the server's
  await page.keyboard.press('/');
  await page.keyboard.type('s00042');
  await page.locator('.count-line', { hasText: '1 Space matches' }).waitFor();
  assert.deepEqual(await page.locator('.space-row').evaluateAll((els) => els.map((e) => e.dataset.name)), ['s00042']);
  assert.equal(await page.locator('.list-foot').isHidden(), true);
  assert.equal(overviews.at(-1)[0], '?limit=101&match=s00042');
  await page.fill('input[name=space-filter]', 'space NUMBER 777');   // descriptions too, in either case: 777 and 7770-7779
  await page.locator('.count-line', { hasText: '11 Spaces match' }).waitFor();
  assert.equal(await page.locator('.space-row').count(), 11);
  assert.equal(await page.locator('.space-row').first().getAttribute('data-name'), 's07779');
  await shot(page, 'spaces-10000-filtered');
  await page.fill('input[name=space-filter]', 'no such space');
  await page.locator('.space-list .empty', { hasText: 'No Space matches “no such space”.' }).waitFor();
  await page.fill('input[name=space-filter]', 's00042');
  await page.locator('.count-line', { hasText: '1 Space matches' }).waitFor();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/s\/s00042$/);
  await page.click('nav.crumbs >> text=Spaces');
  await page.locator('.space-row').first().waitFor();
  await shot(page, 'spaces-10000');
  page.guard.check();
  await page.close();
});
