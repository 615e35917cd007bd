// readme.test.mjs -- the README's shell blocks run as pasted.  Every ```sh
// block runs, in order, in one bash with `set -e`, in a scratch directory,
// with the build under test on PATH; a block is left out only when the line
// before it says `<!-- readme-test: skip (why) -->`.  Its ```json blocks parse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, BUILD, SMRITI, tempDb, childEnv } from './helpers.mjs';

// [{ lang, body, skip }] of every fenced block of the README.
function blocks() {
  const out = [];
  const re = /(?:^(<!-- readme-test: skip \([^)]+\) -->)\n)?^```(\w*)\n([\s\S]*?)^```$/gm;
  for (const m of readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(re)) {
    out.push({ skip: Boolean(m[1]), lang: m[2], body: m[3] });
  }
  return out;
}

test('the README walkthrough runs as pasted', () => {
  const sh = blocks().filter((b) => b.lang === 'sh' && !b.skip);
  assert.ok(sh.length >= 1, 'no shell block to run');
  const t = tempDb();
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', sh.map((b) => b.body).join('\n')], {
    cwd: t.dir,
    encoding: 'utf8',
    env: childEnv({ PATH: `${BUILD}:${process.env.PATH}`, HOME: t.dir, TMPDIR: t.dir }),
  });
  assert.equal(r.status, 0, `a README command failed:\n${r.stderr}`);
  assert.equal(r.stderr, '');
  // It worked in its own scratch directory and database, and did what it says.
  const [scratch] = readdirSync(t.dir).filter((f) => f.startsWith('tmp.'));
  const db = path.join(t.dir, scratch, 'smriti.db');
  const run = (args) => JSON.parse(spawnSync(SMRITI, ['--db', db, ...args, '--json'], { encoding: 'utf8', env: childEnv() }).stdout);
  const merge = run(['head', 'trip']);
  assert.equal(merge.title, 'Merge trip-alt into trip', 'a merge has its own title');
  assert.ok(merge.decisions.some((d) => d.text === 'Night train to Kyoto'));
  assert.ok(merge.merge_parent_hash);
  const log = run(['log', 'trip~1', '--first-parent']);
  assert.deepEqual(log.map((c) => c.title), ['Dates fixed', 'Flights booked', 'Dates fixed']);
  assert.equal(log[0].artifacts[0].content, '# Kyoto, 3-10 April\n- Fushimi Inari at dawn; Arashiyama on a weekday\n');
  assert.equal(log[1].parent_hash, log[2].commit_hash);
  // the second checkpoint kept what it did not mention: the dates, the question, the artifact
  assert.deepEqual(log[1].decisions.map((d) => d.text), ['Travel 3-10 April', 'Fly via Helsinki']);
  assert.deepEqual(log[1].tasks, [{ text: 'Book flights', status: 'done' }]);
  assert.equal(log[1].open_questions[0].text, 'Ryokan or hotel?');
  assert.equal(log[1].artifacts.length, 1);
  assert.deepEqual(run(['space', 'list']).map((s) => s.name).sort(), ['trip', 'trip-alt']);
  t.cleanup();
});

test('the README leaves out only blocks it says why, and its JSON parses', () => {
  const all = blocks();
  for (const b of all.filter((x) => x.skip)) assert.equal(b.lang, 'sh');
  for (const b of all.filter((x) => x.lang === 'json')) assert.doesNotThrow(() => JSON.parse(b.body));
  assert.ok(all.some((b) => b.lang === 'json'));
});
