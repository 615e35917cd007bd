// Fake LLM provider for Smriti's test suite.
//
// Speaks just enough of the OpenAI Chat Completions and Anthropic Messages wire formats
// (see shared/WIRE.md sections 1, 2 and 4) for Smriti's provider adapters to be tested without a
// network: request validation, non-stream and SSE replies, each provider's error shapes, and
// the ways a stream goes wrong (cut at any byte, trickled, silent, held, cut off, failing
// mid-way). Tests drive it through a small control API under /_control/ (scripted reply steps in
// a FIFO queue, a log of every provider request, holds to release). See README.md beside this
// file.
//
// Usage: node tests/fake-provider/server.mjs [--port N]   (prints "LISTENING <port>" when ready)
//    or: import { startFakeProvider } from './server.mjs'  (in-process, for node tests)
//
// Node 20, no dependencies beyond node: built-ins.

import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

const STEP_KEYS = new Set([
  'reply', 'json', 'tool_input', 'status', 'retry_after', 'message',
  'delay_ms', 'malformed', 'stream_error', 'provider', 'usage',
  // streaming only
  'deltas', 'truncated', 'dialect', 'line_ending', 'bom', 'comments', 'chunk_bytes',
  'trickle_ms', 'cut', 'fail_after', 'silence_ms', 'hold', 'pause_after', 'stamp',
]);

const LINE_ENDINGS = { lf: '\n', crlf: '\r\n', cr: '\r' };

// ---------------------------------------------------------------------------------------------
// Small helpers

const isPlainObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

const randomId = (prefix, bytes = 12) => prefix + randomBytes(bytes).toString('hex');

/** Text of a message `content` (string, array of blocks, or nested tool results). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(contentText).filter(Boolean).join(' ');
  if (isPlainObject(content)) {
    if (typeof content.text === 'string') return content.text;
    if (content.content !== undefined) return contentText(content.content);
  }
  return '';
}

/** Rough token count: whitespace-separated words. */
const countWords = (text) => text.split(/\s+/).filter(Boolean).length;

/** Split text into up to `parts` pieces whose concatenation is the original text. */
function splitText(text, parts = 3) {
  if (text === '') return [];
  const words = text.match(/\S+\s*|\s+/g);
  const units = words.length >= parts ? words : Array.from(text);
  const size = Math.ceil(units.length / parts);
  const pieces = [];
  for (let i = 0; i < units.length; i += size) pieces.push(units.slice(i, i + size).join(''));
  return pieces;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error('request body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw) {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false, value: raw };
  }
}

