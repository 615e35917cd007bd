/*
 * mcp_tools.c -- the MCP tools: one row per tool, each naming the one
 * operation (ops/api.h) it runs, with the schemas and descriptions an
 * agent reads in tools/list.
 *
 * A tool is a mapping, never a second implementation: its arguments are
 * checked against its inputSchema, turned into the operation's parameters,
 * and the operation's result document is returned as structuredContent
 * (arrays wrapped in an object, since outputSchema roots are objects) plus
 * the same JSON as a text block.  An operation's failure (not found,
 * conflict, invalid input) is a tool result with isError, never a JSON-RPC
 * error: the agent sees the message and can correct itself.
 *
 * The JSON definitions are built once per process (pthread_once) and only
 * read afterwards, so HTTP worker threads share them.  Every json_t *
 * returned here is a new reference the caller json_decref()s.
 */
#include "mcp/mcp_int.h"
#include "ops/api.h"
#include "ops/decl.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_DEFAULT_LIMIT 20
#define LOG_MAX_LIMIT 1000

struct mcp_tool {
	const char *name;
	const char *title;
	const char *op;              /* operation run by api_call */
	const char *description;
	json_t *(*input)(void);      /* inputSchema; new reference */
	json_t *(*output)(void);     /* outputSchema; new reference */
	/* Operation parameters from checked arguments; new reference. */
	json_t *(*params)(const struct mcp_session *s, const json_t *args);
	const char *wrap;            /* key holding a result that is not an object */
	int read_only;
};

/* ---- schema builders ---- */

static json_t *s_string(const char *desc)
{
	return json_pack("{s:s, s:i, s:s}", "type", "string", "minLength", 1,
			 "description", desc);
}

static json_t *s_text(const char *desc)
{
	return json_pack("{s:s, s:s}", "type", "string", "description", desc);
}

/* An object schema with no properties yet; closed objects refuse unknown keys. */
static json_t *s_object(int closed)
{
	json_t *o = json_pack("{s:s, s:{}}", "type", "object", "properties");

	if (closed)
		json_object_set_new(o, "additionalProperties", json_false());
	return o;
}

/* Adds property name (stealing schema); required adds it to "required". */
static void prop(json_t *obj, const char *name, json_t *schema, int required)
{
	json_t *req = json_object_get(obj, "required");

	json_object_set_new(json_object_get(obj, "properties"), name, schema);
	if (!required)
		return;
	if (!req) {
		req = json_array();
		json_object_set_new(obj, "required", req);
	}
	json_array_append_new(req, json_string(name));
}

static const char ref_desc[] =
	"Which checkpoint: a commit_hash, a unique prefix of it (4+ hex characters), a Space "
	"name (its HEAD) or SPACE~N (N checkpoints before HEAD)";
static const char space_desc[] = "Name of the Space";

/* ---- output schemas ---- */

static json_t *nullable_string(const char *desc)
{
	return json_pack("{s:[s,s], s:s}", "type", "string", "null", "description", desc);
}

static json_t *out_item(const char *key, int tasks)
{
	json_t *o = s_object(0);

	prop(o, key, json_pack("{s:s}", "type", "string"), 1);
	if (tasks)
		prop(o, "status", json_pack("{s:s, s:[s,s]}", "type", "string", "enum",
					    "open", "done"), 1);
	return o;
}

static json_t *out_list(const char *key, int tasks, const char *desc)
{
	return json_pack("{s:s, s:o, s:s}", "type", "array", "items", out_item(key, tasks),
			 "description", desc);
}

static json_t *out_handoff_note(void)
{
	json_t *o = s_object(0);

	prop(o, "note", s_text("The note"), 1);
	prop(o, "checkpoint", s_text("commit_hash of the checkpoint it was left on"), 1);
	prop(o, "author", s_text("Who left it"), 1);
	prop(o, "created_at", s_text("UTC time, ISO 8601"), 1);
	prop(o, "on_head", json_pack("{s:s, s:s}", "type", "boolean", "description",
				     "Whether it was left on the HEAD you read (false: HEAD moved "
				     "since; check it still applies)"), 1);
	return o;
}

