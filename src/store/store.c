/*
 * store.c -- the storage port's front door: store_open() picks the backend
 * for a DSN, the writes with a rule to keep (HEAD's compare-and-swap, turn
 * numbering, copying history between Spaces) run here over the backend's
 * row methods, every move of HEAD goes through head_set(), and every
 * other function of store.h dispatches to the backend's method (but the
 * plain rows of rows.c and store_auth.c, one SQL text for both engines).  The list
 * of backends differs between the lean binary (SQLite only) and the full
 * one (with PostgreSQL); see backends_*.c.
 */
#include "domain/checkpoint.h"
#include "store/content.h"
#include "store/group.h"
#include "store/head_memo.h"
#include "util/strmap.h"
#include "util/sys.h"

#include "util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum smr_rc store_backend_open(const struct store_ops *ops, const char *dsn, struct store **out,
			       struct smr_err *err)
{
	enum smr_rc rc = ops->open(dsn, out, err);

	if (!rc && store_trace_on())
		*out = store_trace_wrap(*out);
	return rc;
}

enum smr_rc store_open(const char *dsn, struct store **out, struct smr_err *err)
{
	const char *key;
	enum smr_rc rc;

	*out = NULL;
	for (size_t i = 0; store_backends[i]; i++) {
		if (!store_backends[i]->accepts(dsn))
			continue;
		rc = store_backend_open(store_backends[i], dsn, out, err);
		if (!rc && (*out)->ops->group_key && (key = (*out)->ops->group_key(*out)))
			(*out)->group = group_join(key);
		/*
		 * A store older than the search index gets it filled once, when
		 * the index's migration ran -- not on every later migration,
		 * which would index every checkpoint a second time.
		 */
		if (!rc && (*out)->migrated_from > 0 &&
		    (*out)->migrated_from < SEARCH_INDEX_MIGRATION)
			rc = store_index_backfill(*out, err);
		if (rc && *out) {
			store_close(*out);
			*out = NULL;
		}
		return rc;
	}
	return smr_errf(err, SMR_EUSAGE, "no storage backend in this binary handles '%s'", dsn);
}

void store_close(struct store *st)
{
	if (!st)
		return;
	store_index_memo_free(st);
	group_leave(st->group);
	st->ops->close(st);
}

const char *store_name(const struct store *st)
{
	return st->ops->name;
}

int store_is_shared(const struct store *st)
{
	return st->ops->shared;
}

void store_set_background(struct store *st, int on)
{
	st->background = on;
}

enum smr_rc store_gc_prune(struct store *st, const char *before, const char *expire,
			   struct gc_counts *n, struct smr_err *err)
{
	memset(n, 0, sizeof(*n));
	return st->ops->gc_prune(st, before, expire, n, err);
}

/* 1 when id is one of f's Spaces (or f names none). */
static int allowed(const struct search_filter *f, const char *id)
{
	if (!f->space_ids)
		return 1;
	for (size_t i = 0; i < f->n_spaces; i++)
		if (!strcmp(f->space_ids[i], id))
			return 1;
	return 0;
}

/*
 * The Spaces a search's rows name (search_found.spaces), each once, with
 * whether f allows it (asked once a Space, not once a row).
 */
struct space_table {
	struct strmap by_id;
	struct search_found *found;
	char *ok;
	size_t cap;
};

/* The index of Space (id, name) in the table, added if new. */
static size_t table_index(struct space_table *t, const struct search_filter *f, const char *id,
			  const char *name)
{
	struct search_found *o = t->found;
	size_t k;

	if (strmap_get(&t->by_id, id, &k))
		return k;
	if (o->n_spaces == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		o->spaces = xrealloc(o->spaces, t->cap * sizeof(*o->spaces));
		t->ok = xrealloc(t->ok, t->cap);
	}
	o->spaces[o->n_spaces] = (struct search_space){ xstrdup(id), xstrdup(name) };
	t->ok[o->n_spaces] = (char)allowed(f, id);
	strmap_put(&t->by_id, id, o->n_spaces);
	return o->n_spaces++;
}

/*
 * What keep_held() learns of the chains its candidates sit on: for each,
 * its lowest candidate and its origin (all known at once), then, read a
 * window of candidates at a time in one statement, its origin if live and
 * the Spaces reaching into it from that lowest candidate up, with their
 * places in the table, by name.
 */
struct holders_memo {
	struct strmap chains;            /* chain (decimal) -> index in c */
	struct chain_reach {
		struct reach_ask ask;
		struct reach_into *v;    /* borrowed from a block */
		size_t n;
		size_t *at;              /* v's entries in the space table, by name */
		size_t *order;           /* v's indexes in that order */
		int read;
	} *c;
	size_t nc;
	struct memo_block {
		struct reach_into *v;
		size_t n;
	} *blocks;
	size_t nb;
	size_t *at;                      /* per candidate: its chain's index in c, or SIZE_MAX */
};

/* Candidates whose holders keep_held() reads at least at once */
#define READ_WINDOW 32

static void chain_key(char key[24], int64_t chain)
{
	snprintf(key, 24, "%lld", (long long)chain);
}

/*
 * Each chain of in[0..n) once, with its lowest candidate, and each
 * candidate's chain (m->at): candidates of one checkpoint come together,
 * so the last chain is looked at before the map.
 */
static void memo_chains(struct holders_memo *m, const struct search_row *in, size_t n)
{
	char key[24];
	size_t k = SIZE_MAX;

	m->at = xmalloc((n ? n : 1) * sizeof(*m->at));
	for (size_t i = 0; i < n; i++) {
		m->at[i] = SIZE_MAX;
		if (!in[i].commit_hash || !in[i].chain)
			continue;
		if (k == SIZE_MAX || m->c[k].ask.chain != in[i].chain) {
			chain_key(key, in[i].chain);
			if (!strmap_get(&m->chains, key, &k)) {
				m->c = xrealloc(m->c, (m->nc + 1) * sizeof(*m->c));
				m->c[m->nc] = (struct chain_reach){
					{ in[i].chain, in[i].commit_id, in[i].space_id }, NULL, 0,
					NULL, NULL, 0 };
				k = m->nc++;
				strmap_put(&m->chains, key, k);
			}
		}
		if (in[i].commit_id < m->c[k].ask.from)
			m->c[k].ask.from = in[i].commit_id;
		m->at[i] = k;
	}
}

/* qsort_r order of a chain's reach entries (indexes into arg) by their Spaces' names. */
static int by_entry_name(const void *a, const void *b, void *arg)
{
	const struct reach_into *v = arg;

	return strcmp(v[*(const size_t *)a].name, v[*(const size_t *)b].name);
}

/* Chain c's Spaces into the table, and their order by name. */
static void chain_places(struct chain_reach *c, struct space_table *t,
			 const struct search_filter *f)
{
	c->at = xmalloc((c->n ? c->n : 1) * sizeof(*c->at));
	c->order = xmalloc((c->n ? c->n : 1) * sizeof(*c->order));
	for (size_t j = 0; j < c->n; j++) {
		c->at[j] = table_index(t, f, c->v[j].id, c->v[j].name);
		c->order[j] = j;
	}
	qsort_r(c->order, c->n, sizeof(*c->order), by_entry_name, c->v);
}

/* Reads, in one statement, the holders of every chain of candidates [from, to) not read yet. */
static enum smr_rc memo_read(struct store *st, struct holders_memo *m, struct space_table *t,
			     const struct search_filter *f, size_t from, size_t to,
			     struct smr_err *err)
{
	struct reach_ask *asks = xcalloc(to - from + 1, sizeof(*asks));
	struct memo_block b = { NULL, 0 };
	size_t na = 0, k = 0;
	char key[24];
	enum smr_rc rc = SMR_OK;

	for (size_t i = from; i < to; i++) {
		k = m->at[i];
		if (k != SIZE_MAX && !m->c[k].read) {
			m->c[k].read = 1;
			asks[na++] = m->c[k].ask;
		}
	}
	if (na)
		rc = rows_reach_into(st, asks, na, &b.v, &b.n, err);
	free(asks);
	if (rc || !na)
		return rc;
	m->blocks = xrealloc(m->blocks, (m->nb + 1) * sizeof(*m->blocks));
	m->blocks[m->nb++] = b;
	/* the rows come by chain: each chain's run of them */
	for (size_t i = 0; i < b.n; i += m->c[k].n) {
		chain_key(key, b.v[i].chain);
		if (!strmap_get(&m->chains, key, &k) || m->c[k].n)
			BUG("holders of chain %s, not asked or asked twice", key);
		m->c[k].v = &b.v[i];
		while (i + m->c[k].n < b.n && b.v[i + m->c[k].n].chain == b.v[i].chain)
			m->c[k].n++;
		chain_places(&m->c[k], t, f);
	}
	return SMR_OK;
}

