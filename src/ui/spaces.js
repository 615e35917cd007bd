// spaces.js -- the Spaces view: every Space with its HEAD's title, author
// and last activity, and for a fork how far it is ahead of and behind the
// Space it came from (space.forks: one request for the whole list); create,
// rename and delete (delete asks for the name).
//
// A server may hold thousands of Spaces: the page asks for the PAGE most
// recently active (those the filter keeps: the server filters) and for more
// on demand (a button, or j past the last), and moving the selection
// restyles two rows.  Read and drawn whole, 10,000 Spaces took seconds to
// show and seconds again for each j, and each refresh of an open page read
// 3.7 MB.
import { h, clear, time, dialog, toast, short } from './dom.js';
import { get, post, api, op, enc } from './api.js';
import { deletedSpaces } from './deleted.js';
import { aheadBehind } from './merge.js';

const PAGE = 100;
const TYPING_MS = 150;   // the filter asks once typing pauses

export function spacesView() {
  const list = h('ul.space-list', { 'aria-label': 'Spaces' });
  const filter = h('input.filter', { type: 'search', name: 'space-filter', maxlength: 200, placeholder: 'Filter by name, description or HEAD title  (/)', 'aria-label': 'Filter Spaces', oninput: () => { clearTimeout(typing); typing = setTimeout(() => { shown = PAGE; selected = 0; refresh(); }, TYPING_MS); } });
  const count = h('span.muted.count-line');
  const more = h('button.ghost.small', { type: 'button', onclick: () => { showMore(); } });
  const foot = h('div.list-foot', { hidden: true }, more);
  const name = h('input', { name: 'name', required: true, maxlength: 100, placeholder: 'New Space name', 'aria-label': 'New Space name' });
  const desc = h('input', { name: 'description', placeholder: 'What is it for? (optional)', 'aria-label': 'Description' });
  const form = h('form.create', { onsubmit: create }, name, desc, h('button.primary', { type: 'submit' }, 'Create Space'));
  const deleted = deletedSpaces(() => refresh());
  const el = h('section.page.spaces', h('div.page-head', h('h1', 'Spaces'), form),
    h('div.toolbar.space-tools', filter, count), list, foot, deleted.el);
  let rows = [];           // the Spaces answered, most recently active first: at most shown + 1
  let shown = PAGE;        // how many are drawn (one more answered says there are more)
  let asked = 0;           // the newest question's number: an older answer is dropped
  let typing = null;
  let forks = new Map();   // Space name -> {origin, ahead, behind}
  let selected = 0;

  async function create(e) {
    e.preventDefault();
    try {
      const sp = await post('/v4/repos', { name: name.value.trim(), description: desc.value.trim() || undefined });
      name.value = desc.value = '';
      location.hash = `#/s/${enc(sp.name)}`;
    } catch (err) { toast(err.message, 'error'); }
  }

  async function rename(sp) {
    const input = h('input', { name: 'name', value: sp.name, required: true, maxlength: 100, 'aria-label': 'New name' });
    if (await dialog(`Rename “${sp.name}”`, h('label', 'New name', input),
      [{ label: 'Cancel', value: '' }, { label: 'Rename', value: 'ok', primary: true }]) !== 'ok') return;
    try {
      await api('PATCH', `/v4/repos/${enc(sp.id)}`, { name: input.value.trim() });
      refresh();
    } catch (err) { toast(err.message, 'error'); }
  }

  async function remove(sp) {
    const input = h('input', { name: 'confirm', autocomplete: 'off', 'aria-label': 'Type the Space name to confirm' });
    const sessions = `${sp.sessions} session${sp.sessions === 1 ? '' : 's'}`;
    const choice = await dialog(`Delete “${sp.name}”?`, [
      h('p', sp.head ? `This deletes the Space, its checkpoints and its ${sessions}. Checkpoints shared with forks stay in those forks.`
        : sp.sessions ? `This deletes the Space (it has no checkpoints yet) and its ${sessions}.`
          : 'This deletes the Space; it has no checkpoints or sessions yet.',
      ` Until someone runs “smriti gc --prune”, the deleted Space stays recoverable from the command line (smriti reflog ${sp.name}).`),
      h('label', 'Type the Space name to confirm', input)],
    [{ label: 'Cancel', value: '' }, { label: 'Delete Space', value: 'ok', danger: true }],
    { validate: () => (input.value === sp.name ? null : `The name does not match “${sp.name}”; correct it, or Cancel.`) });
    if (choice !== 'ok') return;
    try {
      await api('DELETE', `/v4/repos/${enc(sp.id)}`);
      toast(`Deleted “${sp.name}”`);
      refresh();
    } catch (err) { toast(err.message, 'error'); }
  }

  function row(sp, i) {
    const hc = sp.head_checkpoint;
    return h('li.space-row' + (i === selected ? '.selected' : ''), { 'data-name': sp.name },
      h('div.space-main',
        h('a.space-name', { href: `#/s/${enc(sp.name)}` }, sp.name),
        forks.has(sp.name) ? h('span.muted.fork-standing', aheadBehind(forks.get(sp.name))) : null,
        sp.description ? h('span.muted.desc', sp.description) : null),
      h('div.space-head', hc
        ? [h('span.head-title', hc.title || '(untitled)'), hc.author ? h('span.chip.author', hc.author) : null,
          h('code.hash', { title: sp.head }, short(sp.head))]
        : h('span.muted', 'no checkpoints yet')),
      h('div.space-meta', h('span.muted', `${sp.sessions} session${sp.sessions === 1 ? '' : 's'}`), ' · ', time(sp.last_activity)),
      // renaming and deleting are an owner's (sp.role is absent without sign-in)
      !sp.role || sp.role === 'owner' ? h('div.space-actions',
        h('button.ghost.small', { type: 'button', onclick: () => rename(sp) }, 'Rename'),
        h('button.ghost.small.danger', { type: 'button', onclick: () => remove(sp) }, 'Delete')) : h('div.space-actions', h('span.chip.role', sp.role)));
  }

  function draw() {
    const q = filter.value.trim();
    selected = Math.min(selected, Math.max(Math.min(rows.length, shown) - 1, 0));
    clear(list);
    if (!rows.length) {
      list.append(q ? h('li.empty', `No Space matches “${q}”.`)
        : h('li.empty', 'No Spaces yet. Create one above, or with ', h('code', 'smriti space create NAME'), '.'));
    }
    rows.slice(0, shown).forEach((sp, i) => list.append(row(sp, i)));
    const n = Math.min(rows.length, shown);
    const spaces = (k) => `${k.toLocaleString('en')} Space${k === 1 ? '' : 's'}`;
    count.textContent = rows.length > shown ? `the ${n.toLocaleString('en')} most recently active Spaces`
      : q ? `${spaces(n)} ${n === 1 ? 'matches' : 'match'}` : spaces(n);
    foot.hidden = rows.length <= shown;
    more.textContent = `Show ${PAGE} more`;
  }

  // Asks for the next PAGE too; resolves once they are drawn.
  function showMore() {
    shown += PAGE;
    return refresh();
  }

  async function select(i) {
    if (i >= shown && rows.length > shown) await showMore();
    if (i >= Math.min(rows.length, shown)) return;
    list.children[selected]?.classList.remove('selected');
    selected = i;
    const li = list.children[selected];
    li?.classList.add('selected');
    li?.scrollIntoView({ block: 'nearest' });
  }

  async function refresh() {
    const q = filter.value.trim();
    const mine = ++asked;
    const params = new URLSearchParams({ limit: String(shown + 1) });
    if (q) params.set('match', q);
    try {
      const got = await get(`/v4/overview?${params}`);
      if (mine !== asked) return;
      rows = got;
      draw();
      deleted.refresh();
    } catch (err) { toast(err.message, 'error'); return; }
    // the forks' standing comes after the list: the list never waits for history walks
    try {
      const f = await op('space.forks');
      if (mine !== asked) return;
      forks = new Map(f.map((x) => [x.space, x]));
      draw();
    } catch { /* the list stands without it */ }
  }

  function keys(e) {
    if (e.key === 'j' || e.key === 'k') {
      select(Math.max(0, selected + (e.key === 'j' ? 1 : -1)));
      return true;
    }
    if (e.key === '/') { filter.focus(); return true; }
    if (e.key === 'Enter' && rows[selected] && selected < shown) {
      location.hash = `#/s/${enc(rows[selected].name)}`;
      return true;
    }
    return false;
  }

  refresh();
  return { el, refresh, keys };
}
