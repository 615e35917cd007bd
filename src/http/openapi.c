/*
 * openapi.c -- the OpenAPI 3.1 document served at /openapi.json.
 *
 * Paths come from http_routes[] itself (pattern, method, summary, success
 * status and schema names), so a route cannot exist without being
 * documented; the component schemas below describe the bodies.
 */
#include "http/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char components_json[] =
"{"
"\"securitySchemes\":{\"bearer\":{\"type\":\"http\",\"scheme\":\"bearer\","
" \"description\":\"Required on every route but /healthz, /v4/auth and the web UI's files"
" when the server runs with SMRITI_TOKEN (the web UI's cookie from POST /v4/auth also"
" admits)\"}},"
"\"schemas\":{"
"\"Error\":{\"type\":\"object\",\"required\":[\"error\"],\"properties\":{\"error\":{"
"  \"type\":\"object\",\"required\":[\"code\",\"message\"],\"properties\":{"
"  \"code\":{\"type\":\"string\",\"examples\":[\"invalid_input\",\"not_found\",\"conflict\","
"   \"too_large\",\"unprocessable\",\"provider_error\",\"provider_timeout\"]},"
"  \"message\":{\"type\":\"string\"}}}},"
" \"description\":\"Every failure. A provider failure of chat.send also carries the stored"
" user_turn beside error.\"},"
"\"Health\":{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"},"
" \"store\":{\"type\":\"string\",\"examples\":[\"sqlite\",\"postgres\"]}}},"
"\"OpenAPI\":{\"type\":\"object\"},"
"\"Html\":{\"type\":\"string\",\"description\":\"not JSON: the file itself, with its own"
" Content-Type\"},"
"\"OpParams\":{\"type\":\"object\",\"description\":\"The operation's parameters, e.g."
" {\\\"space\\\":\\\"demo\\\"} for head\"},"
"\"OpResult\":{\"type\":\"object\",\"required\":[\"result\"],\"properties\":{\"result\":{}}},"
"\"Space\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
" \"name\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},"
" \"created_at\":{\"type\":\"string\"},\"head\":{\"type\":[\"string\",\"null\"]}}},"
"\"SpaceList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Space\"}},"
"\"SpaceCreate\":{\"type\":\"object\",\"required\":[\"name\"],\"properties\":{"
" \"name\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"}}},"
"\"SpaceRename\":{\"type\":\"object\",\"required\":[\"name\"],\"properties\":{"
" \"name\":{\"type\":\"string\"}}},"
"\"Deleted\":{\"type\":\"object\",\"properties\":{\"deleted\":{\"type\":\"string\"},"
" \"id\":{\"type\":\"string\"}}},"
"\"Item\":{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"object\"}]},"
"\"Checkpoint\":{\"type\":\"object\",\"properties\":{"
" \"commit_hash\":{\"type\":\"string\"},\"parent_hash\":{\"type\":[\"string\",\"null\"]},"
" \"merge_parent_hash\":{\"type\":\"string\",\"description\":\"Second parent of a merge\"},"
" \"space\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},"
" \"summary\":{\"type\":\"string\"},"
" \"decisions\":{\"type\":\"array\"},\"assumptions\":{\"type\":\"array\"},"
" \"tasks\":{\"type\":\"array\"},\"open_questions\":{\"type\":\"array\"},"
" \"entities\":{\"type\":\"array\"},\"artifacts\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
"  \"kind\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}}}},"
" \"metadata\":{\"type\":\"object\"},\"author\":{\"type\":\"string\"},"
" \"created_at\":{\"type\":\"string\"}}},"
"\"CheckpointList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Checkpoint\"}},"
"\"ChatCommit\":{\"type\":\"object\",\"required\":[\"repo_id\"],\"properties\":{"
" \"repo_id\":{\"type\":\"string\",\"description\":\"Space id or name\"},"
" \"parent_commit_id\":{\"type\":[\"string\",\"null\"],\"description\":"
"  \"HEAD the agent built on; if HEAD moved since, 409 and nothing is written\"},"
" \"title\":{\"type\":\"string\"},\"summary\":{\"type\":\"string\"},"
" \"decisions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Item\"}},"
" \"assumptions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Item\"}},"
" \"tasks\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Item\"}},"
" \"open_questions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Item\"}},"
" \"entities\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Item\"}},"
" \"artifacts\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
" \"metadata\":{\"type\":\"object\"},\"author\":{\"type\":\"string\"}},"
" \"additionalProperties\":false},"
"\"Refs\":{\"type\":\"array\",\"items\":{\"oneOf\":[{\"type\":\"string\"},"
" {\"type\":\"integer\",\"minimum\":1}]},\"description\":"
" \"Items of the parent by exact text (name for entities and artifacts) or 1-based position\"},"
"\"CheckpointPatch\":{\"type\":\"object\",\"description\":"
" \"A change to the parent's state; everything not named is kept (docs/http.md)\",\"properties\":{"
" \"parent\":{\"type\":\"string\",\"description\":"
"  \"Apply only while this is HEAD (else 409); without it the patch goes on whatever HEAD is,"
" atomically\"},"
" \"add\":{\"type\":\"object\",\"description\":\"{decisions: [Item], tasks: [Item], ...}\"},"
" \"drop\":{\"type\":\"object\",\"description\":\"{decisions: Refs, ...}\"},"
" \"done\":{\"$ref\":\"#/components/schemas/Refs\"},"
" \"reopen\":{\"$ref\":\"#/components/schemas/Refs\"},"
" \"title\":{\"type\":\"string\"},\"summary\":{\"type\":\"string\"},"
" \"metadata\":{\"type\":\"object\"},\"author\":{\"type\":\"string\"}}},"
"\"CheckpointUpdate\":{\"type\":\"object\",\"properties\":{"
" \"checkpoint\":{\"$ref\":\"#/components/schemas/Checkpoint\"},"
" \"changes\":{\"type\":\"object\"},\"changed\":{\"type\":\"string\"}}},"
"\"MergeParams\":{\"type\":\"object\",\"required\":[\"ref\"],\"properties\":{"
" \"ref\":{\"type\":\"string\",\"description\":\"The checkpoint or Space (a fork) to merge in\"},"
" \"resolution\":{\"type\":\"object\",\"description\":"
"  \"{\\\"*\\\": \\\"ours\\\"|\\\"theirs\\\"} or per field and item\"},"
" \"author\":{\"type\":\"string\"}}},"
"\"MergeResult\":{\"type\":\"object\",\"properties\":{"
" \"status\":{\"type\":\"string\",\"enum\":[\"merged\",\"fast-forward\",\"up-to-date\"]},"
" \"checkpoint\":{\"$ref\":\"#/components/schemas/Checkpoint\"},"
" \"base\":{\"type\":\"string\"},\"contradictions\":{\"type\":\"array\"}}},"
"\"Session\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
" \"repo_id\":{\"type\":\"string\"},\"space\":{\"type\":\"string\"},"
" \"title\":{\"type\":\"string\"},"
" \"mounted_commit_hash\":{\"type\":[\"string\",\"null\"]},"
" \"forked_from_session_id\":{\"type\":[\"string\",\"null\"]},"
" \"history_base_seq\":{\"type\":[\"integer\",\"null\"]},"
" \"created_at\":{\"type\":\"string\"},\"last_seq\":{\"type\":\"integer\"}}},"
"\"SessionList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Session\"}},"
"\"SessionCreate\":{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},"
" \"commit_hash\":{\"type\":\"string\",\"description\":\"mount this Checkpoint of the Space"
"  from the first turn\"}}},"
"\"Turn\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
" \"session_id\":{\"type\":\"string\"},\"sequence_number\":{\"type\":\"integer\"},"
" \"role\":{\"type\":\"string\",\"enum\":[\"user\",\"assistant\"]},"
" \"content\":{\"type\":\"string\"},\"provider\":{\"type\":[\"string\",\"null\"]},"
" \"model\":{\"type\":[\"string\",\"null\"]},"
" \"prompt_tokens\":{\"type\":[\"integer\",\"null\"]},"
" \"completion_tokens\":{\"type\":[\"integer\",\"null\"]},"
" \"latency_ms\":{\"type\":[\"integer\",\"null\"]},"
" \"error\":{\"type\":[\"string\",\"null\"]},"
" \"status\":{\"type\":\"string\",\"enum\":[\"complete\",\"truncated\",\"stopped\","
"  \"error\",\"interrupted\"],\"description\":\"how the turn ended (docs/providers.md)\"},"
" \"created_at\":{\"type\":\"string\"}}},"
"\"Generation\":{\"type\":\"object\",\"required\":[\"id\",\"session_id\",\"status\"],"
" \"description\":\"a send's reply being produced (docs/http.md, Streaming chat)\","
" \"properties\":{\"id\":{\"type\":\"string\"},\"session_id\":{\"type\":\"string\"},"
" \"status\":{\"type\":\"string\",\"enum\":[\"running\",\"complete\",\"truncated\","
"  \"stopped\",\"error\",\"interrupted\"]},"
" \"provider\":{\"type\":[\"string\",\"null\"]},\"model\":{\"type\":[\"string\",\"null\"]},"
" \"user_turn_seq\":{\"type\":[\"integer\",\"null\"]},"
" \"assistant_turn_seq\":{\"type\":[\"integer\",\"null\"]},"
" \"error\":{\"type\":[\"string\",\"null\"]},\"created_at\":{\"type\":\"string\"},"
" \"finished_at\":{\"type\":[\"string\",\"null\"]},"
" \"space\":{\"type\":\"string\",\"description\":\"GET only\"},"
" \"text\":{\"type\":\"string\",\"description\":\"GET while it runs: the reply so far\"}}},"
"\"GenerationStop\":{\"type\":\"object\",\"properties\":{"
" \"generation\":{\"$ref\":\"#/components/schemas/Generation\"},"
" \"stopping\":{\"type\":\"boolean\",\"description\":\"false when it had already ended\"}}},"
"\"SessionWithTurns\":{\"allOf\":[{\"$ref\":\"#/components/schemas/Session\"},"
" {\"type\":\"object\",\"properties\":{\"turns\":{\"type\":\"array\","
"  \"items\":{\"$ref\":\"#/components/schemas/Turn\"}},"
"  \"generation\":{\"oneOf\":[{\"$ref\":\"#/components/schemas/Generation\"},"
"   {\"type\":\"null\"}],\"description\":\"the reply running now\"}}}]},"
"\"ChatSend\":{\"type\":\"object\",\"required\":[\"session_id\",\"message\"],"
" \"properties\":{\"session_id\":{\"type\":\"string\"},"
" \"message\":{\"type\":\"string\"},"
" \"provider\":{\"type\":\"string\",\"examples\":[\"openai\",\"anthropic\"]},"
" \"model\":{\"type\":\"string\"},\"commit_hash\":{\"type\":\"string\"},"
" \"history_base_seq\":{\"type\":\"integer\",\"minimum\":0},"
" \"stream\":{\"type\":\"boolean\",\"description\":\"answer server-sent events, as"
"  Accept: text/event-stream does\"}}},"
"\"ChatSendResult\":{\"type\":\"object\",\"properties\":{"
" \"generation\":{\"$ref\":\"#/components/schemas/Generation\"},"
" \"user_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
" \"assistant_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
" \"context\":{\"type\":\"object\",\"description\":\"which turns and Checkpoint the"
"  model saw\"},"
" \"nudge\":{\"type\":\"object\",\"properties\":{\"suggested\":{\"type\":\"boolean\"},"
"  \"reasons\":{\"type\":\"array\"}}}}},"
"\"JsonRpc\":{\"type\":\"object\",\"description\":\"A JSON-RPC 2.0 message of the Model"
" Context Protocol; a notification is answered 202\",\"properties\":{"
" \"jsonrpc\":{\"const\":\"2.0\"},\"id\":{},\"method\":{\"type\":\"string\"},"
" \"params\":{},\"result\":{},\"error\":{}}},"
"\"Mount\":{\"type\":\"object\",\"required\":[\"commit_hash\"],\"properties\":{"
" \"commit_hash\":{\"type\":\"string\",\"description\":\"full hash or unique prefix\"},"
" \"title\":{\"type\":\"string\",\"description\":\"default: the old session's\"}}},"
"\"DraftCreate\":{\"type\":\"object\",\"required\":[\"session_id\"],\"properties\":{"
" \"session_id\":{\"type\":\"string\"},"
" \"provider\":{\"type\":\"string\",\"examples\":[\"openai\",\"anthropic\",\"local\"]},"
" \"model\":{\"type\":\"string\"}},\"additionalProperties\":false},"
"\"DraftJob\":{\"type\":\"object\",\"required\":[\"job_id\",\"session_id\",\"status\"],"
" \"properties\":{\"job_id\":{\"type\":\"string\"},\"session_id\":{\"type\":\"string\"},"
" \"status\":{\"type\":\"string\",\"enum\":[\"queued\",\"running\",\"done\",\"failed\"]},"
" \"provider\":{\"type\":\"string\"},\"model\":{\"type\":\"string\"},"
" \"created_at\":{\"type\":\"string\"},\"started_at\":{\"type\":[\"string\",\"null\"]},"
" \"finished_at\":{\"type\":[\"string\",\"null\"]},"
" \"error\":{\"type\":\"string\",\"description\":\"only when failed\"},"
" \"draft\":{\"type\":\"object\",\"description\":\"only when done: the proposed"
"  checkpoint {title, summary, decisions, assumptions, tasks, open_questions, entities,"
"  artifacts, metadata: {draft: {session_id, turn_range: {first_seq, last_seq}, provider,"
"  model, job_id}}}; not saved\"}}},"
"\"ReviewParams\":{\"type\":\"object\",\"properties\":{"
" \"llm\":{\"type\":\"boolean\",\"description\":\"false skips the LLM pass\"},"
" \"provider\":{\"type\":\"string\"},\"model\":{\"type\":\"string\"}}},"
"\"Review\":{\"type\":\"object\",\"properties\":{\"commit_hash\":{\"type\":\"string\"},"
" \"space\":{\"type\":\"string\"},\"findings\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},"
"  \"message\":{\"type\":\"string\"},\"items\":{\"type\":\"array\"},"
"  \"source\":{\"type\":\"string\",\"enum\":[\"deterministic\",\"llm\"]}}}},"
" \"passes\":{\"type\":\"array\"}}},"
"\"Ingest\":{\"type\":\"object\",\"required\":[\"space\",\"transcript\"],\"properties\":{"
" \"space\":{\"type\":\"string\"},\"transcript\":{\"type\":\"string\"},"
" \"format\":{\"type\":\"string\",\"enum\":[\"auto\",\"text\",\"markdown\",\"chatgpt\",\"claude\"]},"
" \"title\":{\"type\":\"string\"}}},"
"\"IngestResult\":{\"type\":\"object\",\"properties\":{"
" \"session\":{\"$ref\":\"#/components/schemas/Session\"},\"turns\":{\"type\":\"integer\"},"
" \"format\":{\"type\":\"string\"}}},"
"\"ContextPackParams\":{\"type\":\"object\",\"properties\":{"
" \"session_id\":{\"type\":\"string\"},\"transcript\":{\"type\":\"string\"},"
" \"format\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"}}},"
"\"Overview\":{\"type\":\"array\",\"items\":{\"allOf\":[{\"$ref\":\"#/components/schemas/Space\"},"
" {\"type\":\"object\",\"properties\":{\"head_checkpoint\":{\"type\":[\"object\",\"null\"],"
"  \"properties\":{\"title\":{\"type\":\"string\"},\"author\":{\"type\":\"string\"},"
"  \"created_at\":{\"type\":\"string\"}}},\"sessions\":{\"type\":\"integer\"},"
"  \"last_activity\":{\"type\":\"string\"}}}]}},"
"\"Graph\":{\"type\":\"object\",\"properties\":{\"space\":{\"type\":\"string\"},"
" \"total\":{\"type\":\"integer\"},\"next\":{\"type\":[\"string\",\"null\"],"
"  \"description\":\"pass as ?after= for the next page\"},"
" \"nodes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
"  \"hash\":{\"type\":\"string\"},\"parent\":{\"type\":[\"string\",\"null\"]},"
"  \"merge_parent\":{\"type\":\"string\"},\"restored_from\":{\"type\":\"string\"},"
"  \"title\":{\"type\":\"string\"},\"author\":{\"type\":\"string\"},"
"  \"created_at\":{\"type\":\"string\"},\"spaces\":{\"type\":\"array\"},"
"  \"heads\":{\"type\":\"array\"},\"own\":{\"type\":\"boolean\"}}}}}},"
"\"AuthState\":{\"type\":\"object\",\"properties\":{"
" \"token_required\":{\"type\":\"boolean\"},\"authenticated\":{\"type\":\"boolean\"}}},"
"\"AuthToken\":{\"type\":\"object\",\"required\":[\"token\"],\"properties\":{"
" \"token\":{\"type\":\"string\"}}},"
"\"Version\":{\"type\":\"object\",\"properties\":{\"version\":{\"type\":\"string\"}}},"
"\"Providers\":{\"type\":\"object\",\"properties\":{\"default\":{\"type\":\"string\"},"
" \"providers\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
"  \"name\":{\"type\":\"string\"},\"default_model\":{\"type\":\"string\"},"
"  \"configured\":{\"type\":\"boolean\"},\"reason\":{\"type\":\"string\"}}}}}},"
"\"ContextPreview\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
" \"provider\":{\"type\":\"string\"},\"model\":{\"type\":\"string\"},"
" \"system\":{\"type\":\"string\"},\"messages\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{\"role\":{\"type\":\"string\"},"
"  \"content\":{\"type\":\"string\"},\"seq\":{\"type\":\"integer\"}}}},"
" \"commit_hash\":{\"type\":[\"string\",\"null\"]},\"history_base_seq\":{\"type\":\"integer\"},"
" \"turns_included\":{\"type\":\"array\"},\"turns_dropped\":{\"type\":\"array\"},"
" \"trimmed\":{\"type\":\"boolean\"},\"budget_chars\":{\"type\":\"integer\"},"
" \"chars\":{\"type\":\"integer\"}}},"
"\"ContextPack\":{\"type\":\"object\",\"properties\":{"
" \"markdown\":{\"type\":\"string\"},\"turns\":{\"type\":\"integer\"},"
" \"title\":{\"type\":\"string\"},\"source\":{\"type\":\"string\"}}}"
"}}";

