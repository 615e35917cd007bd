/*
 * conn.c -- who holds the server's connection slots, and the deadlines
 * that keep a slow client from holding one for long.
 *
 * libmicrohttpd's own connection timeout restarts with every byte, so a
 * client dripping a byte every few seconds keeps a slot for ever.  Each
 * connection therefore gets a record here (its socket context, from
 * MHD_OPTION_NOTIFY_CONNECTION), and a sweeper thread closes what broke
 * its deadline, as nginx's client_header_timeout / client_body_timeout and
 * Apache's mod_reqtimeout do:
 *
 *   WAIT --first byte--> HEAD --head complete (on_access)--> BODY
 *     ^                   |  over header_timeout s: closed    |  slower than
 *     |                                                       |  body_timeout s
 *     +------ answer sent (on_completed) <---- BUSY <---------+  + bytes / min_rate
 *
 * The first byte of a head is seen in the kernel's count of bytes received
 * (TCP_INFO), read by the sweeper; before it, libmicrohttpd's idle timeout
 * closes a silent connection.  BUSY (a request at work, a reply being
 * sent or streamed) has no deadline here.
 *
 * One address holds at most per_addr connections (a newcomer past it is
 * closed).  Behind a proxy every connection comes from the proxy: a peer
 * listed in SMRITI_TRUSTED_PROXIES is not limited itself, and while one of
 * its connections carries a request the connection counts as the client's
 * that the proxy names (X-Forwarded-For, X-Real-IP), whose request is
 * refused past the limit; from any other peer those headers mean nothing.
 *
 * Slots are shared: past max_conns, a new connection evicts the oldest
 * unfinished (WAIT, HEAD or BODY) connection of the address that holds the
 * most connections with one unfinished, so a few addresses cannot keep
 * everyone else out.  libmicrohttpd's own limit is set above max_conns
 * (CONN_SPARE), so that it hands us the newcomer to decide on.
 *
 * The sweeper shuts a socket down (shutdown(2)) under the table's lock;
 * libmicrohttpd then sees the end of the stream and closes the connection
 * on its own thread.  It calls MHD_CONNECTION_NOTIFY_CLOSED, which takes
 * the record out under that lock, before it closes the descriptor, so the
 * sweeper never touches a descriptor that was reused.
 */
#include "http/http_int.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <errno.h>
#include <linux/tcp.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_MS 250
#define RX_UNKNOWN UINT64_MAX

/* ---- the table ---- */

static uint64_t rx_bytes(int fd)
{
	struct tcp_info ti;
	socklen_t n = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n) || n < offsetof(struct tcp_info,
									     tcpi_bytes_received) + 8)
		return 0;
	return ti.tcpi_bytes_received;
}

