/*
 * json_schema.h -- building the strict JSON Schemas Smriti sends to
 * providers when it asks for structured output (drafts, LLM review).
 */
#ifndef SMRITI_JSON_SCHEMA_H
#define SMRITI_JSON_SCHEMA_H

#include <jansson.h>

/*
 * {type: object, properties, required: every key, additionalProperties:
 * false}, the shape OpenAI's strict mode demands.  Steals properties;
 * returns a new reference.
 */
json_t *json_schema_strict_object(json_t *properties);

#endif
