/*
 * ops_view.c -- space.overview, space.forks and state.version (see
 * view.h), and the operation table of the view operations.
 */
#include "ops/ancestry.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/view.h"
#include "domain/checkpoint.h"
#include "domain/diff.h"
#include "util/buf.h"
#include "util/strmap.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The later of *newest and at (NULL: none); ISO times compare as text. */
static const char *later(const char *newest, const char *at)
{
	return at && strcmp(at, newest) > 0 ? at : newest;
}

/* A Space of the overview: its summary, and when it was last active. */
struct overview_row {
	struct space_summary *u;
	const char *newest;
};

/* Space r's overview entry. */
static json_t *overview_entry(struct ops_ctx *ctx, struct overview_row *r)
{
	struct space_summary *u = r->u;
	json_t *out = ops_space_json(&u->sp);

	ops_add_role(ctx, &u->sp, out);
	json_object_set_new(out, "head_checkpoint", u->sp.head ?
		json_pack("{s:s, s:s, s:s}", "title", u->head_title ? u->head_title : "",
			  "author", u->head_author ? u->head_author : "", "created_at", u->head_at) :
		json_null());
	json_object_set_new(out, "sessions", json_integer((json_int_t)u->sessions));
	json_object_set_new(out, "last_activity", json_string(r->newest));
	return out;
}

/* Whether text holds match, ASCII letters in either case. */
static int holds(const char *text, const char *match)
{
	return text && strcasestr(text, match);
}

/* qsort order of the overview: the most recently active first, then by name. */
static int by_activity(const void *a, const void *b)
{
	const struct overview_row *x = a, *y = b;
	int c = strcmp(y->newest, x->newest);

	return c ? c : strcmp(x->u->sp.name, y->u->sp.name);
}

enum smr_rc ops_space_overview(struct ops_ctx *ctx, const char *match, size_t limit,
			       json_t **out, struct smr_err *err)
{
	struct space_summary *sums = NULL;
	struct space *v = NULL;
	struct overview_row *rows;
	struct strmap readable = STRMAP_INIT;
	size_t n = 0, n_sums = 0, kept = 0;
	int restricted = ops_restricted(ctx);
	enum smr_rc rc = store_space_summaries(ctx->st, &sums, &n_sums, err);

	/* a person with grants sees the Spaces the list gives them (none: none) */
	if (!rc && restricted)
		rc = ops_space_list(ctx, &v, &n, err);
	for (size_t i = 0; i < n; i++)
		strmap_put(&readable, v[i].id, i);
	rows = xcalloc(n_sums + 1, sizeof(*rows));
	for (size_t i = 0; !rc && i < n_sums; i++) {
		struct space_summary *u = &sums[i];

		if (restricted && !strmap_get(&readable, u->sp.id, NULL))
			continue;
		if (match && !holds(u->sp.name, match) && !holds(u->sp.description, match) &&
		    !(u->sp.head && holds(u->head_title, match)))
			continue;
		rows[kept++] = (struct overview_row){ u,
			later(later(later(u->sp.created_at, u->newest_session_at), u->newest_turn_at),
			      u->head_at) };
	}
	/* the entries, which cost the most, only for the Spaces answered */
	qsort(rows, kept, sizeof(*rows), by_activity);
	if (limit && kept > limit)
		kept = limit;
	*out = rc ? NULL : json_array();
	for (size_t i = 0; !rc && i < kept; i++)
		json_array_append_new(*out, overview_entry(ctx, &rows[i]));
	free(rows);
	strmap_release(&readable);
	space_summaries_free(sums, n_sums);
	spaces_free(v, n);
	return rc;
}

/*
 * The Space sp was forked from and the checkpoint it was forked at: what
 * its reflog's first entry (written with the Space, at its created_at)
 * says, when that entry is a fork's; NULL otherwise.  Caller frees both.
 */
static enum smr_rc fork_origin(struct ops_ctx *ctx, const struct space *sp, char **origin,
			       char **at, struct smr_err *err)
{
	static const char prefix[] = "fork: from ";
	struct reflog_entry *e = NULL;
	size_t n = 0;
	const char *name, *hash;
	enum smr_rc rc = store_reflog_list(ctx->st, sp->id, sp->created_at, 1, &e, &n, err);

	*origin = *at = NULL;
	if (rc || !n || strcmp(e[0].action, "fork") || !e[0].new_hash || !e[0].reason ||
	    strncmp(e[0].reason, prefix, sizeof(prefix) - 1))
		goto out;
	/* "fork: from NAME at HASH" (ops_fork): NAME ends at the last " at " */
	name = e[0].reason + sizeof(prefix) - 1;
	hash = strrchr(name, ' ');
	if (hash && hash - name > 3 && !strncmp(hash - 3, " at", 3)) {
		*origin = xstrndup(name, (size_t)(hash - 3 - name));
		*at = xstrdup(e[0].new_hash);
	}
out:
	reflog_entries_free(e, n);
	return rc;
}

