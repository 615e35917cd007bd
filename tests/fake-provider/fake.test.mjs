// Self-test of the fake LLM provider (server.mjs), over real HTTP.
// Run: node --test tests/fake-provider/

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFakeProvider } from './server.mjs';

const SERVER_PATH = fileURLToPath(new URL('./server.mjs', import.meta.url));

let fake;
before(async () => { fake = await startFakeProvider(); });
after(async () => { await fake.close(); });
beforeEach(async () => { await control('POST', '/_control/reset'); });

// ---------------------------------------------------------------------------------------------
// Client helpers

async function control(method, path, body) {
  const res = await fetch(fake.url + path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const script = async (...steps) => {
  const r = await control('POST', '/_control/script', { steps });
  assert.equal(r.status, 200, JSON.stringify(r.body));
};

const OPENAI_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-test' };
const ANTHROPIC_HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };

function openaiBody(extra = {}) {
  return { model: 'gpt-test', messages: [{ role: 'system', content: 'be terse' }, { role: 'user', content: 'hello there' }], ...extra };
}

function anthropicBody(extra = {}) {
  return { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }], ...extra };
}

async function post(path, body, headers, init = {}) {
  const res = await fetch(fake.url + path, {
    method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), ...init,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

const openaiPost = (body = openaiBody(), headers = OPENAI_HEADERS, path = '/v1/chat/completions') => post(path, body, headers);
const anthropicPost = (body = anthropicBody(), headers = ANTHROPIC_HEADERS) => post('/v1/messages', body, headers);

/** Parse an SSE body into [{event, data}] (data parsed as JSON unless it is [DONE]). */
function parseSse(text) {
  assert.ok(text.endsWith('\n\n'), 'SSE body must end with a blank line');
  return text.trim().split('\n\n').map((block) => {
    const ev = { event: null, data: null };
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) ev.event = line.slice(7);
      else if (line.startsWith('data: ')) ev.data = line.slice(6) === '[DONE]' ? '[DONE]' : JSON.parse(line.slice(6));
      else assert.fail(`unexpected SSE line: ${line}`);
    }
    return ev;
  });
}

function assertOpenaiError(r, status, type, code) {
  assert.equal(r.status, status);
  assert.match(r.headers.get('content-type'), /application\/json/);
  const body = r.json();
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(body.error.type, type);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  return body.error;
}

function assertAnthropicError(r, status, type) {
  assert.equal(r.status, status);
  const body = r.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id', 'type']);
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, type);
  assert.equal(typeof body.error.message, 'string');
  assert.match(body.request_id, /^req_/);
  return body.error;
}

// ---------------------------------------------------------------------------------------------
// Program mode and control API

test('runs as a program and prints exactly LISTENING <port>', async () => {
  const child = spawn(process.execPath, [SERVER_PATH, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const line = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out); });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    assert.match(line, /^LISTENING \d+\n$/);
    const port = Number(line.split(' ')[1]);
    assert.ok(port > 0);
    const res = await fetch(`http://127.0.0.1:${port}/_control/health`);
    assert.deepEqual(await res.json(), { ok: true });
  } finally {
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('health', async () => {
  assert.deepEqual(await control('GET', '/_control/health'), { status: 200, body: { ok: true } });
});

test('script rejects unknown step fields and bad bodies', async () => {
  let r = await control('POST', '/_control/script', { steps: [{ replyy: 'typo' }] });
  assert.equal(r.status, 400);
  assert.match(r.body.error, /unknown field/);
  r = await control('POST', '/_control/script', { steps: [{ provider: 'gemini' }] });
  assert.equal(r.status, 400);
  r = await control('POST', '/_control/script', [{ reply: 'x' }]);
  assert.equal(r.status, 400);
  for (const bad of [{ deltas: 0 }, { chunk_bytes: 1.5 }, { trickle_ms: -1 }, { line_ending: 'crcr' },
    { dialect: 'tgi' }, { hold: '' }, { fail_after: -1 }, { stamp: true, chunk_bytes: 4 }]) {
    r = await control('POST', '/_control/script', { steps: [bad] });
    assert.equal(r.status, 400, JSON.stringify(bad));
  }
  assert.deepEqual((await control('GET', '/_control/script')).body, { steps: [] });
});

// ---------------------------------------------------------------------------------------------
// OpenAI

test('openai: non-stream default reply has the chat.completion shape', async () => {
  const r = await openaiPost();
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /application\/json/);
  const body = r.json();
  assert.match(body.id, /^chatcmpl-/);
  assert.equal(body.object, 'chat.completion');
  assert.equal(typeof body.created, 'number');
  assert.equal(body.model, 'gpt-test');
  assert.deepEqual(body.choices, [{
    index: 0,
    message: { role: 'assistant', content: 'fake reply to: hello there', refusal: null, annotations: [] },
    logprobs: null,
    finish_reason: 'stop',
  }]);
  assert.equal(body.usage.prompt_tokens, 4); // "be terse" + "hello there"
  assert.equal(body.usage.completion_tokens, 5);
  assert.equal(body.usage.total_tokens, 9);
  assert.equal(body.usage.prompt_tokens_details.cached_tokens, 0);
  assert.equal(body.usage.completion_tokens_details.reasoning_tokens, 0);
});

