/*
 * head_memo.c -- the checkpoints patches were built lately, kept parsed, so
 * the next patch on the same HEAD builds on them instead of reading its
 * HEAD back and parsing its whole state again (docs/storage.md).
 *
 * A checkpoint is a function of its hash, which covers every field but the
 * name of the Space holding it (which a patch's build sets anew), so one
 * remembered on any handle (of any database) will do, as index.c's memos
 * do.  Process-wide: a server's writes go to whichever worker's handle is
 * free, and a group's leader writes for other threads.  Bounded in count,
 * oldest out first.
 */
#include "store/head_memo.h"

#include "domain/checkpoint.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a checkpoint each of 64 writers wrote last: a write's parent is often its own last one */
#define MEMO_SLOTS 64

static struct {
	pthread_mutex_t mu;
	struct checkpoint *v[MEMO_SLOTS];   /* oldest first */
	size_t n;
} memo = { .mu = PTHREAD_MUTEX_INITIALIZER };

/*
 * dst (uninitialised) becomes a copy of src sharing its very lists
 * (checkpoint_share_lists): a checkpoint of 1,000 items is counted once
 * more here, not copied.  Whoever gets or puts one so changes no list of
 * it in place (patch.c copies a list before it changes it).
 */
static void copy_whole(struct checkpoint *dst, const struct checkpoint *src)
{
	checkpoint_init(dst);
	checkpoint_share_lists(dst, src);
	dst->hash = src->hash ? xstrdup(src->hash) : NULL;
	dst->parent_hash = src->parent_hash ? xstrdup(src->parent_hash) : NULL;
	dst->merge_parent_hash = src->merge_parent_hash ? xstrdup(src->merge_parent_hash) : NULL;
	dst->space = src->space ? xstrdup(src->space) : NULL;
	dst->created_at = src->created_at ? xstrdup(src->created_at) : NULL;
}

int head_memo_get(const char *hash, struct checkpoint *out)
{
	int found = 0;

	pthread_mutex_lock(&memo.mu);
	for (size_t i = memo.n; i-- > 0 && !found;)
		if (!strcmp(memo.v[i]->hash, hash)) {
			copy_whole(out, memo.v[i]);
			found = 1;
		}
	pthread_mutex_unlock(&memo.mu);
	return found;
}

void head_memo_put(const struct checkpoint *c)
{
	struct checkpoint *kept, *out = NULL;

	if (!c->hash)
		return;
	kept = xmalloc(sizeof(*kept));
	copy_whole(kept, c);
	pthread_mutex_lock(&memo.mu);
	if (memo.n == MEMO_SLOTS) {
		out = memo.v[0];
		memmove(&memo.v[0], &memo.v[1], --memo.n * sizeof(kept));
	}
	memo.v[memo.n++] = kept;
	pthread_mutex_unlock(&memo.mu);
	if (out) {   /* freed outside the lock */
		checkpoint_release(out);
		free(out);
	}
}