static void memo_release(struct holders_memo *m)
{
	for (size_t i = 0; i < m->nb; i++)
		reach_into_free(m->blocks[i].v, m->blocks[i].n);
	for (size_t k = 0; k < m->nc; k++) {
		free(m->c[k].at);
		free(m->c[k].order);
	}
	free(m->blocks);
	free(m->c);
	free(m->at);
	strmap_release(&m->chains);
}

/*
 * The Spaces of f holding candidate i (r) from the memo, by name, into
 * r->holders: its chain's origin if live, and those reaching its chain at
 * its row or above.  0 when the memo cannot say (no chain, or not r's
 * origin: a chain's rows share one): ask rows_holders.
 */
static int holders_from_memo(const struct holders_memo *m, const struct space_table *t,
			     size_t i, struct search_row *r)
{
	const struct chain_reach *c;
	size_t k = m->at[i];

	if (k == SIZE_MAX || strcmp(m->c[k].ask.origin, r->space_id))
		return 0;
	c = &m->c[k];
	r->holders = xmalloc((c->n ? c->n : 1) * sizeof(*r->holders));
	for (size_t o = 0; o < c->n; o++) {
		size_t j = c->order[o];

		if ((c->v[j].origin ||
		     (c->v[j].xmax >= r->commit_id && strcmp(c->v[j].id, r->space_id))) &&
		    t->ok[c->at[j]])
			r->holders[r->n_holders++] = c->at[j];
	}
	return 1;
}

/* qsort_r order of space-table indexes (arg: the table) by name. */
static int by_space_name(const void *a, const void *b, void *arg)
{
	const struct search_space *v = arg;

	return strcmp(v[*(const size_t *)a].name, v[*(const size_t *)b].name);
}

/* r's holders one at a time (rows_holders), for a row the memo cannot answer. */
static enum smr_rc holders_asked(struct store *st, struct space_table *t,
				 const struct search_filter *f, struct search_row *r,
				 struct smr_err *err)
{
	char **ids = NULL, **names = NULL;
	size_t n = 0, k;
	enum smr_rc rc = rows_holders(st, r->commit_hash, 1, &ids, &names, &n, err);

	r->holders = xmalloc((n ? n : 1) * sizeof(*r->holders));
	for (size_t j = 0; !rc && j < n; j++) {
		k = table_index(t, f, ids[j], names[j]);
		if (t->ok[k])
			r->holders[r->n_holders++] = k;
	}
	qsort_r(r->holders, r->n_holders, sizeof(*r->holders), by_space_name, t->found->spaces);
	for (size_t j = 0; j < n; j++) {
		free(ids[j]);
		free(names[j]);
	}
	free(ids);
	free(names);
	return rc;
}

/*
 * Whether every checkpoint candidate of in[0..n) has a live origin (1 in
 * *all): a live Space holds every row it wrote (its HEAD and reflog
 * reach them), so without a Space filter each such candidate is kept
 * without reading who else holds it.  When no Space is deleted (nearly
 * always) every origin is live: a checkpoint's origin is a foreign key,
 * so it names a Space that exists.  Else one statement for all of them.
 */
static enum smr_rc origins_live(struct store *st, const struct search_row *in, size_t n,
				int *all, struct smr_err *err)
{
	struct strmap seen = STRMAP_INIT;
	const char **ids;
	size_t n_ids = 0, n_live = 0, one;
	int any;
	enum smr_rc rc = rows_any_deleted(st, &any, err);

	*all = !rc && !any;
	if (rc || !any)
		return rc;
	ids = xcalloc(n + 1, sizeof(*ids));
	for (size_t i = 0; i < n; i++)
		if (in[i].commit_hash && !strmap_get(&seen, in[i].space_id, &one)) {
			strmap_put(&seen, in[i].space_id, 1);
			ids[n_ids++] = in[i].space_id;
		}
	if (n_ids)
		rc = rows_live_of(st, ids, n_ids, &n_live, err);
	*all = !rc && n_live == n_ids;
	free(ids);
	strmap_release(&seen);
	return rc;
}

/*
 * The backend finds each checkpoint item once (the history is shared);
 * here each gets the live Spaces of f that hold it, and is dropped when
 * there is none.  Without a Space filter, when every candidate's origin
 * is live, all are kept and none read yet who holds it
 * (store_search_holders, for the results shown).  A checkpoint that a
 * hundred forks hold is still one row, naming a hundred Spaces.  Turns
 * come filtered already.  Rows are moved from in to out (at most f->limit
 * of them when it is set).  The Spaces are found per chain, not per
 * candidate: a search may bring thousands of candidates from one history.
 */
static enum smr_rc keep_held(struct store *st, const struct search_filter *f,
			     struct search_row *in, size_t n_in, struct space_table *t,
			     struct smr_err *err)
{
	struct holders_memo m = { STRMAP_INIT, NULL, 0, NULL, 0, NULL };
	struct search_found *out = t->found;
	size_t cap = 0, read_to = 0;
	int all_live = 0;
	enum smr_rc rc = f->space_ids ? SMR_OK : origins_live(st, in, n_in, &all_live, err);

	if (rc)
		return rc;
	if (all_live) {
		out->n = f->limit && f->limit < n_in ? f->limit : n_in;
		out->rows = xcalloc(out->n + 1, sizeof(*out->rows));
		for (size_t i = 0; i < out->n; i++) {
			out->rows[i] = in[i];
			memset(&in[i], 0, sizeof(in[i]));
		}
		return SMR_OK;
	}
	memo_chains(&m, in, n_in);
	for (size_t i = 0; !rc && i < n_in && (!f->limit || out->n < f->limit); i++) {
		struct search_row *r = &in[i];

		if (i == read_to) {   /* as many as the rows still wanted, at least READ_WINDOW */
			size_t w = f->limit ? f->limit - out->n : n_in - i;

			w = w < READ_WINDOW ? READ_WINDOW : w;
			read_to = i + w < n_in ? i + w : n_in;
			rc = memo_read(st, &m, t, f, i, read_to, err);
			if (rc)
				break;
		}
		if (r->commit_hash && !(r->chain && holders_from_memo(&m, t, i, r)))
			rc = holders_asked(st, t, f, r, err);
		if (rc || (r->commit_hash && !r->n_holders))
			continue;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			out->rows = xrealloc(out->rows, cap * sizeof(*out->rows));
		}
		out->rows[out->n++] = *r;
		memset(r, 0, sizeof(*r));
	}
	memo_release(&m);
	return rc;
}

enum smr_rc store_search(struct store *st, const struct search_filter *f,
			 struct search_found *out, struct smr_err *err)
{
	struct search_filter g = *f;
	struct search_row *v = NULL;
	struct space_table t = { STRMAP_INIT, out, NULL, 0 };
	size_t nv = 0;
	char *spaces = NULL;
	json_t *ids;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	if (f->space_ids) {
		ids = json_array();
		for (size_t i = 0; i < f->n_spaces; i++)
			json_array_append_new(ids, json_string(f->space_ids[i]));
		spaces = json_dumps(ids, JSON_COMPACT);
		json_decref(ids);
	}
	/*
	 * Items the Spaces of f do not hold are dropped after the backend's
	 * limit: ask again for more until limit items are kept or none are left.
	 * With no Space filter only an item no live Space holds is dropped,
	 * which is rare: ask for limit first.
	 */
	for (g.limit = f->limit && f->space_ids ? f->limit * 2 : f->limit;; g.limit *= 4) {
		rc = st->ops->search(st, &g, spaces, &v, &nv, err);
		if (!rc)
			rc = keep_held(st, f, v, nv, &t, err);
		search_rows_free(v, nv);
		v = NULL;
		if (rc || !g.limit || nv < g.limit || out->n >= f->limit)
			break;
		search_found_release(out);
		strmap_release(&t.by_id);
		t = (struct space_table){ STRMAP_INIT, out, t.ok, 0 };
	}
	if (rc)
		search_found_release(out);
	strmap_release(&t.by_id);
	free(t.ok);
	free(spaces);
	return rc;
}

