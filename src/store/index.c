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
#include "domain/checkpoint.h"
#include "store/store_int.h"
#include "util/strmap.h"
#include "util/terms.h"
#include "util/xalloc.h"

#include <pthread.h>
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

/*
 * Calls fn for each item of c worth indexing (its text not empty): text
 * lives in holder (an item of c's lists) when holder is not NULL, else
 * only for the call.
 */
typedef void (*item_fn)(const char *field, size_t ordinal, const char *text,
			const json_t *holder, void *arg);

static const char *member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* "A: B" from two members, or whichever is not empty, to fn. */
static void pair(const char *field, size_t ordinal, const json_t *o, const char *a,
		 const char *b, item_fn fn, void *arg)
{
	const char *x = member(o, a), *y = member(o, b);
	char *both;

	if (!*x || !*y) {
		if (*x || *y)
			fn(field, ordinal, *x ? x : y, o, arg);
		return;
	}
	both = xasprintf("%s: %s", x, y);
	fn(field, ordinal, both, NULL, arg);
	free(both);
}

static void each_item(const struct checkpoint *c, item_fn fn, void *arg)
{
	size_t i;
	const json_t *item;

	if (c->title && *c->title)
		fn("title", 0, c->title, NULL, arg);
	if (c->summary && *c->summary)
		fn("summary", 0, c->summary, NULL, arg);
	for (const char *const *f = list_fields; *f; f++) {
		const json_t *list = !strcmp(*f, "decisions") ? c->decisions
				     : !strcmp(*f, "assumptions") ? c->assumptions
				     : !strcmp(*f, "tasks") ? c->tasks : c->open_questions;

		json_array_foreach(list, i, item) {
			const char *text = member(item, "text");

			if (*text)
				fn(*f, i, text, item, arg);
		}
	}
	json_array_foreach(c->entities, i, item)
		pair("entities", i, item, "name", "description", fn, arg);
	json_array_foreach(c->artifacts, i, item)
		pair("artifacts", i, item, "name", "content", fn, arg);
}

struct item_list {
	struct search_item *v;
	size_t n, cap;
};

static void add_item(const char *field, size_t ordinal, const char *text, const json_t *holder,
		     void *arg)
{
	struct item_list *l = arg;

	(void)holder;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = (struct search_item){ field, ordinal, xstrdup(text) };
}