static json_t *out_checkpoint(void)
{
	json_t *o = s_object(0);
	json_t *art = out_item("name", 0);

	prop(art, "kind", json_pack("{s:s}", "type", "string"), 1);
	prop(art, "content", json_pack("{s:s}", "type", "string"), 1);
	prop(o, "commit_hash", s_text("SHA-256 of the checkpoint; pass it as `parent` when "
				      "you write the next checkpoint on top of this one"), 1);
	prop(o, "parent_hash", nullable_string("The checkpoint before this one; null for the "
					       "first checkpoint of a line"), 1);
	prop(o, "merge_parent_hash", s_text("Second parent of a merge"), 0);
	prop(o, "space", nullable_string("Space holding the checkpoint"), 1);
	prop(o, "title", s_text("Title"), 1);
	prop(o, "summary", s_text("Summary"), 1);
	prop(o, "decisions", out_list("text", 0, "Decisions taken"), 1);
	prop(o, "assumptions", out_list("text", 0, "Assumptions the work relies on"), 1);
	prop(o, "tasks", out_list("text", 1, "Tasks, each open or done"), 1);
	prop(o, "open_questions", out_list("text", 0, "Questions still open"), 1);
	prop(o, "entities", out_list("name", 0, "Things the work is about"), 1);
	prop(o, "artifacts", json_pack("{s:s, s:o}", "type", "array", "items", art), 1);
	prop(o, "metadata", json_pack("{s:s}", "type", "object"), 1);
	prop(o, "author", s_text("Who wrote it (may be empty)"), 1);
	prop(o, "created_at", s_text("UTC time, ISO 8601"), 1);
	/* HEAD reads only, when a person left one: the Space's newest note */
	prop(o, "handoff", out_handoff_note(), 0);
	return o;
}

static json_t *out_space(void)
{
	json_t *o = s_object(0);

	prop(o, "id", s_text("Internal id of the Space"), 1);
	prop(o, "name", s_text("Name of the Space"), 1);
	prop(o, "description", s_text("Description (may be empty)"), 1);
	prop(o, "created_at", s_text("UTC time, ISO 8601"), 1);
	prop(o, "head", nullable_string("commit_hash of HEAD; null while the Space is empty"), 1);
	return o;
}

static json_t *out_spaces(void)
{
	json_t *o = s_object(0);

	prop(o, "spaces", json_pack("{s:s, s:o}", "type", "array", "items", out_space()), 1);
	return o;
}

static json_t *out_log(void)
{
	json_t *o = s_object(0);

	prop(o, "checkpoints", json_pack("{s:s, s:o, s:s}", "type", "array", "items",
					 out_checkpoint(), "description",
					 "Newest first; the first one is the ref itself"), 1);
	return o;
}

static json_t *out_diff(void)
{
	json_t *o = s_object(0);

	prop(o, "from", s_text("commit_hash of the first checkpoint"), 1);
	prop(o, "to", s_text("commit_hash of the second checkpoint"), 1);
	prop(o, "identical", json_pack("{s:s}", "type", "boolean"), 1);
	return o;
}

static json_t *out_review(void)
{
	json_t *o = s_object(0), *f = s_object(0), *item = s_object(0), *pass = s_object(0);

	prop(item, "field", s_text("decisions, assumptions, tasks, open_questions, entities "
				   "or artifacts"), 1);
	prop(item, "index", json_pack("{s:s, s:s}", "type", "integer", "description",
				      "0-based index into the field"), 1);
	prop(item, "text", s_text("The item's text (an entity's or artifact's name)"), 1);
	prop(f, "type", s_text("contradiction, duplicate_decision, hidden_assumption, "
			       "resolved_question or disconnected_entity"), 1);
	prop(f, "message", s_text("What is wrong, in one sentence"), 1);
	prop(f, "items", json_pack("{s:s, s:o}", "type", "array", "items", item), 1);
	prop(f, "source", s_text("The pass that found it: deterministic or llm"), 1);
	prop(pass, "source", s_text("deterministic or llm"), 1);
	prop(pass, "ran", json_pack("{s:s}", "type", "boolean"), 1);
	prop(o, "commit_hash", s_text("The checkpoint reviewed"), 1);
	prop(o, "space", s_text("Its Space"), 1);
	prop(o, "findings", json_pack("{s:s, s:o}", "type", "array", "items", f), 1);
	prop(o, "passes", json_pack("{s:s, s:o}", "type", "array", "items", pass), 1);
	return o;
}

static json_t *out_update(void)
{
	json_t *o = s_object(0);

	prop(o, "checkpoint", out_checkpoint(), 1);
	prop(o, "changes", json_pack("{s:s, s:s}", "type", "object", "description",
				     "What changed, per field: {decisions: {added: 2}, tasks: "
				     "{done: 1}, title: true, ...}"), 1);
	prop(o, "changed", s_text("The same in words: \"+2 decisions, 1 task done\""), 1);
	return o;
}

