/*
 * index.c -- what the search index holds: the items of a checkpoint (its
 * title, summary, each list item, each entity, each artifact) and, when a
 * checkpoint is written, the ones it introduced.
 *
 * A checkpoint carries most of its parent's state, so indexing every copy
 * would index the same text once per checkpoint.  Only an item whose words
 * its first parent does not have (in the same field) is indexed, keyed by
 * the checkpoint's hash: a fork, which copies the rows of an ancestry,
 * shares their hashes and so their index rows.  The words are
 * util/terms.c's, so both backends match alike.
 */
#include "store/internal.h"
#include "util/strmap.h"
#include "util/terms.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const list_fields[] = {
	"decisions", "assumptions", "tasks", "open_questions", NULL,
};

/* The codes of the fields in the index: never renumber one. */
static const char *const field_codes[] = {
	"title", "summary", "decisions", "assumptions", "tasks", "open_questions", "entities",
	"artifacts", "turn", NULL,
};

int store_field_code(const char *name)
{
	for (int i = 0; name && field_codes[i]; i++)
		if (!strcmp(field_codes[i], name))
			return i;
	return -1;
}

const char *store_field_name(int code)
{
	return code >= 0 && code < 9 ? field_codes[code] : "?";
}

static void add_item(struct search_item **v, size_t *n, size_t *cap, const char *field,
		     size_t ordinal, char *text)
{
	if (!text || !*text) {
		free(text);
		return;
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[*n].field = field;
	(*v)[*n].ordinal = ordinal;
	(*v)[*n].text = text;
	(*n)++;
}

static const char *member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* "A: B" from two members, or whichever is not empty; caller frees. */
static char *pair(const json_t *o, const char *a, const char *b)
{
	const char *x = member(o, a), *y = member(o, b);

	if (*x && *y)
		return xasprintf("%s: %s", x, y);
	return xstrdup(*x ? x : y);
}

size_t store_search_items(const struct checkpoint *c, struct search_item **out)
{
	struct search_item *v = NULL;
	size_t n = 0, cap = 0, i;
	const json_t *item;

	add_item(&v, &n, &cap, "title", 0, xstrdup(c->title ? c->title : ""));
	add_item(&v, &n, &cap, "summary", 0, xstrdup(c->summary ? c->summary : ""));
	for (const char *const *f = list_fields; *f; f++) {
		const json_t *list = !strcmp(*f, "decisions") ? c->decisions
				     : !strcmp(*f, "assumptions") ? c->assumptions
				     : !strcmp(*f, "tasks") ? c->tasks : c->open_questions;

		json_array_foreach(list, i, item)
			add_item(&v, &n, &cap, *f, i, xstrdup(member(item, "text")));
	}
	json_array_foreach(c->entities, i, item)
		add_item(&v, &n, &cap, "entities", i, pair(item, "name", "description"));
	json_array_foreach(c->artifacts, i, item)
		add_item(&v, &n, &cap, "artifacts", i, pair(item, "name", "content"));
	*out = v;
	return n;
}

void store_search_items_free(struct search_item *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

/* The words of text, normalised; caller frees. */
static char *words_of(const char *text)
{
	struct buf b = BUF_INIT(0);

	terms_normalize(text, strlen(text), &b);
	return buf_detach(&b, NULL);
}

/* A checkpoint's items with their words: what the next checkpoint is compared with. */
struct index_memo {
	char *hash;
	struct search_item *items;
	char **words;
	size_t n;
};

static void memo_clear(struct index_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->words[i]);
	free(m->words);
	store_search_items_free(m->items, m->n);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

void store_index_memo_free(struct store *st)
{
	if (st->memo)
		memo_clear(st->memo);
	free(st->memo);
	st->memo = NULL;
}

/*
 * The words of item i of m, taken from like when it holds an item of the
 * same field with the same text (a checkpoint carries most of its parent's
 * items, and normalising their words again was most of indexing's time).
 */
static char *words_like(const struct index_memo *m, size_t i, const struct index_memo *like)
{
	const struct search_item *it = &m->items[i];

	for (size_t j = 0; like && j < like->n; j++) {
		/* the same position first: an unchanged item usually keeps it */
		size_t k = (i + j) % like->n;

		if (!strcmp(like->items[k].field, it->field) && !strcmp(like->items[k].text, it->text))
			return xstrdup(like->words[k]);
	}
	return words_of(it->text);
}

/* c's items and words into m (replacing what it held); like: words known, or NULL. */
static void memo_fill(struct index_memo *m, const struct checkpoint *c,
		      const struct index_memo *like)
{
	memo_clear(m);
	m->hash = xstrdup(c->hash);
	m->n = store_search_items(c, &m->items);
	m->words = xcalloc(m->n + 1, sizeof(*m->words));
	for (size_t i = 0; i < m->n; i++)
		m->words[i] = words_like(m, i, like);
}

/* 1 when m has an item of that field with those words. */
static int memo_has(const struct index_memo *m, const char *field, const char *words)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->items[i].field, field) && !strcmp(m->words[i], words))
			return 1;
	return 0;
}

