// chat.js -- the sessions of a Space and a chat: turns with Markdown
// rendered safely, each reply badged with the model that wrote it and with
// its status (stopped, error, truncated, interrupted); the reply streaming
// in with Stop; a provider and model picker that can change mid-session;
// the mounted checkpoint as a banner with its boundary in the turn list;
// "what the model sees"; the checkpointing nudge; errors with a retry; and
// a notice when no provider is configured.  Long sessions render their
// newest turns first and older ones as you scroll up.
import { h, clear, append, dialog, toast, short, time } from './dom.js';
import { get, post, enc, sendChat, attachGeneration, stopGeneration } from './api.js';
import { md } from './inspect.js';

const BATCH = 60;
const PROVIDER_KEY = 'smriti.provider';
const STATUS_LABEL = { stopped: 'stopped', error: 'failed', truncated: 'cut at the token limit', interrupted: 'interrupted' };

export function chatView(ctx, first) {
  const sessions = h('ul.session-list', { 'aria-label': 'Sessions' });
  const newBtn = h('button.small', { type: 'button', 'data-needs': 'writer', onclick: newSession }, 'New session');
  const pane = h('div.chat-pane');
  const el = h('div.chat', h('aside.sessions', h('div.toolbar', h('h2', 'Sessions'), newBtn), sessions), pane);
  let list = [];
  let current = null;           // the open session's view
  let providers = null;

  async function loadProviders() {
    try { providers = await get('/v4/providers'); } catch { providers = { default: null, providers: [] }; }
  }

  async function loadSessions(selectedId) {
    list = await get(`/v4/repos/${enc(ctx.space)}/sessions`);
    list.sort((a, b) => b.created_at.localeCompare(a.created_at));
    clear(sessions);
    if (!list.length) sessions.append(h('li.empty', 'No sessions yet.'));
    for (const s of list) {
      sessions.append(h('li' + (s.id === selectedId ? '.selected' : ''),
        h('a', { href: `#/s/${enc(ctx.space)}/chat/${enc(s.id)}`, 'aria-current': s.id === selectedId ? 'page' : null },
          h('span.session-title', s.title || 'Untitled session'),
          h('span.muted.session-meta', `${s.last_seq} turn${s.last_seq === 1 ? '' : 's'}`, s.mounted_commit_hash ? ' · mounted' : '', ' · ', time(s.created_at)))));
    }
  }

  async function newSession() {
    try {
      const s = await post(`/v4/repos/${enc(ctx.space)}/sessions`, {});
      location.hash = `#/s/${enc(ctx.space)}/chat/${enc(s.id)}`;
    } catch (e) { toast(e.message, 'error'); }
  }

  async function open(route) {
    const id = route.args[0];
    if (current && current.id === id) return;
    current?.destroy();
    current = null;
    clear(pane);
    if (!providers) await loadProviders();
    await loadSessions(id).catch((e) => toast(e.message, 'error'));
    if (!id) {
      pane.append(h('div.empty-chat', h('p', 'Pick a session, or start a new one.'),
        h('p.muted', 'To chat from a checkpoint, open it in History and choose “Chat from here”.')));
      return;
    }
    current = sessionView(ctx, id, providers);
    pane.append(current.el);
  }

  open(first);
  return {
    el,
    update: open,
    keys: (e) => current?.keys(e) || false,
    refresh: async () => {
      await loadSessions(current?.id).catch(() => {});
      current?.refresh();
    },
    destroy: () => current?.destroy(),
  };
}