enum smr_rc store_search_holders(struct store *st, struct search_found *fd, const size_t *idx,
				 size_t n, struct smr_err *err)
{
	struct search_filter any = { 0 };
	struct space_table t = { STRMAP_INIT, fd, xmalloc(fd->n_spaces + 1), fd->n_spaces };
	struct holders_memo m = { STRMAP_INIT, NULL, 0, NULL, 0, NULL };
	struct search_row *v = xcalloc(n + 1, sizeof(*v));   /* borrowed strings */
	size_t *at = xcalloc(n + 1, sizeof(*at)), nv = 0;
	enum smr_rc rc = SMR_OK;

	for (size_t j = 0; j < fd->n_spaces; j++) {
		strmap_put(&t.by_id, fd->spaces[j].id, j);
		t.ok[j] = 1;
	}
	for (size_t k = 0; k < n; k++) {
		struct search_row *r = &fd->rows[idx[k]];

		if (r->commit_hash && !r->holders) {
			v[nv] = *r;
			at[nv++] = idx[k];
		}
	}
	memo_chains(&m, v, nv);
	if (nv)
		rc = memo_read(st, &m, &t, &any, 0, nv, err);
	for (size_t i = 0; !rc && i < nv; i++)
		if (!(v[i].chain && holders_from_memo(&m, &t, i, &v[i])))
			rc = holders_asked(st, &t, &any, &v[i], err);
	for (size_t i = 0; i < nv; i++) {
		fd->rows[at[i]].holders = v[i].holders;
		fd->rows[at[i]].n_holders = v[i].n_holders;
	}
	memo_release(&m);
	strmap_release(&t.by_id);
	free(t.ok);
	free(v);
	free(at);
	return rc;
}

void search_found_release(struct search_found *f)
{
	search_rows_free(f->rows, f->n);
	for (size_t i = 0; i < f->n_spaces; i++) {
		free(f->spaces[i].id);
		free(f->spaces[i].name);
	}
	free(f->spaces);
	memset(f, 0, sizeof(*f));
}

void search_rows_free(struct search_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].texts);
		free(v[i].holders);
	}
	free(v);
}

void search_row_texts(struct search_row *r, const char *const text[SEARCH_TEXTS],
		      const size_t len[SEARCH_TEXTS])
{
	const char **field[SEARCH_TEXTS] = {
		&r->space_id, &r->space_name, &r->commit_hash, &r->session_id, &r->words,
		&r->author, &r->created_at, &r->text,
	};
	size_t total = 0;
	char *at;

	for (int k = 0; k < SEARCH_TEXTS; k++)
		total += text[k] ? len[k] + 1 : 0;
	r->texts = at = xmalloc(total + 1);
	for (int k = 0; k < SEARCH_TEXTS; k++) {
		*field[k] = NULL;
		if (!text[k])
			continue;
		memcpy(at, text[k], len[k]);
		at[len[k]] = '\0';
		*field[k] = at;
		at += len[k] + 1;
	}
}

enum smr_rc store_checkpoint_get(struct store *st, const char *space_id, const char *hash,
				 struct checkpoint *out, struct smr_err *err)
{
	return st->ops->checkpoint_get(st, space_id, hash, out, err);
}

enum smr_rc store_checkpoints_each(struct store *st, const char *const *hashes, size_t n,
				   store_each_fn fn, void *ctx, struct smr_err *err)
{
	struct checkpoint c;
	enum smr_rc rc = SMR_OK;
	int stop = 0, found;

	if (st->ops->checkpoints_each)
		return st->ops->checkpoints_each(st, hashes, n, fn, ctx, err);
	for (size_t i = 0; i < n && !stop && !rc; i++) {
		memset(&c, 0, sizeof(c));
		rc = st->ops->checkpoint_get(st, NULL, hashes[i], &c, err);
		found = !rc;
		if (rc == SMR_ENOTFOUND)
			rc = SMR_OK;
		if (!rc)
			stop = fn(i, found ? &c : NULL, ctx);
		checkpoint_release(&c);
	}
	return rc;
}

enum smr_rc store_checkpoint_log(struct store *st, const char *space_id, const char *hash,
				 size_t limit, struct checkpoint **out, size_t *n,
				 struct smr_err *err)
{
	return st->ops->checkpoint_log(st, space_id, hash, limit, out, n, err);
}

enum smr_rc store_checkpoint_scan(struct store *st, const char *space_id, store_scan_fn fn,
				  void *ctx, struct smr_err *err)
{
	return st->ops->checkpoint_scan(st, space_id, fn, ctx, err);
}

struct scan_whole {
	store_scan_text_fn fn;
	void *ctx;
};

static int scan_whole(const struct checkpoint *c, int parent_missing, void *arg)
{
	struct scan_whole *w = arg;

	(void)parent_missing;
	return w->fn(c, NULL, w->ctx);
}

enum smr_rc store_checkpoint_scan_text(struct store *st, const char *space_id,
				       store_scan_text_fn fn, void *ctx, struct smr_err *err)
{
	struct scan_whole w = { fn, ctx };

	if (st->ops->checkpoint_scan_text)
		return st->ops->checkpoint_scan_text(st, space_id, fn, ctx, err);
	return st->ops->checkpoint_scan(st, space_id, scan_whole, &w, err);
}

/* ---- writes whose rules live here, once for every backend ---- */

/* Ends a write begun with txn_begin: commits, or rolls back and passes rc on. */
static enum smr_rc txn_end(struct store *st, enum smr_rc rc, struct smr_err *err)
{
	if (!rc)
		return st->ops->txn_commit(st, err);
	st->ops->txn_rollback(st);
	return rc;
}

/*
 * One write transaction around rows: the handle's commit group's next one
 * when it has a group (store/group.h), else its own.
 */
static enum smr_rc write_txn(struct store *st, store_rows_fn rows, void *arg,
			     struct smr_err *err)
{
	enum smr_rc rc;

	if (st->group)
		return group_write(st->group, st, st->background, rows, arg, err);
	rc = st->ops->txn_begin(st, err);
	if (rc)
		return rc;
	return txn_end(st, rows(st, arg, err), err);
}

/*
 * 1 when a write must run once more: the backend says its first try never
 * reached the database (a connection that died while idle), so nothing of
 * it happened.  Only the first try is retried.
 */
static int again(struct store *st, enum smr_rc rc, int *tries)
{
	return rc == SMR_EUNAVAIL && (*tries)++ == 0 && st->ops->txn_not_started &&
	       st->ops->txn_not_started(st);
}

/* write_txn, retried once when it never reached the database. */
static enum smr_rc write_rows(struct store *st, store_rows_fn rows, void *arg,
			      struct smr_err *err)
{
	int tries = 0;
	enum smr_rc rc;

	do
		rc = write_txn(st, rows, arg, err);
	while (again(st, rc, &tries));
	return rc;
}

