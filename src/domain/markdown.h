/*
 * markdown.h -- the one Markdown rendering of a checkpoint document (the
 * JSON of checkpoint_to_json, or a draft's fields), shared by MCP's
 * smriti:// resources and context packs.  Pure code.
 */
#ifndef SMRITI_DOMAIN_MARKDOWN_H
#define SMRITI_DOMAIN_MARKDOWN_H

#include <jansson.h>

#include "util/buf.h"

/*
 * Appends c to b: its title as a heading of level (1 is "#"), where it is
 * stored when it has a commit_hash, its summary, then one section a level
 * down for each non-empty list and the metadata.
 */
void checkpoint_markdown(struct buf *b, const json_t *c, int level);

#endif
