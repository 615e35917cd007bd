// reflog.js -- "Where HEAD has been": every move of a Space's HEAD, newest
// first (the reflog operation, as `smriti reflog` shows it), with who moved
// it, when, from which checkpoint to which; each checkpoint opens in the
// history, and a writer can bring back the state HEAD had after any move.
import { h, clear, dialog, toast, short, time } from './dom.js';
import { op, enc } from './api.js';
import { authorName } from './history.js';

const ACTIONS = {
  create: 'Created', commit: 'Checkpoint', restore: 'Restored', merge: 'Merged',
  'fast-forward': 'Fast-forward', fork: 'Forked', rename: 'Renamed', delete: 'Deleted',
};

export function reflogView(ctx) {
  const body = h('div.reflog-body', h('p.muted', { role: 'status' }, 'Loading…'));
  const el = h('div.reflog', h('div.toolbar',
    h('h2', 'Where HEAD has been'),
    h('span.muted', 'Every move of HEAD, newest first. Entry N is what ', h('code', `${ctx.space}@{N}`), ' names.')), body);
  let entries = [];

  const link = (hash) => hash
    ? h('a.hash', { href: `#/s/${enc(ctx.space)}/c/${hash}`, title: hash }, short(hash))
    : h('span.muted', 'none');

  async function restore(e) {
    const choice = await dialog('Restore this checkpoint?', [
      h('p', 'A new checkpoint with the state HEAD had after move ', h('strong', `@{${e.index}}`),
        ' (', h('code', short(e.new)), ') goes on top of HEAD of ', h('strong', ctx.space), '.'),
      h('p.muted', 'Nothing is deleted: every checkpoint stays in the history, and this move is recorded here too.')],
    [{ label: 'Cancel', value: '' }, { label: 'Restore', value: 'ok', primary: true }]);
    if (choice !== 'ok') return;
    try {
      await op('restore', { space: ctx.space, ref: e.new, author: authorName() });
      toast('Restored as a new checkpoint on top of HEAD');
      await refresh();
    } catch (err) { toast(err.message, 'error'); }
  }

  function row(e) {
    const isHead = e.index === 0 && e.new;
    return h('tr', { 'data-index': String(e.index) },
      h('td.mono', `@{${e.index}}`),
      h('td', h('span.chip', ACTIONS[e.action] || e.action)),
      h('td', e.actor || h('span.muted', 'unknown')),
      h('td', time(e.created_at)),
      h('td.mono', link(e.old), ' → ', link(e.new)),
      h('td.reason', e.reason),
      h('td.actions-cell', e.new && !isHead
        ? h('button.small', { type: 'button', 'data-needs': 'writer', 'aria-label': `Restore @{${e.index}}`, onclick: () => restore(e) }, 'Restore…')
        : isHead ? h('span.muted', 'HEAD now') : null));
  }

  function draw() {
    clear(body);
    if (!entries.length) { body.append(h('p.muted', 'HEAD has not moved yet.')); return; }
    body.append(h('div.table-wrap', h('table.reflog-table',
      h('caption.sr-only', `Moves of HEAD of ${ctx.space}, newest first`),
      h('thead', h('tr', ['Entry', 'Move', 'By', 'When', 'From → to', 'Why', ''].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', entries.map(row)))));
  }

  async function refresh() {
    try {
      entries = await op('reflog', { space: ctx.space, limit: 500 });
      draw();
    } catch (err) { clear(body).append(h('p.error', err.message)); }
  }

  refresh();
  return { el, refresh, update: () => {} };
}