function sendJson(res, status, value, headers = {}) {
  if (res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(status, statusText(status), {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

const statusText = (status) => http.STATUS_CODES[status] ?? (status === 529 ? 'Overloaded' : 'Unknown');

function openSse(res, headers) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
  res.flushHeaders();
}

/** Wait `ms`, resolving false early if the client goes away meanwhile. */
function waitUnlessClosed(res, ms) {
  return new Promise((resolve) => {
    const onClose = () => { clearTimeout(timer); resolve(false); };
    const timer = setTimeout(() => { res.off('close', onClose); resolve(!res.destroyed); }, ms);
    res.once('close', onClose);
  });
}

// ---------------------------------------------------------------------------------------------
// Reply planning, shared by both providers

/** Name of the tool the request forces (or its first tool). */
function forcedToolName(providerName, body) {
  const choice = body.tool_choice;
  const first = body.tools[0] ?? {};
  if (providerName === 'openai') {
    return choice?.function?.name ?? first.function?.name ?? first.name ?? 'tool';
  }
  return (choice?.type === 'tool' && choice.name) || first.name || 'tool';
}

function lastUserText(messages) {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return last ? contentText(last.content) : '';
}

/**
 * Decide what a successful reply contains: `{text}` or `{tool: {id, name, input}}`, plus usage.
 * A tool call is made only when the request defines tools and the step gives an object input
 * (`tool_input`, or for Anthropic also `json`).
 */
function planReply(providerName, body, step) {
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const toolInput = step.tool_input ?? (providerName === 'anthropic' ? step.json : undefined);
  let reply;
  if (hasTools && isPlainObject(toolInput)) {
    const id = randomId(providerName === 'openai' ? 'call_' : 'toolu_');
    reply = { tool: { id, name: forcedToolName(providerName, body), input: toolInput } };
  } else if (step.reply !== undefined) {
    reply = { text: String(step.reply) };
  } else if (step.json !== undefined) {
    reply = { text: JSON.stringify(step.json) };
  } else if (step.tool_input !== undefined) {
    reply = { text: JSON.stringify(step.tool_input) };
  } else {
    reply = { text: `fake reply to: ${lastUserText(body.messages)}` };
  }
  const outputText = reply.tool ? JSON.stringify(reply.tool.input) : reply.text;
  const promptText = contentText(body.system ?? '') + ' ' + body.messages.map((m) => contentText(m.content)).join(' ');
  reply.usage = {
    input: step.usage?.input ?? Math.max(1, countWords(promptText)),
    output: step.usage?.output ?? countWords(outputText),
  };
  return reply;
}

// ---------------------------------------------------------------------------------------------
// Streaming, shared by both providers: what is sent, then how its bytes go out

/**
 * One planned SSE event: `data` (a JSON value or a literal string) and an optional `event` name.
 * A text delta also has `withText(text)`, which rebuilds it with other text (for `stamp`).
 */
const sseEvent = (data, event, withText) => ({ data, event, withText });

/**
 * Microseconds on the machine's monotonic clock (CLOCK_MONOTONIC, the same in every process), the
 * clock a `stamp` step writes into each delta: the epoch through performance.timeOrigin is off by
 * up to a millisecond between two processes, more than the latency it would measure.
 */
const monoMicros = () => process.hrtime.bigint() / 1000n;

/** Deltas sent before a scripted mid-stream error or cut: `fail_after`, else a couple, never all. */
const deltasBeforeFailure = (step, n) => step.fail_after ?? Math.min(2, Math.max(1, n - 1));

/**
 * The stream as events and actions: the head, the deltas (with a pause, for `silence_ms` or
 * `hold`, after `pause_after` of them), the tail; or for `stream_error` / `cut` the head, a few
 * deltas, then the error event or the cut.
 */
function streamPlan(step, { head, deltas, tail, error }) {
  if (step.stream_error || step.cut) {
    const sent = deltas.slice(0, deltasBeforeFailure(step, deltas.length));
    return [...head, ...sent, step.cut ? { action: 'cut' } : error];
  }
  if (step.silence_ms === undefined && step.hold === undefined) return [...head, ...deltas, ...tail];
  const at = step.pause_after ?? 1;
  return [...head, ...deltas.slice(0, at), { action: 'pause' }, ...deltas.slice(at), ...tail];
}

/** An event's bytes: a keep-alive comment first with `comments`, lines ended per `line_ending`. */
function renderEvent(step, ev) {
  const eol = LINE_ENDINGS[step.line_ending ?? 'lf'];
  const value = step.stamp && ev.withText ? ev.withText(`${monoMicros()} `) : ev.data;
  const payload = typeof value === 'string' ? value : JSON.stringify(value);
  return (step.comments ? `: keep-alive${eol}` : '') + (ev.event ? `event: ${ev.event}${eol}` : '')
    + `data: ${payload}${eol}${eol}`;
}

/**
 * The writes: one per event (rendered when it is sent), or with `chunk_bytes` the bytes between
 * two actions cut every that many bytes, inside a UTF-8 character or a CRLF as it falls.
 */
function planWrites(step, plan) {
  const writes = [];
  let run = step.bom ? '\uFEFF' : '';
  const flush = () => {
    const bytes = Buffer.from(run, 'utf8');
    for (let i = 0; i < bytes.length; i += step.chunk_bytes) writes.push(bytes.subarray(i, i + step.chunk_bytes));
    run = '';
  };
  for (const item of plan) {
    if (!step.chunk_bytes) writes.push(item);
    else if (item.action) { flush(); writes.push(item); }
    else run += renderEvent(step, item);
  }
  if (step.chunk_bytes) flush();
  return writes;
}

/** Holds: a stream waits at a `hold` step until `POST /_control/release` names it. */
function holdNamed(state, name) {
  if (!state.holds.has(name)) state.holds.set(name, { released: false, waiting: 0, wakers: new Set() });
  return state.holds.get(name);
}

function waitForRelease(state, res, name) {
  const hold = holdNamed(state, name);
  if (hold.released) return Promise.resolve(!res.destroyed);
  hold.waiting++;
  return new Promise((resolve) => {
    const done = (ok) => {
      hold.waiting--;
      hold.wakers.delete(wake);
      res.off('close', onClose);
      resolve(ok && !res.destroyed);
    };
    const wake = () => done(true);
    const onClose = () => done(false);
    hold.wakers.add(wake);
    res.once('close', onClose);
  });
}

function release(state, name) {
  const hold = holdNamed(state, name);
  hold.released = true;
  for (const wake of [...hold.wakers]) wake();
}

/** The pause of a `silence_ms` and/or `hold` step; false once the client has gone. */
async function pause(state, res, step) {
  if (step.silence_ms !== undefined && !(await waitUnlessClosed(res, step.silence_ms))) return false;
  return step.hold === undefined || waitForRelease(state, res, step.hold);
}

/** Drops the connection once what was written has gone out: no terminating chunk, no end event. */
function cut(res) {
  if (!res.socket) return res.destroy();
  return res.socket.write('', () => res.destroy());
}

/** Sends a planned stream: 200 and headers at once, then the writes, spread over `trickle_ms`. */
async function sendStream(state, res, step, plan, headers) {
  const writes = planWrites(step, plan);
  const gap = step.trickle_ms ? step.trickle_ms / Math.max(1, writes.filter((w) => !w.action).length - 1) : 0;
  let bom = step.bom && !step.chunk_bytes ? '\uFEFF' : '';
  let sent = 0;

  openSse(res, headers);
  for (const w of writes) {
    if (w.action === 'cut') return cut(res);
    if (w.action === 'pause') {
      if (!(await pause(state, res, step))) return undefined;
      continue;
    }
    if (gap && sent++ > 0 && !(await waitUnlessClosed(res, gap))) return undefined;
    if (res.destroyed) return undefined;
    res.write(Buffer.isBuffer(w) ? w : bom + renderEvent(step, w));
    bom = '';
  }
  return res.end();
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

const OPENAI_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

const OPENAI_ERRORS = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: {
    type: 'invalid_request_error', code: 'invalid_api_key',
    message: 'Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again later.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

function bearerToken(headers) {
  const match = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? '');
  return match ? match[1] : null;
}

function openaiErrorBody(status, { message, code, param } = {}) {
  const known = OPENAI_ERRORS[status]
    ?? (status >= 500 ? OPENAI_ERRORS[500] : { type: 'invalid_request_error', code: null, message: 'Request failed.' });
  return {
    error: {
      message: message ?? known.message,
      type: known.type,
      param: param ?? null,
      code: code !== undefined ? code : known.code,
    },
  };
}

function openaiInvalid(message, param = null) {
  return { status: 400, message, param };
}

function validateOpenaiMessage(m, i) {
  const where = `messages[${i}]`;
  if (!isPlainObject(m)) return openaiInvalid(`Invalid type for '${where}': expected an object.`, where);
  if (!OPENAI_ROLES.has(m.role)) {
    return openaiInvalid(
      `Invalid value: '${m.role}'. Supported values are: 'system', 'developer', 'user', 'assistant', and 'tool'.`,
      `${where}.role`);
  }
  const toolCallOnly = m.role === 'assistant' && Array.isArray(m.tool_calls) && m.content == null;
  if (typeof m.content !== 'string' && !Array.isArray(m.content) && !toolCallOnly) {
    return openaiInvalid(`Invalid type for '${where}.content': expected a string or an array.`, `${where}.content`);
  }
  return null;
}

/** Returns null when the request is acceptable, else `{status, message, code?, param?}`. */
function validateOpenai(headers, parsed) {
  if (!bearerToken(headers)) {
    return {
      status: 401, code: 'invalid_api_key',
      message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    };
  }
  if (!parsed.ok) return openaiInvalid('We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly.)');
  const body = parsed.value;
  if (!isPlainObject(body)) return openaiInvalid('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') return openaiInvalid('you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages)) return openaiInvalid("Missing required parameter: 'messages'.", 'messages');
  if (body.messages.length === 0) return openaiInvalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages');
  for (const [i, m] of body.messages.entries()) {
    const problem = validateOpenaiMessage(m, i);
    if (problem) return problem;
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return openaiInvalid("Invalid type for 'stream': expected a boolean.", 'stream');
  }
  return null;
}

function openaiUsage({ input, output }) {
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0,
    },
  };
}

function openaiToolCall({ id, name, input }) {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

function openaiReply(res, body, reply) {
  const message = reply.tool
    ? { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [openaiToolCall(reply.tool)] }
    : { role: 'assistant', content: reply.text, refusal: null, annotations: [] };
  sendJson(res, 200, {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.tool ? 'tool_calls' : 'stop' }],
    usage: openaiUsage(reply.usage),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  }, { 'x-request-id': randomId('req_') });
}

/** Deltas after the first one: content pieces, or tool-call argument pieces. */
function openaiDeltas(reply, parts) {
  if (!reply.tool) {
    return {
      first: { role: 'assistant', content: '' },
      pieces: splitText(reply.text, parts).map((content) => ({ content })),
    };
  }
  const { id, name, input } = reply.tool;
  return {
    first: {
      role: 'assistant', content: null,
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
    },
    pieces: splitText(JSON.stringify(input), parts).map((args) => ({ tool_calls: [{ index: 0, function: { arguments: args } }] })),
  };
}

/**
 * Chunks carry `usage: null` when usage was asked for, and a last chunk `choices: []` with the
 * usage; the `vllm` dialect leaves `usage` out of the chunks and ends with `choices: null`.
 */
function openaiStream(state, res, body, reply, step) {
  const includeUsage = body.stream_options?.include_usage === true;
  const vllm = step.dialect === 'vllm';
  const base = {
    id: randomId('chatcmpl-'),
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: 'fp_fake',
  };
  const chunk = (delta, finishReason = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage && !vllm ? { usage: null } : {}),
  });
  const { first, pieces } = openaiDeltas(reply, step.deltas);
  const finish = reply.tool ? 'tool_calls' : step.truncated ? 'length' : 'stop';
  const usage = vllm
    ? { prompt_tokens: reply.usage.input, total_tokens: reply.usage.input + reply.usage.output, completion_tokens: reply.usage.output }
    : openaiUsage(reply.usage);
  const textDelta = reply.tool ? undefined : (text) => chunk({ content: text });

  return sendStream(state, res, step, streamPlan(step, {
    head: [sseEvent(chunk(first))],
    deltas: pieces.map((delta) => sseEvent(chunk(delta), undefined, textDelta)),
    tail: [
      sseEvent(chunk({}, finish)),
      ...(includeUsage ? [sseEvent({ ...base, choices: vllm ? null : [], usage })] : []),
      sseEvent('[DONE]'),
    ],
    error: sseEvent(openaiErrorBody(500)),
  }), { 'x-request-id': randomId('req_') });
}

