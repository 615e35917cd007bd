// merge.test.mjs -- merging in the web UI, in a real headless Chromium
// against a real `smriti serve`: a fork merged back with three conflicts
// settled one each by ours, theirs and an edit, refused first because HEAD
// moved after the preview, the result read back through the API (the merged
// state and both parents); and a fork's header showing how far it is ahead
// of and behind the Space it came from, and whether it would merge cleanly
// (then, after a conflicting write elsewhere, how many conflicts).  Every
// page is guarded (browser.mjs), the views pass axe, and the screenshots
// (light, dark, 420 px) go to tests/browser/screenshots/.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer, expectStatus } from '../js/http-helpers.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let tmp;
let srv;
let browser;
let page;

const patch = (space, body) => expectStatus(srv, 'PATCH', `/v4/repos/${space}/head`, 201, { body });
const head = async (space) => expectStatus(srv, 'GET', `/repos/${space}/head`, 200);

before(async () => {
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'plan']);
  ok(tmp.db, ['commit', 'plan', '-m', 'Start', '--summary', 'Base summary', '--decision', 'Use C',
    '--task', 'Ship', '--task', 'Write docs']);
  ok(tmp.db, ['fork', 'plan', '--into', 'plan-alt']);
  ok(tmp.db, ['space', 'create', 'web']);
  ok(tmp.db, ['commit', 'web', '-m', 'Start', '--decision', 'Use C']);
  ok(tmp.db, ['fork', 'web', '--into', 'web-fork']);
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

async function settle() {
  await page.locator('fieldset.conflict[data-field="summary"] input[value="ours"]').check();
  await page.locator('fieldset.conflict[data-field="tasks"] input[value="theirs"]').check();
  await page.locator('fieldset.conflict[data-field="artifacts"] input[value="edit"]').check();
  await page.locator('fieldset.conflict[data-field="artifacts"] textarea').fill('Edited: both trains and planes');
}

describe('merge a fork back, its conflicts settled per item', () => {
  test('ours, theirs and an edit; a HEAD that moved is refused; the result read back through the API', async () => {
    const notes = (content) => ({ name: 'notes', kind: 'text', content });
    await patch('plan', { summary: 'Ours: fly', done: ['Ship'], add: { artifacts: [notes('planes')] } });
    await patch('plan-alt', { summary: 'Theirs: train', drop: { tasks: ['Ship'] },
      add: { decisions: ['Use Make'], artifacts: [notes('trains')] } });
    const theirs = await head('plan-alt');

    await open('#/s/plan');
    await page.locator('nav.tabs a', { hasText: 'Merge' }).click();
    // the names offered are asked for as one types, this Space's left out: not every Space's
    const offered = () => page.locator('#merge-spaces option').evaluateAll((os) => os.map((o) => o.value).sort());
    const asked = page.waitForRequest((r) => r.url().includes('/v4/overview?limit=21&match=alt'));
    await page.locator('#merge-other').pressSequentially('alt');
    await asked;
    await page.waitForFunction(() => document.querySelectorAll('#merge-spaces option').length === 1);
    assert.deepEqual(await offered(), ['plan-alt']);
    await page.locator('#merge-other').fill('plan-alt');
    await page.locator('#merge-other').press('Enter');
    await page.locator('fieldset.conflict').nth(2).waitFor();
    assert.match(await page.locator('.merge-summary').textContent(), /plan-alt is 1 ahead and 1 behind · 3 conflicts/);
    assert.deepEqual(await page.locator('fieldset.conflict legend').allTextContents(),
      ['Summary', 'Tasks · Ship', 'Artifacts · notes']);
    assert.equal(await page.locator('#merge-title').inputValue(), 'Merge plan-alt into plan', 'the server\'s default title');
    await axe(page, 'merge view with conflicts');
    await shot(page, 'merge-conflicts');

    // Merge before every conflict is settled: said, nothing sent
    await page.locator('.merge-commit button', { hasText: 'Merge' }).click();
    assert.match(await page.locator('.merge-msg').textContent(), /Choose ours, theirs or edit for every conflict/);
    await settle();
    await shot(page, 'merge-settled');

    // someone writes to plan meanwhile: the merge is refused and says so
    await patch('plan', { add: { decisions: ['Use Meson'] } });
    const ours = await head('plan');
    page.guard.expect(409, '/merge');
    await page.locator('.merge-commit button', { hasText: 'Merge' }).click();
    await page.locator('.merge-msg.error', { hasText: 'moved' }).waitFor();
    assert.match(await page.locator('.merge-msg').textContent(), /HEAD of Space 'plan' moved .* nothing was written/);
    assert.equal((await head('plan')).commit_hash, ours.commit_hash, 'nothing written');
    await shot(page, 'merge-head-moved');
    page.guard.check();

    await page.locator('.merge-msg button', { hasText: 'Preview again' }).click();
    await page.locator('fieldset.conflict').nth(2).waitFor();
    assert.match(await page.locator('.merge-summary').textContent(), /1 ahead and 2 behind/);
    await settle();
    await page.locator('.merge-commit button', { hasText: 'Merge' }).click();
    await page.waitForFunction(() => /#\/s\/plan\/c\/[0-9a-f]{64}$/.test(location.hash));

    const m = await head('plan');
    assert.equal(m.title, 'Merge plan-alt into plan');
    assert.equal(m.parent_hash, ours.commit_hash, 'first parent: HEAD when merged');
    assert.equal(m.merge_parent_hash, theirs.commit_hash, 'second parent: the fork');
    assert.equal(m.summary, 'Ours: fly', 'ours');
    assert.deepEqual(m.tasks, [{ text: 'Write docs', status: 'open' }], 'theirs: Ship dropped');
    assert.deepEqual(m.artifacts.map((a) => [a.name, a.content]), [['notes', 'Edited: both trains and planes']], 'edited');
    assert.deepEqual(m.decisions.map((d) => d.text), ['Use C', 'Use Meson', 'Use Make'], 'the clean parts merged too');
    assert.equal(`#/s/plan/c/${m.commit_hash}`, await page.evaluate(() => location.hash));
    page.guard.check();
    await page.close();
  });
});

describe('a fork\'s standing against the Space it came from', () => {
  test('ahead/behind and "would merge cleanly" in the header, then "1 conflict"; Merge into opens the preview', async () => {
    await patch('web-fork', { add: { decisions: ['Use Make'] } });
    await patch('web-fork', { add: { decisions: ['Use CI'] } });
    await patch('web', { add: { decisions: ['Use SQLite'] } });
    await open('#/s/web-fork');
    const standing = page.locator('.fork-standing');
    await standing.waitFor();
    assert.match(await standing.textContent(), /^2 ahead of web, 1 behind would merge cleanly Merge into web…$/);
    await axe(page, 'a fork\'s header');
    await shot(page, 'fork-standing');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'fork-standing-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // a conflicting write elsewhere (the CLI, an agent) shows without a reload
    await patch('web', { summary: 'web says' });
    await patch('web-fork', { summary: 'fork says' });
    await page.locator('.fork-standing', { hasText: '1 conflict' }).waitFor();
    assert.match(await standing.textContent(), /3 ahead of web, 2 behind 1 conflict/);

    // keyboard: the link is reachable and opens the preview of merging the fork into web
    await page.locator('.fork-standing a.merge-link').focus();
    await page.keyboard.press('Enter');
    await page.locator('fieldset.conflict[data-field="summary"]').waitFor();
    assert.equal(await page.locator('#merge-dir').inputValue(), 'into');
    assert.match(await page.locator('.merge-summary').textContent(), /web-fork into web: web-fork is 3 ahead and 2 behind · 1 conflict/);
    await page.locator('fieldset.conflict input[value="theirs"]').focus();
    await page.keyboard.press('Space');
    await shot(page, 'merge-into-origin');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'merge view, dark');
    await shot(page, 'merge-into-origin-dark');
    await page.setViewportSize({ width: 420, height: 820 });
    await shot(page, 'merge-into-origin-420');
    await page.goto(`${srv.url}/#/s/web-fork`);
    await page.locator('.fork-standing').waitFor();
    await shot(page, 'fork-standing-420');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });

    // a clean merge: what will change, then Merge
    await patch('web', { summary: 'fork says' });
    await page.goto(`${srv.url}/#/s/web-fork/merge/web/into`);
    await page.locator('.merge-changes li').first().waitFor();
    const changes = await page.locator('.merge-changes li').allTextContents();
    assert.deepEqual(changes, ['Decisions + Use Make', 'Decisions + Use CI']);
    assert.match(await page.locator('.merge-summary').textContent(), /would merge cleanly/);
    await axe(page, 'a clean merge preview');
    await shot(page, 'merge-clean');
    await page.setViewportSize({ width: 420, height: 820 });
    await shot(page, 'merge-clean-420');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.locator('.merge-commit button', { hasText: 'Merge' }).click();
    await page.waitForFunction(() => /#\/s\/web\/c\/[0-9a-f]{64}$/.test(location.hash));
    const m = await head('web');
    assert.equal(m.merge_parent_hash, (await head('web-fork')).commit_hash);
    assert.equal(m.title, 'Merge web-fork into web');
    page.guard.check();
    await page.close();
  });
});

