/*
 * sys.c -- clock, random ids, file reads, the environment, threads and
 * running a program (see sys.h).
 */
#include "util/sys.h"
#include "util/buf.h"
#include "util/isotime.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void sys_now_iso(char out[32])
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	iso_format((long long)ts.tv_sec, ts.tv_nsec / 1000, out);
}

/* Microseconds on clock id. */
static int64_t clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t sys_monotonic_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

int64_t sys_realtime_us(void)
{
	return clock_us(CLOCK_REALTIME);
}

/* Entries of /proc/self/fd but the one opendir holds; -1 without /proc. */
static long count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

int sys_process_stats(struct sys_process *out)
{
	struct rusage ru;
	struct rlimit rl;
	long long pages_vm = 0, pages_rss = 0;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/statm", "r");
	int ok = f && fscanf(f, "%lld %lld", &pages_vm, &pages_rss) == 2;

	if (f)
		fclose(f);
	memset(out, 0, sizeof(*out));
	if (!getrusage(RUSAGE_SELF, &ru))
		out->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		out->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
	out->resident_bytes = pages_rss * page;
	out->virtual_bytes = pages_vm * page;
	out->open_fds = count_open_fds();
	return ok && out->open_fds >= 0 ? 0 : -1;
}

int64_t sys_coarse_monotonic_us(void)
{
	return clock_us(CLOCK_MONOTONIC_COARSE);
}

int64_t sys_coarse_realtime_us(void)
{
	return clock_us(CLOCK_REALTIME_COARSE);
}

void sys_deadline_us(struct timespec *until, int64_t us)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += (time_t)(us / 1000000);
	until->tv_nsec += (long)(us % 1000000) * 1000L;
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

void sys_deadline(struct timespec *until, long ms)
{
	sys_deadline_us(until, (int64_t)ms * 1000);
}

void sys_random(void *buf, size_t len)
{
	unsigned char *b = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = getrandom(b + got, len - got, 0);
		if (n < 0 && errno != EINTR) {
			perror("smriti: getrandom");
			abort();
		}
		if (n > 0)
			got += (size_t)n;
	}
}

