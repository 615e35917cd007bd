/*
 * test_content.c -- store/content.c's check before a write: the items a
 * write stores anew must read back as the checkpoint's own, whether their
 * bytes are the texts kept when it was sealed or are parsed back; bytes
 * that are not the item fail the write.  And the cut both the store and
 * item_texts make of a list's text (util/jspan.h: jspan_array_next).
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "domain/item_texts.h"
#include "store/content.h"
#include "util/buf.h"
#include "util/jspan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A checkpoint of awkward items: keys out of order, escapes, a real. */
static void awkward(struct checkpoint *c)
{
	json_t *j = json_loads("{\"tasks\":[{\"text\":\"t\\u00e9 \\\"q\\\"\",\"status\":\"open\","
			       "\"w\":0.1}],\"decisions\":[{\"text\":\"a\"},{\"text\":\"b, [c]\"}],"
			       "\"entities\":[{\"name\":\"n\",\"kind\":\"k\"}]}", 0, NULL);

	CHECK(j != NULL);
	checkpoint_init(c);
	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		json_t **slot = checkpoint_list_slot(c, checkpoint_list_fields[f]);

		if (json_object_get(j, checkpoint_list_fields[f])) {
			json_decref(*slot);
			*slot = json_incref(json_object_get(j, checkpoint_list_fields[f]));
		}
	}
	json_decref(j);
}

/* Every chunk of ct to be written, as for a checkpoint whose parent's chunks are unknown. */
static void all_fresh(struct content *ct)
{
	for (size_t i = 0; i < ct->n_chunks; i++)
		ct->chunks[i].fresh = 1;
}

TEST(content_verify_passes_a_true_cut_from_kept_texts_or_parsed)
{
	struct checkpoint c;
	struct content ct;
	struct smr_err err = SMR_ERR_INIT;

	awkward(&c);
	/* not sealed: no texts kept, every item parsed back */
	content_of(&ct, &c, NULL);
	all_fresh(&ct);
	CHECK_INT(ct.n_items, 4);
	CHECK_INT(content_verify(&ct, &c, &err), SMR_OK);
	content_release(&ct);

	checkpoint_seal(&c);
	CHECK(c.texts != NULL);
	content_of(&ct, &c, NULL);
	all_fresh(&ct);
	CHECK_INT(content_verify(&ct, &c, &err), SMR_OK);
	content_release(&ct);
	checkpoint_release(&c);
}

/* The items, chunks and row of ct as one line, to compare two cuts. */
static char *cut_line(const struct content *ct)
{
	struct buf b = BUF_INIT(0);

	for (size_t i = 0; i < ct->n_items; i++)
		buf_addf(&b, "%lld:%.*s;", (long long)ct->items[i].id, (int)ct->items[i].len,
			 ct->items[i].body);
	for (size_t i = 0; i < ct->n_chunks; i++)
		buf_addf(&b, "[%lld %zu %zu]", (long long)ct->chunks[i].id, ct->chunks[i].first,
			 ct->chunks[i].n);
	for (size_t i = 0; i < ct->n_row; i++)
		buf_addf(&b, " %lld", (long long)ct->row[i]);
	return buf_detach(&b, NULL);
}

/*
 * A sealed checkpoint's content is made from its items' kept texts and
 * ids: the same items, ids, chunks and row as cutting its lists written
 * whole, for a state of many chunks and for its patch (whose texts are
 * copied from its parent's, ids and all).
 */
TEST(content_from_kept_texts_is_the_cut_of_the_lists_written)
{
	struct checkpoint c, next;
	struct content kept, cut;
	const char *text[CONTENT_LISTS];
	size_t len[CONTENT_LISTS];
	char *own[CONTENT_LISTS], *a, *b;

	awkward(&c);
	for (int i = 0; i < 300; i++)
		json_array_append_new(c.decisions, json_pack("{s:s, s:i}", "text", "d", "n", i));
	checkpoint_seal(&c);
	checkpoint_init(&next);
	checkpoint_share_content(&next, &c);
	json_array_remove(next.decisions, 7);
	json_array_append_new(next.tasks, json_pack("{s:s, s:s}", "text", "new", "status", "open"));
	checkpoint_seal(&next);
	for (int round = 0; round < 2; round++) {
		const struct checkpoint *x = round ? &next : &c;

		content_of(&kept, x, NULL);
		for (size_t k = 0; k < CONTENT_LISTS; k++) {
			own[k] = json_dumps(checkpoint_list(x, checkpoint_list_fields[k]),
					    ITEM_TEXTS_STORED);
			text[k] = own[k];
			len[k] = strlen(own[k]);
		}
		CHECK_INT(content_split(&cut, text, len), 0);
		CHECK(kept.n_chunks > 5);
		a = cut_line(&kept);
		b = cut_line(&cut);
		CHECK_STR(a, b);
		free(a);
		free(b);
		content_release(&kept);
		content_release(&cut);
		for (size_t k = 0; k < CONTENT_LISTS; k++)
			free(own[k]);
	}
	checkpoint_release(&next);
	checkpoint_release(&c);
}

