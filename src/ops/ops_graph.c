/*
 * ops_graph.c -- space.graph: the checkpoint graph of a Space as a history
 * view draws it, newest first, children before parents.
 *
 * A Space's own history is a line (HEAD moves by compare-and-swap), so the
 * lanes come from its relatives: Spaces forked from it, or that it was
 * forked from, share its root checkpoint (a fork copies the ancestry with
 * the same hashes).  The graph is the union of their checkpoints, each
 * listed once with the Spaces that hold it and those whose HEAD it is, and
 * with the checkpoint a restore brought back (metadata.restored_from) so the
 * view can link the two.  Read-only: it never writes.
 */
#include "domain/diff.h"
#include "domain/graph.h"
#include "ops/api.h"
#include "ops/context.h"
#include "ops/view.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_PAGE_MAX 100000

struct gnode {
	struct graph_node g;
	char *title, *author, *restored_from;
	const char *space;           /* borrowed from the spaces array */
	const char *space_id;        /* borrowed too: where to read it back */
	int own;                     /* 1 when it is in the Space asked about */
};

struct gcollect {
	struct gnode *v;
	size_t n, cap;
	const char *space, *space_id;
	int own;
	char *root;                  /* first checkpoint of the Space asked about */
};

static int collect_one(const struct checkpoint *c, int parent_missing, void *arg)
{
	struct gcollect *gc = arg;
	const char *rf = json_string_value(json_object_get(c->metadata, "restored_from"));
	struct gnode *x;

	(void)parent_missing;
	if (gc->n == gc->cap) {
		gc->cap = gc->cap ? gc->cap * 2 : 256;
		gc->v = xrealloc(gc->v, gc->cap * sizeof(*gc->v));
	}
	x = &gc->v[gc->n++];
	x->g.hash = xstrdup(c->hash);
	x->g.parent = xstrdup(c->parent_hash);
	x->g.merge_parent = xstrdup(c->merge_parent_hash);
	x->g.created_at = xstrdup(c->created_at);
	x->title = xstrdup(c->title ? c->title : "");
	x->author = xstrdup(c->author ? c->author : "");
	x->restored_from = xstrdup(rf);
	x->space = gc->space;
	x->space_id = gc->space_id;
	x->own = gc->own;
	if (gc->own && !gc->root)
		gc->root = xstrdup(c->hash);
	return 0;
}

static void gnode_release(struct gnode *x)
{
	free((char *)x->g.hash);
	free((char *)x->g.parent);
	free((char *)x->g.merge_parent);
	free((char *)x->g.created_at);
	free(x->title);
	free(x->author);
	free(x->restored_from);
}

/* 1 if Space sp holds the root checkpoint of the Space asked about. */
static int related(struct ops_ctx *ctx, const struct space *sp, const char *root)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = store_checkpoint_get(ctx->st, sp->id, root, &c, NULL);

	checkpoint_release(&c);
	return rc == SMR_OK;
}

/* Scans the Space asked about, then every relative, into gc. */
static enum smr_rc collect(struct ops_ctx *ctx, const struct space *self, struct space *all,
			   size_t n_all, struct gcollect *gc, struct smr_err *err)
{
	enum smr_rc rc;

	gc->space = self->name;
	gc->space_id = self->id;
	gc->own = 1;
	rc = store_checkpoint_scan(ctx->st, self->id, collect_one, gc, err);
	gc->own = 0;
	for (size_t i = 0; !rc && gc->root && i < n_all; i++) {
		if (!strcmp(all[i].id, self->id) || !related(ctx, &all[i], gc->root))
			continue;
		gc->space = all[i].name;
		gc->space_id = all[i].id;
		rc = store_checkpoint_scan(ctx->st, all[i].id, collect_one, gc, err);
	}
	return rc;
}

static int by_hash(const void *a, const void *b)
{
	return strcmp(((const struct gnode *)a)->g.hash, ((const struct gnode *)b)->g.hash);
}

static json_t *names_holding(const struct gnode *v, size_t from, size_t to)
{
	json_t *a = json_array();

	for (size_t i = from; i < to; i++)
		json_array_append_new(a, json_string(v[i].space));
	return a;
}

static json_t *heads_at(const char *hash, const struct space *all, size_t n_all)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n_all; i++)
		if (all[i].head && !strcmp(all[i].head, hash))
			json_array_append_new(a, json_string(all[i].name));
	return a;
}

static json_t *node_json(const struct gnode *x, json_t *spaces, json_t *heads, int own)
{
	json_t *o = json_pack("{s:s, s:s?, s:s, s:s, s:s, s:o, s:o, s:b}", "hash", x->g.hash,
			      "parent", x->g.parent, "title", x->title, "author", x->author,
			      "created_at", x->g.created_at, "spaces", spaces, "heads", heads,
			      "own", own);

	if (x->g.merge_parent)
		json_object_set_new(o, "merge_parent", json_string(x->g.merge_parent));
	if (x->restored_from)
		json_object_set_new(o, "restored_from", json_string(x->restored_from));
	return o;
}

/*
 * Folds copies of one hash (one per Space holding it) into the first,
 * leaving v[0..*n) distinct; docs[i] gets node i's document.
 */