static void addr_key(const struct sockaddr *sa, unsigned char out[16])
{
	memset(out, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static void addr_text(const unsigned char key[16], char out[INET6_ADDRSTRLEN])
{
	static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(key, v4, 12))
		inet_ntop(AF_INET, key + 12, out, INET6_ADDRSTRLEN);
	else
		inet_ntop(AF_INET6, key, out, INET6_ADDRSTRLEN);
}

void http_conns_init(struct http_conns *cs, const struct http_config *cfg)
{
	memset(cs, 0, sizeof(*cs));
	pthread_mutex_init(&cs->lock, NULL);
	pthread_cond_init(&cs->cond, NULL);
	cs->max = cfg->max_conns ? cfg->max_conns : HTTP_DEFAULT_MAX_CONNS;
	cs->per_addr = cfg->max_per_address ? cfg->max_per_address : HTTP_DEFAULT_MAX_PER_ADDRESS;
	cs->header_us = (int64_t)(cfg->header_timeout ? cfg->header_timeout :
				  HTTP_DEFAULT_HEADER_TIMEOUT) * 1000000;
	cs->body_us = (int64_t)(cfg->body_timeout ? cfg->body_timeout :
				HTTP_DEFAULT_BODY_TIMEOUT) * 1000000;
	cs->min_rate = cfg->body_min_rate ? cfg->body_min_rate : HTTP_DEFAULT_BODY_MIN_RATE;
	/* libmicrohttpd never holds more than max + HTTP_CONN_SPARE connections */
	cs->cap = (size_t)cs->max + HTTP_CONN_SPARE + 1;
	cs->sorted = xcalloc(cs->cap, sizeof(*cs->sorted));
}

void http_conns_release(struct http_conns *cs)
{
	free(cs->sorted);
	free(cs->trusted);
	pthread_mutex_destroy(&cs->lock);
	pthread_cond_destroy(&cs->cond);
}

/* One line on the log about a connection the server closed (the access log's lock order). */
static void conn_log(struct http_server *srv, const struct http_conn *c, const char *why)
{
	char line[320], now[32], who[INET6_ADDRSTRLEN];
	int n;

	if (!srv->cfg->access_log)
		return;
	addr_text(c->addr, who);
	if (srv->cfg->log_json) {
		sys_now_iso(now);
		n = snprintf(line, sizeof(line),
			     "{\"time\":\"%s\",\"level\":\"warning\",\"event\":\"connection_closed\","
			     "\"client\":\"%s\",\"reason\":\"%s\"}\n", now, who, why);
	} else {
		n = snprintf(line, sizeof(line), "http: closed a connection from %s: %s\n", who, why);
	}
	if (n > 0)
		http_log_line(&srv->log, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Shuts c down (table locked); libmicrohttpd closes it on its own thread. */
static void conn_close(struct http_server *srv, struct http_conn *c, const char *why)
{
	shutdown(c->fd, SHUT_RDWR);
	c->closing = 1;
	srv->conns.live--;
	conn_log(srv, c, why);
}

static int unfinished(const struct http_conn *c)
{
	return !c->closing && atomic_load_explicit(&c->phase, memory_order_relaxed) != CONN_BUSY;
}

static int by_addr(const void *a, const void *b)
{
	const struct http_conn *x = *(struct http_conn *const *)a, *y = *(struct http_conn *const *)b;
	int d = memcmp(x->addr, y->addr, 16);

	if (d)
		return d;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The oldest unfinished connection of the address holding the most open
 * connections among those with one unfinished; NULL when every connection
 * is at work.  Table locked.
 */
static struct http_conn *victim(struct http_conns *cs)
{
	size_t n = 0, best_n = 0;
	struct http_conn *best = NULL;

	for (struct http_conn *c = cs->head; c && n < cs->cap; c = c->next)
		if (!c->closing)
			cs->sorted[n++] = c;
	qsort(cs->sorted, n, sizeof(*cs->sorted), by_addr);
	for (size_t i = 0, j; i < n; i = j) {
		struct http_conn *oldest = NULL;

		for (j = i; j < n && !memcmp(cs->sorted[j]->addr, cs->sorted[i]->addr, 16); j++)
			if (!oldest && unfinished(cs->sorted[j]))
				oldest = cs->sorted[j];
		if (oldest && j - i > best_n) {
			best_n = j - i;
			best = oldest;
		}
	}
	return best;
}

/* Connections held by the address key (table locked). */
static unsigned held_by(struct http_conns *cs, const unsigned char key[16])
{
	unsigned n = 0;

	for (struct http_conn *c = cs->head; c; c = c->next)
		n += !c->closing && !memcmp(c->addr, key, 16);
	return n;
}

/* A new connection: counted, and past the limit someone's unfinished one makes room. */
static void conn_start(struct http_server *srv, struct MHD_Connection *conn, struct http_conn *c)
{
	struct http_conns *cs = &srv->conns;
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn,
								      MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn,
								      MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct http_conn *v;

	c->fd = fd ? fd->connect_fd : -1;
	addr_key(ad ? ad->client_addr : NULL, c->addr);
	memcpy(c->peer, c->addr, 16);
	c->trusted = http_net_has(cs->trusted, cs->n_trusted, c->peer);
	atomic_init(&c->phase, CONN_WAIT);
	atomic_init(&c->head_us, 0);
	atomic_init(&c->since_us, sys_monotonic_us());
	atomic_init(&c->body, 0);
	c->rx_base = 0;             /* every byte of a new connection is its first request's */
	pthread_mutex_lock(&cs->lock);
	c->seq = ++cs->seq;
	c->prev = cs->tail;
	if (cs->tail)
		cs->tail->next = c;
	else
		cs->head = c;
	cs->tail = c;
	cs->live++;
	if (!c->trusted && held_by(cs, c->addr) > cs->per_addr)
		conn_close(srv, c, "this address holds the most connections one address may");
	while (cs->live > cs->max) {
		v = victim(cs);
		if (!v) {
			conn_close(srv, c, "the server is full and every connection is at work");
			break;
		}
		conn_close(srv, v, v == c ? "the server is full and this address holds the most"
			   " connections" : "evicted to make room: the server is full and this"
			   " address holds the most connections");
	}
	pthread_mutex_unlock(&cs->lock);
}

static void conn_end(struct http_server *srv, struct http_conn *c)
{
	struct http_conns *cs = &srv->conns;

	pthread_mutex_lock(&cs->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		cs->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		cs->tail = c->prev;
	if (!c->closing)
		cs->live--;
	pthread_mutex_unlock(&cs->lock);
}

void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	struct http_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		c = xcalloc(1, sizeof(*c));
		/* a server that wants no token keeps no memo */
		if (srv->guard.has_token || atomic_load(&srv->users_seen))
			c->memo = xcalloc(1, sizeof(*c->memo));
		*socket_context = c;
		conn_start(srv, conn, c);
		return;
	}
	if (!c)
		return;
	conn_end(srv, c);
	if (c->memo) {
		ops_auth_memo_wipe(c->memo);
		free(c->memo);
	}
	free(c);
	*socket_context = NULL;
}

struct http_conn *http_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* ---- a trusted proxy's requests ---- */

unsigned http_conn_request(struct http_server *srv, struct http_conn *c, const char *xff,
			   const char *xri)
{
	struct http_conns *cs = &srv->conns;
	unsigned char key[16];
	unsigned n;

	if (!c || !c->trusted)
		return 0;
	memcpy(key, c->peer, 16);
	if (!http_forwarded_client(cs->trusted, cs->n_trusted, xff, xri, key))
		return 0;
	pthread_mutex_lock(&cs->lock);
	memcpy(c->addr, key, 16);
	n = held_by(cs, key);
	pthread_mutex_unlock(&cs->lock);
	return n > cs->per_addr && !http_net_has(cs->trusted, cs->n_trusted, key) ? n : 0;
}

void http_conn_request_end(struct http_server *srv, struct http_conn *c)
{
	struct http_conns *cs = &srv->conns;

	if (!c || !c->trusted)
		return;
	pthread_mutex_lock(&cs->lock);
	memcpy(c->addr, c->peer, 16);
	pthread_mutex_unlock(&cs->lock);
}

/* ---- what the event threads tell the table ---- */

void http_conn_phase(struct http_conn *c, enum conn_phase phase)
{
	if (!c)
		return;
	if (phase == CONN_BODY) {
		atomic_store_explicit(&c->body, 0, memory_order_relaxed);
		atomic_store_explicit(&c->since_us, sys_monotonic_us(), memory_order_relaxed);
	} else if (phase == CONN_WAIT) {
		/* the sweeper takes the kernel's count as the base on its next look */
		atomic_store_explicit(&c->head_us, 0, memory_order_relaxed);
		atomic_store_explicit(&c->rx_unknown, 1, memory_order_relaxed);
		c->bad_target = 0;
	}
	atomic_store_explicit(&c->phase, phase, memory_order_release);
}

void http_conn_body(struct http_conn *c, size_t n)
{
	if (c)
		atomic_fetch_add_explicit(&c->body, n, memory_order_relaxed);
}

/* ---- the sweeper ---- */

/* The reason c broke its deadline at now, or NULL (table locked). */
static const char *overdue(struct http_conns *cs, struct http_conn *c, int64_t now,
			   char *why, size_t size)
{
	int phase = atomic_load_explicit(&c->phase, memory_order_acquire);
	int64_t head = atomic_load_explicit(&c->head_us, memory_order_relaxed);
	size_t body;

	if (phase == CONN_WAIT) {
		if (!head) {
			uint64_t rx = rx_bytes(c->fd);

			if (atomic_exchange_explicit(&c->rx_unknown, 0, memory_order_relaxed))
				c->rx_base = rx;
			else if (rx > c->rx_base)
				atomic_store_explicit(&c->head_us, now, memory_order_relaxed);
			return NULL;
		}
		if (now - head <= cs->header_us)
			return NULL;
		snprintf(why, size, "its request head was not complete %lld s after its first byte",
			 (long long)(cs->header_us / 1000000));
		return why;
	}
	if (phase != CONN_BODY)
		return NULL;
	body = atomic_load_explicit(&c->body, memory_order_relaxed);
	if (now - atomic_load_explicit(&c->since_us, memory_order_relaxed) <=
	    cs->body_us + (int64_t)(body / cs->min_rate) * 1000000)
		return NULL;
	snprintf(why, size, "its request body came slower than %zu bytes a second (%zu bytes)",
		 cs->min_rate, body);
	return why;
}

static void sweep(struct http_server *srv)
{
	struct http_conns *cs = &srv->conns;
	int64_t now = sys_monotonic_us();
	char why[160];

	for (struct http_conn *c = cs->head; c; c = c->next)
		if (!c->closing && overdue(cs, c, now, why, sizeof(why)))
			conn_close(srv, c, why);
}

static void *sweeper_main(void *arg)
{
	struct http_server *srv = arg;
	struct http_conns *cs = &srv->conns;
	struct timespec until;

	sys_thread_name("smr-sweep");
	pthread_mutex_lock(&cs->lock);
	while (!cs->stop) {
		sys_deadline(&until, SWEEP_MS);
		pthread_cond_timedwait(&cs->cond, &cs->lock, &until);
		if (!cs->stop)
			sweep(srv);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

int http_conns_start(struct http_server *srv)
{
	if (pthread_create(&srv->conns.sweeper, NULL, sweeper_main, srv))
		return -1;
	srv->conns.running = 1;
	return 0;
}

void http_conns_stop(struct http_server *srv)
{
	struct http_conns *cs = &srv->conns;

	if (!cs->running)
		return;
	pthread_mutex_lock(&cs->lock);
	cs->stop = 1;
	pthread_cond_signal(&cs->cond);
	pthread_mutex_unlock(&cs->lock);
	pthread_join(cs->sweeper, NULL);
	cs->running = 0;
}
