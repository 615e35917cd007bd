/*
 * head_memo.h -- the checkpoints patches wrote lately, kept parsed for the
 * next patch on the same HEAD (head_memo.c).  Private to src/store.
 */
#ifndef SMRITI_STORE_HEAD_MEMO_H
#define SMRITI_STORE_HEAD_MEMO_H

#include "domain/model.h"

/* 1 and a deep copy of checkpoint hash in *out (caller releases), else 0. */
int head_memo_get(const char *hash, struct checkpoint *out);
/* Remembers a deep copy of c (sealed: its hash set). */
void head_memo_put(const struct checkpoint *c);

#endif
