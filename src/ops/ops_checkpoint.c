/*
 * ops_checkpoint.c -- operations on Checkpoints: resolve a reference, read
 * HEAD, write (compare-and-swap on HEAD), update (a patch on top of the
 * parent), log, diff, restore and fork.
 */
#include "domain/checkpoint.h"
#include "domain/diff.h"
#include "domain/graph.h"
#include "domain/patch.h"
#include "domain/ref.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "store/auth.h"
#include "util/xalloc.h"
#include "util/hex.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Prefix matches a restricted caller's lookup looks through for ones it may read. */
#define PREFIX_SCAN 64

/*
 * The id of the oldest Space holding hash that the caller may read, into a
 * new string, or NULL: a fork shares its source's hashes, and a person who
 * reads only the fork reaches them through it.
 */
static char *readable_copy(struct ops_ctx *ctx, const char *hash)
{
	char **ids = NULL, *found = NULL;
	size_t n = 0;

	if (!store_hash_spaces(ctx->st, hash, &ids, &n, NULL)) {
		for (size_t i = 0; i < n; i++) {
			if (!found && ops_can_read(ctx, ids[i])) {
				found = ids[i];
				ids[i] = NULL;
			}
			free(ids[i]);
		}
	}
	free(ids);
	return found;
}

int ops_hash_readable(struct ops_ctx *ctx, const char *hash)
{
	char *id;

	if (!ops_restricted(ctx))
		return 1;
	id = readable_copy(ctx, hash);
	free(id);
	return id != NULL;
}

/* Drops the hits a restricted caller cannot read, so neither a lookup nor its errors show them. */
static size_t keep_readable(struct ops_ctx *ctx, char **hits, size_t n)
{
	size_t kept = 0;

	if (!ops_restricted(ctx))
		return n;
	for (size_t i = 0; i < n; i++) {
		if (ops_hash_readable(ctx, hits[i]))
			hits[kept++] = hits[i];
		else
			free(hits[i]);
	}
	return kept;
}

/* The single hash a prefix names, into a new string. */
static enum smr_rc unique_hash(struct ops_ctx *ctx, const char *prefix, char **out,
			       struct smr_err *err)
{
	char **hits = NULL;
	size_t n = 0;
	enum smr_rc rc;

