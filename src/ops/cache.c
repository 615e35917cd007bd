/*
 * cache.c -- what an operations context keeps between calls, and when each
 * entry stops counting.
 *
 * The one rule: an entry is a hint, never an answer the store did not
 * give.  Each is keyed by what it is a function of, and is checked against
 * the store (or dropped) before it is used:
 *
 *  - HEAD document (struct head_cache, per context): a function of the
 *    checkpoint's hash, the Space's name and its newest hand-off note.
 *    Handed out without a read while the store's data version
 *    (store_data_version) is the one read when it was kept; where it moved,
 *    or the backend has none (PostgreSQL), HEAD is read again and the kept
 *    document is handed out only for the same three.  Any commit by any
 *    handle or process moves the version, so a read never misses a write.
 *  - Space a name meant (struct space_memo, per context, and the shelf,
 *    process-wide): kept by a checkpoint write, with the HEAD it left; the
 *    next write that names the Space and a full parent hash, or no parent,
 *    skips the look-up, and the store checks in that write's own
 *    transaction that the name still means that Space
 *    (store_checkpoint_put_checked, store_checkpoint_put_on_head_checked).
 *    The HEAD is a guess at the parent of a write that names none, which
 *    the store seals again when HEAD is another.  A conflict forgets it
 *    here; "not found" (renamed, deleted) forgets it on the shelf too.
 *  - Tokens, roles and Spaces a caller named (struct auth_cache, per
 *    context; its code is ops/ops_auth.c's, next to the checks that fill it):
 *    valid while the auth state has not moved, checked once per request
 *    against the server's keeper (ops/auth_keeper.c) or the store's auth
 *    epoch; any change made through this context clears it at once.
 *  - Below the operations, the store keeps the index items of the
 *    checkpoints it indexed last (store/index.c), keyed by hash: a
 *    checkpoint is immutable, so such an entry is never wrong, only gone.
 *
 * A new cache states its rule here, in the same words: what it is a
 * function of, and what the store checks before the entry is used.
 */
#include "ops/cache.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

json_t *head_cache_unmoved(const struct head_cache *h, const char *space, uint64_t version)
{
	if (version && h->doc && h->version == version && !strcmp(h->space, space))
		return json_incref(h->doc);
	return NULL;
}

json_t *head_cache_same(const struct head_cache *h, const char *hash, const char *name,
			int64_t handoff)
{
	if (h->doc && !strcmp(h->hash, hash) && !strcmp(h->name, name) && h->handoff == handoff)
		return json_incref(h->doc);
	return NULL;
}

void head_cache_keep(struct head_cache *h, json_t *doc, const char *hash, const char *name,
		     int64_t handoff)
{
	json_decref(h->doc);
	free(h->hash);
	free(h->name);
	h->doc = json_incref(doc);
	h->hash = xstrdup(hash);
	h->name = xstrdup(name);
	h->handoff = handoff;
}

void head_cache_asked(struct head_cache *h, const char *space, uint64_t version)
{
	free(h->space);
	h->space = xstrdup(space);
	h->version = version;
}

void head_cache_release(struct head_cache *h)
{
	free(h->space);
	free(h->hash);
	free(h->name);
	json_decref(h->doc);
	memset(h, 0, sizeof(*h));
}

/*
 * The Spaces that writes named lately, process-wide: a server's writes go
 * to whichever worker is free, so the one a context remembered was nearly
 * always another Space's, and each write looked its Space up again.  A
 * hint only, as a context's own memo is: the write's transaction checks
 * that the name still means that Space (store_checkpoint_put_checked), so
 * an entry from any context, or any database, costs at worst the long way.
 * Emptied when the last context that used it closes.
 */
#define SPACE_SHELF 64

static struct {
	pthread_mutex_t mu;
	struct { char *ref, *id, *name, *head; } v[SPACE_SHELF];
	size_t next;                     /* the slot to fill next (oldest) */
	int users;                       /* contexts that shelved or looked */
} shelf = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void shelf_join(struct space_memo *m)
{
	if (m->joined)
		return;
	m->joined = 1;
	pthread_mutex_lock(&shelf.mu);
	shelf.users++;
	pthread_mutex_unlock(&shelf.mu);
}