/*
 * The history of sp's HEAD, read once and kept in the list by Space (k:
 * its index in v); borrowed, NULL for a Space with no HEAD.
 */
static enum smr_rc history_of(struct ops_ctx *ctx, const struct space *v, size_t k,
			      struct history **kept, struct history **out, struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	*out = NULL;
	if (!v[k].head)
		return SMR_OK;
	if (!kept[k]) {
		kept[k] = xcalloc(1, sizeof(**kept));
		rc = ops_history_read(ctx, v[k].id, v[k].head, kept[k], err);
		if (rc) {
			free(kept[k]);
			kept[k] = NULL;
		}
	}
	*out = kept[k];
	return rc;
}

/*
 * Appends the standing of v[i] against its origin (when it is a fork of a
 * Space of v, by name) to out.
 */
static enum smr_rc fork_standing(struct ops_ctx *ctx, const struct space *v, size_t i,
				 const struct strmap *by_name, struct history **kept, json_t *out,
				 struct smr_err *err)
{
	const struct space *sp = &v[i];
	struct history *mine = NULL, *theirs = NULL, at = { 0 }, none = { 0 };
	char *origin = NULL, *at_hash = NULL;
	json_int_t ahead = 0, behind = 0;
	int held = 0;
	size_t o;
	enum smr_rc rc = fork_origin(ctx, sp, &origin, &at_hash, err);

	/* an origin the caller may not read is left unnamed: not in v */
	if (!rc && origin && strmap_get(by_name, origin, &o) && o != i)
		rc = history_of(ctx, v, o, kept, &theirs, err);
	/* a Space now under that name that never held the fork point is another one */
	if (!rc && theirs) {
		rc = ops_history_read(ctx, sp->id, at_hash, &at, err);
		if (!rc)
			rc = ops_history_holds(ctx, theirs, &at, &held, err);
		else if (rc == SMR_ENOTFOUND)
			rc = SMR_OK;
	}
	if (!rc && held)
		rc = history_of(ctx, v, i, kept, &mine, err);
	if (!rc && held && !mine)
		mine = &none;   /* no HEAD: behind by all the origin holds */
	if (!rc && held)
		rc = ops_history_only_in(ctx, mine, theirs, &ahead, err);
	if (!rc && held)
		rc = ops_history_only_in(ctx, theirs, mine, &behind, err);
	if (!rc && held)
		json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:I}", "space", sp->name,
						     "origin", v[o].name, "ahead", ahead,
						     "behind", behind));
	ops_history_release(&at);
	ops_history_release(&none);
	free(origin);
	free(at_hash);
	return rc;
}

/*
 * Each fork's standing.  Only a Space with a fork's entry in its reflog
 * can be one, and those are found in one statement: reading every Space's
 * first entry took 10,002 statements (0.4 s on SQLite) at each refresh of
 * the Spaces page.
 */
enum smr_rc ops_space_forks(struct ops_ctx *ctx, json_t **out, struct smr_err *err)
{
	struct space *v = NULL;
	struct strmap forked = STRMAP_INIT, by_name = STRMAP_INIT;
	struct history **kept;
	char **ids = NULL;
	size_t n = 0, n_ids = 0;
	enum smr_rc rc = ops_space_list(ctx, &v, &n, err);

	if (!rc)
		rc = store_spaces_with_fork_entries(ctx->st, &ids, &n_ids, err);
	for (size_t i = 0; i < n_ids; i++)
		strmap_put(&forked, ids[i], 1);
	for (size_t i = 0; i < n; i++)
		strmap_put(&by_name, v[i].name, i);
	kept = xcalloc(n + 1, sizeof(*kept));
	*out = json_array();
	for (size_t i = 0; !rc && i < n; i++)
		if (strmap_get(&forked, v[i].id, NULL))
			rc = fork_standing(ctx, v, i, &by_name, kept, *out, err);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (kept[i]) {
			ops_history_release(kept[i]);
			free(kept[i]);
		}
	free(kept);
	strmap_release(&forked);
	strmap_release(&by_name);
	for (size_t i = 0; i < n_ids; i++)
		free(ids[i]);
	free(ids);
	spaces_free(v, n);
	return rc;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static enum smr_rc add_sessions(struct ops_ctx *ctx, const char *space, struct buf *b,
				struct smr_err *err)
{
	struct space sp = { 0 };
	struct session *ss = NULL;
	size_t n = 0;
	enum smr_rc rc = store_space_get(ctx->st, space, &sp, err);

