// api.js -- the HTTP API as the UI uses it: JSON in and out, errors as
// ApiError {status, code, message, body}, and the streaming chat client of
// docs/http.md ("Streaming chat").  Every state change goes through the
// server's operations; the UI holds no domain logic.

// Who this page is signed in as: GET /v4/auth's answer, set once by app.js.
let identity = null;
export function setIdentity(auth) { identity = auth; }

// The name the server records this page's writes under: a user's token
// (person or agent) always writes as that user, whatever author is given.
// null when the author given applies (no users, or the server's own token),
// and without one the server's default (never a name the UI made up).
export function recordedAs() {
  return identity?.authenticated && typeof identity.user?.name === 'string' ? identity.user.name : null;
}

// The person or agent this page is signed in as, when the server has users
// and it is not the server's own token (which reads every Space); else null.
export function signedInAs() {
  const u = identity?.token_required && identity.user;
  return u && u.kind !== 'admin' && typeof u.name === 'string' ? u.name : null;
}

// Signs out and loads the same address again: the token form comes up, and
// whoever signs in next lands where this page was.
export async function signInAsSomeoneElse() {
  try { await api('DELETE', '/v4/auth'); } catch { /* the cookie is gone either way */ }
  location.reload();
}

// The author to send with a write: none when the server records the
// token's identity, else what the person typed (kept from last time), else
// none.  Who frees: nothing (a string or undefined, which JSON leaves out).
export function authorParam(typed) {
  if (recordedAs()) return undefined;
  const t = typed === undefined ? localStorage.getItem('smriti.author') : typed;
  return t && t.trim() ? t.trim() : undefined;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `request failed (${status})`);
    this.status = status;
    this.code = body?.error?.code || 'error';
    this.body = body;
  }
}

let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

// signal (optional): an AbortSignal that cancels the request.
export async function api(method, path, body, signal) {
  const init = { method, headers: { Accept: 'application/json' }, signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (res.status === 401) onUnauthorized();
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

export const get = (path, signal) => api('GET', path, undefined, signal);
export const post = (path, body = {}) => api('POST', path, body);
export const op = (name, params = {}) => post(`/api/ops/${encodeURIComponent(name)}`, params)
  .then((r) => r.result);
export const enc = encodeURIComponent;

// ---- streaming chat ----------------------------------------------------------

// Parses a text/event-stream body, calling onEvent({id, event, data}) per
// event; resolves when the stream ends.  Comments (": keep-alive") are skipped.
async function readEvents(res, onEvent, signal) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let ev = { id: null, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.search(/\r?\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' ? 2 : 1));
      if (line === '') {
        if (ev.data.length) onEvent({ id: ev.id, event: ev.event, data: JSON.parse(ev.data.join('\n')) });
        ev = { id: null, event: 'message', data: [] };
      } else if (line[0] !== ':') {
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (field === 'data') ev.data.push(val);
        else if (field === 'event') ev.event = val;
        else if (field === 'id') ev.id = Number(val);
      }
    }
    if (signal?.aborted) break;
  }
}

// Sends a chat message, streaming when the server can.  handlers:
//   onStart({generation, user_turn}), onDelta(text), onDone(result),
//   onError(ApiError-like {message, code, body}).
// Resolves once the reply ended (done or error).  A server without streaming
// answers one JSON document: that is reported as onStart + onDone.  If the
// connection drops mid-reply, the client reattaches to the generation with
// Last-Event-ID (the reply belongs to the session, not to this tab).
// A send, or a message action (path: /v4/sessions/ID/edit|regenerate|continue), answered alike.
export async function sendChat(params, handlers, path = '/v4/chat/send') {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' },
    body: JSON.stringify({ ...params, stream: true }),
  });
  const type = res.headers.get('Content-Type') || '';
  if (!type.startsWith('text/event-stream')) {
    const body = await res.json().catch(() => null);
    if (!res.ok) return handlers.onError(new ApiError(res.status, body));
    handlers.onStart?.({ generation: null, user_turn: body.user_turn });
    return handlers.onDone(body);
  }
  return followStream(res, null, handlers);
}

async function followStream(res, genId, handlers) {
  let last = 0;
  let ended = false;
  const onEvent = (e) => {
    if (e.id) last = e.id;
    if (e.event === 'generation') {
      genId = e.data.generation.id;
      handlers.onStart?.(e.data);
    } else if (e.event === 'delta') {
      handlers.onDelta?.(e.data.text);
    } else if (e.event === 'done') {
      ended = true;
      handlers.onDone(e.data);
    } else if (e.event === 'error') {
      ended = true;
      handlers.onError({ message: e.data.error.message, code: e.data.error.code, body: e.data });
    } else if (e.event === 'closed') {
      // this tab's access to the reply ended (token revoked, role removed); the reply goes on
      ended = true;
      handlers.onError({ message: `the stream was closed: ${e.data.error.message}`, code: e.data.error.code, body: e.data });
    }
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await readEvents(res, onEvent);
    } catch { /* the connection dropped: reattach below */ }
    if (ended || !genId || attempt >= 5) break;
    await new Promise((r) => setTimeout(r, 300 * (attempt + 1)));
    try {
      res = await fetch(`/v4/generations/${enc(genId)}`, {
        headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(last) },
      });
      if (!res.ok) break;
    } catch { /* try again */ }
  }
  if (!ended) handlers.onError({ message: 'the connection to the reply was lost; reload the session', code: 'lost' });
}

// Attaches to a generation already running (after a reload or a session switch).
export async function attachGeneration(genId, handlers) {
  const res = await fetch(`/v4/generations/${enc(genId)}`, { headers: { Accept: 'text/event-stream' } });
  if (!res.ok) return false;
  await followStream(res, genId, handlers);
  return true;
}

export const stopGeneration = (genId) => post(`/v4/generations/${enc(genId)}/stop`);
