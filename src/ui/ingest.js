// ingest.js -- a pasted or uploaded transcript (plain, Markdown, ChatGPT or
// Claude export) into a new session of the Space, through the ingest
// operation the CLI's `smriti ingest` uses.
import { h, toast } from './dom.js';
import { post, enc } from './api.js';

export function ingestView(ctx) {
  const text = h('textarea.mono', { rows: 14, required: true, 'aria-label': 'Transcript', placeholder: 'Paste a conversation here, or choose a file below.' });
  const file = h('input', { type: 'file', accept: '.txt,.md,.markdown,.json,text/*,application/json', 'aria-label': 'Transcript file', onchange: readFile });
  const format = h('select', { 'aria-label': 'Format' },
    [['auto', 'Detect'], ['text', 'Plain text'], ['markdown', 'Markdown'], ['chatgpt', 'ChatGPT export'], ['claude', 'Claude export']]
      .map(([v, l]) => h('option', { value: v }, l)));
  const title = h('input', { placeholder: 'Session title (optional)', 'aria-label': 'Session title', maxlength: 200 });
  const btn = h('button.primary', { type: 'submit' }, 'Create session');
  const el = h('form.ingest', { onsubmit: submit },
    h('p.muted', 'The transcript becomes a new session of this Space, turn by turn. Nothing else changes.'),
    text, h('div.row-fields', h('label.inline', 'File ', file), h('label.inline', 'Format ', format), title), btn);

  async function readFile() {
    const f = file.files[0];
    if (f) text.value = await f.text();
  }

  async function submit(e) {
    e.preventDefault();
    btn.disabled = true;
    try {
      const r = await post('/v1/ingest', { space: ctx.space, transcript: text.value, format: format.value, title: title.value.trim() || undefined });
      toast(`Ingested ${r.turns} turns (${r.format})`);
      location.hash = `#/s/${enc(ctx.space)}/chat/${enc(r.session.id)}`;
    } catch (err) {
      toast(err.message, 'error');
    } finally {
      btn.disabled = false;
    }
  }

  return { el };
}
