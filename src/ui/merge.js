// merge.js -- merging another line into a Space, as GitHub and Dolt
// Workbench do: pick the other side (a Space by name, or a Checkpoint), see
// whether it would merge cleanly, what would change and how far each line
// went, settle each conflict (ours / theirs / edit), name the merge, Merge.
// The server computes everything (a dry run of the merge operation); this
// view only shows it and sends the choices back.  Also: a fork's standing
// against the Space it came from, for the Space header.
//
//   #/s/NAME/merge                 pick the other side
//   #/s/NAME/merge/OTHER           merge OTHER into NAME
//   #/s/NAME/merge/OTHER/into      merge NAME into OTHER
import { h, clear, append, short, toast } from './dom.js';
import { get, post, op, enc } from './api.js';
import { offerSpaceNames } from './names.js';

const FIELDS = { summary: 'Summary', decisions: 'Decisions', assumptions: 'Assumptions', tasks: 'Tasks',
  open_questions: 'Open questions', entities: 'Entities', artifacts: 'Artifacts' };
const KEY = { entities: 'name', artifacts: 'name' };

const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

// The text a person edits for an item (an artifact's content; else its key text).
function editText(field, item) {
  if (field === 'summary') return item ?? '';
  if (!item) return '';
  if (field === 'artifacts') return item.content ?? '';
  return item[KEY[field] || 'text'] ?? '';
}

// An item as its side holds it, edited: the text (or content) replaced.
function edited(field, item, text) {
  if (field === 'summary') return text;
  if (!text.trim()) return null;  // emptied: the item is dropped
  if (field === 'artifacts') return { ...item, content: text };
  return { ...item, [KEY[field] || 'text']: text };
}

function sideText(field, v) {
  if (v == null) return h('em.muted', '(not there)');
  if (typeof v === 'string') return v || h('em.muted', '(empty)');
  const main = editText(field, v);
  const extra = v.status && v.status !== 'open' ? ` [${v.status}]` : '';
  return field === 'artifacts' ? [h('strong', v.name), ': ', main] : main + extra;
}

// "What a fork stands at": its origin, ahead/behind and would-merge-cleanly, for the header.
// Where it came from is the forks' standing (space.forks, which the Spaces page reads too): the
// Space's reflog, read whole for its fork entry, was a million entries for a long-lived Space.
export async function forkStanding(space) {
  const forks = await op('space.forks').catch(() => []);
  const origin = forks.find((f) => f.space === space)?.origin;
  if (!origin) return null;
  // a dry run of a merge needs the right to merge into the origin: ask only where it is there
  // (the origin alone, not the overview of every Space: 3.7 MB at 10,000 Spaces)
  const o = await get(`/v4/repos/${enc(origin)}`).catch(() => null);
  if (!o || (o.role && o.role !== 'owner' && o.role !== 'writer')) return null;
  try {
    const r = await post(`/v4/repos/${enc(origin)}/merge`, { ref: space, dry_run: true });
    return { origin, ...r };
  } catch { return null; }
}

// "2 ahead of X, 1 behind", X a link to the origin: the header's and the Spaces list's words.
export function aheadBehind(s) {
  return h('span.ahead-behind', `${s.ahead} ahead of `, h('a', { href: `#/s/${enc(s.origin)}` }, s.origin),
    `, ${s.behind} behind`);
}

// The header's line for a fork: "2 ahead of X, 1 behind [would merge cleanly] Merge into X…".
export function standingLine(space, s) {
  const verdict = s.status === 'conflict' ? h('span.chip.merge-conflicts', plural(s.conflicts.length, 'conflict'))
    : s.status === 'up-to-date' ? h('span.chip', 'nothing to merge')
      : h('span.chip.merge-clean', 'would merge cleanly');
  return h('span.fork-standing', { 'data-origin': s.origin },
    aheadBehind(s), ' ', verdict, ' ',
    s.ahead ? h('a.merge-link', { href: `#/s/${enc(space)}/merge/${enc(s.origin)}/into` }, `Merge into ${s.origin}…`) : null);
}

