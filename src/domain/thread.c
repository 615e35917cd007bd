/*
 * thread.c -- paths through a session's tree of turns (thread.h).
 */
#include "domain/thread.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int64_t turn_parent(const struct turn *t)
{
	return t->has_parent ? t->parent_seq : t->seq - 1;
}

long thread_find(const struct turn *turns, size_t n, int64_t seq)
{
	size_t lo = 0, hi = n;

	/* numbers are gap-free: the guess is right unless the list was cut */
	if (n && seq >= turns[0].seq && (size_t)(seq - turns[0].seq) < n &&
	    turns[seq - turns[0].seq].seq == seq)
		return (long)(seq - turns[0].seq);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (turns[mid].seq == seq)
			return (long)mid;
		if (turns[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

size_t thread_path(const struct turn *turns, size_t n, int64_t end, int64_t floor,
		   size_t *idx, int64_t *missing)
{
	size_t len = 0;
	int64_t seq = end;

	*missing = 0;
	/* walked newest first, then reversed; a parent is always older, so this ends */
	while (seq > floor && seq > 0 && len < n) {
		long i = thread_find(turns, n, seq);

		if (i < 0) {
			*missing = seq;
			break;
		}
		idx[len++] = (size_t)i;
		seq = turn_parent(&turns[i]);
		if (seq >= turns[i].seq)
			break;          /* a corrupt parent: never loop */
	}
	for (size_t a = 0, b = len ? len - 1 : 0; a < b; a++, b--) {
		size_t x = idx[a];

		idx[a] = idx[b];
		idx[b] = x;
	}
	return len;
}

int64_t thread_newest_end(const struct turn *turns, size_t n, int64_t seq)
{
	int64_t *newest = xcalloc(n ? n : 1, sizeof(*newest));
	long i;

	/* children are newer than their parent: one pass leaves each one's newest child */
	for (size_t k = 0; k < n; k++) {
		long p = thread_find(turns, n, turn_parent(&turns[k]));

		if (p >= 0 && turns[k].seq > turns[p].seq)
			newest[p] = turns[k].seq;
	}
	while ((i = thread_find(turns, n, seq)) >= 0 && newest[i])
		seq = newest[i];
	free(newest);
	return seq;
}

int thread_continues(const struct turn *t, const struct turn *parent)
{
	return parent && !strcmp(t->role, "assistant") && !strcmp(parent->role, "assistant");
}

void thread_view_release(struct thread_view *v)
{
	for (size_t i = 0; i < v->n_joined; i++)
		free(v->joined[i]);
	free(v->joined);
	free(v->turns);
	memset(v, 0, sizeof(*v));
}

/* The reply at the view's end goes on with t: one turn, its parts' contents joined. */
static void join_part(struct thread_view *v, const struct turn *t)
{
	struct turn *last = &v->turns[v->n - 1];
	size_t a = strlen(last->content), b = strlen(t->content);
	char *j = xmalloc(a + b + 1);

	memcpy(j, last->content, a);
	memcpy(j + a, t->content, b + 1);
	v->joined = xrealloc(v->joined, (v->n_joined + 1) * sizeof(*v->joined));
	v->joined[v->n_joined++] = j;
	last->content = j;
}

void thread_view_build(const struct turn *turns, size_t n, int64_t end, int64_t floor,
		       struct thread_view *out)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t len = thread_path(turns, n, end, floor, idx, &out->missing);

	out->turns = xcalloc(len + 1, sizeof(*out->turns));
	out->n = 0;
	out->joined = NULL;
	out->n_joined = 0;
	for (size_t i = 0; i < len; i++) {
		const struct turn *t = &turns[idx[i]];

		if (out->n && thread_continues(t, &out->turns[out->n - 1]))
			join_part(out, t);
		else
			out->turns[out->n++] = *t;
	}
	free(idx);
}
