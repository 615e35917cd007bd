// chat-actions.test.mjs -- chat message actions (issue 26) in a real
// headless Chromium against a real `smriti serve` and the fake provider on
// loopback: copy a message and a code block, regenerate a reply and switch
// between its versions (the choice outlives a reload and is what the model
// gets next), edit and re-send a question (the old one kept), continue a
// reply after Stop (the model gets the partial reply; the new text joins
// the same bubble), and a new session from a turn.  Each is reached by
// keyboard somewhere, the pages are axe-clean, and screenshots in light,
// dark and at 420 px go to tests/browser/screenshots/ (not committed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok } from '../js/helpers.mjs';
import { startServer } from '../js/http-helpers.mjs';
import { providerEnv } from '../js/draft-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { launch, guardedPage, axe, shot } from './browser.mjs';

let fake;
let tmp;
let srv;
let browser;
let page;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'talk']);
  srv = await startServer(tmp.db, { args: ['--quiet'], env: providerEnv(fake, { SMRITI_PROVIDER_TIMEOUT_MS: '20000', SMRITI_PROVIDER_RETRIES: '0' }) });
  browser = await launch();
});

after(async () => {
  await browser?.cleanup();
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

const api = async (path, opts) => (await fetch(`${srv.url}${path}`, opts)).json();

async function newSession() {
  page = await guardedPage(browser, { origin: srv.url });
  await page.goto(`${srv.url}/#/s/talk/chat`);
  await page.click('text=New session');
  await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
  await page.selectOption('select[aria-label=Provider]', 'openai');
  return page.url().split('/').pop();
}

async function ask(text, reply) {
  if (reply) fake.script([{ reply, provider: 'openai' }]);
  await page.fill('textarea[aria-label=Message]', text);
  await page.keyboard.press('Enter');
}

const reply = (text) => page.locator('.turn.assistant:not(.streaming)', { hasText: text });
const sent = () => fake.requests().at(-1).body.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);

// light, dark and 420 px of what is on the page now
async function shots(name) {
  await shot(page, name);
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, `${name}, dark`);
  await shot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 420, height: 800 });
  await shot(page, `${name}-420`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function done() {
  page.guard.check();
  await page.close();
}

test('copy a message, and a code block of a reply with its own button', async () => {
  await newSession();
  await ask('Show me a command', 'Run this:\n\n```sh\necho hello\n```\n\nThat is all.');
  const r = reply('That is all.');
  await r.waitFor();
  const code = r.getByRole('button', { name: 'Copy code' });
  await code.click();
  await r.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'echo hello\n');
  // the message's own Copy, by keyboard
  const actions = r.locator('.turn-actions');
  await actions.getByRole('button', { name: 'Copy', exact: true }).focus();
  await page.keyboard.press('Enter');
  await actions.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Run this:\n\n```sh\necho hello\n```\n\nThat is all.');
  await axe(page, 'a reply with its actions and a code block');
  await shots('chat-actions-copy');
  await done();
});

test('regenerate keeps the first reply; ‹ › switches back, which outlives a reload and is what the model gets next', async () => {
  const sid = await newSession();
  await ask('Name a colour', 'Blue.');
  await reply('Blue.').waitFor();
  fake.script([{ reply: 'Green.', provider: 'openai' }]);
  await reply('Blue.').getByRole('button', { name: 'Regenerate' }).click();
  await reply('Green.').locator('.version-n', { hasText: '2 / 2' }).waitFor();
  assert.deepEqual(sent(), [['user', 'Name a colour']], 'the old reply is not sent again');
  assert.equal(await reply('Blue.').count(), 0, 'one reply shown at a time');
  await shots('chat-actions-regenerated');
  // back to the first, by keyboard
  await reply('Green.').getByRole('button', { name: 'Previous reply' }).focus();
  await page.keyboard.press('Enter');
  await reply('Blue.').locator('.version-n', { hasText: '1 / 2' }).waitFor();
  await page.waitForFunction(async (id) => (await (await fetch(`/v4/sessions/${id}`)).json()).leaf_seq === 2, sid);
  await page.guard.reload();
  await reply('Blue.').locator('.version-n', { hasText: '1 / 2' }).waitFor();
  await ask('And another?', 'Red.');
  await reply('Red.').waitFor();
  assert.deepEqual(sent(), [['user', 'Name a colour'], ['assistant', 'Blue.'], ['user', 'And another?']]);
  const s = await api(`/v4/sessions/${sid}`);
  assert.deepEqual(s.turns.map((t) => t.content), ['Name a colour', 'Blue.', 'Green.', 'And another?', 'Red.'], 'nothing lost');
  await axe(page, 'a reply with two versions');
  await done();
});

