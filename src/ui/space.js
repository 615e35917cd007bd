// space.js -- one Space: its name, HEAD and tabs (History, Chat, New
// checkpoint, Ingest), each a sub-view that gets the route and refreshes.
import { h, clear, append, short } from './dom.js';
import { get, enc } from './api.js';
import { historyView } from './history.js';
import { chatView } from './chat.js';
import { editorView } from './editor.js';
import { ingestView } from './ingest.js';
import { mergeView, forkStanding, standingLine } from './merge.js';

// [id, label, view, role it needs]: a reader sees history and sessions only
const TABS = [
  ['history', 'History', historyView, 'reader'],
  ['chat', 'Chat', chatView, 'reader'],
  ['new', 'New checkpoint', editorView, 'writer'],
  ['ingest', 'Ingest', ingestView, 'writer'],
  ['merge', 'Merge', mergeView, 'writer'],
];

export function spaceView(first) {
  const title = h('h1');
  const info = h('p.muted.space-info');
  const standing = h('p.muted.space-standing');
  const tabs = h('nav.tabs', { 'aria-label': 'Space' });
  const body = h('div.space-body');
  const el = h('section.page.space', h('div.page-head', h('div', title, info, standing), tabs), body);
  const ctx = { space: first.space, info: null };
  let sub = null;
  let tab = null;

  async function loadInfo() {
    try {
      ctx.info = await get(`/v4/repos/${enc(ctx.space)}`);
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
      clear(info).append(h('span.error', e.status === 404 ? `There is no Space “${ctx.space}” (any more).` : e.message));
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

  function update(route) {
    title.textContent = route.space;
    const entry = TABS.find((t) => t[0] === route.tab) || TABS[0];
    drawTabs(entry[0]);
    if (tab !== entry[0]) {
      sub?.destroy?.();
      clear(body);
      tab = entry[0];
      sub = entry[2](ctx, route);
      body.append(sub.el);
    } else {
      sub.update?.(route);
    }
  }

  async function refresh() {
    await loadInfo();
    sub?.refresh?.();
  }

  loadInfo();
  update(first);
  return {
    el, update, refresh,
    // Enter on a focused link or button is that control's own (e.g. "Merge into X…")
    keys: (e) => (e.key === 'Enter' && e.target.closest?.('a[href], button') ? false : sub?.keys?.(e)),
    destroy: () => sub?.destroy?.(),
  };
}
