// inspect.js -- how a checkpoint, a difference and a review read: every
// field in sections (Markdown rendered safely, code monospaced), a raw JSON
// view, and findings linked to the items they name.
import { h, time, short } from './dom.js';
import { renderMarkdown } from './markdown.js';

export const FIELDS = [
  ['decisions', 'Decisions'],
  ['assumptions', 'Assumptions'],
  ['tasks', 'Tasks'],
  ['open_questions', 'Open questions'],
  ['entities', 'Entities'],
  ['artifacts', 'Artifacts'],
];
// One item of each list, in words ("Add entity")
export const ITEM_NOUN = {
  decisions: 'decision', assumptions: 'assumption', tasks: 'task',
  open_questions: 'open question', entities: 'entity', artifacts: 'artifact',
};
const CODE_KINDS = /^(code|json|yaml|yml|sql|sh|shell|bash|c|h|js|ts|py|python|go|rust|rs|java|diff|patch|csv|toml|xml|html|css)$/i;

export const itemText = (field, it) =>
  (field === 'entities' || field === 'artifacts' ? it.name : it.text) || '';

export function md(text, tag = 'div') {
  return renderMarkdown(h(tag), text);
}

function artifactBody(a) {
  const kind = (a.kind || '').toLowerCase();
  const ext = (a.name || '').split('.').pop();
  if (CODE_KINDS.test(kind) || (kind !== 'markdown' && kind !== 'md' && CODE_KINDS.test(ext))) {
    return h('pre.code', { tabindex: '0' }, h('code', a.content || ''));
  }
  return md(a.content || '');
}

function item(field, it, i) {
  const id = `item-${field}-${i}`;
  if (field === 'tasks') {
    const done = it.status === 'done';
    return h('li.task' + (done ? '.done' : ''), { id },
      h('span.check', { 'aria-hidden': 'true' }, done ? '☑' : '☐'),
      h('span.sr-only', done ? 'done: ' : 'open: '), md(it.text, 'span'));
  }
  if (field === 'entities') {
    return h('li', { id }, h('strong', it.name), it.kind ? h('span.chip', it.kind) : null,
      it.description ? [' — ', it.description] : null);
  }
  if (field === 'artifacts') {
    return h('li.artifact', { id }, h('details', { open: true },
      h('summary', h('strong', it.name), ' ', h('span.chip', it.kind || 'text'),
        h('span.muted', ` ${(it.content || '').length} characters`)),
      artifactBody(it)));
  }
  return h('li', { id }, md(it.text, 'span'));
}

function metadataView(meta, links) {
  const rows = [];
  const rest = { ...meta };
  if (meta.restored_from) {
    rows.push(h('p', 'Restored from ', links.checkpoint(meta.restored_from)));
    delete rest.restored_from;
  }
  if (meta.draft) {
    const d = meta.draft;
    const range = d.turn_range ? `turns ${d.turn_range.first_seq}–${d.turn_range.last_seq}` : 'its turns';
    rows.push(h('p', 'Drafted with AI from ', range, ' of session ', links.session(d.session_id),
      d.model ? [' by ', h('span.chip', `${d.provider || ''}/${d.model}`)] : null));
    delete rest.draft;
  }
  if (Object.keys(rest).length) rows.push(h('pre.code', { tabindex: '0' }, JSON.stringify(rest, null, 2)));
  return rows;
}

// Where a checkpoint came from: its parent, a merge's two parents (the
// HEAD it was made on, then what was merged into it), or none.
function parentsView(c, links) {
  if (c.merge_parent_hash) {
    return [' · parents ', links.checkpoint(c.parent_hash), ' and ', links.checkpoint(c.merge_parent_hash), ' (merged in)'];
  }
  return c.parent_hash ? [' · parent ', links.checkpoint(c.parent_hash)] : ' · first checkpoint';
}

// A checkpoint document (GET /commits/{hash}) in sections; links makes the
// hash and session links.  raw: show the JSON instead.
export function checkpointView(c, links, raw) {
  if (raw) return h('pre.code.raw', { 'aria-label': 'Checkpoint as JSON', tabindex: '0' }, JSON.stringify(c, null, 2));
  const parts = [
    h('h2.ck-title', c.title || '(untitled)'),
    h('p.ck-meta', c.author ? h('span.chip.author', c.author) : h('span.muted', 'no author'), ' ',
      time(c.created_at), ' · ', h('code.hash', { title: c.commit_hash }, short(c.commit_hash)),
      parentsView(c, links)),
  ];
  if (c.summary) parts.push(h('section.ck-summary', md(c.summary)));
  for (const [field, label] of FIELDS) {
    const list = c[field] || [];
    if (!list.length) continue;
    parts.push(h('section.ck-field', { 'data-field': field },
      h('h3', label, ' ', h('span.count', String(list.length))),
      h(field === 'artifacts' ? 'ul.plain' : 'ul', list.map((it, i) => item(field, it, i)))));
  }
  if (c.metadata && Object.keys(c.metadata).length) {
    parts.push(h('section.ck-field', h('h3', 'Metadata'), metadataView(c.metadata, links)));
  }
  return h('article.checkpoint', parts);
}

