// setup-hosts.test.mjs -- `smriti setup HOST` and `smriti setup agents-md`
// (issue 31): for each host, the files written are of the shape the host
// documents (checked with JSON schemas written here from each host's
// documentation; sources beside each), an existing file keeps everything
// the user had, a second run changes no byte, --remove gives back the file
// byte for byte (or takes away the file setup created), --dry-run writes
// nothing, an unreadable file stops setup before anything is written, an
// HTTP registration names the token's variable and never its value, and the
// hook command installed runs and prints the primer in the host's envelope.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { tempDb, childEnv, SMRITI, BUILD } from './helpers.mjs';

const ajv = new Ajv({ strict: false, allErrors: true });
const str = { type: 'string', minLength: 1 };
const strings = { type: 'array', items: { type: 'string' } };
const strMap = { type: 'object', additionalProperties: { type: 'string' } };

// Claude Code: hook matcher and command hook as in
// https://json.schemastore.org/claude-code-settings.json ($defs hookMatcher, hookCommand),
// events from https://code.claude.com/docs/en/hooks; .mcp.json entries from
// https://code.claude.com/docs/en/mcp.
const claudeHook = {
  type: 'object', additionalProperties: false, required: ['type', 'command'],
  properties: { type: { const: 'command' }, command: str, timeout: { type: 'number', exclusiveMinimum: 0 } },
};
const groups = (hook, extra = {}) => ({
  type: 'array',
  items: {
    type: 'object', additionalProperties: false, required: ['hooks'],
    properties: { matcher: { type: 'string' }, hooks: { type: 'array', items: hook }, ...extra },
  },
});
const claudeSettings = {
  type: 'object',
  properties: {
    hooks: {
      type: 'object', additionalProperties: groups(claudeHook),
      propertyNames: { enum: ['PreToolUse', 'PostToolUse', 'Notification', 'UserPromptSubmit', 'Stop', 'SubagentStop', 'PreCompact', 'SessionStart', 'SessionEnd'] },
    },
  },
};
const claudeMcp = {
  type: 'object', required: ['mcpServers'],
  properties: {
    mcpServers: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          { type: 'object', additionalProperties: false, required: ['command'], properties: { type: { const: 'stdio' }, command: str, args: strings, env: strMap } },
          { type: 'object', additionalProperties: false, required: ['type', 'url'], properties: { type: { enum: ['http', 'sse'] }, url: str, headers: strMap } },
        ],
      },
    },
  },
};
// Codex: [mcp_servers.NAME] keys of openai/codex codex-rs/config/src/mcp_types.rs
// (https://developers.openai.com/codex/mcp); hooks.json as https://developers.openai.com/codex/hooks.
const codexConfig = {
  type: 'object',
  properties: {
    mcp_servers: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          { type: 'object', additionalProperties: false, required: ['command'], properties: { command: str, args: strings, env: strMap, env_vars: strings, cwd: str, startup_timeout_sec: { type: 'number' }, tool_timeout_sec: { type: 'number' }, enabled: { type: 'boolean' }, required: { type: 'boolean' } } },
          { type: 'object', additionalProperties: false, required: ['url'], properties: { url: str, bearer_token_env_var: str, http_headers: strMap, env_http_headers: strMap, enabled: { type: 'boolean' } } },
        ],
      },
    },
  },
};
const codexHooks = {
  type: 'object', required: ['hooks'],
  properties: {
    hooks: {
      type: 'object',
      propertyNames: { enum: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'Stop', 'SubagentStart', 'SubagentStop'] },
      additionalProperties: groups({ ...claudeHook, properties: { ...claudeHook.properties, statusMessage: { type: 'string' } } }),
    },
  },
};
// Gemini CLI: mcpServers and hooks of https://raw.githubusercontent.com/google-gemini/gemini-cli/main/schemas/settings.schema.json
// as docs/tools/mcp-server.md and docs/hooks/reference.md describe them.
const geminiSettings = {
  type: 'object',
  properties: {
    mcpServers: {
      type: 'object',
      additionalProperties: {
        type: 'object', additionalProperties: false,
        properties: { command: str, args: strings, env: strMap, cwd: str, timeout: { type: 'number' }, trust: { type: 'boolean' }, httpUrl: str, url: str, headers: strMap, type: { enum: ['sse', 'http'] } },
      },
    },
    hooks: {
      type: 'object',
      propertyNames: { enum: ['SessionStart', 'SessionEnd', 'BeforeAgent', 'AfterAgent', 'BeforeModel', 'AfterModel', 'BeforeToolSelection', 'BeforeTool', 'AfterTool', 'PreCompress', 'Notification'] },
      additionalProperties: groups({ type: 'object', additionalProperties: false, required: ['type', 'command'], properties: { type: { const: 'command' }, command: str, name: str, timeout: { type: 'number' }, description: { type: 'string' } } }),
    },
  },
};
// Cursor: https://cursor.com/docs/hooks.md (version 1, camelCase events, {command}) and
// mcp.json's mcpServers (stdio command/args/env, remote url/headers).
const cursorHooks = {
  type: 'object', required: ['version', 'hooks'],
  properties: {
    version: { const: 1 },
    hooks: {
      type: 'object',
      propertyNames: { enum: ['sessionStart', 'sessionEnd', 'preToolUse', 'postToolUse', 'beforeShellExecution', 'afterShellExecution', 'beforeMCPExecution', 'afterMCPExecution', 'beforeReadFile', 'afterFileEdit', 'beforeSubmitPrompt', 'preCompact', 'stop', 'afterAgentResponse', 'afterAgentThought', 'subagentStart', 'subagentStop'] },
      additionalProperties: { type: 'array', items: { type: 'object', required: ['command'], properties: { command: str } } },
    },
  },
};
const cursorMcp = {
  type: 'object', required: ['mcpServers'],
  properties: { mcpServers: { type: 'object', additionalProperties: { type: 'object', additionalProperties: false, properties: { command: str, args: strings, env: strMap, url: str, headers: strMap } } } },
};
// VS Code: mcp.json "servers" and "inputs" of vscode-docs docs/agents/reference/mcp-configuration.md;
// hook files of docs/agents/reference/hooks-reference.md (flat list of command hooks).
const vscodeMcp = {
  type: 'object', required: ['servers'],
  properties: {
    servers: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          { type: 'object', additionalProperties: false, required: ['type', 'command'], properties: { type: { const: 'stdio' }, command: str, args: strings, env: strMap, envFile: str } },
          { type: 'object', additionalProperties: false, required: ['type', 'url'], properties: { type: { enum: ['http', 'sse'] }, url: str, headers: strMap } },
        ],
      },
    },
    inputs: { type: 'array', items: { type: 'object', required: ['type', 'id'], properties: { type: { const: 'promptString' }, id: str, description: { type: 'string' }, password: { type: 'boolean' } } } },
  },
};
const vscodeHooks = {
  type: 'object', required: ['hooks'],
  properties: {
    hooks: {
      type: 'object',
      propertyNames: { enum: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreCompact', 'SubagentStart', 'SubagentStop', 'Stop'] },
      additionalProperties: { type: 'array', items: claudeHook },
    },
  },
};
// Claude Desktop: claude_desktop_config.json (https://modelcontextprotocol.io/quickstart/user):
// stdio only, a full path to the command.
const desktopConfig = {
  type: 'object', required: ['mcpServers'],
  properties: { mcpServers: { type: 'object', additionalProperties: { type: 'object', additionalProperties: false, required: ['command'], properties: { command: { type: 'string', pattern: '^/' }, args: strings, env: strMap } } } },
};

// Each host: files (relative to the project dir, or to HOME when user), their schema,
// what a user already had there, and how its session-start hook's output reads.
const context = (o) => o.hookSpecificOutput.additionalContext;
const HOSTS = {
  claude: {
    files: { '.mcp.json': claudeMcp, '.claude/settings.json': claudeSettings },
    existing: {
      '.mcp.json': { mcpServers: { other: { type: 'stdio', command: 'other-mcp', args: [] } } },
      '.claude/settings.json': { permissions: { allow: ['Bash(ls)'] }, hooks: { SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hi' }] }], PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }] } },
    },
    start: ['.claude/settings.json', (d) => d.hooks.SessionStart.at(-1).hooks[0].command, context],
    stop: ['.claude/settings.json', (d) => d.hooks.Stop[0].hooks[0].command],
  },
  codex: {
    files: { '.codex/config.toml': codexConfig, '.codex/hooks.json': codexHooks },
    existing: {
      '.codex/config.toml': '# my settings\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other-mcp"\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n',
      '.codex/hooks.json': { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } },
    },
    start: ['.codex/hooks.json', (d) => d.hooks.SessionStart[0].hooks[0].command, context],
    stop: ['.codex/hooks.json', (d) => d.hooks.Stop.at(-1).hooks[0].command],
  },
  gemini: {
    files: { '.gemini/settings.json': geminiSettings },
    existing: { '.gemini/settings.json': { general: { vimMode: true }, mcpServers: { other: { command: 'other-mcp' } } } },
    start: ['.gemini/settings.json', (d) => d.hooks.SessionStart[0].hooks[0].command, context],
    stop: ['.gemini/settings.json', (d) => d.hooks.AfterAgent[0].hooks[0].command],
  },
  cursor: {
    files: { '.cursor/mcp.json': cursorMcp, '.cursor/hooks.json': cursorHooks },
    existing: {
      '.cursor/mcp.json': { mcpServers: { other: { url: 'https://example.invalid/mcp' } } },
      '.cursor/hooks.json': { version: 1, hooks: { afterFileEdit: [{ command: './format.sh' }] } },
    },
    start: ['.cursor/hooks.json', (d) => d.hooks.sessionStart[0].command, (o) => o.additional_context],
    stop: ['.cursor/hooks.json', (d) => d.hooks.stop[0].command],
  },
  vscode: {
    files: { '.vscode/mcp.json': vscodeMcp, '.github/hooks/smriti.json': vscodeHooks },
    existing: { '.vscode/mcp.json': { servers: { other: { type: 'stdio', command: 'other-mcp' } }, inputs: [{ type: 'promptString', id: 'key', password: true }] } },
    start: ['.github/hooks/smriti.json', (d) => d.hooks.SessionStart[0].command, context],
    stop: ['.github/hooks/smriti.json', (d) => d.hooks.Stop[0].command],
  },
  'claude-desktop': {
    user: true,
    files: { '.config/Claude/claude_desktop_config.json': desktopConfig },
    existing: { '.config/Claude/claude_desktop_config.json': { globalShortcut: 'Ctrl+Space', mcpServers: { other: { command: '/usr/bin/other-mcp' } } } },
  },
};

function tomlToJson(file) {
  const r = spawnSync('python3', ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1],"rb"))))', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `not TOML: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const readDoc = (file) => (file.endsWith('.toml') ? tomlToJson(file) : JSON.parse(readFileSync(file, 'utf8')));