test('openai: scripted reply, json step, usage override, path without /v1', async () => {
  await script({ reply: 'first' }, { json: { a: [1, 2] } }, { reply: 'x', usage: { input: 100, output: 7 } });
  assert.equal((await openaiPost()).json().choices[0].message.content, 'first');
  const second = (await openaiPost(openaiBody(), OPENAI_HEADERS, '/chat/completions')).json();
  assert.deepEqual(JSON.parse(second.choices[0].message.content), { a: [1, 2] });
  const third = (await openaiPost()).json();
  assert.deepEqual(
    [third.usage.prompt_tokens, third.usage.completion_tokens, third.usage.total_tokens], [100, 7, 107]);
});

test('openai: stream reassembles, with and without include_usage', async () => {
  const text = 'the quick brown fox jumps over the lazy dog';
  await script({ reply: text }, { reply: text });

  for (const includeUsage of [false, true]) {
    const extra = { stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) };
    const r = await openaiPost(openaiBody(extra));
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    const events = parseSse(r.text);
    assert.ok(events.every((e) => e.event === null), 'OpenAI streams have no event: lines');
    assert.equal(events.at(-1).data, '[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.data);

    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id && c.created === chunks[0].created));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });

    const usageChunk = includeUsage ? chunks.pop() : null;
    const finish = chunks.pop();
    assert.deepEqual(finish.choices[0].delta, {});
    assert.equal(finish.choices[0].finish_reason, 'stop');
    const pieces = chunks.slice(1).map((c) => c.choices[0].delta.content);
    assert.ok(pieces.length >= 2, 'content is split into several chunks');
    assert.equal(pieces.join(''), text);
    assert.ok(chunks.every((c) => c.choices[0].finish_reason === null));

    if (includeUsage) {
      assert.deepEqual(usageChunk.choices, []);
      assert.equal(usageChunk.usage.completion_tokens, 9);
      assert.ok(chunks.every((c) => c.usage === null));
    } else {
      assert.ok(chunks.every((c) => !('usage' in c)));
    }
  }
});

test('openai: 401 without key, exact error shape', async () => {
  const { authorization, ...noAuth } = OPENAI_HEADERS;
  const err = assertOpenaiError(await openaiPost(openaiBody(), noAuth), 401, 'invalid_request_error', 'invalid_api_key');
  assert.equal(err.param, null);
});

test('openai: invalid bodies are 400 invalid_request_error', async () => {
  const bad = [
    '{not json',
    [1, 2],
    { messages: [{ role: 'user', content: 'hi' }] },
    { model: 'm', messages: [] },
    { model: 'm' },
    { model: 'm', messages: [{ role: 'robot', content: 'hi' }] },
    { model: 'm', messages: [{ role: 'user', content: 42 }] },
    { model: 'm', messages: ['hi'] },
  ];
  for (const body of bad) assertOpenaiError(await openaiPost(body), 400, 'invalid_request_error', null);
  // Every role in the documented set is fine, and content may be an array of parts.
  const ok = await openaiPost({
    model: 'm',
    messages: ['system', 'developer', 'user', 'assistant', 'tool'].map((role) => ({ role, content: [{ type: 'text', text: role }] })),
  });
  assert.equal(ok.status, 200);
});

