/*
 * ops_bundle.c -- export Spaces into one bundle document and import one
 * back (domain/bundle.h), the way to move a history to another machine or
 * from SQLite to a PostgreSQL team server.
 *
 * Import is all or nothing and idempotent: the bundle is checked whole
 * first (its sha256, every checkpoint's hash, every parent), then the rows
 * the store does not hold yet are planned and written in one transaction.
 * Importing the same bundle twice adds nothing the second time; a newer
 * export of the same Space adds what is new and moves HEAD forward, with a
 * reflog row saying so.  A Space whose history went another way is a
 * conflict, and nothing is written.
 */
#include "domain/bundle.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- export ---- */

static int write_checkpoint(const struct checkpoint *c, const struct checkpoint_text *t,
			    void *w)
{
	bundle_writer_checkpoint(w, c, t);
	return 0;
}

/* The Space called name into w: its checkpoints as the store scans them, then the rest. */
static enum smr_rc export_space(struct ops_ctx *ctx, const char *name,
				struct bundle_writer *w, struct smr_err *err)
{
	struct space_bundle b = { 0 };
	struct reflog_entry *log = NULL;
	size_t nlog = 0;
	/* a signed-in caller exports only what it may read (ops/auth.h) */
	enum smr_rc rc = ops_need_space(ctx, name, ROLE_READER, &b.space, err);

	if (!rc) {
		bundle_writer_space(w, &b.space);
		rc = store_checkpoint_scan_text(ctx->st, b.space.id, write_checkpoint, w, err);
	}
	if (!rc)
		rc = store_session_list(ctx->st, b.space.id, &b.sessions, &b.n_sessions, err);
	if (!rc) {
		b.turns = xcalloc(b.n_sessions + 1, sizeof(*b.turns));
		b.n_turns = xcalloc(b.n_sessions + 1, sizeof(*b.n_turns));
	}
	for (size_t i = 0; !rc && i < b.n_sessions; i++)
		rc = store_turn_list(ctx->st, b.sessions[i].id, 0, &b.turns[i], &b.n_turns[i], err);
	if (!rc)
		rc = store_reflog_list(ctx->st, b.space.id, NULL, 0, &log, &nlog, err);
	if (!rc) {   /* oldest first */
		b.reflog = xcalloc(nlog + 1, sizeof(*b.reflog));
		for (size_t i = 0; i < nlog; i++)
			b.reflog[i] = log[nlog - 1 - i];
		b.n_reflog = nlog;
		free(log);
		bundle_writer_space_end(w, &b);
	}
	space_bundle_release(&b);
	return rc;
}

enum smr_rc ops_export_text(struct ops_ctx *ctx, const char *const *spaces, size_t n,
			    char **text, size_t *len, struct smr_err *err)
{
	struct bundle_writer *w = bundle_writer_new();
	struct space *all = NULL;
	size_t nall = 0;
	enum smr_rc rc = SMR_OK;

	if (!spaces) {   /* every Space the caller can read */
		rc = ops_space_list(ctx, &all, &nall, err);
		n = nall;
	}
	for (size_t i = 0; !rc && i < n; i++)
		rc = export_space(ctx, spaces ? spaces[i] : all[i].id, w, err);
	spaces_free(all, nall);
	if (rc) {
		bundle_writer_free(w);
		return rc;
	}
	*text = bundle_writer_finish(w, len);
	return SMR_OK;
}

enum smr_rc ops_export(struct ops_ctx *ctx, const char *const *spaces, size_t n,
		       json_t **bundle, struct smr_err *err)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t jerr;
	enum smr_rc rc = ops_export_text(ctx, spaces, n, &text, &len, err);

	if (!rc) {
		*bundle = json_loadb(text, len, 0, &jerr);
		if (!*bundle)
			BUG("an export is not JSON: %s", jerr.text);
	}
	free(text);
	return rc;
}

/* ---- import ---- */

/* What one Space of the bundle adds; the arrays point into the bundle. */
struct plan {
	struct import_space in;
	struct space current;                /* the Space as stored, if it exists */
	const struct checkpoint **commits;
	const struct checkpoint **parents;
	const struct checkpoint_text **texts;
	const struct session **sessions;
	struct turn **turns;
	const struct reflog_entry **reflog;
	struct ref_move move;
	char *why;
	char now[32];
};

static void plan_release(struct plan *p)
{
	space_release(&p->current);
	free(p->commits);
	free(p->parents);
	free(p->texts);
	free(p->sessions);
	free(p->turns);
	free(p->reflog);
	free(p->why);
}