	if (!rc)
		rc = store_session_list(ctx->st, sp.id, &ss, &n, err);
	for (size_t i = 0; !rc && i < n; i++)
		/* the path shown too: another tab follows a switch between versions */
		buf_addf(b, "%s\037%s\037%" PRId64 "\037%" PRId64 "\036", ss[i].id,
			 ss[i].title ? ss[i].title : "", ss[i].last_seq, ss[i].leaf_seq);
	sessions_free(ss, n);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_state_version(struct ops_ctx *ctx, const char *space, json_t **out,
			      struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	struct space *v = NULL;
	size_t n = 0;
	char hex[17];
	enum smr_rc rc = ops_space_list(ctx, &v, &n, err);

	for (size_t i = 0; !rc && i < n; i++)
		buf_addf(&b, "%s\037%s\037%s\037%s\036", v[i].id, v[i].name,
			 v[i].head ? v[i].head : "", v[i].description ? v[i].description : "");
	if (!rc && space)
		rc = add_sessions(ctx, space, &b, err);
	if (!rc) {
		snprintf(hex, sizeof(hex), "%016" PRIx64, fnv1a(b.ptr, b.len));
		*out = json_pack("{s:s}", "version", hex);
	}
	buf_release(&b);
	spaces_free(v, n);
	return rc;
}

enum smr_rc ops_diff_proposal(struct ops_ctx *ctx, const char *from, const json_t *fields,
			      json_t **out, struct smr_err *err)
{
	struct checkpoint a, b;
	struct smr_err dup = SMR_ERR_INIT;
	enum smr_rc rc = SMR_OK;

	checkpoint_init(&a);
	checkpoint_init(&b);
	if (from) {
		checkpoint_release(&a);
		rc = ops_resolve(ctx, from, &a, err);
	}
	if (!rc)
		rc = checkpoint_from_json(fields, &b, err);
	if (!rc)
		*out = checkpoint_diff(&a, &b);
	/* what saving it would be refused for, said before the person tries */
	if (!rc && checkpoint_check_unique(&b, &dup))
		json_object_set_new(*out, "refused", json_string(dup.msg));
	checkpoint_release(&a);
	checkpoint_release(&b);
	return rc;
}

static enum smr_rc op_diff_proposal(struct ops_ctx *ctx, const json_t *p, json_t **result,
				    struct smr_err *err)
{
	const json_t *fields = json_object_get(p, "checkpoint");
	const char *from;
	enum smr_rc rc = api_str(p, "from", 0, &from, err);

	if (!rc && !json_is_object(fields))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'checkpoint' must be an object");
	if (!rc)
		rc = ops_diff_proposal(ctx, from, fields, result, err);
	return rc;
}

static enum smr_rc op_overview(struct ops_ctx *ctx, const json_t *p, json_t **result,
			       struct smr_err *err)
{
	long long limit = 0;
	enum smr_rc rc = api_int(p, "limit", 0, 1000000000, &limit, err);

	return rc ? rc : ops_space_overview(ctx, api_text(p, "match"), (size_t)limit, result, err);
}

static enum smr_rc op_forks(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	(void)p;
	return ops_space_forks(ctx, result, err);
}

static enum smr_rc op_version(struct ops_ctx *ctx, const json_t *p, json_t **result,
			      struct smr_err *err)
{
	const char *space;
	enum smr_rc rc = api_str(p, "space", 0, &space, err);

	if (!rc && json_object_get(p, "wait") && !json_object_get(p, "since"))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'wait' needs 'since': the version to wait"
			      " for a change from (the last one this gave)");
	if (!rc)
		rc = ops_state_version(ctx, space, result, err);
	return rc;
}

const struct api_op view_ops[] = {
	{ "space.graph", ops_api_space_graph, 0, 0 },
	{ "space.overview", op_overview, 0, 0 },
	{ "space.forks", op_forks, 0, 0 },
	{ "state.version", op_version, 0, 0 },
	{ "diff.proposal", op_diff_proposal, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
