/*
 * exactness.h -- the scenario model of the context-exactness property test
 * (test_exactness.c, exactness_oracle.c).
 *
 * The model is the test's own record of what a scenario did: which
 * Checkpoints it wrote with which items, which sessions hold which turns
 * with which sequence numbers, what each session has mounted and what a
 * v5.2 client sends with it.  The oracle (exactness_oracle.c) turns it into
 * the provider request the documented rules call for (docs/providers.md,
 * docs/draft.md) without calling the code under
 * test.
 *
 * Every piece of text a scenario writes carries a token, "{d12.3fa9c1}":
 * a letter for its kind (t title, s summary, d decision, a assumption, q open
 * question, k task, e entity, f artifact, u user turn, r reply), a number and
 * the scenario's tag, so the oracle can say which turn or item a request
 * holds that it should not, or lacks.
 */
#ifndef SMRITI_TEST_EXACTNESS_H
#define SMRITI_TEST_EXACTNESS_H

#include <jansson.h>
#include <stdint.h>

#include "fake_provider.h"
#include "ops/ops.h"
#include "util/buf.h"

#define EX_MAX_CK 40
#define EX_MAX_ITEMS 24
#define EX_MAX_SESS 10
#define EX_MAX_TURNS 48
#define EX_MAX_SPACES 2
#define EX_MAX_TOKS 640
#define EX_ART_CAP 2000          /* docs/providers.md: each artifact capped at 2000 characters */

enum ex_list { L_DEC, L_ASM, L_OQ, L_TASK, L_ENT, L_ART, EX_LISTS };

struct ex_item {
	char *text;           /* text; an entity's or an artifact's name */
	char *content;        /* an artifact's content; NULL otherwise */
	int done;             /* a task's status */
	int tok;              /* the token in text (content for an artifact) */
};

struct ex_ck {
	char hash[65];
	char *title;          /* NULL: not known to the model (a merge decides its own) */
	int title_tok;
	char *summary;
	int summary_tok;
	struct ex_item items[EX_LISTS][EX_MAX_ITEMS];
	int n[EX_LISTS];
	int parent, parent2;  /* indexes, -1: none */
};

struct ex_turn {
	int64_t seq;
	int user;
	char *content;
	int failed;           /* a user turn whose send failed before any reply */
};

struct ex_sess {
	char id[40];
	int space;
	int ck;               /* the mounted Checkpoint, -1: none */
	int forked;           /* made by session.mount */
	struct ex_turn turns[EX_MAX_TURNS];
	int n;
	int64_t last;
	int client_on;        /* a v5.2 client sends commit_hash / history_base_seq */
	int client_ck;        /* -1: only history_base_seq */
	int64_t client_base;
	int last_provider;    /* of its last send, -1: none (to count switches mid-session) */
};

struct ex_space {
	char name[48];
	int head;             /* -1: empty */
	unsigned char member[EX_MAX_CK];
	int side;             /* 1: a fork; it only adds items, so merges never conflict */
};

struct ex_tok {
	char s[24];
	char what[120];
};

struct ex_stats {
	long scenarios, sends, requests, drafts, mounts, client_sends, switches;
	long outcomes[7], creates, patches, restores, forks, merges, refused;
};

struct ex_scen {
	uint64_t seed, rng;
	unsigned tag;
	struct ops_ctx *ctx;
	struct ex_ck cks[EX_MAX_CK];
	int n_ck;
	struct ex_sess ss[EX_MAX_SESS];
	int n_ss;
	struct ex_space sp[EX_MAX_SPACES];
	int n_sp;
	struct ex_tok toks[EX_MAX_TOKS];
	int n_tok;
	int next_tok;
	char hold[24];        /* the Node fake's name of the hold of a stopped reply */
	struct buf log;       /* what the scenario did, printed on a failure */
	struct buf why;       /* the first failure */
	struct ex_stats *st;
};

/* exactness_oracle.c */

/* The text of token i. */
const char *ex_tok_str(const struct ex_scen *sc, int i);
/* A new token of kind letter described by what (printf-style). */
int ex_tok_new(struct ex_scen *sc, char letter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Records the first failure in sc->why (later ones are dropped); returns -1. */
int ex_fail(struct ex_scen *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Code points of s. */
size_t ex_chars(const char *s);

/*
 * What a send should carry, from the model: the system text's Checkpoint
 * (ck, -1 for none) and the messages [{role, content}] after the provider's
 * documented shaping (new reference).
 */
json_t *ex_expected_messages(const struct ex_scen *sc, int si, int64_t base, int skip_last,
			     const char *message, int anthropic);

/*
 * Checks one chat request body against the expectation: the system text
 * (preamble, then exactly Checkpoint ck's state, artifacts capped), and the
 * messages exactly.  Failures go to sc->why; returns 0 when it held.
 */
int ex_check_chat(struct ex_scen *sc, const json_t *req, int ck, const json_t *want,
		  const char *preamble);

/* Checks a draft request: session si's turns, and no Checkpoint text at all. */
int ex_check_draft(struct ex_scen *sc, const json_t *req, int si, const char *preamble);

/* Checks the stored checkpoint doc (show / merge result) against model ck. */
int ex_check_stored(struct ex_scen *sc, const json_t *doc, int ck);

/* exactness_wire.c: a real `smriti serve` (vars: K=V for its environment) and the Node fake */
int ex_wire_start(char *const *vars, size_t n_vars, char *why, size_t why_size);
int ex_wire_stop(void);
/* An operation over HTTP; its result (new reference) or NULL with *rc and msg. */
json_t *ex_wire_call(const char *op, const json_t *params, enum smr_rc *rc, char *msg,
		     size_t msg_size);
void ex_wire_queue(const struct fake_step *s, const char *hold);
json_t *ex_wire_take(void);
void ex_wire_reset(void);
int ex_wire_wait_hold(const char *name, long timeout_ms);
void ex_wire_release(const char *name);

#endif