const openai = {
  name: 'openai',
  validate: validateOpenai,
  sendError(res, status, details = {}, headers = {}) {
    sendJson(res, status, openaiErrorBody(status, details), { 'x-request-id': randomId('req_'), ...headers });
  },
  // A stream_error step sent to a non-stream request fails the way the stream would have.
  streamErrorStatus: 500,
  reply: openaiReply,
  stream: openaiStream,
};

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const ANTHROPIC_ERRORS = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'Internal server error'],
  504: ['timeout_error', 'Request timed out.'],
  529: ['overloaded_error', 'Overloaded'],
};

function anthropicErrorBody(status, { message } = {}, requestId = randomId('req_')) {
  const [type, defaultMessage] = ANTHROPIC_ERRORS[status]
    ?? (status >= 500 ? ANTHROPIC_ERRORS[500] : ['invalid_request_error', 'Request failed.']);
  return { type: 'error', error: { type, message: message ?? defaultMessage }, request_id: requestId };
}

const anthropicInvalid = (message) => ({ status: 400, message });

function validateAnthropicSystem(system) {
  if (system === undefined || typeof system === 'string') return null;
  const ok = Array.isArray(system)
    && system.every((b) => isPlainObject(b) && b.type === 'text' && typeof b.text === 'string');
  return ok ? null : anthropicInvalid('system: Input should be a valid string or a list of text blocks');
}

