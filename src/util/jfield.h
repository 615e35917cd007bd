/*
 * jfield.h -- a member of a JSON object as text, for code that renders or
 * describes documents and treats a missing member like an empty one.
 */
#ifndef SMRITI_UTIL_JFIELD_H
#define SMRITI_UTIL_JFIELD_H

#include <jansson.h>

/* o[key] when it is a string, else fallback.  Borrowed from o (or fallback). */
static inline const char *jfield_str_or(const json_t *o, const char *key, const char *fallback)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : fallback;
}

/* o[key] when it is a string, else "". */
static inline const char *jfield_str(const json_t *o, const char *key)
{
	return jfield_str_or(o, key, "");
}

#endif
