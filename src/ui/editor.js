// editor.js -- saving a checkpoint: starts from HEAD, or from the proposal
// of a Draft with AI job (with its progress shown while it runs).  A draft
// opens in review mode (draftreview.js): saving it is a write on top of
// HEAD (draft.save), HEAD's items stay unless the person drops them, each
// draft item is taken or left, and replacing HEAD's state is an explicit
// choice; "Edit every field" turns the planned result into the editor.  In
// the editor every field is editable (lists: add, remove, reorder, mark
// tasks done).  Beside either, the difference against HEAD, computed by
// the server (what the save adds, drops and changes).  Saving writes on
// the HEAD the editor started from: if anyone moved HEAD meanwhile the
// save is refused and the person can reload HEAD, keeping their edits or
// choices.  Ctrl/Cmd+S saves.
import { h, clear, append, toast, short } from './dom.js';
import { get, post, op, enc, recordedAs, authorParam } from './api.js';
import { FIELDS, ITEM_NOUN, diffView } from './inspect.js';
import { newChoices, choiceParams, reviewForm } from './draftreview.js';

const EMPTY_ITEM = {
  decisions: () => ({ text: '' }), assumptions: () => ({ text: '' }), open_questions: () => ({ text: '' }),
  tasks: () => ({ text: '', status: 'open' }), entities: () => ({ name: '' }),
  artifacts: () => ({ name: '', kind: 'markdown', content: '' }),
};