/* The checkpoint of b called hash among the first `before`, looking just before first. */
static const struct checkpoint *in_bundle(const struct space_bundle *b, size_t before,
					  const char *hash)
{
	if (!hash)
		return NULL;
	for (size_t i = before; i-- > 0;)
		if (!strcmp(b->checkpoints[i].hash, hash))
			return &b->checkpoints[i];
	return NULL;
}

static int stored(struct ops_ctx *ctx, const char *space_id, const char *hash)
{
	struct checkpoint c = { 0 };
	int yes = !store_checkpoint_get(ctx->st, space_id, hash, &c, NULL);

	checkpoint_release(&c);
	return yes;
}

/* The bundle's checkpoints the store does not hold yet, each with its parent's place. */
static void plan_commits(struct ops_ctx *ctx, const struct space_bundle *b, struct plan *p)
{
	size_t k = 0;

	p->commits = xcalloc(b->n_checkpoints + 1, sizeof(*p->commits));
	p->parents = xcalloc(b->n_checkpoints + 1, sizeof(*p->parents));
	p->texts = xcalloc(b->n_checkpoints + 1, sizeof(*p->texts));
	for (size_t i = 0; i < b->n_checkpoints; i++) {
		const struct checkpoint *c = &b->checkpoints[i];

		if (!p->in.create && stored(ctx, b->space.id, c->hash))
			continue;
		p->commits[k] = c;
		p->texts[k] = b->texts ? &b->texts[i] : NULL;
		p->parents[k++] = in_bundle(b, i, c->parent_hash);
	}
	p->in.commits = p->commits;
	p->in.parents = p->parents;
	p->in.texts = p->texts;
	p->in.n_commits = k;
}

/* Where HEAD goes: the bundle's, unless the store is there already or ahead. */
static enum smr_rc plan_head(struct ops_ctx *ctx, const struct space_bundle *b,
			     struct plan *p, struct smr_err *err)
{
	const char *cur = p->current.head, *want = b->space.head;

	if (p->in.create || !want) {
		p->in.head = want;
		return SMR_OK;
	}
	if (cur && !strcmp(cur, want))
		return SMR_OK;
	if (cur && !in_bundle(b, b->n_checkpoints, cur)) {
		if (stored(ctx, b->space.id, want))
			return SMR_OK;   /* the store is ahead of the bundle */
		return smr_errf(err, SMR_ECONFLICT,
				"space '%s' has gone another way since this bundle was made (HEAD"
				" %.12s is not in the bundle, whose HEAD is %.12s); nothing was"
				" imported", p->current.name, cur, want);
	}
	ctx->now(p->now);
	p->why = xasprintf("import: fast-forward to %.12s", want);
	p->move = (struct ref_move){ ops_actor(ctx), p->why, p->now };
	p->in.head = want;
	p->in.move = &p->move;
	return SMR_OK;
}

/* New sessions, and the turns the store does not have yet (numbered after its last). */
static enum smr_rc plan_sessions(struct ops_ctx *ctx, const struct space_bundle *b,
				 struct plan *p, struct smr_err *err)
{
	size_t ns = 0, nt = 0, total = 0;

	for (size_t i = 0; i < b->n_sessions; i++)
		total += b->n_turns[i];
	p->sessions = xcalloc(b->n_sessions + 1, sizeof(*p->sessions));
	p->turns = xcalloc(total + 1, sizeof(*p->turns));
	for (size_t i = 0; i < b->n_sessions; i++) {
		struct session cur = { 0 };
		int64_t last = 0;
		enum smr_rc rc = p->in.create ? SMR_ENOTFOUND
			: store_session_get(ctx->st, b->sessions[i].id, &cur, NULL);

		if (rc == SMR_ENOTFOUND)
			p->sessions[ns++] = &b->sessions[i];
		else if (!rc && strcmp(cur.repo_id, b->space.id))
			rc = smr_errf(err, SMR_ECONFLICT, "session %s of the bundle belongs to another"
				      " space here; nothing was imported", cur.id);
		else if (!rc)
			last = cur.last_seq;
		session_release(&cur);
		if (rc && rc != SMR_ENOTFOUND)
			return rc;
		for (size_t j = (size_t)last; j < b->n_turns[i]; j++)
			p->turns[nt++] = &b->turns[i][j];
	}
	p->in.sessions = p->sessions;
	p->in.n_sessions = ns;
	p->in.turns = p->turns;
	p->in.n_turns = nt;
	return SMR_OK;
}

