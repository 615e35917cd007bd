/*
 * nudge.h -- the "consider checkpointing" signal returned with each send.
 *
 * Checkpoints are only ever created on explicit request (a Checkpoint is
 * a point a person or agent chose; nothing saves one by itself); this only says whether suggesting
 * one is worthwhile and why.  Pure code: the caller supplies the count of
 * turns since the Space's last Checkpoint and the texts to look at.
 */
#ifndef SMRITI_NUDGE_H
#define SMRITI_NUDGE_H

#include <stddef.h>
#include <stdint.h>

#define NUDGE_DEFAULT_THRESHOLD 10
#define NUDGE_MAX_REASONS 3

struct nudge_in {
	int64_t turns_since_checkpoint;  /* over every session of the Space */
	int64_t threshold;               /* suggest at or past this many; <= 0: default */
	const char *message;             /* the user's new message, may be NULL */
	const char *reply;               /* the model's reply, may be NULL */
};

struct nudge {
	int suggested;
	size_t n_reasons;
	char *reasons[NUDGE_MAX_REASONS];   /* owned; free with nudge_release() */
};

void nudge_eval(const struct nudge_in *in, struct nudge *out);
void nudge_release(struct nudge *n);

/*
 * The decision phrase found in text (case-insensitive, on word boundaries),
 * or NULL.  Returns a pointer into the static phrase list.
 */
const char *nudge_find_decision(const char *text);

#endif