TEST(content_verify_refuses_bytes_that_are_not_the_item)
{
	static const char *const wrong[] = {
		"{\"text\":\"b\"}",                    /* another item */
		"{\"text\":\"a\"",                     /* cut short */
		"{\"text\":\"a\",\"x\":1}",            /* one key more */
	};
	struct checkpoint c;
	struct content ct;

	awkward(&c);
	for (int sealed = 0; sealed < 2; sealed++) {
		if (sealed)
			checkpoint_seal(&c);
		for (size_t w = 0; w < sizeof(wrong) / sizeof(wrong[0]); w++) {
			struct smr_err err = SMR_ERR_INIT;
			size_t at = 0;

			content_of(&ct, &c, NULL);
			all_fresh(&ct);
			/* the first decision ({"text":"a"}): after the task, the first list's */
			while (at < ct.n_items && strncmp(ct.items[at].body, "{\"text\":\"a\"}", ct.items[at].len))
				at++;
			CHECK(at < ct.n_items);
			ct.items[at].body = wrong[w];
			ct.items[at].len = strlen(wrong[w]);
			CHECK_INT(content_verify(&ct, &c, &err), SMR_EINTERNAL);
			CHECK(strstr(err.msg, "nothing was written") != NULL);
			content_release(&ct);
		}
	}
	/* an item of a chunk that is stored already is not checked again */
	content_of(&ct, &c, NULL);
	for (size_t i = 0; i < ct.n_chunks; i++)
		ct.chunks[i].fresh = 0;
	ct.items[0].body = wrong[0];
	ct.items[0].len = strlen(wrong[0]);
	CHECK_INT(content_verify(&ct, &c, &(struct smr_err)SMR_ERR_INIT), SMR_OK);
	content_release(&ct);
	checkpoint_release(&c);
}

/* The values jspan_array_next gives of text, joined by '|'; "!" when it refuses the text. */
static void values(const char *text, char *out, size_t size)
{
	const char *at = NULL;
	size_t len = 0, used = 0;
	int more;

	out[0] = '\0';
	while ((more = jspan_array_next(text, strlen(text), &at, &len)) > 0)
		used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? "|" : "",
					 (int)len, at);
	if (more < 0)
		snprintf(out, size, "!");
}

TEST(jspan_array_next_cuts_a_compact_array_and_refuses_others)
{
	static const char *const cases[][2] = {
		{ "[]", "" },
		{ "[1]", "1" },
		{ "[1,\"a,]b\",{\"x\":[1,2]},[],null]", "1|\"a,]b\"|{\"x\":[1,2]}|[]|null" },
		{ "[1,]", "!" }, { "[,1]", "!" }, { "[1 ,2]", "!" }, { "[ 1]", "!" },
		{ "1,2", "!" }, { "[", "!" }, { "[1,2", "!" }, { "[1]x", "!" }, { "", "!" },
		{ "[1,2]]", "!" },
	};
	char got[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		values(cases[i][0], got, sizeof(got));
		CHECK_STR(got, cases[i][1]);
	}
}

/* A fetch that counts its calls, keeps the ids of the last, and answers "t<id>" or fails. */
struct fake_fetch {
	int calls;
	int64_t asked[16];
	size_t n_asked;
	enum smr_rc fail;
};

static enum smr_rc fake_fetch(void *arg, const int64_t *ids, size_t n, struct buf *out,
			      size_t *counts, struct smr_err *err)
{
	struct fake_fetch *f = arg;

	f->calls++;
	f->n_asked = n < 16 ? n : 16;
	memcpy(f->asked, ids, f->n_asked * sizeof(*ids));
	if (f->fail)
		return smr_errf(err, f->fail, "fetch failed on purpose");
	for (size_t i = 0; i < n; i++) {
		buf_addf(&out[i], "\"t%lld\"", (long long)ids[i]);
		counts[i] = 1;
	}
	return SMR_OK;
}

