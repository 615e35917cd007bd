/*
 * graph.c -- topological order of a checkpoint graph for drawing (graph.h):
 * Kahn's algorithm over "child before parent", with a max-heap choosing the
 * newest ready checkpoint, O(n log n); and the lanes of a text graph
 * (graph_ascii), drawn as git's log --graph draws them.
 */
#include "domain/graph.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct graph_work {
	const struct graph_node *v;
	size_t *by_hash;     /* indexes sorted by hash, for lookups */
	size_t *heap;
	size_t n_heap;
};

static int cmp_hash(const void *a, const void *b, void *nodes)
{
	const struct graph_node *v = nodes;

	return strcmp(v[*(const size_t *)a].hash, v[*(const size_t *)b].hash);
}

/* Index of the node with hash h, or n when it is not in the graph. */
static size_t find(const struct graph_work *w, size_t n, const char *h)
{
	size_t lo = 0, hi = n;

	while (h && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(w->v[w->by_hash[mid]].hash, h);

		if (!c)
			return w->by_hash[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n;
}

/* 1 if node a should be drawn before node b (newer, or written later). */
static int newer(const struct graph_work *w, size_t a, size_t b)
{
	int c = strcmp(w->v[a].created_at, w->v[b].created_at);

	return c ? c > 0 : a > b;
}

static void heap_push(struct graph_work *w, size_t x)
{
	size_t i = w->n_heap++;

	while (i && newer(w, x, w->heap[(i - 1) / 2])) {
		w->heap[i] = w->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	w->heap[i] = x;
}

static size_t heap_pop(struct graph_work *w)
{
	size_t top = w->heap[0], x = w->heap[--w->n_heap], i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= w->n_heap)
			break;
		if (c + 1 < w->n_heap && newer(w, w->heap[c + 1], w->heap[c]))
			c++;
		if (!newer(w, w->heap[c], x))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (w->n_heap)
		w->heap[i] = x;
	return top;
}

void graph_order(const struct graph_node *v, size_t n, size_t *order)
{
	struct graph_work w = { v, xcalloc(n + 1, sizeof(size_t)), xcalloc(n + 1, sizeof(size_t)), 0 };
	size_t *children = xcalloc(n + 1, sizeof(size_t)), done = 0;

	for (size_t i = 0; i < n; i++)
		w.by_hash[i] = i;
	qsort_r(w.by_hash, n, sizeof(size_t), cmp_hash, (void *)v);
	for (size_t i = 0; i < n; i++) {
		children[find(&w, n, v[i].parent)]++;
		children[find(&w, n, v[i].merge_parent)]++;
	}
	for (size_t i = 0; i < n; i++)
		if (!children[i])
			heap_push(&w, i);
	while (w.n_heap) {
		size_t x = heap_pop(&w), p;

		order[done++] = x;
		p = find(&w, n, v[x].parent);
		if (p < n && !--children[p])
			heap_push(&w, p);
		p = find(&w, n, v[x].merge_parent);
		if (p < n && !--children[p])
			heap_push(&w, p);
	}
	free(children);
	free(w.by_hash);
	free(w.heap);
}

/* ---- the text graph of `smriti log --graph` ---- */

struct lanes {
	const char **want;   /* the hash each lane waits for */
	size_t n;
};

/* "| | " for lanes [0, upto), a star in lane star (or none: star >= upto). */
static void lane_marks(struct buf *b, size_t upto, size_t star)
{
	for (size_t i = 0; i < upto; i++)
		buf_adds(b, i == star ? "* " : "| ");
}

/* b's text padded with spaces to width, trailing spaces then trimmed to one. */
static char *padded(struct buf *b, size_t width)
{
	while (b->len < width)
		buf_addch(b, ' ');
	return buf_detach(b, NULL);
}

/*
 * Removes lanes after the first that wait for the same hash, drawing "|/"
 * for each ("|_|/" when other lanes lie between, as git draws it).
 */
static void collapse(struct lanes *l, struct buf *after)
{
	for (size_t i = 0; i < l->n; i++) {
		for (size_t j = i + 1; j < l->n; j++) {
			if (!l->want[i] || !l->want[j] || strcmp(l->want[i], l->want[j]))
				continue;
			if (after->len)
				buf_addch(after, '\n');
			for (size_t k = 0; k < j; k++)
				buf_adds(after, k + 1 == j ? "|/" : k >= i ? "|_" : "| ");
			for (size_t k = j + 1; k < l->n; k++)
				buf_adds(after, " /");
			memmove(&l->want[j], &l->want[j + 1], (l->n - j - 1) * sizeof(*l->want));
			l->n--;
			j--;
		}
	}
}

static void draw_one(struct lanes *l, const struct graph_node *c, char **row, char **after)
{
	struct buf r = BUF_INIT(0), a = BUF_INIT(0);
	size_t col, before;

	for (col = 0; col < l->n && (!l->want[col] || strcmp(l->want[col], c->hash)); col++)
		;
	if (col == l->n)
		l->want[l->n++] = c->hash;
	before = l->n;
	lane_marks(&r, l->n, col);
	l->want[col] = c->parent;
	if (c->merge_parent) {
		memmove(&l->want[col + 2], &l->want[col + 1], (l->n - col - 1) * sizeof(*l->want));
		l->want[col + 1] = c->merge_parent;
		l->n++;
		for (size_t k = 0; k <= col; k++)
			buf_adds(&a, k == col ? "|\\" : "| ");
		for (size_t k = col + 2; k < l->n; k++)
			buf_adds(&a, " \\");
	}
	if (!c->parent) {               /* a root: its lane ends */
		memmove(&l->want[col], &l->want[col + 1], (l->n - col - 1) * sizeof(*l->want));
		l->n--;
	}
	collapse(l, &a);
	*row = padded(&r, 2 * (before > l->n ? before : l->n));
	*after = buf_detach(&a, NULL);
}

void graph_ascii(const struct graph_node *v, size_t n, char **row, char **after)
{
	struct lanes l = { xcalloc(2 * n + 2, sizeof(*l.want)), 0 };

	for (size_t i = 0; i < n; i++)
		draw_one(&l, &v[i], &row[i], &after[i]);
	free(l.want);
}
