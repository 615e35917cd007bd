/*
 * fake_provider.h -- the fake LLM provider (tests/fake-provider/server.mjs)
 * as a real process on loopback for the provider unit tests: started once
 * per test run (node, from the repository root), reset and scripted per
 * test, and asked what requests it received.
 */
#ifndef SMRITI_TEST_FAKE_PROVIDER_H
#define SMRITI_TEST_FAKE_PROVIDER_H

#include <jansson.h>

#include "provider/provider.h"

extern int fake_port;

/* A control request to the fake (body may be NULL); its JSON reply (new reference) or NULL. */
json_t *fake_control(const char *method, const char *path, const char *body);

/* Starts the fake if needed, resets it and queues steps (a JSON array text); 0 or -1. */
int fake_script(const char *steps);

/* Every provider request the fake received since its reset (new reference). */
json_t *fake_requests(void);

/* Lets streams waiting at the hold called name go on. */
void fake_release(const char *name);

/*
 * A provider called name ("openai", "anthropic", "local") at the fake, with
 * path_base after its address ("/v1" for OpenAI-style servers), a test key
 * and short backoffs.  Caller provider_free()s.
 */
struct provider *fake_provider(const char *name, const char *path_base);

#define SCRIPT(steps)                                                        \
	do {                                                                 \
		if (fake_script(steps)) {                                    \
			test_fail(__FILE__, __LINE__, "fake provider unavailable"); \
			return;                                              \
		}                                                            \
	} while (0)

/*
 * The same fake in this process, for tests that make many thousands of calls
 * (test_exactness.c): an HTTP server on loopback (libmicrohttpd, a thread
 * per connection) speaking the wire formats the Node fake speaks (WIRE.md:
 * OpenAI Chat Completions at {base}/chat/completions, Anthropic Messages at
 * {base}/v1/messages; streamed and whole replies), scripted and read by
 * direct calls instead of a control API.  Each request takes the first
 * queued step (none: a complete reply "fake reply").
 */
enum fake_end {
	FAKE_COMPLETE,          /* every delta, then the normal end */
	FAKE_TRUNCATED,         /* every delta, then the token-limit end */
	FAKE_STREAM_ERROR,      /* `after` deltas, then the provider's error event */
	FAKE_CUT,               /* `after` deltas, then the connection drops */
	FAKE_HOLD,              /* `after` deltas, then nothing until fake_inproc_release() */
	FAKE_STATUS,            /* an error reply with `status`, before any text */
};

struct fake_step {
	enum fake_end end;
	const char *reply;      /* streamed text: split after each space, one word a delta */
	int after;
	int status;
	const char *json;       /* a whole (non-streamed) reply's structured output, JSON text */
};

/* Starts the server once (0, or -1 when it cannot); its port after that. */
int fake_inproc_start(void);
extern int fake_inproc_port;

/* Queues a copy of step. */
void fake_inproc_queue(const struct fake_step *step);
/* Forgets queued steps and recorded requests (and releases a hold). */
void fake_inproc_reset(void);
/*
 * The requests received since the last take, oldest first: [{path, body}]
 * with body the parsed JSON (or the raw text when it is not JSON).  New
 * reference; the record is emptied.
 */
json_t *fake_inproc_take(void);
/* How many streams reached their hold so far. */
unsigned fake_inproc_holds(void);
/* Waits up to timeout_ms until more than after streams reached their hold; 1 when they did. */
int fake_inproc_wait_hold(unsigned after, long timeout_ms);
/* Lets a held stream end (it ends by dropping its connection). */
void fake_inproc_release(void);

#endif
