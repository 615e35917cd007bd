/*
 * mcp_route.c -- the /mcp route of `smriti serve`: glue between the HTTP
 * server's request (src/http/http_int.h) and the Streamable HTTP adapter
 * of mcp_http.c.
 *
 * The server has already admitted the request (Host, bearer token, Origin
 * of a POST, body cap) and parsed its body; this handler adds MCP's own
 * checks (Accept, MCP-Protocol-Version, the headers a modern request
 * mirrors from its body) and answers the message with the worker's ops
 * context.  An acknowledged subscriptions/listen becomes a response stream
 * (mcp_listen.c).  It runs on a worker (ROUTE_BLOCKING, since a tool
 * may write) and reads request headers there: MHD_lookup_connection_value
 * only walks the header list of the suspended connection, which nothing
 * changes until the worker resumes it.  The server always sends a JSON
 * body, so a notification gets 202 with "{}".
 */
#include "http/http_int.h"
#include "mcp/mcp.h"

#include <microhttpd.h>

static const char *conn_header(void *cls, const char *name)
{
	return MHD_lookup_connection_value(cls, MHD_HEADER_KIND, name);
}

static int server_origin_ok(void *cls, const char *origin)
{
	return http_guard_origin(cls, origin);
}

void mcp_http_route(struct http_req *r, struct ops_ctx *ctx)
{
	struct mcp_http_request req = {
		.method = "POST", .header = conn_header, .header_cls = r->conn,
		.origin_ok = server_origin_ok, .origin_cls = &r->srv->guard,
	};
	struct mcp_session *keep = NULL;
	json_t *out;
	int status = 0;

	out = mcp_http_refusal(&req, &status);
	if (!out && !r->in) {
		status = 400;
		out = mcp_error(NULL, MCP_INVALID_REQUEST, "invalid request: the body is empty");
	}
	if (!out) {
		out = mcp_http_answer(mcp_call_local, ctx, &req, r->in, &status, &keep);
		if (keep) {
			http_mcp_listen(r, keep, out);
			return;
		}
		if (!out)
			out = json_object();
	}
	http_reply(r, status, out);
}