static json_t *out_merge(void)
{
	json_t *o = s_object(0);

	prop(o, "status", s_text("merged, fast-forward, up-to-date or conflict"), 1);
	prop(o, "checkpoint", out_checkpoint(), 0);
	prop(o, "base", nullable_string("The nearest common ancestor"), 0);
	prop(o, "conflicts", json_pack("{s:s, s:s}", "type", "array", "description",
				       "[{field, item?, base, ours, theirs}] left to resolve"), 0);
	prop(o, "contradictions", json_pack("{s:s, s:s}", "type", "array", "description",
					    "Review findings of the merged state"), 0);
	return o;
}

/* ---- input schemas ---- */

static json_t *in_none(void)
{
	return s_object(1);
}

static json_t *in_create_space(void)
{
	json_t *o = s_object(1);

	prop(o, "name", s_string("Name of the new Space: up to 100 characters, no '/', '~' or '^'"),
	     1);
	prop(o, "description", s_text("What the Space is for"), 0);
	return o;
}

static json_t *in_space(void)
{
	json_t *o = s_object(1);

	prop(o, "space", s_string(space_desc), 1);
	return o;
}

static json_t *in_ref(void)
{
	json_t *o = s_object(1);

	prop(o, "ref", s_string(ref_desc), 1);
	return o;
}

static json_t *in_log(void)
{
	json_t *o = s_object(1);

	prop(o, "ref", s_string(ref_desc), 1);
	prop(o, "limit", json_pack("{s:s, s:i, s:i, s:s}", "type", "integer", "minimum", 1,
				   "maximum", LOG_MAX_LIMIT, "description",
				   "How many checkpoints at most (default 20)"), 0);
	return o;
}

static json_t *in_diff(void)
{
	json_t *o = s_object(1);

	prop(o, "from", s_string("The older checkpoint (same forms as a ref: hash, prefix, "
				 "Space, SPACE~N)"), 1);
	prop(o, "to", s_string("The newer checkpoint"), 1);
	return o;
}

/* A list of items given as strings or as objects with a key (text or name). */
static json_t *in_list(const char *key, const char *desc, int tasks)
{
	json_t *obj = s_object(0);

	prop(obj, key, s_string(key), 1);
	if (tasks)
		prop(obj, "status", json_pack("{s:s, s:[s,s]}", "type", "string", "enum", "open",
					      "done"), 0);
	if (!strcmp(key, "name")) {
		prop(obj, "kind", s_text("What sort of thing it is"), 0);
		prop(obj, "description", s_text("One line about it"), 0);
	}
	return json_pack("{s:s, s:{s:[{s:s}, o]}, s:s}", "type", "array", "items", "anyOf",
			 "type", "string", obj, "description", desc);
}

static json_t *in_artifacts(void)
{
	json_t *obj = s_object(0);

	prop(obj, "name", s_string("File name or label"), 1);
	prop(obj, "kind", s_text("text, code, plan, ... (default text)"), 0);
	prop(obj, "content", s_text("The content itself"), 1);
	return json_pack("{s:s, s:o, s:s}", "type", "array", "items", obj, "description",
			 "Content the work produced or relies on, kept with the checkpoint");
}

static json_t *in_write(void)
{
	json_t *o = s_object(1);

	prop(o, "space", s_string(space_desc), 1);
	prop(o, "parent", s_string("The commit_hash you read with read_head. The write only "
				   "succeeds while it is still HEAD. Omit it only for the first "
				   "checkpoint of an empty Space"), 0);
	prop(o, "title", s_text("One line saying what state this is"), 0);
	prop(o, "summary", s_text("A paragraph on where the work stands"), 0);
	prop(o, "decisions", in_list("text", "Decisions taken (strings or {text})", 0), 0);
	prop(o, "assumptions", in_list("text", "What the decisions rely on but nobody "
				       "verified (strings or {text})", 0), 0);
	prop(o, "tasks", in_list("text", "Tasks (strings, or {text, status: open|done})", 1), 0);
	prop(o, "open_questions", in_list("text", "Questions still open (strings or {text})",
					  0), 0);
	prop(o, "entities", in_list("name", "People, systems, files the work is about "
				    "(strings or {name, kind, description})", 0), 0);
	prop(o, "artifacts", in_artifacts(), 0);
	prop(o, "metadata", json_pack("{s:s, s:s}", "type", "object", "description",
				      "Free-form provenance (source, tool, turn range)"), 0);
	prop(o, "author", s_text("Who is writing (defaults to SMRITI_AUTHOR or the MCP "
				 "client's name)"), 0);
	return o;
}

/* Refs to items of the parent: their text (name) or their 1-based position. */
static json_t *in_refs(const char *desc)
{
	return json_pack("{s:s, s:{s:[{s:s, s:i}, {s:s, s:i}]}, s:s}", "type", "array", "items",
			 "anyOf", "type", "string", "minLength", 1, "type", "integer", "minimum",
			 1, "description", desc);
}

