/*
 * ops_search.c -- full-text search over what checkpoints introduced (and,
 * asked, over chat turns): the store finds the items holding every word,
 * domain/search.c checks phrases and ranks them, and this file groups an
 * item's copies, says where it first appeared and whether HEAD still
 * holds it, and cuts the snippets.  Forks share history, so one
 * checkpoint can be held by several Spaces: the store finds its items once,
 * each naming every searched Space that holds it, and each is ranked once
 * and shown as one result.
 */
#include "domain/ref.h"
#include "domain/search.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/buf.h"
#include "util/strmap.h"
#include "util/terms.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SEARCH_CANDIDATES 5000   /* rows read from the store, indexed last first */
#define SEARCH_LIMIT_DEFAULT 20
#define SNIPPET_BYTES 160

static const char *const fields[] = {
	"title", "summary", "decisions", "assumptions", "tasks", "open_questions", "entities",
	"artifacts", "turn", NULL,
};

/*
 * One item found: the rows of its copies (same field and words, in
 * checkpoints one Space wrote; a turn is its own).
 */
struct hit {
	size_t newest, oldest;   /* rows */
	double score;
};

/*
 * Resolves the Space filter to ids (*n of them); *ids NULL when there is
 * none.  A signed-in caller only ever searches the Spaces it may read: a
 * Space it names that it cannot read is not there (ops_need_space), and
 * no filter means every Space it can read (ops_space_list).
 */
static enum smr_rc space_ids(struct ops_ctx *ctx, const struct search_params *p, char ***ids,
			     size_t *n, struct smr_err *err)
{
	struct space sp = { 0 }, *all = NULL;
	size_t nall = 0;
	enum smr_rc rc = SMR_OK;

	*ids = NULL;
	*n = 0;
	if (!p->spaces && !ops_restricted(ctx))
		return SMR_OK;
	if (!p->spaces) {
		rc = ops_space_list(ctx, &all, &nall, err);
		*ids = xcalloc(nall + 1, sizeof(**ids));
		for (size_t i = 0; !rc && i < nall; i++) {
			(*ids)[i] = all[i].id;
			all[i].id = NULL;
		}
		*n = rc ? 0 : nall;
		spaces_free(all, nall);
		return rc;
	}
	*ids = xcalloc(p->n_spaces + 1, sizeof(**ids));
	for (size_t i = 0; !rc && i < p->n_spaces; i++) {
		rc = ops_need_space(ctx, p->spaces[i], ROLE_READER, &sp, err);
		if (!rc) {
			(*ids)[i] = sp.id;
			sp.id = NULL;
		}
		space_release(&sp);
	}
	*n = p->n_spaces;
	return rc;
}