void sys_uuid(char out[37])
{
	unsigned char b[16];

	sys_random(b, sizeof(b));
	b[6] = (b[6] & 0x0F) | 0x40;
	b[8] = (b[8] & 0x3F) | 0x80;
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

enum smr_rc sys_read_file(const char *path, size_t max, char **out, size_t *len,
			  struct smr_err *err)
{
	struct buf b = BUF_INIT(max);
	char chunk[65536];
	FILE *f;
	size_t n;
	int is_stdin = !strcmp(path, "-");

	f = is_stdin ? stdin : fopen(path, "rb");
	if (!f)
		return smr_errf(err, SMR_EINVAL, "cannot open '%s': %s", path,
				strerror(errno));
	for (;;) {
		n = fread(chunk, 1, sizeof(chunk), f);
		if (!n)
			break;
		buf_add(&b, chunk, n);
	}
	if (ferror(f)) {
		if (!is_stdin)
			fclose(f);
		buf_release(&b);
		return smr_errf(err, SMR_EINTERNAL, "cannot read '%s'", path);
	}
	if (!is_stdin)
		fclose(f);
	if (b.err) {
		buf_release(&b);
		return smr_errf(err, SMR_ETOOBIG, "'%s' is larger than %zu bytes", path, max);
	}
	*out = buf_detach(&b, len);
	return SMR_OK;
}

long sys_env_long(const char *name, long def, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || *end || n < min || n > max ? def : n;
}

int sys_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void sys_thread_name(const char *name)
{
	char shown[16];

	snprintf(shown, sizeof(shown), "%s", name);
	pthread_setname_np(pthread_self(), shown);
}

int sys_thread_lower_priority(void)
{
	long steps = sys_env_long("SMRITI_BACKGROUND_NICE", 0, 0, 19);
	pid_t tid = gettid();
	int now;

	if (!steps)
		return 0;
	errno = 0;
	now = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		return 0;
	if (now + steps > 19)
		steps = 19 - now;
	if (steps <= 0 || setpriority(PRIO_PROCESS, (id_t)tid, now + (int)steps))
		return 0;
	return (int)steps;
}

/* Whether the environment entry e ("NAME=value") names a variable extra sets or removes. */
static int replaced(const char *e, const char *const extra[])
{
	for (size_t i = 0; extra && extra[i]; i++) {
		size_t n = strcspn(extra[i], "=");

		if (!strncmp(e, extra[i], n) && e[n] == '=')
			return 1;
	}
	return 0;
}

/*
 * The environment with extra's "NAME=value" entries in place of NAME's and
 * its "NAME" entries taken out; caller frees the array (not the strings).
 */
static char **with_env(const char *const extra[])
{
	extern char **environ;
	size_t n = 0, k = 0, i;
	char **v;

	while (environ[n])
		n++;
	for (i = 0; extra && extra[i]; i++)
		k++;
	v = xcalloc(n + k + 1, sizeof(*v));
	k = 0;
	for (i = 0; extra && extra[i]; i++)
		if (strchr(extra[i], '='))
			v[k++] = (char *)extra[i];
	for (i = 0; i < n; i++)
		if (!replaced(environ[i], extra))
			v[k++] = environ[i];
	return v;
}

/*
 * Starts argv[0] with in_fd as its standard input and out_fd as its
 * standard output (-1: /dev/null); close_fd (-1: none) is closed in the
 * child, the parent's end of a pipe it must not hold.
 */
static enum smr_rc spawn(const char *const argv[], const char *const env[], int in_fd,
			 int out_fd, int close_fd, pid_t *pid, struct smr_err *err)
{
	posix_spawn_file_actions_t fa;
	char **envp = with_env(env);
	int rc;

	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (close_fd >= 0)
		posix_spawn_file_actions_addclose(&fa, close_fd);
	rc = posix_spawnp(pid, argv[0], &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (rc)
		return smr_errf(err, rc == ENOENT ? SMR_ENOTFOUND : SMR_EINTERNAL,
				"cannot run %s: %s%s", argv[0], strerror(rc),
				rc == ENOENT ? " (is it installed?)" : "");
	return SMR_OK;
}

/* Waits for pid, a run of argv; SMR_EINTERNAL naming the exit status when it failed. */
static enum smr_rc reap(pid_t pid, const char *const argv[], struct smr_err *err)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return smr_errf(err, SMR_EINTERNAL, "%s %s failed (exit status %d)", argv[0],
				argv[1] ? argv[1] : "", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return SMR_OK;
}

enum smr_rc sys_run(const char *const argv[], const char *const env[], const char *input,
		    size_t len, struct smr_err *err)
{
	int in[2] = { -1, -1 };
	enum smr_rc rc;
	pid_t pid;
	void (*old)(int);

	if (pipe(in))
		return smr_errf(err, SMR_EINTERNAL, "cannot run %s: %s", argv[0], strerror(errno));
	rc = spawn(argv, env, in[0], -1, in[1], &pid, err);
	close(in[0]);
	if (rc) {
		close(in[1]);
		return rc;
	}
	old = signal(SIGPIPE, SIG_IGN);   /* a child that dies early must not kill us */
	for (size_t off = 0; input && off < len;) {
		ssize_t w = write(in[1], input + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(in[1]);
	signal(SIGPIPE, old);
	return reap(pid, argv, err);
}

enum smr_rc sys_run_read(const char *const argv[], const char *const env[], struct buf *out,
			 struct smr_err *err)
{
	int fd[2] = { -1, -1 };
	enum smr_rc rc;
	char chunk[4096];
	pid_t pid;

	if (pipe(fd))
		return smr_errf(err, SMR_EINTERNAL, "cannot run %s: %s", argv[0], strerror(errno));
	rc = spawn(argv, env, -1, fd[1], fd[0], &pid, err);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		return rc;
	}
	for (;;) {   /* read to the end, past out's cap too, so the child never blocks */
		ssize_t r = read(fd[0], chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		buf_add(out, chunk, (size_t)r);
	}
	close(fd[0]);
	rc = reap(pid, argv, err);
	if (!rc && out->err)
		rc = smr_errf(err, SMR_ETOOBIG, "%s %s printed more than %zu bytes", argv[0],
			      argv[1] ? argv[1] : "", out->max);
	return rc;
}