export function mergeView(ctx, first) {
  const other = h('input#merge-other', { name: 'other', list: 'merge-spaces', required: true, autocomplete: 'off',
    placeholder: 'Space name or Checkpoint hash' });
  const names = h('datalist#merge-spaces');
  const dir = h('select#merge-dir', { name: 'direction' },
    h('option', { value: 'from' }, 'Merge from it into this Space'),
    h('option', { value: 'into' }, 'Merge this Space into it'));
  const pick = h('form.merge-pick', { onsubmit: (e) => { e.preventDefault(); go(); } },
    h('label', { for: 'merge-other' }, 'Other side'), other, names,
    h('label.sr-only', { for: 'merge-dir' }, 'Direction'), dir,
    h('button.primary', { type: 'submit' }, 'Preview merge'));
  const out = h('div.merge-out', { 'aria-live': 'polite' });
  const el = h('div.merge-view', h('h2', 'Merge'), pick, out);
  let plan = null;   // { target, ref, head, result }

  function go() {
    const o = other.value.trim();
    if (!o) return;
    location.hash = `#/s/${enc(ctx.space)}/merge/${enc(o)}${dir.value === 'into' ? '/into' : ''}`;
  }

  async function load(route) {
    const o = route.args[0];
    other.value = o || '';
    dir.value = route.args[1] === 'into' ? 'into' : 'from';
    clear(out);
    plan = null;
    if (!o) {
      out.append(h('p.muted', 'Pick a Space (a fork, or the Space a fork came from) or a Checkpoint to merge.'));
      return;
    }
    const target = dir.value === 'into' ? o : ctx.space;
    const ref = dir.value === 'into' ? ctx.space : o;
    try {
      const head = (await get(`/v4/repos/${enc(target)}`)).head || '';
      const result = await post(`/v4/repos/${enc(target)}/merge`, { ref, dry_run: true, expect_head: head });
      plan = { target, ref, head, result };
      draw();
    } catch (e) {
      out.append(h('p.error', { role: 'alert' }, e.message));
    }
  }

  function draw() {
    const { target, ref, result: r } = plan;
    clear(out);
    out.append(h('p.merge-summary',
      h('strong', ref), ' into ', h('strong', target), ': ',
      h('span.ahead-behind', `${ref} is ${r.ahead} ahead and ${r.behind} behind`), ' · ',
      r.status === 'conflict' ? h('span.chip.merge-conflicts', plural(r.conflicts.length, 'conflict'))
        : r.status === 'up-to-date' ? h('span.chip', 'already up to date')
          : h('span.chip.merge-clean', r.status === 'fast-forward' ? 'would merge cleanly (fast-forward)' : 'would merge cleanly')));
    if (r.status === 'up-to-date') {
      out.append(h('p.muted', `${target} already has everything of ${ref}: nothing to merge.`));
      return;
    }
    if (r.status === 'merged') out.append(changes(r.checkpoint));
    if (r.status === 'fast-forward') out.append(h('p', `HEAD of ${target} moves forward to `, h('code.hash', short(r.checkpoint.commit_hash)), ` (${r.checkpoint.title || 'untitled'}); no merge Checkpoint is written.`));
    if (r.status === 'conflict') out.append(conflictList(r.conflicts));
    out.append(commitForm(r));
  }

  // What the merge adds to or takes from the receiving Space's HEAD.
  function changes(merged) {
    const box = h('section.merge-changes', h('h3', 'What will change'));
    const wrap = h('div');
    box.append(wrap);
    get(`/repos/${enc(plan.target)}/head`).catch((e) => { if (e.status === 404) return {}; throw e; }).then((head) => {
      const lines = [];
      for (const f of Object.keys(FIELDS)) {
        if (f === 'summary') {
          if ((head.summary || '') !== (merged.summary || '')) lines.push(h('li', h('span.field', 'Summary'), ' changes'));
          continue;
        }
        const k = (x) => JSON.stringify(x);
        const had = new Set((head[f] || []).map(k));
        const has = new Set((merged[f] || []).map(k));
        for (const x of merged[f] || []) if (!had.has(k(x))) lines.push(h('li.add', h('span.field', FIELDS[f]), ' + ', sideText(f, x)));
        for (const x of head[f] || []) if (!has.has(k(x))) lines.push(h('li.del', h('span.field', FIELDS[f]), ' − ', sideText(f, x)));
      }
      append(wrap, lines.length ? h('ul.merge-change-list', lines) : h('p.muted', 'No field changes: the merge only records that the lines met.'));
    }).catch((e) => wrap.append(h('p.error', e.message)));
    return box;
  }

  function conflictList(conflicts) {
    const box = h('section.merge-conflicts-list', h('h3', `Conflicts (${conflicts.length})`),
      h('p.muted', `Settle each one: keep ${plan.target}'s (ours), take ${plan.ref}'s (theirs), or edit it.`));
    conflicts.forEach((c, i) => box.append(conflictRow(c, i)));
    return box;
  }

  function conflictRow(c, i) {
    const name = `c${i}`;
    const text = h('textarea', { 'aria-label': `Edited ${FIELDS[c.field]}${c.item ? ' ' + c.item : ''}`, rows: 2, hidden: true },
      editText(c.field, c.ours ?? c.theirs));
    const radio = (side, label, v) => h('label.side', h('input', { type: 'radio', name, value: side,
      onchange: () => { text.hidden = side !== 'edit'; if (side === 'edit') text.focus(); } }), h('span.side-name', label), h('span.side-value', v));
    const fs = h('fieldset.conflict', { 'data-field': c.field, 'data-item': c.item ?? '' },
      h('legend', FIELDS[c.field] || c.field, c.item ? [' · ', h('span.item', c.item)] : null),
      c.base !== undefined ? h('p.muted.base', 'Was: ', sideText(c.field, c.base)) : null,
      radio('ours', 'Ours', sideText(c.field, c.ours)),
      radio('theirs', 'Theirs', sideText(c.field, c.theirs)),
      radio('edit', 'Edit', ''), text);
    fs._conflict = c;
    fs._text = text;
    return fs;
  }

  // The resolution document of domain/merge.h, from the choices made; null if one is missing.
  function resolution() {
    const res = {};
    for (const fs of out.querySelectorAll('fieldset.conflict')) {
      const c = fs._conflict;
      const side = fs.querySelector('input[type=radio]:checked')?.value;
      if (!side) return null;
      const v = side === 'edit' ? { edit: edited(c.field, c.ours ?? c.theirs, fs._text.value) } : side;
      if (c.field === 'summary') res.summary = v;
      else (res[c.field] ||= {})[c.item] = v;
    }
    return res;
  }

  function commitForm(r) {
    const title = h('input#merge-title', { name: 'title', value: r.title || '', maxlength: 300 });
    const msg = h('p.merge-msg', { role: 'status' });
    const ff = r.status === 'fast-forward';
    return h('form.merge-commit', { onsubmit: (e) => { e.preventDefault(); commit(title.value, msg); } },
      ff ? null : [h('label', { for: 'merge-title' }, 'Merge title'), title],
      h('div.buttons', h('button.primary', { type: 'submit', 'data-needs': 'writer' }, ff ? 'Fast-forward' : 'Merge')),
      msg);
  }

  async function commit(title, msg) {
    const res = plan.result.status === 'conflict' ? resolution() : undefined;
    if (res === null) {
      msg.className = 'merge-msg error';
      msg.textContent = 'Choose ours, theirs or edit for every conflict first.';
      return;
    }
    try {
      const r = await post(`/v4/repos/${enc(plan.target)}/merge`, { ref: plan.ref, resolution: res,
        title: title.trim() && title.trim() !== plan.result.title ? title.trim() : undefined, expect_head: plan.head });
      toast(r.status === 'fast-forward' ? `Fast-forwarded ${plan.target}` : `Merged ${plan.ref} into ${plan.target}`);
      location.hash = `#/s/${enc(plan.target)}/c/${r.checkpoint.commit_hash}`;
    } catch (e) {
      msg.className = 'merge-msg error';
      clear(msg).append(e.message, ' ', e.status === 409
        ? h('button.ghost.small', { type: 'button', onclick: () => load({ args: [other.value, dir.value === 'into' ? 'into' : ''] }) }, 'Preview again') : '');
    }
  }

  offerSpaceNames(other, names, ctx.space);
  load(first);
  return {
    el,
    update: (route) => load(route),
    // another writer moved a HEAD: the preview is stale; the Merge button's expect_head guards anyway
    refresh: () => {},
  };
}