static void free_ids(char **ids)
{
	for (size_t i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}

/* A DATE filter into out (NULL text: left ""); since counts from its second's first instant. */
static enum smr_rc parse_bound(const char *text, const char *now, int from_start, char out[32],
			       struct smr_err *err)
{
	enum smr_rc rc;

	if (!text)
		return SMR_OK;
	rc = ref_parse_date(text, now, out, err);
	if (!rc && from_start)
		memcpy(out + 20, "000000Z", 8);
	return rc;
}

static enum smr_rc check_filters(struct ops_ctx *ctx, const struct search_params *p,
				 char since[32], char until[32], struct smr_err *err)
{
	char now[32];
	int known = !p->field;
	enum smr_rc rc;

	for (size_t i = 0; !known && fields[i]; i++)
		known = !strcmp(fields[i], p->field);
	if (!known)
		return smr_errf(err, SMR_EINVAL, "unknown field '%s' (title, summary, decisions,"
				" assumptions, tasks, open_questions, entities, artifacts, turn)",
				p->field);
	if (p->limit > SEARCH_LIMIT_MAX)
		return smr_errf(err, SMR_EINVAL, "limit must be at most %d", SEARCH_LIMIT_MAX);
	if (!p->since && !p->until)
		return SMR_OK;
	ctx->now(now);
	rc = parse_bound(p->since, now, 1, since, err);
	if (!rc)   /* until: to the last microsecond of the second it names */
		rc = parse_bound(p->until, now, 0, until, err);
	if (!rc && *since && *until && strcmp(since, until) > 0)
		rc = smr_errf(err, SMR_EINVAL, "since (%.19s) is after until (%.19s): nothing"
			      " can match; swap them", since, until);
	return rc;
}

/* Whether rows a and b are copies of one item: same origin, field and words. */
static int same_item(const struct search_row *a, const struct search_row *b)
{
	return !strcmp(a->words, b->words) && !strcmp(a->field, b->field) &&
	       !strcmp(a->space_id, b->space_id);
}

/*
 * Groups ranked rows into hits (a row's space_id: the Space that wrote its
 * checkpoint); caller frees.  The hits are found by their first row in a
 * table of their own: a search groups thousands of rows, and a key built
 * and copied for each was a tenth of its time.
 */
static struct hit *group(const struct search_row *rows, const double *scores, size_t n,
			 size_t *nhits)
{
	struct hit *h = xcalloc(n ? n : 1, sizeof(*h));
	size_t cap = 16, k = 0, *slot;   /* slot: a hit's index + 1, 0 when empty */

	while (cap < 2 * n)
		cap *= 2;
	slot = xcalloc(cap, sizeof(*slot));
	for (size_t i = 0; i < n; i++) {
		size_t j;
		struct hit *x;

		if (scores[i] < 0)
			continue;
		if (rows[i].session_id) {   /* a turn is its own hit */
			h[k++] = (struct hit){ i, i, scores[i] };
			continue;
		}
		j = (strmap_hash(rows[i].words) ^ 31 * strmap_hash(rows[i].space_id) ^
		     (size_t)(unsigned char)rows[i].field[0] << 7) & (cap - 1);
		while (slot[j] && !same_item(&rows[h[slot[j] - 1].newest], &rows[i]))
			j = (j + 1) & (cap - 1);
		if (!slot[j]) {
			h[k] = (struct hit){ i, i, scores[i] };
			slot[j] = ++k;
			continue;
		}
		/* by time: rows come indexed last first, and an import indexes old ones late */
		x = &h[slot[j] - 1];
		if (strcmp(rows[i].created_at, rows[x->oldest].created_at) <= 0)
			x->oldest = i;
		if (strcmp(rows[i].created_at, rows[x->newest].created_at) > 0)
			x->newest = i;
	}
	free(slot);
	*nhits = k;
	return h;
}

/* The Space a row is shown in: a turn's, or the first by name of those holding its checkpoint. */
static const char *shown_id(const struct search_found *fd, const struct search_row *r)
{
	return r->n_holders ? fd->spaces[r->holders[0]].id : r->space_id;
}

/* ("" for a checkpoint's row whose holders are not read: see store_search_holders) */
static const char *shown_name(const struct search_found *fd, const struct search_row *r)
{
	if (r->n_holders)
		return fd->spaces[r->holders[0]].name;
	return r->space_name ? r->space_name : "";
}

/* qsort_r order of hits over found rows (arg): searches run on many threads at once. */
static int by_rank(const void *a, const void *b, void *arg)
{
	const struct hit *x = a, *y = b;
	const struct search_found *fd = arg;
	const struct search_row *rx = &fd->rows[x->newest], *ry = &fd->rows[y->newest];
	int c;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	c = strcmp(ry->created_at, rx->created_at);
	if (!c)
		c = strcmp(rx->commit_hash ? rx->commit_hash : "", ry->commit_hash ? ry->commit_hash : "");
	if (!c)
		c = strcmp(rx->field, ry->field);
	if (!c)
		c = rx->ordinal < ry->ordinal ? -1 : rx->ordinal > ry->ordinal;
	if (!c)
		c = strcmp(shown_name(fd, rx), shown_name(fd, ry));
	return c ? c : (rx->seq < ry->seq ? -1 : rx->seq > ry->seq);
}

/* The text of item (field, ordinal) of checkpoint c; NULL if it has none. */
static char *item_text(const struct checkpoint *c, const char *field, int64_t ordinal)
{
	struct search_item *v = NULL;
	size_t n = store_search_items(c, &v);
	char *text = NULL;

	for (size_t i = 0; i < n && !text; i++)
		if (!strcmp(v[i].field, field) && (int64_t)v[i].ordinal == ordinal) {
			text = v[i].text;
			v[i].text = NULL;
		}
	store_search_items_free(v, n);
	return text;
}

/* "field\nwords": how a HEAD's items are looked up (words as search_row's). */
static void item_key(struct buf *key, const char *field, const char *words)
{
	key->len = 0;
	buf_adds(key, field);
	buf_addch(key, '\n');
	buf_adds(key, words);
}

/* Every item of checkpoint c into held, by item_key (its text's words). */
static void index_items(const struct checkpoint *c, struct strmap *held)
{
	struct search_item *v = NULL;
	size_t n = store_search_items(c, &v);
	struct buf words = BUF_INIT(0), key = BUF_INIT(0);

	for (size_t i = 0; i < n; i++) {
		words.len = 0;
		terms_normalize(v[i].text, strlen(v[i].text), &words);
		item_key(&key, v[i].field, words.ptr ? words.ptr : "");
		strmap_put(held, key.ptr, 1);
	}
	buf_release(&words);
	buf_release(&key);
	store_search_items_free(v, n);
}

/*
 * Checkpoints read while rendering one answer, by "space\nhash"; each is
 * its own allocation: a caller holds what read_once returned while it
 * reads the next, which may grow the array.  And the HEADs of the Spaces
 * shown, each read once however many Spaces it is the HEAD of (a hundred
 * forks that have not moved share one), as the keys of their items.
 */
struct reads {
	struct strmap index;
	struct checkpoint **v;
	int *ok;
	size_t n, cap;
	struct strmap head_of;     /* Space id -> slot in held, SIZE_MAX: no HEAD */
	struct strmap head_slot;   /* HEAD hash -> slot in held */
	struct strmap *held;
	size_t n_held;
};

/* The key of checkpoint hash read through Space space_id in struct reads; caller frees. */
static char *read_key(const char *space_id, const char *hash)
{
	return xasprintf("%s\n%s", space_id, hash);
}

/* The slot of key in rd; *fresh: made now (not read yet). */
static size_t read_slot(struct reads *rd, const char *key, int *fresh)
{
	size_t i;

	*fresh = !strmap_get(&rd->index, key, &i);
	if (*fresh) {
		if (rd->n == rd->cap) {
			rd->cap = rd->cap ? rd->cap * 2 : 16;
			rd->v = xrealloc(rd->v, rd->cap * sizeof(*rd->v));
			rd->ok = xrealloc(rd->ok, rd->cap * sizeof(*rd->ok));
		}
		i = rd->n++;
		rd->v[i] = xcalloc(1, sizeof(*rd->v[i]));
		rd->ok[i] = 0;
		strmap_put(&rd->index, key, i);
	}
	return i;
}

static const struct checkpoint *read_once(struct ops_ctx *ctx, struct reads *rd,
					  const char *space_id, const char *hash)
{
	char *key = read_key(space_id, hash);
	int fresh;
	size_t i = read_slot(rd, key, &fresh);

	if (fresh)
		rd->ok[i] = !store_checkpoint_get(ctx->st, space_id, hash, rd->v[i], NULL);
	free(key);
	return rd->ok[i] ? rd->v[i] : NULL;
}

/* The results' checkpoints, for read_once: keys[i] is read_key() of hashes[i]. */
struct prefetch {
	struct reads *rd;
	char **keys;
};

static int keep_read(size_t i, struct checkpoint *c, void *arg)
{
	struct prefetch *pf = arg;
	int fresh;
	size_t k = read_slot(pf->rd, pf->keys[i], &fresh);

	if (fresh && c) {
		*pf->rd->v[k] = *c;
		*c = (struct checkpoint){ 0 };
		pf->rd->ok[k] = 1;
	}
	return 0;
}

/*
 * Reads the checkpoints of the n hits shown at once (a backend over a
 * network in a few round trips, not two for each).  What it cannot read
 * read_once reads alone, as before.
 */
static void prefetch_shown(struct ops_ctx *ctx, struct reads *rd, const struct search_found *fd,
			   const struct hit *hits, size_t n)
{
	const char **hashes = xcalloc(n + 1, sizeof(*hashes));
	char **keys = xcalloc(n + 1, sizeof(*keys));
	struct prefetch pf = { rd, keys };
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct search_row *r = &fd->rows[hits[i].newest];

		if (r->commit_hash && r->n_holders) {
			hashes[m] = r->commit_hash;
			keys[m++] = read_key(shown_id(fd, r), r->commit_hash);
		}
	}
	if (m > 1)
		(void)store_checkpoints_each(ctx->st, hashes, m, keep_read, &pf, NULL);
	for (size_t i = 0; i < m; i++)
		free(keys[i]);
	free(keys);
	free(hashes);
}