static int same_hash(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static enum smr_rc stale_parent(const char *head, struct smr_err *err)
{
	if (!head)
		return smr_errf(err, SMR_ECONFLICT,
				"parent is stale: the space has no checkpoints yet");
	return smr_errf(err, SMR_ECONFLICT, "parent is stale: HEAD is now %.12s (%s)", head,
			head);
}

static enum smr_rc exists_already(const struct checkpoint *c, struct smr_err *err)
{
	return smr_errf(err, SMR_ECONFLICT, "checkpoint %.12s already exists", c->hash);
}

/*
 * The one way a move of a Space's HEAD reaches the reflog: every write
 * below calls it inside its transaction, so a move and its record commit
 * together or not at all.
 */
static enum smr_rc record_move(struct store *st, const char *space_id, const char *old_hash,
			       const char *new_hash, const char *action,
			       const struct ref_move *mv, struct smr_err *err)
{
	struct ref_move m = { NULL, NULL, NULL };
	char now[32];

	if (mv)
		m = *mv;
	if (!m.at) {
		sys_now_iso(now);
		m.at = now;
	}
	return rows_reflog_insert(st, space_id, NULL, old_hash, new_hash, action, &m, err);
}

/* The kind of move writing c is, from what it carries (see struct reflog_entry). */
static const char *put_action(const struct checkpoint *c)
{
	if (c->merge_parent_hash)
		return "merge";
	if (json_object_get(c->metadata, "restored_from"))
		return "restore";
	return "commit";
}

/* git's reflog wording: "commit: TITLE", "restore: to HASH", "merge HASH: TITLE"; caller frees. */
static char *put_reason(const struct checkpoint *c, const char *action)
{
	const char *title = c->title && *c->title ? c->title : "(untitled)";
	const char *from = json_string_value(json_object_get(c->metadata, "restored_from"));

	if (!strcmp(action, "merge"))
		return xasprintf("merge %.12s: %s", c->merge_parent_hash, title);
	if (!strcmp(action, "restore"))
		return xasprintf("restore: to %.12s", from ? from : "?");
	return xasprintf("commit%s: %s", c->parent_hash ? "" : " (initial)", title);
}

/*
 * Every move of a Space's HEAD goes through here (commit, patch, merge,
 * fast-forward, fork), so there is one place to hook what follows a move.
 */
static enum smr_rc head_set(struct store *st, const char *space_id, int64_t commit_id,
			    struct smr_err *err)
{
	return st->ops->head_move(st, space_id, commit_id, err);
}

/* The row of hash in space_id, or SMR_ENOTFOUND naming it. */
static enum smr_rc row_of(struct store *st, const char *space_id, const char *hash,
			  int64_t *id, struct smr_err *err)
{
	enum smr_rc rc = st->ops->commit_id(st, space_id, hash, id, err);

	if (!rc && *id < 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	return rc;
}

/*
 * Records the move to c in the reflog: who is the checkpoint's author, when
 * its time, what kind of move what it carries.  Takes names only, so a
 * pipelining backend sends it with the put.
 */
static enum smr_rc record_put(struct store *st, const char *space_id,
			      const struct checkpoint *c, struct smr_err *err)
{
	const char *action = put_action(c);
	struct ref_move mv = { c->author, NULL, c->created_at };
	enum smr_rc rc;

	mv.reason = put_reason(c, action);
	rc = record_move(st, space_id, c->parent_hash, c->hash, action, &mv, err);
	free((char *)mv.reason);
	return rc;
}

/*
 * Indexes for search what c (row id) introduced over its first parent and
 * records the move to it in the reflog.
 */
static enum smr_rc after_put(struct store *st, const char *space_id,
			     const struct checkpoint *c, int64_t id, struct smr_err *err)
{
	struct checkpoint parent = { 0 };
	enum smr_rc rc = SMR_OK;

	if (c->parent_hash)
		rc = st->ops->commit_read(st, space_id, c->parent_hash, &parent, err);
	if (!rc)
		rc = store_index_checkpoint(st, c, id, c->parent_hash ? &parent : NULL, 1, err);
	if (!rc)
		rc = record_put(st, space_id, c, err);
	checkpoint_release(&parent);
	return rc;
}

/*
 * Inserts c on top of HEAD (row head_id) and moves HEAD to it; merge_id is
 * the row of c's second parent, or -1: the one space_id holds.
 */
static enum smr_rc put_on_head(struct store *st, const char *space_id,
			       const struct checkpoint *c, int64_t head_id, int64_t merge_id,
			       struct smr_err *err)
{
	int64_t id = -1;
	enum smr_rc rc = SMR_OK;

	if (c->merge_parent_hash && merge_id < 0)
		rc = row_of(st, space_id, c->merge_parent_hash, &merge_id, err);
	if (!rc)
		rc = st->ops->commit_insert(st, space_id, c, NULL, head_id, merge_id, &id, err);
	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "checkpoint %.12s already exists", c->hash);
	if (!rc)
		rc = head_set(st, space_id, id, err);
	if (!rc)
		rc = after_put(st, space_id, c, id, err);
	return rc;
}

/* Locks HEAD and checks it is still expected_head. */
static enum smr_rc lock_expected(struct store *st, const char *space_id,
				 const char *expected_head, int64_t *head_id, struct smr_err *err)
{
	char *head = NULL;
	enum smr_rc rc = st->ops->head_lock(st, space_id, head_id, &head, err);

	if (!rc && !same_hash(head, expected_head))
		rc = stale_parent(head, err);
	free(head);
	return rc;
}

struct put {
	const char *space_id, *expected;
	const char *ref, *name;          /* put_checked: what must still name the Space */
	const struct checkpoint *c;
	struct checkpoint *onto;         /* put_on_head: c, sealed again on HEAD when it moved */
	store_reseal_fn reseal;
	void *reseal_arg;
	char *head;                      /* what head_check (head_lock) read */
	struct checkpoint parent;        /* c's parent for the index (see put_parent) */
	struct checkpoint_text text;     /* c's lists as JSON (see put_ahead), or none */
	char *own[CHECKPOINT_TEXT_COLS];
	struct index_plan *plan;         /* what to index (see put_ahead), or NULL */
};

/* A checked write's SMR_ENOTFOUND: ref no longer names Space sp (renamed, deleted, another). */
static enum smr_rc renamed_away(const char *ref, const struct space *sp, struct smr_err *err)
{
	return smr_errf(err, SMR_ENOTFOUND, "'%s' no longer names space %s ('%s')", ref, sp->id,
			sp->name);
}

static enum smr_rc put_parent(struct store *st, struct put *p, struct smr_err *err);
static enum smr_rc head_read(struct store *st, const char *space_id, const char *hash,
			     struct checkpoint *head, struct smr_err *err);

/*
 * What a write that joins a commit group makes before it queues: c's lists
 * and metadata as the JSON text the store writes, and what the search
 * index gets (read and compared with c's parent).  The leader runs every
 * write of its transaction alone, and these were a third of that time.
 * Without a group the backend and put_rows make them, as they always did.
 */
static void put_ahead(struct store *st, struct put *p)
{
	const struct checkpoint *c = p->c;
	const json_t *cols[CHECKPOINT_TEXT_COLS] = { c->decisions, c->assumptions, c->tasks,
						      c->open_questions, c->entities,
						      c->artifacts, c->metadata };

	if (!st->group)
		return;
	/* the lists from the items' texts, written when c was sealed (content.h) */
	for (size_t i = 0; i < CHECKPOINT_TEXT_COLS; i++) {
		if (!cols[i])
			p->own[i] = NULL;
		else if (i < CONTENT_LISTS)
			p->own[i] = content_list_text(c->texts, cols[i]);
		else
			p->own[i] = json_dumps(cols[i], JSON_COMPACT | JSON_ENCODE_ANY);
		p->text.json[i] = p->own[i];
		p->text.len[i] = p->own[i] ? strlen(p->own[i]) : 0;
	}
	/*
	 * c and its parent are what they are: no need of the transaction to
	 * read or compare.  Unless the parent is not there yet (its write not
	 * yet acknowledged): it may be by the transaction, which then reads it.
	 */
	if (!p->c->merge_parent_hash && !put_parent(st, p, NULL) &&
	    (!p->c->parent_hash || p->parent.hash))
		p->plan = store_index_plan(st, p->c, p->parent.hash ? &p->parent : NULL);
}

static void put_release(struct put *p)
{
	free(p->head);
	checkpoint_release(&p->parent);
	for (size_t i = 0; i < CHECKPOINT_TEXT_COLS; i++)
		free(p->own[i]);
	store_index_plan_done(p->plan);
}

/*
 * put_rows for a checkpoint with a second parent, over the rows that give
 * ids (the second parent's row is looked up mid-transaction).
 */
static enum smr_rc put_merge_rows(struct store *st, struct put *p, struct smr_err *err)
{
	int64_t head_id = -1;
	enum smr_rc rc = st->ops->head_lock(st, p->space_id, &head_id, &p->head, err);

	if (!rc && !same_hash(p->head, p->expected))
		rc = SMR_ECONFLICT;
	if (!rc)
		rc = put_on_head(st, p->space_id, p->c, head_id, -1, err);
	return rc;
}

/*
 * What the index compares c with: its parent as index.c kept it (only the
 * hash is needed), else as head_memo kept it, else read now -- the one
 * read of a plain put, made only when no write of this process made the
 * parent lately (a pipelining backend then spends one more round trip).
 * index.c hands its memo of a checkpoint to one child only: 32 writers
 * putting on the same HEAD without naming a parent each read and parsed
 * it back, a tenth of the server's time.  A parent not there leaves
 * *parent empty: HEAD cannot be it, so the put fails its check and writes
 * nothing.
 */
static enum smr_rc put_parent(struct store *st, struct put *p, struct smr_err *err)
{
	const char *hash = p->c->parent_hash;
	enum smr_rc rc;

	checkpoint_release(&p->parent);
	memset(&p->parent, 0, sizeof(p->parent));
	if (!hash)
		return SMR_OK;
	if (store_index_knows(st, hash)) {
		p->parent.hash = xstrdup(hash);
		return SMR_OK;
	}
	rc = head_read(st, p->space_id, hash, &p->parent, NULL);
	if (rc == SMR_ENOTFOUND) {
		checkpoint_release(&p->parent);
		return SMR_OK;
	}
	if (rc)
		return smr_errf(err, rc, "reading checkpoint %.12s: %s", hash,
				rc == SMR_EUNAVAIL ? "database connection lost; retry"
						   : "the store failed");
	return SMR_OK;
}

/*
 * A write that names no parent: locks HEAD and takes it as c's parent.
 * When HEAD moved since c was sealed, c is sealed again on it, and what
 * was made ahead against the old parent (the index plan, the parent read)
 * goes; the JSON text of c's lists stays (a reseal changes only the
 * parent, the time and the hash).  HEAD stays locked to the commit, so
 * the rows that follow cannot meet another HEAD.
 */
static enum smr_rc put_onto_head(struct store *st, struct put *p, struct smr_err *err)
{
	int64_t head_id = -1;
	enum smr_rc rc = st->ops->head_lock(st, p->space_id, &head_id, &p->head, err);

	if (!rc && !same_hash(p->head, p->onto->parent_hash)) {
		p->reseal(p->head, p->onto, p->reseal_arg);
		if (!same_hash(p->head, p->onto->parent_hash))
			BUG("a write resealed on HEAD %.12s names parent %.12s",
			    p->head ? p->head : "none",
			    p->onto->parent_hash ? p->onto->parent_hash : "none");
		store_index_plan_drop(p->plan);
		p->plan = NULL;
		checkpoint_release(&p->parent);
		memset(&p->parent, 0, sizeof(p->parent));
	}
	p->expected = p->onto->parent_hash;
	return rc;
}

/*
 * Locks HEAD, checks it is the expected parent, inserts c on it, moves
 * HEAD to c, and indexes c and records the move in the same transaction:
 * by name, so a pipelining backend sends all of it in one round trip (a
 * failed check aborts every statement after it).  A write without a
 * parent (p->onto) takes the HEAD it locked instead of checking one.
 */
static enum smr_rc put_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct put *p = arg;
	enum smr_rc rc = SMR_OK;

	free(p->head);   /* a retry reads it again */
	p->head = NULL;
	if (p->onto)
		rc = put_onto_head(st, p, err);
	/* first: a read inside the pipeline must not follow a check that may fail */
	if (!rc && !p->c->merge_parent_hash && !p->plan)
		rc = put_parent(st, p, err);
	if (!rc && p->ref)
		rc = st->ops->space_check(st, p->space_id, p->ref, p->name, err);
	if (!rc && p->c->merge_parent_hash)
		return put_merge_rows(st, p, err);
	if (!rc && !p->onto)
		rc = st->ops->head_check(st, p->space_id, p->expected, &p->head, err);
	if (!rc)
		rc = st->ops->commit_insert_on_head(st, p->space_id, p->c, &p->text, err);
	if (!rc)
		rc = st->ops->head_move_to(st, p->space_id, p->c->hash, err);
	if (!rc && p->plan)
		rc = store_index_put_planned(st, p->space_id, p->c, p->plan, err);
	else if (!rc)
		rc = store_index_put(st, p->space_id, p->c, p->parent.hash ? &p->parent : NULL,
				     err);
	if (!rc)
		rc = record_put(st, p->space_id, p->c, err);
	if (!rc)
		head_memo_put(p->c);   /* the next write on this HEAD builds on it */
	return rc;
}