export function editorView(ctx, first) {
  const status = h('div.editor-status', { role: 'status' });
  const formBox = h('div.editor-form');
  const against = h('div.against', h('p.muted', 'Comparing with HEAD…'));
  const saveBtn = h('button.primary', { type: 'button', onclick: save }, 'Save checkpoint');
  let authorIn = null;          // the Author box, when the author given is the one recorded
  const el = h('div.editor', status, h('div.editor-cols',
    h('form.editor-main', { onsubmit: (e) => { e.preventDefault(); save(); } }, formBox,
      h('div.editor-save', authorBox(), saveBtn)),
    h('aside.editor-side', { 'aria-label': 'Against HEAD' }, h('h2', 'Against HEAD'), against)));
  let state = null;             // { title, summary, lists..., metadata }
  let base = null;              // HEAD checkpoint the edit started from, or null
  let jobId = null;
  let review = null;            // { job, choices, plan } while a draft is reviewed
  let diffTimer = 0;
  let againstTurn = 0;          // the newest compare or plan; older answers are dropped
  let alive = true;

  // Signed in with a user's token, the server records that user: say so,
  // read-only.  Otherwise an optional Author (remembered); left empty, the
  // server's default applies.
  function authorBox() {
    const as = recordedAs();
    if (as) return h('p.inline.recorded-as', 'Recorded as ', h('strong', as));
    authorIn = h('input', { name: 'author', value: localStorage.getItem('smriti.author') || '', 'aria-label': 'Author',
      placeholder: "the server's default", autocomplete: 'off',
      onchange: () => {
        const v = authorIn.value.trim();
        if (v) localStorage.setItem('smriti.author', v); else localStorage.removeItem('smriti.author');
      } });
    return h('label.inline', 'Author ', authorIn);
  }

  function fromCheckpoint(c) {
    const s = { title: c.title || '', summary: c.summary || '', metadata: c.metadata || {} };
    for (const [f] of FIELDS) s[f] = JSON.parse(JSON.stringify(c[f] || []));
    return s;
  }

  function fields() {
    const out = { title: state.title, summary: state.summary, metadata: state.metadata };
    for (const [f] of FIELDS) out[f] = state[f];
    return out;
  }

  async function loadBase() {
    const sp = await get(`/v4/repos/${enc(ctx.space)}`);
    base = sp.head ? await get(`/commits/${sp.head}`) : null;
  }

  // ---- the form ----

  function input(value, label, onInput, opts = {}) {
    const tag = opts.area ? 'textarea' : 'input';
    const el2 = h(tag + (opts.cls || ''), { 'aria-label': label, placeholder: opts.placeholder || label, rows: opts.rows, oninput: (e) => { onInput(e.target.value); schedule(); } });
    el2.value = value || '';
    return el2;
  }

  function itemEditor(field, list, i) {
    const it = list[i];
    const label = `${FIELDS.find((f) => f[0] === field)[1]} ${i + 1}`;
    const move = (d) => {
      const j = i + d;
      if (j < 0 || j >= list.length) return;
      [list[i], list[j]] = [list[j], list[i]];
      drawForm();
      schedule();
    };
    const controls = h('span.item-controls',
      h('button.icon', { type: 'button', 'aria-label': `Move ${label} up`, title: 'Move up', disabled: i === 0, onclick: () => move(-1) }, '↑'),
      h('button.icon', { type: 'button', 'aria-label': `Move ${label} down`, title: 'Move down', disabled: i === list.length - 1, onclick: () => move(1) }, '↓'),
      h('button.icon.danger', { type: 'button', 'aria-label': `Remove ${label}`, title: 'Remove', onclick: () => { list.splice(i, 1); drawForm(); schedule(); } }, '✕'));
    if (field === 'tasks') {
      const box = h('input', { type: 'checkbox', 'aria-label': `${label} done`, checked: it.status === 'done', onchange: (e) => { it.status = e.target.checked ? 'done' : 'open'; schedule(); } });
      return h('li.edit-item', box, input(it.text, label, (v) => { it.text = v; }), controls);
    }
    if (field === 'entities') {
      return h('li.edit-item', input(it.name, `${label} name`, (v) => { it.name = v; }),
        input(it.kind, `${label} kind`, (v) => { it.kind = v || undefined; }, { cls: '.narrow', placeholder: 'kind' }), controls);
    }
    if (field === 'artifacts') {
      return h('li.edit-item.artifact-edit', h('div.artifact-head',
        input(it.name, `${label} name`, (v) => { it.name = v; }),
        input(it.kind, `${label} kind`, (v) => { it.kind = v; }, { cls: '.narrow', placeholder: 'kind' }), controls),
      input(it.content, `${label} content`, (v) => { it.content = v; }, { area: true, rows: 5, cls: '.mono' }));
    }
    return h('li.edit-item', input(it.text, label, (v) => { it.text = v; }), controls);
  }

  function drawForm() {
    clear(formBox).append(
      h('label.block', 'Title', input(state.title, 'Title', (v) => { state.title = v; })),
      h('label.block', 'Summary', input(state.summary, 'Summary', (v) => { state.summary = v; }, { area: true, rows: 3 })));
    for (const [f, label] of FIELDS) {
      const list = state[f];
      formBox.append(h('fieldset.edit-list', { 'data-field': f }, h('legend', label),
        h('ol', list.map((_, i) => itemEditor(f, list, i))),
        h('button.small', { type: 'button', onclick: () => { list.push(EMPTY_ITEM[f]()); drawForm(); formBox.querySelector(`[data-field="${f}"] li:last-child input, [data-field="${f}"] li:last-child textarea`)?.focus(); } }, `Add ${ITEM_NOUN[f]}`)));
    }
  }

  // ---- against HEAD ----

  function schedule() {
    clearTimeout(diffTimer);
    diffTimer = setTimeout(review ? replan : compare, 250);
  }

  function headLine() {
    return base ? h('p.muted', 'HEAD: “', base.title, '” ', h('code.hash', short(base.commit_hash)))
      : h('p.muted', 'This Space has no checkpoint yet: everything is new.');
  }

  // A compare and a plan can be in flight together (the editor compares
  // HEAD while the draft loads): only the newest one asked draws the pane.
  async function compare() {
    const turn = ++againstTurn;
    try {
      const d = await op('diff.proposal', { from: base?.commit_hash, checkpoint: fields() });
      if (!alive || turn !== againstTurn) return;
      clear(against).append(headLine(),
        // Element.append writes null as the text "null"
        d.refused ? h('p.error.refusal', { role: 'alert' }, h('strong', 'Saving would be refused: '), d.refused) : '',
        diffView(d));
    } catch (e) {
      if (turn === againstTurn) clear(against).append(h('p.error', e.message));
    }
  }

  // ---- saving ----

  function conflict(message) {
    clear(status).append(h('div.banner.warn', { role: 'alert' },
      h('p', h('strong', 'HEAD moved while you were editing. '), 'Nothing was saved; your edits are still here.'),
      h('p.muted', message),
      h('button', { type: 'button', onclick: reloadHead }, 'Reload HEAD and compare again')));
  }

  async function reloadHead() {
    await loadBase();
    clear(status).append(h('div.banner', h('p', 'Now comparing with the new HEAD “', base?.title || '', '”. Save puts your checkpoint on top of it.')));
    if (review) {
      review.choices.dropped = newChoices(review.job.draft, base).dropped;   // HEAD's positions moved
      await replan();
      drawReview();
    } else {
      compare();
    }
  }

  // ---- reviewing a draft ----

  async function replan() {
    const turn = ++againstTurn;
    try {
      const params = { job_id: jobId, ...choiceParams(review.choices) };
      if (base) params.parent = base.commit_hash;
      const plan = await op('draft.plan', params);
      if (!alive || turn !== againstTurn) return;
      review.plan = plan;
      clear(against).append(headLine(), h('p.plan-said', 'Saving: ', h('strong', review.plan.changed)), diffView(review.plan.diff));
    } catch (e) {
      if (turn === againstTurn) clear(against).append(headLine(), h('p.error', { role: 'alert' }, e.message));
    }
  }

  function drawReview() {
    const ch = review.choices;
    const headSummary = base?.summary && base.summary !== ch.summary
      ? h('p.muted.small', 'HEAD’s summary: “', base.summary, '” ',
        h('button.small', { type: 'button', onclick: () => { ch.summary = base.summary; drawReview(); schedule(); } }, 'Use HEAD’s summary'))
      : null;
    append(clear(formBox), [
      h('label.block', 'Title', input(ch.title, 'Title', (v) => { ch.title = v; })),
      h('label.block', 'Summary', input(ch.summary, 'Summary', (v) => { ch.summary = v; }, { area: true, rows: 3 })), headSummary,
      reviewForm(review.plan?.review || {}, base, ch, (redraw) => { if (redraw) drawReview(); schedule(); }),
      h('p.edit-all', h('button.small', { type: 'button', onclick: editAll }, 'Edit every field instead'),
        h('span.muted.small', ' the checkpoint this would save, in the full editor'))]);
  }

  // Leaves the review for the full editor, holding what the review would save.
  function editAll() {
    if (!review.plan) return;
    state = fromCheckpoint(review.plan.checkpoint);
    review = null;
    clear(status).append(h('div.banner', h('p', 'Editing the checkpoint the draft would save on HEAD: every field is yours now.')));
    drawForm();
    compare();
  }

  async function saveDraft() {
    const body = { ...choiceParams(review.choices), author: authorParam(authorIn?.value) };
    if (base) body.parent = base.commit_hash;
    const r = await post(`/v5/checkpoints/draft/${enc(jobId)}/save`, body);
    return r.checkpoint;
  }

  async function save() {
    saveBtn.disabled = true;
    try {
      let c;
      if (review) {
        c = await saveDraft();
      } else {
        const body = { repo_id: ctx.space, ...fields(), author: authorParam(authorIn?.value) };
        if (base) body.parent_commit_id = base.commit_hash;
        c = await post('/chat/commit', body);
      }
      toast('Checkpoint saved');
      location.hash = `#/s/${enc(ctx.space)}/c/${c.commit_hash}`;
    } catch (e) {
      if (e.code === 'conflict') conflict(e.message);
      else clear(status).append(h('div.banner.error', { role: 'alert' }, e.message));
      status.scrollIntoView({ block: 'nearest' });
    } finally {
      saveBtn.disabled = false;
    }
  }

  // ---- a draft job ----

  async function followJob(id) {
    const t0 = Date.now();
    for (;;) {
      if (!alive || jobId !== id) return null;
      let job;
      try {
        job = await get(`/v5/checkpoints/draft/${enc(id)}`);
      } catch (e) {
        clear(status).append(h('div.banner.error', { role: 'alert' }, e.message));
        return null;
      }
      if (job.status === 'done') {
        clear(status).append(h('div.banner', h('p', 'Draft ready (', job.provider, '/', job.model, '). Saving adds it to HEAD: HEAD’s items stay unless you drop them. Take or leave each item of the draft; nothing is saved until you do.')));
        return job;
      }
      if (job.status === 'failed') {
        clear(status).append(h('div.banner.error', { role: 'alert' }, h('p', h('strong', 'The draft failed: '), job.error),
          h('p.muted', 'The editor holds HEAD instead; you can write the checkpoint yourself.')));
        return null;
      }
      clear(status).append(h('div.banner.progress', h('span.spinner', { 'aria-hidden': 'true' }),
        `Drafting with AI from the session's turns: ${job.status}, ${Math.round((Date.now() - t0) / 1000)} s`));
      await new Promise((r) => setTimeout(r, 400));
    }
  }

  async function open(route) {
    jobId = route.args[0] || null;
    review = null;
    clear(status);
    try {
      await loadBase();
    } catch (e) {
      clear(status).append(h('div.banner.error', e.message));
      return;
    }
    state = fromCheckpoint(base || {});
    drawForm();
    compare();
    if (jobId) {
      const job = await followJob(jobId);
      if (job && alive && jobId === route.args[0]) {
        review = { job, choices: newChoices(job.draft, base), plan: null };
        await replan();
        drawReview();
      }
    }
  }

  function keys(e) {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') { save(); return true; }
    return false;
  }

  open(first);
  return {
    el, keys,
    update: (r) => { if ((r.args[0] || null) !== jobId) open(r); },
    destroy: () => { alive = false; },
  };
}

