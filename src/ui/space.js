// space.js -- one Space: its name, HEAD and tabs (History, Chat, New
// checkpoint, Ingest), each a sub-view that gets the route and refreshes.
import { h, clear, append, short } from './dom.js';
import { get, op, enc, signedInAs, signInAsSomeoneElse } from './api.js';
import { historyView } from './history.js';
import { chatView } from './chat.js';
import { editorView } from './editor.js';
import { ingestView } from './ingest.js';
import { reflogView } from './reflog.js';
import { mergeView, forkStanding, standingLine } from './merge.js';

// [id, label, view, role it needs]: a reader sees history and sessions only
const TABS = [
  ['history', 'History', historyView, 'reader'],
  ['chat', 'Chat', chatView, 'reader'],
  ['new', 'New checkpoint', editorView, 'writer'],
  ['ingest', 'Ingest', ingestView, 'writer'],
  ['reflog', 'Where HEAD has been', reflogView, 'reader'],
  ['merge', 'Merge', mergeView, 'writer'],
];

const RANK = { reader: 0, writer: 1, owner: 2 };

// What a caller whose role is below a tab's need sees there (the address
// can be typed or followed even though the tab is hidden): no form that
// the server would then refuse.
function readOnlyView(ctx, label) {
  const space = `#/s/${enc(ctx.space)}`;
  return {
    el: h('div.read-only', { role: 'status' },
      h('h2', `${label}: read only`),
      h('p', 'You can read this Space but not write to it: your role here is ', h('strong', ctx.info.role), '.'),
      h('p', 'Its ', h('a', { href: space }, 'History'), ' and ', h('a', { href: `${space}/chat` }, 'Chat'),
        ' are open to you. To save checkpoints or ingest transcripts, ask an owner of the Space for the writer role.')),
  };
}

// What a link to a Space that cannot be opened shows.  The server answers a
// Space the caller may not read exactly as one that is not there (404,
// docs/security.md), so the words cover both and tell them apart for no
// one; signed in, they say who is signed in and offer another sign-in.
function noSpaceView(ctx) {
  const who = signedInAs();
  const back = h('a', { href: '#/' }, 'Back to Spaces');
  const deleted = h('p.deleted-hint');
  const el = h('div.read-only.no-space', { role: 'status' },
    h('h2', who ? 'Not a Space you may read' : 'No such Space'),
    who ? h('p', 'Signed in as ', h('strong', who), ', there is no Space “', ctx.space,
      '” you may read: there is none by that name, or it is not shared with you. Ask its owner for a role on it, or sign in as someone who has one.')
      : h('p', `There is no Space “${ctx.space}” (any more).`),
    deleted,
    h('p.actions', back, who ? [' ', h('button', { type: 'button', onclick: signInAsSomeoneElse }, 'Sign in as someone else')] : null));
  // a deleted Space the caller could read is listed for recovery (space.deleted keeps to those)
  op('space.deleted').then((v) => {
    if ((v || []).some((sp) => sp.name === ctx.space)) {
      deleted.append(`“${ctx.space}” was deleted; `, h('a', { href: '#/' }, 'recover it'),
        ' from Recently deleted on the Spaces list.');
    }
  }).catch(() => {});
  return { el };
}

export function spaceView(first) {
  const title = h('h1');
  const info = h('p.muted.space-info');
  const standing = h('p.muted.space-standing');
  const tabs = h('nav.tabs', { 'aria-label': 'Space' });
  const body = h('div.space-body');
  const el = h('section.page.space', h('div.page-head', h('div', title, info, standing), tabs), body);
  const ctx = { space: first.space, info: null, missing: false };
  let sub = null;
  let tab = null;               // the tab shown, ":read-only" when the role is below its need
  let route = first;
  let ready = false;            // the caller's role is known

  async function loadInfo() {
    try {
      ctx.info = await get(`/v4/repos/${enc(ctx.space)}`);
      ctx.missing = false;
      // the signed-in caller's role (absent without sign-in: every right); CSS hides the rest
      el.dataset.role = ctx.info.role || 'owner';
      append(clear(info), [ctx.info.description || '', ctx.info.description ? ' · ' : '',
        ctx.info.head ? ['HEAD ', h('code.hash', short(ctx.info.head))] : 'no checkpoints yet']);
      // a fork's ahead/behind against the Space it came from (merge.js)
      const s = await forkStanding(ctx.space);
      clear(standing);
      if (s) standing.append(standingLine(ctx.space, s));
    } catch (e) {
      ctx.info = null;
      ctx.missing = e.status === 404;   // noSpaceView says so in the body
      clear(standing);
      clear(info);
      if (!ctx.missing) info.append(h('span.error', e.message));
    }
  }

  function drawTabs(active) {
    clear(tabs);
    for (const [id, label, , needs] of TABS) {
      const tabTarget = id === 'history' ? '' : `/${id}`;
      tabs.append(h('a' + (id === active ? '.active' : ''),
        { href: `#/s/${enc(ctx.space)}${tabTarget}`, 'aria-current': id === active ? 'page' : null,
          'data-needs': needs === 'reader' ? null : needs }, label));
    }
  }

  // A role below what the tab needs (known once loadInfo has answered).
  function allowed(needs) {
    return !ctx.info?.role || RANK[ctx.info.role] >= RANK[needs];
  }

  // What the body shows for route r: a tab, the tab read only, or no Space.
  function keyOf(r) {
    const entry = TABS.find((t) => t[0] === r.tab) || TABS[0];
    if (ctx.missing) return ':missing';
    return allowed(entry[3]) ? entry[0] : `${entry[0]}:read-only`;
  }

  function update(r) {
    route = r;
    title.textContent = r.space;
    if (!ready) return;
    const entry = TABS.find((t) => t[0] === r.tab) || TABS[0];
    const key = keyOf(r);
    if (ctx.missing) clear(tabs);
    else drawTabs(entry[0]);
    if (tab !== key) {
      sub?.destroy?.();
      clear(body);
      tab = key;
      sub = ctx.missing ? noSpaceView(ctx) : key === entry[0] ? entry[2](ctx, r) : readOnlyView(ctx, entry[1]);
      body.append(sub.el);
    } else {
      sub.update?.(r);
    }
  }

  async function refresh() {
    await loadInfo();
    // against the tab shown now: a navigation may have changed it meanwhile
    if (tab !== keyOf(route)) update(route);
    else sub?.refresh?.();
  }

  title.textContent = first.space;
  loadInfo().then(() => { ready = true; update(route); });
  return {
    el, update, refresh,
    // Enter on a focused link or button is that control's own (e.g. "Merge into X…")
    keys: (e) => (e.key === 'Enter' && e.target.closest?.('a[href], button') ? false : sub?.keys?.(e)),
    destroy: () => sub?.destroy?.(),
  };
}
