/*
 * ops_graph.c -- space.graph: the checkpoint graph of a Space as a history
 * view draws it, newest first, children before parents, a page at a time.
 *
 * The graph is what the HEADs of the Space and of its relatives reach (git
 * log --graph --branches): its family, the Spaces linked to it by forks
 * (forked from it, or it from them, through any number of forks).  Each
 * checkpoint is listed once with the family's Spaces whose HEAD reaches it,
 * those whose HEAD it is, and the checkpoint a restore brought back
 * (metadata.restored_from) so the view can link the two.
 *
 * A page costs what it shows, not what the history holds: row ids are
 * generation numbers (a parent is always inserted before its children), so
 * a walk that always takes the highest id left (a max-heap seeded with the
 * HEADs) lists children before parents and meets every checkpoint after
 * all of its children.  What is left in the heap after a page (a few
 * entries: one per lane) is where the next page starts: the answer carries
 * it as an opaque `cursor`, authenticated with a key of this process so a
 * client cannot start a walk at a checkpoint it may not read.  A cursor
 * this process did not make (another server, a restart, a family that
 * changed) falls back to walking again from the HEADs down to its last
 * checkpoint, as `after=HASH` does.  Read-only: it never writes.
 */
#include "domain/diff.h"
#include "ops/api.h"
#include "ops/context.h"
#include "ops/view.h"
#include "util/buf.h"
#include "util/hex.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAPH_PAGE_MAX 100000
#define MAC_BYTES 16
#define CURSOR_MAX 65536

/* One checkpoint waiting in the walk, with the family's Spaces that reach it. */
struct hent {
	int64_t id;
	uint8_t *bits;
};

struct walk {
	struct ops_ctx *ctx;
	const struct space **fam;    /* the family by Space id; borrowed */
	size_t nf, nb;               /* its size, and the bytes of a set of it */
	size_t self;                 /* the Space asked about, in fam */
	struct hent *h;              /* a max-heap by id */
	size_t n, cap;
	struct graph_row *ahead;     /* rows read ahead (store_graph_run), taken as used */
	size_t nahead;
};

/* How many rows of a line one read brings: a page of 400 is four round trips. */
#define READ_AHEAD 128

/* ---- the family: Spaces linked to the one asked about by forks ---- */

static int by_id(const void *a, const void *b)
{
	return strcmp((*(const struct space *const *)a)->id, (*(const struct space *const *)b)->id);
}

/* Grows set (ids as keys) by the fork pairs touching it, until none does. */
static void close_over_forks(json_t *set, char **pairs, size_t n)
{
	int grew = 1;

	while (grew) {
		grew = 0;
		for (size_t i = 0; i < n; i++) {
			int a = json_object_get(set, pairs[2 * i]) != NULL;
			int b = json_object_get(set, pairs[2 * i + 1]) != NULL;

			if (a == b)
				continue;
			json_object_set_new(set, pairs[2 * i + (a ? 1 : 0)], json_true());
			grew = 1;
		}
	}
}

/*
 * w->fam gets self's family, by id, w->self its place: the Spaces the
 * caller may read (*all, which the caller frees after the walk) linked to
 * it by forks.  A Space no fork touches is its own family, and no Space
 * is listed (10,000 of them cost 40-80 ms a page on PostgreSQL).
 */
static enum smr_rc family(struct walk *w, const struct space *self, struct space **all,
			  size_t *n_all, struct smr_err *err)
{
	char **pairs = NULL;
	size_t n = 0;
	json_t *set = json_object();
	enum smr_rc rc = store_space_forks(w->ctx->st, &pairs, &n, err);

	json_object_set_new(set, self->id, json_true());
	if (!rc)
		close_over_forks(set, pairs, n);
	if (!rc && json_object_size(set) > 1)
		rc = ops_space_list(w->ctx, all, n_all, err);
	w->fam = xcalloc(*n_all + 1, sizeof(*w->fam));
	for (size_t i = 0; !rc && i < *n_all; i++)
		if (json_object_get(set, (*all)[i].id) && strcmp((*all)[i].id, self->id))
			w->fam[w->nf++] = &(*all)[i];
	w->fam[w->nf++] = self;
	qsort(w->fam, w->nf, sizeof(*w->fam), by_id);
	for (size_t i = 0; i < w->nf; i++)
		if (w->fam[i] == self)
			w->self = i;
	w->nb = (w->nf + 7) / 8;
	for (size_t i = 0; i < 2 * n; i++)
		free(pairs[i]);
	free(pairs);
	json_decref(set);
	return rc;
}

