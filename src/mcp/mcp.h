/*
 * mcp.h -- Smriti's Model Context Protocol server, the second agent
 * transport (after the CLI) over the same operations of ops/api.h.
 *
 * The protocol core is transport-independent: mcp_handle() takes one
 * JSON-RPC message and returns the response, or nothing for notifications
 * and client responses.  mcp_stdio.c frames it as newline-delimited JSON on
 * stdin/stdout (`smriti mcp`); mcp_http.c adapts it to Streamable HTTP for
 * the server's /mcp route.  Tools never touch the store: every tool call is
 * one operation run through the session's call function (api_call locally,
 * or the CLI's remote call against a server), so MCP, the CLI and the HTTP
 * API share one code path per operation.  docs/mcp.md documents the tools.
 */
#ifndef SMRITI_MCP_H
#define SMRITI_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

/*
 * Two eras of the protocol (2026-07-28 basic/versioning): a legacy client
 * (2025-11-25 and before) opens with initialize and gets MCP_LATEST_VERSION
 * when it asks for one this server does not speak; a modern client
 * (MCP_MODERN_VERSION) sends no handshake, and every request of its carries
 * its revision in params._meta (MCP_META_VERSION).  Both are served at once,
 * per request.
 */
#define MCP_LATEST_VERSION "2025-11-25"
#define MCP_MODERN_VERSION "2026-07-28"
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define MCP_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER "io.modelcontextprotocol/serverInfo"
#define MCP_META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
#define MCP_MAX_MESSAGE ((size_t)10 << 20)   /* one line or body, like the SDK's 10 MiB */

/* JSON-RPC error codes. */
#define MCP_PARSE_ERROR      -32700
#define MCP_INVALID_REQUEST  -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS   -32602
#define MCP_INTERNAL_ERROR   -32603
#define MCP_RESOURCE_NOT_FOUND -32002   /* legacy; a modern request gets -32602 */
/* 2026-07-28's own codes (basic/index, "Error codes") */
#define MCP_HEADER_MISMATCH  -32020
#define MCP_UNSUPPORTED_VERSION -32022

/* Runs operation op with params; the contract of api_call() (ops/api.h). */
typedef enum smr_rc (*mcp_call_fn)(void *cls, const char *op, const json_t *params,
				   json_t **result, struct smr_err *err);

struct mcp_session;

/*
 * A new protocol session whose tools run operations through call(cls, ...).
 * The tool list is fixed here: a tool appears only when its operation is
 * registered (api_find), so review and search show up once they exist.
 * default_author (may be NULL) signs checkpoints written without an
 * `author` argument.  Caller mcp_session_free()s.
 */
struct mcp_session *mcp_session_new(mcp_call_fn call, void *cls, const char *default_author);
void mcp_session_free(struct mcp_session *s);

/* The mcp_call_fn for a local store: api_call() on the struct ops_ctx cls. */
enum smr_rc mcp_call_local(void *ops_ctx, const char *op, const json_t *params,
			   json_t **result, struct smr_err *err);

/*
 * Handles one JSON-RPC message.  Returns the response (a new reference) or
 * NULL when none is due: for notifications and for responses the client
 * sends.  Malformed requests get JSON-RPC errors, never NULL.
 */
json_t *mcp_handle(struct mcp_session *s, const json_t *msg);

/*
 * Handles one message as text (one stdio line, one HTTP body).  Text that is
 * not JSON gets a -32700 error with id null.  Returns the serialized
 * response (one line, no newline; caller free()s) or NULL when none is due.
 */
char *mcp_handle_text(struct mcp_session *s, const char *text, size_t len);