static void reads_release(struct reads *rd)
{
	for (size_t i = 0; i < rd->n; i++) {
		checkpoint_release(rd->v[i]);
		free(rd->v[i]);
	}
	free(rd->v);
	free(rd->ok);
	strmap_release(&rd->index);
	for (size_t i = 0; i < rd->n_held; i++)
		strmap_release(&rd->held[i]);
	free(rd->held);
	strmap_release(&rd->head_of);
	strmap_release(&rd->head_slot);
}

/* The items of the HEAD of Space space_id (reads), or NULL: it has none, or it did not read. */
static const struct strmap *head_items(struct ops_ctx *ctx, struct reads *rd,
				       const char *space_id)
{
	struct space sp = { 0 };
	struct checkpoint head = { 0 };
	size_t k = SIZE_MAX;

	if (strmap_get(&rd->head_of, space_id, &k))
		return k == SIZE_MAX ? NULL : &rd->held[k];
	if (!store_space_get(ctx->st, space_id, &sp, NULL) && sp.head &&
	    !strmap_get(&rd->head_slot, sp.head, &k) &&
	    !store_checkpoint_get(ctx->st, space_id, sp.head, &head, NULL)) {
		rd->held = xrealloc(rd->held, (rd->n_held + 1) * sizeof(*rd->held));
		rd->held[rd->n_held] = (struct strmap)STRMAP_INIT;
		index_items(&head, &rd->held[rd->n_held]);
		k = rd->n_held++;
		strmap_put(&rd->head_slot, sp.head, k);
		checkpoint_release(&head);
	}
	strmap_put(&rd->head_of, space_id, k);
	space_release(&sp);
	return k == SIZE_MAX ? NULL : &rd->held[k];
}