/* A fingerprint of the family, so a cursor made for another one is not taken. */
static uint32_t family_print(const struct walk *w)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < w->nf; i++)
		for (const char *p = w->fam[i]->id;; p++) {
			h = (h ^ (uint8_t)*p) * 16777619u;
			if (!*p)
				break;
		}
	return h;
}

/* ---- the walk ---- */

static void sift_up(struct hent *h, size_t i)
{
	while (i && h[(i - 1) / 2].id < h[i].id) {
		struct hent t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void sift_down(struct hent *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct hent t;

		if (l < n && h[l].id > h[m].id)
			m = l;
		if (r < n && h[r].id > h[m].id)
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * Adds checkpoint id (none when < 0) reached by the Spaces of bits; one
 * already waiting takes them on (the heap holds a lane each: short).
 */
static void push(struct walk *w, int64_t id, const uint8_t *bits)
{
	if (id < 0)
		return;
	for (size_t i = 0; i < w->n; i++)
		if (w->h[i].id == id) {
			for (size_t b = 0; b < w->nb; b++)
				w->h[i].bits[b] |= bits[b];
			return;
		}
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->h = xrealloc(w->h, w->cap * sizeof(*w->h));
	}
	w->h[w->n].id = id;
	w->h[w->n].bits = xmalloc(w->nb);
	memcpy(w->h[w->n].bits, bits, w->nb);
	sift_up(w->h, w->n++);
}

/* Takes the newest waiting checkpoint into *e (the caller frees e->bits). */
static void pop(struct walk *w, struct hent *e)
{
	*e = w->h[0];
	w->h[0] = w->h[--w->n];
	sift_down(w->h, w->n, 0);
}

/* Seeds the walk with the family's HEADs. */
static enum smr_rc seed(struct walk *w, struct smr_err *err)
{
	uint8_t *bits = xcalloc(w->nb, 1);
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < w->nf; i++) {
		struct graph_row g;

		if (!w->fam[i]->head)
			continue;
		rc = store_graph_row(w->ctx->st, -1, w->fam[i]->head, &g, err);
		memset(bits, 0, w->nb);
		bits[i / 8] = (uint8_t)(1u << (i % 8));
		if (!rc)
			push(w, g.id, bits);
		graph_row_release(&g);
	}
	free(bits);
	return rc;
}

static void ahead_release(struct walk *w)
{
	for (size_t i = 0; i < w->nahead; i++)
		graph_row_release(&w->ahead[i]);
	free(w->ahead);
	w->ahead = NULL;
	w->nahead = 0;
}

/*
 * The graph row of id into *g, from the rows read ahead, else with those
 * of its first parents (a walk goes down a line), which replace them: on
 * PostgreSQL a row a read was most of a page's time.
 */
static enum smr_rc graph_row_at(struct walk *w, int64_t id, struct graph_row *g,
				struct smr_err *err)
{
	enum smr_rc rc;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < w->nahead; i++)
			if (w->ahead[i].id == id && w->ahead[i].hash) {
				*g = w->ahead[i];
				memset(&w->ahead[i], 0, sizeof(w->ahead[i]));
				return SMR_OK;
			}
		if (pass)
			break;
		ahead_release(w);
		rc = store_graph_run(w->ctx->st, id, READ_AHEAD, &w->ahead, &w->nahead, err);
		if (rc)
			return rc;
	}
	return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %lld", (long long)id);
}

/*
 * The next checkpoint of the walk into *g and its Spaces into *bits (the
 * caller frees both); its parents wait in turn.  SMR_ENOTFOUND when the
 * walk is over.
 */
static enum smr_rc step(struct walk *w, struct graph_row *g, uint8_t **bits,
			struct smr_err *err)
{
	struct hent e;
	enum smr_rc rc;

	memset(g, 0, sizeof(*g));
	*bits = NULL;
	if (!w->n)
		return SMR_ENOTFOUND;
	pop(w, &e);
	rc = graph_row_at(w, e.id, g, err);
	if (!rc) {
		push(w, g->parent_id, e.bits);
		push(w, g->merge_id, e.bits);
		*bits = e.bits;
	} else {
		free(e.bits);
	}
	return rc;
}

static void walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->h[i].bits);
	free(w->h);
	free(w->fam);
	ahead_release(w);
}