/*
 * A pipelining backend learns of a conflict only at commit, so which one it
 * was (stale parent, or c already there) is told afterwards from the HEAD
 * that head_lock read.
 */
enum smr_rc store_checkpoint_put(struct store *st, const char *space_id,
				 const struct checkpoint *c, const char *expected_head,
				 struct smr_err *err)
{
	struct put p = { .space_id = space_id, .expected = expected_head, .c = c };
	enum smr_rc rc;

	put_ahead(st, &p);
	rc = write_rows(st, put_rows, &p, err);
	if (rc == SMR_ECONFLICT)
		rc = same_hash(p.head, expected_head) ? exists_already(c, err)
						      : stale_parent(p.head, err);
	put_release(&p);
	return rc;
}

/*
 * store_checkpoint_put_on_head on Space space_id, checking with ref that
 * Space sp still is what it names when sp is not NULL (the _checked form).
 */
static enum smr_rc put_on_head_of(struct store *st, const char *space_id,
				  const struct space *sp, const char *ref, struct checkpoint *c,
				  store_reseal_fn reseal, void *arg, struct smr_err *err)
{
	struct put p = { .space_id = space_id, .expected = c->parent_hash, .c = c, .onto = c,
			 .ref = sp ? ref : NULL, .name = sp ? sp->name : NULL,
			 .reseal = reseal, .reseal_arg = arg };
	enum smr_rc rc;

	if (c->merge_parent_hash)
		BUG("a merge %.12s names its parents: it is not a write on HEAD", c->hash);
	put_ahead(st, &p);
	rc = write_rows(st, put_rows, &p, err);
	/* HEAD was locked and taken as the parent: the one conflict left is c already there */
	if (rc == SMR_ECONFLICT)
		rc = exists_already(c, err);
	else if (rc == SMR_ENOTFOUND && sp)
		rc = renamed_away(ref, sp, err);
	put_release(&p);
	return rc;
}

int store_checkpoint_recent(const char *hash, struct checkpoint *out)
{
	return head_memo_get(hash, out);
}

enum smr_rc store_checkpoint_put_on_head(struct store *st, const char *space_id,
					 struct checkpoint *c, store_reseal_fn reseal, void *arg,
					 struct smr_err *err)
{
	return put_on_head_of(st, space_id, NULL, NULL, c, reseal, arg, err);
}

enum smr_rc store_checkpoint_put_on_head_checked(struct store *st, const struct space *sp,
						 const char *ref, struct checkpoint *c,
						 store_reseal_fn reseal, void *arg,
						 struct smr_err *err)
{
	return put_on_head_of(st, sp->id, sp, ref, c, reseal, arg, err);
}

enum smr_rc store_checkpoint_put_checked(struct store *st, const struct space *sp,
					 const char *ref, const struct checkpoint *c,
					 const char *expected_head, struct smr_err *err)
{
	struct put p = { .space_id = sp->id, .expected = expected_head, .c = c, .ref = ref,
			 .name = sp->name };
	enum smr_rc rc;

	put_ahead(st, &p);
	rc = write_rows(st, put_rows, &p, err);
	if (rc == SMR_ENOTFOUND)
		rc = renamed_away(ref, sp, err);
	else if (rc == SMR_ECONFLICT)
		rc = same_hash(p.head, expected_head) ? exists_already(c, err)
						      : stale_parent(p.head, err);
	put_release(&p);
	return rc;
}

enum smr_rc store_data_version(struct store *st, uint64_t *v, struct smr_err *err)
{
	*v = 0;
	return st->ops->data_version ? st->ops->data_version(st, v, err) : SMR_OK;
}

enum smr_rc store_head_get(struct store *st, const char *space, struct checkpoint *out,
			   struct smr_err *err)
{
	return st->ops->head_get(st, space, out, err);
}

struct import {
	const struct session *s;
	struct turn *turns;
	size_t n;
};

static enum smr_rc import_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct import *im = arg;
	enum smr_rc rc = rows_session_insert(st, im->s, err);

	for (size_t i = 0; !rc && i < im->n; i++) {
		rc = st->ops->turn_insert(st, &im->turns[i], err);   /* numbered 1..n */
		if (!rc)
			rc = store_index_appended(st, &im->turns[i], err);
	}
	return rc;
}

struct patch_job {
	const char *space_id;
	store_build_fn build;
	void *arg;
	struct checkpoint *out;
	int built;                       /* build succeeded: a conflict now is out's */
	const char *ref, *name;          /* update_checked: what must still name the Space */
};

/*
 * HEAD (hash) as a patch or a write builds on it: as a write of this
 * process made it lately, when head_memo has it, else read.  SMRITI_TEST_HEAD_MEMO=check reads it as
 * well and stops on any difference (the test suites run so).
 */
static enum smr_rc head_read(struct store *st, const char *space_id, const char *hash,
			     struct checkpoint *head, struct smr_err *err)
{
	const char *check = getenv("SMRITI_TEST_HEAD_MEMO");
	struct checkpoint read = { 0 };
	char *a, *b;
	enum smr_rc rc;

	if (!head_memo_get(hash, head))
		return st->ops->commit_read(st, space_id, hash, head, err);
	if (!check || strcmp(check, "check"))
		return SMR_OK;
	rc = st->ops->commit_read(st, space_id, hash, &read, err);
	if (!rc) {
		a = checkpoint_content_text(head);
		b = checkpoint_content_text(&read);
		if (strcmp(a, b))
			BUG("HEAD %.12s remembered as %s, read as %s", hash, a, b);
		free(a);
		free(b);
	}
	checkpoint_release(&read);
	/* a parent whose transaction is still in flight is not there to compare: as remembered */
	if (rc == SMR_ENOTFOUND)
		return SMR_OK;
	if (rc)
		checkpoint_release(head);   /* a failed read leaves nothing */
	return rc;
}

/*
 * Under SMRITI_TEST_HEAD_MEMO=check (the test suites), c's hash, sealed from
 * its items' kept texts (item_texts.h), must be the one its whole
 * canonical form gives, as fsck computes it: an item changed in place
 * after a checkpoint took it would show here.
 */
