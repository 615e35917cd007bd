/*
 * bundle_write.c -- writing a bundle's text as its parts come (an export;
 * see bundle.h): Space by Space, checkpoint by checkpoint, as the store
 * scans its rows, the same bytes bundle_to_json would give.
 */
#include "domain/bundle.h"
#include "domain/bundle_internal.h"
#include "util/buf.h"
#include "util/jspan.h"
#include "util/xalloc.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

#define TOP "{\"format\":\"" BUNDLE_FORMAT "\",\"version\":1,\"sha256\":\""

struct bundle_writer {
	struct buf out;                   /* the bundle; the sha256 in its top filled in last */
	struct sha256_ctx digest;         /* over the Spaces, each checkpoint as its hash */
	struct reader items;              /* stored items met: is a list's text jansson's own? */
	size_t spaces, checkpoints;       /* written: Spaces, and checkpoints of this one */
};

struct bundle_writer *bundle_writer_new(void)
{
	struct bundle_writer *w = xcalloc(1, sizeof(*w));

	w->out = (struct buf)BUF_INIT(0);
	w->items.stored = 1;
	buf_adds(&w->out, TOP);
	buf_add(&w->out, "0000000000000000000000000000000000000000000000000000000000000000", 64);
	buf_adds(&w->out, "\",\"spaces\":[");
	sha256_init(&w->digest);
	sha256_update(&w->digest, 1, (const uint8_t *)"[");
	return w;
}

void bundle_writer_free(struct bundle_writer *w)
{
	if (!w)
		return;
	buf_release(&w->out);
	bundle_reader_release(&w->items);
	free(w);
}

enum { OUT = 1, LIGHT = 2, BOTH = 3 };   /* where put() writes: the bundle, its digest */

static void put(struct bundle_writer *w, const char *p, size_t n, int to)
{
	if (to & OUT)
		buf_add(&w->out, p, n);
	if (to & LIGHT)
		sha256_update(&w->digest, n, (const uint8_t *)p);
}

static void puts_both(struct bundle_writer *w, const char *s)
{
	put(w, s, strlen(s), BOTH);
}

/* s as a JSON string the way jansson writes it (null for NULL, or for text that is not UTF-8). */
static void put_str(struct bundle_writer *w, const char *s, int to)
{
	size_t n = s ? strlen(s) : 0, len;
	json_t *v;
	char *text;

	if (s && jspan_plain(s, n)) {
		put(w, "\"", 1, to);
		put(w, s, n, to);
		put(w, "\"", 1, to);
		return;
	}
	v = s ? json_string(s) : NULL;
	text = v ? bundle_dump(v, JSON_COMPACT, &len) : NULL;
	put(w, text ? text : "null", text ? len : 4, to);
	free(text);
	json_decref(v);
}

/* v compact, as jansson writes it. */
static void put_json(struct bundle_writer *w, const json_t *v, int to)
{
	size_t len;
	char *text = v ? bundle_dump(v, JSON_COMPACT, &len) : NULL;

	put(w, text ? text : "null", text ? len : 4, to);
	free(text);
}

void bundle_writer_space(struct bundle_writer *w, const struct space *sp)
{
	if (w->spaces++)
		puts_both(w, ",");
	puts_both(w, "{\"id\":");
	put_str(w, sp->id, BOTH);
	puts_both(w, ",\"name\":");
	put_str(w, sp->name, BOTH);
	puts_both(w, ",\"description\":");
	put_str(w, sp->description ? sp->description : "", BOTH);
	puts_both(w, ",\"created_at\":");
	put_str(w, sp->created_at, BOTH);
	puts_both(w, ",\"head\":");
	put_str(w, sp->head, BOTH);
	puts_both(w, ",\"checkpoints\":[");
	w->checkpoints = 0;
}

/* 1 when the stored list [p, p + n) is jansson's text already: each item is (checked once). */
static int column_exact(struct bundle_writer *w, int k, const char *p, size_t n)
{
	const char *end = p + n - 1, *s = p + 1, *q;
	struct item *it;

	if (n < 2 || *p != '[' || *end != ']')
		return 0;
	if (s == end)
		return 1;
	for (size_t i = 0;; i++) {
		q = jspan_end(s, end);   /* NULL on white space too: jansson writes none */
		if (!q || bundle_reader_item(&w->items, k, s, (size_t)(q - s), i, &it, NULL) ||
		    it->compact)
			return 0;
		if (q == end)
			return 1;
		if (*q != ',')
			return 0;
		s = q + 1;
	}
}