function validateAnthropicMessages(messages) {
  if (!Array.isArray(messages)) return anthropicInvalid('messages: Field required');
  if (messages.length === 0) return anthropicInvalid('messages: at least one message is required');
  for (const [i, m] of messages.entries()) {
    if (!isPlainObject(m)) return anthropicInvalid(`messages.${i}: Input should be a valid dictionary`);
    if (m.role === 'system') {
      return anthropicInvalid('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.');
    }
    if (m.role !== 'user' && m.role !== 'assistant') {
      return anthropicInvalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      return anthropicInvalid(`messages.${i}.content: Input should be a valid string or list`);
    }
    if (i === 0 && m.role !== 'user') return anthropicInvalid('messages: first message must use the "user" role');
    if (i > 0 && m.role === messages[i - 1].role) {
      return anthropicInvalid(`messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`);
    }
  }
  return null;
}

/** Returns null when the request is acceptable, else `{status, message}`. */
function validateAnthropic(headers, parsed) {
  if (!headers['x-api-key'] && !bearerToken(headers)) {
    return { status: 401, message: 'x-api-key header is required' };
  }
  if (!headers['anthropic-version']) return anthropicInvalid('anthropic-version: header is required');
  if (!parsed.ok) return anthropicInvalid('There was an error parsing the body of your request as JSON.');
  const body = parsed.value;
  if (!isPlainObject(body)) return anthropicInvalid('Request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') return anthropicInvalid('model: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return anthropicInvalid('max_tokens: Input should be a valid integer greater than or equal to 1');
  }
  return validateAnthropicMessages(body.messages) ?? validateAnthropicSystem(body.system);
}