/* Whether the HEAD of Space space_id holds row r's item. */
static int in_head_of(struct ops_ctx *ctx, struct reads *rd, const char *space_id,
		      const struct search_row *r)
{
	const struct strmap *held = head_items(ctx, rd, space_id);
	struct buf key = BUF_INIT(0);
	size_t one;
	int in;

	if (!held)
		return 0;
	item_key(&key, r->field, r->words);
	in = strmap_get(held, key.ptr, &one);
	buf_release(&key);
	return in;
}

/* [{space, in_head}] of the Spaces holding checkpoint row r, by name. */
static json_t *spaces_json(struct ops_ctx *ctx, struct reads *rd, const struct search_found *fd,
			   const struct search_row *r)
{
	json_t *list = json_array();

	for (size_t i = 0; i < r->n_holders; i++) {
		const struct search_space *sp = &fd->spaces[r->holders[i]];

		json_array_append_new(list, json_pack("{s:s, s:b}", "space", sp->name,
						      "in_head", in_head_of(ctx, rd, sp->id, r)));
	}
	return list;
}

/*
 * The JSON of hit h: a checkpoint's item names every Space holding it
 * (space and in_head are the first's).
 */
static json_t *hit_json(struct ops_ctx *ctx, struct reads *rd, const struct search_query *q,
			const struct search_found *fd, const struct hit *h)
{
	const struct search_row *r = &fd->rows[h->newest], *first = &fd->rows[h->oldest];
	const struct checkpoint *c = NULL;
	char *text = NULL, *snippet;
	json_t *out, *marks = NULL, *spaces = NULL;
	int in_head = 0;

	if (r->commit_hash) {
		c = read_once(ctx, rd, shown_id(fd, r), r->commit_hash);
		spaces = spaces_json(ctx, rd, fd, r);
		in_head = json_is_true(json_object_get(json_array_get(spaces, 0), "in_head"));
	}
	text = c ? item_text(c, r->field, r->ordinal) : r->text ? xstrdup(r->text) : NULL;
	snippet = search_snippet(q, text ? text : r->words, SNIPPET_BYTES, &marks);
	out = json_pack("{s:s, s:s, s:s, s:s, s:f, s:s, s:o, s:s, s:s}", "space",
			shown_name(fd, r), "kind", r->commit_hash ? "checkpoint" : "turn",
			"field", r->field, "snippet", snippet, "score", h->score, "author",
			r->author, "highlights", marks, "created_at", r->created_at, "text",
			text ? text : "");
	if (r->commit_hash) {
		json_object_set_new(out, "commit_hash", json_string(r->commit_hash));
		json_object_set_new(out, "ordinal", json_integer(r->ordinal));
		json_object_set_new(out, "in_head", json_boolean(in_head));
		json_object_set_new(out, "spaces", spaces);
		json_object_set_new(out, "first", json_pack("{s:s, s:s, s:s}", "commit_hash",
							    first->commit_hash, "author",
							    first->author, "created_at",
							    first->created_at));
	} else {
		json_object_set_new(out, "session_id", json_string(r->session_id));
		json_object_set_new(out, "seq", json_integer(r->seq));
	}
	free(snippet);
	free(text);
	return out;
}

