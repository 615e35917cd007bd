// deleted.js -- recently deleted Spaces, under the Spaces list: a deleted
// Space is kept (its checkpoints and reflog) until `smriti gc --prune`, and
// recovering one is what the CLI does, `smriti fork ID@{1} --into NAME`: a
// Space whose HEAD is the deleted one's last HEAD, sharing its history.
import { h, clear, dialog, toast, short, time } from './dom.js';
import { op } from './api.js';

export function deletedSpaces(onRecovered) {
  const list = h('ul.deleted-list', { 'aria-label': 'Recently deleted Spaces' });
  // Enter on its summary or a button is theirs, not the Spaces list's "open the selected Space"
  const ownKeys = (e) => { if (e.key === 'Enter' && e.target.closest('summary, button')) e.stopPropagation(); };
  const el = h('details.deleted', { ontoggle: () => { if (el.open) refresh(); }, onkeydown: ownKeys },
    h('summary', 'Recently deleted Spaces'),
    h('p.muted.small-note', 'Kept until someone runs “smriti gc --prune”. Recovering one makes a Space with its last HEAD and whole history.'),
    list);

  async function recover(sp) {
    const input = h('input', { name: 'name', value: sp.name, required: true, maxlength: 100, 'aria-label': 'Name of the recovered Space' });
    const choice = await dialog(`Recover “${sp.name}”?`, [
      h('p', 'A Space whose HEAD is the deleted Space’s last HEAD (', h('code', short(sp.head)), '), with its history, as ', h('code', `smriti fork ${sp.name}@{1} --into NAME`), ' does.'),
      h('label.block', 'Name of the recovered Space', input)],
    [{ label: 'Cancel', value: '' }, { label: 'Recover', value: 'ok', primary: true }]);
    if (choice !== 'ok') return;
    try {
      const made = await op('fork', { ref: `${sp.id}@{1}`, into: input.value.trim() });
      toast(`Recovered as “${made.name}”`);
      await refresh();
      onRecovered?.(made);
    } catch (err) { toast(err.message, 'error'); }
  }

  function row(sp) {
    return h('li.deleted-row', { 'data-name': sp.name },
      h('span.space-name', sp.name),
      h('span.muted', 'deleted ', time(sp.deleted_at)),
      sp.head ? h('code.hash', { title: sp.head }, short(sp.head)) : h('span.muted', 'no checkpoints'),
      sp.head ? h('button.small', { type: 'button', 'aria-label': `Recover ${sp.name}`, onclick: () => recover(sp) }, 'Recover…')
        : h('span.muted', 'nothing to recover'));
  }

  async function refresh() {
    try {
      const v = await op('space.deleted');
      clear(list);
      if (!v.length) list.append(h('li.empty', 'No deleted Spaces are kept.'));
      v.forEach((sp) => list.append(row(sp)));
    } catch (err) { clear(list).append(h('li.error', err.message)); }
  }

  return { el, refresh: () => { if (el.open) refresh(); } };
}