size_t store_search_items(const struct checkpoint *c, struct search_item **out)
{
	struct item_list l = { NULL, 0, 0 };

	each_item(c, add_item, &l);
	*out = l.v;
	return l.n;
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

/*
 * A checkpoint's items with their words: what the next checkpoint is
 * compared with.  An item's text is borrowed from its list item (a
 * reference held) where it can be; its words move to the next memo when
 * that one has the same item (and this one is about to go).
 */
struct memo_item {
	const char *field;
	size_t ordinal;
	const char *text;                 /* in holder, or own */
	json_t *holder;
	char *own;
	char *words;
	int lent;                         /* words now the next memo's */
	int inherited;                    /* the same item was in the memo compared with */
};

struct index_memo {
	char *hash;
	struct memo_item *v;
	size_t n, cap;
	size_t bytes;                     /* its texts and words, about */
};

/*
 * The memos of the checkpoints indexed last, process-wide and keyed by
 * hash: a memo is a function of the checkpoint's content, which its hash
 * covers, so one made on any handle (of any database) will do.  A
 * server's writes go to whichever worker's handle is free, and a group
 * commit's leader writes many Spaces in one transaction, so the one memo a
 * handle kept was another Space's nearly always and each write read its
 * parent back and normalised its words again.  A handle claims its
 * parent's memo (store_index_knows) and shelves the new one when it has
 * indexed (index_items).  Bounded in count and in bytes, oldest out first;
 * emptied when the last handle that used it closes.
 */
#define SHELF_SLOTS 128
#define SHELF_BYTES (16u << 20)

static struct {
	pthread_mutex_t mu;
	struct index_memo *v[SHELF_SLOTS];   /* oldest first */
	size_t n, bytes;
	int users;                           /* handles with a memo (st->memo) */
} shelf = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void memo_clear(struct index_memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		json_decref(m->v[i].holder);
		free(m->v[i].own);
		if (!m->v[i].lent)
			free(m->v[i].words);
	}
	free(m->v);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

/* The shelf's memo of hash, taken off it (caller owns it), or NULL. */
static struct index_memo *shelf_take(const char *hash)
{
	struct index_memo *m = NULL;

	pthread_mutex_lock(&shelf.mu);
	for (size_t i = shelf.n; i-- > 0;) {
		if (strcmp(shelf.v[i]->hash, hash))
			continue;
		m = shelf.v[i];
		memmove(&shelf.v[i], &shelf.v[i + 1], (shelf.n - i - 1) * sizeof(m));
		shelf.n--;
		shelf.bytes -= m->bytes;
		break;
	}
	pthread_mutex_unlock(&shelf.mu);
	return m;
}

/* Moves m's memo onto the shelf (m is left empty), dropping the oldest to make room. */
static void shelf_keep(struct index_memo *m)
{
	struct index_memo *out[SHELF_SLOTS], *kept = NULL;
	size_t n = 0;

	if (m->hash && m->bytes <= SHELF_BYTES / 4) {
		kept = xmalloc(sizeof(*kept));
		*kept = *m;
		memset(m, 0, sizeof(*m));
	}
	memo_clear(m);
	if (!kept)
		return;
	pthread_mutex_lock(&shelf.mu);
	while (shelf.n && (shelf.n == SHELF_SLOTS || shelf.bytes + kept->bytes > SHELF_BYTES)) {
		out[n++] = shelf.v[0];
		shelf.bytes -= shelf.v[0]->bytes;
		memmove(&shelf.v[0], &shelf.v[1], --shelf.n * sizeof(kept));
	}
	shelf.v[shelf.n++] = kept;
	shelf.bytes += kept->bytes;
	pthread_mutex_unlock(&shelf.mu);
	for (size_t i = 0; i < n; i++) {   /* freed outside the lock */
		memo_clear(out[i]);
		free(out[i]);
	}
}

/* st's own memo (the one it claimed or indexed with), made on first use. */
static struct index_memo *handle_memo(struct store *st)
{
	if (!st->memo) {
		st->memo = xcalloc(1, sizeof(*st->memo));
		pthread_mutex_lock(&shelf.mu);
		shelf.users++;
		pthread_mutex_unlock(&shelf.mu);
	}
	return st->memo;
}

void store_index_memo_free(struct store *st)
{
	struct index_memo *gone[SHELF_SLOTS];
	size_t n = 0;

	if (!st->memo)
		return;
	memo_clear(st->memo);
	free(st->memo);
	st->memo = NULL;
	pthread_mutex_lock(&shelf.mu);
	if (--shelf.users == 0) {
		n = shelf.n;
		memcpy(gone, shelf.v, n * sizeof(gone[0]));
		shelf.n = 0;
		shelf.bytes = 0;
	}
	pthread_mutex_unlock(&shelf.mu);
	for (size_t i = 0; i < n; i++) {
		memo_clear(gone[i]);
		free(gone[i]);
	}
}

static void memo_add(const char *field, size_t ordinal, const char *text, const json_t *holder,
		     void *arg)
{
	struct index_memo *m = arg;
	struct memo_item *it;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->v = xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	it = &m->v[m->n++];
	*it = (struct memo_item){ .field = field, .ordinal = ordinal };
	m->bytes += sizeof(*it) + 2 * strlen(text);   /* its text, and words as long */
	if (holder) {
		it->holder = json_incref((json_t *)holder);
		it->text = text;
	} else {
		it->own = xstrdup(text);
		it->text = it->own;
	}
}

/*
 * The words of item i of m, taken from like when it holds an item of the
 * same field with the same text (a checkpoint carries most of its parent's
 * items, and normalising their words again was most of indexing's time).
 */
static void words_like(struct memo_item *it, size_t i, struct index_memo *like)
{
	for (size_t j = 0; like && j < like->n; j++) {
		/* the same position first: an unchanged item usually keeps it */
		struct memo_item *o = &like->v[(i + j) % like->n];

		/* fields are list_fields' strings; the same item has the very same text */
		if ((o->field != it->field && strcmp(o->field, it->field)) ||
		    (o->text != it->text && strcmp(o->text, it->text)))
			continue;
		if (o->lent) {
			it->words = xstrdup(o->words);
		} else {
			it->words = o->words;
			o->lent = 1;
		}
		it->inherited = 1;
		return;
	}
	it->words = words_of(it->text);
}

/*
 * c's items and words into m (replacing what it held); like: a memo whose
 * words may be taken (it is cleared next, its words still readable until
 * m is), or NULL.
 */
static void memo_fill(struct index_memo *m, const struct checkpoint *c,
		      struct index_memo *like)
{
	memo_clear(m);
	m->hash = xstrdup(c->hash);
	m->cap = 2;   /* the title and the summary */
	for (size_t f = 0; checkpoint_list_fields[f]; f++)
		m->cap += json_array_size(checkpoint_list(c, checkpoint_list_fields[f]));
	m->v = xmalloc(m->cap * sizeof(*m->v));
	each_item(c, memo_add, m);
	for (size_t i = 0; i < m->n; i++)
		words_like(&m->v[i], i, like);
}

/* 1 when m has an item of that field with those words. */
static int memo_has(const struct index_memo *m, const char *field, const char *words)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].field, field) && !strcmp(m->v[i].words, words))
			return 1;
	return 0;
}

