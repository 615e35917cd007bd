// dom.js -- small DOM helpers: element builder, times, copying, dialogs.
// Text always goes in as text nodes (never as HTML), so names, titles and
// turns cannot inject markup; Markdown goes through markdown.js only.

// h('div.cls#id', {attr: v, onclick: fn}, child, ...): children are nodes,
// strings (as text) or arrays of them; null and false are skipped.
export function h(spec, attrs, ...children) {
  const m = spec.match(/^([a-z0-9-]+)?((?:[.#][\w-]+)*)$/i);
  const el = document.createElement(m[1] || 'div');
  for (const part of (m[2] || '').match(/[.#][\w-]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// An SVG element with attributes.
export function svg(tag, attrs = {}) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export const short = (hash) => (hash || '').slice(0, 12);

// "3 min ago"; the exact time goes in the title attribute.
export function ago(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((now - t) / 1000);
  if (s < 45) return 'just now';
  const steps = [[60, 'min', 60], [24, 'h', 3600], [30, 'd', 86400], [12, 'mo', 2592000]];
  for (const [limit, unit, size] of steps) {
    const n = Math.round(s / size);
    if (n < limit) return `${Math.max(n, 1)} ${unit} ago`;
  }
  return `${Math.round(s / 31536000)} y ago`;
}

export function time(iso) {
  return h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, ago(iso));
}

// Copies text; shows "copied" on the button.  navigator.clipboard needs a
// secure context (localhost is one; a LAN address over http is not), so the
// fallback selects the text for the person to copy.
export async function copy(text, button, field) {
  let done = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      done = true;
    }
  } catch { /* fall back below */ }
  if (!done && field) {
    field.focus();
    field.select();
    done = document.execCommand && document.execCommand('copy');
  }
  const old = button.textContent;
  button.textContent = done ? 'Copied' : 'Press Ctrl+C';
  button.classList.add('flash');
  setTimeout(() => { button.textContent = old; button.classList.remove('flash'); }, 1400);
}

// A modal <dialog> with a title, body and buttons; resolves with the value
// of the button pressed (or null on Esc).  build(form) may add fields;
// validate(value) answers a message that keeps it open, or null.
export function dialog(title, body, buttons, { wide = false, onOpen, validate } = {}) {
  return new Promise((resolve) => {
    const form = h('form', { method: 'dialog' });
    const dlg = h('dialog' + (wide ? '.wide' : ''), { 'aria-labelledby': 'dlg-title' },
      h('h2#dlg-title', title), form);
    // validate(value) -> a message keeps the dialog open to correct the input
    const problem = h('p.error.dlg-problem', { role: 'alert' });
    if (validate) {
      form.addEventListener('submit', (e) => {
        const value = e.submitter?.value;
        const msg = value ? validate(value) : null;
        if (!msg) return;
        e.preventDefault();
        problem.textContent = msg;
        form.querySelector('input, textarea')?.focus();
      });
    }
    append(form, [body, validate ? problem : null, h('div.buttons', buttons.map((b) =>
      h('button' + (b.primary ? '.primary' : '') + (b.danger ? '.danger' : ''),
        { value: b.value, type: 'submit' }, b.label)))]);
    dlg.addEventListener('close', () => {
      dlg.remove();
      resolve(dlg.returnValue || null);
    });
    document.body.append(dlg);
    dlg.showModal();
    if (onOpen) onOpen(dlg);
  });
}

export function toast(text, kind = 'info') {
  const box = document.getElementById('toasts');
  const t = h('div.toast.' + kind, { role: kind === 'error' ? 'alert' : 'status' }, text);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 3500);
}

// A toast offering one action (Undo): it stays until the action is taken,
// it is closed, or a minute passes, and its button is reachable by Tab.
export function toastAction(text, label, action) {
  const box = document.getElementById('toasts');
  const close = () => t.remove();
  const t = h('div.toast.action', { role: 'status' }, h('span', text),
    h('button.toast-do', { type: 'button', onclick: () => { close(); action(); } }, label),
    h('button.toast-close', { type: 'button', 'aria-label': 'Close', onclick: close }, '×'));
  box.append(t);
  setTimeout(close, 60000);
  return t;
}
