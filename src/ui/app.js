// app.js -- the web UI's shell: the token gate, the hash router, the change
// follower that refreshes the view when anyone writes (the UI, the CLI, an
// agent over MCP, another server), and keyboard shortcuts.
//
//   #/                        Spaces
//   #/s/NAME                  history of a Space (#/s/NAME/c/HASH selects one)
//   #/s/NAME/compare/A/B      the difference between two checkpoints
//   #/s/NAME/chat[/ID]        sessions and chat
//   #/s/NAME/new[/JOB]        save a checkpoint (from HEAD, or from a draft job)
//   #/s/NAME/ingest           a transcript into a new session
//   #/search/QUERY[/turns][/name=value...]  search every Space's checkpoints (and turns), filtered
import { h, clear, dialog } from './dom.js';
import { api, get, post, ApiError, setUnauthorizedHandler, setIdentity } from './api.js';
import { spacesView } from './spaces.js';
import { spaceView } from './space.js';
import { searchView } from './search.js';

// The follower's long poll: the server answers as soon as what is shown
// changes, or after WAIT_S with the same version; after an error it asks
// again later and later, up to RETRY_MAX_MS.
const WAIT_S = 25;
const RETRY_MS = 1000;
const RETRY_MAX_MS = 15000;
const main = h('main#main', { tabindex: '-1' });
const crumbs = h('nav.crumbs', { 'aria-label': 'Breadcrumb' });
const who = h('span.who', { 'aria-live': 'polite' });
const live = h('span.live', { title: 'Refreshes by itself when anyone writes' }, 'live');
let current = null;          // { key, view }
let version = null;
let gone = null;             // a Space that no longer exists: watch the Space list instead
let following = null;        // the AbortController of the long poll under way
let failures = 0;            // long polls failed in a row

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'search') return { name: 'search', key: 'search', args: parts.slice(1) };
  if (parts[0] !== 's' || !parts[1]) return { name: 'spaces', key: 'spaces' };
  return { name: 'space', key: 's/' + parts[1], space: parts[1], tab: parts[2] || 'history', args: parts.slice(3) };
}

function setCrumbs(route) {
  clear(crumbs);
  crumbs.append(h('a', { href: '#/' }, 'Spaces'));
  if (route.space) crumbs.append(h('span.sep', { 'aria-hidden': 'true' }, '/'), h('span', route.space));
  if (route.name === 'search') crumbs.append(h('span.sep', { 'aria-hidden': 'true' }, '/'), h('span', 'Search'));
}

async function navigate() {
  const route = parseRoute();
  setCrumbs(route);
  document.title = route.space ? `${route.space} · Smriti` : route.name === 'search' ? 'Search · Smriti' : 'Spaces · Smriti';
  if (current && current.key === route.key && current.view.update) {
    current.view.update(route);
    return;
  }
  current?.view.destroy?.();
  clear(main);
  const view = route.name === 'spaces' ? spacesView() : route.name === 'search' ? searchView(route) : spaceView(route);
  current = { key: route.key, view };
  main.append(view.el);
  version = null;
  gone = null;
  if (following) follow();     // the long poll under way asks about the last view
}

// Asks the server for the version of what is shown, waiting (without
// holding a server thread) until it differs from the one this page has;
// refreshes the view when it does, then asks again.  A new view cancels
// the question under way and asks afresh (follow).
async function poll(ctl) {
  const route = parseRoute();
  const q = new URLSearchParams();
  let delay = 0;
  if (route.space && route.space !== gone) q.set('space', route.space);
  if (version !== null) { q.set('since', version); q.set('wait', String(WAIT_S)); }
  try {
    const v = (await get('/v4/changes' + (q.size ? `?${q}` : ''), ctl.signal)).version;
    if (ctl !== following) return;
    live.classList.remove('off');
    failures = 0;
    if (version !== null && v !== version) current?.view.refresh?.();
    version = v;
  } catch (e) {
    if (ctl !== following) return;
    const missing = e instanceof ApiError && e.status === 404;
    if (missing) {
      gone = route.space;
      version = null;
      current?.view.refresh?.();
    } else {
      delay = Math.min(RETRY_MS * 2 ** failures, RETRY_MAX_MS);
      failures++;
    }
    live.classList.toggle('off', !missing);
  }
  setTimeout(() => { if (ctl === following) poll(ctl); }, delay);
}

// Starts following changes, cancelling the question under way.
function follow() {
  following?.abort();
  following = new AbortController();
  poll(following);
}

