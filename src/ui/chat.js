// chat.js -- the sessions of a Space and a chat: turns with Markdown
// rendered safely, each reply badged with the model that wrote it and with
// its status (stopped, error, truncated, interrupted); the reply streaming
// in with Stop; a provider and model picker that can change mid-session;
// the mounted checkpoint as a banner with its boundary in the turn list;
// "what the model sees"; the checkpointing nudge; errors with a retry; and
// a notice when no provider is configured.  Long sessions render their
// newest turns first and older ones as you scroll up.
//
// Message actions (issue 26): copy a message or a code block; edit and
// re-send a question; regenerate a reply and switch between a position's
// versions ("‹ 2 / 3 ›"); continue a reply that was stopped or cut off (the
// new text joins the same bubble); start a new session from a turn.  The
// turns form a tree (each follows its parent_seq); the page shows one path,
// the session's leaf_seq, which is exactly what the model gets next.
// Nothing is ever deleted: every version stays a turn of the session.
import { h, clear, append, dialog, toast, short, time, copy } from './dom.js';
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

  // A refresh that lands while a session opens may open it again: only the
  // last open goes on past its reads, so the pane never gets two views.
  let opening = 0;
  async function open(route) {
    const id = route.args[0];
    if (current && current.id === id) return;
    const mine = ++opening;
    current?.destroy();
    current = null;
    clear(pane);
    if (!providers) await loadProviders();
    await loadSessions(id).catch((e) => toast(e.message, 'error'));
    if (mine !== opening) return;
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
  let turns = [];               // every turn of the session: a tree (parent_seq)
  let leaf = 0;                 // the end of the path shown (the session's leaf_seq)
  let msgs = [];                // the path's messages, oldest first (messages())
  let shownFrom = 0;            // index of the oldest message rendered
  let generating = null;        // { genId, el, text, buf, continues }
  let switching = 0;            // version switches not answered yet: the path shown is theirs
  let editing = 0;              // the question being edited (its sequence number)
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
  function choice() { return { provider: provSel.value, model: modelIn.value.trim() || undefined }; }

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

  // ---- the tree of turns and the path shown ----

  const parentOf = (t) => t.parent_seq ?? t.sequence_number - 1;

  function children() {
    const kids = new Map();
    for (const t of turns) {
      const p = parentOf(t);
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(t);
    }
    return kids;
  }

  // The path to leaf as messages, oldest first: a question, or a reply with
  // its parts (a stopped reply and what continued it); each with the
  // versions of its position (the turns beside its first part).
  function messages() {
    const bySeq = new Map(turns.map((t) => [t.sequence_number, t]));
    const kids = children();
    const chain = [];
    for (let t = bySeq.get(leaf); t; t = bySeq.get(parentOf(t))) chain.push(t);
    chain.reverse();
    const out = [];
    for (const t of chain) {
      const last = out.at(-1);
      if (last && last.role === 'assistant' && t.role === 'assistant') { last.parts.push(t); continue; }
      const k = kids.get(parentOf(t));
      out.push({ role: t.role, parts: [t], versions: k && k.length > 1 ? k.filter((x) => x.role === t.role) : [t] });
    }
    return out;
  }

  // What showing turn seq shows: from it, the newest follower at each step (as the server does).
  function newestEnd(seq) {
    const kids = children();
    for (let k = kids.get(seq); k && k.length; k = kids.get(seq)) seq = k.at(-1).sequence_number;
    return seq;
  }

  const text = (m) => m.parts.map((p) => p.content).join('');

  // ---- rendering ----

  function statusBadge(t) {
    return t.status && t.status !== 'complete' ? h('span.badge.status-' + t.status, STATUS_LABEL[t.status] || t.status) : null;
  }

  // The question a reply answers: the message before it on the path.
  function questionOf(m) {
    const i = msgs.indexOf(m);
    return i > 0 && msgs[i - 1].role === 'user' ? msgs[i - 1] : null;
  }

  // Retry a failed question: at the path's end the server asks the same
  // turn again in place; an older one is asked again at the end.
  function retryBtn(question) {
    const atEnd = msgs.at(-1) === question;
    return h('button.small', { type: 'button', 'data-needs': 'writer', onclick: () => send(question.parts[0].content, atEnd ? 'in-place' : 'again') }, 'Retry');
  }

  // A failed question asked again later on the path (its Retry has been used).
  function askedAgain(m) {
    return msgs.slice(msgs.indexOf(m) + 1).some((x) => x.role === 'user' && x.parts[0].content === m.parts[0].content);
  }

  // "‹ 2 / 3 ›": the versions of a position (edited questions, regenerated replies).
  function versionsEl(m) {
    const v = m.versions;
    if (v.length < 2) return null;
    const i = v.indexOf(m.parts[0]);
    const what = m.role === 'user' ? 'version' : 'reply';
    const go = (k) => switchTo(v[k].sequence_number);
    return h('span.versions', { role: 'group', 'aria-label': `${m.role === 'user' ? 'Question' : 'Reply'} versions` },
      h('button.icon', { type: 'button', 'aria-label': `Previous ${what}`, disabled: i <= 0 || !!generating, onclick: () => go(i - 1) }, '‹'),
      h('span.version-n', { 'aria-live': 'polite' }, `${i + 1} / ${v.length}`),
      h('button.icon', { type: 'button', 'aria-label': `Next ${what}`, disabled: i >= v.length - 1 || !!generating, onclick: () => go(i + 1) }, '›'));
  }

  // A "Copy code" button on each code block of rendered text.
  function codeCopy(el) {
    for (const pre of el.querySelectorAll('pre')) {
      const wrap = h('div.code-block');
      pre.replaceWith(wrap);
      pre.tabIndex = 0;
      wrap.append(h('button.small.code-copy', { type: 'button', onclick: (e) => copy(pre.textContent, e.currentTarget) }, 'Copy code'), pre);
    }
    return el;
  }

  function actionsEl(m) {
    const t = m.parts.at(-1);
    const busy = !!generating;
    const btn = (label, onclick, writer = true, extra = {}) =>
      h('button.small.ghost', { type: 'button', 'data-needs': writer ? 'writer' : null, disabled: writer && busy, onclick, ...extra }, label);
    return h('div.turn-actions', { role: 'group', 'aria-label': `Actions on ${m.role === 'user' ? 'your message' : 'the reply'} #${m.parts[0].sequence_number}` },
      btn('Copy', (e) => copy(text(m), e.currentTarget), false),
      m.role === 'user' ? btn('Edit', () => { editing = m.parts[0].sequence_number; drawTurns(false); }) : null,
      m.role === 'assistant' ? btn('Regenerate', () => regenerate(m)) : null,
      m.role === 'assistant' && t.status && t.status !== 'complete' ? btn('Continue', () => continueReply(m), true, { title: 'The model goes on from where this reply ends', class: 'small ghost continue' }) : null,
      btn('New session from here', () => forkAt(t.sequence_number), true, { title: 'A new session with the conversation up to this message; this one stays as it is' }));
  }

  function editEl(m) {
    const area = h('textarea.edit-box', { rows: 3, 'aria-label': 'Edit your message', onkeydown: (e) => {
      if (e.key === 'Escape') { e.stopPropagation(); editing = 0; drawTurns(false); }
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); saveEdit(m, area.value); }
    } });
    area.value = text(m);
    requestAnimationFrame(() => area.focus());
    return h('div.edit-form', area, h('div.buttons',
      h('button.small', { type: 'button', onclick: () => { editing = 0; drawTurns(false); } }, 'Cancel'),
      h('button.small.primary', { type: 'button', onclick: () => saveEdit(m, area.value) }, 'Send edited')),
    h('p.muted.small-note', 'Sends a new version beside this one; the old one is kept (‹ › switches back).'));
  }

  function turnEl(m, opts = {}) {
    const first = m.parts[0];
    const t = m.parts.at(-1);
    const who = m.role === 'user' ? 'You' : 'Assistant';
    const seqs = m.parts.length > 1 ? `#${first.sequence_number}–${t.sequence_number}` : `#${first.sequence_number}`;
    const parts = [h('header.turn-head', h('span.who', who), h('span.muted.seq', seqs),
      m.role === 'assistant' && t.model ? h('span.badge.model', { title: 'The model that wrote this reply' }, `${t.provider}/${t.model}`) : null,
      statusBadge(t), m.parts.length > 1 ? h('span.badge.continued', { title: `Stopped, then continued (turns ${seqs})` }, 'continued') : null,
      opts.excluded ? null : versionsEl(m), t.created_at ? time(t.created_at) : null)];
    if (editing === first.sequence_number && !opts.excluded) parts.push(editEl(m));
    else parts.push(codeCopy(md(text(m))));
    if (m.role === 'user' && first.error) {
      const next = msgs[msgs.indexOf(m) + 1];
      parts.push(h('div.turn-error', { role: 'alert' }, h('p', h('strong', 'The provider failed: '), first.error),
        !opts.excluded && next?.role !== 'assistant' && !askedAgain(m) ? retryBtn(m) : null));
    }
    if (m.role === 'assistant' && t.status === 'error') {
      // a failed reply is tried again beside itself (kept), as Regenerate does
      const q = !opts.excluded && questionOf(m);
      parts.push(h('div.turn-error', h('p', h('strong', 'The reply failed before it ended'), t.error ? `: ${t.error}` : '.'),
        q ? h('button.small', { type: 'button', 'data-needs': 'writer', onclick: () => regenerate(m) }, 'Retry') : null));
    }
    if (!opts.excluded && !first.pending && editing !== first.sequence_number) parts.push(actionsEl(m));
    return h(`article.turn.${m.role}${opts.excluded ? '.excluded' : ''}`, { 'data-seq': first.sequence_number }, parts);
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
    msgs = messages();
    // a reply being continued is drawn by the streaming bubble, in its place
    const shown = generating?.continues ? msgs.filter((m) => !m.parts.some((p) => p.sequence_number === generating.continues)) : msgs;
    clear(turnsBox);
    const b = base();
    if (shownFrom > 0) {
      turnsBox.append(h('button.link.earlier', { type: 'button', onclick: showEarlier }, `Show ${Math.min(BATCH, shownFrom)} earlier turns (${shownFrom} hidden)`));
    } else if (excluded.length) {
      turnsBox.append(h('p.muted.excluded-note', `From the session this one was forked from (turns 1–${session.history_base_seq}); not sent to the model:`));
      for (const t of excluded) turnsBox.append(turnEl({ role: t.role, parts: [t], versions: [t] }, { excluded: true }));
    }
    let drewBoundary = b === null;
    if (!drewBoundary && shownFrom === 0 && (!shown.length || shown[0].parts[0].sequence_number > b)) {
      turnsBox.append(boundaryEl());
      drewBoundary = true;
    }
    for (let i = Math.min(shownFrom, shown.length); i < shown.length; i++) {
      if (!drewBoundary && shown[i].parts[0].sequence_number > b) {
        turnsBox.append(boundaryEl());
        drewBoundary = true;
      }
      turnsBox.append(turnEl(shown[i]));
    }
    if (!shown.length && !generating) turnsBox.append(h('p.muted.empty', 'No turns yet. Say something below.'));
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
    const from = session.forked_from_session_id
      ? h('a', { href: `#/s/${enc(ctx.space)}/chat/${enc(session.forked_from_session_id)}` }, 'another session') : null;
    if (!session.mounted_commit_hash) {
      if (session.fork_seq) {
        append(banner, [h('div.banner.fork-note', h('span.chip', 'New from a turn'),
          h('span.muted', 'Started from ', from, ` at its turn ${session.fork_seq}: the turns up to there are copied here.`))]);
      }
      return;
    }
    let c = null;
    try { c = await get(`/commits/${session.mounted_commit_hash}`); } catch { /* shown by hash */ }
    append(banner, [h('div.banner.mount', h('span.chip', 'Mounted'),
      h('a', { href: `#/s/${enc(ctx.space)}/c/${session.mounted_commit_hash}` }, c ? c.title || '(untitled)' : short(session.mounted_commit_hash)),
      ' ', h('code.hash', short(session.mounted_commit_hash)),
      session.forked_from_session_id
        ? h('span.muted', ' · forked from ', from, session.fork_seq ? ` at its turn ${session.fork_seq}` : ` after its turn ${session.history_base_seq}`)
        : null)]);
  }

  async function loadExcluded() {
    excluded = [];
    // a session started from a turn holds copies of what came before: nothing is left out
    if (!session.forked_from_session_id || !session.history_base_seq || session.fork_seq) return;
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
    const grew = !session || s.turns.length !== turns.length || s.leaf_seq !== leaf;
    session = s;
    turns = s.turns;
    // a reload read before a switch was recorded would take the path shown back
    if (!switching) leaf = s.leaf_seq ?? s.last_seq;
    const n = messages().length;
    if (first) {
      shownFrom = Math.max(0, n - BATCH);
      drawHeader();
      await Promise.all([drawBanner(), loadExcluded()]);
      checkProvider();
    } else if (grew) {
      shownFrom = Math.min(shownFrom, Math.max(0, n - BATCH));
    }
    if (!generating && (first || grew)) drawTurns();
    if (first && s.generation && s.generation.status === 'running') attach(s.generation.id);
  }

  // ---- sending, and the message actions ----

  function startGenerating(prefill = '', continues = 0, model = `${provSel.value}/${modelIn.value}`) {
    const textEl = h('div.md');
    const gel = h('article.turn.assistant.streaming', { 'aria-busy': 'true' },
      h('header.turn-head', h('span.who', 'Assistant'), h('span.badge.model', model),
        continues ? h('span.badge.continued', 'continuing') : null, h('span.muted.typing', 'writing…')), textEl);
    if (prefill) textEl.append(...md(prefill).childNodes);
    generating = { genId: null, el: gel, text: textEl, buf: prefill, continues, raf: 0 };
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
      if (r.assistant_turn) { upsert(r.assistant_turn); leaf = r.assistant_turn.sequence_number; }
      nudge = r.nudge && r.nudge.suggested ? r.nudge : null;
      endGenerating();
      drawHeader();
      drawTurns();
    },
    onError: (e) => {
      const b = e.body || {};
      // with a partial reply stored, the error belongs to that reply, not to the question
      if (b.user_turn) upsert(b.assistant_turn ? b.user_turn : { ...b.user_turn, error: b.user_turn.error || e.message });
      if (b.assistant_turn) { upsert(b.assistant_turn); leaf = b.assistant_turn.sequence_number; }
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

  // Runs a send or an action: shows the path it builds on (after: the turn
  // the new question or reply follows), then streams the reply.
  async function run(path, params, { question, after, prefill = '', continues = 0 } = {}) {
    if (generating) return;
    editing = 0;
    startGenerating(prefill, continues);
    leaf = after;
    if (question) {
      const seq = (turns.at(-1)?.sequence_number || 0) + 1;
      turns.push({ role: 'user', content: question, sequence_number: seq, parent_seq: after, pending: true });
      leaf = seq;
    }
    drawTurns();
    try {
      await sendChat({ session_id: id, ...params, ...choice() }, handlers(), path);
    } catch (e) {
      endGenerating();
      toast(e.message, 'error');
    }
    turns = turns.filter((t) => !t.pending);
    load(false);
  }

  const actionPath = (what) => `/v4/sessions/${enc(id)}/${what}`;

  // retry: 'in-place' asks the failed question at the path's end again (the
  // server reuses its turn); 'again' asks an older one anew at the end.
  function send(text, retry) {
    if (!text.trim() || generating) return;
    if (!retry) box.value = '';
    const end = msgs.at(-1);
    return run('/v4/chat/send', { message: text }, retry === 'in-place'
      ? { after: leaf }
      : { question: text, after: end ? end.parts.at(-1).sequence_number : 0 });
  }

  function saveEdit(m, value) {
    if (!value.trim()) { toast('The message is empty.', 'error'); return; }
    const first = m.parts[0];
    run(actionPath('edit'), { seq: first.sequence_number, message: value }, { question: value, after: parentOf(first) });
  }

  function regenerate(m) {
    const q = questionOf(m);
    run(actionPath('regenerate'), { seq: m.parts.at(-1).sequence_number },
      { after: q ? q.parts[0].sequence_number : parentOf(m.parts[0]) });
  }

  function continueReply(m) {
    const t = m.parts.at(-1);
    run(actionPath('continue'), { seq: t.sequence_number }, { after: t.sequence_number, prefill: text(m), continues: t.sequence_number });
  }

  // Shows another version: at once here, then recorded so the next send follows it
  // (a reader may look, not record).
  async function switchTo(seq) {
    if (generating) return;
    leaf = newestEnd(seq);
    drawTurns(false);
    switching++;
    try {
      const s = await post(actionPath('switch'), { seq });
      // the last switch answered draws what was recorded, had anything drawn another since
      if (switching === 1 && s.leaf_seq !== leaf) {
        leaf = s.leaf_seq;
        drawTurns(false);
      }
    } catch (e) {
      if (e.status !== 403) toast(e.message, 'error');
    } finally {
      switching--;
    }
  }

  async function forkAt(seq) {
    try {
      const s = await post(actionPath('fork'), { seq });
      toast(`A new session with the conversation up to turn ${seq}; the old one is unchanged.`);
      location.hash = `#/s/${enc(ctx.space)}/chat/${enc(s.id)}`;
    } catch (e) { toast(e.message, 'error'); }
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
    const cmsgs = c.messages.filter((m) => m.seq !== 0 || m.content);
    dialog('What the model sees', [
      h('p.muted', `${c.provider}/${c.model} · ${c.chars} of ${c.budget_chars} characters`,
        c.commit_hash ? [' · checkpoint ', h('code.hash', short(c.commit_hash))] : ' · no checkpoint mounted',
        c.trimmed ? ` · ${c.turns_dropped.length} older turn(s) left out for the budget` : ''),
      h('h3', 'System'), h('pre.code.context', { tabindex: '0', 'aria-label': 'System text' }, c.system || '(none)'),
      h('h3', `Turns (${cmsgs.length})`),
      cmsgs.length ? h('ol.context-msgs', cmsgs.map((m) => h('li', h('span.chip', `${m.role} #${m.seq}`), h('pre.code.context', { tabindex: '0', 'aria-label': `${m.role} turn ${m.seq}` }, m.content))))
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
    refresh: () => { if (!generating && !editing) load(false); },
    destroy: () => { alive = false; },
  };
}
