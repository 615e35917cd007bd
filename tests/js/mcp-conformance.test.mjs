// mcp-conformance.test.mjs -- the official MCP conformance suite
// (@modelcontextprotocol/conformance, a test-only npm package) against
// `smriti serve`'s /mcp on loopback, once per protocol revision it has
// server scenarios for.  The suite needs a newer Node than Debian's, so it
// runs under the Node of the npm package `node` (node_modules/node).
//
// Every server scenario the suite runs at a revision is listed below, in
// one of three lists: `pass` (applies to what Smriti offers, and must pass),
// `pending` (applies, but waits for work on another branch: it runs, is
// reported as a todo while it fails, and fails this test once it passes, so
// that its mark cannot outlive the work) and `notApplicable`, with the
// reason (docs/mcp.md, "Conformance", says more).  A scenario the suite
// gains in an upgrade fails "every scenario is classified" until it is
// listed.  Only a check of status FAILURE fails a scenario, as in the
// suite's own tally (warnings are printed), and not one of the few checks
// that need the suite's own diagnostic tools (CHECKS_NOT_APPLICABLE).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, tempDb, ok } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';

const NODE = path.join(ROOT, 'node_modules/node/bin/node');
const SUITE = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

// The suite's fixtures: scenarios that call the tools, prompts and resources
// of its reference server by name (test_simple_text, test_simple_prompt,
// test://static-text, ...), which Smriti has no reason to carry.
const FIXTURE = 'needs the suite\'s own fixture (a tool, prompt or resource of its reference server by name)';
const ASKS_CLIENT = 'Smriti never asks the client anything (no sampling, elicitation or roots requests)';
const NO_LOGGING = 'Smriti offers no logging capability (its log is its own stderr)';
const NO_SESSION = 'the /mcp endpoint is stateless: no Mcp-Session-Id, so no session to test (the scenario reports it skipped)';
const NO_SSE = 'Smriti answers every POST with one JSON body, never an SSE stream, so there is no stream to poll or resume';
const NO_LEGACY_SUBSCRIBE = 'over Streamable HTTP a 2025-11-25 client is told resources.subscribe: false'
  + ' (it would need a session and a GET stream, which the stateless /mcp has not); HTTP clients hear of'
  + ' changes through 2026-07-28 subscriptions/listen (scenario caching and mcp-modern.test.mjs), stdio'
  + ' clients through resources/subscribe (mcp-subscribe.test.mjs)';

const SCENARIOS = {
  '2025-11-25': {
    pass: ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list',
      'completion-complete', 'dns-rebinding-protection'],
    pending: {},
    notApplicable: {
      'resources-subscribe': NO_LEGACY_SUBSCRIBE, 'resources-unsubscribe': NO_LEGACY_SUBSCRIBE,
      'server-session-lifecycle': NO_SESSION,
      'logging-set-level': NO_LOGGING,
      'tools-call-simple-text': FIXTURE, 'tools-call-image': FIXTURE, 'tools-call-audio': FIXTURE,
      'tools-call-embedded-resource': FIXTURE, 'tools-call-mixed-content': FIXTURE,
      'tools-call-with-logging': FIXTURE, 'tools-call-error': FIXTURE,
      'tools-call-with-progress': FIXTURE, 'json-schema-2020-12': FIXTURE,
      'tools-call-sampling': ASKS_CLIENT, 'tools-call-elicitation': ASKS_CLIENT,
      'elicitation-sep1034-defaults': ASKS_CLIENT, 'elicitation-sep1330-enums': ASKS_CLIENT,
      'server-sse-polling': NO_SSE,
      'server-sse-multiple-streams': `${NO_SESSION}; at 2026-07-28 it sends concurrent POSTs and applies`,
      'resources-read-text': FIXTURE, 'resources-read-binary': FIXTURE,
      'resources-templates-read': FIXTURE,
      'prompts-get-simple': FIXTURE, 'prompts-get-with-args': FIXTURE,
      'prompts-get-embedded-resource': FIXTURE, 'prompts-get-with-image': FIXTURE,
    },
  },
  '2026-07-28': {
    pass: ['server-stateless', 'completion-complete', 'tools-list',
      'resources-list', 'prompts-list', 'dns-rebinding-protection', 'caching',
      'http-header-validation', 'sep-2164-resource-not-found', 'server-sse-multiple-streams',
      'input-required-result-unsupported-methods'],
    pending: {},
    notApplicable: {
      'tools-call-simple-text': FIXTURE, 'tools-call-image': FIXTURE, 'tools-call-audio': FIXTURE,
      'tools-call-embedded-resource': FIXTURE, 'tools-call-mixed-content': FIXTURE,
      'tools-call-error': FIXTURE, 'tools-call-with-progress': FIXTURE,
      'json-schema-2020-12': FIXTURE,
      'resources-read-text': FIXTURE, 'resources-read-binary': FIXTURE,
      'resources-templates-read': FIXTURE,
      'prompts-get-simple': FIXTURE, 'prompts-get-with-args': FIXTURE,
      'prompts-get-embedded-resource': FIXTURE, 'prompts-get-with-image': FIXTURE,
      'http-custom-header-server-validation': 'no Smriti tool declares an x-mcp-header parameter'
        + ' (SEP-2243), so there is nothing to validate (the scenario reports it untestable)',
      ...Object.fromEntries(['basic-elicitation', 'basic-sampling', 'basic-list-roots',
        'request-state', 'multiple-input-requests', 'multi-round', 'missing-input-response',
        'non-tool-request', 'result-type', 'tampered-state', 'capability-check',
        'ignore-extra-params', 'validate-input'].map((s) => [`input-required-result-${s}`,
        `${ASKS_CLIENT}: no InputRequiredResult (SEP-2322) to test, and the scenario calls its fixture tools`])),
    },
  },
};