static int same_entry(const struct reflog_entry *a, const struct reflog_entry *b)
{
	return !strcmp(a->created_at, b->created_at) && !strcmp(a->action, b->action) &&
	       !strcmp(a->old_hash ? a->old_hash : "", b->old_hash ? b->old_hash : "") &&
	       !strcmp(a->new_hash ? a->new_hash : "", b->new_hash ? b->new_hash : "");
}

/* The bundle's reflog rows the store does not have. */
static enum smr_rc plan_reflog(struct ops_ctx *ctx, const struct space_bundle *b,
			       struct plan *p, struct smr_err *err)
{
	struct reflog_entry *have = NULL;
	size_t nhave = 0, k = 0;
	enum smr_rc rc = p->in.create ? SMR_OK
		: store_reflog_list(ctx->st, b->space.id, NULL, 0, &have, &nhave, err);

	p->reflog = xcalloc(b->n_reflog + 1, sizeof(*p->reflog));
	for (size_t i = 0; !rc && i < b->n_reflog; i++) {
		size_t j = 0;

		while (j < nhave && !same_entry(&have[j], &b->reflog[i]))
			j++;
		if (j == nhave)
			p->reflog[k++] = &b->reflog[i];
	}
	reflog_entries_free(have, nhave);
	p->in.reflog = p->reflog;
	p->in.n_reflog = k;
	return rc;
}

static enum smr_rc plan_space(struct ops_ctx *ctx, const struct space_bundle *b,
			      struct plan *p, struct smr_err *err)
{
	enum smr_rc rc = store_space_find(ctx->st, b->space.id, &p->current, NULL);

	p->in.space = &b->space;
	if (rc || strcmp(p->current.id, b->space.id)) {
		space_release(&p->current);
		p->in.create = 1;
	} else if (p->current.deleted_at) {
		return smr_errf(err, SMR_ECONFLICT, "space '%s' of the bundle was deleted here;"
				" run `smriti gc --prune` first to import it again; nothing was"
				" imported", b->space.name);
	}
	plan_commits(ctx, b, p);
	rc = plan_head(ctx, b, p, err);
	if (!rc)
		rc = plan_sessions(ctx, b, p, err);
	if (!rc)
		rc = plan_reflog(ctx, b, p, err);
	return rc;
}

static json_t *report_json(const struct plan *v, size_t n)
{
	json_t *spaces = json_array();
	size_t added = 0;

	for (size_t i = 0; i < n; i++) {
		const struct import_space *s = &v[i].in;

		added += s->n_commits;
		json_array_append_new(spaces, json_pack(
			"{s:s, s:b, s:I, s:I, s:I, s:I, s:o}", "name", s->space->name, "created",
			s->create, "checkpoints", (json_int_t)s->n_commits, "sessions",
			(json_int_t)s->n_sessions, "turns", (json_int_t)s->n_turns, "reflog",
			(json_int_t)s->n_reflog, "head",
			s->head ? json_string(s->head) : json_null()));
	}
	return json_pack("{s:o, s:I}", "spaces", spaces, "checkpoints", (json_int_t)added);
}

enum smr_rc ops_import_text(struct ops_ctx *ctx, const char *text, size_t len,
			    json_t **report, struct smr_err *err)
{
	struct space_bundle *v = NULL;
	struct plan *plans = NULL;
	struct import_space *in = NULL;
	size_t n = 0;
	enum smr_rc rc = bundle_read(text, len, &v, &n, err);

	if (!rc) {
		plans = xcalloc(n + 1, sizeof(*plans));
		in = xcalloc(n + 1, sizeof(*in));
	}
	for (size_t i = 0; !rc && i < n; i++) {
		rc = plan_space(ctx, &v[i], &plans[i], err);
		in[i] = plans[i].in;
	}
	if (!rc)
		rc = store_import(ctx->st, in, n, err);
	if (!rc)
		*report = report_json(plans, n);
	for (size_t i = 0; plans && i < n; i++)
		plan_release(&plans[i]);
	free(plans);
	free(in);
	space_bundles_free(v, n);
	return rc;
}

enum smr_rc ops_import(struct ops_ctx *ctx, const json_t *doc, json_t **report,
		       struct smr_err *err)
{
	char *text = json_is_object(doc) ? json_dumps(doc, JSON_COMPACT) : NULL;
	enum smr_rc rc;

	if (!text)
		return smr_errf(err, SMR_EINVAL, "not a Smriti bundle (a JSON object expected)");
	rc = ops_import_text(ctx, text, strlen(text), report, err);
	free(text);
	return rc;
}