static json_t *in_update(void)
{
	json_t *o = s_object(1), *add = s_object(1), *drop = s_object(1);
	const char *lists[] = { "decisions", "assumptions", "tasks", "open_questions",
				"entities", "artifacts" };

	prop(add, "decisions", in_list("text", "Decisions taken", 0), 0);
	prop(add, "assumptions", in_list("text", "Assumptions relied on", 0), 0);
	prop(add, "tasks", in_list("text", "Tasks (strings, or {text, status})", 1), 0);
	prop(add, "open_questions", in_list("text", "Questions now open", 0), 0);
	prop(add, "entities", in_list("name", "Things the work is about", 0), 0);
	prop(add, "artifacts", in_artifacts(), 0);
	json_object_set_new(add, "description", json_string(
		"Items to add; an item already there is an error (an artifact of the same name "
		"is replaced)"));
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		prop(drop, lists[i], in_refs("Items to remove"), 0);
	json_object_set_new(drop, "description", json_string(
		"Items to remove, by exact text (name for entities and artifacts) or 1-based "
		"position in the parent"));
	prop(o, "space", s_string(space_desc), 1);
	prop(o, "parent", s_string("Optional. With it the change only lands while that "
				   "commit_hash is still HEAD (else a conflict); without it the "
				   "change is applied to whatever HEAD is, atomically"), 0);
	prop(o, "add", add, 0);
	prop(o, "drop", drop, 0);
	prop(o, "done", in_refs("Tasks to mark done (text or 1-based position)"), 0);
	prop(o, "reopen", in_refs("Tasks to mark open again"), 0);
	prop(o, "title", s_text("A new title (replaces the parent's)"), 0);
	prop(o, "summary", s_text("A new summary (replaces the parent's)"), 0);
	prop(o, "metadata", json_pack("{s:s, s:s}", "type", "object", "description",
				      "This checkpoint's own provenance (not carried forward)"), 0);
	prop(o, "author", s_text("Who is writing (defaults to SMRITI_AUTHOR or the MCP "
				 "client's name)"), 0);
	return o;
}

static json_t *in_merge(void)
{
	json_t *o = s_object(1);

	prop(o, "space", s_string("The Space whose HEAD receives the merge"), 1);
	prop(o, "ref", s_string("The checkpoint to merge in: a hash, SPACE or SPACE~N; another "
				"Space's checkpoint works when it shares history (a fork)"), 1);
	prop(o, "resolution", json_pack("{s:s, s:s}", "type", "object", "description",
					"How to settle conflicts: {\"*\": \"ours\"|\"theirs\"} for all,"
					" or {\"summary\": \"ours\", \"decisions\": {\"<text>\": "
					"\"theirs\"}} one by one"), 0);
	prop(o, "title", s_text("The merge checkpoint's own title (titles are never merged); "
				"default \"Merge REF into SPACE\""), 0);
	prop(o, "author", s_text("Who is merging"), 0);
	return o;
}

static json_t *in_restore(void)
{
	json_t *o = s_object(1);

	prop(o, "space", s_string("The Space whose HEAD moves"), 1);
	prop(o, "ref", s_string("The earlier checkpoint to bring back (hash, prefix, "
				"SPACE~N)"), 1);
	prop(o, "parent", s_string("The HEAD you expect (its hash): if HEAD moved since, "
				   "the restore is refused as a conflict and nothing is written"), 0);
	prop(o, "author", s_text("Who is restoring"), 0);
	return o;
}

static json_t *in_handoff(void)
{
	json_t *o = s_object(1);

	prop(o, "space", s_string("The Space to hand off"), 1);
	prop(o, "note", s_string("What the next agent must know (\"do not drop the foreign "
				 "keys\"); at most 8192 bytes"), 1);
	prop(o, "ref", s_string("With restore: the earlier checkpoint to restore first. "
				"Without: HEAD as you read it (a conflict if HEAD moved)"), 0);
	prop(o, "restore", json_pack("{s:s, s:s}", "type", "boolean", "description",
				     "Restore ref onto HEAD and leave the note on it, in one call"),
	     0);
	prop(o, "author", s_text("Who leaves the note"), 0);
	return o;
}

static json_t *out_handoff(void)
{
	json_t *o = s_object(0);

	prop(o, "handoff", out_handoff_note(), 1);
	prop(o, "checkpoint", out_checkpoint(), 1);
	prop(o, "restored", json_pack("{s:s}", "type", "boolean"), 1);
	return o;
}