test('edit and re-send: a new version of the question beside the old one, which stays', async () => {
  const sid = await newSession();
  await ask('How far is the moon?', 'About 384,000 km.');
  await reply('About 384,000 km.').waitFor();
  const q = page.locator('.turn.user', { hasText: 'How far is the moon?' });
  await q.getByRole('button', { name: 'Edit' }).click();
  const box = page.getByRole('textbox', { name: 'Edit your message' });
  await box.waitFor();
  assert.equal(await box.inputValue(), 'How far is the moon?');
  await axe(page, 'editing a question');
  await shots('chat-actions-edit');
  await box.fill('How far is the sun?');
  fake.script([{ reply: 'About 150 million km.', provider: 'openai' }]);
  await box.press('Control+Enter');
  await reply('About 150 million km.').waitFor();
  const edited = page.locator('.turn.user', { hasText: 'How far is the sun?' });
  await edited.locator('.version-n', { hasText: '2 / 2' }).waitFor();
  assert.deepEqual(sent(), [['user', 'How far is the sun?']], 'the model sees only the edited path');
  await edited.getByRole('button', { name: 'Previous version' }).click();
  await page.locator('.turn.user', { hasText: 'How far is the moon?' }).locator('.version-n', { hasText: '1 / 2' }).waitFor();
  await reply('About 384,000 km.').waitFor();
  const s = await api(`/v4/sessions/${sid}`);
  assert.equal(s.turns.length, 4, 'both questions and both replies are kept');
  await shots('chat-actions-edited');
  await done();
});

test('continue after Stop: the model gets the partial reply, and the new text joins the same bubble', async () => {
  const sid = await newSession();
  fake.script([{ reply: 'One, two, three, four, five, six', deltas: 6, hold: 'cont', pause_after: 2, provider: 'openai' }]);
  await page.fill('textarea[aria-label=Message]', 'Count to ten');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.querySelector('.composer button.danger')?.disabled
    && document.querySelector('.turn.streaming .md')?.textContent.includes('two'));
  await page.getByRole('button', { name: 'Stop' }).click();
  const stopped = page.locator('.turn.assistant', { has: page.locator('.badge.status-stopped') });
  await stopped.waitFor();
  fake.release('cont');
  const partial = (await api(`/v4/sessions/${sid}`)).turns[1].content;
  assert.ok(partial.startsWith('One, two'), partial);
  const cont = stopped.getByRole('button', { name: 'Continue' });
  await cont.waitFor();
  await shots('chat-actions-stopped');
  fake.script([{ reply: ' seven, eight, nine, ten.', provider: 'openai' }]);
  await cont.focus();
  await page.keyboard.press('Enter');
  const whole = reply('nine, ten.');
  await whole.locator('.badge.continued').waitFor();
  assert.equal(await page.locator('.turn.assistant:not(.streaming)').count(), 1, 'one bubble for the reply');
  assert.equal((await whole.locator('.md').textContent()).trim(), `${partial} seven, eight, nine, ten.`.trim());
  assert.deepEqual(sent(), [['user', 'Count to ten'], ['assistant', partial]], 'the model goes on from the partial reply');
  assert.equal(await whole.getByRole('button', { name: 'Continue' }).count(), 0, 'a complete reply offers no Continue');
  const s = await api(`/v4/sessions/${sid}`);
  assert.deepEqual(s.turns.map((t) => [t.role, t.status, t.parent_seq]), [['user', 'complete', 0], ['assistant', 'stopped', 1], ['assistant', 'complete', 2]]);
  // after a reload it is still one bubble
  await page.guard.reload();
  await reply('nine, ten.').locator('.badge.continued').waitFor();
  assert.equal(await page.locator('.turn.assistant').count(), 1);
  await axe(page, 'a continued reply');
  await shots('chat-actions-continued');
  await done();
});

test('a new session from a turn: the conversation up to it, the old session untouched', async () => {
  const sid = await newSession();
  await ask('First thing', 'First answer.');
  await reply('First answer.').waitFor();
  await ask('Second thing', 'Second answer.');
  await reply('Second answer.').waitFor();
  const before = await api(`/v4/sessions/${sid}`);
  await reply('First answer.').getByRole('button', { name: 'New session from here' }).click();
  await page.waitForURL((u) => !u.href.endsWith(sid));
  await page.locator('.banner.fork-note').waitFor();
  await reply('First answer.').waitFor();
  assert.equal(await page.locator('.turn.user', { hasText: 'Second thing' }).count(), 0);
  const nid = page.url().split('/').pop();
  const n = await api(`/v4/sessions/${nid}`);
  assert.equal(n.forked_from_session_id, sid);
  assert.equal(n.fork_seq, 2);
  assert.deepEqual(n.turns.map((t) => t.content), ['First thing', 'First answer.']);
  assert.deepEqual(await api(`/v4/sessions/${sid}`), before);
  await axe(page, 'a session started from a turn');
  await shots('chat-actions-forked');
  await done();
});