test('openai: scripted error statuses have the documented shapes', async () => {
  await script(
    { status: 429, retry_after: 1 },
    { status: 500 },
    { status: 503 },
    { status: 401 },
    { status: 400, message: 'bad thing' },
  );
  let r = await openaiPost();
  assertOpenaiError(r, 429, 'rate_limit_error', 'rate_limit_exceeded');
  assert.equal(r.headers.get('retry-after'), '1');
  assertOpenaiError(await openaiPost(), 500, 'server_error', null);
  assertOpenaiError(await openaiPost(), 503, 'server_error', null);
  assertOpenaiError(await openaiPost(), 401, 'invalid_request_error', 'invalid_api_key');
  r = await openaiPost();
  assert.equal(assertOpenaiError(r, 400, 'invalid_request_error', null).message, 'bad thing');
  assert.equal(r.headers.get('retry-after'), null);
});

test('openai: stream_error sends a couple of chunks then an error line and no [DONE]', async () => {
  await script({ reply: 'one two three four five six', stream_error: true }, { stream_error: true });
  const r = await openaiPost(openaiBody({ stream: true }));
  assert.equal(r.status, 200);
  const events = parseSse(r.text);
  assert.ok(!events.some((e) => e.data === '[DONE]'));
  const last = events.at(-1).data;
  assert.equal(last.error.type, 'server_error');
  assert.equal(typeof last.error.message, 'string');
  const pieces = events.slice(1, -1).map((e) => e.data.choices[0].delta.content);
  assert.ok(pieces.length >= 1 && pieces.length <= 2);
  assert.ok('one two three four five six'.startsWith(pieces.join('')));
  // Sent to a non-stream request, a stream_error step fails the whole request.
  assertOpenaiError(await openaiPost(), 500, 'server_error', null);
});

test('openai: tool_input with tools gives a tool_calls reply (non-stream and stream)', async () => {
  const tools = [
    { type: 'function', function: { name: 'other', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'emit', parameters: { type: 'object' } } },
  ];
  const input = { title: 'x', tags: ['a', 'b'] };
  await script({ tool_input: input }, { tool_input: input });
  const body = openaiBody({ tools, tool_choice: { type: 'function', function: { name: 'emit' } } });

  const choice = (await openaiPost(body)).json().choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  const [call] = choice.message.tool_calls;
  assert.equal(call.type, 'function');
  assert.equal(call.function.name, 'emit');
  assert.deepEqual(JSON.parse(call.function.arguments), input);

  const chunks = parseSse((await openaiPost({ ...body, stream: true })).text).slice(0, -1).map((e) => e.data);
  assert.equal(chunks[0].choices[0].delta.tool_calls[0].function.name, 'emit');
  const args = chunks.slice(1, -1).map((c) => c.choices[0].delta.tool_calls[0].function.arguments).join('');
  assert.deepEqual(JSON.parse(args), input);
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
});

// ---------------------------------------------------------------------------------------------
// Anthropic

test('anthropic: non-stream reply has the message shape', async () => {
  await script({ reply: 'Hi back' });
  const r = await anthropicPost(anthropicBody({ system: 'be terse' }));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('request-id'), /^req_/);
  const body = r.json();
  assert.match(body.id, /^msg_/);
  assert.deepEqual({ ...body, id: null }, {
    id: null,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [{ type: 'text', text: 'Hi back' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
      output_tokens: 2, service_tier: 'standard',
    },
  });
  // Default step when the queue is empty.
  assert.equal((await anthropicPost()).json().content[0].text, 'fake reply to: hello there');
});