static json_t *in_fork(void)
{
	json_t *o = s_object(1);

	prop(o, "ref", s_string(ref_desc), 1);
	prop(o, "into", s_string("Name of the new Space"), 1);
	return o;
}

static json_t *in_review(void)
{
	json_t *o = s_object(1);

	prop(o, "ref", s_string(ref_desc), 1);
	prop(o, "llm", json_pack("{s:s, s:s}", "type", "boolean", "description",
				 "Also run the language-model pass when a provider is configured "
				 "(default true); false keeps the review deterministic and fast"), 0);
	return o;
}

static json_t *in_search(void)
{
	json_t *o = s_object(1);

	prop(o, "query", s_string("Words to look for (all must appear), \"an exact phrase\", "
				  "or word* for any word starting with it. Other punctuation "
				  "is ignored."), 1);
	prop(o, "space", s_string("Only this Space"), 0);
	prop(o, "field", json_pack("{s:s, s:[s,s,s,s,s,s,s,s,s], s:s}", "type", "string",
				   "enum", "title", "summary", "decisions", "assumptions", "tasks",
				   "open_questions", "entities", "artifacts", "turn",
				   "description", "Only items of this field"), 0);
	prop(o, "author", s_string("Only what this author wrote"), 0);
	prop(o, "since", s_string("Only items written since: 2026-12-01, '2026-12-01 12:00', "
				  "yesterday, '3 days ago'"), 0);
	prop(o, "turns", json_pack("{s:s, s:s}", "type", "boolean", "description",
				   "Search chat turns too (default false)"), 0);
	prop(o, "limit", json_pack("{s:s, s:i, s:i, s:s}", "type", "integer", "minimum", 1,
				   "maximum", SEARCH_LIMIT_MAX, "description", "How many results (default 20)"),
	     0);
	return o;
}

static json_t *out_search(void)
{
	json_t *o = s_object(0), *r = s_object(0), *first = s_object(0);

	prop(first, "commit_hash", s_text("The checkpoint that introduced the item"), 1);
	prop(first, "author", s_text("Who wrote it"), 1);
	prop(first, "created_at", s_text("When"), 1);
	prop(r, "space", s_text("The Space"), 1);
	prop(r, "kind", s_text("checkpoint or turn"), 1);
	prop(r, "field", s_text("title, summary, decisions, ..., artifacts, or turn"), 1);
	prop(r, "snippet", s_text("The matching text, cut around the first match"), 1);
	prop(r, "highlights", json_pack("{s:s, s:s}", "type", "array", "description",
					"[start, end) byte offsets of the matches in snippet"), 1);
	prop(r, "score", json_pack("{s:s}", "type", "number"), 1);
	prop(r, "text", s_text("The whole item"), 1);
	prop(r, "commit_hash", s_text("Newest checkpoint carrying the item as introduced"), 0);
	prop(r, "in_head", json_pack("{s:s, s:s}", "type", "boolean", "description",
				     "Whether the Space's HEAD still holds the item"), 0);
	prop(r, "first", first, 0);
	prop(r, "spaces", json_pack("{s:s, s:s}", "type", "array", "description",
				    "Every searched Space holding this checkpoint (a fork copies "
				    "history), by name: [{space, in_head}]; space and in_head "
				    "above are the first's"), 0);
	prop(r, "session_id", s_text("A turn's session"), 0);
	prop(r, "seq", json_pack("{s:s}", "type", "integer"), 0);
	prop(o, "query", s_text("The query"), 1);
	prop(o, "total", json_pack("{s:s}", "type", "integer"), 1);
	prop(o, "truncated", json_pack("{s:s}", "type", "boolean"), 1);
	prop(o, "results", json_pack("{s:s, s:o}", "type", "array", "items", r), 1);
	return o;
}

static json_t *out_blame(void)
{
	json_t *o = s_object(0), *it = s_object(0), *by = s_object(0);

	prop(by, "commit_hash", s_text("The checkpoint that introduced the item"), 1);
	prop(by, "title", s_text("Its title"), 1);
	prop(by, "author", s_text("Who wrote it"), 1);
	prop(by, "created_at", s_text("When"), 1);
	prop(by, "source", json_pack("{s:[s,s], s:s}", "type", "object", "null", "description",
				     "{session_id, first_seq, last_seq} when it was drafted from "
				     "a session"), 1);
	prop(it, "field", s_text("title, summary, decisions, ..., artifacts"), 1);
	prop(it, "ordinal", json_pack("{s:s}", "type", "integer"), 1);
	prop(it, "text", s_text("The item"), 1);
	prop(it, "here", json_pack("{s:s}", "type", "boolean"), 1);
	prop(it, "introduced", by, 1);
	prop(o, "commit_hash", s_text("The checkpoint blamed"), 1);
	prop(o, "space", s_text("Its Space"), 1);
	prop(o, "items", json_pack("{s:s, s:o}", "type", "array", "items", it), 1);
	return o;
}