static void check_sealed(const struct checkpoint *c)
{
	const char *check = getenv("SMRITI_TEST_HEAD_MEMO");
	char whole[HASH_HEX_LEN + 1];

	if (!check || strcmp(check, "check"))
		return;
	checkpoint_compute_hash(c, whole);
	if (strcmp(whole, c->hash))
		BUG("checkpoint sealed as %.12s hashes to %.12s written whole", c->hash, whole);
}

/*
 * Locks and reads HEAD, builds out on it, then writes out by name as a put
 * does (insert on the locked HEAD, move HEAD to its hash, index it against
 * HEAD, record the move), so a pipelining backend sends all of that with
 * the COMMIT.  A second run (a retry, or a group's) builds out afresh.
 */
static enum smr_rc patch_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct patch_job *u = arg;
	struct checkpoint head = { 0 };
	int64_t head_id = -1;
	char *hash = NULL;
	enum smr_rc rc = st->ops->head_lock(st, u->space_id, &head_id, &hash, err);

	u->built = 0;
	if (!rc && hash)
		rc = head_read(st, u->space_id, hash, &head, err);
	if (!rc)
		rc = u->build(hash ? &head : NULL, u->out, u->arg, err);
	if (!rc && (!same_hash(u->out->parent_hash, hash) || u->out->merge_parent_hash))
		BUG("a checkpoint built on HEAD %.12s names parent %.12s%s", hash ? hash : "none",
		    u->out->parent_hash ? u->out->parent_hash : "none",
		    u->out->merge_parent_hash ? " and a second one" : "");
	u->built = !rc;
	if (!rc)
		check_sealed(u->out);
	/* after the reads: a read inside the pipeline must not follow a check that may fail */
	if (!rc && u->ref)
		rc = st->ops->space_check(st, u->space_id, u->ref, u->name, err);
	if (!rc)
		rc = st->ops->commit_insert_on_head(st, u->space_id, u->out, NULL, err);
	if (!rc)
		rc = st->ops->head_move_to(st, u->space_id, u->out->hash, err);
	if (!rc)
		rc = store_index_put(st, u->space_id, u->out, hash ? &head : NULL, err);
	if (!rc)
		rc = record_put(st, u->space_id, u->out, err);
	if (!rc)
		head_memo_put(u->out);
	checkpoint_release(&head);
	free(hash);
	return rc;
}

/*
 * store_checkpoint_update on Space space_id, checking with ref that Space
 * sp still is what it names when sp is not NULL (the _checked form).
 */
static enum smr_rc update_of(struct store *st, const char *space_id, const struct space *sp,
			     const char *ref, store_build_fn build, void *arg,
			     struct checkpoint *out, struct smr_err *err)
{
	struct patch_job u = { space_id, build, arg, out, 0, sp ? ref : NULL,
			       sp ? sp->name : NULL };
	enum smr_rc rc = write_rows(st, patch_rows, &u, err);

	/* under HEAD's lock the one conflict left is a checkpoint already there */
	if (rc == SMR_ECONFLICT && u.built)
		rc = exists_already(out, err);
	else if (rc == SMR_ENOTFOUND && u.built && sp)
		rc = renamed_away(ref, sp, err);
	return rc;
}

enum smr_rc store_checkpoint_update(struct store *st, const char *space_id,
				    store_build_fn build, void *arg, struct checkpoint *out,
				    struct smr_err *err)
{
	return update_of(st, space_id, NULL, NULL, build, arg, out, err);
}

enum smr_rc store_checkpoint_update_checked(struct store *st, const struct space *sp,
					    const char *ref, store_build_fn build, void *arg,
					    struct checkpoint *out, struct smr_err *err)
{
	return update_of(st, sp->id, sp, ref, build, arg, out, err);
}

/* ---- sharing history between Spaces (fork, merge) ---- */

/*
 * The row of hash, which src_space_id must reach: the history is shared
 * (sql.h), so a Space that takes hash on (a fork, a merge, a
 * fast-forward) copies nothing; its ref and reflog row make it reach hash
 * and every ancestor of it.
 */
static enum smr_rc shared_row(struct store *st, const char *src_space_id, const char *hash,
			      int64_t *id, struct smr_err *err)
{
	return row_of(st, src_space_id, hash, id, err);
}

enum smr_rc store_checkpoint_ancestry(struct store *st, const char *space_id, const char *hash,
				      json_t *into, struct smr_err *err)
{
	return st->ops->commit_ancestry(st, space_id, hash, into, err);
}

struct fork {
	const struct space *sp;
	const char *src_space_id, *hash;
	const struct ref_move *mv;
};

/* The grant of a new Space to the person it was made for (ref_move.owner), when there is one. */
static enum smr_rc owner_rows(struct store *st, const char *space_id, const struct ref_move *mv,
			      struct smr_err *err)
{
	if (!mv || !mv->owner)
		return SMR_OK;
	return rows_space_owner(st, space_id, mv->owner, err);
}

static enum smr_rc fork_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct fork *f = arg;
	int64_t id = -1;
	enum smr_rc rc = st->ops->space_insert(st, f->sp, err);

	if (!rc)
		rc = shared_row(st, f->src_space_id, f->hash, &id, err);
	if (rc == SMR_ENOTFOUND)
		rc = smr_errf(err, rc, "no checkpoint %s in the source space", f->hash);
	if (!rc)
		rc = head_set(st, f->sp->id, id, err);
	if (!rc)
		rc = record_move(st, f->sp->id, NULL, f->hash, "fork", f->mv, err);
	if (!rc)
		rc = owner_rows(st, f->sp->id, f->mv, err);
	return rc;
}

enum smr_rc store_space_fork(struct store *st, const struct space *new_space,
			     const char *src_space_id, const char *hash,
			     const struct ref_move *mv, struct smr_err *err)
{
	struct fork f = { new_space, src_space_id, hash, mv };

	return write_rows(st, fork_rows, &f, err);
}

/* A merge's write, or a fast-forward's (c NULL: HEAD moves to hash). */
struct merge {
	const char *space_id, *src_space_id;
	const struct checkpoint *c;
	const char *expected, *hash, *actor;
};

static enum smr_rc merge_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct merge *m = arg;
	int64_t head_id = -1, id = -1;
	enum smr_rc rc = lock_expected(st, m->space_id, m->expected, &head_id, err);

	if (!rc)
		rc = shared_row(st, m->src_space_id, m->hash, &id, err);
	if (!rc && m->c)
		return put_on_head(st, m->space_id, m->c, head_id, id, err);
	if (!rc)
		rc = head_set(st, m->space_id, id, err);
	if (!rc) {
		char *why = xasprintf("merge: fast-forward to %.12s", m->hash);

		rc = record_move(st, m->space_id, m->expected, m->hash, "merge",
				 &(struct ref_move){ m->actor, why, NULL }, err);
		free(why);
	}
	return rc;
}

enum smr_rc store_checkpoint_merge(struct store *st, const char *space_id,
				   const struct checkpoint *c, const char *src_space_id,
				   struct smr_err *err)
{
	struct merge m = { .space_id = space_id, .src_space_id = src_space_id, .c = c,
			   .expected = c->parent_hash, .hash = c->merge_parent_hash };

	return write_rows(st, merge_rows, &m, err);
}

enum smr_rc store_head_fast_forward(struct store *st, const char *space_id,
				    const char *expected_head, const char *src_space_id,
				    const char *hash, const char *actor, struct smr_err *err)
{
	struct merge m = { .space_id = space_id, .src_space_id = src_space_id,
			   .expected = expected_head, .hash = hash, .actor = actor };

	return write_rows(st, merge_rows, &m, err);
}

static enum smr_rc handoff_rows(struct store *st, void *arg, struct smr_err *err)
{
	return rows_handoff_insert(st, arg, err);
}

enum smr_rc store_handoff_put(struct store *st, const struct handoff *h, struct smr_err *err)
{
	return write_rows(st, handoff_rows, (void *)h, err);
}

enum smr_rc store_session_create(struct store *st, const struct session *s,
				 struct smr_err *err)
{
	struct import im = { .s = s };

	return write_rows(st, import_rows, &im, err);
}

enum smr_rc store_session_import(struct store *st, const struct session *s,
				 struct turn *turns, size_t n, struct smr_err *err)
{
	struct import im = { .s = s, .turns = turns, .n = n };

	return write_rows(st, import_rows, &im, err);
}

/*
 * Makes what the rows run so far report through their pointers readable
 * now: a pipelining backend reads their results (one more round trip).  For
 * a write that needs one row's output in the next (a generation records the
 * number its turn got).
 */
