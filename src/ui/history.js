// history.js -- a Space's history: the checkpoint graph (the Space and the
// Spaces forked from it, restores linked to what they restored) as a
// virtual list that draws only the rows in view and loads pages as you
// scroll; beside it the inspector of the selected checkpoint, a comparison
// of two, the review, and the actions that steer: restore, fork, chat from
// here, hand to the next agent.
import { h, clear, dialog, toast, toastAction, short, copy, time } from './dom.js';
import { get, post, op, enc, authorParam } from './api.js';
import { LaneLayout, drawRow, ROW_H } from './graph.js';
import { offerSpaceNames } from './names.js';
import { checkpointView, diffView, reviewView, sideBySideView } from './inspect.js';

const PAGE = 400;
const OVERSCAN = 8;

// What a checkpoint changed against its parent, in a row: "+2 decisions,
// −1 assumption, 1 task done", ~ for items edited (the graph's per-node
// counts, computed server-side for the rows of a page).
const NOUNS = {
  decisions: ['decision', 'decisions'], assumptions: ['assumption', 'assumptions'], tasks: ['task', 'tasks'],
  open_questions: ['question', 'questions'], entities: ['entity', 'entities'], artifacts: ['artifact', 'artifacts'],
};
export function changeSummary(changes) {
  const parts = [];
  const noun = (f, k) => NOUNS[f][k === 1 ? 0 : 1];
  for (const f of Object.keys(NOUNS)) {
    const c = changes?.[f];
    if (!c) continue;
    const edited = f === 'tasks' ? c.changed - (c.done || 0) : c.changed;
    const mine = [];
    if (c.added) mine.push(`+${c.added}`);
    if (c.removed) mine.push(`−${c.removed}`);
    if (edited > 0) mine.push(`~${edited}`);
    if (mine.length) parts.push(`${mine.join(' ')} ${noun(f, c.added + c.removed + edited === 1 ? 1 : 2)}`);
    if (f === 'tasks' && c.done) parts.push(`${c.done} ${noun(f, c.done)} done`);
  }
  return parts.join(', ');
}

function changesChip(changes) {
  if (!changes) return null;
  const text = changeSummary(changes);
  return text ? h('span.row-changes', { title: `Against its parent: ${text}` }, text) : null;
}