/* ---- argument mappings ---- */

static json_t *p_same(const struct mcp_session *s, const json_t *args)
{
	(void)s;
	return json_deep_copy(args);
}

static const char *author_of(const struct mcp_session *s, const json_t *args)
{
	const char *a = json_string_value(json_object_get(args, "author"));

	if (a)
		return a;
	return s->default_author ? s->default_author : s->client_name;
}

static json_t *p_log(const struct mcp_session *s, const json_t *args)
{
	json_t *p = p_same(s, args);

	if (!json_object_get(p, "limit"))
		json_object_set_new(p, "limit", json_integer(LOG_DEFAULT_LIMIT));
	return p;
}

static json_t *p_restore(const struct mcp_session *s, const json_t *args)
{
	json_t *p = p_same(s, args);
	const char *author = author_of(s, args);

	if (author)
		json_object_set_new(p, "author", mcp_json_text(author));
	return p;
}

/* write_checkpoint's flat arguments into checkpoint.create's {space, parent, author, checkpoint}. */
static json_t *p_write(const struct mcp_session *s, const json_t *args)
{
	json_t *fields = json_deep_copy(args);
	json_t *p = json_object();
	const char *author = author_of(s, args);

	json_object_set(p, "space", json_object_get(args, "space"));
	if (json_object_get(args, "parent"))
		json_object_set(p, "parent", json_object_get(args, "parent"));
	if (author)
		json_object_set_new(p, "author", mcp_json_text(author));
	json_object_del(fields, "space");
	json_object_del(fields, "parent");
	json_object_del(fields, "author");
	json_object_set_new(p, "checkpoint", fields);
	return p;
}

/* ---- the table ---- */

