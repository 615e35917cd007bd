/*
 * xalloc.h -- allocation that aborts on out-of-memory.
 *
 * Smriti's OOM policy (decided once, as Redis and tmux do): running out of
 * memory is not a recoverable condition for a CLI or a server worker, so
 * these never return NULL.  Untrusted input still has hard caps elsewhere.
 */
#ifndef SMRITI_XALLOC_H
#define SMRITI_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* Returns a new copy; caller free()s.  xstrdup(NULL) returns NULL. */
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new string; caller free()s. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
