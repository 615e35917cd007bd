/*
 * mcp_int.h -- what the files of src/mcp share and nothing outside needs:
 * the session struct, the method-handler shape, the tool and resource
 * handlers and the small JSON Schema checker.  Calls go one way: mcp.c
 * dispatches to the handlers, and everything uses mcp_json.c.
 */
#ifndef SMRITI_MCP_INT_H
#define SMRITI_MCP_INT_H

#include "mcp/mcp.h"
#include "util/buf.h"

#define MCP_TOOLS_MAX 16

/* A resources/subscribe, or one URI of a subscriptions/listen (mcp_subscribe.c). */
struct mcp_sub {
	json_t *listen_id;               /* the subscriptions/listen's request id; NULL: resources/subscribe */
	char *uri;                       /* as the client gave it */
	char *space;                     /* decoded Space name */
	char *head;                      /* HEAD when last looked at; NULL: empty or gone */
};

struct mcp_session {
	mcp_call_fn call;
	void *cls;
	char *default_author;            /* NULL: none */
	char *client_name;               /* clientInfo.name from initialize, NULL before */
	char protocol[16];               /* negotiated revision, "" before initialize */
	unsigned char enabled[MCP_TOOLS_MAX]; /* 1 when tool i's operation exists */
	int can_notify;                  /* the transport delivers server notifications */
	int can_listen;                  /* ... and holds a subscriptions/listen open */
	/* the request being run: its modern revision (NULL: legacy) and its id */
	const char *req_version;
	const json_t *req_id;
	struct mcp_sub *subs;
	size_t n_subs;
	/*
	 * The last tool result, the document it carries (both held) and, once
	 * a response carried it, its serialization: a tool that hands out the
	 * very same document again (read_head while HEAD has not moved;
	 * ops_head_doc's documents are never modified) answers with the same
	 * result, and the response reuses its text instead of serializing the
	 * document twice again.  Only results well under MCP_MAX_MESSAGE are
	 * kept, so the trimming of an oversized response never changes one.
	 */
	json_t *last_doc, *last_result;
	char *last_result_text;          /* owned; NULL until a response needed it */
};

/* Why a method failed: a JSON-RPC error code and message (data optional, owned). */
struct mcp_fail {
	int code;
	char msg[512];
	json_t *data;
};

/* mcp_json.c: fills fail and returns NULL, so handlers can `return mcp_failf(...)`. */
json_t *mcp_failf(struct mcp_fail *fail, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A JSON string (new reference) of s, any byte that is not well-formed UTF-8 shown as '?'. */
json_t *mcp_json_text(const char *s);

/* A method handler: the result object (new reference), or NULL with fail set. */
typedef json_t *(*mcp_method_fn)(struct mcp_session *s, const json_t *params,
				 struct mcp_fail *fail);

/* mcp_tools.c */
void mcp_tools_enable(struct mcp_session *s);
json_t *mcp_tools_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);
json_t *mcp_tools_call(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);

/* mcp_resources.c */
json_t *mcp_resources_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);
json_t *mcp_resources_read(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);
json_t *mcp_resources_templates(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail);

/*
 * The Space name of a HEAD resource URI (smriti://spaces/{name}/head, with
 * .json or ?format=); caller free()s.  NULL for any other URI.
 */
char *mcp_head_uri_space(const char *uri);

/* mcp_prompts.c: prompts and completion; the capabilities go into initialize's caps. */
void mcp_prompts_capabilities(json_t *caps);
json_t *mcp_prompts_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);
json_t *mcp_prompts_get(struct mcp_session *s, const json_t *params, struct mcp_fail *fail);
json_t *mcp_completion_complete(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail);

/* mcp_subscribe.c */
json_t *mcp_resources_subscribe(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail);
json_t *mcp_resources_unsubscribe(struct mcp_session *s, const json_t *params,
				  struct mcp_fail *fail);
json_t *mcp_subscriptions_listen(struct mcp_session *s, const json_t *params,
				 struct mcp_fail *fail);
/* notifications/cancelled of a subscriptions/listen: its subscriptions end. */
void mcp_listen_cancel(struct mcp_session *s, const json_t *request_id);
void mcp_subs_free(struct mcp_session *s);


#endif