/* A JSON-RPC error response; id may be NULL (then null).  New reference. */
json_t *mcp_error(const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Says that this session's transport delivers server notifications that
 * answer no request (stdio does; stateless HTTP cannot), which enables the
 * legacy resources/subscribe.  A modern subscriptions/listen needs no such
 * channel: its notifications belong to its own request.
 */
void mcp_session_enable_notifications(struct mcp_session *s);

/*
 * Looks at the HEAD of every subscribed Space and returns the
 * notifications/resources/updated messages due for those whose HEAD moved
 * since the last look, whoever moved it (a JSON array, new reference), or
 * NULL when none is due.  A Space that was deleted or renamed, or that the
 * caller may no longer read, gives one, then no more.  Notifications of a
 * subscriptions/listen carry its id in _meta.
 */
json_t *mcp_subscriptions_check(struct mcp_session *s);

/* Runs the session's operations through call(cls, ...) from now on. */
void mcp_session_rebind(struct mcp_session *s, mcp_call_fn call, void *cls);

/* 1 while the session has subscriptions worth polling. */
int mcp_subscriptions_active(const struct mcp_session *s);

/*
 * Serves newline-delimited JSON-RPC on in_fd/out_fd until EOF on in_fd.
 * Lines longer than MCP_MAX_MESSAGE get a -32600 error and are skipped.
 * Subscriptions are looked at when wake_fd is readable (its bytes are
 * read and dropped: a write may have moved a HEAD), or with wake_fd -1
 * twice a second.  Returns 0 at EOF, 1 when writing to out_fd failed
 * (client gone).
 */
int mcp_serve_stdio(struct mcp_session *s, int in_fd, int out_fd, int wake_fd);

/* Legacy revisions this server speaks (initialize), newest first, NULL-terminated. */
extern const char *const mcp_versions[];

/* 1 if v is one of mcp_versions or MCP_MODERN_VERSION. */
int mcp_version_supported(const char *v);

/*
 * The revision a request declares in params._meta (a modern request), or
 * NULL for a legacy one.  Borrowed from msg.
 */
const char *mcp_request_version(const json_t *msg);

/*
 * What a 2026-07-28 request's params._meta lacks ("protocolVersion",
 * "clientCapabilities"), or NULL when it has both as it must (SEP-2575: the
 * request is then refused with -32602, over HTTP with 400).
 */
const char *mcp_modern_meta_missing(const json_t *msg);

/* ---- Streamable HTTP (mcp_http.c), for the server's /mcp route ---- */

struct mcp_http_request {
	const char *method;          /* "POST", "GET", "DELETE", ... */
	/* Value of a request header (case-insensitive name), NULL if absent. */
	const char *(*header)(void *cls, const char *name);
	void *header_cls;
	const char *body;
	size_t body_len;
	const char *token;           /* bearer token the API requires, NULL for none */
	/*
	 * The server's Origin rule: 1 when origin may call /mcp.  NULL: only the
	 * same origin as the Host header.
	 */
	int (*origin_ok)(void *cls, const char *origin);
	void *origin_cls;
};

#define MCP_HTTP_MAX_HEADERS 2

struct mcp_http_response {
	int status;
	const char *content_type;    /* static string; NULL when there is no body */
	char *body;                  /* NULL or malloc'ed: caller free()s */
	size_t body_len;
	/* extra response headers (static strings), {NULL, NULL} terminated */
	const char *headers[MCP_HTTP_MAX_HEADERS + 1][2];
};

/*
 * Answers one HTTP request to /mcp.  Each request gets a fresh protocol
 * session (the transport is stateless: no Mcp-Session-Id), running
 * operations through call(cls, ...).  Checks in order: Origin (403 unless
 * absent or allowed by origin_ok), bearer token (401), method (405 for
 * anything but POST), Accept (406), Content-Type (415), MCP-Protocol-Version
 * (400), body (400 for JSON that is not one JSON-RPC message).  A request
 * gets 200 with application/json; a notification or response gets 202.
 * The caller sends resp and then frees resp->body.
 */
void mcp_http_handle(mcp_call_fn call, void *cls, const struct mcp_http_request *req,
		     struct mcp_http_response *resp);

/*
 * The two halves of mcp_http_handle() for a server that reads and parses
 * the body itself.  mcp_http_refusal() runs the checks before the body:
 * NULL when the request may go on, else the error document (a new
 * reference) to send with *status.  mcp_http_answer() answers one parsed
 * message: the response document (a new reference) with *status 200 (400
 * for a message that is not JSON-RPC, for a modern request whose headers
 * disagree with its body or names a revision not spoken here, 404 for a
 * modern request of an unknown method), or NULL with *status 202 for a
 * notification or a response.
 *
 * keep is NULL when the caller cannot hold a response stream open; then
 * subscriptions/listen is an unknown method.  Else an acknowledged
 * subscriptions/listen returns its acknowledgement (a notification, to open
 * the stream with) and sets *keep to the session holding its subscriptions
 * (caller mcp_session_free()s; mcp_subscriptions_check() finds what to send
 * next).
 */
json_t *mcp_http_refusal(const struct mcp_http_request *req, int *status);
json_t *mcp_http_answer(mcp_call_fn call, void *cls, const struct mcp_http_request *req,
			const json_t *msg, int *status, struct mcp_session **keep);

/*
 * The /mcp route of smriti serve (mcp_route.c): an http_handler of
 * src/http/http_int.h, running on a worker with that thread's ops context.
 */
struct http_req;
struct ops_ctx;
void mcp_http_route(struct http_req *r, struct ops_ctx *ctx);

/*
 * The tools/list entries of every operation that decl (a document as
 * decl_all() returns, ops/decl.h) gives an MCP tool; new reference.  The
 * server passes NULL: the same from the index (decl_op, decl_ref), which
 * parses only those operations; tests pass changed declarations.
 */
json_t *mcp_tool_defs(const json_t *decl);

#endif
