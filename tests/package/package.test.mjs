// package.test.mjs -- the Debian packages: dpkg-buildpackage builds smriti
// (the command and the server binary) and smriti-server (the systemd
// service) from a copy of this tree, lintian finds nothing beyond what
// debian/ overrides, dpkg installs them into a throwaway root (maintainer
// scripts included, without chroot or container), and the installed files
// work: --version, the man page, a checkpoint, `smriti serve`, the systemd
// unit, which is neither enabled nor started.  Then remove and purge, and
// `make install` for builds from source.
//
// Run once by scripts/test (it does not depend on SMRITI_BUILD).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, childEnv, startProcess } from '../js/helpers.mjs';

const VERSION = readFileSync(path.join(ROOT, 'src/version.h'), 'utf8').match(/#define SMRITI_VERSION "([^"]+)"/)[1];
const ARCH = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();

let work, src, deb, serverDeb, root;

// Runs a command, insisting on exit 0; returns its stdout.
function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  return r.stdout;
}

// dpkg on the throwaway root; maintainer scripts run outside a chroot with DPKG_ROOT set.
const dpkgRoot = (...args) => sh('dpkg', [`--root=${root}`, '--force-script-chrootless', '--force-depends', ...args]);

before(() => {
  work = mkdtempSync(path.join(tmpdir(), 'smriti-package-'));
  src = path.join(work, 'src');
  mkdirSync(src);
  // the tree as committed plus uncommitted work, without build outputs
  sh('sh', ['-c', `git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C '${src}'`], { cwd: ROOT });
  // nocheck: scripts/test runs the unit tests itself
  sh('dpkg-buildpackage', ['-us', '-uc', '-b', '-j2'], { cwd: src, env: { ...process.env, DEB_BUILD_OPTIONS: 'nocheck' } });
  deb = path.join(work, `smriti_${VERSION}_${ARCH}.deb`);
  serverDeb = path.join(work, `smriti-server_${VERSION}_all.deb`);
  root = path.join(work, 'root');
  for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'etc']) mkdirSync(path.join(root, d), { recursive: true });
  writeFileSync(path.join(root, 'var/lib/dpkg/status'), '');
});
after(() => rmSync(work, { recursive: true, force: true }));

test('debian/changelog names the version of src/version.h', () => {
  assert.equal(sh('dpkg-parsechangelog', ['-S', 'Version'], { cwd: ROOT }).trim(), VERSION);
});

test('smriti holds both binaries, the man page, completion and the docs; smriti-server the service', () => {
  const has = (list, f) => new RegExp(` ${f.replace(/\./g, '\\.')}$`, 'm').test(list);
  const files = sh('dpkg-deb', ['-c', deb]);
  const server = sh('dpkg-deb', ['-c', serverDeb]);
  for (const f of ['./usr/bin/smriti', './usr/libexec/smriti/smriti-full', './usr/share/man/man1/smriti.1.gz',
    './usr/share/bash-completion/completions/smriti', './usr/share/zsh/vendor-completions/_smriti',
    './usr/share/doc/smriti/README.md.gz', './usr/share/doc/smriti/docs/http.md.gz',
    './usr/share/doc/smriti/copyright']) {
    assert.ok(has(files, f), `${f} missing from smriti`);
    assert.ok(!has(server, f), `${f} in smriti-server`);
  }
  for (const f of ['./lib/systemd/system/smriti.service', './usr/lib/sysusers.d/smriti.conf',
    './etc/default/smriti', './usr/share/doc/smriti-server/copyright']) {
    assert.ok(has(server, f), `${f} missing from smriti-server`);
    assert.ok(!has(files, f), `${f} in smriti`);
  }
  assert.match(server, /^-rw------- root\/root .* \.\/etc\/default\/smriti$/m);
  assert.match(sh('dpkg-deb', ['-f', deb, 'Version']), new RegExp(`^${VERSION}$`, 'm'));
  assert.equal(sh('dpkg-deb', ['-f', serverDeb, 'Architecture']).trim(), 'all');
});

