// draftreview.js -- the review of a Draft with AI before it is saved (the
// editor's review mode, editor.js).  Saving a draft is a write on top of
// HEAD: every draft item is shown with what saving does with it (new,
// already in HEAD, marks HEAD's task done, replaces HEAD's artifact, listed
// twice) and is taken or left one by one; HEAD's items are shown kept, and
// each may be dropped; replacing HEAD's state with the draft is a separate,
// explicit choice.  The statuses come from the server (draft.plan); this
// module holds only the person's choices and draws them.
import { h } from './dom.js';
import { FIELDS, ITEM_NOUN, itemText } from './inspect.js';

const STATUS = {
  new: 'new', done: "marks HEAD's task done", replaces: "replaces HEAD's artifact",
  in_head: 'already in HEAD', repeated: 'listed twice in the draft',
};
const TAKEABLE = new Set(['new', 'done', 'replaces']);

// The person's choices, before any: take every draft item, keep every HEAD item.
export function newChoices(draft, base) {
  const ch = { replace: false, rejected: {}, dropped: {}, title: draft.title || base?.title || '',
    summary: draft.summary || base?.summary || '' };
  for (const [f] of FIELDS) {
    ch.rejected[f] = new Set();
    ch.dropped[f] = new Set();
  }
  return ch;
}

// The parameters of draft.plan and draft.save for the choices.
export function choiceParams(ch) {
  const p = { replace: ch.replace, title: ch.title, summary: ch.summary };
  const reject = {};
  const drop = {};
  for (const [f] of FIELDS) {
    if (ch.rejected[f].size) reject[f] = [...ch.rejected[f]];
    if (!ch.replace && ch.dropped[f].size) drop[f] = [...ch.dropped[f]].sort((a, b) => a - b);
  }
  if (Object.keys(reject).length) p.reject = reject;
  if (Object.keys(drop).length) p.drop = drop;
  return p;
}

// An item's text, with its kind (entities, artifacts) or, for a done task, "done".
function itemLabel(field, it) {
  const text = itemText(field, it);
  const kind = field === 'entities' || field === 'artifacts' ? it.kind : null;
  const done = field === 'tasks' && it.status === 'done';
  return [h('span.item-text', text), kind ? h('span.chip', kind) : null, done ? h('span.chip.task-done', 'done') : null];
}

function draftItem(field, entry, ch, changed) {
  const key = itemText(field, entry.item);
  const takeable = ch.replace ? entry.status !== 'repeated' : TAKEABLE.has(entry.status);
  // replacing takes the draft as it is: only a repeat is worth a word
  const status = !ch.replace || entry.status === 'repeated' ? STATUS[entry.status] : null;
  const chip = status ? h('span.chip.status', { 'data-status': entry.status }, status) : null;
  if (!takeable) {
    return h('li.review-item.passive', { 'data-status': entry.status }, h('span.take-gap', { 'aria-hidden': 'true' }),
      h('span.item-body', itemLabel(field, entry.item)), chip);
  }
  const box = h('input', { type: 'checkbox', 'aria-label': `Take ${ITEM_NOUN[field]}: ${key}`, checked: !ch.rejected[field].has(key),
    onchange: (e) => {
      if (e.target.checked) ch.rejected[field].delete(key);
      else ch.rejected[field].add(key);
      e.target.closest('li').classList.toggle('rejected', !e.target.checked);
      changed();
    } });
  return h('li.review-item' + (ch.rejected[field].has(key) ? '.rejected' : ''), { 'data-status': entry.status },
    h('label.take', box, itemLabel(field, entry.item)), chip);
}

function headItem(field, it, i, ch, changed) {
  const pos = i + 1;
  const dropped = ch.replace || ch.dropped[field].has(pos);
  const btn = h('button.small' + (dropped ? '' : '.ghost'), {
    type: 'button', 'aria-pressed': String(dropped && !ch.replace), disabled: ch.replace,
    'aria-label': `${ch.replace ? 'Dropped' : dropped ? 'Keep' : 'Drop'} ${ITEM_NOUN[field]}: ${itemText(field, it)}`,
    onclick: () => {
      if (ch.dropped[field].has(pos)) ch.dropped[field].delete(pos);
      else ch.dropped[field].add(pos);
      changed(true);
    } }, dropped ? (ch.replace ? 'Dropped' : 'Keep') : 'Drop');
  return h('li.review-item.head' + (dropped ? '.dropped' : ''), h('span.item-body', itemLabel(field, it)),
    dropped && !ch.replace ? h('span.chip.status.gone', 'dropped') : null, btn);
}

function fieldReview(field, label, entries, headList, ch, changed) {
  if (!entries.length && !headList.length) return null;
  const kept = ch.replace ? 0 : headList.length - ch.dropped[field].size;
  return h('fieldset.review-list', { 'data-field': field }, h('legend', label),
    h('h3.review-sub', 'From the draft'),
    entries.length ? h('ul.review-draft', entries.map((e) => draftItem(field, e, ch, changed)))
      : h('p.muted.small', 'The draft has none.'),
    headList.length ? [h('h3.review-sub', ch.replace ? `In HEAD: ${headList.length}, all dropped`
      : `In HEAD: ${kept} of ${headList.length} kept`),
    h('ul.review-head', headList.map((it, i) => headItem(field, it, i, ch, changed)))] : null);
}

// The mode: add to HEAD (the default) or, explicitly, replace its state.
function modeChoice(ch, headCount, changed) {
  const radio = (value, title, note) => h('label.mode' + ((ch.replace ? 'replace' : 'add') === value ? '.on' : '') + (value === 'replace' ? '.danger' : ''),
    h('input', { type: 'radio', name: 'draft-mode', value, checked: (ch.replace ? 'replace' : 'add') === value,
      onchange: () => { ch.replace = value === 'replace'; changed(true); } }),
    h('span', h('strong', title), h('span.muted.small', note)));
  return h('fieldset.save-mode', h('legend', 'How to save the draft'),
    radio('add', 'Add to HEAD', `HEAD's ${headCount} items stay (drop any below); the draft's new items are added.`),
    radio('replace', "Replace HEAD's state with the draft", 'Every item of HEAD is dropped: the checkpoint holds only the draft.'));
}

// The review form: mode, then every list.  changed(redraw) is called on each choice.
export function reviewForm(review, base, ch, changed) {
  const headCount = FIELDS.reduce((n, [f]) => n + (base?.[f]?.length || 0), 0);
  return [modeChoice(ch, headCount, changed),
    FIELDS.map(([f, label]) => fieldReview(f, label, review[f] || [], base?.[f] || [], ch, changed))];
}
