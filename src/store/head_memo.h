/*
 * head_memo.h -- the checkpoints patches wrote lately, kept parsed for the
 * next patch on the same HEAD (head_memo.c).  Private to src/store.
 */
#ifndef SMRITI_STORE_HEAD_MEMO_H
#define SMRITI_STORE_HEAD_MEMO_H

#include "domain/model.h"

/*
 * 1 and checkpoint hash in *out (caller releases), else 0.  *out shares the
 * memo's very lists (checkpoint_share_lists): change none in place.
 */
int head_memo_get(const char *hash, struct checkpoint *out);
/*
 * Remembers c (sealed: its hash and texts set), sharing its very lists:
 * c's may not change after.  One too big to keep is not remembered.
 */
void head_memo_put(const struct checkpoint *c);
/* What the remembered checkpoints count against the memo's byte bound (for tests). */
size_t head_memo_bytes(void);

#endif