test('installing the command pulls in no init system; the service package needs the command and sysusers', () => {
  const depends = sh('dpkg-deb', ['-f', deb, 'Depends']);
  assert.doesNotMatch(depends, /systemd/, depends);
  const server = sh('dpkg-deb', ['-f', serverDeb, 'Depends']);
  assert.match(server, /systemd-sysusers/);
  assert.match(server, new RegExp(`smriti \\(>= ${VERSION.replace(/\./g, '\\.')}\\)`));
  // the static binary's sources are named on smriti, and on no debug package
  assert.match(sh('dpkg-deb', ['-f', deb, 'Static-Built-Using']), /sqlite3 \(= /);
  assert.equal(sh('dpkg-deb', ['-f', path.join(work, `smriti-dbgsym_${VERSION}_${ARCH}.deb`), 'Static-Built-Using']).trim(), '');
});

test('the service is neither enabled nor started by the package: the operator does both', () => {
  const ctl = path.join(work, 'server-control');
  sh('dpkg-deb', ['-e', serverDeb, ctl]);
  const postinst = readFileSync(path.join(ctl, 'postinst'), 'utf8');
  assert.match(postinst, /systemd-sysusers/);
  assert.doesNotMatch(postinst, /deb-systemd-invoke\s+(start|restart)/);
  assert.match(postinst, /was-enabled/, 'enabled again on upgrade only if the operator had enabled it');
});

test('lintian finds nothing but what debian/ justifies', (t) => {
  const r = spawnSync('lintian', ['-I', '--pedantic', path.join(work, `smriti_${VERSION}_${ARCH}.changes`)], { encoding: 'utf8' });
  t.diagnostic('lintian -I --pedantic:');
  for (const line of r.stdout.split('\n').filter(Boolean)) t.diagnostic(line);
  const problems = r.stdout.split('\n').filter((l) => /^[EW]: /.test(l));
  assert.deepEqual(problems, []);
});

test('dpkg installs both into a throwaway root and the service postinst creates the user smriti', () => {
  dpkgRoot('-i', deb);
  assert.equal(existsSync(path.join(root, 'etc/passwd')) && /^smriti:/m.test(readFileSync(path.join(root, 'etc/passwd'), 'utf8')), false,
    'the command alone makes no system user');
  dpkgRoot('-i', serverDeb);
  assert.match(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^smriti:x:\d+:\d+:Smriti server:\/var\/lib\/smriti:\/usr\/sbin\/nologin$/m);
  assert.equal(statSync(path.join(root, 'etc/default/smriti')).mode & 0o777, 0o600);
});

test('the installed smriti prints its version and man -l shows its page', () => {
  const smriti = path.join(root, 'usr/bin/smriti');
  assert.equal(sh(smriti, ['--version'], { env: childEnv() }), `smriti ${VERSION}\n`);
  const page = sh('man', ['-l', path.join(root, 'usr/share/man/man1/smriti.1.gz')], { env: childEnv({ MANWIDTH: '200', MAN_KEEP_FORMATTING: '' }) });
  assert.match(page, /^NAME\n\s+smriti - version control for reasoning state$/m);
  assert.match(page, new RegExp(`smriti ${VERSION.replace(/\./g, '\\.')}`));
  for (const cmd of ['space create', 'checkpoint create', 'serve', 'mcp', 'draft', 'fsck']) assert.ok(page.includes(`smriti ${cmd}`), cmd);
});

test('the installed smriti writes and reads a checkpoint', () => {
  const smriti = path.join(root, 'usr/bin/smriti');
  const env = childEnv({ SMRITI_DB: path.join(work, 'cli.db') });
  sh(smriti, ['space', 'create', 'trip'], { env });
  const made = JSON.parse(sh(smriti, ['commit', 'trip', '-m', 'Dates fixed', '--decision', 'Travel in April', '--json'], { env }));
  const head = JSON.parse(sh(smriti, ['head', 'trip', '--json'], { env }));
  assert.equal(head.commit_hash, made.commit_hash);
  assert.deepEqual(head.decisions, [{ text: 'Travel in April' }]);
});

test('smriti serve starts from the installed files, in smriti-full from /usr/libexec/smriti', async () => {
  const p = await startProcess(path.join(root, 'usr/bin/smriti'), ['serve', '--listen', '127.0.0.1:0', '--db', path.join(work, 'serve.db')], {
    ready: (line) => /^listening on http:\/\/\S+:\d+$/.test(line),
  });
  try {
    assert.equal(readlinkSync(`/proc/${p.child.pid}/exe`), path.join(root, 'usr/libexec/smriti/smriti-full'));
    const url = p.output().match(/listening on (http:\/\/\S+)/)[1];
    const res = await fetch(`${url}/healthz`);
    assert.equal(res.status, 200);
  } finally {
    const exit = new Promise((resolve) => p.child.on('exit', (code) => resolve(code)));
    p.child.kill('SIGTERM');
    assert.equal(await exit, 0);
  }
});

test('the systemd unit is valid, runs as smriti in its state directory, and is rated OK', () => {
  const unit = readFileSync(path.join(root, 'lib/systemd/system/smriti.service'), 'utf8');
  for (const line of ['User=smriti', 'StateDirectory=smriti', 'Environment=SMRITI_DB=%S/smriti/smriti.db',
    'EnvironmentFile=-/etc/default/smriti', 'ExecStart=/usr/bin/smriti serve $SMRITI_SERVE_OPTS',
    'ProtectSystem=strict', 'NoNewPrivileges=yes']) {
    assert.ok(unit.split('\n').includes(line), `no '${line}'`);
  }
  // verify wants ExecStart to exist: point it into the throwaway root
  const copy = path.join(work, 'smriti.service');
  writeFileSync(copy, unit.replace('ExecStart=/usr/bin/', `ExecStart=${root}/usr/bin/`));
  const verify = spawnSync('systemd-analyze', ['verify', '--man=no', copy], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stderr);
  assert.equal(verify.stderr, '');
  // --threshold is in tenths: fail above an exposure of 2.0
  const security = spawnSync('systemd-analyze', ['security', '--offline=true', '--threshold=20', copy], { encoding: 'utf8' });
  assert.equal(security.status, 0, security.stdout.slice(-2000));
  assert.match(security.stdout, /Overall exposure level for smriti\.service: 1\.\d OK/);
});

test('remove keeps the environment file, purge drops it, neither touches the data', () => {
  const data = path.join(root, 'var/lib/smriti/smriti.db');
  mkdirSync(path.dirname(data), { recursive: true });
  writeFileSync(data, 'checkpoints');
  dpkgRoot('-r', 'smriti-server');
  assert.equal(existsSync(path.join(root, 'lib/systemd/system/smriti.service')), false);
  assert.equal(existsSync(path.join(root, 'etc/default/smriti')), true);
  dpkgRoot('-P', 'smriti-server');
  assert.equal(existsSync(path.join(root, 'etc/default/smriti')), false);
  dpkgRoot('-P', 'smriti');
  assert.equal(existsSync(path.join(root, 'usr/bin/smriti')), false);
  assert.equal(readFileSync(data, 'utf8'), 'checkpoints');
});

test('make install puts the same files under PREFIX, and its unit runs PREFIX/bin/smriti', () => {
  const stage = path.join(work, 'stage');
  sh('make', ['-s', 'install', `DESTDIR=${stage}`, 'PREFIX=/usr/local'], { cwd: src });
  const list = sh('find', ['.', '-type', 'f'], { cwd: stage }).split('\n').filter(Boolean).sort();
  const fromDeb = [deb, serverDeb].flatMap((d) => sh('dpkg-deb', ['-c', d]).split('\n')).filter((l) => l.startsWith('-'))
    .map((l) => l.split(/\s+/).pop().replace(/\.gz$/, ''))
    .filter((f) => !/\/(copyright|changelog|README\.Debian)$/.test(f) && !f.includes('/lintian/'))
    .map((f) => f.replace('./usr/', './usr/local/').replace('./lib/systemd/', './usr/local/lib/systemd/')
      .replace('/zsh/vendor-completions/', '/zsh/site-functions/'))
    .sort();
  assert.deepEqual(list, fromDeb);
  assert.match(readFileSync(path.join(stage, 'usr/local/lib/systemd/system/smriti.service'), 'utf8'),
    /^ExecStart=\/usr\/local\/bin\/smriti serve \$SMRITI_SERVE_OPTS$/m);
  const r = spawnSync(path.join(stage, 'usr/local/bin/smriti'), ['serve', '--help'], { encoding: 'utf8', env: childEnv() });
  assert.match(r.stdout, /^usage: smriti serve /);
});
