// teams.test.mjs -- the web UI on a server with users (issue 14): signing in
// with a person's token, who is signed in, signing out, and what a role
// does not allow staying out of sight (a reader sees history and sessions
// but no write control; an owner sees rename and delete), and a reply's
// stream closing when the token is revoked while it runs.  Every page is
// guarded (browser.mjs) and passes axe; screenshots go to
// tests/browser/screenshots/ (not committed).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, run } from '../js/helpers.mjs';
import { startServer, request } from '../js/http-helpers.mjs';
import { providerEnv } from '../js/draft-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { SMRITI_FULL } from '../js/helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let tmp;
let srv;
let fake;
let browser;
const tokens = {};

function cli(args) {
  const r = run(tmp.db, args, { bin: SMRITI_FULL });
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

before(async () => {
  tmp = tempDb();
  cli(['space', 'create', 'plan', '--description', 'the team plan']);
  cli(['checkpoint', 'create', 'plan', '--title', 'Start', '--decision', 'Ship in May']);
  cli(['checkpoint', 'create', 'plan', '--title', 'Scope cut', '--decision', 'Drop the mobile app']);
  cli(['space', 'create', 'hidden']);
  for (const u of ['ravi', 'olga']) {
    cli(['user', 'add', u]);
    tokens[u] = cli(['token', 'create', u]);
  }
  cli(['grant', 'ravi', 'plan', 'reader']);
  cli(['grant', 'olga', 'plan', 'owner']);
  cli(['grant', 'olga', 'hidden', 'owner']);
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(tmp.db, { args: ['--quiet'], env: providerEnv(fake) });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

async function signIn(page, token) {
  await page.goto(`${srv.url}/`);
  await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
  await page.fill('dialog input[name=token]', token);
  await page.click('dialog >> text=Sign in');
  await page.locator('h1', { hasText: 'Spaces' }).waitFor();
}

describe('signing in as a person', () => {
  test('a reader sees who is signed in, its Spaces only, and no write control', async () => {
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tokens.ravi);
    await page.locator('.who', { hasText: 'Signed in as ravi' }).waitFor();
    assert.equal(await page.evaluate(() => document.cookie), '', 'no script can read the token');
    const names = await page.locator('.space-row').evaluateAll((rows) => rows.map((r) => r.dataset.name));
    assert.deepEqual(names, ['plan'], 'a Space ravi cannot read is not listed');
    assert.equal(await page.locator('.space-row[data-name="plan"] button', { hasText: 'Delete' }).count(), 0);
    await page.locator('.space-row[data-name="plan"] .chip.role', { hasText: 'reader' }).waitFor();
    await shot(page, 'teams-reader-spaces');
    await axe(page, 'the Spaces list of a reader');

    await page.goto(`${srv.url}/#/s/plan`);
    await page.locator('.space[data-role="reader"]').waitFor();
    await page.getByText('Start', { exact: true }).first().click();
    await page.locator('h2, h3', { hasText: 'Start' }).first().waitFor().catch(() => {});
    await page.locator('button', { hasText: 'Compare with…' }).waitFor();
    for (const label of ['Restore…', 'Review', 'Chat from here']) {
      assert.equal(await page.locator('button', { hasText: label }).first().isVisible().catch(() => false), false,
        `a reader does not see '${label}'`);
    }
    assert.equal(await page.locator('.tabs a', { hasText: 'New checkpoint' }).isVisible(), false);
    assert.equal(await page.locator('.tabs a', { hasText: 'Ingest' }).isVisible(), false);
    assert.ok(await page.locator('button', { hasText: 'Fork…' }).isVisible(), 'forking into a Space of one\'s own stays');
    await shot(page, 'teams-reader-history');
    await axe(page, 'the history of a reader');
    page.guard.check();

    // signing out asks again
    await page.click('.who >> text=Sign out');
    await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
    await shot(page, 'teams-sign-in');
    await page.close();
  });

  test('an owner sees rename and delete', async () => {
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tokens.olga);
    await page.locator('.who', { hasText: 'Signed in as olga' }).waitFor();
    await page.locator('.space-row[data-name="plan"] button', { hasText: 'Rename' }).waitFor();
    await page.goto(`${srv.url}/#/s/plan`);
    await page.locator('.space[data-role="owner"]').waitFor();
    // the role is known before the tabs are drawn (space.js): wait for the tab
    // itself, which stays hidden (and this times out) for a reader
    await page.locator('.tabs a', { hasText: 'New checkpoint' }).waitFor({ timeout: 5000 });
    assert.ok(await page.locator('.tabs a', { hasText: 'Ingest' }).isVisible());
    await shot(page, 'teams-owner-space');
    page.guard.check();
    await page.close();
  });

  test("a reader who opens the editor's or Ingest's address is told it can only read", async () => {
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tokens.ravi);
    for (const tab of ['new', 'ingest']) {
      await page.goto(`${srv.url}/#/s/plan/${tab}`);
      const note = page.locator('.read-only');
      await note.waitFor();
      assert.match(await note.textContent(), /can read this Space but not write to it/);
      assert.equal(await page.locator('.space-body form, .space-body textarea').count(), 0, `no form on ${tab}`);
      assert.equal(await page.locator('button', { hasText: /Save checkpoint|Create session/ }).count(), 0);
      await axe(page, `a reader on ${tab}`);
      await shot(page, `teams-reader-${tab}`);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 420, height: 800 });
    await axe(page, 'a reader on ingest, dark, 420 px');
    await shot(page, 'teams-reader-ingest-dark-narrow');
    page.guard.check();
    await page.close();
  });

  test('signing out on a Space the next person cannot read goes to the Spaces list', async () => {
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tokens.olga);
    await page.goto(`${srv.url}/#/s/hidden`);
    await page.locator('.space[data-role="owner"]').waitFor();
    await page.click('.who >> text=Sign out');
    await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
    await page.fill('dialog input[name=token]', tokens.ravi);
    await page.click('dialog >> text=Sign in');
    await page.locator('h1', { hasText: 'Spaces' }).waitFor();
    assert.match(page.url(), /#\/$/);
    // two rounds of polling later, nothing asked for the Space ravi cannot read
    const asked = [];
    page.on('request', (r) => { if (r.url().includes('hidden')) asked.push(r.url()); });
    for (let i = 0; i < 2; i++) await page.waitForRequest((r) => r.url().includes('/v4/changes'));
    assert.deepEqual(asked, []);
    page.guard.check();
    await page.close();
  });
});