test('anthropic: stream has the documented event sequence and reassembles', async () => {
  const text = 'streaming works in several pieces here';
  await script({ reply: text });
  const r = await anthropicPost(anthropicBody({ stream: true }));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const events = parseSse(r.text);
  for (const e of events) assert.equal(e.event, e.data.type);
  const names = events.map((e) => e.event);
  const deltas = names.filter((n) => n === 'content_block_delta').length;
  assert.ok(deltas >= 2);
  assert.deepEqual(names, [
    'message_start', 'content_block_start', 'ping',
    ...Array(deltas).fill('content_block_delta'),
    'content_block_stop', 'message_delta', 'message_stop',
  ]);
  const start = events[0].data.message;
  assert.equal(start.type, 'message');
  assert.deepEqual(start.content, []);
  assert.equal(start.stop_reason, null);
  assert.deepEqual(events[1].data.content_block, { type: 'text', text: '' });
  const textOut = events.filter((e) => e.event === 'content_block_delta').map((e) => {
    assert.equal(e.data.delta.type, 'text_delta');
    return e.data.delta.text;
  }).join('');
  assert.equal(textOut, text);
  const messageDelta = events.at(-2).data;
  assert.deepEqual(messageDelta.delta, { stop_reason: 'end_turn', stop_sequence: null });
  assert.equal(messageDelta.usage.output_tokens, 6);
});

test('anthropic: auth and version headers', async () => {
  const { 'x-api-key': key, ...noKey } = ANTHROPIC_HEADERS;
  assertAnthropicError(await anthropicPost(anthropicBody(), noKey), 401, 'authentication_error');
  assert.equal((await anthropicPost(anthropicBody(), { ...noKey, authorization: 'Bearer tok' })).status, 200);
  const { 'anthropic-version': version, ...noVersion } = ANTHROPIC_HEADERS;
  const err = assertAnthropicError(await anthropicPost(anthropicBody(), noVersion), 400, 'invalid_request_error');
  assert.match(err.message, /anthropic-version/);
});

test('anthropic: system role, alternation and field validation', async () => {
  const user = (content) => ({ role: 'user', content });
  const assistant = (content) => ({ role: 'assistant', content });
  let err = assertAnthropicError(
    await anthropicPost(anthropicBody({ messages: [{ role: 'system', content: 'x' }, user('hi')] })), 400, 'invalid_request_error');
  assert.match(err.message, /system/);
  err = assertAnthropicError(
    await anthropicPost(anthropicBody({ messages: [user('a'), user('b')] })), 400, 'invalid_request_error');
  assert.match(err.message, /alternate/);
  err = assertAnthropicError(
    await anthropicPost(anthropicBody({ messages: [assistant('a'), user('b')] })), 400, 'invalid_request_error');
  assert.match(err.message, /first message/);

  const bad = [
    anthropicBody({ max_tokens: 1.5 }),
    anthropicBody({ max_tokens: '64' }),
    { model: 'm', messages: [user('hi')] },
    anthropicBody({ model: 7 }),
    anthropicBody({ messages: [] }),
    anthropicBody({ messages: [{ role: 'tool', content: 'x' }] }),
    anthropicBody({ system: [{ type: 'image', source: {} }] }),
    anthropicBody({ system: 5 }),
    '{oops',
  ];
  for (const body of bad) assertAnthropicError(await anthropicPost(body), 400, 'invalid_request_error');

  const ok = await anthropicPost(anthropicBody({
    system: [{ type: 'text', text: 'be terse' }],
    messages: [user('a'), assistant([{ type: 'text', text: 'b' }]), user([{ type: 'text', text: 'c' }])],
  }));
  assert.equal(ok.status, 200);
  assert.equal(ok.json().content[0].text, 'fake reply to: c');
});

test('anthropic: scripted error statuses have the documented shapes', async () => {
  await script(
    { status: 429, retry_after: 2 },
    { status: 500 },
    { status: 529 },
    { status: 401 },
    { status: 400, message: 'prompt is too long' },
  );
  const r = await anthropicPost();
  assertAnthropicError(r, 429, 'rate_limit_error');
  assert.equal(r.headers.get('retry-after'), '2');
  assertAnthropicError(await anthropicPost(), 500, 'api_error');
  const overloaded = assertAnthropicError(await anthropicPost(), 529, 'overloaded_error');
  assert.equal(overloaded.message, 'Overloaded');
  assertAnthropicError(await anthropicPost(), 401, 'authentication_error');
  assert.equal(assertAnthropicError(await anthropicPost(), 400, 'invalid_request_error').message, 'prompt is too long');
});

