/*
 * mcp_subscribe.c -- resources/subscribe on a Space's HEAD resource, and the
 * notifications/resources/updated sent when that HEAD moves.
 *
 * HEAD can move through anyone: this agent, another agent over MCP or the
 * CLI, a person in the web UI, another server on the same database.  None of
 * them can tell this process, so the transport polls (mcp_stdio.c, twice a
 * second while there are subscriptions): each look is one space.get through
 * the session's call function, which reads the store (or the remote server)
 * that every writer writes to.  A Space that is renamed or deleted notifies
 * once (its HEAD resource now reads as not found).  Checkpoint resources are
 * immutable: subscribing to one is accepted and never notifies.  Stateless
 * HTTP has no channel for notifications, so there the capability is off and
 * the methods answer -32601.
 */
#include "mcp/mcp_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MCP_SUBS_MAX 256

void mcp_session_enable_notifications(struct mcp_session *s)
{
	s->can_notify = 1;
}

int mcp_subscriptions_active(const struct mcp_session *s)
{
	for (size_t i = 0; i < s->n_subs; i++)
		if (s->subs[i].space)
			return 1;
	return 0;
}

/* The HEAD hash of a Space now; NULL when it is empty or cannot be read. */
static char *current_head(struct mcp_session *s, const char *space)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *p = json_pack("{s:s}", "space", space), *sp = NULL;
	char *head = NULL;

	if (p && !s->call(s->cls, "space.get", p, &sp, &err))
		head = xstrdup(json_string_value(json_object_get(sp, "head")));
	json_decref(p);
	json_decref(sp);
	return head;
}

static struct mcp_sub *find(struct mcp_session *s, const char *uri)
{
	for (size_t i = 0; i < s->n_subs; i++)
		if (!strcmp(s->subs[i].uri, uri))
			return &s->subs[i];
	return NULL;
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
	json_t *read;
	struct mcp_sub *sub;

	if (!s->can_notify)
		return mcp_failf(fail, MCP_METHOD_NOT_FOUND, "method not found: 'resources/subscribe'"
				 " (this transport cannot send notifications; use stdio)");
	uri = uri_param(params, fail, "resources/subscribe");
	if (!uri)
		return NULL;
	read = mcp_resources_read(s, params, fail);      /* the resource must exist */
	if (!read)
		return NULL;
	json_decref(read);
	if (find(s, uri))
		return json_object();
	if (s->n_subs >= MCP_SUBS_MAX)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "at most %d subscriptions per session",
				 MCP_SUBS_MAX);
	s->subs = xrealloc(s->subs, (s->n_subs + 1) * sizeof(*s->subs));
	sub = &s->subs[s->n_subs++];
	sub->uri = xstrdup(uri);
	sub->space = mcp_head_uri_space(uri);
	sub->head = sub->space ? current_head(s, sub->space) : NULL;
	return json_object();
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
	sub = find(s, uri);
	if (sub) {
		free(sub->uri);
		free(sub->space);
		free(sub->head);
		*sub = s->subs[--s->n_subs];
	}
	return json_object();
}

void mcp_subs_free(struct mcp_session *s)
{
	for (size_t i = 0; i < s->n_subs; i++) {
		free(s->subs[i].uri);
		free(s->subs[i].space);
		free(s->subs[i].head);
	}
	free(s->subs);
	s->subs = NULL;
	s->n_subs = 0;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

json_t *mcp_subscriptions_check(struct mcp_session *s)
{
	json_t *out = NULL;

	for (size_t i = 0; i < s->n_subs; i++) {
		struct mcp_sub *sub = &s->subs[i];
		char *now;

		if (!sub->space)
			continue;
		now = current_head(s, sub->space);
		if (same(now, sub->head)) {
			free(now);
			continue;
		}
		free(sub->head);
		sub->head = now;
		if (!out)
			out = json_array();
		json_array_append_new(out, json_pack("{s:s, s:s, s:{s:o}}", "jsonrpc", "2.0",
			"method", "notifications/resources/updated", "params", "uri",
			mcp_json_text(sub->uri)));
	}
	return out;
}