TEST(content_prefetch_fetches_what_the_cache_lacks_once_and_keeps_it_for_reads)
{
	const int64_t db = 0x5eed0001, ids[] = { 5, 3, 5, 9 }, more[] = { 3, 11 };
	const int64_t row[] = { 1, 1, 1, 0, 0, 0, 3, 5, 9 };
	struct fake_fetch f = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	char *text[CONTENT_LISTS] = { NULL };
	size_t len[CONTENT_LISTS];

	CHECK_INT(content_prefetch(ids, 4, db, fake_fetch, &f, &err), SMR_OK);
	CHECK_INT(f.calls, 1);
	CHECK_INT(f.n_asked, 3);       /* each chunk once */
	CHECK(f.asked[0] == 3 && f.asked[1] == 5 && f.asked[2] == 9);
	/* a row of those chunks reads from the cache: no fetch */
	CHECK_INT(content_read(row, 9, db, 0, fake_fetch, &f, text, len, &err), SMR_OK);
	CHECK_INT(f.calls, 1);
	CHECK_STR(text[0], "[\"t3\"]");
	CHECK_STR(text[2], "[\"t9\"]");
	CHECK_STR(text[3], "[]");
	for (size_t k = 0; k < CONTENT_LISTS; k++)
		free(text[k]);
	/* only what is missing is asked for */
	CHECK_INT(content_prefetch(more, 2, db, fake_fetch, &f, &err), SMR_OK);
	CHECK_INT(f.calls, 2);
	CHECK_INT(f.n_asked, 1);
	CHECK(f.asked[0] == 11);
}

TEST(content_prefetch_leaves_damage_to_each_read_and_reports_other_failures)
{
	const int64_t db = 0x5eed0002, ids[] = { 21, 22 };
	struct fake_fetch f = { .fail = SMR_ENOTFOUND };
	struct smr_err err = SMR_ERR_INIT;

	/* a missing chunk or item: not an error here, and nothing kept */
	CHECK_INT(content_prefetch(ids, 2, db, fake_fetch, &f, &err), SMR_OK);
	f.fail = SMR_OK;
	CHECK_INT(content_prefetch(ids, 2, db, fake_fetch, &f, &err), SMR_OK);
	CHECK_INT(f.calls, 2);
	CHECK_INT(f.n_asked, 2);
	/* a lost connection is the caller's failure, with the fetch's message */
	f.fail = SMR_EUNAVAIL;
	CHECK_INT(content_prefetch((const int64_t[]){ 23 }, 1, db, fake_fetch, &f, &err),
		  SMR_EUNAVAIL);
	CHECK(strstr(err.msg, "on purpose") != NULL);
	CHECK_INT(content_prefetch(NULL, 0, db, fake_fetch, &f, &err), SMR_OK);
	CHECK_INT(f.calls, 3);
}

/*
 * A checkpoint remembered again is remembered with the rows given last: a
 * key can outlive its database (a file made again at its path), and the
 * chunks kept from the other one made a child's chunks look stored.
 */
TEST(content_remember_takes_the_rows_given_last)
{
	static const char *const one[CONTENT_LISTS] = { "[\"alpha\"]", "[]", "[]", "[]", "[]", "[]" };
	static const char *const two[CONTENT_LISTS] = { "[\"beta\"]", "[]", "[]", "[]", "[]", "[]" };
	const char *hash = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
	int64_t db = content_db_key_private();
	struct content a, b;
	size_t len[CONTENT_LISTS];

	for (int k = 0; k < CONTENT_LISTS; k++)
		len[k] = strlen(one[k]);
	CHECK_INT(content_split(&a, one, len), 0);
	len[0] = strlen(two[0]);
	CHECK_INT(content_split(&b, two, len), 0);
	CHECK(a.n_chunks == 1 && b.n_chunks == 1 && a.chunks[0].id != b.chunks[0].id);
	content_remember(db, hash, a.row, a.n_row);
	content_remember(db, hash, b.row, b.n_row);
	/* a child of it: b's chunk is stored with it, a's is not */
	CHECK_INT(content_mark_fresh(&b, db, hash), 0);
	CHECK_INT(content_mark_fresh(&a, db, hash), 1);
	content_release(&a);
	content_release(&b);
}
