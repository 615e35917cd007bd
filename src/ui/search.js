// search.js -- the search view (#/search/QUERY): what every Space's
// checkpoints introduced that matches, best first, each with its snippet
// (matches marked), the Space and field, who wrote it and when, where it
// first appeared and whether HEAD still holds it.  A result opens that
// checkpoint in its Space's history.  Snippets go in as text nodes with
// <mark> elements around the server's highlight offsets, never as HTML.
import { h, clear, time, short } from './dom.js';
import { get, enc } from './api.js';

const LIMIT = 50;
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

function result(r) {
  const turn = r.kind === 'turn';
  const href = turn ? `#/s/${enc(r.space)}/chat/${enc(r.session_id)}` : `#/s/${enc(r.space)}/c/${r.commit_hash}`;
  const first = r.first && r.first.commit_hash !== r.commit_hash ? r.first : null;
  return h('li.result',
    h('a.result-link', { href },
      h('div.result-head',
        h('span.chip.space', r.space),
        h('span.chip.field', FIELDS[r.field] || r.field),
        turn ? h('span.muted', `turn ${r.seq}`) : h('code.hash', { title: r.commit_hash }, short(r.commit_hash)),
        r.author ? h('span.chip.author', r.author) : null,
        time(r.created_at),
        turn ? null : h('span.badge' + (r.in_head ? '.in-head' : '.gone'), r.in_head ? 'in HEAD' : 'no longer in HEAD')),
      h('p.snippet', marked(r.snippet, r.highlights)),
      first ? h('p.muted.first', 'first in ', h('code.hash', short(first.commit_hash)),
        first.author ? ` by ${first.author}` : '', ' · ', time(first.created_at)) : null));
}

export function searchView(first) {
  const input = h('input', { type: 'search', name: 'q', 'aria-label': 'Search words', placeholder: 'Words, "a phrase", or pref*' });
  const turns = h('input', { type: 'checkbox', name: 'turns' });
  const form = h('form.search-form', { role: 'search', onsubmit: submit }, input,
    h('label.check', turns, 'chat turns too'), h('button.primary', { type: 'submit' }, 'Search'));
  const status = h('p.muted.search-status', { role: 'status' });
  const list = h('ol.results', { 'aria-label': 'Search results' });
  const el = h('section.page.search', h('div.page-head', h('h1', 'Search'), form), status, list);
  let query = '';
  let withTurns = false;

  function submit(e) {
    e.preventDefault();
    const q = input.value.trim();
    if (q) location.hash = `#/search/${enc(q)}${turns.checked ? '/turns' : ''}`;
  }

  async function refresh() {
    if (!query) {
      clear(list);
      status.textContent = 'Search every checkpoint of every Space: where was something decided, and by whom?';
      return;
    }
    try {
      const res = await get(`/v4/search?q=${enc(query)}&limit=${LIMIT}${withTurns ? '&turns=1' : ''}`);
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
    withTurns = route.args[1] === 'turns';
    input.value = query;
    turns.checked = withTurns;
    refresh();
  }

  update(first);
  if (!query) setTimeout(() => input.focus(), 0);
  return { el, update, refresh };
}