test('anthropic: stream_error sends deltas then event: error', async () => {
  await script({ reply: 'alpha beta gamma delta epsilon', stream_error: true }, { stream_error: true });
  const events = parseSse((await anthropicPost(anthropicBody({ stream: true }))).text);
  const names = events.map((e) => e.event);
  assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
  assert.ok(names.includes('content_block_delta'));
  assert.ok(!names.includes('message_stop'));
  assert.deepEqual(events.at(-1), {
    event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  });
  assertAnthropicError(await anthropicPost(), 529, 'overloaded_error');
});

test('anthropic: tool_use replies for tool_input and json steps when tools are defined', async () => {
  const tools = [
    { name: 'first', input_schema: { type: 'object' } },
    { name: 'emit', input_schema: { type: 'object' } },
  ];
  const input = { summary: 'ok', score: 3 };
  await script({ tool_input: input }, { json: input }, { json: input }, { tool_input: input });

  // Forced tool via tool_choice.
  let body = (await anthropicPost(anthropicBody({ tools, tool_choice: { type: 'tool', name: 'emit' } }))).json();
  assert.equal(body.stop_reason, 'tool_use');
  assert.equal(body.content.length, 1);
  assert.match(body.content[0].id, /^toolu_/);
  assert.deepEqual({ ...body.content[0], id: null }, { type: 'tool_use', id: null, name: 'emit', input });

  // json step + tools, no tool_choice: first tool.
  body = (await anthropicPost(anthropicBody({ tools }))).json();
  assert.equal(body.content[0].type, 'tool_use');
  assert.equal(body.content[0].name, 'first');

  // json step without tools: a text block holding the JSON.
  body = (await anthropicPost()).json();
  assert.deepEqual(body.content, [{ type: 'text', text: JSON.stringify(input) }]);
  assert.equal(body.stop_reason, 'end_turn');

  // Streamed tool use: input_json_delta pieces.
  const events = parseSse((await anthropicPost(anthropicBody({ tools, stream: true }))).text);
  assert.equal(events[1].data.content_block.type, 'tool_use');
  assert.equal(events[1].data.content_block.name, 'first');
  const json = events.filter((e) => e.event === 'content_block_delta').map((e) => {
    assert.equal(e.data.delta.type, 'input_json_delta');
    return e.data.delta.partial_json;
  }).join('');
  assert.deepEqual(JSON.parse(json), input);
  assert.equal(events.find((e) => e.event === 'message_delta').data.delta.stop_reason, 'tool_use');
});

// ---------------------------------------------------------------------------------------------
// Scripting behaviour shared by both providers

test('scripting: FIFO order, then the default step', async () => {
  await script({ reply: 'one' }, { reply: 'two' }, { reply: 'three' });
  const texts = [];
  for (let i = 0; i < 4; i++) texts.push((await openaiPost()).json().choices[0].message.content);
  assert.deepEqual(texts, ['one', 'two', 'three', 'fake reply to: hello there']);
});

test('scripting: provider filter skips steps meant for the other provider', async () => {
  await script(
    { reply: 'for anthropic', provider: 'anthropic' },
    { reply: 'for openai', provider: 'openai' },
    { reply: 'for anyone' },
  );
  assert.equal((await openaiPost()).json().choices[0].message.content, 'for openai');
  assert.equal((await openaiPost()).json().choices[0].message.content, 'for anyone');
  assert.equal((await openaiPost()).json().choices[0].message.content, 'fake reply to: hello there');
  assert.equal((await anthropicPost()).json().content[0].text, 'for anthropic');
});