export function historyView(ctx, first) {
  const filter = h('input.filter', { type: 'search', placeholder: 'Filter by title, author or hash  (/)', 'aria-label': 'Filter checkpoints', oninput: () => { draw(); } });
  const count = h('span.muted.count-line');
  const pickBar = h('div.pick-bar', { hidden: true });
  const spacer = h('div.vspace');
  const list = h('div.vlist', { role: 'listbox', tabindex: '0', 'aria-label': 'Checkpoints, newest first', onscroll: () => requestAnimationFrame(draw), onkeydown: listKeys }, spacer);
  const detail = h('div.detail', { tabindex: '-1', 'aria-live': 'polite' });
  const el = h('div.history', h('div.graph-pane', h('div.toolbar', filter, count), pickBar, list), detail);

  let layout = new LaneLayout();
  let nodes = [];
  let next = null;              // where the next page starts (the answer's cursor), null when all are loaded
  let loading = null;
  let selected = null;          // hash
  let route = first;
  let pickFrom = null;          // hash picked as the first of a comparison
  let raw = false;
  let blame = false;            // the inspector says who introduced each item
  let sideBySide = localStorage.getItem('smriti.compare') === 'side';
  let detailKey = '';
  // Each request to show the detail pane takes a turn.  Two requests for the
  // same view (a click and a live refresh) both render; what arrives late for
  // an earlier turn (a note, a blame) must not be added to the later one.
  let detailTurn = 0;

  async function loadFirst() {
    const g = await get(`/v4/repos/${enc(ctx.space)}/graph?limit=${PAGE}&changes=1`);
    layout = new LaneLayout();
    layout.add(g.nodes);
    nodes = g.nodes;
    next = g.cursor || null;
  }

  function loadMore() {
    if (!next || loading) return loading;
    loading = get(`/v4/repos/${enc(ctx.space)}/graph?limit=${PAGE}&cursor=${enc(next)}&changes=1`).then((g) => {
      layout.add(g.nodes);
      nodes = nodes.concat(g.nodes);
      next = g.cursor || null;
      loading = null;
      draw();
    }).catch((e) => { loading = null; toast(e.message, 'error'); });
    return loading;
  }

  function matches(n, q) {
    return n.title.toLowerCase().includes(q) || n.author.toLowerCase().includes(q) || n.hash.startsWith(q);
  }

  function visibleRows() {
    const q = filter.value.trim().toLowerCase();
    if (!q) return null;
    return layout.rows.filter((r) => matches(r.node, q));
  }

  function rowEl(row, i, cols, filtered) {
    const n = row.node;
    const isSel = n.hash === selected;
    const chips = [];
    // other Spaces' HEADs in one chip: two of them side by side were both cut to "HEAD …" in a narrow row
    const others = n.heads.filter((s) => s !== ctx.space);
    if (others.length < n.heads.length) chips.push(h('span.chip.head.own', { title: `HEAD of ${ctx.space}` }, 'HEAD'));
    if (others.length) chips.push(h('span.chip.head', { title: `HEAD of ${others.join(', ')}` },
      others.length === 1 ? `HEAD of ${others[0]}` : `HEAD of ${others.length} Spaces`));
    const elsewhere = n.spaces.filter((s) => !n.heads.includes(s));
    if (!n.own && elsewhere.length) chips.push(h('span.chip.fork', { title: `In ${elsewhere.join(', ')}` }, elsewhere.join(', ')));
    if (n.restored_from) chips.push(h('span.chip.restore', { title: `Restored from ${n.restored_from}` }, `↺ ${short(n.restored_from).slice(0, 7)}`));
    if (n.merge_parent) chips.push(h('span.chip', 'merge'));
    const r = h('div.row' + (isSel ? '.selected' : '') + (n.hash === pickFrom ? '.picked' : ''), {
      role: 'option', id: `row-${n.hash}`, 'aria-selected': isSel ? 'true' : 'false', 'data-hash': n.hash,
      onclick: (e) => clickRow(n.hash, e),
    },
    filtered ? h('span.lanes-none') : drawRow(row, cols, n.heads.includes(ctx.space)),
    h('span.row-title', n.title || '(untitled)'), changesChip(n.changes), chips,
    h('span.row-author', n.author || '—'), h('span.row-time', time(n.created_at)),
    h('code.row-hash', short(n.hash).slice(0, 7)));
    r.style.transform = `translateY(${i * ROW_H}px)`;
    return r;
  }

  function draw() {
    const rows = visibleRows();
    // a page costs what it shows, so the length of the history is known once
    // it is all loaded: until then the list reaches a page past what is
    const n = rows ? rows.length : nodes.length + (next ? PAGE : 0);
    spacer.style.height = `${n * ROW_H}px`;
    count.textContent = rows ? `${rows.length} of ${nodes.length} loaded match` : next ? `${nodes.length}+ checkpoints` : `${nodes.length} checkpoint${nodes.length === 1 ? '' : 's'}`;
    const top = list.scrollTop;
    const from = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const to = Math.min(n, Math.ceil((top + list.clientHeight) / ROW_H) + OVERSCAN);
    for (const r of [...spacer.children]) r.remove();
    const cols = layout.cols;
    for (let i = from; i < to; i++) {
      const row = rows ? rows[i] : layout.rows[i];
      if (row) {
        spacer.append(rowEl(row, i, cols, !!rows));
        continue;
      }
      const ph = h('div.row.placeholder', { role: 'option', 'aria-selected': 'false' }, 'loading…');
      ph.style.transform = `translateY(${i * ROW_H}px)`;
      spacer.append(ph);
    }
    if (!rows && to + OVERSCAN * 4 > nodes.length) loadMore();
    list.setAttribute('aria-activedescendant', selected && spacer.querySelector('.selected') ? `row-${selected}` : '');
    if (!n) spacer.append(h('div.empty', rows ? 'Nothing matches the filter.' : 'No checkpoints yet. Save one from the “New checkpoint” tab, or let an agent write one.'));
  }

  function go(path, replace) {
    const url = `#/s/${enc(ctx.space)}${path}`;
    if (replace) location.replace(url);
    else location.hash = url;
  }

  function clickRow(hash, e) {
    if (pickFrom && pickFrom !== hash) {
      const a = pickFrom;
      endPick();
      go(`/compare/${a}/${hash}`);
    } else if (e.shiftKey && selected && selected !== hash) {
      go(`/compare/${selected}/${hash}`);
    } else {
      go(`/c/${hash}`);
    }
  }

  function startPick(hash) {
    pickFrom = hash;
    pickBar.hidden = false;
    clear(pickBar).append(`Pick the checkpoint to compare ${short(hash).slice(0, 7)} with, or `,
      h('button.link', { type: 'button', onclick: endPick }, 'cancel'), ' (Esc).');
    draw();
  }

  function endPick() {
    pickFrom = null;
    pickBar.hidden = true;
    draw();
  }

  function scrollTo(hash) {
    const i = nodes.findIndex((n) => n.hash === hash);
    if (i < 0) return;
    const y = i * ROW_H;
    if (y < list.scrollTop || y + ROW_H > list.scrollTop + list.clientHeight) list.scrollTop = y - list.clientHeight / 3;
  }

  const links = {
    checkpoint: (hash) => h('a.hash', { href: `#/s/${enc(ctx.space)}/c/${hash}`, title: hash }, short(hash)),
    session: (id) => h('a', { href: `#/s/${enc(ctx.space)}/chat/${enc(id)}` }, short(id).slice(0, 8)),
  };

  // ---- the detail pane ----

  async function showCheckpoint(hash, force) {
    const key = `c/${hash}/${raw}/${blame}`;
    if (key === detailKey && !force) return;
    detailKey = key;
    const turn = ++detailTurn;
    let c;
    try {
      c = await get(`/commits/${hash}`);
    } catch (e) {
      if (turn === detailTurn) clear(detail).append(h('p.error', e.message));
      return;
    }
    if (turn !== detailTurn) return;
    const node = nodes.find((n) => n.hash === c.commit_hash);
    const isHead = node ? node.heads.includes(ctx.space) : c.commit_hash === ctx.info?.head;
    const actions = h('div.actions',
      h('div.seg', { role: 'group', 'aria-label': 'View' },
        h('button' + (raw ? '' : '.on'), { type: 'button', 'aria-pressed': String(!raw), onclick: () => { raw = false; showCheckpoint(hash); } }, 'Pretty'),
        h('button' + (raw ? '.on' : ''), { type: 'button', 'aria-pressed': String(raw), onclick: () => { raw = true; showCheckpoint(hash); } }, 'JSON')),
      h('button' + (blame ? '.on' : ''), { type: 'button', 'aria-pressed': String(blame), title: 'Who introduced each item, and in which checkpoint or session turns', onclick: () => { blame = !blame; if (blame) raw = false; showCheckpoint(hash); } }, 'Blame'),
      c.parent_hash ? h('button', { type: 'button', onclick: () => go(`/compare/${c.parent_hash}/${hash}`) }, 'Compare with parent') : null,
      h('button', { type: 'button', onclick: () => startPick(hash) }, 'Compare with…'),
      h('button', { type: 'button', 'data-needs': 'writer', onclick: () => review(c) }, 'Review'),
      isHead ? null : h('button', { type: 'button', 'data-needs': 'writer', onclick: () => restore(c) }, 'Restore…'),
      h('button', { type: 'button', onclick: () => fork(c) }, 'Fork…'),
      h('button', { type: 'button', 'data-needs': 'writer', onclick: () => chatFrom(c) }, 'Chat from here'),
      h('button.primary', { type: 'button', onclick: () => handOff(c, isHead) }, 'Hand to next agent'));
    clear(detail).append(actions, h('div.review-slot'), checkpointView(c, links, raw));
    if (blame && !raw) showBlame(c.commit_hash, turn);
    if (isHead) showNote(turn);
  }

  // HEAD's hand-off note, above the inspector: what the next agent reads first
  async function showNote(turn) {
    const head = await get(`/repos/${enc(ctx.space)}/head`).catch(() => null);
    if (turn !== detailTurn || !head?.handoff) return;
    detail.querySelector('.review-slot')?.before(lastNote(head.handoff));
  }

  // Blame: beside each item, who introduced it and where (the checkpoint,
  // or the session turns it was drafted from); the blame operation walks
  // parents, merges and restores server-side.
  async function showBlame(hash, turn) {
    let b;
    try {
      b = await get(`/v4/blame?ref=${enc(hash)}`);
    } catch (e) { toast(e.message, 'error'); return; }
    if (turn !== detailTurn) return;
    const art = detail.querySelector('article.checkpoint');
    for (const it of b.items) {
      const note = blameNote(it);
      if (it.field === 'title') art.querySelector('.ck-meta')?.after(h('p.blame-title', 'Title ', note));
      else if (it.field === 'summary') art.querySelector('.ck-summary')?.append(h('p.blame-title', 'Summary ', note));
      else {
        const li = art.querySelector(`#item-${it.field}-${it.ordinal}`);
        (li?.querySelector('summary') || li)?.append(note);
      }
    }
    art.classList.add('blamed');
  }

  function blameNote(it) {
    const by = it.introduced;
    if (by.hidden) return h('span.blame', 'from ', h('code', short(by.commit_hash).slice(0, 7)), ', a checkpoint of a Space you cannot read');
    const src = by.source ? [' · drafted from ', h('a', { href: `#/s/${enc(ctx.space)}/chat/${enc(by.source.session_id)}` },
      `turns ${by.source.first_seq}–${by.source.last_seq}`)] : null;
    if (it.here) return h('span.blame', 'new in this checkpoint', src);
    return h('span.blame', 'by ', h('span.blame-author', by.author || 'unknown'), ' in ',
      h('a', { href: `#/s/${enc(ctx.space)}/c/${by.commit_hash}`, title: by.commit_hash }, `“${by.title || short(by.commit_hash)}”`),
      ' · ', time(by.created_at), src);
  }

  async function showCompare(a, b, force) {
    const key = `cmp/${a}/${b}/${sideBySide}`;
    if (key === detailKey && !force) return;
    detailKey = key;
    const turn = ++detailTurn;
    try {
      const [ca, cb, d] = await Promise.all([get(`/commits/${a}`), get(`/commits/${b}`), op('diff', { from: a, to: b })]);
      if (turn !== detailTurn) return;
      const mode = (side, label) => h('button' + (sideBySide === side ? '.on' : ''), { type: 'button', 'aria-pressed': String(sideBySide === side),
        onclick: () => { sideBySide = side; localStorage.setItem('smriti.compare', side ? 'side' : 'unified'); showCompare(a, b); } }, label);
      clear(detail).append(h('div.actions',
        h('button', { type: 'button', onclick: () => go(`/c/${b}`) }, 'Back to checkpoint'),
        h('button', { type: 'button', onclick: () => go(`/compare/${b}/${a}`) }, 'Swap'),
        h('div.seg', { role: 'group', 'aria-label': 'Layout' }, mode(false, 'Unified'), mode(true, 'Side by side')),
        h('button', { type: 'button', onclick: () => compareWithBase(a, b) }, 'Compare with merge base')),
      otherSidePicker(b),
      h('h2', 'Compare'),
      h('p.compare-head', h('span.del', '− ', links.checkpoint(a), ' ', ca.title), h('span.add', '+ ', links.checkpoint(b), ' ', cb.title)),
      sideBySide ? sideBySideView(ca, cb, d) : diffView(d));
    } catch (e) {
      if (turn === detailTurn) clear(detail).append(h('p.error', e.message));
    }
  }

  // The merge base of the two sides (what a merge would start from) against b.
  async function compareWithBase(a, b) {
    try {
      const r = await op('merge.base', { a, b });
      if (!r.base) { toast('These two checkpoints share no history: there is no merge base.', 'error'); return; }
      if (r.base === r.a) { toast('The left side is already the merge base.'); return; }
      go(`/compare/${r.base}/${b}`);
    } catch (e) { toast(e.message, 'error'); }
  }

  // The other side by a Space's name (its HEAD) or a checkpoint (hash, prefix, SPACE~N).
  function otherSidePicker(b) {
    const input = h('input#other-side', { name: 'other', list: 'space-names', autocomplete: 'off', placeholder: 'Space name or checkpoint', required: true });
    const names = h('datalist#space-names');
    offerSpaceNames(input, names);
    const form = h('form.other-side', { onsubmit: async (e) => {
      e.preventDefault();
      const want = input.value.trim();
      if (!want) return;
      try {
        const r = await op('show', { ref: want });
        go(`/compare/${r.commit_hash}/${b}`);
      } catch (err) { toast(err.status === 404 ? `There is no Space or checkpoint “${want}”.` : err.message, 'error'); }
    } }, h('label', { for: 'other-side' }, 'Compare with'), input, names, h('button', { type: 'submit' }, 'Compare'));
    return form;
  }

  async function review(c) {
    const slot = detail.querySelector('.review-slot');
    clear(slot).append(h('p.muted', { role: 'status' }, 'Reviewing…'));
    try {
      const providers = await get('/v4/providers').catch(() => null);
      const usable = providers?.providers.some((p) => p.name === providers.default && p.configured);
      const r = await post(`/v5/checkpoints/${c.commit_hash}/review`, { llm: !!usable });
      clear(slot).append(h('section.review-box', h('h3', 'Review'), reviewView(r, (field, index) => {
        if (raw) { raw = false; showCheckpoint(c.commit_hash); }
        const target = detail.querySelector(`#item-${field}-${index}`);
        if (target) {
          target.scrollIntoView({ block: 'center' });
          target.classList.add('flash-item');
          setTimeout(() => target.classList.remove('flash-item'), 1600);
        }
      })));
    } catch (e) {
      clear(slot).append(h('p.error', e.message));
    }
  }

  // Restore: the dialog previews what changes (HEAD -> the checkpoint, field
  // by field); the write names the HEAD previewed, so if another writer moved
  // HEAD meanwhile it is refused rather than applied to a state not shown.
  async function restore(c) {
    let head;
    let d;
    try {
      head = (await get(`/v4/repos/${enc(ctx.space)}`)).head;
      d = head ? await op('diff', { from: head, to: c.commit_hash }) : null;
    } catch (e) { toast(e.message, 'error'); return; }
    const choice = await dialog('Restore this checkpoint?', [
      h('p', 'A new checkpoint with the state of “', c.title || short(c.commit_hash), '” goes on top of HEAD of ', h('strong', ctx.space), '.'),
      d ? h('section.restore-preview', { 'aria-label': 'What changes', tabindex: '0' },
        h('h3', 'What changes ', h('span.muted', '(HEAD ', h('code', short(head).slice(0, 7)), ' → this checkpoint)')),
        diffView(d)) : null,
      h('p.muted', 'Nothing is deleted: every checkpoint stays in the history, and the new one records where it came from. You can undo it.')],
    [{ label: 'Cancel', value: '' }, { label: 'Restore', value: 'ok', primary: true }], { wide: true });
    if (choice !== 'ok') return;
    let nc;
    try {
      nc = await op('restore', { space: ctx.space, ref: c.commit_hash, parent: head || undefined, author: authorName() });
    } catch (e) {
      toast(e.code === 'conflict' ? `HEAD of “${ctx.space}” moved while the preview was open (another writer): nothing was restored. Look at the new HEAD and restore again if you still want to.` : e.message, 'error');
      await reload();
      return;
    }
    await reload();
    go(`/c/${nc.commit_hash}`);
    if (head) offerUndo(head, nc);
    else toast('Restored as a new checkpoint on top of HEAD');
  }

  // Undo of a restore: bring back the HEAD from before it, as one more
  // checkpoint on top (nothing deleted), only if HEAD is still the restore.
  function offerUndo(prev, nc) {
    toastAction(`Restored as a new checkpoint on top of HEAD (${short(nc.commit_hash).slice(0, 7)}).`, 'Undo restore', async () => {
      try {
        const uc = await op('restore', { space: ctx.space, ref: prev, parent: nc.commit_hash, author: authorName() });
        toast(`Undone: HEAD has the state from before the restore again, as a new checkpoint (${short(uc.commit_hash).slice(0, 7)}).`);
        await reload();
        go(`/c/${uc.commit_hash}`);
      } catch (e) {
        toast(e.code === 'conflict' ? `Not undone: HEAD of “${ctx.space}” moved since the restore (another writer). Nothing was changed; restore ${short(prev).slice(0, 7)} by hand if you still want it.` : e.message, 'error');
        await reload();
      }
    });
  }

  async function fork(c) {
    const input = h('input', { name: 'into', required: true, maxlength: 100, value: `${ctx.space}-fork`, 'aria-label': 'Name of the new Space' });
    const choice = await dialog('Fork into a new Space', [
      h('p', 'A new Space whose HEAD is “', c.title || short(c.commit_hash), '”, sharing its history. This Space is not touched.'),
      h('label', 'Name of the new Space', input)],
    [{ label: 'Cancel', value: '' }, { label: 'Fork', value: 'ok', primary: true }]);
    if (choice !== 'ok') return;
    try {
      const sp = await op('fork', { ref: c.commit_hash, into: input.value.trim() });
      toast(`Forked into “${sp.name}”`);
      location.hash = `#/s/${enc(sp.name)}`;
    } catch (e) { toast(e.message, 'error'); }
  }

  async function chatFrom(c) {
    try {
      const s = await post(`/v4/repos/${enc(ctx.space)}/sessions`, { title: `From “${(c.title || short(c.commit_hash)).slice(0, 150)}”`, commit_hash: c.commit_hash });
      location.hash = `#/s/${enc(ctx.space)}/chat/${enc(s.id)}`;
    } catch (e) { toast(e.message, 'error'); }
  }

  async function handOff(c, isHead) {
    const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;
    const cli = isHead ? `smriti head ${q(ctx.space)} --json` : `smriti show ${c.commit_hash} --json`;
    const mcp = JSON.stringify(isHead ? { name: 'read_head', arguments: { space: ctx.space } }
      : { name: 'show_checkpoint', arguments: { ref: c.commit_hash } });
    const field = (label, value) => {
      const input = h('input.mono', { value, readonly: true, 'aria-label': label, onfocus: (e) => e.target.select() });
      const btn = h('button', { type: 'button', onclick: () => copy(value, btn, input) }, 'Copy');
      return h('div.copy-field', h('span.copy-label', label), input, btn);
    };
    const head = await get(`/repos/${enc(ctx.space)}/head`).catch(() => null);
    const note = h('textarea', { name: 'note', rows: 3, maxlength: 8192, placeholder: 'e.g. do not drop the foreign keys' });
    const writer = document.querySelector('.space')?.dataset.role !== 'reader';
    const choice = await dialog('Hand to the next agent', [
      head?.handoff ? lastNote(head.handoff) : null,
      writer ? h('label.block', isHead ? 'Note for the next agent (read with HEAD)' : 'Note for the next agent (left on the restored checkpoint)', note) : null,
      field('Hash', c.commit_hash),
      field('CLI', cli),
      field('MCP call', mcp),
      h('p.muted', isHead ? 'This is HEAD: the next agent reads it, with your note, and writes with it as --parent (MCP: parent).'
        : 'This is not HEAD. An agent continues from HEAD: “Restore and hand off” puts this state on top of HEAD and leaves your note on it, in one step.')],
    [{ label: 'Close', value: 'done' },
      ...(writer ? [{ label: isHead ? 'Hand off with note' : 'Restore and hand off', value: 'note', primary: true }] : [])],
    { wide: true });
    if (choice !== 'note') return;
    if (!note.value.trim()) { toast('Write a note for the next agent first; nothing was saved', 'error'); return; }
    try {
      const r = await op('handoff', { space: ctx.space, ref: c.commit_hash, restore: !isHead, note: note.value, author: authorName() });
      toast(r.restored ? 'Restored and handed off with your note' : 'Handed off with your note');
      await reload();
      go(`/c/${r.checkpoint.commit_hash}`);
      showCheckpoint(r.checkpoint.commit_hash, true);
    } catch (e) { toast(e.message, 'error'); }
  }

  function lastNote(n) {
    return h('section.handoff-note', { 'aria-label': 'Last hand-off note' },
      h('h3', 'Last hand-off note'),
      h('p.note-text', n.note),
      h('p.muted.small-note', n.author ? `${n.author} · ` : '', time(n.created_at), ' · ',
        n.on_head ? 'left on HEAD' : ['left on ', h('code', short(n.checkpoint)), ', before HEAD moved']));
  }

  // ---- routing, refreshing, keys ----

  // This Space's HEAD.  The graph also holds the Spaces it shares history
  // with, newest first, so its first row can be another Space's checkpoint
  // (a fork sees the newer work of the Space it was forked from).
  function ownHead() {
    return nodes.find((n) => n.heads.includes(ctx.space))?.hash || ctx.info?.head || nodes[0]?.hash;
  }

  function update(r) {
    route = r;
    if (r.tab === 'compare' && r.args[1]) {
      selected = r.args[1];
      showCompare(r.args[0], r.args[1]);
    } else {
      selected = (r.tab === 'c' && r.args[0]) || selected || ownHead() || null;
      if (selected) showCheckpoint(selected);
      else { detailKey = ''; detailTurn++; clear(detail).append(h('p.muted', 'Nothing to inspect yet.')); }
    }
    draw();
    if (selected) scrollTo(selected);
  }

  async function reload() {
    try {
      const keep = list.scrollTop;
      await loadFirst();
      list.scrollTop = keep;
      draw();
    } catch (e) { toast(e.message, 'error'); }
  }

  async function refresh() {
    await reload();
    if (detailKey.startsWith('c/')) showCheckpoint(selected, true);
  }

  function move(delta) {
    const i = nodes.findIndex((n) => n.hash === selected);
    const j = Math.max(0, Math.min(nodes.length - 1, (i < 0 ? 0 : i + delta)));
    if (!nodes[j]) return;
    selected = nodes[j].hash;     /* at once, so that keys pressed quickly walk on */
    go(`/c/${selected}`, true);
  }

  function listKeys(e) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      move(e.key === 'ArrowDown' ? 1 : -1);
    }
  }

  function keys(e) {
    if (e.key === 'j' || e.key === 'k') { move(e.key === 'j' ? 1 : -1); return true; }
    // Enter on a button or link presses it (Undo in a notice, an action): not ours
    if (e.key === 'Enter' && selected && !e.target.closest?.('button, a[href], summary')) { detail.focus(); return true; }
    if (e.key === '/') { filter.focus(); return true; }
    if (e.key === 'c' && selected) {
      const n = nodes.find((x) => x.hash === selected);
      if (n?.parent) go(`/compare/${n.parent}/${n.hash}`);
      return true;
    }
    if (e.key === 'Escape' && pickFrom) { endPick(); return true; }
    return false;
  }

  loadFirst().then(() => update(route)).catch((e) => clear(detail).append(h('p.error', e.message)));
  const onResize = () => draw();
  window.addEventListener('resize', onResize);
  return { el, update, refresh, keys, destroy: () => window.removeEventListener('resize', onResize) };
}

// The author a write sends: see authorParam (undefined: the server's rule applies).
export function authorName() {
  return authorParam();
}
