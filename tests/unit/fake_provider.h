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

#endif