static json_t *ref(const char *schema)
{
	char path[96];

	snprintf(path, sizeof(path), "#/components/schemas/%s", schema);
	return json_pack("{s:s}", "$ref", path);
}

static json_t *json_content(const char *schema)
{
	const char *type = strcmp(schema, "Html") ? "application/json" : "text/html";

	return json_pack("{s:{s:o}}", type, "schema", ref(schema));
}

/* "get_v4_repos_id_commits" */
static json_t *operation_id(const struct http_route *r)
{
	char id[128];
	size_t n = 0;

	for (const char *p = r->method; *p && n < sizeof(id) - 1; p++)
		id[n++] = (char)tolower((unsigned char)*p);
	for (const char *p = r->pattern; *p && n < sizeof(id) - 1; p++) {
		if (isalnum((unsigned char)*p))
			id[n++] = *p;
		else if (n && id[n - 1] != '_' && *p != '}')
			id[n++] = '_';
	}
	while (n && id[n - 1] == '_')
		n--;
	id[n] = '\0';
	return json_string(id);
}

static json_t *parameters(const struct http_route *r)
{
	json_t *list = json_array();
	const char *open = strchr(r->pattern, '{');

	if (open) {
		const char *close = strchr(open, '}');

		json_array_append_new(list, json_pack("{s:s%, s:s, s:b, s:{s:s}}", "name", open + 1,
						       (size_t)(close - open - 1), "in", "path",
						       "required", 1, "schema", "type", "string"));
	}
	if (r->doc.query)
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:{s:s, s:i}}", "name",
						       r->doc.query, "in", "query", "required", 0,
						       "schema", "type", "integer", "minimum", 0));
	return list;
}

