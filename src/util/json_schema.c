/*
 * json_schema.c -- strict object schemas (see json_schema.h).
 */
#include "util/json_schema.h"

json_t *json_schema_strict_object(json_t *properties)
{
	json_t *required = json_array();
	const char *key;
	json_t *v;

	json_object_foreach(properties, key, v)
		json_array_append_new(required, json_string(key));
	return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", properties,
			 "required", required, "additionalProperties", 0);
}
