/*
 * ops_space.c -- operations on Spaces: create, read, list, rename, delete.
 */
#include "ops/auth.h"
#include "ops/context.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SPACE_NAME_MAX 100
#define SPACE_DESCRIPTION_MAX 10000

enum smr_rc ops_check_space_name(const char *name, struct smr_err *err)
{
	size_t n = strlen(name);

	if (!n)
		return smr_errf(err, SMR_EINVAL, "a space name cannot be empty");
	if (!utf8_valid(name, n))
		return smr_errf(err, SMR_EINVAL, "space name is not valid UTF-8");
	if (utf8_chars(name, n) > SPACE_NAME_MAX)
		return smr_errf(err, SMR_EINVAL, "space name is longer than %d characters",
				SPACE_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		/* '~' and '^' would read as SPACE~N and REF^2 */
		if (c < 0x20 || c == 0x7f || c == '~' || c == '^' || c == '/')
			return smr_errf(err, SMR_EINVAL,
					"space name '%s' has a character that is not allowed"
					" (control characters, '~', '^' and '/' are reserved)", name);
	}
	if (name[0] == ' ' || name[n - 1] == ' ')
		return smr_errf(err, SMR_EINVAL, "space name '%s' starts or ends with a space",
				name);
	return SMR_OK;
}

json_t *ops_space_json(const struct space *sp)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", sp->id, "name", sp->name,
			 "description", sp->description ? sp->description : "",
			 "created_at", sp->created_at,
			 "head", sp->head ? json_string(sp->head) : json_null());
}

enum smr_rc ops_space_create(struct ops_ctx *ctx, const char *name, const char *description,
			     struct space *out, struct smr_err *err)
{
	char id[37], now[32];
	struct space sp = { 0 };
	enum smr_rc rc;

	rc = ops_check_space_name(name, err);
	if (rc)
		return rc;
	if (description && !utf8_valid(description, strlen(description)))
		return smr_errf(err, SMR_EINVAL, "description is not valid UTF-8");
	if (description && utf8_chars(description, strlen(description)) > SPACE_DESCRIPTION_MAX)
		return smr_errf(err, SMR_EINVAL, "description is longer than %d characters",
				SPACE_DESCRIPTION_MAX);
	ctx->new_id(id);
	ctx->now(now);
	sp.id = id;
	sp.name = (char *)name;
	sp.description = (char *)(description ? description : "");
	sp.created_at = now;
	/* its owner's grant is part of the same transaction: no Space without the owner it was made for */
	rc = store_space_create(ctx->st, &sp,
				&(struct ref_move){ ops_actor(ctx), "create", now,
						    ops_new_space_owner(ctx) }, err);
	if (rc)
		return rc;
	ops_new_space_owned(ctx);
	return store_space_get(ctx->st, id, out, err);
}

enum smr_rc ops_space_get(struct ops_ctx *ctx, const char *space, struct space *out,
			  struct smr_err *err)
{
	return store_space_get(ctx->st, space, out, err);
}

/* Keeps the Spaces of v that grants name, in place. */
static size_t keep_granted(struct space *v, size_t n, const struct grant *g, size_t ng)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < ng && (strcmp(g[j].space_id, v[i].id) || g[j].role < ROLE_READER))
			j++;
		if (j < ng)
			v[kept++] = v[i];
		else
			space_release(&v[i]);
	}
	return kept;
}

/* *v[0..*n) without the Spaces the caller may not read (ops_restricted). */
static enum smr_rc keep_readable(struct ops_ctx *ctx, struct space **v, size_t *n,
				 struct smr_err *err)
{
	struct grant *g = NULL;
	size_t ng = 0;
	enum smr_rc rc;

	if (!ops_restricted(ctx))
		return SMR_OK;
	rc = store_grant_list(ctx->st, ctx->who->person_id, NULL, &g, &ng, err);
	if (rc) {
		spaces_free(*v, *n);
		*v = NULL;
		*n = 0;
		return rc;
	}
	*n = keep_granted(*v, *n, g, ng);
	grants_free(g, ng);
	return SMR_OK;
}

enum smr_rc ops_space_list(struct ops_ctx *ctx, struct space **out, size_t *n,
			   struct smr_err *err)
{
	return ops_space_page(ctx, NULL, 0, out, n, err);
}