test('scripting: delay_ms delays the answer; a client gone during the delay is dropped', async () => {
  await script({ reply: 'slow', delay_ms: 300 }, { delay_ms: 5000 }, { reply: 'after' });
  let t0 = Date.now();
  assert.equal((await openaiPost()).json().choices[0].message.content, 'slow');
  assert.ok(Date.now() - t0 >= 290, `answered after ${Date.now() - t0} ms`);

  t0 = Date.now();
  await assert.rejects(post('/v1/chat/completions', openaiBody(), OPENAI_HEADERS, { signal: AbortSignal.timeout(100) }));
  assert.ok(Date.now() - t0 < 2000);
  // The server carries on and the next step is used.
  assert.equal((await openaiPost()).json().choices[0].message.content, 'after');
});

test('scripting: malformed gives 200 application/json that is not JSON', async () => {
  await script({ malformed: true }, { malformed: true });
  for (const r of [await openaiPost(), await anthropicPost()]) {
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.throws(() => JSON.parse(r.text), SyntaxError);
  }
});

test('scripting: reset clears the queue and the recorded requests', async () => {
  await script({ reply: 'queued' });
  await openaiPost();
  await script({ reply: 'left over' });
  assert.equal((await control('GET', '/_control/script')).body.steps.length, 1);
  assert.deepEqual(await control('POST', '/_control/reset'), { status: 200, body: { ok: true } });
  assert.deepEqual((await control('GET', '/_control/requests')).body, []);
  assert.equal((await openaiPost()).json().choices[0].message.content, 'fake reply to: hello there');
});

// ---------------------------------------------------------------------------------------------
// Recording

test('recording: every provider request, including rejected ones', async () => {
  await script({ reply: 'scripted', provider: 'anthropic' });
  const t0 = Date.now();
  await openaiPost(openaiBody(), { ...OPENAI_HEADERS, 'X-Custom-Header': 'Yes' });
  await anthropicPost();
  await openaiPost('{broken');
  const { authorization, ...noAuth } = OPENAI_HEADERS;
  await openaiPost(openaiBody(), noAuth, '/chat/completions');
  await control('GET', '/_control/health'); // not recorded

  const { body: recs } = await control('GET', '/_control/requests');
  assert.equal(recs.length, 4);
  for (const rec of recs) {
    assert.deepEqual(Object.keys(rec).sort(), ['body', 'headers', 'path', 'provider', 'step_used', 'time']);
    assert.ok(rec.time >= t0 && rec.time <= Date.now());
  }
  const [ok, ant, broken, unauth] = recs;
  assert.equal(ok.provider, 'openai');
  assert.equal(ok.path, '/v1/chat/completions');
  assert.equal(ok.headers['x-custom-header'], 'Yes');
  assert.equal(ok.headers.authorization, 'Bearer sk-test');
  assert.deepEqual(ok.body, openaiBody());
  assert.deepEqual(ok.step_used, { default: true });

  assert.equal(ant.provider, 'anthropic');
  assert.equal(ant.headers['anthropic-version'], '2023-06-01');
  assert.deepEqual(ant.step_used, { reply: 'scripted', provider: 'anthropic' });

  assert.equal(broken.body, '{broken');
  assert.equal(broken.step_used, null);
  assert.equal(unauth.path, '/chat/completions');
  assert.equal(unauth.headers.authorization, undefined);
  assert.equal(unauth.step_used, null);
});

test('in-process handle: script(), requests(), reset()', async () => {
  fake.script([{ reply: 'direct' }]);
  assert.equal((await openaiPost()).json().choices[0].message.content, 'direct');
  assert.equal(fake.requests().length, 1);
  assert.throws(() => fake.script([{ nope: 1 }]), /unknown field/);
  fake.reset();
  assert.equal(fake.requests().length, 0);
});

// ---------------------------------------------------------------------------------------------
// Streaming directives

/**
 * A streamed POST read chunk by chunk with node:http, which hands over each HTTP chunk (one
 * server write) as its own 'data' event. `onChunk(buffer, soFar)` may return a promise.
 */
