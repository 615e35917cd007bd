/*
 * decl.h -- the operations' declarations: each operation's name, summary,
 * parameters and result as JSON Schema, its errors, the role it needs and
 * the transports that expose it, written once in src/ops/decl/ (JSON, a
 * file an area) and built into the binary (tools/embed.c --plain, indexed by
 * tools/decl_index.c).  api_call() checks every
 * call's parameters against them; /openapi.json (http/openapi.c) and the
 * MCP tool list (mcp/mcp_tools.c) are generated from them.
 *
 * A declaration file is {"$defs": {NAME: schema}, "tags": [{name,
 * description}], "operations": {NAME: declaration}}; docs/architecture.md
 * ("An operation") describes a declaration's members.  Schemas refer to
 * each other as {"$ref": "#/$defs/NAME"}.
 */
#ifndef SMRITI_DECL_H
#define SMRITI_DECL_H

#include <jansson.h>

#include "util/err.h"

/*
 * Every declaration file merged into {"$defs", "tags", "operations"}:
 * parsed once per process and only read afterwards (HTTP workers share
 * it).  Borrowed; a file that does not parse, or a name declared twice, is
 * a BUG() at the first call.
 */
const json_t *decl_all(void);

/*
 * One operation's declaration (NULL if none), and the shared schema a
 * "#/$defs/NAME" names (BUG() when there is none): each parsed alone when
 * first asked for, not with decl_all(); borrowed.
 */
const json_t *decl_op(const char *name);
const json_t *decl_ref(const char *ref);

/*
 * Merges the declaration files texts[0..n) (JSON text each) into a new
 * document as decl_all() describes; NULL with err set when one does not
 * parse or declares a name twice.  For tests that build the documents from
 * changed declarations.
 */
json_t *decl_merge(const char *const *texts, size_t n, struct smr_err *err);

/*
 * Checks v against schema, whose $refs name the shared schemas (decl_ref): SMR_OK, or
 * SMR_EUSAGE for a missing required member and SMR_EINVAL for any other
 * mismatch, with a message naming the path ("missing required parameter
 * 'space'", "parameter 'tasks[0].status' must be one of: open, done").
 * noun is the word for a member: "parameter", "argument".  schema is
 * compiled at its first check and kept, referenced, for the process
 * (ops/schema_node.h): pass the declarations' schemas, which never change,
 * not ones made for one call.
 */
enum smr_rc decl_check(const json_t *schema, const json_t *v, const char *noun,
		       struct smr_err *err);

/*
 * Operation op's HTTP route {method, path, operationId, status?, arg?,
 * errors?, minimal?} in decl for method and path; NULL when it declares
 * none.  minimal: the Location template of its answer to Prefer:
 * return=minimal (http/routes.c).
 * Borrowed.
 */
const json_t *decl_http(const json_t *decl, const char *op, const char *method,
			const char *path);

/* The operations that have an MCP tool, in declared order (*n of them); static. */
const char *const *decl_mcp_ops(size_t *n);

/*
 * The definition a "#/$defs/NAME" names in defs, or in the index when defs
 * is NULL (decl_ref); borrowed.  BUG() when there is none.
 */
const json_t *decl_def(const json_t *defs, const char *ref);

/*
 * A copy of schema with every {"$ref": "#/$defs/NAME"} replaced by the
 * definition in defs (NULL: the index's; themselves resolved), for
 * documents that must stand alone (an MCP tool's schemas); new reference.
 */
json_t *decl_inline(const json_t *defs, const json_t *schema);

/*
 * A copy of schema with every "#/$defs/NAME" rewritten to prefix NAME
 * ("#/components/schemas/"); new reference.
 */
json_t *decl_rebase(const json_t *schema, const char *prefix);

#endif
