/*
 * mcp_subscribe.c -- change notifications of a Space's HEAD resource: the
 * legacy resources/subscribe (2025-11-25) and the modern
 * subscriptions/listen (2026-07-28), and the notifications/resources/updated
 * both send when that HEAD moves.
 *
 * HEAD can move through anyone: this agent, another agent over MCP or the
 * CLI, a person in the web UI, another server on the same database.  None of
 * them can tell this process, so the transport polls (mcp_stdio.c twice a
 * second while there are subscriptions; the HTTP server's listen watcher,
 * src/http/mcp_listen.c): each look is one space.get through the session's
 * call function, as the subscriber, on the store (or the remote server)
 * that every writer writes to.  A Space that is deleted or renamed notifies
 * once (its HEAD resource now reads as not found), and so does one the
 * subscriber may no longer read, which reads the same for them (the
 * operations do not tell the two apart, so neither can this); from then on
 * no write to it is told.  A look that fails otherwise (the store did not
 * answer) is no news.  Checkpoint resources are immutable: subscribing to
 * one is accepted and never notifies.
 *
 * A subscriptions/listen is acknowledged with the URIs it will watch: those
 * that resolve now for this caller (a Space it may read, a checkpoint); the
 * rest are left out of the acknowledgement.  Its notifications carry its
 * request id in _meta; notifications/cancelled with that id ends it.
 * resources/subscribe needs a transport that sends notifications outside
 * any request (stdio); elsewhere the capability is off and it answers
 * -32601.
 */
#include "mcp/mcp_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MCP_SUBS_MAX 256

void mcp_session_enable_notifications(struct mcp_session *s)
{
	s->can_notify = 1;
	s->can_listen = 1;
}

int mcp_subscriptions_active(const struct mcp_session *s)
{
	for (size_t i = 0; i < s->n_subs; i++)
		if (s->subs[i].space)
			return 1;
	return 0;
}

/* space.get of a Space: its HEAD hash in *head (NULL when empty or on failure). */
static enum smr_rc space_head(struct mcp_session *s, const char *space, char **head)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *p = json_pack("{s:s}", "space", space), *sp = NULL;
	enum smr_rc rc = p ? s->call(s->cls, "space.get", p, &sp, &err) : SMR_ENOTFOUND;

	*head = NULL;
	if (!rc)
		*head = xstrdup(json_string_value(json_object_get(sp, "head")));
	json_decref(p);
	json_decref(sp);
	return rc;
}

/*
 * The HEAD hash of a Space now in *head (NULL: empty, or gone for this
 * caller: deleted, renamed, no longer readable); -1 when it cannot be told
 * now (a refusal other than not-found, the store did not answer), which is
 * no news.
 */
static int current_head(struct mcp_session *s, const char *space, char **head)
{
	enum smr_rc rc = space_head(s, space, head);

	return rc && rc != SMR_ENOTFOUND ? -1 : 0;
}

static struct mcp_sub *find(struct mcp_session *s, const json_t *listen_id, const char *uri)
{
	for (size_t i = 0; i < s->n_subs; i++) {
		const json_t *l = s->subs[i].listen_id;

		if (!strcmp(s->subs[i].uri, uri) &&
		    (l == listen_id || (l && listen_id && json_equal(l, listen_id))))
			return &s->subs[i];
	}
	return NULL;
}

static void sub_release(struct mcp_sub *sub)
{
	json_decref(sub->listen_id);
	free(sub->uri);
	free(sub->space);
	free(sub->head);
}

/*
 * 0 when uri names a resource this caller may read now, else -1 with fail
 * set.  A Space's HEAD need only name the Space: an empty one has no
 * checkpoint to read yet, and its first is worth hearing of.
 */
static int resolves(struct mcp_session *s, const char *uri, struct mcp_fail *fail)
{
	char *space = mcp_head_uri_space(uri), *head;
	json_t *p, *read;

	if (space) {
		enum smr_rc rc = space_head(s, space, &head);

		free(head);
		free(space);
		if (!rc)
			return 0;
	}
	p = json_pack("{s:s}", "uri", uri);
	read = mcp_resources_read(s, p, fail);      /* the resource must exist, for this caller */
	json_decref(p);
	json_decref(read);
	return read ? 0 : -1;
}

/*
 * Adds a subscription of uri, which must resolve now (fail set when it
 * does not); an existing one is kept.  NULL when it does not resolve or the
 * session holds its maximum.
 */
static struct mcp_sub *add(struct mcp_session *s, const json_t *listen_id, const char *uri,
			   struct mcp_fail *fail)
{
	struct mcp_sub *sub;

	if (resolves(s, uri, fail))
		return NULL;
	sub = find(s, listen_id, uri);
	if (sub)
		return sub;
	if (s->n_subs >= MCP_SUBS_MAX) {
		mcp_failf(fail, MCP_INVALID_PARAMS, "at most %d subscriptions per session",
			  MCP_SUBS_MAX);
		return NULL;
	}
	s->subs = xrealloc(s->subs, (s->n_subs + 1) * sizeof(*s->subs));
	sub = &s->subs[s->n_subs++];
	sub->listen_id = listen_id ? json_deep_copy(listen_id) : NULL;
	sub->uri = xstrdup(uri);
	sub->space = mcp_head_uri_space(uri);
	sub->head = NULL;
	if (sub->space && current_head(s, sub->space, &sub->head))
		sub->head = NULL;
	return sub;
}