	rc = store_checkpoint_find_prefix(ctx->st, prefix, ops_restricted(ctx) ? PREFIX_SCAN : 2,
					  &hits, &n, err);
	if (!rc)
		n = keep_readable(ctx, hits, n);
	if (!rc && n == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint matches '%s'", prefix);
	if (!rc && n > 1)
		rc = smr_errf(err, SMR_EUSAGE,
			      "checkpoint prefix '%s' is ambiguous: it matches %.12s and %.12s;"
			      " give more characters", prefix, hits[0], hits[1]);
	if (!rc) {
		*out = hits[0];
		hits[0] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(hits[i]);
	free(hits);
	return rc;
}

/* 1 for 1 to 3 lower-case hex digits: meant as a prefix, but too short to be one. */
static int is_short_hex(const char *s)
{
	size_t n = hex_span(s);

	return n > 0 && n < 4 && !s[n];
}

/*
 * The checkpoint a base reference names (no ~N), looked up as a Space
 * first; of a Space's HEAD, with content 0, only out->hash and out->space.
 */
static enum smr_rc resolve_base(struct ops_ctx *ctx, const char *base, int content,
				struct checkpoint *out, char **space_id, struct smr_err *err)
{
	struct space sp = { 0 };
	char *hash = NULL;
	enum smr_rc rc;

	rc = store_space_get(ctx->st, base, &sp, NULL);
	if (!rc && !ops_can_read(ctx, sp.id)) {
		space_release(&sp);
		rc = SMR_ENOTFOUND;       /* as if there were no such Space */
	}
	if (!rc) {
		if (!sp.head)
			rc = smr_errf(err, SMR_ENOTFOUND, "space '%s' has no checkpoints yet",
				      sp.name);
		else if (!content) {
			out->hash = xstrdup(sp.head);
			out->space = xstrdup(sp.name);
		} else
			rc = store_checkpoint_get(ctx->st, sp.id, sp.head, out, err);
		*space_id = sp.id;
		sp.id = NULL;
		space_release(&sp);
		return rc;
	}
	if (rc != SMR_ENOTFOUND)
		return smr_errf(err, rc, "cannot read space '%s'", base);
	if (is_short_hex(base))
		return smr_errf(err, SMR_ENOTFOUND,
				"no space named '%s', and a checkpoint prefix needs at least 4 hex"
				" digits", base);
	if (!is_hash_prefix(base))
		return smr_errf(err, SMR_ENOTFOUND, "no space or checkpoint named '%s'", base);
	rc = unique_hash(ctx, base, &hash, err);
	if (!rc && ops_restricted(ctx)) {
		char *copy = readable_copy(ctx, hash);

		rc = copy ? store_checkpoint_get(ctx->st, copy, hash, out, err) :
			    smr_errf(err, SMR_ENOTFOUND, "no checkpoint matches '%s'", base);
		free(copy);
	} else if (!rc) {
		rc = store_checkpoint_get(ctx->st, NULL, hash, out, err);
	}
	if (!rc)
		rc = store_space_find(ctx->st, out->space, &sp, err);
	if (!rc) {
		*space_id = sp.id;
		sp.id = NULL;
	}
	space_release(&sp);
	free(hash);
	return rc;
}

/* The reflog entry a @{...} names in the Space sp; caller releases *e. */
static enum smr_rc reflog_pick(struct ops_ctx *ctx, const char *ref, const struct space *sp,
			       const struct ref_spec *spec, struct reflog_entry *e,
			       struct smr_err *err)
{
	struct reflog_entry *v = NULL;
	size_t n = 0;
	int by_index = spec->at == REF_AT_INDEX;
	enum smr_rc rc;

	rc = store_reflog_list(ctx->st, sp->id, by_index ? NULL : spec->at_time,
			       by_index ? (size_t)spec->at_index + 1 : 1, &v, &n, err);
	if (!rc && by_index && n <= (size_t)spec->at_index)
		rc = smr_errf(err, SMR_ENOTFOUND,
			      "'%s' goes back past the start of the reflog of '%s' (%zu %s)",
			      ref, spec->base, n, n == 1 ? "entry" : "entries");
	else if (!rc && !n)
		rc = smr_errf(err, SMR_ENOTFOUND,
			      "'%s': space '%s' did not exist yet at %.19sZ (it was created %.19sZ)",
			      ref, spec->base, spec->at_time, sp->created_at);
	if (!rc) {
		*e = v[n - 1];
		memset(&v[n - 1], 0, sizeof(v[n - 1]));
	}
	reflog_entries_free(v, n);
	return rc;
}

/* The checkpoint SPACE@{...} names (in a live or deleted Space). */
static enum smr_rc resolve_at(struct ops_ctx *ctx, const char *ref, struct ref_spec *spec,
			      struct checkpoint *out, char **space_id, struct smr_err *err)
{
	struct space sp = { 0 };
	struct reflog_entry e = { 0 };
	enum smr_rc rc = ops_find_readable(ctx, spec->base, &sp, err);

	if (!rc)
		rc = reflog_pick(ctx, ref, &sp, spec, &e, err);
	if (!rc && !e.new_hash && !strcmp(e.action, "delete"))
		rc = smr_errf(err, SMR_ENOTFOUND,
			      "'%s': space '%s' was deleted then (%.19sZ); its last checkpoint"
			      " was %.12s", ref, spec->base, e.created_at,
			      e.old_hash ? e.old_hash : "(none)");
	else if (!rc && !e.new_hash)
		rc = smr_errf(err, SMR_ENOTFOUND, "'%s': space '%s' had no checkpoints yet then",
			      ref, spec->base);
	if (!rc)
		rc = store_checkpoint_get(ctx->st, sp.id, e.new_hash, out, err);
	if (!rc) {
		*space_id = sp.id;
		sp.id = NULL;
	}
	reflog_entry_release(&e);
	space_release(&sp);
	return rc;
}

/* Replaces *c with its nth first-parent ancestor. */
static enum smr_rc walk_back(struct ops_ctx *ctx, const char *space_id, const char *ref,
			     long n, struct checkpoint *c, struct smr_err *err)
{
	struct checkpoint *chain = NULL;
	size_t len = 0;
	enum smr_rc rc;

	rc = store_checkpoint_log(ctx->st, space_id, c->hash, (size_t)n + 1, &chain,
				  &len, err);
	if (rc)
		return rc;
	if (len <= (size_t)n) {
		checkpoints_free(chain, len);
		return smr_errf(err, SMR_ENOTFOUND,
				"'%s' goes back past the first checkpoint (%zu in that history)",
				ref, len);
	}
	checkpoint_release(c);
	*c = chain[n];
	memset(&chain[n], 0, sizeof(chain[n]));
	checkpoints_free(chain, len);
	return SMR_OK;
}

/* Replaces *c with its parent (which 1) or second parent (which 2). */
static enum smr_rc take_parent(struct ops_ctx *ctx, const char *space_id, const char *ref,
			       int which, struct checkpoint *c, struct smr_err *err)
{
	const char *hash = which == 2 ? c->merge_parent_hash : c->parent_hash;
	struct checkpoint p = { 0 };
	enum smr_rc rc;

	if (!hash)
		return smr_errf(err, SMR_ENOTFOUND, "'%s': %.12s has no %s", ref, c->hash,
				which == 2 ? "second parent (it is not a merge)" : "parent");
	rc = store_checkpoint_get(ctx->st, space_id, hash, &p, err);
	if (!rc) {
		checkpoint_release(c);
		*c = p;
	}
	return rc;
}

/*
 * ops_resolve_in(); with content 0 out may hold the hash and Space only.
 * With in_space, *in_space gets the id of the Space it was found in
 * (caller frees), live or deleted.
 */
static enum smr_rc resolve(struct ops_ctx *ctx, const char *space, const char *ref, int content,
			   struct checkpoint *out, char **in_space, struct smr_err *err)
{
	struct ref_spec spec;
	char *space_id = NULL, now[32];
	enum smr_rc rc;

	ctx->now(now);
	rc = ref_parse(ref, now, &spec, err);
	if (rc)
		return rc;
	if (!*spec.base && space) {
		free(spec.base);
		spec.base = xstrdup(space);
	}
	if (!*spec.base)
		rc = smr_errf(err, SMR_EUSAGE, "'%s' needs a Space: write SPACE%s", ref, ref);
	else if (spec.at != REF_AT_NONE)
		rc = resolve_at(ctx, ref, &spec, out, &space_id, err);
	else
		rc = resolve_base(ctx, spec.base, content || spec.ancestors || spec.parent, out,
				  &space_id, err);
	if (!rc && spec.ancestors > 0)
		rc = walk_back(ctx, space_id, ref, spec.ancestors, out, err);
	if (!rc && spec.parent)
		rc = take_parent(ctx, space_id, ref, spec.parent, out, err);
	if (rc)
		checkpoint_release(out);
	if (!rc && in_space)
		*in_space = space_id;
	else
		free(space_id);
	ref_spec_release(&spec);
	return rc;
}

enum smr_rc ops_resolve_in(struct ops_ctx *ctx, const char *space, const char *ref,
			   struct checkpoint *out, struct smr_err *err)
{
	return resolve(ctx, space, ref, 1, out, NULL, err);
}

enum smr_rc ops_resolve(struct ops_ctx *ctx, const char *ref, struct checkpoint *out,
			struct smr_err *err)
{
	return resolve(ctx, NULL, ref, 1, out, NULL, err);
}

enum smr_rc ops_resolve_where(struct ops_ctx *ctx, const char *ref, struct checkpoint *out,
			      struct smr_err *err)
{
	return resolve(ctx, NULL, ref, 0, out, NULL, err);
}

enum smr_rc ops_resolve_hash(struct ops_ctx *ctx, const char *hash, struct checkpoint *out,
			     struct smr_err *err)
{
	char *lower = xstrdup(hash);
	enum smr_rc rc;

	for (char *p = lower; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (is_hash_prefix(lower))
		rc = ops_resolve(ctx, lower, out, err);
	else
		rc = smr_errf(err, SMR_EINVAL,
			      "'%s' is not a checkpoint hash (give 4 to 64 hex digits)", lower);
	free(lower);
	return rc;
}

enum smr_rc ops_head(struct ops_ctx *ctx, const char *space, struct checkpoint *out,
		     struct smr_err *err)
{
	enum smr_rc rc = store_head_get(ctx->st, space, out, err);

	if (!rc && !out->hash) {
		rc = smr_errf(err, SMR_ENOTFOUND, "space '%s' has no checkpoints yet", out->space);
		checkpoint_release(out);
	}
	return rc;
}

enum smr_rc ops_head_doc(struct ops_ctx *ctx, const char *space, json_t **out,
			 struct smr_err *err)
{
	struct head_cache *h = &ctx->head;
	struct checkpoint c = { 0 };
	struct handoff note = { 0 };
	uint64_t version = 0;
	enum smr_rc rc = SMR_OK;

	if (h->seen) {
		version = h->seen;       /* read by this request's auth check: used once */
		h->seen = 0;
	} else {
		rc = store_data_version(ctx->st, &version, err);
	}
	if (rc)
		return rc;
	*out = head_cache_unmoved(h, space, version);
	if (*out)
		return SMR_OK;
	rc = ops_head(ctx, space, &c, err);
	if (!rc)
		rc = ops_handoff_latest(ctx, c.space, &note, err);
	if (rc) {
		checkpoint_release(&c);
		return rc;
	}
	/* the same checkpoint under the same name, the same note: the same document */
	*out = head_cache_same(h, c.hash, c.space, note.id);
	if (!*out) {
		*out = checkpoint_to_json(&c);
		if (note.id)
			json_object_set_new(*out, "handoff", ops_handoff_json(&note, c.hash));
		head_cache_keep(h, *out, c.hash, c.space, note.id);
	}
	handoff_release(&note);
	checkpoint_release(&c);
	head_cache_asked(h, space, version);
	return SMR_OK;
}

/*
 * Seals c on top of parent (NULL: an empty Space), stamped with the
 * context's time.  A c not sealed before takes the items it carries over
 * unchanged from parent, when a write of this process made parent lately,
 * with their texts (checkpoint_adopt_items): those were a sixth of a
 * write's time, written out as JSON again.
 */
static void seal_on(struct ops_ctx *ctx, struct checkpoint *c, const char *parent)
{
	struct checkpoint from = { 0 };
	char now[32];

	if (parent && !c->texts && store_checkpoint_recent(parent, &from)) {
		checkpoint_adopt_items(c, &from);
		checkpoint_release(&from);
	}
	free(c->parent_hash);
	c->parent_hash = xstrdup(parent);
	ctx->now(now);
	free(c->created_at);
	c->created_at = xstrdup(now);
	checkpoint_seal(c);
}

/* One compare-and-swap attempt of c on top of parent (NULL: empty Space). */
static enum smr_rc put_on(struct ops_ctx *ctx, const struct space *sp, struct checkpoint *c,
			  const char *parent, struct smr_err *err)
{
	seal_on(ctx, c, parent);
	return store_checkpoint_put(ctx->st, sp->id, c, parent, err);
}

/* store_reseal_fn: c moved onto the HEAD its write locked (arg: the context). */
static void reseal_on(const char *head, struct checkpoint *c, void *arg)
{
	seal_on(arg, c, head);
}

/*
 * A write that names no parent: on whatever HEAD is when its transaction
 * locks it (sealed on the HEAD read here, and again there if it moved), so
 * however many writers race it is never refused for a race.
 */
static enum smr_rc put_on_head(struct ops_ctx *ctx, const struct space *sp,
			       struct checkpoint *c, struct smr_err *err)
{
	seal_on(ctx, c, sp->head);
	return store_checkpoint_put_on_head(ctx->st, sp->id, c, reseal_on, ctx, err);
}

/*
 * On a server with users the author is who signed in; what the client
 * called itself stays beside it as metadata.author_tool (a label, not a fact).
 */
void ops_set_author(struct ops_ctx *ctx, struct checkpoint *c)
{
	const char *author, *tool;
	char *was = c->author;

	ops_author(ctx, was, &author, &tool);
	if (tool)
		json_object_set_new(c->metadata, "author_tool", json_string(tool));
	if (author != was) {
		c->author = xstrdup(author);
		free(was);
	}
}

/*
 * A --parent / parent_commit_id as given, lower-cased into a new string
 * (*out, caller frees); a malformed one is bad input (exit 2, 400), not a
 * lost race (exit 4, 409).
 */
static enum smr_rc parent_arg(const char *parent, char **out, struct smr_err *err)
{
	char *lower = xstrdup(parent);

	for (char *p = lower; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (!is_hash_prefix(lower)) {
		free(lower);
		return smr_errf(err, SMR_EINVAL,
				"parent '%s' is not a checkpoint hash (give 4 to 64 hex digits)", parent);
	}
	*out = lower;
	return SMR_OK;
}

static int is_full_hash(const char *s)
{
	size_t n = hex_span(s);

	return n == 64 && !s[n];
}

/* Remembers that space names sp, whose HEAD is now c (just written). */
static void remember_written(struct ops_ctx *ctx, const char *space, const struct space *sp,
			     const struct checkpoint *c)
{
	const struct space now = { .id = sp->id, .name = sp->name, .head = c->hash };

	space_memo_keep(&ctx->space, space, &now);
}

/*
 * The write of a writer that names the Space it wrote to last and a full
 * parent hash, or no parent: no lookup before it, one round trip on
 * PostgreSQL.  Without a parent, c is sealed on the HEAD the memo last
 * saw, and again in the store when HEAD is another by then.  1 when it is
 * done (*rc its result); 0 when the caller must take the long way
 * (nothing remembered, or a conflict or a missing Space, whose messages
 * the long way words from a fresh look at the Space).
 */
static int write_remembered(struct ops_ctx *ctx, const char *space, struct checkpoint *c,
			    const char *parent, enum smr_rc *rc, struct smr_err *err)
{
	const struct space *sp;

	if (parent && !is_full_hash(parent))
		return 0;
	sp = space_memo_find(&ctx->space, space);
	if (!sp)
		return 0;
	c->space = xstrdup(sp->name);
	if (parent) {
		seal_on(ctx, c, parent);
		*rc = store_checkpoint_put_checked(ctx->st, sp, space, c, parent, err);
	} else {
		seal_on(ctx, c, sp->head);
		*rc = store_checkpoint_put_on_head_checked(ctx->st, sp, space, c, reseal_on, ctx,
							   err);
	}
	if (*rc == SMR_ECONFLICT || *rc == SMR_ENOTFOUND) {
		/* not found: the name means another Space now, or none */
		space_memo_forget(&ctx->space, space, *rc == SMR_ENOTFOUND);
		free(c->space);
		c->space = NULL;
		return 0;
	}
	if (!*rc)
		remember_written(ctx, space, sp, c);
	return 1;
}

static enum smr_rc write_checkpoint(struct ops_ctx *ctx, const char *space, struct checkpoint *c,
				    const char *parent, struct checkpoint *out,
				    struct smr_err *err)
{
	struct space sp = { 0 };
	struct smr_err perr = SMR_ERR_INIT;
	char *parent_hash = NULL, *lower = NULL;
	enum smr_rc rc, prc = SMR_OK;

	ops_set_author(ctx, c);   /* before either path seals it */
	/*
	 * A malformed parent is bad input on every path, the remembered-Space
	 * shortcut included; it is reported after the Space look-up, as the
	 * long way always did (a missing Space is still "not found").
	 */
	if (parent) {
		prc = parent_arg(parent, &lower, &perr);
		parent = lower;
	}
	if (!prc && write_remembered(ctx, space, c, parent, &rc, err)) {
		if (!rc) {
			*out = *c;
			memset(c, 0, sizeof(*c));
		}
		free(lower);
		return rc;
	}
	rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc && prc) {
		if (err)
			*err = perr;
		rc = prc;
	}
	if (rc) {
		free(lower);
		space_release(&sp);
		return rc;
	}
	space_memo_keep(&ctx->space, space, &sp);
	c->space = xstrdup(sp.name);
	if (parent && sp.head && !strcmp(parent, sp.head)) {
		/* the usual case, a writer on the HEAD it read: no lookup, the CAS decides */
		rc = put_on(ctx, &sp, c, parent, err);
	} else if (parent) {
		rc = unique_hash(ctx, parent, &parent_hash, err);
		if (rc == SMR_ENOTFOUND)
			rc = smr_errf(err, SMR_ECONFLICT,
				      "parent %s is not a checkpoint; HEAD of '%s' is %s", parent,
				      sp.name, sp.head ? sp.head : "empty");
		if (!rc)
			rc = put_on(ctx, &sp, c, parent_hash, err);
	} else {
		rc = put_on_head(ctx, &sp, c, err);
	}
	if (!rc) {
		remember_written(ctx, space, &sp, c);
		/* what was stored is c, sealed: hand it over rather than read it back */
		*out = *c;
		memset(c, 0, sizeof(*c));
	}
	free(parent_hash);
	free(lower);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_checkpoint_create(struct ops_ctx *ctx, const char *space, const json_t *fields,
				  const char *parent, const char *author,
				  struct checkpoint *out, struct smr_err *err)
{
	struct checkpoint c;
	enum smr_rc rc;

	checkpoint_init(&c);
	rc = checkpoint_from_json(fields, &c, err);
	if (!rc && author) {
		free(c.author);
		c.author = xstrdup(author);
	}
	if (!rc && checkpoint_is_empty(&c))
		rc = smr_errf(err, SMR_EUNPROC,
			      "refusing to write an empty checkpoint: give a title, a summary"
			      " or at least one item");
	if (!rc)
		rc = checkpoint_check_unique(&c, err);
	if (!rc)
		rc = write_checkpoint(ctx, space, &c, parent, out, err);
	checkpoint_release(&c);
	return rc;
}

/* What a patch needs while it is built on top of HEAD inside the store's transaction. */
struct update {
	struct ops_ctx *ctx;
	const json_t *patch;
	ops_patch_fn make;       /* or a patch made from the parent */
	void *make_arg;
	json_t *made;            /* owned; what make gave last */
	const char *author;
	const char *space;
	json_t *changes;         /* owned; set by build_update */
};

/* store_build_fn: the patch applied to head, sealed on top of it. */
static enum smr_rc build_update(const struct checkpoint *head, struct checkpoint *out,
				void *arg, struct smr_err *err)
{
	struct update *u = arg;
	char now[32];
	enum smr_rc rc;

	json_decref(u->changes);
	u->changes = NULL;
	if (u->make) {
		json_decref(u->made);
		u->made = NULL;
		rc = u->make(head, u->make_arg, &u->made, err);
		if (rc)
			return rc;
	}
	rc = patch_apply(head, u->make ? u->made : u->patch, out, &u->changes, err);
	if (rc)
		return rc;
	if (checkpoint_is_empty(out))
		return smr_errf(err, SMR_EUNPROC,
				"refusing to write an empty checkpoint: this change leaves nothing");
	free(out->parent_hash);
	free(out->author);
	free(out->created_at);
	free(out->space);
	out->parent_hash = xstrdup(head ? head->hash : NULL);
	out->author = xstrdup(u->author ? u->author : "");
	ops_set_author(u->ctx, out);
	u->ctx->now(now);
	out->created_at = xstrdup(now);
	out->space = xstrdup(u->space);
	checkpoint_seal(out);
	return SMR_OK;
}

/* With an explicit parent: the patch on that checkpoint, then a compare-and-swap on HEAD. */
static enum smr_rc update_on(struct update *u, const struct space *sp, const char *parent,
			     struct checkpoint *c, struct smr_err *err)
{
	struct checkpoint base = { 0 };
	char *hash = NULL, *lower = NULL;
	enum smr_rc rc = parent_arg(parent, &lower, err);

	if (!rc)
		rc = unique_hash(u->ctx, lower, &hash, err);
	if (!rc)
		rc = store_checkpoint_get(u->ctx->st, sp->id, hash, &base, err);
	if (rc == SMR_ENOTFOUND)
		rc = smr_errf(err, SMR_ECONFLICT,
			      "parent %s is not a checkpoint of '%s'; its HEAD is %s", parent,
			      sp->name, sp->head ? sp->head : "empty");
	if (!rc)
		rc = build_update(&base, c, u, err);
	/* the compare-and-swap on HEAD, with the store's stale-parent message */
	if (!rc)
		rc = store_checkpoint_put(u->ctx->st, sp->id, c, hash, err);
	checkpoint_release(&base);
	free(hash);
	free(lower);
	return rc;
}

/*
 * A patch without a parent on a Space a write of this process named
 * lately: no look-up before it (see write_remembered).  1 when it is done
 * (*rc its result), 0 when the caller must take the long way.
 */
static int update_remembered(struct update *u, const char *space, struct checkpoint *c,
			     enum smr_rc *rc, struct smr_err *err)
{
	struct ops_ctx *ctx = u->ctx;
	const struct space *sp = space_memo_find(&ctx->space, space);

	if (!sp)
		return 0;
	u->space = sp->name;
	*rc = store_checkpoint_update_checked(ctx->st, sp, space, build_update, u, c, err);
	if (*rc == SMR_ECONFLICT || *rc == SMR_ENOTFOUND) {
		space_memo_forget(&ctx->space, space, *rc == SMR_ENOTFOUND);
		u->space = NULL;
		checkpoint_release(c);
		checkpoint_init(c);
		return 0;
	}
	u->space = NULL;   /* the memory's, which the next line replaces */
	if (!*rc)
		remember_written(ctx, space, sp, c);
	return 1;
}

/* ops_checkpoint_update and ops_checkpoint_update_with, once u is filled. */
static enum smr_rc update(struct update *u, const char *space, const char *parent,
			  struct checkpoint *out, json_t **changes, struct smr_err *err)
{
	struct space sp = { 0 };
	struct checkpoint c;
	enum smr_rc rc;

	checkpoint_init(&c);
	if (parent || !update_remembered(u, space, &c, &rc, err)) {
		rc = store_space_get(u->ctx->st, space, &sp, err);
		if (!rc) {
			u->space = sp.name;
			if (parent)
				rc = update_on(u, &sp, parent, &c, err);
			else
				rc = store_checkpoint_update(u->ctx->st, sp.id, build_update, u, &c,
							     err);
		}
		if (!rc)
			remember_written(u->ctx, space, &sp, &c);
	}
	/* what was written is what the store reads back (the hash covers it) */
	if (!rc) {
		checkpoint_release(out);
		*out = c;
		checkpoint_init(&c);
	}
	if (!rc && changes)
		*changes = json_incref(u->changes);
	json_decref(u->changes);
	json_decref(u->made);
	checkpoint_release(&c);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_checkpoint_update(struct ops_ctx *ctx, const char *space, const json_t *patch,
				  const char *parent, const char *author,
				  struct checkpoint *out, json_t **changes, struct smr_err *err)
{
	struct update u = { .ctx = ctx, .patch = patch, .author = author };

	return update(&u, space, parent, out, changes, err);
}

enum smr_rc ops_checkpoint_update_with(struct ops_ctx *ctx, const char *space,
				       ops_patch_fn make, void *arg, const char *parent,
				       const char *author, struct checkpoint *out,
				       json_t **changes, struct smr_err *err)
{
	struct update u = { .ctx = ctx, .make = make, .make_arg = arg, .author = author };

	return update(&u, space, parent, out, changes, err);
}

/* Appends the first-parent chain from hash (until a checkpoint already in seen) to *v. */
static enum smr_rc add_chain(struct ops_ctx *ctx, const char *space_id, const char *hash,
			     size_t limit, json_t *seen, json_t *todo, struct checkpoint **v,
			     size_t *n, struct smr_err *err)
{
	struct checkpoint *chain = NULL;
	size_t len = 0, i;
	enum smr_rc rc = store_checkpoint_log(ctx->st, space_id, hash, limit, &chain, &len, err);

	for (i = 0; !rc && i < len && !json_object_get(seen, chain[i].hash); i++) {
		json_object_set_new(seen, chain[i].hash, json_true());
		if (chain[i].merge_parent_hash)
			json_array_append_new(todo, json_string(chain[i].merge_parent_hash));
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = chain[i];
		memset(&chain[i], 0, sizeof(chain[i]));
	}
	checkpoints_free(chain, len);
	return rc;
}

/* v in drawing order: children before parents, newest first (domain/graph.h). */
static void graph_sort(struct checkpoint *v, size_t n)
{
	struct graph_node *g = xcalloc(n + 1, sizeof(*g));
	size_t *order = xcalloc(n + 1, sizeof(*order));
	struct checkpoint *tmp = xcalloc(n + 1, sizeof(*tmp));

	for (size_t i = 0; i < n; i++) {
		g[i].hash = v[i].hash;
		g[i].parent = v[i].parent_hash;
		g[i].merge_parent = v[i].merge_parent_hash;
		g[i].created_at = v[i].created_at ? v[i].created_at : "";
	}
	graph_order(g, n, order);
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[order[i]];
	memcpy(v, tmp, n * sizeof(*v));
	free(tmp);
	free(order);
	free(g);
}

/*
 * The history of hash in space_id: the first-parent chain, or with
 * first_parent 0 every ancestor through both parents, in drawing order;
 * at most limit (0: all).
 */
static enum smr_rc history(struct ops_ctx *ctx, const char *space_id, const char *hash,
			   size_t limit, int first_parent, struct checkpoint **out, size_t *n,
			   struct smr_err *err)
{
	json_t *seen = json_object(), *todo = json_pack("[s]", hash);
	struct checkpoint *v = NULL;
	size_t len = 0;
	enum smr_rc rc = SMR_OK;

	if (first_parent) {
		json_decref(seen);
		json_decref(todo);
		return store_checkpoint_log(ctx->st, space_id, hash, limit, out, n, err);
	}
	while (!rc && json_array_size(todo)) {
		char *h = xstrdup(json_string_value(json_array_get(todo, 0)));

		json_array_remove(todo, 0);
		if (!json_object_get(seen, h))
			rc = add_chain(ctx, space_id, h, limit, seen, todo, &v, &len, err);
		free(h);
	}
	json_decref(seen);
	json_decref(todo);
	if (rc) {
		checkpoints_free(v, len);
		return rc;
	}
	graph_sort(v, len);
	while (limit && len > limit)
		checkpoint_release(&v[--len]);
	*out = v;
	*n = len;
	return SMR_OK;
}

enum smr_rc ops_space_log(struct ops_ctx *ctx, const char *space, size_t limit,
			  int first_parent, struct checkpoint **out, size_t *n,
			  struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = store_space_get(ctx->st, space, &sp, err);

	*out = NULL;
	*n = 0;
	if (!rc && sp.head)
		rc = history(ctx, sp.id, sp.head, limit, first_parent, out, n, err);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_log(struct ops_ctx *ctx, const char *ref, size_t limit, int first_parent,
		    struct checkpoint **out, size_t *n, struct smr_err *err)
{
	struct checkpoint tip = { 0 };
	char *space_id = NULL;
	enum smr_rc rc;

	/* the tip's hash and Space only: the log reads the tip itself */
	rc = resolve(ctx, NULL, ref, 0, &tip, &space_id, err);
	if (!rc)
		rc = history(ctx, space_id, tip.hash, limit, first_parent, out, n, err);
	checkpoint_release(&tip);
	free(space_id);
	return rc;
}

enum smr_rc ops_diff(struct ops_ctx *ctx, const char *ref_a, const char *ref_b, json_t **out,
		     struct smr_err *err)
{
	struct checkpoint a = { 0 }, b = { 0 };
	enum smr_rc rc;

	rc = ops_resolve(ctx, ref_a, &a, err);
	if (!rc)
		rc = ops_resolve(ctx, ref_b, &b, err);
	if (!rc)
		*out = checkpoint_diff(&a, &b);
	checkpoint_release(&a);
	checkpoint_release(&b);
	return rc;
}

enum smr_rc ops_restore(struct ops_ctx *ctx, const char *space, const char *ref,
			const char *author, struct checkpoint *out, struct smr_err *err)
{
	return ops_restore_on(ctx, space, ref, NULL, author, out, err);
}

enum smr_rc ops_restore_on(struct ops_ctx *ctx, const char *space, const char *ref,
			   const char *parent, const char *author, struct checkpoint *out,
			   struct smr_err *err)
{
	struct checkpoint src = { 0 }, c;
	struct space sp = { 0 };
	enum smr_rc rc;

	checkpoint_init(&c);
	rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc)
		rc = ops_resolve_in(ctx, sp.name, ref, &src, err);
	if (!rc) {
		checkpoint_copy_content(&c, &src);
		json_object_set_new(c.metadata, "restored_from", json_string(src.hash));
		/* a restore is the restorer's write, not the restored checkpoint's author's */
		free(c.author);
		c.author = author ? xstrdup(author) : NULL;
		rc = write_checkpoint(ctx, sp.id, &c, parent, out, err);
	}
	checkpoint_release(&src);
	checkpoint_release(&c);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_fork(struct ops_ctx *ctx, const char *ref, const char *new_space,
		     struct space *out, struct smr_err *err)
{
	struct checkpoint src = { 0 };
	struct space sp = { 0 };
	char id[37], now[32], *why = NULL, *from = NULL;
	enum smr_rc rc;

	rc = ops_check_space_name(new_space, err);
	if (!rc)   /* a fork needs the checkpoint's hash and its Space, not its content */
		rc = resolve(ctx, NULL, ref, 0, &src, &from, err);
	if (!rc) {
		ctx->new_id(id);
		ctx->now(now);
		sp.id = id;
		sp.name = (char *)new_space;
		sp.description = xasprintf("forked from %s at %.12s", src.space, src.hash);
		sp.created_at = now;
		why = xasprintf("fork: from %s at %.12s", src.space, src.hash);
		rc = store_space_fork(ctx->st, &sp, from, src.hash,
				      &(struct ref_move){ ops_actor(ctx), why, now,
							  ops_new_space_owner(ctx) }, err);
		free(why);
	}
	if (!rc) {   /* the Space as the fork wrote it: nothing to read back */
		ops_new_space_owned(ctx);
		*out = (struct space){ .id = xstrdup(id), .name = xstrdup(new_space),
				       .description = sp.description, .created_at = xstrdup(now),
				       .head = xstrdup(src.hash) };
		sp.description = NULL;
	}
	free(sp.description);
	free(from);
	checkpoint_release(&src);
	return rc;
}