static enum smr_rc flush_rows(struct store *st, struct smr_err *err)
{
	return st->ops->txn_flush ? st->ops->txn_flush(st, err) : SMR_OK;
}

struct append {
	struct turn *t;
	int64_t expected_last, last;
};

/*
 * The one way a turn joins a session (inside a transaction): numbered
 * last + 1 under the session's lock, refused when the session moved past
 * expected_last (>= 0).  Every append -- a send's user turn, a reply, a
 * generation's -- goes through here.
 */
static enum smr_rc append_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct append *a = arg;
	enum smr_rc rc = st->ops->last_seq_lock(st, a->t->session_id, a->expected_last,
						 &a->last, err);

	if (!rc)
		rc = st->ops->turn_insert(st, a->t, err);
	/* a turn placed on a path is its new end, and the newest: the shown path is the default */
	if (!rc && a->t->has_parent)
		rc = rows_session_set_leaf(st, a->t->session_id, 0, err);
	if (!rc)
		rc = store_index_appended(st, a->t, err);
	return rc;
}

static enum smr_rc moved_on(const struct append *a, struct smr_err *err)
{
	return smr_errf(err, SMR_ECONFLICT,
			"session has moved on: its last turn is now %lld, not %lld",
			(long long)a->last, (long long)a->expected_last);
}

struct leaf {
	const char *session_id;
	int64_t leaf;
};

static enum smr_rc leaf_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct leaf *l = arg;
	int64_t last = 0;
	enum smr_rc rc = st->ops->last_seq_lock(st, l->session_id, -1, &last, err);

	if (!rc)
		rc = rows_session_set_leaf(st, l->session_id, l->leaf, err);
	return rc;
}

enum smr_rc store_session_set_leaf(struct store *st, const char *session_id, int64_t leaf,
				   struct smr_err *err)
{
	struct leaf l = { session_id, leaf };

	return write_rows(st, leaf_rows, &l, err);
}

enum smr_rc store_turn_append(struct store *st, struct turn *t, int64_t expected_last,
			      struct smr_err *err)
{
	struct append a = { .t = t, .expected_last = expected_last };
	enum smr_rc rc = write_rows(st, append_rows, &a, err);

	return rc == SMR_ECONFLICT ? moved_on(&a, err) : rc;
}

/* The 409 of a session whose reply is running, naming the generation when it can. */
static enum smr_rc running_conflict(struct store *st, const char *session_id,
				    struct smr_err *err)
{
	struct generation run = { 0 };

	if (!store_generation_running(st, session_id, &run, NULL))
		smr_errf(err, SMR_ECONFLICT, "session '%s' is already generating a reply"
			 " (generation %s); wait for it or stop it"
			 " (POST /v4/generations/%s/stop)", session_id, run.id, run.id);
	else
		smr_errf(err, SMR_ECONFLICT, "session '%s' is already generating a reply;"
			 " wait for it or stop it", session_id);
	generation_release(&run);
	return SMR_ECONFLICT;
}

struct gen_begin {
	struct generation *g;
	struct append user;              /* .t NULL: a failed turn reused */
	int busy;                        /* the session has a running generation */
};

static enum smr_rc begin_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct gen_begin *b = arg;
	enum smr_rc rc = rows_generation_insert(st, b->g, err);

	b->busy = rc == SMR_ECONFLICT;
	if (rc || !b->user.t)
		return rc;
	rc = append_rows(st, &b->user, err);
	if (!rc)
		rc = flush_rows(st, err);        /* the turn's number, for the generation */
	if (!rc) {
		b->g->user_seq = b->user.t->seq;
		rc = rows_generation_update(st, b->g, err);
	}
	return rc;
}

enum smr_rc store_generation_begin(struct store *st, struct generation *g, struct turn *user,
				   int64_t expected_last, struct smr_err *err)
{
	struct gen_begin b = { .g = g, .user = { .t = user, .expected_last = expected_last } };
	enum smr_rc rc = write_rows(st, begin_rows, &b, err);

	if (b.busy)
		return running_conflict(st, g->session_id, err);
	if (rc == SMR_ECONFLICT && user)
		smr_errf(err, rc, "session '%s' got a new turn while this message was being"
			 " sent; reload it and send again", g->session_id);
	return rc;
}

struct gen_end {
	struct generation **g;
	struct turn **reply;
	size_t n;
};

/* Appends each reply (if any), records its number and updates its generation. */
static enum smr_rc end_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct gen_end *e = arg;
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < e->n; i++) {
		struct append a = { .t = e->reply[i], .expected_last = -1 };
		size_t running = 0;

		/* fenced: a server that took it over (this one's lease lapsed) has ended it */
		rc = rows_generation_claim(st, e->g[i]->id, NULL, NULL, NULL, &running, err);
		if (!rc && !running)
			rc = smr_errf(err, SMR_ECONFLICT, "generation '%s' was taken over by another"
				      " server (this server's lease lapsed); its reply was not stored",
				      e->g[i]->id);
		if (rc)
			break;
		if (a.t) {
			rc = append_rows(st, &a, err);
			if (!rc)
				rc = flush_rows(st, err);   /* a and the turn's number, read now */
		}
		if (!rc) {
			e->g[i]->assistant_seq = a.t ? a.t->seq : -1;
			rc = rows_generation_update(st, e->g[i], err);
		}
	}
	return rc;
}

enum smr_rc store_generation_end(struct store *st, struct generation *g, struct turn *reply,
				 struct smr_err *err)
{
	struct gen_end e = { .g = &g, .reply = &reply, .n = 1 };

	return write_rows(st, end_rows, &e, err);
}

enum smr_rc store_generation_end_many(struct store *st, struct generation **g,
				      struct turn **reply, size_t n, struct smr_err *err)
{
	struct gen_end e = { .g = g, .reply = reply, .n = n };

	return write_rows(st, end_rows, &e, err);
}

struct gen_takeover {
	const struct generation *g;
	const char *text, *reason, *now;
	int *taken;
};

/* Claims the generation (while it runs), then keeps what it had: its text, or a reason. */
static enum smr_rc takeover_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct gen_takeover *o = arg;
	const struct generation *g = o->g;
	struct turn t = { 0 };
	struct append a = { .t = &t, .expected_last = -1 };
	size_t n = 0;
	enum smr_rc rc = rows_generation_claim(st, g->id, TURN_INTERRUPTED, o->reason, o->now,
					       &n, err);

	*o->taken = !rc && n;
	if (rc || !n)
		return rc;
	if (!o->text || !*o->text || g->user_seq < 0)
		return g->user_seq < 0 ? SMR_OK :
		       rows_turn_set_error_seq(st, g->session_id, g->user_seq, o->reason, err);
	t = (struct turn){ .session_id = g->session_id, .role = "assistant",
			   .content = (char *)o->text, .provider = g->provider, .model = g->model,
			   .prompt_tokens = -1, .completion_tokens = -1, .latency_ms = -1,
			   .error = (char *)o->reason, .status = TURN_INTERRUPTED,
			   .created_at = (char *)o->now, .has_parent = 1,
			   .parent_seq = g->user_seq };
	rc = append_rows(st, &a, err);
	if (!rc)
		rc = flush_rows(st, err);        /* the turn's number, for the generation */
	if (!rc) {
		struct generation done = *g;

		done.status = TURN_INTERRUPTED;
		done.error = (char *)o->reason;
		done.finished_at = (char *)o->now;
		done.assistant_seq = t.seq;
		rc = rows_generation_update(st, &done, err);
	}
	return rc;
}

enum smr_rc store_generation_take_over(struct store *st, const struct generation *g,
				       const char *text, const char *reason, const char *now,
				       int *taken, struct smr_err *err)
{
	struct gen_takeover o = { g, text, reason, now, taken };

	*taken = 0;
	return write_rows(st, takeover_rows, &o, err);
}

struct gen_publish {
	const struct gen_events *b;
	size_t n;
};

static enum smr_rc publish_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct gen_publish *p = arg;
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < p->n; i++)
		rc = rows_generation_events_put(st, &p->b[i], err);
	return rc;
}

enum smr_rc store_generation_publish(struct store *st, const struct gen_events *b, size_t n,
				     struct smr_err *err)
{
	struct gen_publish p = { b, n };

	return n ? write_rows(st, publish_rows, &p, err) : SMR_OK;
}

static enum smr_rc update_rows(struct store *st, void *arg, struct smr_err *err)
{
	return rows_generation_update(st, arg, err);
}

enum smr_rc store_generation_update(struct store *st, const struct generation *g,
				    struct smr_err *err)
{
	return write_rows(st, update_rows, (void *)g, err);
}