function anthropicUsage({ input, output }) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  };
}

function anthropicContentBlock(reply) {
  if (reply.tool) return { type: 'tool_use', id: reply.tool.id, name: reply.tool.name, input: reply.tool.input };
  return { type: 'text', text: reply.text };
}

function anthropicMessage(body, reply, overrides = {}) {
  return {
    id: randomId('msg_'),
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [anthropicContentBlock(reply)],
    stop_reason: reply.tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(reply.usage),
    ...overrides,
  };
}

function anthropicReply(res, body, reply) {
  sendJson(res, 200, anthropicMessage(body, reply), { 'request-id': randomId('req_') });
}

/** content_block_start's block and the deltas that fill it. */
function anthropicBlockStream(reply, parts) {
  if (reply.tool) {
    const { id, name, input } = reply.tool;
    return {
      block: { type: 'tool_use', id, name, input: {} },
      deltas: splitText(JSON.stringify(input), parts).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    };
  }
  return {
    block: { type: 'text', text: '' },
    deltas: splitText(reply.text, parts).map((text) => ({ type: 'text_delta', text })),
  };
}

function anthropicStream(state, res, body, reply, step) {
  const event = (type, fields = {}) => sseEvent({ type, ...fields }, type);
  const start = anthropicMessage(body, reply, {
    content: [], stop_reason: null, usage: { ...anthropicUsage(reply.usage), output_tokens: 1 },
  });
  const { block, deltas } = anthropicBlockStream(reply, step.deltas);
  const stopReason = reply.tool ? 'tool_use' : step.truncated ? 'max_tokens' : 'end_turn';
  const textDelta = (text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });

  return sendStream(state, res, step, streamPlan(step, {
    head: [
      event('message_start', { message: start }),
      event('content_block_start', { index: 0, content_block: block }),
      event('ping'),
    ],
    deltas: deltas.map((delta) => sseEvent({ type: 'content_block_delta', index: 0, delta },
      'content_block_delta', reply.tool ? undefined : textDelta)),
    tail: [
      event('content_block_stop', { index: 0 }),
      event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: reply.usage.output },
      }),
      event('message_stop'),
    ],
    error: event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
  }), { 'request-id': randomId('req_') });
}