static const struct mcp_tool tools[] = {
	{ "list_spaces", "List Spaces", "space.list",
	  "List every Space with its HEAD. Takes no arguments. Returns {spaces: [{name, "
	  "description, head, id, created_at}]}; head is the commit_hash of the latest "
	  "checkpoint, or null while the Space is empty.",
	  in_none, out_spaces, p_same, "spaces", 1 },
	{ "create_space", "Create a Space", "space.create",
	  "Create a new, empty Space: a named line of work that holds checkpoints. Pass name "
	  "(and optionally description). Returns the Space; its head is null until the first "
	  "write_checkpoint. Fails with a conflict if the name is taken.",
	  in_create_space, out_space, p_same, NULL, 0 },
	{ "read_head", "Read the HEAD checkpoint", "head",
	  "Read the HEAD (latest) checkpoint of a Space: its title, summary, decisions, "
	  "assumptions, tasks, open questions, entities and artifacts, and the hand-off note a "
	  "person left for you (handoff: read it first). Pass space. Pass the "
	  "commit_hash you get as `parent` when you write the next checkpoint. An empty Space "
	  "is a not-found error: write its first checkpoint without a parent.",
	  in_space, out_checkpoint, p_same, NULL, 1 },
	{ "show_checkpoint", "Show a checkpoint", "show",
	  "Read one checkpoint in full. Pass ref: a commit_hash, a unique prefix of 4+ hex "
	  "characters, a Space name (its HEAD) or SPACE~N (N checkpoints before HEAD). "
	  "Returns the checkpoint document.",
	  in_ref, out_checkpoint, p_same, NULL, 1 },
	{ "log", "Checkpoint history", "log",
	  "List the history of a checkpoint, newest first, each before its parents (both "
	  "lines of a merge; a merge has merge_parent_hash). Pass ref (usually a Space name) "
	  "and optionally limit (default 20, at most 1000). Returns {checkpoints: [...]} with "
	  "full checkpoint documents.",
	  in_log, out_log, p_log, "checkpoints", 1 },
	{ "diff", "Compare two checkpoints", "diff",
	  "Compare two checkpoints field by field. Pass from and to (hashes, prefixes, Space "
	  "names or SPACE~N). Returns {from, to, identical} plus, for each field that "
	  "changed, {from, to} for title and summary or {added, removed, changed} for the "
	  "lists.",
	  in_diff, out_diff, p_same, NULL, 1 },
	{ "update_checkpoint", "Update the state", "checkpoint.update",
	  "Write the next checkpoint as a change to its parent: everything you do not "
	  "mention is kept. Pass space and any of add ({decisions: [...], tasks: [...], ...}), "
	  "drop ({decisions: [text or position], ...}), done and reopen (tasks by text or "
	  "position), title, summary. Without parent the change is applied to whatever HEAD "
	  "is, atomically, so agents writing at once never lose each other's items; with "
	  "parent it lands only while that is still HEAD. Naming an item that is not there, "
	  "or adding one that is, fails and saves nothing. Returns {checkpoint, changes, "
	  "changed}.",
	  in_update, out_update, p_restore, NULL, 0 },
	{ "merge", "Merge another line", "merge",
	  "Merge another line of work (ref: a checkpoint, or a fork's Space) into a Space's "
	  "HEAD, item by item from their nearest common ancestor. Returns {status: merged | "
	  "fast-forward | up-to-date, checkpoint, contradictions}. The merge checkpoint gets "
	  "its own title (title, else \"Merge REF into SPACE\"): titles are never merged. "
	  "When both sides changed the same item (or the summary) differently it fails with "
	  "the conflicts named and saves nothing: call again with resolution.",
	  in_merge, out_merge, p_restore, NULL, 0 },
	{ "write_checkpoint", "Write a checkpoint", "checkpoint.create",
	  "Save the current reasoning state as a new checkpoint on top of a Space's HEAD. "
	  "Pass space, parent (the commit_hash read_head gave you) and the state: title, "
	  "summary, decisions, assumptions, tasks, open_questions, entities, artifacts. This "
	  "writes the complete state exactly as given (anything left out is gone): to change "
	  "a few items use update_checkpoint instead. If HEAD moved since you read it the write is refused as a conflict that "
	  "names the current HEAD and nothing is saved: read it, merge, and retry. Returns "
	  "the stored checkpoint with its commit_hash.",
	  in_write, out_checkpoint, p_write, NULL, 0 },
	{ "restore", "Restore an earlier checkpoint", "restore",
	  "Bring back the state of an earlier checkpoint: writes a new checkpoint on top of "
	  "the Space's HEAD carrying that state (history is kept, nothing is deleted). Pass "
	  "space and ref. Returns the new HEAD checkpoint.",
	  in_restore, out_checkpoint, p_restore, NULL, 0 },
	{ "hand_off", "Hand off with a note", "handoff",
	  "Leave a note for the next agent on a Space (\"do not drop the foreign keys\"): "
	  "read_head then returns it as handoff, with on_head telling whether HEAD moved "
	  "since. Pass space and note; pass ref and restore: true to restore an earlier "
	  "checkpoint and hand it off in one call. Returns {handoff, checkpoint, restored}.",
	  in_handoff, out_handoff, p_restore, NULL, 0 },
	{ "fork", "Fork into a new Space", "fork",
	  "Start a new Space from a checkpoint, sharing its history, to try another "
	  "direction without touching the original. Pass ref and into (the new Space's "
	  "name). Returns the new Space; its head is ref's commit_hash.",
	  in_fork, out_space, p_same, NULL, 0 },
	{ "review", "Review a checkpoint", "review",
	  "Check a checkpoint for contradictions or duplicates among decisions, decisions "
	  "that rely on unlisted assumptions, open questions a decision already answers and "
	  "entities nothing references. Pass ref (and llm: false to skip the language-model "
	  "pass). Returns {commit_hash, space, findings: [{type, message, items: [{field, "
	  "index, text}], source}], passes}. Review only reads: fix what it finds with "
	  "write_checkpoint.",
	  in_review, out_review, p_same, "findings", 1 },
	{ "blame", "Who introduced each item", "blame",
	  "For every item of a checkpoint (title, summary, each decision, assumption, task, "
	  "open question, entity, artifact): the checkpoint that introduced it, its author "
	  "and time, and for a drafted checkpoint the session and turn range it came from. "
	  "Follows restores and merges back to where the item was first written. Pass ref "
	  "(a hash, a Space for its HEAD, SPACE~N, SPACE@{N}). Returns {commit_hash, space, "
	  "items: [{field, ordinal, text, here, introduced: {commit_hash, title, author, "
	  "created_at, source}}]}.",
	  in_ref, out_blame, p_same, NULL, 1 },
	{ "search", "Search checkpoints", "search",
	  "Full-text search over every checkpoint field and artifact (and chat turns with "
	  "turns: true): where was X decided, who said Y. Pass query and optionally space, "
	  "field, author, since, limit. Returns {results: [{space, field, snippet, "
	  "commit_hash, first: {commit_hash, author, created_at}, in_head, text, ...}]}, "
	  "best first: first is where the item first appeared, in_head whether the Space's "
	  "HEAD still holds it.",
	  in_search, out_search, p_same, NULL, 1 },
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static json_t *defs[NTOOLS];
static pthread_once_t defs_once = PTHREAD_ONCE_INIT;

static void build_defs(void)
{
	for (size_t i = 0; i < NTOOLS; i++) {
		const struct mcp_tool *t = &tools[i];

		/* _meta names the operation, whose access rule (x-smriti-operations) applies */
		defs[i] = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b, s:b, s:b}, s:{s:s}}",
				    "name", t->name, "title", t->title,
				    "description", t->description,
				    "inputSchema", t->input(), "outputSchema", t->output(),
				    "annotations", "readOnlyHint", t->read_only,
				    "destructiveHint", 0, "idempotentHint", t->read_only,
				    "openWorldHint", 0, "_meta", "smriti/operation", t->op);
		if (!defs[i])
			BUG("the definition of tool '%s' does not pack", t->name);
	}
}

