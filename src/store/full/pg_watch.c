/*
 * pg_watch.c -- PostgreSQL's change notices of the auth epoch (store/auth.h's
 * store_watch): one connection of its own that LISTENs on
 * STORE_AUTH_CHANNEL.  Every move of the epoch runs postgres.c's
 * auth_bump_sql, which NOTIFYs in the statement that moves it, so a notice
 * is delivered only once the change it announces is committed and visible.
 *
 * A channel is per database, not per schema: the notice carries the
 * schema whose epoch moved (current_schema()), and a watch ignores those of
 * other schemas (tests and benchmarks share one database, a schema each).
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

	w->conn = PQconnectdbParams(keys, values, 1);
	if (w->conn && PQstatus(w->conn) == CONNECTION_OK) {
		PQsetNoticeProcessor(w->conn, quiet, NULL);
		if (!exec1(w->conn, "SELECT current_schema()", w->schema, sizeof(w->schema)) &&
		    !exec1(w->conn, "LISTEN " STORE_AUTH_CHANNEL, NULL, 0))
			return 0;
	}
	smr_errf(err, SMR_EUNAVAIL, "cannot listen for auth changes: %s",
		 w->conn ? PQerrorMessage(w->conn) : "out of memory");
	drop(w);
	return -1;
}

/* 1 when a notice of this schema was waiting; drains them all. */
static int drain(struct pg_watch *w)
{
	PGnotify *n;
	int moved = 0;

	while ((n = PQnotifies(w->conn))) {
		if (!n->extra || !*n->extra || !strcmp(n->extra, w->schema))
			moved = 1;
		PQfreemem(n);
	}
	return moved;
}

static int pg_watch_wait(struct store_watch *base, int ms, struct smr_err *err)
{
	struct pg_watch *w = (struct pg_watch *)base;
	struct pollfd pfd;

	if (!w->conn)
		return connect_listen(w, err) ? -1 : 1;   /* what came while down is lost */
	pfd = (struct pollfd){ .fd = PQsocket(w->conn), .events = POLLIN };
	if (pfd.fd < 0 || poll(&pfd, 1, ms) < 0)
		pfd.revents = POLLERR;
	if (pfd.revents && !PQconsumeInput(w->conn))
		pfd.revents = POLLERR;
	if ((pfd.revents & (POLLERR | POLLNVAL)) || PQstatus(w->conn) != CONNECTION_OK) {
		smr_errf(err, SMR_EUNAVAIL, "lost the connection listening for auth changes");
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

enum smr_rc pg_watch_open(const char *dsn, struct store_watch **out, struct smr_err *err)
{
	struct pg_watch *w = xcalloc(1, sizeof(*w));

	(void)err;
	w->base.wait = pg_watch_wait;
	w->base.close = pg_watch_close;
	w->dsn = xstrdup(dsn);
	connect_listen(w, NULL);       /* down now: wait() reports it and tries again */
	*out = &w->base;
	return SMR_OK;
}