const anthropic = {
  name: 'anthropic',
  validate: validateAnthropic,
  sendError(res, status, details = {}, headers = {}) {
    const requestId = randomId('req_');
    sendJson(res, status, anthropicErrorBody(status, details, requestId), { 'request-id': requestId, ...headers });
  },
  streamErrorStatus: 529,
  reply: anthropicReply,
  stream: anthropicStream,
};

// ---------------------------------------------------------------------------------------------
// Routing, scripting and recording

function providerFor(method, path) {
  if (method !== 'POST') return null;
  if (path === '/v1/chat/completions' || path === '/chat/completions') return openai;
  if (path === '/v1/messages') return anthropic;
  return null;
}

/** Remove and return the first queued step for this provider, or the default step. */
function takeStep(state, providerName) {
  const i = state.queue.findIndex((s) => s.provider === undefined || s.provider === providerName);
  if (i === -1) return { default: true };
  return state.queue.splice(i, 1)[0];
}

const isCount = (v, min) => Number.isInteger(v) && v >= min;
const isMs = (v) => typeof v === 'number' && v >= 0;

/** Why a streaming field of the step is invalid, or null. */
function checkStreamFields(step, at) {
  for (const key of ['deltas', 'chunk_bytes']) {
    if (step[key] !== undefined && !isCount(step[key], 1)) return `${at}.${key} must be a positive integer`;
  }
  for (const key of ['fail_after', 'pause_after']) {
    if (step[key] !== undefined && !isCount(step[key], 0)) return `${at}.${key} must be a non-negative integer`;
  }
  for (const key of ['trickle_ms', 'silence_ms']) {
    if (step[key] !== undefined && !isMs(step[key])) return `${at}.${key} must be a non-negative number`;
  }
  if (step.line_ending !== undefined && !(step.line_ending in LINE_ENDINGS)) return `${at}.line_ending must be "lf", "crlf" or "cr"`;
  if (step.dialect !== undefined && step.dialect !== 'vllm') return `${at}.dialect must be "vllm"`;
  if (step.hold !== undefined && (typeof step.hold !== 'string' || step.hold === '')) return `${at}.hold must be a name`;
  if (step.stamp && step.chunk_bytes) return `${at}: stamp and chunk_bytes do not go together`;
  return null;
}

function checkStep(step, i) {
  const at = `steps[${i}]`;
  if (!isPlainObject(step)) return `${at} must be an object`;
  const unknown = Object.keys(step).filter((k) => !STEP_KEYS.has(k));
  if (unknown.length) return `${at} has unknown field(s): ${unknown.join(', ')}`;
  if (step.provider !== undefined && step.provider !== 'openai' && step.provider !== 'anthropic') {
    return `${at}.provider must be "openai" or "anthropic"`;
  }
  if (step.status !== undefined && !Number.isInteger(step.status)) return `${at}.status must be an integer`;
  if (step.delay_ms !== undefined && !isMs(step.delay_ms)) return `${at}.delay_ms must be a non-negative number`;
  if (step.tool_input !== undefined && !isPlainObject(step.tool_input)) return `${at}.tool_input must be an object`;
  return checkStreamFields(step, at);
}

/** `{name: {waiting, released}}` for every hold named so far. */
const holdSummary = (state) => Object.fromEntries(
  [...state.holds].map(([name, h]) => [name, { waiting: h.waiting, released: h.released }]));

/** Empties the queue and the log; streams waiting at a hold are let go. */
function reset(state) {
  state.queue.length = 0;
  state.requests.length = 0;
  for (const name of state.holds.keys()) release(state, name);
  state.holds.clear();
}