function streamPost(path, body, headers, onChunk = () => {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(fake.url + path, { method: 'POST', headers }, (res) => {
      const chunks = [];
      const times = [];
      res.on('data', (chunk) => {
        chunks.push(chunk);
        times.push(Date.now());
        onChunk(chunk, Buffer.concat(chunks).toString('utf8'));
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, chunks, times, complete: true }));
      res.on('error', () => resolve({ status: res.statusCode, chunks, times, complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode, chunks, times, complete: false }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const openaiStreamPost = (extra = {}, onChunk) => streamPost('/v1/chat/completions',
  openaiBody({ stream: true, stream_options: { include_usage: true }, ...extra }), OPENAI_HEADERS, onChunk);
const anthropicStreamPost = (extra = {}, onChunk) => streamPost('/v1/messages',
  anthropicBody({ stream: true, ...extra }), ANTHROPIC_HEADERS, onChunk);
const bodyText = (r) => Buffer.concat(r.chunks).toString('utf8');
const openaiText = (events) => events.filter((e) => e.data !== '[DONE]' && e.data.choices?.length)
  .map((e) => e.data.choices[0].delta.content ?? '').join('');
const anthropicText = (events) => events.filter((e) => e.event === 'content_block_delta')
  .map((e) => e.data.delta.text).join('');

test('streaming: chunk_bytes cuts anywhere; line_ending, bom and comments shape the bytes', async () => {
  const text = 'h\u00e9llo w\u00f6rld \u{1F30D} done';
  await script({ reply: text, chunk_bytes: 3, line_ending: 'crlf', bom: true, comments: true });
  const r = await openaiStreamPost();
  assert.ok(r.chunks.length > 20);
  for (const chunk of r.chunks) assert.ok(chunk.length <= 3, `a ${chunk.length}-byte write`);
  // some writes end inside a UTF-8 character, some between CR and LF
  assert.ok(r.chunks.some((c) => (c.at(-1) & 0xc0) === 0x80 || c.at(-1) >= 0xc0));
  assert.ok(r.chunks.some((c) => c.at(-1) === 0x0d));
  const raw = Buffer.concat(r.chunks);
  assert.deepEqual([...raw.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  const body = raw.subarray(3).toString('utf8');
  assert.ok(!/[^\r]\n/.test(body), 'every LF follows a CR');
  assert.ok(body.startsWith(': keep-alive\r\ndata: '));
  const events = parseSse(body.replace(/: keep-alive\r\n/g, '').replaceAll('\r\n', '\n'));
  assert.equal(openaiText(events), text);
  assert.equal(events.at(-1).data, '[DONE]');

  await script({ reply: 'one two', line_ending: 'cr', deltas: 2 });
  const cr = bodyText(await anthropicStreamPost());
  assert.ok(!cr.includes('\n'));
  assert.equal(anthropicText(parseSse(cr.replaceAll('\r', '\n'))), 'one two');
});

test('streaming: deltas and trickle_ms spread the reply over time', async () => {
  await script({ reply: 'a b c d e f', deltas: 6, trickle_ms: 500 });
  const r = await anthropicStreamPost();
  const events = parseSse(bodyText(r));
  assert.equal(events.filter((e) => e.event === 'content_block_delta').length, 6);
  assert.equal(anthropicText(events), 'a b c d e f');
  assert.ok(r.times.at(-1) - r.times[0] >= 450, `spread over ${r.times.at(-1) - r.times[0]} ms`);
});

test('streaming: truncated ends with length / max_tokens', async () => {
  await script({ reply: 'cut short', truncated: true }, { reply: 'cut short', truncated: true });
  const o = parseSse(bodyText(await openaiStreamPost()));
  assert.equal(o.find((e) => e.data.choices?.[0]?.finish_reason).data.choices[0].finish_reason, 'length');
  const a = parseSse(bodyText(await anthropicStreamPost()));
  assert.equal(a.find((e) => e.event === 'message_delta').data.delta.stop_reason, 'max_tokens');
});

test('streaming: the vllm dialect ends with a usage chunk whose choices is null', async () => {
  await script({ reply: 'x y', dialect: 'vllm', usage: { input: 3, output: 2 } });
  const events = parseSse(bodyText(await openaiStreamPost()));
  const chunks = events.slice(0, -1).map((e) => e.data);
  for (const c of chunks.slice(0, -1)) assert.ok(!('usage' in c));
  assert.deepEqual({ choices: chunks.at(-1).choices, usage: chunks.at(-1).usage },
    { choices: null, usage: { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2 } });
  assert.equal(events.at(-1).data, '[DONE]');
});

test('streaming: cut drops the connection after fail_after deltas', async () => {
  await script({ reply: 'one two three four', deltas: 4, cut: true, fail_after: 1 },
    { reply: 'one two three four', deltas: 4, cut: true, fail_after: 0, provider: 'anthropic' });
  const o = await openaiStreamPost();
  assert.equal(o.complete, false);
  const text = bodyText(o);
  assert.ok(!text.includes('[DONE]'));
  assert.equal(openaiText(parseSse(text)), 'one ');
  const a = await anthropicStreamPost();
  assert.equal(a.complete, false);
  assert.equal(anthropicText(parseSse(bodyText(a))), '');
});

test('streaming: silence_ms pauses after pause_after deltas', async () => {
  await script({ reply: 'p q r', deltas: 3, silence_ms: 400, pause_after: 2 });
  const r = await openaiStreamPost();
  const events = parseSse(bodyText(r));
  assert.equal(openaiText(events), 'p q r');
  const gaps = r.times.slice(1).map((t, i) => t - r.times[i]);
  assert.ok(Math.max(...gaps) >= 350, `longest gap ${Math.max(...gaps)} ms`);
  assert.equal(gaps.indexOf(Math.max(...gaps)), 2, 'the pause comes after the head and two deltas');
});

test('streaming: hold keeps the rest of the reply until released', async () => {
  await script({ reply: 'first second third', deltas: 3, hold: 'h1' });
  let released = false;
  let sawFirst;
  const seen = new Promise((resolve) => { sawFirst = resolve; });
  const reply = anthropicStreamPost({}, (chunk, soFar) => {
    if (soFar.includes('"text":"first "')) sawFirst(soFar);
    if (!released) assert.ok(!soFar.includes('second'), 'nothing after the hold before release');
  });
  await seen;
  assert.deepEqual((await control('GET', '/_control/holds')).body, { holds: { h1: { waiting: 1, released: false } } });
  released = true;
  assert.equal((await control('POST', '/_control/release', { hold: 'h1' })).status, 200);
  const events = parseSse(bodyText(await reply));
  assert.equal(anthropicText(events), 'first second third');
  assert.equal(events.at(-1).event, 'message_stop');
  // once released, a hold no longer stops anyone; reset lets waiting streams go and forgets holds
  await script({ reply: 'again', hold: 'h1' }, { reply: 'later', hold: 'h2' });
  assert.equal(anthropicText(parseSse(bodyText(await anthropicStreamPost()))), 'again');
  const waiting = anthropicStreamPost();
  while ((await control('GET', '/_control/holds')).body.holds.h2?.waiting !== 1) await new Promise((r) => setTimeout(r, 10));
  await control('POST', '/_control/reset');
  assert.equal(anthropicText(parseSse(bodyText(await waiting))), 'later');
  assert.deepEqual((await control('GET', '/_control/holds')).body, { holds: {} });
  assert.equal((await control('POST', '/_control/release', {})).status, 400);
});

test('streaming: stamp writes the send time in microseconds as each delta', async () => {
  await script({ reply: 'a b c', deltas: 3, stamp: true });
  const mono = () => Number(process.hrtime.bigint() / 1000n);   // the same clock in every process
  const before = mono();
  const events = parseSse(bodyText(await openaiStreamPost()));
  const after = mono();
  const stamps = events.filter((e) => e.data.choices?.[0]?.delta?.content).map((e) => e.data.choices[0].delta.content);
  assert.equal(stamps.length, 3);
  for (const s of stamps) {
    assert.match(s, /^\d+ $/);
    assert.ok(Number(s) >= before && Number(s) <= after, `${s} within [${before}, ${after}]`);
  }
});
