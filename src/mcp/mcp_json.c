/*
 * mcp_json.c -- the building blocks every file of src/mcp uses: a method's
 * failure record and JSON text that is safe to send.  They sit below the
 * protocol core (mcp.c) and the tool and resource handlers, so those call
 * down into this file and never into each other.
 */
#include "mcp/mcp_int.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

json_t *mcp_failf(struct mcp_fail *fail, int code, const char *fmt, ...)
{
	va_list ap;

	fail->code = code;
	va_start(ap, fmt);
	vsnprintf(fail->msg, sizeof(fail->msg), fmt, ap);
	va_end(ap);
	return NULL;
}

json_t *mcp_json_text(const char *s)
{
	size_t n = strlen(s), i = 0, k;
	struct buf b = BUF_INIT(0);
	json_t *out;

	if (utf8_valid(s, n))
		return json_string(s);
	while (i < n) {
		for (k = 1; k <= 4 && i + k <= n && !utf8_valid(s + i, k); k++)
			;
		if (k > 4 || i + k > n) {
			buf_addch(&b, '?');
			i++;
			continue;
		}
		buf_add(&b, s + i, k);
		i += k;
	}
	out = json_string(b.ptr);
	buf_release(&b);
	return out;
}