function diffItems(field, d) {
  const out = [];
  for (const it of d.added || []) out.push(h('li.add', h('span.sign', { 'aria-label': 'added' }, '+'), itemText(field, it), field === 'tasks' ? ` (${it.status})` : null));
  for (const it of d.removed || []) out.push(h('li.del', h('span.sign', { 'aria-label': 'removed' }, '−'), itemText(field, it)));
  for (const ch of d.changed || []) {
    const what = field === 'tasks' && ch.from.status !== ch.to.status ? `${ch.from.status} → ${ch.to.status}`
      : field === 'artifacts' ? `content ${(ch.from.content || '').length} → ${(ch.to.content || '').length} characters` : 'changed';
    out.push(h('li.chg', h('span.sign', { 'aria-label': 'changed' }, '~'), itemText(field, ch.to), h('span.muted', ` (${what})`)));
  }
  return out;
}

// A diff document (operation diff) field by field.
export function diffView(d) {
  if (d.identical) return h('p.identical', 'These two checkpoints hold the same state.');
  const parts = [];
  for (const f of ['title', 'summary']) {
    if (!d[f]) continue;
    parts.push(h('section.ck-field', { 'data-field': f }, h('h3', f === 'title' ? 'Title' : 'Summary'),
      h('div.scalar-diff', h('div.del', h('span.sign', '−'), d[f].from || '(empty)'), h('div.add', h('span.sign', '+'), d[f].to || '(empty)'))));
  }
  for (const [field, label] of FIELDS) {
    if (!d[field]) continue;
    parts.push(h('section.ck-field', { 'data-field': field }, h('h3', label), h('ul.diff', diffItems(field, d[field]))));
  }
  if (d.metadata) {
    parts.push(h('section.ck-field', h('h3', 'Metadata'), h('div.scalar-diff',
      h('pre.code.del', { tabindex: '0' }, JSON.stringify(d.metadata.from, null, 2)), h('pre.code.add', { tabindex: '0' }, JSON.stringify(d.metadata.to, null, 2)))));
  }
  return h('div.diff-view', parts);
}

const FINDING_NAMES = {
  contradiction: 'Contradictions',
  hidden_assumption: 'Hidden assumptions',
  resolved_question: 'Questions a decision already answers',
  disconnected_entity: 'Entities nothing references',
};

// Review findings grouped by type; each item links to its place in the inspector.
export function reviewView(r, onItem) {
  if (!r.findings.length) return h('p.identical', 'No findings: nothing contradicts, nothing hangs loose.');
  const groups = new Map();
  for (const f of r.findings) {
    if (!groups.has(f.type)) groups.set(f.type, []);
    groups.get(f.type).push(f);
  }
  return h('div.review', [...groups].map(([type, list]) => h('section.finding-group', { 'data-type': type },
    h('h3', FINDING_NAMES[type] || type.replace(/_/g, ' '), ' ', h('span.count', String(list.length))),
    h('ul', list.map((f) => h('li.finding',
      h('p', f.message, f.source === 'llm' ? h('span.chip', 'LLM') : null),
      h('div.finding-items', (f.items || []).map((it) => h('button.link', {
        type: 'button', onclick: () => onItem(it.field, it.index),
      }, `${it.field.replace('_', ' ')} #${it.index + 1}: ${it.text || ''}`)))))))));
}

// Two checkpoints side by side, field by field: a's items on the left (what
// b no longer has marked removed), b's on the right (added marked), edited
// items marked on both sides; d is their diff (operation diff).
export function sideBySideView(a, b, d) {
  const mark = (field, side) => {
    const fd = d[field] || {};
    const removed = new Set((fd.removed || []).map((it) => itemText(field, it)));
    const added = new Set((fd.added || []).map((it) => itemText(field, it)));
    const changed = new Set((fd.changed || []).map((ch) => itemText(field, ch.to)));
    return (it) => {
      const t = itemText(field, it);
      if (side === 'a' && removed.has(t)) return ['del', '−', 'removed'];
      if (side === 'b' && added.has(t)) return ['add', '+', 'added'];
      if (changed.has(t)) return ['chg', '~', 'changed'];
      return ['same', ' ', null];
    };
  };
  const column = (c, field, side) => {
    const m = mark(field, side);
    return h('ul.diff.sbs-col', (c[field] || []).map((it) => {
      const [cls, sign, label] = m(it);
      return h('li.' + cls, h('span.sign', label ? { 'aria-label': label } : { 'aria-hidden': 'true' }, sign), itemText(field, it),
        field === 'tasks' ? ` (${it.status})` : null);
    }));
  };
  const scalar = (f, label) => h('section.ck-field.sbs-field', { 'data-field': f }, h('h3', label),
    h('div.sbs-row', h('div.sbs-col' + (d[f] ? '.del' : ''), a[f] || '(empty)'), h('div.sbs-col' + (d[f] ? '.add' : ''), b[f] || '(empty)')));
  const parts = [scalar('title', 'Title')];
  if (a.summary || b.summary) parts.push(scalar('summary', 'Summary'));
  for (const [field, label] of FIELDS) {
    if (!(a[field] || []).length && !(b[field] || []).length) continue;
    parts.push(h('section.ck-field.sbs-field', { 'data-field': field }, h('h3', label),
      h('div.sbs-row', column(a, field, 'a'), column(b, field, 'b'))));
  }
  return h('div.sbs-view', parts);
}