/*
 * What indexing c inserts: c's items with their words, and which of them
 * its first parent does not have.  A grouped write makes it before it
 * queues (store_index_plan), the leader of its transaction only inserts.
 */
struct index_plan {
	struct index_memo cur;
	unsigned char *fresh;             /* per item of cur: 1 to insert */
};

static void plan_make(struct store *st, const struct checkpoint *c,
		      const struct checkpoint *parent, struct index_plan *pl)
{
	struct index_memo pm = { 0 }, *prev = handle_memo(st);

	/*
	 * A history is usually written in order: the parent is the last one
	 * indexed, on this handle or (a server's writes go to whichever
	 * handle is free) on the shelf.
	 */
	if (parent && (!prev->hash || strcmp(prev->hash, parent->hash)) &&
	    !store_index_knows(st, parent->hash)) {
		memo_fill(&pm, parent, NULL);
		prev = &pm;
	}
	memset(pl, 0, sizeof(*pl));
	memo_fill(&pl->cur, c, prev);   /* any memo will do: words depend on the text only */
	pl->fresh = xcalloc(pl->cur.n + 1, 1);
	for (size_t i = 0; i < pl->cur.n; i++) {
		const struct memo_item *it = &pl->cur.v[i];

		pl->fresh[i] = *it->words && !(parent && (it->inherited ||
							  memo_has(prev, it->field, it->words)));
	}
	memo_clear(&pm);
	memo_clear(st->memo);
}

/*
 * Inserts the plan's fresh items by Space and hash, in one call (see
 * store_index_put): one statement, where one per item cost the database
 * a statement's overhead each.
 */
static enum smr_rc plan_insert_at(struct store *st, const struct checkpoint *c,
				  const char *space_id, const struct index_plan *pl,
				  struct smr_err *err)
{
	struct search_put *v = xcalloc(pl->cur.n + 1, sizeof(*v));
	size_t n = 0;
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; i < pl->cur.n; i++) {
		const struct memo_item *it = &pl->cur.v[i];

		if (pl->fresh[i])
			v[n++] = (struct search_put){ store_field_code(it->field),
						       (int64_t)it->ordinal, it->words };
	}
	if (n)
		rc = st->ops->search_insert_at(st, space_id, c->hash, v, n, err);
	free(v);
	return rc;
}

/*
 * Inserts the plan's fresh items: by row id (commit_id), or by Space and
 * hash (space_id set; see store_index_put).
 */