const SHORTCUTS = [
  ['j / k', 'next / previous checkpoint or Space'],
  ['Enter', 'open the selected Space or checkpoint'],
  ['c', 'compare the selected checkpoint with its parent'],
  ['/', 'filter the history or the Spaces'],
  ['s', 'search every Space'],
  ['Ctrl/Cmd + S', 'save the checkpoint being edited'],
  ['Esc', 'close a dialog, leave a field, stop a reply'],
  ['?', 'this list'],
];

function showShortcuts() {
  const list = h('dl.shortcuts', SHORTCUTS.map(([k, v]) => [h('dt', h('kbd', k)), h('dd', v)]));
  return dialog('Keyboard shortcuts', list, [{ label: 'Close', value: 'close', primary: true }]);
}

function typing(e) {
  const t = e.target;
  return t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName);
}

function onKey(e) {
  if (document.querySelector('dialog[open]')) return;
  if (e.key === 'Escape' && typing(e)) { e.target.blur(); return; }
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
    if (current?.view.keys?.(e)) e.preventDefault();
    return;
  }
  if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === '?') { e.preventDefault(); showShortcuts(); return; }
  if (e.key === 's') { e.preventDefault(); topSearch.focus(); return; }
  if (current?.view.keys?.(e)) e.preventDefault();
}

// A server with users (or SMRITI_TOKEN) wants a token once; it answers with
// an HttpOnly cookie, so no script ever holds the token after this form.
async function askToken(message) {
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'current-password', required: true, 'aria-label': 'Token' });
  const err = h('p.error', { role: 'alert' }, message || '');
  const choice = await dialog('This server wants your token',
    [h('p', 'Enter your token (from ', h('code', 'smriti token create NAME'), '), or the server\'s SMRITI_TOKEN. It is kept in an HttpOnly cookie, out of reach of scripts.'),
      h('label', 'Token', input), err],
    [{ label: 'Sign in', value: 'ok', primary: true }]);
  if (choice !== 'ok') return askToken(message);
  try {
    return await post('/v4/auth', { token: input.value });
  } catch (e) {
    return askToken(e.message);
  }
}

// Who is signed in, in the header, with a way out (when signing in is a thing here).
function showWho(auth) {
  clear(who);
  if (!auth?.token_required || !auth.user) return;
  const name = auth.user.kind === 'admin' ? 'administrator' : auth.user.name;
  who.append(h('span', 'Signed in as ', h('strong', name), auth.user.kind === 'agent' ? ' (agent)' : ''),
    h('button.ghost.small', { type: 'button', onclick: signOut }, 'Sign out'));
}

async function signOut() {
  try { await api('DELETE', '/v4/auth'); } catch { /* the cookie is gone either way */ }
  // The next person may not be allowed to read the Space shown (it would
  // read as missing, and polling it would fail): start from the Spaces list.
  history.replaceState(null, '', '#/');
  location.reload();
}

// The search box of the header: Enter opens the search view.
const topSearch = h('input', { type: 'search', name: 'top-q', placeholder: 'Search checkpoints (s)', 'aria-label': 'Search checkpoints' });
const topForm = h('form.top-search', {
  role: 'search',
  onsubmit: (e) => {
    e.preventDefault();
    const q = topSearch.value.trim();
    if (q) location.hash = `#/search/${encodeURIComponent(q)}`;
    topSearch.value = '';
    topSearch.blur();
  },
}, topSearch);

async function start() {
  document.body.append(
    h('a.skip', { href: '#main' }, 'Skip to content'),
    h('header.top', h('a.brand', { href: '#/' }, h('img', { src: '/ui/icon.svg', alt: '', width: 22, height: 22 }), 'Smriti'),
      crumbs, h('span.grow'), topForm, who, live,
      h('button.ghost', { type: 'button', 'aria-label': 'Keyboard shortcuts', title: 'Keyboard shortcuts (?)', onclick: showShortcuts }, '?')),
    main,
    h('div#toasts', { 'aria-live': 'polite' }));
  let auth = await get('/v4/auth');
  if (!auth.authenticated) auth = await askToken();
  showWho(auth);
  setIdentity(auth);
  setUnauthorizedHandler(() => { askToken('Your session ended; enter the token again.').then(() => location.reload()); });
  window.addEventListener('hashchange', navigate);
  document.addEventListener('keydown', onKey);
  await navigate();
  follow();
}

start();
