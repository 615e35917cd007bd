/*
 * ops_blame.c -- blame: for every item of a checkpoint, the checkpoint that
 * introduced it, with its author and time and, for a drafted checkpoint,
 * the session and turns it was drafted from.
 *
 * An item (one decision, task, entity, artifact, the title, the summary)
 * is followed back through every parent that still has it (same field,
 * same text): the first parent, then a merge's second parent, then the
 * checkpoint a restore brought back.  Where no parent has it, it was
 * introduced.  So an item a restore brought back is blamed on whoever
 * wrote it first, and one that came in through a merge on the other line.
 * Checkpoints are read in runs of the first-parent log and kept in a hash
 * table for the walk.
 *
 * What a signed-in caller may not read stays hidden.  A merge copies the
 * merged line into the Space (fork and merge copy history), so what came
 * in through a merge is part of the Space's own history and shows as it
 * is.  A restore, though, may bring back a checkpoint of another Space,
 * found by hash anywhere: when no Space holding it is readable by the
 * caller, the walk stops there and the item is blamed on that checkpoint
 * by hash only (the restored checkpoint's metadata shows that hash
 * already), "hidden": true, without its title, author, time or source,
 * and without walking on into a history the caller cannot see.
 */
#include "domain/checkpoint.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/strmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define PREFETCH 256          /* first-parent ancestors read at once */
#define WALK_MAX 10000000     /* steps of one item's walk; a DAG never needs more */

struct node {
	struct checkpoint c;
	struct search_item *items;
	size_t n_items;
	int hidden;               /* in no Space the caller can read: not shown, not walked past */
};

struct walk {
	struct ops_ctx *ctx;
	const char *space_id;
	struct strmap at;         /* hash -> index in nodes */
	struct node **nodes;      /* each its own allocation: pointers to them stay valid */
	size_t n, cap;
};

static struct node *lookup(const struct walk *w, const char *hash)
{
	size_t i;

	return strmap_get(&w->at, hash, &i) ? w->nodes[i] : NULL;
}

/* Takes c (moved into the table) unless its hash is there; returns the node. */
static struct node *keep(struct walk *w, struct checkpoint *c)
{
	struct node *nd = lookup(w, c->hash);

	if (nd) {
		checkpoint_release(c);
		return nd;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->nodes = xrealloc(w->nodes, w->cap * sizeof(*w->nodes));
	}
	nd = xcalloc(1, sizeof(*nd));
	nd->c = *c;
	memset(c, 0, sizeof(*c));
	nd->n_items = store_search_items(&nd->c, &nd->items);
	strmap_put(&w->at, nd->c.hash, w->n);
	w->nodes[w->n++] = nd;
	return nd;
}

static void walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		checkpoint_release(&w->nodes[i]->c);
		store_search_items_free(w->nodes[i]->items, w->nodes[i]->n_items);
		free(w->nodes[i]);
	}
	free(w->nodes);
	strmap_release(&w->at);
}

/* The checkpoint hash, read with a run of its first-parent ancestors; NULL if absent. */
static struct node *load(struct walk *w, const char *hash)
{
	struct checkpoint *run = NULL;
	struct node *nd = lookup(w, hash);
	size_t n = 0;

	if (nd)
		return nd;
	if (store_checkpoint_log(w->ctx->st, w->space_id, hash, PREFETCH, &run, &n, NULL) || !n) {
		struct checkpoint one = { 0 };

		/* a restore may name a checkpoint of another Space */
		if (store_checkpoint_get(w->ctx->st, NULL, hash, &one, NULL))
			return NULL;
		nd = keep(w, &one);      /* new: load() looked it up first */
		nd->hidden = !ops_hash_readable(w->ctx, hash);
		return nd;
	}
	for (size_t i = 0; i < n; i++)
		keep(w, &run[i]);
	free(run);
	return lookup(w, hash);
}

static int has_item(const struct node *nd, const struct search_item *it)
{
	for (size_t i = 0; i < nd->n_items; i++)
		if (!strcmp(nd->items[i].field, it->field) && !strcmp(nd->items[i].text, it->text))
			return 1;
	return 0;
}

/* The checkpoint that introduced item `it` of node `from`. */
static const struct node *introducer(struct walk *w, const struct node *from,
				     const struct search_item *it)
{
	const struct node *cur = from;

	for (long step = 0; step < WALK_MAX; step++) {
		const char *parents[3] = {
			cur->c.parent_hash, cur->c.merge_parent_hash,
			json_string_value(json_object_get(cur->c.metadata, "restored_from")),
		};
		const struct node *next = NULL;

		for (size_t i = 0; i < 3 && !next; i++) {
			struct node *p = parents[i] ? load(w, parents[i]) : NULL;

			if (p && has_item(p, it))
				next = p;
		}
		if (!next || next->hidden)
			return next ? next : cur;
		cur = next;
	}
	return cur;
}

/* {session_id, first_seq, last_seq} of a drafted checkpoint, or null. */
static json_t *source_of(const struct checkpoint *c)
{
	const json_t *d = json_object_get(c->metadata, "draft");
	const json_t *range = json_object_get(d, "turn_range");

	if (!json_is_string(json_object_get(d, "session_id")))
		return json_null();
	return json_pack("{s:O, s:O, s:O}", "session_id", json_object_get(d, "session_id"),
			 "first_seq", json_object_get(range, "first_seq") ?: json_null(),
			 "last_seq", json_object_get(range, "last_seq") ?: json_null());
}

static json_t *item_json(const struct node *top, const struct search_item *it,
			 const struct node *by)
{
	if (by->hidden)
		return json_pack("{s:s, s:I, s:s, s:b, s:{s:s, s:n, s:b}}", "field", it->field,
				 "ordinal", (json_int_t)it->ordinal, "text", it->text, "here", 0,
				 "introduced", "commit_hash", by->c.hash, "source", "hidden", 1);
	return json_pack("{s:s, s:I, s:s, s:b, s:{s:s, s:s, s:s, s:s, s:o}}", "field", it->field,
			 "ordinal", (json_int_t)it->ordinal, "text", it->text, "here", by == top,
			 "introduced", "commit_hash", by->c.hash, "title",
			 by->c.title ? by->c.title : "", "author", by->c.author ? by->c.author : "",
			 "created_at", by->c.created_at, "source", source_of(&by->c));
}

enum smr_rc ops_blame(struct ops_ctx *ctx, const char *ref, json_t **out, struct smr_err *err)
{
	struct checkpoint c = { 0 };
	struct space sp = { 0 };
	struct walk w = { ctx, NULL, STRMAP_INIT, NULL, 0, 0 };
	struct node *top;
	json_t *items;
	enum smr_rc rc = ops_resolve(ctx, ref, &c, err);

	if (!rc)
		rc = store_space_find(ctx->st, c.space, &sp, err);
	if (rc) {
		checkpoint_release(&c);
		return rc;
	}
	w.space_id = sp.id;
	top = keep(&w, &c);
	items = json_array();
	for (size_t i = 0; i < top->n_items; i++)
		json_array_append_new(items, item_json(top, &top->items[i],
						       introducer(&w, top, &top->items[i])));
	*out = json_pack("{s:s, s:s, s:o}", "commit_hash", top->c.hash, "space", sp.name,
			 "items", items);
	walk_release(&w);
	space_release(&sp);
	return SMR_OK;
}