// Checks of an applicable scenario that call a diagnostic tool of the suite's
// reference server (test_missing_capability, test_logging_tool, ...): the
// suite reports them untestable (a FAILURE) on a server without those tools.
const CHECKS_NOT_APPLICABLE = {
  'server-stateless': Object.fromEntries([
    ['sep-2575-server-rejects-undeclared-capability', 'test_missing_capability'],
    ['sep-2575-missing-capability-http-400', 'test_missing_capability'],
    ['sep-2575-http-server-no-independent-requests-on-stream', 'test_streaming_elicitation'],
    ['sep-2575-server-no-log-without-loglevel', 'test_logging_tool'],
    ['sep-2575-server-tags-subscription-id', 'test_trigger_tool_change'],
  ].map(([id, tool]) => [id, `calls the suite's diagnostic tool ${tool}`])),
};

// Runs the suite's server scenarios at version against url; resolves to
// { log, results: Map(scenario -> checks) } read from its result files.
function runSuite(url, version) {
  const out = mkdtempSync(path.join(tmpdir(), 'smriti-conformance-'));
  const args = [SUITE, 'server', '--url', url, '--suite', 'all', '--spec-version', version,
    '--timeout', '20000', '-o', out];
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { cwd: out, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    child.on('error', reject);
    child.on('exit', () => {
      const results = new Map();
      for (const dir of readdirSync(out)) {
        const m = dir.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
        const file = path.join(out, dir, 'checks.json');
        if (m && existsSync(file)) results.set(m[1], JSON.parse(readFileSync(file, 'utf8')));
      }
      rmSync(out, { recursive: true, force: true });
      resolve({ log, results });
    });
  });
}

// The failed checks of scenario name that apply to Smriti.
const failures = (name, checks) => checks.filter((c) => c.status === 'FAILURE' &&
  !CHECKS_NOT_APPLICABLE[name]?.[c.id]);
const describeChecks = (checks) => checks.map((c) => `${c.id}: ${c.errorMessage || c.status}`).join('\n  ');

describe('the official MCP conformance suite against smriti serve', () => {
  let t, server;
  const runs = {};
  before(async () => {
    assert.ok(existsSync(NODE), `${NODE} is missing: run npm ci (package.json has the npm package node)`);
    assert.ok(existsSync(SUITE), `${SUITE} is missing: run npm ci`);
    t = tempDb();
    ok(t.db, ['space', 'create', 'conformance']);
    ok(t.db, ['checkpoint', 'create', 'conformance', '--title', 'seeded', '--decision', 'use SQLite',
      '--task', 'pass the suite', '--json']);
    ok(t.db, ['handoff', 'conformance', '-m', 'the suite runs against this Space']);
    server = await startServer(t.db, { args: ['--quiet'] });
    for (const version of Object.keys(SCENARIOS)) runs[version] = await runSuite(`${server.url}/mcp`, version);
  });
  after(async () => {
    await server?.stop();
    t?.cleanup();
  });

  for (const [version, want] of Object.entries(SCENARIOS)) {
    describe(`revision ${version}`, () => {
      test('every scenario the suite runs is classified, and every listed one ran', () => {
        const ran = [...runs[version].results.keys()].sort();
        const listed = [...want.pass, ...Object.keys(want.pending), ...Object.keys(want.notApplicable)].sort();
        assert.ok(ran.length > 0, `the suite ran nothing:\n${runs[version].log.slice(-3000)}`);
        assert.deepEqual(ran, listed, 'classify each new scenario in tests/js/mcp-conformance.test.mjs');
      });

      for (const name of want.pass) {
        test(`${name} passes`, () => {
          const checks = runs[version].results.get(name);
          assert.ok(checks, `${name} did not run:\n${runs[version].log.slice(-3000)}`);
          const warn = checks.filter((c) => c.status === 'WARNING');
          if (warn.length) console.log(`# ${name} (${version}) warnings:\n  ${describeChecks(warn)}`);
          const failed = failures(name, checks);
          assert.deepEqual(failed, [], `${name} failed:\n  ${describeChecks(failed)}`);
        });
      }

      for (const [name, why] of Object.entries(want.pending)) {
        test(`${name} (pending: ${why.split(';')[0]})`, (tc) => {
          const checks = runs[version].results.get(name);
          assert.ok(checks, `${name} did not run`);
          const failed = failures(name, checks);
          assert.ok(failed.length > 0, `${name} passes now: move it from pending to pass`);
          tc.todo(`fails as expected until then:\n  ${describeChecks(failed)}`);
        });
      }
    });
  }
});