describe('a link to a Space one may not read', () => {
  test('says no Space by that name is open to the one signed in, word for word as for one that is not there, with the way back and signing in as someone else', async () => {
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tokens.ravi);
    // the server answers 404 for both (docs/security.md): the page must not tell them apart
    page.guard.expect(404, '/v4/');
    const words = async (name) => {
      await page.goto(`${srv.url}/#/s/${name}`);
      const box = page.locator('.no-space');
      await box.waitFor();
      assert.equal(await page.locator('.space nav.tabs a').count(), 0, 'no tabs for a Space that cannot be opened');
      return (await box.textContent()).replaceAll(name, 'NAME');
    };
    const hidden = await words('hidden');
    assert.match(hidden, /Signed in as ravi/);
    assert.match(hidden, /no Space “NAME” you may read/);
    assert.doesNotMatch(hidden, /There is no Space/);
    assert.equal(await words('never-made'), hidden);
    await axe(page, 'a Space one may not read');
    await shot(page, 'no-space-signed-in');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'no-space-signed-in-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 420, height: 800 });
    await shot(page, 'no-space-signed-in-420');
    await page.setViewportSize({ width: 1280, height: 800 });
    // the way back
    await words('hidden');
    await page.click('.no-space a >> text=Back to Spaces');
    await page.locator('h1', { hasText: 'Spaces' }).waitFor();
    // signing in as someone who may read it opens it at the same address
    await words('hidden');
    await page.click('.no-space button >> text=Sign in as someone else');
    await page.locator('dialog', { hasText: 'wants your token' }).waitFor();
    await page.fill('dialog input[name=token]', tokens.olga);
    await page.click('dialog >> text=Sign in');
    await page.locator('.space[data-role="owner"]').waitFor();
    assert.match(page.url(), /#\/s\/hidden$/);
    await page.locator('.who', { hasText: 'Signed in as olga' }).waitFor();
    page.guard.check();
    await page.close();
  });
});

describe('a reply streaming when access ends', () => {
  test('the token revoked mid-reply: the stream closes with the reason, the reply is stored whole', async () => {
    cli(['user', 'add', 'mia']);
    cli(['grant', 'mia', 'plan', 'writer']);
    const tok = JSON.parse(cli(['token', 'create', 'mia', '--json']));
    const auth = (token) => ({ Authorization: `Bearer ${token}` });
    const sid = (await request(srv, 'POST', '/v4/repos/plan/sessions', { body: {}, headers: auth(tok.token) })).json.id;
    await browser.clearCookies();
    const page = await guardedPage(browser, { origin: srv.url });
    await signIn(page, tok.token);
    await page.goto(`${srv.url}/#/s/plan/chat/${sid}`);
    await page.locator('textarea[aria-label=Message]').waitFor();
    const reply = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    fake.script([{ reply, deltas: 40, trickle_ms: 8000, provider: 'openai' }]);
    await page.selectOption('select[aria-label=Provider]', 'openai');
    await page.fill('textarea[aria-label=Message]', 'Tell it slowly');
    await page.keyboard.press('Enter');
    await page.locator('.turn.assistant', { hasText: 'w1' }).waitFor();
    // from here on the page's own requests are refused: the token is gone
    page.guard.expect(401, srv.url);
    cli(['token', 'revoke', tok.id]);
    await page.locator('.toast.error', { hasText: 'the stream was closed: this token was revoked' }).waitFor();
    await shot(page, 'teams-stream-closed');
    // the reply went on without the stream and was stored whole
    const olga = auth(tokens.olga);
    let turns = [];
    for (let i = 0; i < 400; i++) {
      turns = (await request(srv, 'GET', `/v4/sessions/${sid}`, { headers: olga })).json.turns;
      if (turns.some((t) => t.role === 'assistant')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(turns.filter((t) => t.role === 'assistant').map((t) => t.content), [reply]);
    page.guard.check();
    await page.close();
  });
});
