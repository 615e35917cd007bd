/*
 * metrics.c -- the process-wide counters of metrics.h and their rendering
 * in the Prometheus text exposition format (version 0.0.4).
 */
#include "util/metrics.h"
#include "util/buf.h"

#include <stdio.h>
#include <string.h>

const int64_t metrics_bucket_us[METRICS_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 10000000, 30000000, 120000000,
};

void metrics_hist_observe(struct metrics_hist *h, int64_t us)
{
	size_t i = 0;

	if (us < 0)
		us = 0;
	while (i < METRICS_BUCKETS && us > metrics_bucket_us[i])
		i++;
	atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, (uint_fast64_t)us, memory_order_relaxed);
}

/* "0.00005", "2.5", "120": a bucket bound in seconds, without %g's exponents. */
static void seconds(char out[24], int64_t us)
{
	size_t n = (size_t)snprintf(out, 24, "%lld.%06lld", (long long)(us / 1000000),
				    (long long)(us % 1000000));

	while (n > 1 && out[n - 1] == '0')
		out[--n] = '\0';
	if (n > 1 && out[n - 1] == '.')
		out[--n] = '\0';
}

void metrics_hist_render(struct buf *out, const char *name, const char *labels,
			 const struct metrics_hist *h)
{
	const char *sep = *labels ? "," : "";
	uint_fast64_t total = 0;

	for (size_t i = 0; i <= METRICS_BUCKETS; i++) {
		char le[24];

		total += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		if (i < METRICS_BUCKETS) {
			seconds(le, metrics_bucket_us[i]);
			buf_addf(out, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, labels, sep, le,
				 (unsigned long long)total);
		} else {
			buf_addf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
				 (unsigned long long)total);
		}
	}
	buf_addf(out, "%s_sum{%s} %.6f\n", name, labels,
		 (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6);
	buf_addf(out, "%s_count{%s} %llu\n", name, labels, (unsigned long long)total);
}

/* ---- providers ---- */

/* Slot k < METRICS_PROVIDER_SLOTS counts provider kind k; the last slot counts the rest. */
#define PROVIDERS (METRICS_PROVIDER_SLOTS + 1)

static const char *const outcome_names[METRICS_OUTCOMES] = {
	"ok", "truncated", "stopped", "http_error", "timeout", "error",
};

static atomic_uint_fast64_t provider_calls[PROVIDERS][METRICS_OUTCOMES];
static struct metrics_hist provider_latency[PROVIDERS];

void metrics_provider_call(int kind, enum metrics_outcome outcome, int64_t us)
{
	size_t p = kind >= 0 && kind < METRICS_PROVIDER_SLOTS ? (size_t)kind : PROVIDERS - 1;
	if ((unsigned)outcome >= METRICS_OUTCOMES)
		outcome = METRICS_ERROR;
	atomic_fetch_add_explicit(&provider_calls[p][outcome], 1, memory_order_relaxed);
	metrics_hist_observe(&provider_latency[p], us);
}

/* ---- stores and drafts ---- */

static const char *const backend_names[] = { "sqlite", "postgres" };
static atomic_uint_fast64_t store_errors[2][2];       /* [backend][unavailable] */
static atomic_int_fast64_t draft_queue;

void metrics_store_error(const char *backend, int unavailable)
{
	int b = backend && !strcmp(backend, "postgres");

	atomic_fetch_add_explicit(&store_errors[b][!!unavailable], 1, memory_order_relaxed);
}

void metrics_draft_queue(int delta)
{
	atomic_fetch_add_explicit(&draft_queue, delta, memory_order_relaxed);
}

static const char *const writer_names[] = { "foreground", "background" };
static struct metrics_hist write_wait[2], write_txn[2];
static const char *const pool_names[] = { "worker", "chat" };
static struct metrics_hist queue_wait[2];

void metrics_store_write(int background, int64_t wait_us, int64_t txn_us)
{
	metrics_hist_observe(&write_wait[!!background], wait_us);
	metrics_hist_observe(&write_txn[!!background], txn_us);
}

static atomic_uint_fast64_t write_batches;

void metrics_store_batch(void)
{
	atomic_fetch_add_explicit(&write_batches, 1, memory_order_relaxed);
}

void metrics_worker_queue(int chat, int64_t us)
{
	metrics_hist_observe(&queue_wait[!!chat], us);
}