static json_t **fold(struct gnode *v, size_t *n, const struct space *all, size_t n_all)
{
	json_t **docs = xcalloc(*n + 1, sizeof(*docs));
	size_t out = 0, i = 0, j;

	if (*n)
		qsort(v, *n, sizeof(*v), by_hash);
	while (i < *n) {
		int own = 0;

		for (j = i; j < *n && !strcmp(v[j].g.hash, v[i].g.hash); j++)
			own |= v[j].own;
		docs[out] = node_json(&v[i], names_holding(v, i, j), heads_at(v[i].g.hash, all, n_all),
				      own);
		for (size_t k = i + 1; k < j; k++)
			gnode_release(&v[k]);
		if (out != i)
			v[out] = v[i];
		out++;
		i = j;
	}
	*n = out;
	return docs;
}

/* The distinct node with this hash (v sorted by hash), or NULL. */
static const struct gnode *node_of(const struct gnode *v, size_t n, const char *hash)
{
	struct gnode key = { .g.hash = hash };

	return hash ? bsearch(&key, v, n, sizeof(*v), by_hash) : NULL;
}

/*
 * Reads node x into *c, reusing *cache when it is x already (the page is
 * newest first, so a node's parent is mostly the next row).
 */
static enum smr_rc read_node(struct ops_ctx *ctx, const struct gnode *x, struct checkpoint *cache,
			     struct checkpoint *c)
{
	if (cache->hash && !strcmp(cache->hash, x->g.hash)) {
		*c = *cache;
		memset(cache, 0, sizeof(*cache));
		return SMR_OK;
	}
	return store_checkpoint_get(ctx->st, x->space_id, x->g.hash, c, NULL);
}

/*
 * Adds "changes" (checkpoint_diff_counts against the first parent) to the
 * documents of the page's nodes: two reads per row at most, one mostly, so
 * a page costs what it shows, not what the history holds.  A node whose
 * parent cannot be read gets none.
 */
static void add_changes(struct ops_ctx *ctx, const struct gnode *v, json_t **docs, size_t n,
			const size_t *rows, size_t nrows)
{
	struct checkpoint cache = { 0 };

	for (size_t i = 0; i < nrows; i++) {
		const struct gnode *x = &v[rows[i]], *p = node_of(v, n, x->g.parent);
		struct checkpoint c = { 0 }, pc = { 0 };

		if (read_node(ctx, x, &cache, &c) == SMR_OK &&
		    (!x->g.parent || (p && read_node(ctx, p, &cache, &pc) == SMR_OK)))
			json_object_set_new(docs[rows[i]], "changes",
					    checkpoint_diff_counts(x->g.parent ? &pc : NULL, &c));
		checkpoint_release(&c);
		checkpoint_release(&cache);
		cache = pc;              /* the parent is likely the next row */
	}
	checkpoint_release(&cache);
}

/*
 * The page of nodes after `after` (or from the start), at most limit (0:
 * all), with each row's changes when asked; NULL when `after` is not in the
 * graph.
 */
static json_t *page(struct ops_ctx *ctx, struct gnode *v, json_t **docs, size_t n,
		    const char *after, size_t limit, int changes, const char *space)
{
	struct graph_node *g = xcalloc(n + 1, sizeof(*g));
	size_t *order = xcalloc(n + 1, sizeof(*order)), start = 0, end;
	json_t *nodes = json_array(), *out;

	for (size_t i = 0; i < n; i++)
		g[i] = v[i].g;
	graph_order(g, n, order);
	for (size_t i = 0; after && i < n; i++)
		if (!strcmp(v[order[i]].g.hash, after))
			start = i + 1;
	if (after && !start) {
		free(order);
		free(g);
		json_decref(nodes);
		return NULL;
	}
	end = limit && n - start > limit ? start + limit : n;
	if (changes)
		add_changes(ctx, v, docs, n, order + start, end - start);
	for (size_t i = start; i < end; i++)
		json_array_append(nodes, docs[order[i]]);
	out = json_pack("{s:s, s:I, s:o, s:s?}", "space", space, "total", (json_int_t)n,
			"nodes", nodes, "next", end < n ? v[order[end - 1]].g.hash : NULL);
	free(order);
	free(g);
	return out;
}

enum smr_rc ops_space_graph(struct ops_ctx *ctx, const char *space, const char *after,
			    size_t limit, int changes, json_t **out, struct smr_err *err)
{
	struct gcollect gc = { 0 };
	struct space self = { 0 }, *all = NULL;
	size_t n_all = 0;
	json_t **docs = NULL;
	enum smr_rc rc;

	rc = store_space_get(ctx->st, space, &self, err);
	if (!rc)
		rc = ops_space_list(ctx, &all, &n_all, err);
	if (!rc)
		rc = collect(ctx, &self, all, n_all, &gc, err);
	if (!rc) {
		docs = fold(gc.v, &gc.n, all, n_all);
		*out = page(ctx, gc.v, docs, gc.n, after, limit, changes, self.name);
		if (!*out)
			rc = smr_errf(err, SMR_ENOTFOUND, "checkpoint '%s' is not in the history of"
				      " space '%s'", after, self.name);
	}
	for (size_t i = 0; i < gc.n; i++) {
		gnode_release(&gc.v[i]);
		if (docs)
			json_decref(docs[i]);
	}
	free(docs);
	free(gc.v);
	free(gc.root);
	spaces_free(all, n_all);
	space_release(&self);
	return rc;
}

enum smr_rc ops_api_space_graph(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	const char *space, *after;
	long long limit = 0;
	int changes = 0;
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "after", 0, &after, err);
	if (!rc)
		rc = api_int(p, "limit", 0, GRAPH_PAGE_MAX, &limit, err);
	if (!rc)
		rc = api_bool(p, "changes", &changes, err);
	if (!rc)
		rc = ops_space_graph(ctx, space, after, (size_t)limit, changes, result, err);
	return rc;
}