static json_t *operation(const struct http_route *r)
{
	char status[8];
	json_t *op, *responses;

	snprintf(status, sizeof(status), "%d", r->doc.status);
	responses = json_pack("{s:{s:s, s:o}, s:{s:s, s:o}}", status, "description", "success",
			      "content", json_content(r->doc.result), "default", "description",
			      "an error", "content", json_content("Error"));
	if (r->doc.events)
		json_object_set_new(json_object_get(json_object_get(responses, status), "content"),
				    "text/event-stream", json_pack("{s:{s:s, s:s}}", "schema",
				    "type", "string", "description",
				    "server-sent events generation, delta..., then done or error, each with"
				    " an id (docs/http.md, Streaming chat)"));
	op = json_pack("{s:s, s:o, s:o, s:o}", "summary", r->doc.summary, "operationId",
		       operation_id(r), "parameters", parameters(r), "responses", responses);
	if (r->doc.op)
		json_object_set_new(op, "description",
				    json_sprintf("Calls the operation '%s'.", r->doc.op));
	if (r->doc.body)
		json_object_set_new(op, "requestBody",
				    json_pack("{s:b, s:o}", "required", 1, "content",
					      json_content(r->doc.body)));
	if (r->flags & ROUTE_OPEN)
		json_object_set_new(op, "security", json_array());
	return op;
}

json_t *http_openapi(void)
{
	json_t *doc, *paths = json_object();
	json_t *components = json_loads(components_json, 0, NULL);

	if (!components)
		BUG("the components literal of openapi.c is not valid JSON");
	for (const struct http_route *r = http_routes; r->method; r++) {
		char method[8];
		json_t *item = json_object_get(paths, r->pattern);
		size_t i;

		for (i = 0; r->method[i] && i < sizeof(method) - 1; i++)
			method[i] = (char)tolower((unsigned char)r->method[i]);
		method[i] = '\0';
		if (!item) {
			item = json_object();
			json_object_set_new(paths, r->pattern, item);
		}
		json_object_set_new(item, method, operation(r));
	}
	doc = json_pack("{s:s, s:{s:s, s:s, s:s}, s:o, s:o, s:[{s:[]}, {}]}",
			"openapi", "3.1.0",
			"info", "title", "Smriti HTTP API", "version", "1",
			"description", "Version control for reasoning state. Spaces are 'repos'"
			" and Checkpoints are 'commits' in the API.",
			"paths", paths, "components", components,
			"security", "bearer");
	return doc;
}