/*
 * Inserts c's items that its parent does not have: by row id (commit_id),
 * or by Space and hash (space_id set; see store_index_put).
 */
static enum smr_rc index_items(struct store *st, const struct checkpoint *c, int64_t commit_id,
			       const char *space_id, const struct checkpoint *parent,
			       struct smr_err *err)
{
	struct index_memo pm = { 0 }, cur = { 0 }, *prev;
	enum smr_rc rc = SMR_OK;

	if (!st->memo)
		st->memo = xcalloc(1, sizeof(*st->memo));
	/* a history is usually written in order: the parent is the last one indexed */
	prev = st->memo;
	if (parent && (!prev->hash || strcmp(prev->hash, parent->hash))) {
		memo_fill(&pm, parent, NULL);
		prev = &pm;
	}
	memo_fill(&cur, c, prev);   /* any memo will do: words depend on the text only */
	for (size_t i = 0; !rc && i < cur.n; i++) {
		int field = store_field_code(cur.items[i].field);
		int64_t ordinal = (int64_t)cur.items[i].ordinal;

		if (!*cur.words[i] || (parent && memo_has(prev, cur.items[i].field, cur.words[i])))
			continue;
		if (space_id)
			rc = st->ops->search_insert_at(st, space_id, c->hash, field, ordinal,
						       cur.words[i], err);
		else
			rc = st->ops->search_insert(st, commit_id, -1, field, ordinal, cur.words[i],
						    err);
	}
	memo_clear(&pm);
	memo_clear(st->memo);
	*st->memo = cur;
	return rc;
}

enum smr_rc store_index_checkpoint(struct store *st, const struct checkpoint *c,
				   int64_t commit_id, const struct checkpoint *parent,
				   int check, struct smr_err *err)
{
	int have = 0;
	enum smr_rc rc = check ? st->ops->search_has(st, c->hash, &have, err) : SMR_OK;

	if (rc || have)
		return rc;
	return index_items(st, c, commit_id, NULL, parent, err);
}

int store_index_knows(const struct store *st, const char *hash)
{
	return st->memo && st->memo->hash && !strcmp(st->memo->hash, hash);
}

