// cli-docs.test.mjs -- smriti(1) describes every command and option the
// binaries have, and the bash and zsh completion (dist/) offer commands,
// options and Space names from the binaries themselves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT, BUILD, SMRITI, tempDb, ok, childEnv } from './helpers.mjs';

const env = (extra = {}) => childEnv({ PATH: `${BUILD}:${process.env.PATH}`, ...extra });
const help = (args) => spawnSync(path.join(BUILD, 'smriti'), args, { encoding: 'utf8', env: env() }).stdout;
const COMMANDS = help(['help']).split('\n').map((l) => l.match(/^ {2}smriti (\S+)/)?.[1]).filter(Boolean);

let t;
before(() => {
  t = tempDb();
  ok(t.db, ['space', 'create', 'trip']);
  ok(t.db, ['space', 'create', 'kyoto trip']);
});
after(() => t.cleanup());

test('the man page is valid scdoc (what make man and the Debian package build)', () => {
  const r = spawnSync('scdoc', [], { input: readFileSync(path.join(ROOT, 'docs/man/smriti.1.scd')), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\.TH "smriti" "1"/m);
});

test('the man page has a section for every command and names every option', () => {
  const page = readFileSync(path.join(ROOT, 'docs/man/smriti.1.scd'), 'utf8');
  assert.ok(COMMANDS.length >= 15, COMMANDS.join(' '));
  for (const cmd of COMMANDS) {
    assert.match(page, new RegExp(`^\\*smriti ${cmd}[ *]`, 'm'), `no section for '${cmd}'`);
    for (const opt of new Set(help([cmd, '--help']).match(/--[a-z][a-z-]*/g) || [])) {
      assert.ok(page.includes(`*${opt}*`), `'smriti ${cmd}' has ${opt}; the man page does not`);
    }
  }
});

// What bash offers for the words of `line` (the last one being completed).
function bashComplete(line, extraEnv = {}) {
  const script = `
    source /usr/share/bash-completion/bash_completion
    source ${JSON.stringify(path.join(ROOT, 'dist/smriti.bash'))}
    COMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}
    COMP_LINE="\${COMP_WORDS[*]}"; COMP_POINT=\${#COMP_LINE}
    _smriti smriti "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: env({ SMRITI_DB: t.db, ...extraEnv }) });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

test('bash completes commands, options and Space names', () => {
  assert.deepEqual(bashComplete(['smriti', '']).sort(), [...COMMANDS, 'help', 'version'].sort());
  assert.deepEqual(bashComplete(['smriti', 'log', '']).sort(), ['kyoto\\ trip', 'trip']);
  assert.deepEqual(bashComplete(['smriti', 'diff', 'trip', 'k']), ['kyoto\\ trip']);
  assert.deepEqual(bashComplete(['smriti', 'commit', 'trip', '--de']), ['--decision']);
  assert.deepEqual(bashComplete(['smriti', 'serve', '--li']), ['--listen']);
  assert.deepEqual(bashComplete(['smriti', 'ingest', 'x', '--format', '']), ['text', 'markdown', 'chatgpt', 'claude']);
  assert.deepEqual(bashComplete(['smriti', 'space', 're']), ['rename']);
});

test('completing Space names never creates a database', () => {
  const missing = path.join(t.dir, 'missing.db');
  assert.deepEqual(bashComplete(['smriti', '--db', missing, 'log', '']), []);
  assert.deepEqual(bashComplete(['smriti', 'log', ''], { SMRITI_DB: missing }), []);
  assert.equal(existsSync(missing), false);
});

test('a Space name with quotes, spaces or a colon completes to a command that finds it', () => {
  const q = tempDb();
  try {
    const names = ['my "quoted" space', "it's here", 'a:b'];
    for (const n of names) {
      ok(q.db, ['space', 'create', n]);
      ok(q.db, ['commit', n, '-m', `In ${n}`]);
    }
    assert.deepEqual(ok(q.db, ['space', 'list', '--names']).split('\n').filter(Boolean).sort(), [...names].sort());
    const offered = bashComplete(['smriti', 'head', ''], { SMRITI_DB: q.db });
    assert.equal(offered.length, 3, offered.join(' | '));
    for (const word of offered) {
      // the word as bash would put it on the command line, run as typed
      const r = spawnSync('bash', ['-c', `${JSON.stringify(SMRITI)} head ${word} --json`],
        { encoding: 'utf8', env: env({ SMRITI_DB: q.db }) });
      assert.equal(r.status, 0, `${word}: ${r.stderr}`);
      assert.ok(names.includes(JSON.parse(r.stdout).title.slice(3)), word);
    }
    assert.deepEqual(zshComplete('smriti head ', q.db), [...names].sort());
  } finally {
    q.cleanup();
  }
});

function zshComplete(line, db = t.db) {
  const out = path.join(t.dir, 'zsh-out');
  rmSync(out, { force: true });
  rmSync(`${out}.done`, { force: true });
  const r = spawnSync('zsh', ['-f', path.join(ROOT, 'tests/js/complete.zsh'), path.join(ROOT, 'dist'), out, line],
    { encoding: 'utf8', env: env({ SMRITI_DB: db }) });
  assert.equal(r.status, 0, `zsh did not complete '${line}': ${r.stderr}`);
  return existsSync(out) ? [...new Set(readFileSync(out, 'utf8').split('\n').filter(Boolean))].sort() : [];
}

test('zsh completes commands, options and Space names', () => {
  assert.deepEqual(zshComplete('smriti lo'), ['log']);
  assert.deepEqual(zshComplete('smriti head '), ['kyoto trip', 'trip']);
  assert.deepEqual(zshComplete('smriti serve --li'), ['--listen']);
});
