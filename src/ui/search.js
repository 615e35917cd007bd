// search.js -- the search view (#/search/QUERY): what every Space's
// checkpoints introduced that matches, best first, each with its snippet
// (matches marked), the Space and field, who wrote it and when, where it
// first appeared and whether HEAD still holds it.  A checkpoint several
// Spaces hold (a fork copies history) is one result naming them all.  A
// result opens that checkpoint in its (first) Space's history.  Filters
// (Space, field, author, since, until) are the API's parameters, kept in the
// route as name=value segments: #/search/QUERY[/turns][/space=S][/field=F]
// [/author=A][/since=DATE][/until=DATE].  Until takes the whole day picked.  Snippets go in as text nodes with <mark>
// elements around the server's highlight offsets, never as HTML.
import { h, clear, time, short } from './dom.js';
import { get, enc } from './api.js';
import { offerSpaceNames } from './names.js';

const LIMIT = 50;
const FILTERS = ['space', 'field', 'author', 'since', 'until'];
const FIELDS = {
  title: 'title', summary: 'summary', decisions: 'decision', assumptions: 'assumption', tasks: 'task',
  open_questions: 'open question', entities: 'entity', artifacts: 'artifact', turn: 'turn',
};

// The snippet with <mark> around [start, end) byte offsets (the server counts UTF-8 bytes).
function marked(snippet, highlights) {
  const bytes = new TextEncoder().encode(snippet);
  const dec = new TextDecoder();
  const parts = [];
  let at = 0;
  for (const [a, b] of highlights || []) {
    if (a < at || b > bytes.length) continue;
    parts.push(dec.decode(bytes.slice(at, a)), h('mark', dec.decode(bytes.slice(a, b))));
    at = b;
  }
  parts.push(dec.decode(bytes.slice(at)));
  return parts;
}

// Whether the Spaces' HEADs hold the item: all, none, or the ones that do.
function headBadge(spaces) {
  const held = spaces.filter((s) => s.in_head).map((s) => s.space);
  if (held.length === spaces.length) return h('span.badge.in-head', 'in HEAD');
  if (!held.length) return h('span.badge.gone', 'no longer in HEAD');
  return h('span.badge.in-head', `in HEAD of ${held.join(', ')}`);
}

function result(r) {
  const turn = r.kind === 'turn';
  const href = turn ? `#/s/${enc(r.space)}/chat/${enc(r.session_id)}` : `#/s/${enc(r.space)}/c/${r.commit_hash}`;
  const first = r.first && r.first.commit_hash !== r.commit_hash ? r.first : null;
  const spaces = turn ? [] : r.spaces || [{ space: r.space, in_head: r.in_head }];
  const others = spaces.slice(1);
  return h('li.result',
    h('a.result-link', { href },
      h('div.result-head',
        ...(turn ? [h('span.chip.space', r.space)] : spaces.map((s) => h('span.chip.space', s.space))),
        h('span.chip.field', FIELDS[r.field] || r.field),
        turn ? h('span.muted', `turn ${r.seq}`) : h('code.hash', { title: r.commit_hash }, short(r.commit_hash)),
        r.author ? h('span.chip.author', r.author) : null,
        time(r.created_at),
        turn ? null : headBadge(spaces)),
      h('p.snippet', marked(r.snippet, r.highlights)),
      first ? h('p.muted.first', 'first in ', h('code.hash', short(first.commit_hash)),
        first.author ? ` by ${first.author}` : '', ' · ', time(first.created_at)) : null),
    others.length ? h('p.muted.also', 'Open in ', ...others.flatMap((s, i) => [i ? ', ' : '',
      h('a', { href: `#/s/${enc(s.space)}/c/${r.commit_hash}` }, s.space)])) : null);
}