async function handleControl(state, req, res, path) {
  const route = `${req.method} ${path}`;
  if (route === 'GET /_control/health') return sendJson(res, 200, { ok: true });
  if (route === 'GET /_control/requests') return sendJson(res, 200, state.requests);
  if (route === 'GET /_control/script') return sendJson(res, 200, { steps: state.queue });
  if (route === 'GET /_control/holds') return sendJson(res, 200, { holds: holdSummary(state) });
  if (route === 'POST /_control/reset') {
    reset(state);
    return sendJson(res, 200, { ok: true });
  }
  if (route === 'POST /_control/release') {
    const parsed = parseJson(await readBody(req));
    const name = parsed.ok && isPlainObject(parsed.value) ? parsed.value.hold : undefined;
    if (typeof name !== 'string' || name === '') return sendJson(res, 400, { ok: false, error: 'body must be {"hold":"<name>"}' });
    release(state, name);
    return sendJson(res, 200, { ok: true });
  }
  if (route === 'POST /_control/script') {
    const parsed = parseJson(await readBody(req));
    const steps = parsed.ok && isPlainObject(parsed.value) ? parsed.value.steps : undefined;
    if (!Array.isArray(steps)) return sendJson(res, 400, { ok: false, error: 'body must be {"steps":[...]}' });
    const problem = steps.map(checkStep).find(Boolean);
    if (problem) return sendJson(res, 400, { ok: false, error: problem });
    state.queue.push(...steps);
    return sendJson(res, 200, { ok: true, queued: state.queue.length });
  }
  return sendJson(res, 404, { ok: false, error: `no control route ${route}` });
}

/** Answer a valid provider request according to its step. */
async function respond(state, provider, res, body, step) {
  if (step.delay_ms > 0 && !(await waitUnlessClosed(res, step.delay_ms))) return;
  const headers = step.retry_after !== undefined ? { 'retry-after': String(step.retry_after) } : {};
  const wantsStream = body.stream === true;

  if (step.status >= 400) return provider.sendError(res, step.status, { message: step.message }, headers);
  if (step.malformed) {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    return res.end('{"id": "fake-malformed", "choices": [ this is not JSON');
  }
  if (step.stream_error && !wantsStream) return provider.sendError(res, provider.streamErrorStatus, {}, headers);

  const reply = planReply(provider.name, body, step);
  if (!wantsStream) return provider.reply(res, body, reply);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  return provider.stream(state, res, body, reply, step);
}

async function handleProvider(state, provider, req, res, path) {
  const raw = await readBody(req);
  const parsed = parseJson(raw);
  const record = {
    provider: provider.name,
    path,
    headers: { ...req.headers },
    body: parsed.ok ? parsed.value : raw,
    step_used: null,
    time: Date.now(),
  };
  state.requests.push(record);

  const rejection = provider.validate(req.headers, parsed);
  if (rejection) return provider.sendError(res, rejection.status, rejection);

  record.step_used = takeStep(state, provider.name);
  return respond(state, provider, res, parsed.value, record.step_used);
}

async function handle(state, req, res) {
  const path = new URL(req.url, 'http://localhost').pathname;
  if (path.startsWith('/_control/')) return handleControl(state, req, res, path);
  const provider = providerFor(req.method, path);
  if (provider) return handleProvider(state, provider, req, res, path);
  return sendJson(res, 404, { error: { message: `No route for ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
}

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * Start a fake provider on 127.0.0.1. Resolves to
 * `{ url, port, close(), script(steps), reset(), requests(), release(name), holds() }`; each
 * server has its own state.
 */
export async function startFakeProvider({ port = 0 } = {}) {
  const state = { queue: [], requests: [], holds: new Map() };
  const server = http.createServer((req, res) => {
    handle(state, req, res).catch((err) => {
      process.stderr.write(`fake-provider: ${err.stack ?? err}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'fake provider internal error' } });
      else res.destroy();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const actualPort = server.address().port;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    script(steps) {
      const problem = steps.map(checkStep).find(Boolean);
      if (problem) throw new Error(problem);
      state.queue.push(...steps);
    },
    reset() { reset(state); },
    release(name) { release(state, name); },
    holds: () => holdSummary(state),
    requests: () => state.requests,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

function parsePortArg(argv) {
  const i = argv.indexOf('--port');
  if (i === -1) return 0;
  const port = Number(argv[i + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`fake-provider: bad --port value ${argv[i + 1]}\n`);
    process.exit(2);
  }
  return port;
}

async function main() {
  const fake = await startFakeProvider({ port: parsePortArg(process.argv.slice(2)) });
  process.stdout.write(`LISTENING ${fake.port}\n`);
  const stop = () => fake.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`fake-provider: ${err.stack ?? err}\n`);
    process.exit(1);
  });
}
