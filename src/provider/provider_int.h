/*
 * provider_int.h -- the backends' ops table and the provider handle, private to
 * src/provider (as src/store/store_int.h is to the store).
 *
 * Callers outside the port see struct provider as an opaque handle and use
 * the functions of provider.h and loop.h; only the files of this directory
 * (and the port's own unit tests) read these members.
 */
#ifndef SMRITI_PROVIDER_INTERNAL_H
#define SMRITI_PROVIDER_INTERNAL_H

#include "provider/provider.h"

struct provider;
struct provider_loop;
struct call_request;
struct reply_decoder;
struct sse_event;

struct provider_ops {
	const char *name;           /* wire format: "openai" | "anthropic" */
	/* The HTTP request for req (stream: ask for server-sent events); out is released by the caller. */
	void (*request)(struct provider *p, const struct provider_req *req, int stream,
			struct call_request *out);
	/*
	 * Reads a whole reply document into out.  SMR_EPROVIDER when it is not
	 * the reply expected, with the reason in err.
	 */
	enum smr_rc (*parse_reply)(struct provider *p, const struct provider_req *req,
				   const json_t *doc, struct provider_resp *out,
				   struct smr_err *err);
	/* One event of a streamed reply, reported to the decoder (decode.h). */
	void (*stream_event)(struct reply_decoder *d, const struct sse_event *ev);
};

struct provider {
	const struct provider_ops *ops;
	char *name;                 /* "openai" | "anthropic" | "local" */
	struct provider_cfg cfg;
	struct provider_loop *loop; /* started by the first call (loop.h); owned */
	pthread_mutex_t loop_lock;  /* guards starting it */
};

extern const struct provider_ops provider_openai_ops;
extern const struct provider_ops provider_anthropic_ops;

#endif