// The route's segments after the query: 'turns' and name=value filters.
function parseArgs(args) {
  const f = { turns: false };
  for (const a of args) {
    if (a === 'turns') f.turns = true;
    const m = /^([a-z]+)=(.*)$/s.exec(a);
    if (m && FILTERS.includes(m[1]) && m[2]) f[m[1]] = m[2];
  }
  return f;
}

// What the API gets for a filter: a day picked for Until is the whole day
// (the API reads a date alone as its first second, as Since wants it).
function apiValue(k, v) {
  return k === 'until' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v} 23:59:59` : v;
}

function routeOf(q, f) {
  return `#/search/${enc(q)}${f.turns ? '/turns' : ''}` +
    FILTERS.filter((k) => f[k]).map((k) => `/${k}=${enc(f[k])}`).join('');
}

export function searchView(first) {
  const input = h('input', { type: 'search', name: 'q', 'aria-label': 'Search words', placeholder: 'Words, "a phrase", or pref*' });
  const turns = h('input', { type: 'checkbox', name: 'turns' });
  const space = h('input', { type: 'text', name: 'space', list: 'search-spaces', placeholder: 'every Space', autocomplete: 'off' });
  const spaceNames = h('datalist#search-spaces');
  const field = h('select', { name: 'field' }, h('option', { value: '' }, 'Any field'),
    ...Object.entries(FIELDS).map(([v, label]) => h('option', { value: v }, label)));
  const author = h('input', { type: 'text', name: 'author', placeholder: 'anyone', autocomplete: 'off' });
  const since = h('input', { type: 'date', name: 'since' });
  const until = h('input', { type: 'date', name: 'until' });
  const filters = h('fieldset.search-filters', h('legend.sr-only', 'Filters'),
    h('label', 'Space ', space, spaceNames), h('label', 'Field ', field),
    h('label', 'Author ', author), h('label', 'Since ', since), h('label', 'Until ', until));
  const form = h('form.search-form', { role: 'search', onsubmit: submit }, input,
    h('label.check', turns, 'chat turns too'), h('button.primary', { type: 'submit' }, 'Search'), filters);
  const status = h('p.muted.search-status', { role: 'status' });
  const list = h('ol.results', { 'aria-label': 'Search results' });
  const el = h('section.page.search', h('div.page-head', h('h1', 'Search'), form), status, list);
  let query = '';
  let f = { turns: false };

  function submit(e) {
    e.preventDefault();
    const q = input.value.trim();
    if (q) location.hash = routeOf(q, { turns: turns.checked, space: space.value.trim(), field: field.value,
      author: author.value.trim(), since: since.value, until: until.value });
  }

  async function refresh() {
    if (!query) {
      clear(list);
      status.textContent = 'Search every checkpoint of every Space: where was something decided, and by whom?';
      return;
    }
    try {
      const params = FILTERS.filter((k) => f[k]).map((k) => `&${k}=${enc(apiValue(k, f[k]))}`).join('');
      const res = await get(`/v4/search?q=${enc(query)}&limit=${LIMIT}${f.turns ? '&turns=1' : ''}${params}`);
      clear(list).append(...res.results.map(result));
      status.textContent = res.total === 0 ? `Nothing matches “${query}”.`
        : `${res.total} match${res.total === 1 ? '' : 'es'} for “${query}”${res.total > res.results.length ? `, the best ${res.results.length} shown` : ''}.`;
    } catch (e) {
      clear(list);
      status.textContent = e.message;
    }
  }

  function update(route) {
    query = route.args[0] || '';
    f = parseArgs(route.args.slice(1));
    input.value = query;
    turns.checked = f.turns;
    space.value = f.space || '';
    field.value = f.field || '';
    author.value = f.author || '';
    since.value = f.since || '';
    until.value = f.until || '';
    refresh();
  }

  update(first);
  // the names offered as one types: a select of every Space was 10,000 options, and 3.7 MB to fill
  offerSpaceNames(space, spaceNames);
  if (!query) setTimeout(() => input.focus(), 0);
  return { el, update, refresh };
}