/* v[0..n) without its entries from limit on (0: none dropped); returns how many stay. */
static size_t keep_first(struct space *v, size_t n, size_t limit)
{
	for (size_t i = limit; limit && i < n; i++)
		space_release(&v[i]);
	return limit && limit < n ? limit : n;
}

enum smr_rc ops_space_page(struct ops_ctx *ctx, const char *after, size_t limit,
			   struct space **out, size_t *n, struct smr_err *err)
{
	enum smr_rc rc;

	/* a person with grants reads few Spaces: the page is cut from them all */
	if (!ops_restricted(ctx))
		return store_space_page(ctx->st, after, limit, out, n, err);
	rc = store_space_page(ctx->st, after, 0, out, n, err);
	if (!rc)
		rc = keep_readable(ctx, out, n, err);
	if (!rc)
		*n = keep_first(*out, *n, limit);
	return rc;
}

enum smr_rc ops_space_heads_at(struct ops_ctx *ctx, const char *const *hashes, size_t n,
			       struct space **out, size_t *nout, struct smr_err *err)
{
	enum smr_rc rc = store_space_heads_at(ctx->st, hashes, n, out, nout, err);

	return rc ? rc : keep_readable(ctx, out, nout, err);
}

/* A deleted Space's name is "NAME/ID" (the name is free again): NAME; caller frees. */
static char *name_before_delete(const struct space *sp)
{
	size_t n = strlen(sp->name), id = strlen(sp->id);

	if (n > id + 1 && sp->name[n - id - 1] == '/' && !strcmp(sp->name + n - id, sp->id))
		return xstrndup(sp->name, n - id - 1);
	return xstrdup(sp->name);
}

enum smr_rc ops_space_list_deleted(struct ops_ctx *ctx, json_t **out, struct smr_err *err)
{
	struct space *v = NULL;
	struct grant *g = NULL;
	size_t n = 0, ng = 0;
	enum smr_rc rc = store_space_list_deleted(ctx->st, &v, &n, err);

	if (!rc && ops_restricted(ctx))
		rc = store_grant_list(ctx->st, ctx->who->person_id, NULL, &g, &ng, err);
	if (!rc && ops_restricted(ctx))
		n = keep_granted(v, n, g, ng);
	if (!rc) {
		*out = json_array();
		for (size_t i = n; i-- > 0;) {   /* the store's order is oldest first */
			char *name = name_before_delete(&v[i]);

			json_array_append_new(*out, json_pack(
				"{s:s, s:s, s:s, s:o}", "name", name, "id", v[i].id,
				"deleted_at", v[i].deleted_at,
				"head", v[i].head ? json_string(v[i].head) : json_null()));
			free(name);
		}
	}
	grants_free(g, ng);
	spaces_free(v, n);
	return rc;
}

enum smr_rc ops_space_rename(struct ops_ctx *ctx, const char *space, const char *new_name,
			     struct space *out, struct smr_err *err)
{
	struct space sp = { 0 };
	char now[32], *why = NULL;
	enum smr_rc rc;

	rc = ops_check_space_name(new_name, err);
	if (!rc)
		rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc) {
		ctx->now(now);
		why = xasprintf("rename: %s -> %s", sp.name, new_name);
		rc = store_space_rename(ctx->st, sp.id, new_name,
					&(struct ref_move){ ops_actor(ctx), why, now }, err);
		free(why);
	}
	if (!rc)
		ops_auth_changed(ctx);   /* names cached with roles are stale */
	if (!rc)
		rc = store_space_get(ctx->st, sp.id, out, err);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_space_delete(struct ops_ctx *ctx, const char *space, struct smr_err *err)
{
	struct space sp = { 0 };
	char now[32], *why = NULL;
	enum smr_rc rc;

	rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc) {
		ctx->now(now);
		why = xasprintf("delete: %s", sp.name);
		rc = store_space_delete(ctx->st, sp.id, &(struct ref_move){ ops_actor(ctx), why, now },
					err);
		free(why);
	}
	if (!rc)
		ops_auth_changed(ctx);   /* names cached with roles are stale */
	space_release(&sp);
	return rc;
}
