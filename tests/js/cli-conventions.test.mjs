// cli-conventions.test.mjs -- what a git user expects of the command line:
// "did you mean" for a mistyped command, the author taken from the
// environment, a pager for long output on a terminal only, `log --limit 0`
// refused, `space list` aligned by columns, and the exit codes and messages
// of malformed parents and too-short prefixes (issue 15).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { tempDb, run, ok, childEnv, SMRITI } from './helpers.mjs';

let t;

before(() => {
  t = tempDb();
  ok(t.db, ['space', 'create', 'demo']);
  for (let i = 1; i <= 3; i++) ok(t.db, ['commit', 'demo', '-m', `step ${i}`]);
});

after(() => t?.cleanup());

describe('did you mean', () => {
  test('a mistyped command names the nearest commands and exits 2', () => {
    const r = run(t.db, ['lgo']);
    assert.equal(r.code, 2);
    // one line, as every error of smriti (README), where git takes three
    assert.equal(r.stderr, "smriti: 'lgo' is not a smriti command; did you mean 'log'? (see 'smriti help')\n");
    assert.equal(run(t.db, ['chekpoint']).stderr,
      "smriti: 'chekpoint' is not a smriti command; did you mean 'checkpoint'? (see 'smriti help')\n");
  });

  test('nothing is suggested for a word that is far from every command', () => {
    const r = run(t.db, ['xyzzy']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "smriti: 'xyzzy' is not a smriti command; see 'smriti help'\n");
  });
});

describe('help and the global options', () => {
  test("'smriti help CMD' is the command's help, as 'smriti CMD --help'", () => {
    const own = ok(t.db, ['log', '--help']);
    assert.match(own, /^usage: smriti log /);
    assert.equal(ok(t.db, ['help', 'log']), own);
    const r = run(t.db, ['help', 'lgo']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /'lgo' is not a smriti command; did you mean 'log'\?/);
    assert.match(ok(t.db, ['help']), /^usage: smriti /);
  });

  test('a bare smriti is a usage error (exit 2), its help on stderr, as git', () => {
    const r = run(t.db, []);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^usage: smriti /);
  });

  test('--db or --remote without a value says what it needs, not "not a command"', () => {
    for (const [args, want] of [[['--db'], /--db needs a SQLite path or a postgres:\/\/ URL/],
      [['log', 'demo', '--db'], /--db needs a SQLite path/],
      [['--remote'], /--remote needs the URL of a smriti server/]]) {
      const r = run(t.db, args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, want);
      assert.doesNotMatch(r.stderr, /not a smriti command/);
      assert.equal(r.stderr.split('\n').length, 2, 'one line');
    }
  });
});

describe('author of CLI writes', () => {
  test('SMRITI_AUTHOR, else USER, else LOGNAME, else the numeric uid', () => {
    assert.equal(ok(t.db, ['commit', 'demo', '-m', 'a', '--json'], { env: { SMRITI_AUTHOR: 'ana' } }).author, 'ana');
    assert.equal(ok(t.db, ['commit', 'demo', '-m', 'b', '--json']).author, 'tester');
    const r = spawnSync(SMRITI, ['commit', 'demo', '-m', 'c', '--json'], {
      encoding: 'utf8', env: { PATH: process.env.PATH, SMRITI_DB: t.db },
    });
    assert.equal(r.status, 0, r.stderr);
    // not the passwd name: the static binary makes no NSS call (cli-env.test.mjs)
    assert.equal(JSON.parse(r.stdout).author, String(process.getuid()), 'no login environment: the uid');
    assert.equal(ok(t.db, ['commit', 'demo', '-m', 'e', '--json'], { env: { USER: '', LOGNAME: 'lo' } }).author, 'lo');
    const restored = ok(t.db, ['restore', 'demo', 'demo~1', '--json'], { env: { SMRITI_AUTHOR: 'rui' } });
    assert.equal(restored.author, 'rui');
    assert.equal(ok(t.db, ['commit', 'demo', '-m', 'd', '--author', 'x', '--json'], { env: { SMRITI_AUTHOR: 'ana' } }).author, 'x');
  });
});

describe('log --limit', () => {
  test('0 is refused (exit 2) with what to do instead; no --limit is the whole history', () => {
    const r = run(t.db, ['log', 'demo', '--limit', '0']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /--limit wants a number >= 1 \(leave it out for the whole history\), got '0'/);
    assert.equal(run(t.db, ['log', 'demo', '-n', '0']).code, 2);
    assert.equal(ok(t.db, ['log', 'demo', '--limit', '1', '--json']).length, 1);
    assert.ok(ok(t.db, ['log', 'demo', '--json']).length >= 3);
  });
});