/* Copies the Space the shelf has for ref into m (as space_memo_keep would); 0 when it has none. */
static int shelf_find(struct space_memo *m, const char *ref)
{
	int found = 0;

	shelf_join(m);
	pthread_mutex_lock(&shelf.mu);
	for (size_t i = 0; i < SPACE_SHELF && !found; i++) {
		if (!shelf.v[i].ref || strcmp(shelf.v[i].ref, ref))
			continue;
		free(m->ref);
		space_release(&m->sp);
		m->ref = xstrdup(ref);
		m->sp.id = xstrdup(shelf.v[i].id);
		m->sp.name = xstrdup(shelf.v[i].name);
		m->sp.head = shelf.v[i].head ? xstrdup(shelf.v[i].head) : NULL;
		found = 1;
	}
	pthread_mutex_unlock(&shelf.mu);
	return found;
}

static void shelf_put(const char *ref, const struct space *sp)
{
	char *gone[4];
	size_t i;

	pthread_mutex_lock(&shelf.mu);
	/* ref's own slot, else an empty one (shelf_drop leaves holes), else the oldest */
	for (i = 0; i < SPACE_SHELF && !(shelf.v[i].ref && !strcmp(shelf.v[i].ref, ref)); i++)
		;
	for (size_t j = 0; i == SPACE_SHELF && j < SPACE_SHELF; j++)
		if (!shelf.v[j].ref)
			i = j;
	if (i == SPACE_SHELF) {
		i = shelf.next;
		shelf.next = (shelf.next + 1) % SPACE_SHELF;
	}
	gone[0] = shelf.v[i].ref;
	gone[1] = shelf.v[i].id;
	gone[2] = shelf.v[i].name;
	gone[3] = shelf.v[i].head;
	shelf.v[i].ref = xstrdup(ref);
	shelf.v[i].id = xstrdup(sp->id);
	shelf.v[i].name = xstrdup(sp->name);
	shelf.v[i].head = sp->head ? xstrdup(sp->head) : NULL;
	pthread_mutex_unlock(&shelf.mu);
	for (i = 0; i < 4; i++)
		free(gone[i]);
}

static void shelf_drop(const char *ref)
{
	char *gone[4] = { NULL, NULL, NULL, NULL };

	pthread_mutex_lock(&shelf.mu);
	for (size_t i = 0; i < SPACE_SHELF; i++) {
		if (!shelf.v[i].ref || strcmp(shelf.v[i].ref, ref))
			continue;
		gone[0] = shelf.v[i].ref;
		gone[1] = shelf.v[i].id;
		gone[2] = shelf.v[i].name;
		gone[3] = shelf.v[i].head;
		memset(&shelf.v[i], 0, sizeof(shelf.v[i]));
		break;
	}
	pthread_mutex_unlock(&shelf.mu);
	for (size_t i = 0; i < 4; i++)
		free(gone[i]);
}

void space_memo_release(struct space_memo *m)
{
	free(m->ref);
	space_release(&m->sp);
	if (m->joined) {
		pthread_mutex_lock(&shelf.mu);
		if (--shelf.users == 0) {
			for (size_t i = 0; i < SPACE_SHELF; i++) {
				free(shelf.v[i].ref);
				free(shelf.v[i].id);
				free(shelf.v[i].name);
				free(shelf.v[i].head);
			}
			memset(shelf.v, 0, sizeof(shelf.v));
			shelf.next = 0;
		}
		pthread_mutex_unlock(&shelf.mu);
	}
	memset(m, 0, sizeof(*m));
}

void space_memo_keep(struct space_memo *m, const char *ref, const struct space *sp)
{
	/* copied before the old entry goes: sp and ref may be m's own */
	struct space kept = { .id = xstrdup(sp->id), .name = xstrdup(sp->name),
			      .head = sp->head ? xstrdup(sp->head) : NULL };
	char *r = xstrdup(ref);

	shelf_join(m);
	shelf_put(r, &kept);
	free(m->ref);
	space_release(&m->sp);
	m->ref = r;
	m->sp = kept;
}

const struct space *space_memo_find(struct space_memo *m, const char *ref)
{
	if ((!m->ref || strcmp(m->ref, ref)) && !shelf_find(m, ref))
		return NULL;
	return &m->sp;
}

void space_memo_forget(struct space_memo *m, const char *ref, int gone)
{
	if (gone)
		shelf_drop(ref);
	free(m->ref);
	m->ref = NULL;
}