/* One histogram family over a two-valued label (key="names[i]"), HELP and TYPE first. */
static void render_pair(struct buf *out, const char *name, const char *help, const char *key,
			const char *const names[2], const struct metrics_hist hists[2])
{
	char labels[64];

	buf_addf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (size_t i = 0; i < 2; i++) {
		snprintf(labels, sizeof(labels), "%s=\"%s\"", key, names[i]);
		metrics_hist_render(out, name, labels, &hists[i]);
	}
}

/* What a write waited for and what it cost, and how long requests queued for a worker. */
static void render_waits(struct buf *out)
{
	render_pair(out, "smriti_store_write_wait_seconds",
		    "Time a store write waited behind other transactions before its own began"
		    " (SQLite commit group).", "writer", writer_names, write_wait);
	render_pair(out, "smriti_store_write_seconds",
		    "Time from a store write's transaction beginning to its commit (the writes"
		    " batched with it and the fsync included).", "writer", writer_names, write_txn);
	buf_adds(out, "# HELP smriti_store_write_batches_total Transactions the SQLite commit group"
		      " ran (writes over transactions: how many share an fsync).\n"
		      "# TYPE smriti_store_write_batches_total counter\n");
	buf_addf(out, "smriti_store_write_batches_total %llu\n",
		 (unsigned long long)atomic_load_explicit(&write_batches, memory_order_relaxed));
	render_pair(out, "smriti_http_worker_queue_seconds",
		    "Time a request waited for a worker thread.", "pool", pool_names, queue_wait);
}

/* The label of slot p: its provider's name, or "other" for the last slot and unnamed ones. */
static const char *slot_name(size_t p, const char *const *names, size_t n)
{
	return p < n && p < PROVIDERS - 1 ? names[p] : "other";
}

/* 1 if slot p is rendered: a named provider's, or the last one. */
static int slot_shown(size_t p, size_t n)
{
	return p < n || p == PROVIDERS - 1;
}

void metrics_render(struct buf *out, const char *const *provider_names, size_t providers)
{
	char labels[64];

	buf_adds(out, "# HELP smriti_provider_calls_total Language-model provider calls by how they"
		      " ended.\n# TYPE smriti_provider_calls_total counter\n");
	for (size_t p = 0; p < PROVIDERS; p++)
		for (size_t o = 0; slot_shown(p, providers) && o < METRICS_OUTCOMES; o++)
			buf_addf(out, "smriti_provider_calls_total{provider=\"%s\",outcome=\"%s\"}"
				 " %llu\n", slot_name(p, provider_names, providers), outcome_names[o],
				 (unsigned long long)atomic_load_explicit(&provider_calls[p][o],
									  memory_order_relaxed));
	buf_adds(out, "# HELP smriti_provider_call_seconds Time from a provider call's start to"
		      " its end, retries included.\n"
		      "# TYPE smriti_provider_call_seconds histogram\n");
	for (size_t p = 0; p < PROVIDERS; p++) {
		uint_fast64_t calls = 0;

		for (size_t o = 0; o < METRICS_OUTCOMES; o++)
			calls += atomic_load_explicit(&provider_calls[p][o], memory_order_relaxed);
		if (!calls)
			continue;          /* a provider never called: its counters say enough */
		snprintf(labels, sizeof(labels), "provider=\"%s\"",
			 slot_name(p, provider_names, providers));
		metrics_hist_render(out, "smriti_provider_call_seconds", labels,
				    &provider_latency[p]);
	}
	buf_adds(out, "# HELP smriti_store_errors_total Store calls that failed for the store's own"
		      " reasons (busy, connection lost, I/O), not the data's.\n"
		      "# TYPE smriti_store_errors_total counter\n");
	for (size_t b = 0; b < 2; b++)
		for (size_t u = 0; u < 2; u++)
			buf_addf(out, "smriti_store_errors_total{backend=\"%s\",kind=\"%s\"} %llu\n",
				 backend_names[b], u ? "unavailable" : "internal",
				 (unsigned long long)atomic_load_explicit(&store_errors[b][u],
									  memory_order_relaxed));
	buf_adds(out, "# HELP smriti_draft_queue_depth Draft with AI jobs waiting for a worker.\n"
		      "# TYPE smriti_draft_queue_depth gauge\n");
	buf_addf(out, "smriti_draft_queue_depth %lld\n",
		 (long long)atomic_load_explicit(&draft_queue, memory_order_relaxed));
	render_waits(out);
}