describe('space list', () => {
  test('columns line up by display width, not bytes (accents, CJK)', () => {
    const s = tempDb();
    try {
      for (const n of ['démo-ü', 'plain', '東京']) ok(s.db, ['space', 'create', n]);
      const lines = ok(s.db, ['space', 'list']).trimEnd().split('\n');
      assert.equal(lines.length, 3);
      const col = (line) => {
        const name = line.split(' ')[0];
        const wide = [...name].filter((ch) => /\p{Script=Han}/u.test(ch)).length;
        return [...name].length + wide + line.slice(name.length).search(/\S/);
      };
      for (const line of lines) assert.equal(col(line), 25, JSON.stringify(line));
    } finally {
      s.cleanup();
    }
  });
});

describe('references', () => {
  test('a malformed --parent is bad input (exit 2), not a conflict; nothing is written', () => {
    const head = ok(t.db, ['head', 'demo', '--json']).commit_hash;
    for (const bad of ['zz!', 'ab', 'not-a-hash']) {
      const r = run(t.db, ['commit', 'demo', '-m', 'x', '--parent', bad]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is not a checkpoint hash \(give 4 to 64 hex digits\)/);
    }
    assert.equal(ok(t.db, ['head', 'demo', '--json']).commit_hash, head);
    // a well-formed parent that is not HEAD stays a conflict
    assert.equal(run(t.db, ['commit', 'demo', '-m', 'x', '--parent', 'abcdef12']).code, 4);
    assert.equal(ok(t.db, ['commit', 'demo', '-m', 'x', '--parent', head.toUpperCase().slice(0, 12), '--json']).parent_hash, head);
  });

  test('a prefix under 4 characters says so', () => {
    const r = run(t.db, ['show', 'c8']);
    assert.equal(r.code, 3);
    assert.equal(r.stderr, "smriti: no space named 'c8', and a checkpoint prefix needs at least 4 hex digits\n");
  });
});

describe('pager', () => {
  const script = spawnSync('script', ['--version']).status === 0;

  test('long output goes to $PAGER with LESS=FRX on a terminal only', { skip: !script && 'util-linux script(1) is missing' }, () => {
    const pager = path.join(t.dir, 'pager.sh');
    writeFileSync(pager, '#!/bin/sh\necho "PAGED LESS=$LESS"\ncat\n');
    chmodSync(pager, 0o755);
    const onTty = (args, env = {}) => spawnSync('script', ['-qec', [SMRITI, ...args].join(' '), '/dev/null'], {
      encoding: 'utf8', env: childEnv({ SMRITI_DB: t.db, TERM: 'xterm', PAGER: pager, ...env }),
    }).stdout.replace(/\r/g, '');
    const paged = onTty(['log', 'demo']);
    assert.match(paged, /^PAGED LESS=FRX\n[0-9a-f]{12} /);
    assert.match(onTty(['log', 'demo'], { LESS: 'R' }), /^PAGED LESS=R\n/, 'a LESS of the user is kept');
    assert.doesNotMatch(onTty(['--no-pager', 'log', 'demo']), /PAGED/);
    assert.doesNotMatch(onTty(['log', 'demo'], { PAGER: 'cat' }), /PAGED/);
    assert.match(onTty(['log', 'demo'], { SMRITI_PAGER: pager, PAGER: 'cat' }), /^PAGED/);
    // piped: never
    const piped = run(t.db, ['log', 'demo'], { env: { PAGER: pager, TERM: 'xterm' } });
    assert.equal(piped.code, 0);
    assert.doesNotMatch(piped.stdout, /PAGED/);
  });
});

describe('emphasis', () => {
  const script = spawnSync('script', ['--version']).status === 0;

  test('search marks its hits in bold on a terminal only: never in a pipe, nor with NO_COLOR or TERM=dumb', { skip: !script && 'util-linux script(1) is missing' }, () => {
    ok(t.db, ['commit', 'demo', '-m', 'Broker', '--decision', 'Use Kafka for events']);
    const onTty = (env) => spawnSync('script', ['-qec', [SMRITI, '--no-pager', 'search', 'kafka'].join(' '), '/dev/null'], {
      encoding: 'utf8', env: childEnv({ SMRITI_DB: t.db, ...env }),
    }).stdout.replace(/\r/g, '');
    assert.match(onTty({ TERM: 'xterm' }), /\x1b\[1mKafka\x1b\[0m/);
    for (const env of [{ TERM: 'xterm', NO_COLOR: '1' }, { TERM: 'dumb' }, {}]) {
      const out = onTty(env);
      assert.match(out, /Use Kafka for events/, JSON.stringify(env));
      assert.doesNotMatch(out, /\x1b|\*\*/, JSON.stringify(env));
    }
    // piped, the text is data: as stored, no markup of any kind
    const piped = ok(t.db, ['search', 'kafka'], { env: { TERM: 'xterm' } });
    assert.match(piped, /Use Kafka for events/);
    assert.doesNotMatch(piped, /\x1b|\*\*/);
  });
});
