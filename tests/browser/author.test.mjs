// author.test.mjs -- who the UI's writes are recorded as (issue 26).  Not
// signed in, the UI makes up no author: the editor's Author is empty and
// optional, and a save or restore sends an author only when the person
// typed one (the server's own rule applies otherwise).  Signed in with a
// user's token, the server records that user whatever is sent, so the
// editor shows "Recorded as NAME", read-only, and sends no author.  Real
// smriti serve, real Chromium; screenshots (light, dark, 420 px) go to
// tests/browser/screenshots/ (not committed).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, run, SMRITI_FULL } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.cleanup(); });

function cli(db, args) {
  const r = run(db, args, { bin: SMRITI_FULL });
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}
const head = (db, space) => JSON.parse(cli(db, ['head', space, '--json']));

// The JSON bodies of the page's writes to paths containing part.
function bodies(page, part) {
  const seen = [];
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().includes(part)) seen.push(JSON.parse(r.postData() || '{}')); });
  return seen;
}

async function saveNew(page, url, title) {
  await page.goto(url);
  await page.locator('label.block >> input[aria-label=Title]').waitFor();
  await page.fill('label.block >> input[aria-label=Title]', title);
  await page.click('button:has-text("Save checkpoint")');
  await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
}

async function restoreRow(page, url, title) {
  await page.goto(url);
  await page.locator('.vlist .row', { hasText: title }).first().click();
  await page.click('text=Restore…');
  await page.click('dialog >> button:has-text("Restore")');
  await page.waitForFunction((t) => document.querySelector('.vlist .row')?.textContent.includes(t), title);
}

async function shots(page, name) {
  await shot(page, name);
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, `${name}, dark`);
  await shot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 900 });
  await shot(page, `${name}-420`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe('not signed in', () => {
  let tmp;
  let srv;
  before(async () => {
    tmp = tempDb();
    cli(tmp.db, ['space', 'create', 'plan']);
    cli(tmp.db, ['checkpoint', 'create', 'plan', '--title', 'Start', '--decision', 'Ship in May', '--author', 'ann']);
    srv = await startServer(tmp.db, { args: ['--quiet'] });
  });
  after(async () => { await srv?.stop(); tmp?.cleanup(); });

  test('the UI invents no author: empty Author, none sent, none recorded as "person"', async () => {
    const page = await guardedPage(browser, { origin: srv.url });
    const commits = bodies(page, '/chat/commit');
    const restores = bodies(page, '/api/ops/restore');
    await page.goto(`${srv.url}/#/s/plan/new`);
    const author = page.locator('.editor-save input[aria-label=Author]');
    await author.waitFor();
    assert.equal(await author.inputValue(), '', 'no author is filled in for the person');
    await axe(page, 'the editor, not signed in');
    await shots(page, 'editor-author');
    await saveNew(page, `${srv.url}/#/s/plan/new`, 'Nobody named');
    assert.equal(commits.length, 1);
    assert.equal('author' in commits[0], false, 'no author sent');
    assert.notEqual(head(tmp.db, 'plan').author, 'person');
    await restoreRow(page, `${srv.url}/#/s/plan`, 'Start');
    assert.equal(restores.length, 1);
    assert.equal('author' in restores[0], false, 'no author sent with a restore');
    const restored = head(tmp.db, 'plan');
    assert.equal(restored.title, 'Start');
    assert.notEqual(restored.author, 'person');

    // an author the person types is sent, recorded, and kept for the next write
    await page.goto(`${srv.url}/#/s/plan/new`);
    await page.locator('label.block >> input[aria-label=Title]').waitFor();
    await page.fill('label.block >> input[aria-label=Title]', 'Named');
    await page.fill('.editor-save input[aria-label=Author]', 'bea');
    await page.locator('.editor-save input[aria-label=Author]').dispatchEvent('change');
    await page.click('button:has-text("Save checkpoint")');
    await page.waitForURL(/\/c\/[0-9a-f]{64}$/);
    assert.equal(commits.at(-1).author, 'bea');
    assert.equal(head(tmp.db, 'plan').author, 'bea');
    await restoreRow(page, `${srv.url}/#/s/plan`, 'Nobody named');
    assert.equal(restores.at(-1).author, 'bea');
    assert.equal(head(tmp.db, 'plan').author, 'bea');
    page.guard.check();
    await page.close();
  });
});

describe('signed in with a person\'s token', () => {
  let tmp;
  let srv;
  let token;
  before(async () => {
    tmp = tempDb();
    cli(tmp.db, ['space', 'create', 'plan']);
    cli(tmp.db, ['checkpoint', 'create', 'plan', '--title', 'Start', '--decision', 'Ship in May', '--author', 'ann']);
    cli(tmp.db, ['user', 'add', 'olga']);
    token = cli(tmp.db, ['token', 'create', 'olga']);
    cli(tmp.db, ['grant', 'olga', 'plan', 'owner']);
    srv = await startServer(tmp.db, { args: ['--quiet'] });
  });
  after(async () => { await srv?.stop(); tmp?.cleanup(); });

  test('the editor shows who the checkpoint will be recorded as, read-only, and sends no author', async () => {
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await page.addInitScript(() => localStorage.setItem('smriti.author', 'someone-else'));
    const commits = bodies(page, '/chat/commit');
    const restores = bodies(page, '/api/ops/restore');
    await page.goto(`${srv.url}/`);
    await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
    await page.fill('dialog input[name=token]', token);
    await page.click('dialog >> text=Sign in');
    await page.locator('h1', { hasText: 'Spaces' }).waitFor();
    await page.goto(`${srv.url}/#/s/plan/new`);
    await page.locator('.editor-save .recorded-as', { hasText: 'Recorded as olga' }).waitFor();
    assert.equal(await page.locator('.editor-save input').count(), 0, 'no Author box the server would ignore');
    await page.locator('.against', { hasText: 'hold the same state' }).waitFor();
    assert.doesNotMatch(await page.locator('.against').textContent(), /null/, 'no stray "null" beside the difference');
    await axe(page, 'the editor, signed in');
    await shots(page, 'editor-recorded-as');
    await saveNew(page, `${srv.url}/#/s/plan/new`, 'Olga\'s view');
    assert.equal('author' in commits[0], false);
    assert.equal(head(tmp.db, 'plan').author, 'olga');
    await restoreRow(page, `${srv.url}/#/s/plan`, 'Start');
    assert.equal('author' in restores[0], false);
    assert.equal(head(tmp.db, 'plan').author, 'olga');
    page.guard.check();
    await page.close();
  });
});
