/*
 * test_metrics.c -- the latency histogram of util/metrics.h (bucketing,
 * cumulative rendering, _sum and _count), provider calls labelled by the
 * names the renderer is given, and the display width of
 * util/utf8.h that `space list` pads by.
 */
#include "harness.h"
#include "util/buf.h"
#include "util/metrics.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

TEST(metrics_histogram_buckets_are_cumulative_with_sum_and_count)
{
	struct metrics_hist h;
	struct buf out = BUF_INIT(0);

	memset(&h, 0, sizeof(h));
	metrics_hist_observe(&h, 100);          /* <= 100 us */
	metrics_hist_observe(&h, 250);          /* the bound itself is in its bucket */
	metrics_hist_observe(&h, 3000);         /* <= 5 ms */
	metrics_hist_observe(&h, 500000000);    /* past the last bound: +Inf only */
	metrics_hist_render(&out, "x_seconds", "r=\"a\"", &h);
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"0.00005\"} 0\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"0.0001\"} 1\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"0.00025\"} 2\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"0.0025\"} 2\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"0.005\"} 3\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"120\"} 3\n"));
	CHECK(strstr(out.ptr, "x_seconds_bucket{r=\"a\",le=\"+Inf\"} 4\n"));
	CHECK(strstr(out.ptr, "x_seconds_sum{r=\"a\"} 500.003350\n"));
	CHECK(strstr(out.ptr, "x_seconds_count{r=\"a\"} 4\n"));
	buf_release(&out);
}

/*
 * Provider calls are labelled with the names the renderer is given (the
 * provider layer's list): a new kind is counted under its own name, an
 * unknown one (-1) under "other".  Counters are process-wide, so the test
 * reads differences.
 */
static unsigned long long sample(const char *text, const char *series)
{
	const char *p = strstr(text, series);

	return p ? strtoull(p + strlen(series), NULL, 10) : ~0ULL;
}

TEST(metrics_provider_calls_take_the_names_they_are_given)
{
	const char *const names[] = { "alpha", "beta", "gamma", "delta" };
	const char *k3 = "smriti_provider_calls_total{provider=\"delta\",outcome=\"ok\"} ";
	const char *other = "smriti_provider_calls_total{provider=\"other\",outcome=\"timeout\"} ";
	struct buf before = BUF_INIT(0), after = BUF_INIT(0);

	metrics_render(&before, names, 4);
	metrics_provider_call(3, METRICS_OK, 10);
	metrics_provider_call(-1, METRICS_TIMEOUT, 10);
	metrics_render(&after, names, 4);
	CHECK(sample(after.ptr, k3) == sample(before.ptr, k3) + 1);
	CHECK(sample(after.ptr, other) == sample(before.ptr, other) + 1);
	CHECK(strstr(after.ptr, "smriti_provider_call_seconds_count{provider=\"delta\"}") != NULL);
	buf_release(&before);
	buf_release(&after);
}

TEST(utf8_width_counts_terminal_columns)
{
	CHECK_INT(utf8_width("demo", 4), 4);
	CHECK_INT(utf8_width("d\xc3\xa9mo", 5), 4);                 /* é: one column */
	CHECK_INT(utf8_width("de\xcc\x81mo", 6), 4);                /* e + combining acute */
	CHECK_INT(utf8_width("\xe6\x9d\xb1\xe4\xba\xac", 6), 4);    /* 東京: two columns each */
	CHECK_INT(utf8_width("\xf0\x9f\x99\x82", 4), 2);            /* an emoji */
	CHECK_INT(utf8_width("a\xff", 2), 2);                       /* a malformed byte: one */
}
