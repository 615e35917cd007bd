// search.test.mjs -- the web UI's search box in a real headless Chromium
// against a real `smriti serve`: the header's box opens the search view,
// matches are marked, each result says where the item first appeared and
// whether HEAD still holds it, hostile text stays text, a result opens its
// checkpoint, and the view passes axe.  Screenshots go to
// tests/browser/screenshots/ (not committed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let tmp;
let srv;
let browser;

before(async () => {
  tmp = tempDb();
  const db = tmp.db;
  ok(db, ['space', 'create', 'infra']);
  ok(db, ['commit', '--replace', 'infra', '--title', 'Event bus', '--decision', 'Use Kafka for the event bus', '--author', 'ann']);
  ok(db, ['commit', '--replace', 'infra', '--title', 'Kafka is too heavy', '--decision', 'Drop Kafka; use Postgres LISTEN/NOTIFY',
    '--question', '<img src=x onerror=alert(1)> kafka?', '--author', 'bo']);
  ok(db, ['space', 'create', 'web']);
  ok(db, ['commit', '--replace', 'web', '--title', 'Front end', '--decision', 'No Kafka in the browser', '--author', 'cy']);
  ok(db, ['space', 'create', 'pay']);
  ok(db, ['commit', '--replace', 'pay', '--title', 'Plan', '--decision', 'Keep the foreign keys', '--author', 'dee']);
  ok(db, ['commit', '--replace', 'pay', '--title', 'Step 30', '--decision', 'Drop the foreign keys', '--author', 'eve']);
  ok(db, ['fork', 'pay', '--into', 'pay-b']);
  ok(db, ['fork', 'pay', '--into', 'pay-c']);
  ok(db, ['fork', 'pay~1', '--into', 'pay-d']);
  srv = await startServer(db, { args: ['--quiet'] });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  tmp?.cleanup();
});

test('the header search box finds what was decided, where and by whom', async () => {
  const page = await guardedPage(browser, { origin: srv.url });
  await page.goto(`${srv.url}/`);
  await page.locator('.space-row[data-name="infra"]').waitFor();
  await page.keyboard.press('s');
  await page.keyboard.type('kafka');
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/search\/kafka$/);
  const results = page.locator('ol.results li.result');
  await results.first().waitFor();
  assert.equal(await results.count(), 5);
  assert.match(await page.locator('.search-status').textContent(), /^5 matches for “kafka”\.$/);
  // the best match is a title; every snippet marks the word
  assert.equal(await results.first().locator('.chip.field').textContent(), 'title');
  assert.equal(await results.first().locator('mark').first().textContent(), 'Kafka');
  const gone = results.filter({ hasText: 'Use Kafka for the event bus' });
  assert.equal(await gone.locator('.badge.gone').textContent(), 'no longer in HEAD');
  assert.equal(await gone.locator('.chip.author').textContent(), 'ann');
  assert.equal(await results.filter({ hasText: 'Drop Kafka' }).locator('.badge.in-head').count(), 1);
  // hostile text is shown as text
  assert.equal(await page.locator('ol.results img').count(), 0);
  assert.match(await results.filter({ hasText: 'onerror' }).locator('.snippet').textContent(), /<img src=x onerror=alert\(1\)> kafka\?/);
  await axe(page, 'Search');
  await shot(page, 'search');
  // a phrase narrows it; the search box of the view runs the next query
  await page.fill('.search-form input[name=q]', '"drop kafka"');
  await page.click('.search-form button[type=submit]');
  await page.waitForURL(/#\/search\/%22drop%20kafka%22$/);
  await page.locator('.search-status', { hasText: '1 match for' }).waitFor();
  // a result opens its checkpoint in the Space's history
  await results.first().locator('a').click();
  await page.waitForURL(/#\/s\/infra\/c\/[0-9a-f]{64}$/);
  await page.locator('.detail h2.ck-title', { hasText: 'Kafka is too heavy' }).waitFor();
  page.guard.check();
  await page.close();
});

test('Until keeps to what was written by the end of the day picked, and goes into the route', async () => {
  const page = await guardedPage(browser, { origin: srv.url });
  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/v4/search')) asked.push(new URL(r.url()).searchParams); });
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);   // the server's days are UTC
  const today = day(Date.now());
  await page.goto(`${srv.url}/#/search/kafka`);
  await page.locator('.search-status', { hasText: '5 matches for “kafka”.' }).waitFor();
  await page.fill('.search-filters input[name=until]', day(Date.now() - 86400000));
  await page.click('.search-form button[type=submit]');
  await page.locator('.search-status', { hasText: 'Nothing matches “kafka”.' }).waitFor();
  // everything here was written today: Until today finds it all
  await page.fill('.search-filters input[name=until]', today);
  await page.click('.search-form button[type=submit]');
  await page.waitForURL(new RegExp(`#/search/kafka/until=${today}$`));
  await page.locator('.search-status', { hasText: '5 matches for “kafka”.' }).waitFor();
  assert.equal(asked.at(-1).get('until'), `${today} 23:59:59`);
  // with Since the same day: a range of one day (the status reads as before,
  // so wait for the answer itself, which a reload would otherwise cut)
  await page.fill('.search-filters input[name=since]', today);
  const ranged = page.waitForResponse((r) => r.url().includes('/v4/search') &&
    new URL(r.url()).searchParams.get('since') === today);
  await page.click('.search-form button[type=submit]');
  const answer = await ranged;
  assert.equal(answer.status(), 200);
  await answer.finished();
  await page.waitForURL(new RegExp(`#/search/kafka/since=${today}/until=${today}$`));
  await page.locator('.search-status', { hasText: '5 matches for “kafka”.' }).waitFor();
  await page.reload();
  await page.locator('.search-status', { hasText: '5 matches for “kafka”.' }).waitFor();
  assert.equal(await page.inputValue('.search-filters input[name=until]'), today);
  await axe(page, 'Search with Since and Until');
  await shot(page, 'search-until');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'search-until-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 900 });
  await shot(page, 'search-until-420');
  page.guard.check();
  await page.close();
});