/* Walks past checkpoint `after`: SMR_ENOTFOUND when the graph has none. */
static enum smr_rc skip_to(struct walk *w, const char *after, struct smr_err *err)
{
	for (;;) {
		struct graph_row g;
		uint8_t *bits;
		enum smr_rc rc = step(w, &g, &bits, err);
		int found = !rc && !strcmp(g.hash, after);

		graph_row_release(&g);
		free(bits);
		if (rc || found)
			return rc;
	}
}

/* ---- the cursor: "LAST.FAMILY.ID-BITS_ID-BITS.MAC", all unreserved URL characters ---- */

static uint8_t mac_key[32];
static pthread_once_t mac_once = PTHREAD_ONCE_INIT;

static void mac_init(void)
{
	sys_random(mac_key, sizeof(mac_key));
}

static void mac_of(const char *text, size_t len, char out[2 * MAC_BYTES + 1])
{
	struct hmac_sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];

	pthread_once(&mac_once, mac_init);
	hmac_sha256_set_key(&h, sizeof(mac_key), mac_key);
	hmac_sha256_update(&h, len, (const uint8_t *)text);
	hmac_sha256_digest(&h, sizeof(d), d);
	hex_encode(d, MAC_BYTES, out);
}

/* The cursor of what is left of w after checkpoint last; caller frees. */
static char *cursor_make(const struct walk *w, const char *last)
{
	struct buf b = BUF_INIT(0);
	char *hex = xmalloc(2 * w->nb + 1), mac[2 * MAC_BYTES + 1];

	buf_addf(&b, "%s.%08x.", last, family_print(w));
	for (size_t i = 0; i < w->n; i++) {
		hex_encode(w->h[i].bits, w->nb, hex);
		buf_addf(&b, "%s%lld-%s", i ? "_" : "", (long long)w->h[i].id, hex);
	}
	mac_of(b.ptr, b.len, mac);
	buf_addf(&b, ".%s", mac);
	free(hex);
	return buf_detach(&b, NULL);
}

/* Reads one "ID-BITS" of a cursor into the walk; 0 if it is not one. */
static int cursor_entry(struct walk *w, const char *s, size_t len)
{
	const char *dash = memchr(s, '-', len);
	uint8_t *bits;
	char *end;
	long long id;
	int ok;

	if (!dash || dash == s || (size_t)(s + len - (dash + 1)) != 2 * w->nb)
		return 0;
	id = strtoll(s, &end, 10);
	if (end != dash || id < 0)
		return 0;
	bits = xmalloc(w->nb + 1);
	ok = !hex_decode(dash + 1, w->nb, bits);
	if (ok)
		push(w, id, bits);
	free(bits);
	return ok;
}

/*
 * Starts w where cursor c says.  *last gets the cursor's last checkpoint
 * (borrowed from c) when the rest cannot be taken (not made by this
 * process for this family): the caller walks again past it.
 */
static enum smr_rc cursor_take(struct walk *w, char *c, const char **last, struct smr_err *err)
{
	char *p1 = strchr(c, '.'), *p2 = p1 ? strchr(p1 + 1, '.') : NULL;
	char *p3 = p2 ? strchr(p2 + 1, '.') : NULL, fam[16], mac[2 * MAC_BYTES + 1];
	int ok;

	*last = NULL;
	if (!p3 || p1 == c || strchr(p3 + 1, '.'))
		return smr_errf(err, SMR_EINVAL, "the cursor is not one this server gave;"
				" start again from the first page");
	mac_of(c, (size_t)(p3 - c), mac);
	snprintf(fam, sizeof(fam), "%08x", family_print(w));
	ok = strlen(p3 + 1) == 2 * MAC_BYTES && memeql_sec(mac, p3 + 1, 2 * MAC_BYTES) &&
	     (size_t)(p2 - p1 - 1) == strlen(fam) && !memcmp(p1 + 1, fam, strlen(fam));
	for (char *s = p2 + 1; ok && s < p3;) {
		char *e = memchr(s, '_', (size_t)(p3 - s));

		if (!e)
			e = p3;
		ok = cursor_entry(w, s, (size_t)(e - s));
		s = e + 1;
	}
	if (ok)
		return SMR_OK;
	for (size_t i = 0; i < w->n; i++)
		free(w->h[i].bits);
	w->n = 0;
	*p1 = '\0';
	*last = c;
	return SMR_OK;
}

/* ---- a page ---- */