static const json_t *tool_def(size_t i)
{
	pthread_once(&defs_once, build_defs);
	return defs[i];
}

void mcp_tools_enable(struct mcp_session *s)
{
	_Static_assert(NTOOLS <= MCP_TOOLS_MAX, "raise MCP_TOOLS_MAX");
	for (size_t i = 0; i < NTOOLS; i++)
		s->enabled[i] = api_find(tools[i].op) != NULL;
}

json_t *mcp_tools_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	json_t *list = json_array();

	if (json_object_get(params, "cursor")) {
		json_decref(list);
		return mcp_failf(fail, MCP_INVALID_PARAMS, "invalid cursor: tools/list has one page");
	}
	for (size_t i = 0; i < NTOOLS; i++)
		if (s->enabled[i])
			json_array_append(list, (json_t *)tool_def(i));
	return json_pack("{s:o}", "tools", list);
}

static json_t *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *tool_error(const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text",
			 mcp_json_text(msg), "isError", 1);
}

/* Makes result (carrying doc) the session's last tool result (see struct mcp_session). */
static void keep_result(struct mcp_session *s, json_t *doc, json_t *result)
{
	json_decref(s->last_doc);
	json_decref(s->last_result);
	free(s->last_result_text);
	s->last_doc = json_incref(doc);
	s->last_result = json_incref(result);
	s->last_result_text = NULL;
}

/*
 * The successful result: structuredContent plus the same JSON as text;
 * consumes doc.  The very document of the session's last result gives that
 * result again.
 */
static json_t *tool_result(struct mcp_session *s, const struct mcp_tool *t, json_t *doc)
{
	json_t *sc = doc, *out;
	size_t len;
	char *text;

	if (doc == s->last_doc && s->last_result) {
		json_decref(doc);
		return json_incref(s->last_result);
	}
	if (!json_is_object(doc))
		sc = json_pack("{s:o}", t->wrap ? t->wrap : "result", doc);
	text = json_dumps(sc, JSON_COMPACT);
	if (!text)
		BUG("cannot serialise the result of tool '%s'", t->name);
	len = strlen(text);
	/* jansson wrote text, so it is valid UTF-8: skip the second check */
	out = json_pack("{s:[{s:s, s:o}], s:o, s:b}", "content", "type", "text", "text",
			json_string_nocheck(text), "structuredContent", sc, "isError", 0);
	free(text);
	if (sc == doc && len < MCP_MAX_MESSAGE / 4)
		keep_result(s, doc, out);
	return out;
}

static int find_tool(const struct mcp_session *s, const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (s->enabled[i] && !strcmp(tools[i].name, name))
			return (int)i;
	return -1;
}

static json_t *run_tool(struct mcp_session *s, size_t i, const json_t *args)
{
	const struct mcp_tool *t = &tools[i];
	struct smr_err err = SMR_ERR_INIT;
	json_t *params, *result = NULL;
	enum smr_rc rc;

	if (decl_check(json_object_get(tool_def(i), "inputSchema"), args, "argument", &err))
		return tool_error("invalid arguments for %s: %s", t->name, err.msg);
	params = t->params(s, args);
	rc = s->call(s->cls, t->op, params, &result, &err);
	json_decref(params);
	if (rc) {
		json_decref(result);
		return tool_error("%s: %s", smr_rc_name(rc), err.msg);
	}
	if (!result)
		return tool_error("internal: %s returned nothing", t->op);
	return tool_result(s, t, result);
}

json_t *mcp_tools_call(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	json_t *empty = NULL, *out;
	int i;

	if (!name)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "tools/call needs a string 'name'");
	i = find_tool(s, name);
	if (i < 0)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "Unknown tool: '%.200s'", name);
	if (args && !json_is_object(args))
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "tools/call 'arguments' must be an object");
	if (!args)
		args = empty = json_object();
	out = run_tool(s, (size_t)i, args);
	json_decref(empty);
	return out;
}