test('no matches and a query with no words say so', async () => {
  const page = await guardedPage(browser, { origin: srv.url });
  await page.goto(`${srv.url}/#/search/zeppelin`);
  await page.locator('.search-status', { hasText: 'Nothing matches “zeppelin”.' }).waitFor();
  page.guard.expect(400, '/v4/search');
  await page.goto(`${srv.url}/#/search/%22%22`);
  await page.locator('.search-status', { hasText: 'nothing to search for' }).waitFor();
  await shot(page, 'search-empty');
  page.guard.check();
  await page.close();
});

test('a checkpoint held by several Spaces is listed once, naming them; filters map to the API', async () => {
  const page = await guardedPage(browser, { origin: srv.url });
  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/v4/search')) asked.push(new URL(r.url()).searchParams); });
  await page.goto(`${srv.url}/#/search/foreign`);
  const results = page.locator('ol.results li.result');
  await page.locator('.search-status', { hasText: '2 matches for “foreign”.' }).waitFor();
  assert.equal(await results.count(), 2);
  const drop = results.filter({ hasText: 'Drop the foreign keys' });
  assert.deepEqual(await drop.locator('.chip.space').allTextContents(), ['pay', 'pay-b', 'pay-c']);
  assert.equal(await drop.locator('.badge').textContent(), 'in HEAD');
  const keep = results.filter({ hasText: 'Keep the foreign keys' });
  assert.deepEqual(await keep.locator('.chip.space').allTextContents(), ['pay', 'pay-b', 'pay-c', 'pay-d']);
  assert.equal(await keep.locator('.badge').textContent(), 'in HEAD of pay-d');
  assert.equal(await keep.locator('.also a').count(), 3);
  await axe(page, 'Search with several Spaces');
  await shot(page, 'search-spaces');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'search-spaces-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 900 });
  await shot(page, 'search-spaces-420');
  await page.setViewportSize({ width: 1280, height: 800 });

  // the filters, reached by keyboard, go into the route and the API's parameters
  // the Space filter offers names as one types (not a list of every Space)
  await page.locator('#search-spaces option[value="pay-d"]').waitFor({ state: 'attached' });
  await page.focus('.search-form input[name=q]');
  await page.keyboard.press('Tab');   // chat turns too
  await page.keyboard.press('Tab');   // Search
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.name), 'space');
  await page.keyboard.type('pay-');
  await page.waitForFunction(() => [...document.querySelectorAll('#search-spaces option')].every((o) => o.value.startsWith('pay-')));
  assert.deepEqual(await page.locator('#search-spaces option').evaluateAll((os) => os.map((o) => o.value).sort()), ['pay-b', 'pay-c', 'pay-d']);
  await page.fill('.search-filters input[name=space]', 'pay-d');
  await page.selectOption('.search-filters select[name=field]', 'decisions');
  await page.fill('.search-filters input[name=author]', 'dee');
  await page.fill('.search-filters input[name=since]', '2000-01-01');
  await page.focus('.search-filters input[name=author]');
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/search\/foreign\/space=pay-d\/field=decisions\/author=dee\/since=2000-01-01$/);
  await page.locator('.search-status', { hasText: '1 match for “foreign”.' }).waitFor();
  const last = asked.at(-1);
  assert.deepEqual([last.get('space'), last.get('field'), last.get('author'), last.get('since')], ['pay-d', 'decisions', 'dee', '2000-01-01']);
  assert.deepEqual(await results.first().locator('.chip.space').allTextContents(), ['pay-d']);
  // a reload keeps the filters
  await page.reload();
  await page.locator('.search-status', { hasText: '1 match for “foreign”.' }).waitFor();
  assert.equal(await page.inputValue('.search-filters select[name=field]'), 'decisions');
  assert.equal(await page.inputValue('.search-filters input[name=author]'), 'dee');
  assert.equal(await page.inputValue('.search-filters input[name=space]'), 'pay-d');
  await axe(page, 'Search with filters');
  await shot(page, 'search-filters');
  await page.setViewportSize({ width: 420, height: 900 });
  await shot(page, 'search-filters-420');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'search-filters-420-dark');
  // a later date finds nothing
  await page.fill('.search-filters input[name=since]', '2999-01-01');
  await page.click('.search-form button[type=submit]');
  await page.locator('.search-status', { hasText: 'Nothing matches “foreign”.' }).waitFor();
  page.guard.check();
  await page.close();
});