/* A Space's own move: created, renamed or deleted. */
struct space_move {
	const struct space *sp;          /* create */
	const char *id, *new_name;       /* rename (new_name) and delete */
	const struct ref_move *mv;
};

static enum smr_rc create_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct space_move *m = arg;
	enum smr_rc rc = st->ops->space_create(st, m->sp, err);

	if (!rc)
		rc = record_move(st, m->sp->id, NULL, NULL, "create", m->mv, err);
	if (!rc)
		rc = owner_rows(st, m->sp->id, m->mv, err);
	return rc;
}

enum smr_rc store_space_create(struct store *st, const struct space *sp,
			       const struct ref_move *mv, struct smr_err *err)
{
	struct space_move m = { .sp = sp, .mv = mv };

	return write_rows(st, create_rows, &m, err);
}

/* Renames (new_name) or deletes a Space under its HEAD's lock, recording the move. */
static enum smr_rc space_move_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct space_move *m = arg;
	int64_t head_id = -1;
	char *head = NULL;
	enum smr_rc rc = st->ops->head_lock(st, m->id, &head_id, &head, err);

	if (!rc && m->new_name)
		rc = rows_space_rename(st, m->id, m->new_name, err);
	if (!rc && m->new_name)
		rc = record_move(st, m->id, head, head, "rename", m->mv, err);
	/* a deletion is recorded first, so that the row takes the name the Space had */
	if (!rc && !m->new_name)
		rc = record_move(st, m->id, head, NULL, "delete", m->mv, err);
	if (!rc && !m->new_name)
		rc = rows_space_delete(st, m->id, m->mv && m->mv->at ? m->mv->at : "", err);
	free(head);
	return rc;
}

enum smr_rc store_space_rename(struct store *st, const char *id, const char *new_name,
			       const struct ref_move *mv, struct smr_err *err)
{
	struct space_move m = { .id = id, .new_name = new_name, .mv = mv };

	return write_rows(st, space_move_rows, &m, err);
}

enum smr_rc store_space_delete(struct store *st, const char *id, const struct ref_move *mv,
			       struct smr_err *err)
{
	struct space_move m = { .id = id, .mv = mv };

	return write_rows(st, space_move_rows, &m, err);
}

/* ---- import: many rows, one transaction ---- */

/*
 * Fresh row ids for s's checkpoints that no row holds yet (-1 for the
 * others; store_ops.commit_reserve), or NULL when the backend writes each
 * as it goes.  Caller frees.
 */
static int64_t *import_reserve(struct store *st, const struct import_space *s, enum smr_rc *rc,
			       struct smr_err *err)
{
	const char **hashes;
	int64_t *ids;

	if (!st->ops->commit_reserve || !s->n_commits)
		return NULL;
	hashes = xcalloc(s->n_commits, sizeof(*hashes));
	ids = xcalloc(s->n_commits, sizeof(*ids));
	for (size_t i = 0; i < s->n_commits; i++)
		hashes[i] = s->commits[i]->hash;
	*rc = st->ops->commit_reserve(st, hashes, s->n_commits, ids, err);
	free(hashes);
	return ids;
}

/*
 * Inserts checkpoint i of s on its parents' rows and indexes it: as row
 * fresh when one was reserved (no row holds its hash, so none of its
 * search rows is there either), else as commit_insert places it.
 */
static enum smr_rc import_commit(struct store *st, const struct import_space *s, size_t i,
				 int64_t fresh, int64_t parent_id, int64_t merge_id, int64_t *id,
				 struct smr_err *err)
{
	const struct checkpoint *c = s->commits[i];
	const struct checkpoint_text *text = s->texts ? s->texts[i] : NULL;
	enum smr_rc rc;

	*id = fresh;
	if (fresh >= 0)
		rc = st->ops->commit_insert_as(st, s->space->id, c, text, fresh, parent_id,
					       merge_id, err);
	else
		rc = st->ops->commit_insert(st, s->space->id, c, text, parent_id, merge_id, id,
					    err);
	if (rc == SMR_ECONFLICT)
		rc = smr_errf(err, rc, "checkpoint %.12s already exists", c->hash);
	if (!rc)
		rc = store_index_checkpoint(st, c, *id, s->parents ? s->parents[i] : NULL,
					    fresh < 0, err);
	if (!rc && s->record_commits)
		rc = record_put(st, s->space->id, c, err);
	/* its row names c and its parent, which no ref takes here (store/sql.h) */
	if (!rc && s->record_commits)
		rc = rows_reach_named(st, s->space->id, c->parent_hash, err);
	if (!rc && s->record_commits)
		rc = rows_reach_named(st, s->space->id, c->hash, err);
	return rc;
}

/* Inserts the new checkpoints of one Space; the parent is usually the one before. */
static enum smr_rc import_commits(struct store *st, const struct import_space *s,
				  struct smr_err *err)
{
	const char *last = NULL;
	int64_t last_id = -1, parent_id, merge_id, id = -1;
	enum smr_rc rc = SMR_OK;
	int64_t *fresh = import_reserve(st, s, &rc, err);

	for (size_t i = 0; !rc && i < s->n_commits; i++) {
		const struct checkpoint *c = s->commits[i];

		parent_id = merge_id = -1;
		if (c->parent_hash && last && !strcmp(c->parent_hash, last))
			parent_id = last_id;
		else if (c->parent_hash)
			rc = row_of(st, s->space->id, c->parent_hash, &parent_id, err);
		if (!rc && c->merge_parent_hash)
			rc = row_of(st, s->space->id, c->merge_parent_hash, &merge_id, err);
		if (!rc)
			rc = import_commit(st, s, i, fresh ? fresh[i] : -1, parent_id, merge_id,
					   &id, err);
		last = c->hash;
		last_id = id;
	}
	free(fresh);
	return rc;
}

static enum smr_rc import_head(struct store *st, const struct import_space *s,
			       struct smr_err *err)
{
	int64_t head_id = -1, id = -1;
	char *old = NULL;
	enum smr_rc rc = st->ops->head_lock(st, s->space->id, &head_id, &old, err);

	if (!rc)
		rc = row_of(st, s->space->id, s->head, &id, err);
	if (!rc)
		rc = head_set(st, s->space->id, id, err);
	if (!rc && s->move)
		rc = record_move(st, s->space->id, old, s->head, "import", s->move, err);
	free(old);
	return rc;
}

static enum smr_rc import_one(struct store *st, const struct import_space *s,
			      struct smr_err *err)
{
	enum smr_rc rc = s->create ? st->ops->space_create(st, s->space, err) : SMR_OK;

	if (!rc && s->create && s->created)
		rc = record_move(st, s->space->id, NULL, NULL, "create", s->created, err);
	if (!rc)
		rc = import_commits(st, s, err);
	for (size_t i = 0; !rc && i < s->n_sessions; i++)
		rc = rows_session_insert(st, s->sessions[i], err);
	for (size_t i = 0; !rc && i < s->n_turns; i++) {
		rc = st->ops->turn_insert(st, s->turns[i], err);
		if (!rc)
			rc = store_index_appended(st, s->turns[i], err);
	}
	/* a new session's chosen path, once its turns are in */
	for (size_t i = 0; !rc && i < s->n_sessions; i++)
		if (s->sessions[i]->leaf_seq > 0)
			rc = rows_session_set_leaf(st, s->sessions[i]->id,
						       s->sessions[i]->leaf_seq, err);
	for (size_t i = 0; !rc && i < s->n_reflog; i++) {
		const struct reflog_entry *e = s->reflog[i];
		struct ref_move mv = { e->actor, e->reason, e->created_at };

		rc = rows_reflog_insert(st, s->space->id, e->space_name, e->old_hash,
					e->new_hash, e->action, &mv, err);
		/* a bundle's history: no ref here took what it names (store/sql.h) */
		if (!rc)
			rc = rows_reach_named(st, s->space->id, e->old_hash, err);
		if (!rc)
			rc = rows_reach_named(st, s->space->id, e->new_hash, err);
	}
	if (!rc && s->head)
		rc = import_head(st, s, err);
	return rc;
}

enum smr_rc store_import(struct store *st, const struct import_space *v, size_t n,
			 struct smr_err *err)
{
	enum smr_rc rc = st->ops->txn_begin(st, err);

	if (rc)
		return rc;
	if (st->ops->bulk)
		st->ops->bulk(st, 1);
	for (size_t i = 0; !rc && i < n; i++)
		rc = import_one(st, &v[i], err);
	rc = txn_end(st, rc, err);
	if (st->ops->bulk)
		st->ops->bulk(st, 0);
	return rc;
}
