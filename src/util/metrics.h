/*
 * metrics.h -- the process-wide counters that `smriti serve` exposes at
 * GET /metrics (Prometheus text format): provider calls by outcome and
 * latency, store errors, the draft queue's depth.  The HTTP server keeps
 * its own request counters (src/http/metrics.c) and renders these beside
 * them.
 *
 * Every update is one or two relaxed atomic additions: no lock, no
 * allocation, so the layers below the transports (providers, stores, the
 * draft runner) can count on their hot paths.  Counters only grow; a
 * reader sees each one consistent on its own (Prometheus asks no more).
 */
#ifndef SMRITI_METRICS_H
#define SMRITI_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/* Upper bounds of the latency buckets, in microseconds (then +Inf). */
#define METRICS_BUCKETS 18
extern const int64_t metrics_bucket_us[METRICS_BUCKETS];

/* A latency histogram; zero-initialised is empty. */
struct metrics_hist {
	atomic_uint_fast64_t bucket[METRICS_BUCKETS + 1];   /* not cumulative; last is +Inf */
	atomic_uint_fast64_t sum_us;
};

void metrics_hist_observe(struct metrics_hist *h, int64_t us);

/*
 * Appends the histogram family member NAME{LABELS,le="..."} lines, _sum
 * and _count (labels: "a=\"x\"" or ""); the # TYPE line is the caller's.
 */
void metrics_hist_render(struct buf *out, const char *name, const char *labels,
			 const struct metrics_hist *h);

/* How a provider call ended (provider/loop.c). */
enum metrics_outcome {
	METRICS_OK,            /* a complete answer */
	METRICS_TRUNCATED,     /* cut by the token limit */
	METRICS_STOPPED,       /* cancelled by the user */
	METRICS_HTTP_ERROR,    /* the provider answered with a non-2xx status */
	METRICS_TIMEOUT,
	METRICS_ERROR,         /* transport or protocol failure */
	METRICS_OUTCOMES
};

/*
 * Providers counted apart: kind k (provider/provider.h's provider_names[k])
 * below this has counters of its own; any other kind, or -1, is "other".
 * The names come with metrics_render, so this layer keeps no list.
 */
#define METRICS_PROVIDER_SLOTS 8

/* One finished provider call of provider kind that took us. */
void metrics_provider_call(int kind, enum metrics_outcome outcome, int64_t us);

/* A store call failed for a reason of the store's own (busy, lost, I/O), not the data's. */
void metrics_store_error(const char *backend, int unavailable);

/* The draft runner queued (+1) or took (-1) a job. */
void metrics_draft_queue(int delta);

/*
 * A store write through a commit group (store/group.c), from a background
 * thread or not: waited wait_us behind other transactions, then took txn_us
 * in its transaction (its rows, the others in the batch, the commit's fsync).
 */
void metrics_store_write(int background, int64_t wait_us, int64_t txn_us);

/* A commit group ran one transaction (its writes over its transactions: the batch size). */
void metrics_store_batch(void);

/* A request waited us in the HTTP server's worker queue (chat: the chat-send pool's). */
void metrics_worker_queue(int chat, int64_t us);

/*
 * Appends the families above in the Prometheus text format, provider kind k
 * labelled provider_names[k] (k < providers).
 */
void metrics_render(struct buf *out, const char *const *provider_names, size_t providers);

#endif