enum smr_rc store_index_put(struct store *st, const char *space_id, const struct checkpoint *c,
			    const struct checkpoint *parent, struct smr_err *err)
{
	int64_t id = -1;
	enum smr_rc rc;

	/* the statement itself skips a hash another Space holds */
	if (st->ops->search_insert_at)
		return index_items(st, c, -1, space_id, parent, err);
	rc = st->ops->commit_id(st, space_id, c->hash, &id, err);
	if (!rc && id < 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", c->hash);
	if (!rc)
		rc = store_index_checkpoint(st, c, id, parent, 1, err);
	return rc;
}

enum smr_rc store_index_turn(struct store *st, const struct turn *t, struct smr_err *err)
{
	char *words = words_of(t->content ? t->content : "");
	enum smr_rc rc = SMR_OK;

	if (*words)
		rc = st->ops->search_insert(st, -1, t->id, store_field_code("turn"), t->seq,
					    words, err);
	free(words);
	return rc;
}

enum smr_rc store_index_appended(struct store *st, const struct turn *t, struct smr_err *err)
{
	char *words;
	enum smr_rc rc = SMR_OK;

	if (!st->ops->search_insert_turn)
		return store_index_turn(st, t, err);
	words = words_of(t->content ? t->content : "");
	if (*words)
		rc = st->ops->search_insert_turn(st, t->session_id, store_field_code("turn"), words,
						 err);
	free(words);
	return rc;
}

/* ---- filling the index of a store that had checkpoints before it existed ---- */

#define BACKFILL_BATCH 256

struct hashes {
	char **v;
	size_t n, cap;
};

static int collect_hash(const struct checkpoint *c, int parent_missing, void *arg)
{
	struct hashes *h = arg;

	(void)parent_missing;
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	h->v[h->n++] = xstrdup(c->hash);
	return 0;
}

/* Indexes checkpoints [from, to) of a Space: read first, then one transaction. */
static enum smr_rc backfill_batch(struct store *st, const char *space_id, char **hashes,
				  size_t from, size_t to, struct strmap *seen, struct smr_err *err)
{
	struct checkpoint *c = xcalloc(to - from, sizeof(*c)), *p = xcalloc(to - from, sizeof(*p));
	enum smr_rc rc = SMR_OK;
	size_t i;

	for (i = from; !rc && i < to; i++) {
		rc = st->ops->checkpoint_get(st, space_id, hashes[i], &c[i - from], err);
		if (!rc && c[i - from].parent_hash &&
		    st->ops->checkpoint_get(st, space_id, c[i - from].parent_hash, &p[i - from],
					    NULL))
			memset(&p[i - from], 0, sizeof(p[i - from]));
	}
	if (!rc)
		rc = st->ops->txn_begin(st, err);
	if (!rc) {
		for (i = from; !rc && i < to; i++) {
			int64_t id = -1;

			if (strmap_get(seen, c[i - from].hash, NULL))
				continue;   /* a fork's copy: indexed with the first */
			rc = st->ops->commit_id(st, space_id, c[i - from].hash, &id, err);
			if (!rc && id >= 0)
				rc = store_index_checkpoint(st, &c[i - from], id,
							    p[i - from].hash ? &p[i - from] : NULL,
							    0, err);
			strmap_put(seen, c[i - from].hash, 1);
		}
		if (rc)
			st->ops->txn_rollback(st);
		else
			rc = st->ops->txn_commit(st, err);
	}
	for (i = 0; i < to - from; i++) {
		checkpoint_release(&c[i]);
		checkpoint_release(&p[i]);
	}
	free(c);
	free(p);
	return rc;
}

static enum smr_rc backfill_space(struct store *st, const char *space_id, struct strmap *seen,
				  struct smr_err *err)
{
	struct hashes h = { NULL, 0, 0 };
	enum smr_rc rc = st->ops->checkpoint_scan(st, space_id, collect_hash, &h, err);

	for (size_t i = 0; !rc && i < h.n; i += BACKFILL_BATCH)
		rc = backfill_batch(st, space_id, h.v, i,
				    i + BACKFILL_BATCH < h.n ? i + BACKFILL_BATCH : h.n, seen, err);
	for (size_t i = 0; i < h.n; i++)
		free(h.v[i]);
	free(h.v);
	return rc;
}

enum smr_rc store_index_backfill(struct store *st, struct smr_err *err)
{
	struct space *live = NULL, *gone = NULL;
	struct strmap seen = STRMAP_INIT;
	size_t nl = 0, ng = 0;
	enum smr_rc rc = st->ops->space_list(st, &live, &nl, err);

	if (!rc)
		rc = st->ops->space_list_deleted(st, &gone, &ng, err);
	for (size_t i = 0; !rc && i < nl + ng; i++)
		rc = backfill_space(st, i < nl ? live[i].id : gone[i - nl].id, &seen, err);
	strmap_release(&seen);
	spaces_free(live, nl);
	spaces_free(gone, ng);
	return rc;
}
