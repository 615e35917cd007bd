/*
 * head_memo.c -- the checkpoints patches were built lately, kept parsed, so
 * the next patch on the same HEAD builds on them instead of reading its
 * HEAD back and parsing its whole state again (docs/storage.md).
 *
 * A checkpoint is a function of its hash, which covers every field but the
 * name of the Space holding it (which a patch's build sets anew), so one
 * remembered on any handle (of any database) will do, as index.c's memos
 * do.  Process-wide: a server's writes go to whichever worker's handle is
 * free, and a group's leader writes for other threads.  Bounded in count
 * and in bytes, oldest out first: 64 states of 4 MiB each would hold
 * gigabytes of parsed JSON.
 */
#include "store/head_memo.h"

#include "domain/checkpoint.h"
#include "domain/item_texts.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a checkpoint each of 64 writers wrote last: a write's parent is often its own last one */
#define MEMO_SLOTS 64
/*
 * and at most this many bytes of the kept checkpoints' texts (memo_size);
 * one over a quarter of it is not kept.  A state of 1,000 items counts
 * about 200 KB, so the count bounds the memo before this does.
 */
#define MEMO_BYTES (32u << 20)

static struct {
	pthread_mutex_t mu;
	struct checkpoint *v[MEMO_SLOTS];   /* oldest first */
	size_t size[MEMO_SLOTS];            /* v[i]'s memo_size */
	size_t n, bytes;
} memo = { .mu = PTHREAD_MUTEX_INITIALIZER };

/*
 * About the memory c's state holds: its items' JSON texts, which sealing
 * keeps (both forms, so about twice their JSON), and its two texts.  A
 * checkpoint without them is not a patch's, and counts as too big to keep.
 */
static size_t memo_size(const struct checkpoint *c)
{
	if (!c->texts)
		return SIZE_MAX;
	return item_texts_bytes(c->texts) + (c->title ? strlen(c->title) : 0) +
	       (c->summary ? strlen(c->summary) : 0) + sizeof(*c);
}

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
	struct checkpoint *kept, *out[MEMO_SLOTS];
	size_t size = memo_size(c), n = 0;

	if (!c->hash || size > MEMO_BYTES / 4)
		return;
	kept = xmalloc(sizeof(*kept));
	copy_whole(kept, c);
	pthread_mutex_lock(&memo.mu);
	while (memo.n && (memo.n == MEMO_SLOTS || memo.bytes + size > MEMO_BYTES)) {
		out[n++] = memo.v[0];
		memo.bytes -= memo.size[0];
		--memo.n;
		memmove(&memo.v[0], &memo.v[1], memo.n * sizeof(kept));
		memmove(&memo.size[0], &memo.size[1], memo.n * sizeof(size));
	}
	memo.v[memo.n] = kept;
	memo.size[memo.n++] = size;
	memo.bytes += size;
	pthread_mutex_unlock(&memo.mu);
	for (size_t i = 0; i < n; i++) {   /* freed outside the lock */
		checkpoint_release(out[i]);
		free(out[i]);
	}
}

size_t head_memo_bytes(void)
{
	size_t bytes;

	pthread_mutex_lock(&memo.mu);
	bytes = memo.bytes;
	pthread_mutex_unlock(&memo.mu);
	return bytes;
}