function sessionView(ctx, id, providers) {
  const header = h('div.session-head');
  const banner = h('div.mount-slot');
  const notice = h('div.notice-slot');
  const turnsBox = h('div.turns', { role: 'log', 'aria-label': 'Turns', tabindex: '0' });
  const provSel = h('select', { 'aria-label': 'Provider', onchange: () => { rememberProvider(); syncModel(); checkProvider(); } },
    providers.providers.map((p) => h('option', { value: p.name }, p.name + (p.configured ? '' : ' (not configured)'))));
  const modelIn = h('input.model', { 'aria-label': 'Model', list: `models-${id}` });
  const models = h('datalist', { id: `models-${id}` }, providers.providers.map((p) => h('option', { value: p.default_model })));
  const box = h('textarea', { rows: 3, 'aria-label': 'Message', placeholder: 'Message (Enter sends, Shift+Enter for a new line)', onkeydown: onBoxKey });
  const sendBtn = h('button.primary', { type: 'submit' }, 'Send');
  const stopBtn = h('button.danger', { type: 'button', hidden: true, onclick: stop }, 'Stop');
  const composer = h('form.composer', { 'data-needs': 'writer', onsubmit: (e) => { e.preventDefault(); send(box.value); } },
    box, h('div.composer-bar', h('label.inline', 'Provider ', provSel), h('label.inline', 'Model ', modelIn), models,
      h('span.grow'), stopBtn, sendBtn));
  const el = h('section.session', header, banner, notice, turnsBox, composer);
  let session = null;
  let turns = [];
  let shownFrom = 0;            // index of the oldest turn rendered
  let generating = null;        // { genId, el, text }
  let alive = true;
  let nudge = null;
  let excluded = [];

  provSel.value = savedProvider() || providers.default || providers.providers[0]?.name || '';
  syncModel();

  // The provider picked last, per browser, while this server still offers it.
  function savedProvider() {
    const name = localStorage.getItem(PROVIDER_KEY);
    return providers.providers.some((p) => p.name === name) ? name : null;
  }
  function rememberProvider() { localStorage.setItem(PROVIDER_KEY, provSel.value); }

  function provider() { return providers.providers.find((p) => p.name === provSel.value); }
  function syncModel() { modelIn.value = provider()?.default_model || ''; }

  function checkProvider() {
    clear(notice);
    const anyConfigured = providers.providers.some((p) => p.configured && p.name !== 'local');
    const p = provider();
    if (!p || !p.configured) {
      notice.append(h('div.banner.warn', { role: 'status' },
        h('p', h('strong', 'No provider is configured for chat. '), p?.reason ? `${p.reason}. ` : '',
          'Set OPENAI_API_KEY or ANTHROPIC_API_KEY (or SMRITI_LOCAL_BASE_URL for a local server) and restart the server. Everything but sending works.')));
    } else if (!anyConfigured && p.name === 'local') {
      notice.append(h('p.muted.small-note', 'Using the local OpenAI-compatible server; no cloud provider key is set.'));
    }
    sendBtn.disabled = !p || !p.configured || !!generating;
  }

  function onBoxKey(e) {
    if (e.key === 'Escape' && generating) {
      stop();
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(box.value);
    }
  }

  // ---- rendering ----

  function statusBadge(t) {
    return t.status && t.status !== 'complete' ? h('span.badge.status-' + t.status, STATUS_LABEL[t.status] || t.status) : null;
  }

  // The question a failed reply answered (the user turn before it).
  function questionOf(t) {
    const i = turns.indexOf(t);
    for (let j = i - 1; j >= 0; j--) if (turns[j].role === 'user') return turns[j];
    return null;
  }

  // A failed question asked again later (its Retry has been used).
  function askedAgain(t) {
    return turns.slice(turns.indexOf(t) + 1).some((x) => x.role === 'user' && x.content === t.content);
  }

  // Retry a question: its last failure reuses the turn (the server sees the
  // same text after a failed turn); an older one is asked again at the end.
  function retryBtn(question) {
    return h('button.small', { type: 'button', 'data-needs': 'writer', onclick: () => send(question.content, true) }, 'Retry');
  }

  function turnEl(t, opts = {}) {
    const who = t.role === 'user' ? 'You' : 'Assistant';
    const next = turns[turns.indexOf(t) + 1];
    const parts = [h('header.turn-head', h('span.who', who), h('span.muted.seq', `#${t.sequence_number}`),
      t.role === 'assistant' && t.model ? h('span.badge.model', { title: 'The model that wrote this reply' }, `${t.provider}/${t.model}`) : null,
      statusBadge(t), t.created_at ? time(t.created_at) : null)];
    parts.push(md(t.content));
    if (t.role === 'user' && t.error) {
      parts.push(h('div.turn-error', { role: 'alert' }, h('p', h('strong', 'The provider failed: '), t.error),
        !opts.excluded && next?.role !== 'assistant' && !askedAgain(t) ? retryBtn(t) : null));
    }
    if (t.role === 'assistant' && t.status === 'error') {
      const q = !opts.excluded && questionOf(t);
      parts.push(h('div.turn-error', h('p', h('strong', 'The reply failed before it ended'), t.error ? `: ${t.error}` : '.'),
        q ? retryBtn(q) : null));
    }
    return h(`article.turn.${t.role}${opts.excluded ? '.excluded' : ''}`, { 'data-seq': t.sequence_number }, parts);
  }

  function boundaryEl() {
    return h('div.boundary', { role: 'separator', 'aria-label': 'Mount boundary' },
      h('span', 'The model sees the mounted checkpoint and only the turns below this line'));
  }

  function base() {
    if (!session.mounted_commit_hash) return null;
    return session.forked_from_session_id || session.history_base_seq == null ? 0 : session.history_base_seq;
  }

  function drawTurns(keepBottom = true) {
    const atBottom = turnsBox.scrollHeight - turnsBox.scrollTop - turnsBox.clientHeight < 40;
    clear(turnsBox);
    const b = base();
    if (shownFrom > 0) {
      turnsBox.append(h('button.link.earlier', { type: 'button', onclick: showEarlier }, `Show ${Math.min(BATCH, shownFrom)} earlier turns (${shownFrom} hidden)`));
    } else if (excluded.length) {
      turnsBox.append(h('p.muted.excluded-note', `From the session this one was forked from (turns 1–${session.history_base_seq}); not sent to the model:`));
      for (const t of excluded) turnsBox.append(turnEl(t, { excluded: true }));
    }
    let drewBoundary = b === null;
    if (!drewBoundary && shownFrom === 0 && (!turns.length || turns[0].sequence_number > b)) {
      turnsBox.append(boundaryEl());
      drewBoundary = true;
    }
    for (let i = shownFrom; i < turns.length; i++) {
      if (!drewBoundary && turns[i].sequence_number > b) {
        turnsBox.append(boundaryEl());
        drewBoundary = true;
      }
      turnsBox.append(turnEl(turns[i]));
    }
    if (!turns.length) turnsBox.append(h('p.muted.empty', 'No turns yet. Say something below.'));
    if (generating) turnsBox.append(generating.el);
    if (keepBottom && (atBottom || generating)) toBottom();
  }

  // To the newest turn, now and again once the browser has laid out what
  // was just added (Markdown, code blocks and fonts can grow a turn after
  // the first measure); not if the reader has scrolled up meanwhile.
  function toBottom() {
    turnsBox.scrollTop = turnsBox.scrollHeight;
    const pinned = turnsBox.scrollTop;
    requestAnimationFrame(() => {
      if (turnsBox.scrollTop >= pinned - 2) turnsBox.scrollTop = turnsBox.scrollHeight;
    });
  }

  function showEarlier() {
    const before = turnsBox.scrollHeight - turnsBox.scrollTop;
    shownFrom = Math.max(0, shownFrom - BATCH);
    drawTurns(false);
    turnsBox.scrollTop = turnsBox.scrollHeight - before;
  }

  function onScroll() {
    if (turnsBox.scrollTop < 80 && shownFrom > 0) showEarlier();
  }
  turnsBox.addEventListener('scroll', onScroll);

  function drawHeader() {
    append(clear(header), [h('h2', session.title || 'Untitled session'),
      h('span.grow'),
      nudge ? h('button.nudge', { type: 'button', 'data-needs': 'writer', title: nudge.reasons.join('; '), onclick: draft }, h('span.dot', { 'aria-hidden': 'true' }), 'Consider a checkpoint') : null,
      h('button.small', { type: 'button', onclick: showContext }, 'What the model sees'),
      h('button.small', { type: 'button', 'data-needs': 'writer', onclick: draft }, 'Draft checkpoint')]);
  }

  async function drawBanner() {
    clear(banner);
    if (!session.mounted_commit_hash) return;
    let c = null;
    try { c = await get(`/commits/${session.mounted_commit_hash}`); } catch { /* shown by hash */ }
    append(banner, [h('div.banner.mount', h('span.chip', 'Mounted'),
      h('a', { href: `#/s/${enc(ctx.space)}/c/${session.mounted_commit_hash}` }, c ? c.title || '(untitled)' : short(session.mounted_commit_hash)),
      ' ', h('code.hash', short(session.mounted_commit_hash)),
      session.forked_from_session_id
        ? h('span.muted', ' · forked from ', h('a', { href: `#/s/${enc(ctx.space)}/chat/${enc(session.forked_from_session_id)}` }, 'another session'), ` after its turn ${session.history_base_seq}`)
        : null)]);
  }

  async function loadExcluded() {
    excluded = [];
    if (!session.forked_from_session_id || !session.history_base_seq) return;
    try {
      const parent = await get(`/v4/sessions/${enc(session.forked_from_session_id)}`);
      excluded = parent.turns.filter((t) => t.sequence_number <= session.history_base_seq).slice(-20);
    } catch { /* the parent may be gone */ }
  }

  async function load(first) {
    let s;
    try {
      s = await get(`/v4/sessions/${enc(id)}`);
    } catch (e) {
      clear(turnsBox).append(h('p.error', e.message));
      return;
    }
    if (!alive) return;
    const grew = !session || s.turns.length !== turns.length;
    session = s;
    turns = s.turns;
    if (first) {
      shownFrom = Math.max(0, turns.length - BATCH);
      drawHeader();
      await Promise.all([drawBanner(), loadExcluded()]);
      checkProvider();
    } else if (grew) {
      shownFrom = Math.min(shownFrom, Math.max(0, turns.length - BATCH));
    }
    if (!generating && (first || grew)) drawTurns();
    if (first && s.generation && s.generation.status === 'running') attach(s.generation.id);
  }

  // ---- sending ----

  function startGenerating(userText) {
    const text = h('div.md');
    const gel = h('article.turn.assistant.streaming', { 'aria-busy': 'true' },
      h('header.turn-head', h('span.who', 'Assistant'), h('span.badge.model', `${provSel.value}/${modelIn.value}`), h('span.muted.typing', 'writing…')), text);
    generating = { genId: null, el: gel, text, buf: '', pending: userText, raf: 0 };
    stopBtn.hidden = false;
    stopBtn.disabled = true;
    stopBtn.title = 'Stop needs a streaming reply';
    sendBtn.disabled = true;
  }

  function endGenerating() {
    generating = null;
    stopBtn.hidden = true;
    checkProvider();
  }

  const handlers = () => ({
    onStart: (e) => {
      if (e.generation) {
        generating.genId = e.generation.id;
        stopBtn.disabled = false;
        stopBtn.title = '';
      }
      if (e.user_turn) upsert(e.user_turn);
      drawTurns();
    },
    onDelta: (t) => {
      generating.buf += t;
      if (!generating.raf) {
        generating.raf = requestAnimationFrame(() => {
          if (!generating) return;
          generating.raf = 0;
          clear(generating.text).append(...md(generating.buf).childNodes);
          toBottom();
        });
      }
    },
    onDone: (r) => {
      upsert(r.user_turn);
      if (r.assistant_turn) upsert(r.assistant_turn);
      nudge = r.nudge && r.nudge.suggested ? r.nudge : null;
      endGenerating();
      drawHeader();
      drawTurns();
    },
    onError: (e) => {
      const b = e.body || {};
      // with a partial reply stored, the error belongs to that reply, not to the question
      if (b.user_turn) upsert(b.assistant_turn ? b.user_turn : { ...b.user_turn, error: b.user_turn.error || e.message });
      if (b.assistant_turn) upsert(b.assistant_turn);
      endGenerating();
      drawTurns();
      if (!b.user_turn) toast(e.message, 'error');
    },
  });

  function upsert(t) {
    const i = turns.findIndex((x) => x.sequence_number === t.sequence_number);
    if (i >= 0) turns[i] = t;
    else turns.push(t);
    turns.sort((a, b) => a.sequence_number - b.sequence_number);
  }

  async function send(text, retry) {
    if (!text.trim() || generating) return;
    if (!retry) box.value = '';
    startGenerating(text);
    if (!retry) {
      turns.push({ role: 'user', content: text, sequence_number: (turns.at(-1)?.sequence_number || 0) + 1, pending: true });
    }
    drawTurns();
    try {
      await sendChat({ session_id: id, message: text, provider: provSel.value, model: modelIn.value.trim() || undefined }, handlers());
    } catch (e) {
      endGenerating();
      toast(e.message, 'error');
    }
    turns = turns.filter((t) => !t.pending);
    load(false);
  }

  async function attach(genId) {
    startGenerating('');
    generating.genId = genId;
    stopBtn.disabled = false;
    drawTurns();
    const ok = await attachGeneration(genId, handlers()).catch(() => false);
    if (!ok && generating) { endGenerating(); load(false); }
  }

  async function stop() {
    if (!generating?.genId) return;
    stopBtn.disabled = true;
    try { await stopGeneration(generating.genId); } catch (e) { toast(e.message, 'error'); }
  }

  // ---- what the model sees, drafting ----

  async function showContext() {
    let c;
    try {
      c = await get(`/v4/sessions/${enc(id)}/context?provider=${enc(provSel.value)}&model=${enc(modelIn.value)}`);
    } catch (e) { toast(e.message, 'error'); return; }
    const msgs = c.messages.filter((m) => m.seq !== 0 || m.content);
    dialog('What the model sees', [
      h('p.muted', `${c.provider}/${c.model} · ${c.chars} of ${c.budget_chars} characters`,
        c.commit_hash ? [' · checkpoint ', h('code.hash', short(c.commit_hash))] : ' · no checkpoint mounted',
        c.trimmed ? ` · ${c.turns_dropped.length} older turn(s) left out for the budget` : ''),
      h('h3', 'System'), h('pre.code.context', { tabindex: '0', 'aria-label': 'System text' }, c.system || '(none)'),
      h('h3', `Turns (${msgs.length})`),
      msgs.length ? h('ol.context-msgs', msgs.map((m) => h('li', h('span.chip', `${m.role} #${m.seq}`), h('pre.code.context', { tabindex: '0', 'aria-label': `${m.role} turn ${m.seq}` }, m.content))))
        : h('p.muted', 'None yet: the next message goes alone after the system text.'),
    ], [{ label: 'Close', value: 'close', primary: true }], { wide: true });
  }

  async function draft() {
    try {
      const job = await post('/v5/checkpoints/draft', { session_id: id, provider: provSel.value, model: modelIn.value.trim() || undefined });
      location.hash = `#/s/${enc(ctx.space)}/new/${enc(job.job_id)}`;
    } catch (e) { toast(e.message, 'error'); }
  }

  function keys(e) {
    if (e.key === 'Escape' && generating?.genId) { stop(); return true; }
    return false;
  }

  load(true);
  return {
    id, el, keys,
    refresh: () => { if (!generating) load(false); },
    destroy: () => { alive = false; },
  };
}