describe('the Spaces list', () => {
  test('each fork shows how far it is ahead of and behind its origin, from one request for the whole list', async () => {
    ok(tmp.db, ['space', 'create', 'docs']);
    ok(tmp.db, ['commit', 'docs', '-m', 'Start', '--decision', 'Use Markdown']);
    ok(tmp.db, ['fork', 'docs', '--into', 'docs-fork']);
    await patch('docs-fork', { add: { decisions: ['Use Pandoc'] } });
    await patch('docs', { add: { decisions: ['Use man pages'] } });
    await patch('docs', { add: { decisions: ['Use scdoc'] } });
    page = await guardedPage(browser, { origin: srv.url });
    const asked = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    await page.goto(`${srv.url}/#/`);
    const standing = page.locator('.space-row[data-name="docs-fork"] .fork-standing');
    await standing.waitFor();
    assert.equal(await standing.textContent(), '1 ahead of docs, 2 behind');
    assert.equal(await standing.locator('a').getAttribute('href'), '#/s/docs');
    assert.equal(await page.locator('.space-row[data-name="docs"] .fork-standing').count(), 0, 'docs is no fork');
    assert.equal(await page.locator('.space-row .fork-standing').count(), 3, 'plan-alt, web-fork, docs-fork');
    // one request answers for every row; nothing is asked per row
    assert.equal(asked.filter((p) => p === '/api/ops/space.forks').length, 1);
    assert.deepEqual(asked.filter((p) => /\/(merge|reflog)$/.test(p)), []);
    await axe(page, 'the Spaces list with forks');
    await shot(page, 'spaces-forks');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'spaces-forks-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 420, height: 820 });
    await shot(page, 'spaces-forks-420');
    await page.setViewportSize({ width: 1280, height: 800 });
    // a write elsewhere (an agent, the CLI) shows without a reload
    await patch('docs-fork', { add: { decisions: ['Use HTML'] } });
    await page.locator('.space-row[data-name="docs-fork"] .fork-standing', { hasText: '2 ahead of docs, 2 behind' }).waitFor();
    page.guard.check();
    await page.close();
  });
});
