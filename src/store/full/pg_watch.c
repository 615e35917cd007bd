/*
 * pg_watch.c -- PostgreSQL's change notices (store/auth.h's store_watch):
 * one connection of its own that LISTENs on one channel.
 * STORE_AUTH_CHANNEL: every move of the auth epoch runs postgres.c's
 * auth_bump_sql, which NOTIFYs in the statement that moves it.
 * STORE_GEN_CHANNEL: triggers of migration 8 NOTIFY when a reply's events
 * are written or a stop is asked for (ops/full/relay.c).
 * STORE_DATA_CHANNEL: triggers of migration 14 NOTIFY when what a page or
 * an MCP subscriber follows is written (ops/changes.c).  Either way a
 * notice is delivered only once the change it announces is committed and
 * visible.
 *
 * A channel is per database, not per schema: the notice carries the
 * schema whose data moved (current_schema()), then optionally a space and
 * one letter saying what moved; a watch ignores notices of other schemas
 * (tests and benchmarks share one database, a schema each).
 *
 * The connection has TCP keepalives, so a peer that vanished without a
 * word is noticed within about 30 s; ops/auth_keeper.c also reads the
 * epoch every few seconds, which bounds what a lost notice could cost.
 */
#include "store/auth.h"
#include "store/store_int.h"
#include "util/xalloc.h"

#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pg_watch {
	struct store_watch base;
	char *dsn;
	PGconn *conn;          /* NULL while down */
	char channel[64];
	char schema[128];      /* whose notices count */
};

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void drop(struct pg_watch *w)
{
	PQfinish(w->conn);
	w->conn = NULL;
}

/* Runs one statement; its first cell (or "") into out when out is given; 0 on success. */
static int exec1(PGconn *c, const char *sql, char *out, size_t size)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;

	if (ok && out)
		snprintf(out, size, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	return ok ? 0 : -1;
}

/* Connects and LISTENs; 0, or -1 with err set (and w down). */
static int connect_listen(struct pg_watch *w, struct smr_err *err)
{
	static const char *const keys[] = {
		"connect_timeout", "application_name", "keepalives", "keepalives_idle",
		"keepalives_interval", "keepalives_count", "dbname", "client_encoding", NULL,
	};
	const char *values[] = { "5", "smriti-watch", "1", "10", "5", "3", w->dsn, "UTF8", NULL };
	char listen[96];

	snprintf(listen, sizeof(listen), "LISTEN %s", w->channel);
	w->conn = PQconnectdbParams(keys, values, 1);
	if (w->conn && PQstatus(w->conn) == CONNECTION_OK) {
		PQsetNoticeProcessor(w->conn, quiet, NULL);
		if (!exec1(w->conn, "SELECT current_schema()", w->schema, sizeof(w->schema)) &&
		    !exec1(w->conn, listen, NULL, 0))
			return 0;
	}
	smr_errf(err, SMR_EUNAVAIL, "cannot listen for changes on %s: %s", w->channel,
		 w->conn ? PQerrorMessage(w->conn) : "out of memory");
	drop(w);
	return -1;
}

/* What a notice's payload says moved, if it is of this schema (0 if not). */
static int notice_kind(const struct pg_watch *w, const char *extra)
{
	size_t len = strlen(w->schema);

	if (!extra || !*extra || !strcmp(extra, w->schema))
		return STORE_NOTICE_ANY;
	if (strncmp(extra, w->schema, len) || extra[len] != ' ')
		return 0;
	if (!strcmp(extra + len + 1, "e"))
		return STORE_NOTICE_ANY | STORE_NOTICE_EVENTS;
	if (!strcmp(extra + len + 1, "s"))
		return STORE_NOTICE_ANY | STORE_NOTICE_STOP;
	if (!strcmp(extra + len + 1, "d"))
		return STORE_NOTICE_ANY | STORE_NOTICE_DATA;
	return STORE_NOTICE_ANY;
}

/* The kinds of the notices of this schema that were waiting; drains them all. */
static int drain(struct pg_watch *w)
{
	PGnotify *n;
	int moved = 0;

	while ((n = PQnotifies(w->conn))) {
		moved |= notice_kind(w, n->extra);
		PQfreemem(n);
	}
	return moved;
}

static int pg_watch_wait(struct store_watch *base, int ms, struct smr_err *err)
{
	struct pg_watch *w = (struct pg_watch *)base;
	struct pollfd pfd;

	if (!w->conn)   /* what came while down is lost: anything may have moved */
		return connect_listen(w, err) ? -1 : STORE_NOTICE_ALL;
	pfd = (struct pollfd){ .fd = PQsocket(w->conn), .events = POLLIN };
	if (pfd.fd < 0 || poll(&pfd, 1, ms) < 0)
		pfd.revents = POLLERR;
	if (pfd.revents && !PQconsumeInput(w->conn))
		pfd.revents = POLLERR;
	if ((pfd.revents & (POLLERR | POLLNVAL)) || PQstatus(w->conn) != CONNECTION_OK) {
		smr_errf(err, SMR_EUNAVAIL, "lost the connection listening for changes on %s",
			 w->channel);
		drop(w);
		return -1;
	}
	return drain(w);
}

static void pg_watch_close(struct store_watch *base)
{
	struct pg_watch *w = (struct pg_watch *)base;

	drop(w);
	free(w->dsn);
	free(w);
}

enum smr_rc pg_watch_open(const char *dsn, const char *channel, struct store_watch **out,
			  struct smr_err *err)
{
	struct pg_watch *w = xcalloc(1, sizeof(*w));

	(void)err;
	w->base.wait = pg_watch_wait;
	w->base.close = pg_watch_close;
	w->dsn = xstrdup(dsn);
	snprintf(w->channel, sizeof(w->channel), "%s", channel);
	connect_listen(w, NULL);       /* down now: wait() reports it and tries again */
	*out = &w->base;
	return SMR_OK;
}