const fileText = (v) => (typeof v === 'string' ? v : `${JSON.stringify(v, null, 2)}\n`);

// Every file under dir (relative path -> bytes), for "nothing else changed".
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

function world() {
  const t = tempDb();
  const dir = path.join(t.dir, 'proj');
  const home = path.join(t.dir, 'home');
  mkdirSync(dir);
  mkdirSync(home);
  const env = { HOME: home, PATH: `${BUILD}:${process.env.PATH}` };
  const sm = (args, extra = {}) => {
    const r = spawnSync(SMRITI, args, { cwd: dir, encoding: 'utf8', env: childEnv({ ...env, ...extra }) });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const must = (args, extra) => {
    const r = sm(args, extra);
    assert.equal(r.code, 0, `smriti ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  must(['init', 'demo'], { SMRITI_DB: t.db });
  must(['checkpoint', 'create', '--title', 'Pick the store', '--task', 'Write the migration']);
  return { dir, home, env, sm, must, cleanup: t.cleanup };
}

function validate(schema, doc, file) {
  const ok = ajv.validate(schema, doc);
  assert.ok(ok, `${file}: ${ajv.errorsText()}\n${JSON.stringify(doc, null, 2)}`);
}

for (const [host, spec] of Object.entries(HOSTS)) {
  describe(`smriti setup ${host}`, () => {
    const base = (w) => (spec.user ? w.home : w.dir);

    test('fresh: the files follow the host\'s documented format; --dry-run wrote nothing before', () => {
      const w = world();
      try {
        const before = snapshot(w.dir);
        const dry = w.must(['setup', host, '--dry-run']);
        assert.match(dry, /would create/);
        assert.deepEqual(snapshot(w.dir), before);
        assert.equal(readdirSync(w.home).length, 0);
        const out = w.must(['setup', host]);
        for (const [rel, schema] of Object.entries(spec.files)) {
          const file = path.join(base(w), rel);
          assert.match(out, new RegExp(`created +${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
          validate(schema, readDoc(file), rel);
        }
      } finally { w.cleanup(); }
    });

    test('merge keeps what the user had; a second run changes no byte; --remove restores every byte', () => {
      const w = world();
      try {
        for (const [rel, v] of Object.entries(spec.existing)) {
          mkdirSync(path.dirname(path.join(base(w), rel)), { recursive: true });
          writeFileSync(path.join(base(w), rel), fileText(v));
        }
        const original = { proj: snapshot(w.dir), home: snapshot(w.home) };
        w.must(['setup', host]);
        for (const [rel, schema] of Object.entries(spec.files)) {
          const doc = readDoc(path.join(base(w), rel));
          validate(schema, doc, rel);
          const had = spec.existing[rel];
          if (had) {
            const was = typeof had === 'string' ? tomlToJsonText(had, path.join(w.dir, '..', 'orig.toml')) : had;
            assertKeeps(doc, was, rel);
          }
        }
        const once = { proj: snapshot(w.dir), home: snapshot(w.home) };
        assert.match(w.must(['setup', host]), /unchanged/);
        assert.deepEqual({ proj: snapshot(w.dir), home: snapshot(w.home) }, once, 'idempotent');
        w.must(['setup', host, '--remove']);
        assert.deepEqual({ proj: snapshot(w.dir), home: snapshot(w.home) }, original);
        for (const rel of Object.keys(spec.files)) {
          if (!spec.existing[rel]) assert.ok(!existsSync(path.join(base(w), rel)), `${rel} removed`);
        }
      } finally { w.cleanup(); }
    });

    if (spec.start) {
      test('the hooks installed run: session start prints the primer, stop reminds once', () => {
        const w = world();
        try {
          w.must(['setup', host]);
          const prime = w.must(['prime']);
          const [file, pick, read] = spec.start;
          const command = pick(readDoc(path.join(w.dir, file)));
          const r = spawnSync('/bin/sh', ['-c', command], { cwd: w.dir, input: '{}', encoding: 'utf8', env: childEnv(w.env) });
          assert.equal(r.status, 0, r.stderr);
          assert.equal(read(JSON.parse(r.stdout)), prime);
          assert.match(prime, /HEAD: [0-9a-f]{12} "Pick the store"/);
          const [sfile, spick] = spec.stop;
          const stop = spawnSync('/bin/sh', ['-c', spick(readDoc(path.join(w.dir, sfile)))], { cwd: w.dir, input: '{"stop_hook_active":false}', encoding: 'utf8', env: childEnv(w.env) });
          assert.equal(stop.status, 0, stop.stderr);
          assert.match(stop.stdout, /write a Checkpoint on the HEAD you read/);
        } finally { w.cleanup(); }
      });
    }
  });
}