/*
 * Ranks the found rows, each item once however many Spaces hold it (so a
 * fork does not change what its history's items score), and renders the
 * best limit of them, the Spaces holding them read for those alone.
 */
static enum smr_rc answer(struct ops_ctx *ctx, const struct search_query *q,
			  const struct search_params *p, struct search_found *fd, json_t **out,
			  struct smr_err *err)
{
	size_t n = fd->n, nhits, limit = p->limit ? p->limit : SEARCH_LIMIT_DEFAULT, shown;
	const char **f = xcalloc(n + 1, sizeof(*f)), **w = xcalloc(n + 1, sizeof(*w));
	double *scores = xcalloc(n + 1, sizeof(*scores));
	size_t *newest;
	struct hit *hits;
	struct reads rd = { .index = STRMAP_INIT, .head_of = STRMAP_INIT,
			    .head_slot = STRMAP_INIT };
	json_t *list;
	enum smr_rc rc;

	for (size_t i = 0; i < n; i++) {
		f[i] = fd->rows[i].field;
		w[i] = fd->rows[i].words;
	}
	search_rank(q, n, f, w, scores);
	hits = group(fd->rows, scores, n, &nhits);
	qsort_r(hits, nhits, sizeof(*hits), by_rank, (void *)fd);
	shown = nhits < limit ? nhits : limit;
	newest = xcalloc(shown + 1, sizeof(*newest));
	for (size_t i = 0; i < shown; i++)
		newest[i] = hits[i].newest;
	rc = store_search_holders(ctx->st, fd, newest, shown, err);
	if (!rc)
		prefetch_shown(ctx, &rd, fd, hits, shown);
	list = rc ? NULL : json_array();
	/* (a Space deleted since the search held it alone: its result is not shown) */
	for (size_t i = 0; !rc && i < shown; i++)
		if (!fd->rows[hits[i].newest].commit_hash || fd->rows[hits[i].newest].n_holders)
			json_array_append_new(list, hit_json(ctx, &rd, q, fd, &hits[i]));
	if (!rc)
		*out = json_pack("{s:s, s:I, s:b, s:o}", "query", p->query, "total",
				 (json_int_t)nhits, "truncated", n >= SEARCH_CANDIDATES,
				 "results", list);
	reads_release(&rd);
	free(newest);
	free(f);
	free(w);
	free(scores);
	free(hits);
	return rc;
}

enum smr_rc ops_search(struct ops_ctx *ctx, const struct search_params *p, json_t **out,
		       struct smr_err *err)
{
	struct search_query q;
	struct search_word *words = NULL;
	struct search_filter f = { 0 };
	struct search_found found = { 0 };
	char **ids = NULL, since[32] = "", until[32] = "";
	size_t n_ids = 0;
	enum smr_rc rc = search_parse(p->query ? p->query : "", &q, err);

	if (!rc)
		rc = check_filters(ctx, p, since, until, err);
	if (!rc)
		rc = space_ids(ctx, p, &ids, &n_ids, err);
	if (!rc && ids && !n_ids) {
		/* a signed-in caller who can read no Space finds nothing */
	} else if (!rc) {
		words = xcalloc(q.n_terms, sizeof(*words));
		for (size_t i = 0; i < q.n_terms; i++)
			words[i] = (struct search_word){ q.terms[i].word, q.terms[i].prefix };
		f = (struct search_filter){ .words = words, .n_words = q.n_terms,
					    .space_ids = (const char *const *)ids,
					    .n_spaces = n_ids, .field = p->field,
					    .author = p->author, .since = *since ? since : NULL,
					    .until = *until ? until : NULL,
					    .turns = p->turns, .limit = SEARCH_CANDIDATES };
		rc = store_search(ctx->st, &f, &found, err);
	}
	if (!rc)
		rc = answer(ctx, &q, p, &found, out, err);
	search_found_release(&found);
	free(words);
	free_ids(ids);
	search_query_release(&q);
	return rc;
}