/* {hash: [names of the Spaces whose HEAD it is]} of every Space listed. */
/*
 * Sets each node's "heads": the Spaces the caller may read whose HEAD it
 * is (any Space: one that fast-forwarded onto the line is no fork of it),
 * read for the page's hashes only.
 */
static enum smr_rc add_heads(struct ops_ctx *ctx, const struct graph_row *rows, json_t *nodes,
			     struct smr_err *err)
{
	size_t n = json_array_size(nodes), ns = 0;
	const char **hashes = xcalloc(n + 1, sizeof(*hashes));
	struct space *v = NULL;
	enum smr_rc rc;

	for (size_t i = 0; i < n; i++)
		hashes[i] = rows[i].hash;
	rc = n ? ops_space_heads_at(ctx, hashes, n, &v, &ns, err) : SMR_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		json_t *names = json_object_get(json_array_get(nodes, i), "heads");

		for (size_t k = 0; k < ns; k++)
			if (!strcmp(v[k].head, rows[i].hash))
				json_array_append_new(names, json_string(v[k].name));
	}
	spaces_free(v, ns);
	free(hashes);
	return rc;
}

static int has(const uint8_t *bits, size_t i)
{
	return (bits[i / 8] >> (i % 8)) & 1;
}

/* A node of the page; its "heads" are added with the page's (add_heads). */
static json_t *node_json(const struct walk *w, const struct graph_row *g, const uint8_t *bits)
{
	json_t *spaces = json_array(), *o;

	for (size_t i = 0; i < w->nf; i++)
		if (has(bits, i))
			json_array_append_new(spaces, json_string(w->fam[i]->name));
	o = json_pack("{s:s, s:s?, s:s, s:s, s:s, s:o, s:o, s:b}", "hash", g->hash,
		      "parent", g->parent, "title", g->title ? g->title : "", "author",
		      g->author ? g->author : "", "created_at", g->created_at, "spaces", spaces,
		      "heads", json_array(), "own", has(bits, w->self));
	if (g->merge_parent)
		json_object_set_new(o, "merge_parent", json_string(g->merge_parent));
	if (g->restored_from)
		json_object_set_new(o, "restored_from", json_string(g->restored_from));
	return o;
}

/*
 * add_changes' reads: the page's checkpoints and their first parents in one
 * list for store_checkpoints_each, a row's own entry just before its
 * parent's (a parent that is the next row, as it mostly is on a page newest
 * first, listed once, as that row's own), so that only the entry before
 * the one at hand is kept.
 */
struct changes_walk {
	const struct graph_row *rows;
	json_t *nodes;
	size_t n, next;            /* rows; the first row not done yet */
	size_t *own, *parent;      /* per row: its entry, its parent's (SIZE_MAX: a root) */
	struct checkpoint prev;    /* the entry before the one at hand (hash NULL: not read) */
};

static int changes_take(size_t i, struct checkpoint *c, void *arg)
{
	struct changes_walk *w = arg;

	for (; w->next < w->n; w->next++) {
		size_t r = w->next;
		json_t *node = json_array_get(w->nodes, r);

		if (w->parent[r] == SIZE_MAX && w->own[r] == i) {
			if (c)
				json_object_set_new(node, "changes",
						    checkpoint_diff_counts(NULL, c));
		} else if (w->parent[r] == i) {   /* its own entry is the one before */
			if (c && w->prev.hash)
				json_object_set_new(node, "changes",
						    checkpoint_diff_counts(c, &w->prev));
		} else {
			break;
		}
	}
	checkpoint_release(&w->prev);
	if (c) {
		w->prev = *c;
		memset(c, 0, sizeof(*c));
	}
	return w->next == w->n;
}

/*
 * Adds "changes" (checkpoint_diff_counts against the first parent) to each
 * node of the page.  A node whose checkpoint or parent cannot be read
 * gets none.
 */
static void add_changes(struct ops_ctx *ctx, const struct graph_row *rows, json_t *nodes)
{
	size_t n = json_array_size(nodes), k = 0;
	const char **list = xmalloc((2 * n + 1) * sizeof(*list));
	struct changes_walk w = { .rows = rows, .nodes = nodes, .n = n,
				  .own = xmalloc((n + 1) * sizeof(size_t)),
				  .parent = xmalloc((n + 1) * sizeof(size_t)) };

	for (size_t r = 0; r < n; r++) {
		if (k && !strcmp(list[k - 1], rows[r].hash)) {
			w.own[r] = k - 1;
		} else {
			list[k] = rows[r].hash;
			w.own[r] = k++;
		}
		w.parent[r] = SIZE_MAX;
		if (rows[r].parent) {
			list[k] = rows[r].parent;
			w.parent[r] = k++;
		}
	}
	if (n)
		store_checkpoints_each(ctx->st, list, k, changes_take, &w, NULL);
	checkpoint_release(&w.prev);
	free(w.own);
	free(w.parent);
	free(list);
}