/*
 * The stored text [p, p + n) of list (or metadata) k as jansson writes it:
 * itself when it already is, else parsed and written (null when it is not
 * JSON, as the store reads it).
 */
static void put_column(struct bundle_writer *w, int k, const char *p, size_t n)
{
	struct item *it;
	json_t *v;

	if (k != META && column_exact(w, k, p, n)) {
		put(w, p, n, OUT);
		return;
	}
	if (k == META && !bundle_reader_item(&w->items, META, p, n, 0, &it, NULL)) {
		size_t len;
		const char *text = bundle_item_compact(it, &len);

		put(w, text, len, OUT);
		return;
	}
	v = json_loadb(p, n, JSON_DECODE_ANY, NULL);
	put_json(w, v, OUT);
	json_decref(v);
}

void bundle_writer_checkpoint(struct bundle_writer *w, const struct checkpoint *c,
			      const struct checkpoint_text *t)
{
	const json_t *lists[] = { c->decisions, c->assumptions, c->tasks, c->open_questions,
				  c->entities, c->artifacts, c->metadata };
	static const char *const keys[CHECKPOINT_TEXT_COLS] = {
		",\"decisions\":", ",\"assumptions\":", ",\"tasks\":", ",\"open_questions\":",
		",\"entities\":", ",\"artifacts\":", ",\"metadata\":",
	};

	if (w->checkpoints++)
		puts_both(w, ",");
	put_str(w, c->hash, LIGHT);   /* the digest has the hash alone */
	put(w, "{\"commit_hash\":", 15, OUT);
	put_str(w, c->hash, OUT);
	put(w, ",\"parent_hash\":", 15, OUT);
	put_str(w, c->parent_hash, OUT);
	if (c->merge_parent_hash) {
		put(w, ",\"merge_parent_hash\":", 21, OUT);
		put_str(w, c->merge_parent_hash, OUT);
	}
	put(w, ",\"title\":", 9, OUT);
	put_str(w, c->title ? c->title : "", OUT);
	put(w, ",\"summary\":", 11, OUT);
	put_str(w, c->summary ? c->summary : "", OUT);
	w->items.tick++;
	for (int k = 0; k < CHECKPOINT_TEXT_COLS; k++) {
		put(w, keys[k], strlen(keys[k]), OUT);
		if (t)
			put_column(w, k, t->json[k], t->len[k]);
		else
			put_json(w, lists[k], OUT);
	}
	put(w, ",\"author\":", 10, OUT);
	put_str(w, c->author ? c->author : "", OUT);
	put(w, ",\"created_at\":", 14, OUT);
	put_str(w, c->created_at ? c->created_at : "", OUT);
	put(w, "}", 1, OUT);
	if (w->items.tick % 1024 == 0 && w->items.cap)
		bundle_reader_rehash(&w->items, w->items.cap);
}

void bundle_writer_space_end(struct bundle_writer *w, const struct space_bundle *b)
{
	json_t *ss = json_array(), *rl = json_array();

	for (size_t i = 0; i < b->n_sessions; i++)
		json_array_append_new(ss, bundle_session_json(&b->sessions[i], b->turns[i], b->n_turns[i]));
	for (size_t i = 0; i < b->n_reflog; i++)
		json_array_append_new(rl, bundle_reflog_json(&b->reflog[i]));
	puts_both(w, "],\"sessions\":");
	put_json(w, ss, BOTH);
	puts_both(w, ",\"reflog\":");
	put_json(w, rl, BOTH);
	puts_both(w, "}");
	json_decref(ss);
	json_decref(rl);
}

char *bundle_writer_finish(struct bundle_writer *w, size_t *len)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	char *text;

	buf_adds(&w->out, "]}");
	sha256_update(&w->digest, 1, (const uint8_t *)"]");
	sha256_digest(&w->digest, sizeof(d), d);
	bundle_digest_hex(d, w->out.ptr + strlen(TOP));
	text = buf_detach(&w->out, len);
	bundle_writer_free(w);
	return text;
}