// A parsed TOML text given inline (the "existing" of Codex): written beside, read, removed.
function tomlToJsonText(text, scratch) {
  writeFileSync(scratch, text);
  return tomlToJson(scratch);
}

// Every key path of was is in doc with the same value (doc may hold more).
function assertKeeps(doc, was, where) {
  if (Array.isArray(was)) {
    for (const item of was) assert.ok(doc.some((d) => JSON.stringify(d) === JSON.stringify(item)), `${where}: kept ${JSON.stringify(item)}`);
    return;
  }
  if (was && typeof was === 'object') {
    for (const [k, v] of Object.entries(was)) assertKeeps(doc[k], v, `${where}.${k}`);
    return;
  }
  assert.equal(doc, was, where);
}

describe('smriti setup: the rest', () => {
  test('agents-md: a marked section added after the user\'s text, updated in place, removed byte for byte', () => {
    const w = world();
    try {
      const mine = '# My project\n\nRun `make` to build.\n';
      writeFileSync(path.join(w.dir, 'AGENTS.md'), mine);
      writeFileSync(path.join(w.dir, 'CLAUDE.md'), '@AGENTS.md\n');
      w.must(['setup', 'agents-md']);
      const agents = readFileSync(path.join(w.dir, 'AGENTS.md'), 'utf8');
      assert.ok(agents.startsWith(`${mine}\n<!-- BEGIN SMRITI`));
      assert.match(agents, /`smriti prime`/);
      assert.match(agents, /<!-- END SMRITI -->\n$/);
      assert.match(readFileSync(path.join(w.dir, 'CLAUDE.md'), 'utf8'), /^@AGENTS.md\n\n<!-- BEGIN SMRITI/);
      assert.ok(!existsSync(path.join(w.dir, 'GEMINI.md')), 'only files that exist, besides AGENTS.md');
      // the user writes below the section; an older section is replaced in place
      const edited = agents.replace('`smriti prime`', '`smriti prime` (old text)') + '\n## More of mine\n';
      writeFileSync(path.join(w.dir, 'AGENTS.md'), edited);
      w.must(['setup', 'agents-md']);
      assert.equal(readFileSync(path.join(w.dir, 'AGENTS.md'), 'utf8'), `${agents}\n## More of mine\n`);
      w.must(['setup', 'agents-md', '--remove']);
      assert.equal(readFileSync(path.join(w.dir, 'AGENTS.md'), 'utf8'), `${mine}\n## More of mine\n`);
      assert.equal(readFileSync(path.join(w.dir, 'CLAUDE.md'), 'utf8'), '@AGENTS.md\n');
      w.must(['setup', 'agents-md', '--file', 'GEMINI.md']);
      assert.ok(readFileSync(path.join(w.dir, 'GEMINI.md'), 'utf8').startsWith('<!-- BEGIN SMRITI'));
      w.must(['setup', 'agents-md', '--file', 'GEMINI.md', '--remove']);
      assert.ok(!existsSync(path.join(w.dir, 'GEMINI.md')));
    } finally { w.cleanup(); }
  });

  test('a file that is not JSON stops setup before any file is written', () => {
    const w = world();
    try {
      mkdirSync(path.join(w.dir, '.claude'));
      writeFileSync(path.join(w.dir, '.claude/settings.json'), '{ "permissions": { // a comment\n');
      const before = snapshot(w.dir);
      const r = w.sm(['setup', 'claude']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /cannot read .*\.claude\/settings\.json as a JSON object.*nothing was changed/);
      assert.equal(r.stderr.trim().split('\n').length, 1);
      assert.deepEqual(snapshot(w.dir), before);
      assert.ok(!existsSync(path.join(w.dir, '.mcp.json')), 'the other file was not written either');
    } finally { w.cleanup(); }
  });

  test('over HTTP every host names the token\'s variable, never its value', () => {
    const w = world();
    try {
      const secret = 's3cr3t-token-value';
      const url = 'http://127.0.0.1:7411';
      for (const host of ['claude', 'codex', 'gemini', 'cursor', 'vscode']) w.must(['setup', host, '--url', url], { SMRITI_TOKEN: secret });
      const files = snapshot(w.dir);
      for (const [rel, text] of Object.entries(files)) assert.ok(!text.includes(secret), `${rel} holds the secret`);
      const mcp = JSON.parse(files['.mcp.json']).mcpServers.smriti;
      assert.deepEqual(mcp, { type: 'http', url: `${url}/mcp`, headers: { Authorization: 'Bearer ${SMRITI_TOKEN}' } });
      validate(claudeMcp, JSON.parse(files['.mcp.json']), '.mcp.json');
      const codex = tomlToJson(path.join(w.dir, '.codex/config.toml')).mcp_servers.smriti;
      assert.deepEqual(codex, { url: `${url}/mcp`, bearer_token_env_var: 'SMRITI_TOKEN' });
      validate(codexConfig, tomlToJson(path.join(w.dir, '.codex/config.toml')), 'config.toml');
      const gem = JSON.parse(files['.gemini/settings.json']);
      assert.deepEqual(gem.mcpServers.smriti, { httpUrl: `${url}/mcp`, headers: { Authorization: 'Bearer ${SMRITI_TOKEN}' } });
      validate(geminiSettings, gem, 'gemini');
      assert.equal(JSON.parse(files['.cursor/mcp.json']).mcpServers.smriti.headers.Authorization, 'Bearer ${env:SMRITI_TOKEN}');
      const vs = JSON.parse(files['.vscode/mcp.json']);
      validate(vscodeMcp, vs, 'vscode');
      assert.equal(vs.servers.smriti.headers.Authorization, 'Bearer ${input:smriti-token}');
      assert.deepEqual(vs.inputs.map((i) => i.id), ['smriti-token']);
      // the input is Smriti's too: --remove (with or without --url) takes it out
      w.must(['setup', 'vscode', '--remove']);
      assert.ok(!existsSync(path.join(w.dir, '.vscode/mcp.json')));
      const desk = w.sm(['setup', 'claude-desktop', '--url', url]);
      assert.equal(desk.code, 2);
      assert.match(desk.stderr, /Claude Desktop's file takes no HTTP server/);
    } finally { w.cleanup(); }
  });

  test('codex: a server defined in another form is refused and nothing changes', () => {
    const w = world();
    try {
      mkdirSync(path.join(w.dir, '.codex'));
      const text = '[mcp_servers]\nsmriti = { command = "old-smriti" }\n';
      writeFileSync(path.join(w.dir, '.codex/config.toml'), text);
      const r = w.sm(['setup', 'codex']);
      assert.equal(r.code, 4);
      assert.match(r.stderr, /defined here in another form/);
      assert.equal(readFileSync(path.join(w.dir, '.codex/config.toml'), 'utf8'), text);
      assert.ok(!existsSync(path.join(w.dir, '.codex/hooks.json')));
    } finally { w.cleanup(); }
  });

  test('--user writes under HOME (CODEX_HOME for Codex); bad hosts and flags are usage errors', () => {
    const w = world();
    try {
      w.must(['setup', 'claude', '--user']);
      validate(claudeMcp, JSON.parse(readFileSync(path.join(w.home, '.claude.json'), 'utf8')), '~/.claude.json');
      validate(claudeSettings, JSON.parse(readFileSync(path.join(w.home, '.claude/settings.json'), 'utf8')), '~/.claude/settings.json');
      const codexHome = path.join(w.home, 'codex-home');
      w.must(['setup', 'codex', '--user'], { CODEX_HOME: codexHome });
      assert.ok(existsSync(path.join(codexHome, 'config.toml')));
      assert.ok(!existsSync(path.join(w.dir, '.mcp.json')) && !existsSync(path.join(w.dir, '.codex')));
      w.must(['setup', 'claude', '--user', '--remove']);
      w.must(['setup', 'codex', '--user', '--remove'], { CODEX_HOME: codexHome });
      assert.deepEqual(readdirSync(w.home), []);
      for (const [args, re] of [[['setup', 'emacs'], /no host 'emacs'/], [['setup'], /give one HOST/],
        [['setup', 'claude', '--user', '--project'], /not both/], [['setup', 'claude-desktop', '--project'], /no project configuration/],
        [['setup', 'agents-md', '--user'], /leave out --user/], [['setup', 'claude', '--file', 'X.md'], /--file goes with agents-md/]]) {
        const r = w.sm(args);
        assert.equal(r.code, 2, args.join(' '));
        assert.match(r.stderr, re);
      }
    } finally { w.cleanup(); }
  });
});

test('codex: the table is found wherever the user moved it, and a file without a final newline comes back as it was', () => {
  const w = world();
  try {
    mkdirSync(path.join(w.dir, '.codex'));
    const file = path.join(w.dir, '.codex/config.toml');
    writeFileSync(file, 'model = "gpt-5"');
    w.must(['setup', 'codex']);
    assert.equal(readFileSync(file, 'utf8').split('[mcp_servers.smriti]')[0], 'model = "gpt-5"\n\n');
    // the user puts a table after ours and edits ours: setup puts ours back in place, keeps theirs
    const mine = '\n[profiles.slow]\nmodel = "o3"\n';
    writeFileSync(file, readFileSync(file, 'utf8').replace('args = ["mcp"]', 'args = ["mcp", "--old"]') + mine);
    assert.match(w.must(['setup', 'codex']), /updated/);
    const text = readFileSync(file, 'utf8');
    assert.equal(tomlToJson(file).mcp_servers.smriti.args.join(' '), 'mcp');
    assert.ok(text.endsWith(mine));
    w.must(['setup', 'codex', '--remove']);
    assert.equal(readFileSync(file, 'utf8'), `model = "gpt-5"\n${mine}`);
  } finally { w.cleanup(); }
});
