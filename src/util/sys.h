/*
 * sys.h -- the few things Smriti takes from the operating system: the wall
 * clock, random identifiers, whole-file reads, numbers from the environment
 * and threads.
 *
 * Only the ops layer and transports call these; domain code receives times
 * and ids as arguments so that its tests are deterministic.
 */
#ifndef SMRITI_SYS_H
#define SMRITI_SYS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/buf.h"
#include "util/err.h"

/* Current UTC time as "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" into out[32]. */
void sys_now_iso(char out[32]);

/* Microseconds on a monotonic clock, for latencies. */
int64_t sys_monotonic_us(void);

/* Wall-clock microseconds since the Unix epoch. */
int64_t sys_realtime_us(void);

/* What a Prometheus exporter reports of its process (the process_* family). */
struct sys_process {
	double cpu_seconds;          /* user + system time of every thread so far */
	long long resident_bytes;    /* resident set size */
	long long virtual_bytes;     /* address space */
	long open_fds, max_fds;      /* descriptors open now; the soft limit */
};

/* Reads this process's figures from /proc and getrusage; -1 (and zeroes) if /proc is absent. */
int sys_process_stats(struct sys_process *out);

/*
 * The same two clocks as of the kernel's last tick (CLOCK_*_COARSE): no
 * time-stamp counter read, so cheaper on every request, and behind the
 * precise clock by at most a tick (a few milliseconds), never ahead of it.
 */
int64_t sys_coarse_monotonic_us(void);
int64_t sys_coarse_realtime_us(void);

/* CLOCK_REALTIME now plus ms (or us), for pthread_cond_timedwait(). */
void sys_deadline(struct timespec *until, long ms);
void sys_deadline_us(struct timespec *until, int64_t us);

/* A random RFC 4122 version-4 UUID, lower-case, into out[37]. */
void sys_uuid(char out[37]);
/* len bytes from the kernel's CSPRNG (getrandom); aborts if it cannot read them. */
void sys_random(void *buf, size_t len);

/*
 * Reads a whole file ("-" means stdin) into a new NUL-terminated buffer;
 * caller free()s *out.  Fails with SMR_ETOOBIG past max bytes.
 */
enum smr_rc sys_read_file(const char *path, size_t max, char **out, size_t *len,
			  struct smr_err *err);

/* The whole number in environment variable name when it is one in [min, max], else def. */
long sys_env_long(const char *name, long def, long min, long max);

/*
 * pthread_create() for a thread that takes no signals (they are for the
 * main thread, which waits for SIGINT and SIGTERM); 0 on success.
 */
int sys_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

/*
 * Names the calling thread (15 bytes show), so that top -H, perf and
 * /proc/PID/task/TID/comm tell the server's threads apart.
 */
void sys_thread_name(const char *name);

/*
 * Lowers the calling thread's CPU priority by SMRITI_BACKGROUND_NICE nice
 * steps (default 0: not at all; at most 19), for a thread whose work may
 * wait a little and that holds no lock a foreground thread waits on for
 * more than a copy (the provider's loop, relaying deltas).  Linux nices
 * each thread on its own (setpriority on the thread id); an unprivileged
 * thread cannot take its priority back, which is why no thread that leads
 * the store's writes is ever niced: it would hold the write lock at the low
 * priority (measured: bench/chat_stream.sh, docs/http.md).  Returns the nice
 * value added.
 */
int sys_thread_lower_priority(void);

/*
 * Runs argv[0] (found on PATH) with argv, the environment changed by env
 * (NULL-terminated, may be NULL: "NAME=value" sets NAME, "NAME" removes it,
 * as a program run in another git repository must not see GIT_DIR),
 * input[0..len) on its standard input (NULL: none) and its
 * standard output discarded.  SMR_ENOTFOUND when the program is not
 * installed, SMR_EINTERNAL naming the exit status when it fails.
 */
enum smr_rc sys_run(const char *const argv[], const char *const env[], const char *input,
		    size_t len, struct smr_err *err);

/*
 * sys_run() of a program that reads nothing (its standard input is
 * /dev/null) and prints what the caller wants: its standard output is
 * appended to out, read to the end; SMR_ETOOBIG when it passed out's cap.
 */
enum smr_rc sys_run_read(const char *const argv[], const char *const env[], struct buf *out,
			 struct smr_err *err);

#endif