static enum smr_rc plan_insert(struct store *st, const struct checkpoint *c, int64_t commit_id,
			       const char *space_id, const struct index_plan *pl,
			       struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	if (space_id)
		return plan_insert_at(st, c, space_id, pl, err);
	for (size_t i = 0; !rc && i < pl->cur.n; i++) {
		const struct memo_item *it = &pl->cur.v[i];

		if (pl->fresh[i])
			rc = st->ops->search_insert(st, commit_id, -1, store_field_code(it->field),
						    (int64_t)it->ordinal, it->words, err);
	}
	return rc;
}

/* Shelves the plan's memo for c's child and frees the rest. */
static void plan_shelve(struct index_plan *pl)
{
	shelf_keep(&pl->cur);
	free(pl->fresh);
	pl->fresh = NULL;
}

/* Inserts c's items that its parent does not have (see plan_insert). */
static enum smr_rc index_items(struct store *st, const struct checkpoint *c, int64_t commit_id,
			       const char *space_id, const struct checkpoint *parent,
			       struct smr_err *err)
{
	struct index_plan pl;
	enum smr_rc rc;

	plan_make(st, c, parent, &pl);
	rc = plan_insert(st, c, commit_id, space_id, &pl, err);
	plan_shelve(&pl);
	return rc;
}

struct index_plan *store_index_plan(struct store *st, const struct checkpoint *c,
				    const struct checkpoint *parent)
{
	struct index_plan *pl = xmalloc(sizeof(*pl));

	plan_make(st, c, parent, pl);
	return pl;
}

void store_index_plan_done(struct index_plan *plan)
{
	if (!plan)
		return;
	plan_shelve(plan);
	free(plan);
}

void store_index_plan_drop(struct index_plan *plan)
{
	if (!plan)
		return;
	memo_clear(&plan->cur);
	free(plan->fresh);
	free(plan);
}

/*
 * The search rows of checkpoint c of a Space, once per hash: worked out
 * now from parent (plan NULL) or before (store_index_plan).
 */
static enum smr_rc put_rows(struct store *st, const char *space_id, const struct checkpoint *c,
			    const struct checkpoint *parent, const struct index_plan *plan,
			    struct smr_err *err)
{
	int64_t id = -1;
	int have = 0;
	enum smr_rc rc;

	/* the statement itself skips a hash another Space holds */
	if (st->ops->search_insert_at)
		return plan ? plan_insert(st, c, -1, space_id, plan, err) :
			      index_items(st, c, -1, space_id, parent, err);
	rc = st->ops->commit_id(st, space_id, c->hash, &id, err);
	if (!rc && id < 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", c->hash);
	if (!rc)
		rc = st->ops->search_has(st, c->hash, &have, err);
	if (!rc && !have)
		rc = plan ? plan_insert(st, c, id, NULL, plan, err) :
			    index_items(st, c, id, NULL, parent, err);
	return rc;
}

enum smr_rc store_index_put_planned(struct store *st, const char *space_id,
				    const struct checkpoint *c, const struct index_plan *plan,
				    struct smr_err *err)
{
	return put_rows(st, space_id, c, NULL, plan, err);
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

int store_index_knows(struct store *st, const char *hash)
{
	struct index_memo *m, *mine = handle_memo(st);

	if (mine->hash && !strcmp(mine->hash, hash))
		return 1;
	m = shelf_take(hash);
	if (!m)
		return 0;
	shelf_keep(mine);   /* another checkpoint's, still good for its child */
	*mine = *m;
	free(m);
	return 1;
}

enum smr_rc store_index_put(struct store *st, const char *space_id, const struct checkpoint *c,
			    const struct checkpoint *parent, struct smr_err *err)
{
	return put_rows(st, space_id, c, parent, NULL, err);
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
	enum smr_rc rc = store_space_list(st, &live, &nl, err);

	if (!rc)
		rc = store_space_list_deleted(st, &gone, &ng, err);
	for (size_t i = 0; !rc && i < nl + ng; i++)
		rc = backfill_space(st, i < nl ? live[i].id : gone[i - nl].id, &seen, err);
	strmap_release(&seen);
	spaces_free(live, nl);
	spaces_free(gone, ng);
	return rc;
}