/* Up to limit (0: all) nodes of the walk into nodes, their rows into *rows. */
static enum smr_rc fill(struct walk *w, size_t limit, json_t *nodes, struct graph_row **rows,
			struct smr_err *err)
{
	size_t cap = 0, n = 0;
	enum smr_rc rc = SMR_OK;

	*rows = NULL;
	while (!rc && w->n && (!limit || n < limit)) {
		uint8_t *bits;

		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*rows = xrealloc(*rows, cap * sizeof(**rows));
		}
		rc = step(w, &(*rows)[n], &bits, err);
		if (!rc)
			json_array_append_new(nodes, node_json(w, &(*rows)[n++], bits));
		free(bits);
	}
	return rc;
}

/* The answer: the page's nodes, and where the next one starts (none: null). */
static json_t *answer(struct ops_ctx *ctx, struct walk *w, const char *space, json_t *nodes,
		      struct graph_row *rows, int changes)
{
	size_t n = json_array_size(nodes);
	const char *last = n && w->n ? rows[n - 1].hash : NULL;
	char *cursor = last ? cursor_make(w, last) : NULL;
	json_t *out;

	if (changes)
		add_changes(ctx, rows, nodes);
	out = json_pack("{s:s, s:o, s:s?, s:s?}", "space", space, "nodes", nodes, "next", last,
			"cursor", cursor);
	free(cursor);
	return out;
}

/* Starts the walk: at cursor, else past `after`, else at the HEADs. */
static enum smr_rc start(struct walk *w, const char *after, const char *cursor,
			 const char *space, struct smr_err *err)
{
	char *c = cursor ? xstrdup(cursor) : NULL;
	const char *last = after;
	enum smr_rc rc = SMR_OK;

	if (c && strlen(c) > CURSOR_MAX)
		rc = smr_errf(err, SMR_EINVAL, "the cursor is not one this server gave;"
			      " start again from the first page");
	if (!rc && c)
		rc = cursor_take(w, c, &last, err);
	if (!rc && (!c || last))
		rc = seed(w, err);
	if (!rc && last) {
		rc = skip_to(w, last, err);
		if (rc == SMR_ENOTFOUND)
			rc = smr_errf(err, rc, "checkpoint '%s' is not in the history of space '%s'",
				      last, space);
	}
	free(c);
	return rc;
}

enum smr_rc ops_space_graph(struct ops_ctx *ctx, const char *space, const char *after,
			    const char *cursor, size_t limit, int changes, json_t **out,
			    struct smr_err *err)
{
	struct walk w = { .ctx = ctx };
	struct space self = { 0 }, *all = NULL;
	struct graph_row *rows = NULL;
	json_t *nodes = json_array();
	size_t n_all = 0;
	enum smr_rc rc;

	rc = store_space_get(ctx->st, space, &self, err);
	if (!rc)
		rc = family(&w, &self, &all, &n_all, err);
	if (!rc)
		rc = start(&w, after, cursor, self.name, err);
	if (!rc)
		rc = fill(&w, limit, nodes, &rows, err);
	if (!rc)
		rc = add_heads(ctx, rows, nodes, err);
	if (!rc)
		*out = answer(ctx, &w, self.name, json_incref(nodes), rows, changes);
	for (size_t i = 0; rows && i < json_array_size(nodes); i++)
		graph_row_release(&rows[i]);
	free(rows);
	json_decref(nodes);
	walk_release(&w);
	spaces_free(all, n_all);
	space_release(&self);
	return rc;
}

enum smr_rc ops_api_space_graph(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	const char *space, *after, *cursor;
	long long limit = 0;
	int changes = 0;
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "after", 0, &after, err);
	if (!rc)
		rc = api_str(p, "cursor", 0, &cursor, err);
	if (!rc)
		rc = api_int(p, "limit", 0, GRAPH_PAGE_MAX, &limit, err);
	if (!rc)
		rc = api_bool(p, "changes", &changes, err);
	if (!rc)
		rc = ops_space_graph(ctx, space, after, cursor, (size_t)limit, changes, result,
				     err);
	return rc;
}
