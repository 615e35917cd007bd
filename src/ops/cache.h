/*
 * cache.h -- what an operations context keeps between calls (ops/cache.c
 * has the rule for when each entry stops counting); private to src/ops.
 */
#ifndef SMRITI_OPS_CACHE_H
#define SMRITI_OPS_CACHE_H

#include <jansson.h>
#include <stdint.h>

#include "domain/model.h"

/*
 * The last HEAD document a context read (ops_head_doc).  The document is a
 * function of the checkpoint's hash, its Space's name and the Space's
 * newest hand-off note alone (the hash covers every other member).
 */
struct head_cache {
	char *space;                     /* as asked for last: id or name */
	uint64_t version;                /* the store's data version read before that (0: none) */
	json_t *doc;
	char *hash, *name;               /* the checkpoint doc renders, and its Space's name */
	int64_t handoff;                 /* the hand-off note doc carries (0: none) */
	/*
	 * The data version this request's auth check read (ops/ops_auth.c), reused
	 * instead of a second read; 0: none.  Cleared when a request ends and
	 * before any write (api_call), so a write is never followed by a HEAD
	 * read that would not see it.
	 */
	uint64_t seen;
};

/* The document kept for space while the data version is still version (nonzero); new reference or NULL. */
json_t *head_cache_unmoved(const struct head_cache *h, const char *space, uint64_t version);
/* The document kept when it renders the same hash, Space name and note; new reference or NULL. */
json_t *head_cache_same(const struct head_cache *h, const char *hash, const char *name,
			int64_t handoff);
/* Keeps doc (a reference of its own is taken) as what hash, name and handoff render. */
void head_cache_keep(struct head_cache *h, json_t *doc, const char *hash, const char *name,
		     int64_t handoff);
/* Records that space was asked for at version: what head_cache_unmoved compares with. */
void head_cache_asked(struct head_cache *h, const char *space, uint64_t version);
void head_cache_release(struct head_cache *h);

/*
 * The Space the last checkpoint write named (ops_checkpoint_create): a
 * write on a parent, or on HEAD, then skips looking the Space up.
 */
struct space_memo {
	char *ref;                       /* as given: id or name */
	struct space sp;                 /* its id, name and HEAD when last written */
	int joined;                      /* counted among the shelf's users */
};

/* The Space ref named at a recent write (this context's, or the process's shelf), or NULL. */
const struct space *space_memo_find(struct space_memo *m, const char *ref);
/* Remembers that ref named sp (and its HEAD, a hint), here and on the shelf. */
void space_memo_keep(struct space_memo *m, const char *ref, const struct space *sp);
/*
 * ref's entry did not hold: forgotten here, and with gone (ref names
 * another Space now, or none) on the shelf too.
 */
void space_memo_forget(struct space_memo *m, const char *ref, int gone);
/* Frees m; the last context out empties the shelf. */
void space_memo_release(struct space_memo *m);

#endif