static const char *uri_param(const json_t *params, struct mcp_fail *fail, const char *method)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));

	if (!uri)
		mcp_failf(fail, MCP_INVALID_PARAMS, "%s needs a string 'uri'", method);
	return uri;
}

json_t *mcp_resources_subscribe(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail)
{
	const char *uri;

	if (!s->can_notify)
		return mcp_failf(fail, MCP_METHOD_NOT_FOUND, "method not found: 'resources/subscribe'"
				 " (this transport cannot send notifications outside a request;"
				 " use stdio, or subscriptions/listen of MCP " MCP_MODERN_VERSION ")");
	uri = uri_param(params, fail, "resources/subscribe");
	if (!uri || !add(s, NULL, uri, fail))
		return NULL;
	return json_object();
}

static int listening(const struct mcp_session *s, const json_t *id)
{
	for (size_t i = 0; i < s->n_subs; i++)
		if (s->subs[i].listen_id && json_equal(s->subs[i].listen_id, id))
			return 1;
	return 0;
}

/* The URIs of filter that this caller may watch, each once (a new array). */
static json_t *honor(struct mcp_session *s, const json_t *uris)
{
	json_t *out = json_array(), *uri;
	struct mcp_fail why;
	size_t i;

	json_array_foreach(uris, i, uri) {
		why = (struct mcp_fail){ 0, "", NULL };
		if (!find(s, s->req_id, json_string_value(uri)) &&
		    add(s, s->req_id, json_string_value(uri), &why))
			json_array_append(out, uri);
		json_decref(why.data);
	}
	return out;
}

json_t *mcp_subscriptions_listen(struct mcp_session *s, const json_t *params,
				 struct mcp_fail *fail)
{
	const json_t *filter = json_object_get(params, "notifications");
	const json_t *uris = json_object_get(filter, "resourceSubscriptions"), *uri;
	size_t i;

	if (!s->can_listen)
		return mcp_failf(fail, MCP_METHOD_NOT_FOUND, "method not found:"
				 " 'subscriptions/listen' (this transport holds no stream open)");
	if (!json_is_object(filter))
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "subscriptions/listen needs an object 'notifications'");
	if (uris && !json_is_array(uris))
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "'notifications.resourceSubscriptions' must be an array of URIs");
	json_array_foreach(uris, i, uri)
		if (!json_is_string(uri))
			return mcp_failf(fail, MCP_INVALID_PARAMS,
					 "'notifications.resourceSubscriptions[%zu]' must be a string", i);
	if (listening(s, s->req_id))
		return mcp_failf(fail, MCP_INVALID_PARAMS, "a subscription with this request id"
				 " is open already; cancel it first or use another id");
	return json_pack("{s:s, s:s, s:{s:{s:O}, s:{s:o}}}", "jsonrpc", "2.0",
			 "method", "notifications/subscriptions/acknowledged", "params",
			 "_meta", MCP_META_SUBSCRIPTION, s->req_id,
			 "notifications", "resourceSubscriptions", honor(s, uris));
}

void mcp_listen_cancel(struct mcp_session *s, const json_t *request_id)
{
	size_t i = 0;

	if (!request_id)
		return;
	while (i < s->n_subs) {
		if (s->subs[i].listen_id && json_equal(s->subs[i].listen_id, request_id)) {
			sub_release(&s->subs[i]);
			s->subs[i] = s->subs[--s->n_subs];
		} else {
			i++;
		}
	}
}

json_t *mcp_resources_unsubscribe(struct mcp_session *s, const json_t *params,
				  struct mcp_fail *fail)
{
	const char *uri;
	struct mcp_sub *sub;

	if (!s->can_notify)
		return mcp_failf(fail, MCP_METHOD_NOT_FOUND,
				 "method not found: 'resources/unsubscribe'");
	uri = uri_param(params, fail, "resources/unsubscribe");
	if (!uri)
		return NULL;
	sub = find(s, NULL, uri);
	if (sub) {
		sub_release(sub);
		*sub = s->subs[--s->n_subs];
	}
	return json_object();
}

void mcp_subs_free(struct mcp_session *s)
{
	for (size_t i = 0; i < s->n_subs; i++)
		sub_release(&s->subs[i]);
	free(s->subs);
	s->subs = NULL;
	s->n_subs = 0;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static json_t *updated(const struct mcp_sub *sub)
{
	json_t *params = json_pack("{s:o}", "uri", mcp_json_text(sub->uri));

	if (sub->listen_id)
		json_object_set_new(params, "_meta", json_pack("{s:O}", MCP_META_SUBSCRIPTION,
							       sub->listen_id));
	return json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0",
			 "method", "notifications/resources/updated", "params", params);
}

/*
 * Several subscriptions of one Space (a listen's and a subscribe's, or two
 * URIs of its HEAD) each look: a look costs one read of a small row.
 */
json_t *mcp_subscriptions_check(struct mcp_session *s)
{
	json_t *out = NULL;

	for (size_t i = 0; i < s->n_subs; i++) {
		struct mcp_sub *sub = &s->subs[i];
		char *now;

		if (!sub->space || current_head(s, sub->space, &now))
			continue;
		if (same(now, sub->head)) {
			free(now);
			continue;
		}
		free(sub->head);
		sub->head = now;
		if (!out)
			out = json_array();
		json_array_append_new(out, updated(sub));
	}
	return out;
}
