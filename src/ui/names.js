// names.js -- the Space names a field offers as one types (a datalist):
// the most recently active Spaces holding what is typed, a few at a time
// (GET /v4/overview?limit&match), not every Space: at 10,000 Spaces the
// whole list was 3.7 MB, read each time a merge or compare form opened.
import { h } from './dom.js';
import { get } from './api.js';

const OFFERED = 20;
const TYPING_MS = 150;
const MATCH_MAX = 200;   // the overview's longest match

// Fills datalist with names for input's text as it changes; except: a name not to offer.
export function offerSpaceNames(input, datalist, except = null) {
  let timer = null;
  let asked = 0;
  async function ask() {
    const text = input.value.trim();
    const mine = ++asked;
    if (text.length > MATCH_MAX) return;   // a name is shorter: nothing to offer
    const q = new URLSearchParams({ limit: String(OFFERED + (except ? 1 : 0)) });
    if (text) q.set('match', text);
    try {
      const rows = await get(`/v4/overview?${q}`);
      if (mine !== asked) return;
      datalist.replaceChildren(...rows.filter((sp) => sp.name !== except).slice(0, OFFERED)
        .map((sp) => h('option', { value: sp.name })));
    } catch { /* the field takes any name or hash without them */ }
  }
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(ask, TYPING_MS); });
  ask();
}
