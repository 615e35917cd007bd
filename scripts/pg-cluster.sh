#!/usr/bin/env bash
# pg-cluster.sh -- a throwaway PostgreSQL cluster for Smriti's tests and benchmarks.
#
# usage: scripts/pg-cluster.sh start|url|restart|halt|crash|resume|stop [DIR]
#
#   start    initdb a new cluster in DIR, start it listening only on 127.0.0.1 on
#            a free port, create the role "smriti" (trust auth, superuser of this
#            throwaway cluster) and the database "smriti", write the URL to
#            DIR/url and print it on stdout, e.g.
#              postgres://smriti@127.0.0.1:41234/smriti
#   url      print the URL of the cluster in DIR
#   restart  pg_ctl restart -m fast (same port, same data): what an operator's
#            restart or a failover looks like to connected clients
#   halt     stop the server but keep DIR (an outage); resume starts it again
#   crash    pg_ctl stop -m immediate: every backend ends at once without a
#            checkpoint, as in a power cut or a kill -9 of the postmaster;
#            resume starts it again, with crash recovery from the WAL
#   stop     stop the server and remove DIR
#
# DIR defaults to $SMRITI_PG_DIR, else ${TMPDIR:-/tmp}/smriti-pg.  Typical use:
#
#   export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start)
#   make test
#   scripts/pg-cluster.sh stop
#
# Needs Debian's postgresql package (initdb, pg_ctl under
# /usr/lib/postgresql/VERSION/bin; PG_BIN overrides).  Reads no standard
# input.  initdb refuses to run as root, so as root the server runs as the OS
# user "postgres" (created by Debian's package), or, when that user does not
# exist, as a system user "smriti-pg" this script creates; DIR and its parents
# must be reachable by that user (the default under /tmp is).
set -euo pipefail

cmd=${1:-}
dir=${2:-${SMRITI_PG_DIR:-${TMPDIR:-/tmp}/smriti-pg}}
role=smriti
db=smriti

die() { echo "pg-cluster: $*" >&2; exit 1; }

find_bin() {
	local d
	if [ -n "${PG_BIN:-}" ]; then
		echo "$PG_BIN"
		return
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return
		fi
	done
	die "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)"
}

# The OS user the server runs as: ourselves, or an unprivileged one when root.
server_user() {
	if [ "$(id -u)" != 0 ]; then
		id -un
	elif getent passwd postgres >/dev/null; then
		echo postgres
	else
		getent passwd smriti-pg >/dev/null ||
			useradd --system --no-create-home --shell /usr/sbin/nologin smriti-pg
		echo smriti-pg
	fi
}

as_server() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$user" -- "$@"
	else
		"$@"
	fi
}

# A TCP port nothing listens on right now (the OS picks it).
free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
	elif command -v node >/dev/null; then
		node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
	else
		echo $((20000 + RANDOM % 40000))
	fi
}

start() {
	local port tries=0

	[ -e "$dir/data" ] && die "a cluster already exists in '$dir' (stop it first)"
	mkdir -p "$dir"
	chmod 700 "$dir"
	[ "$(id -u)" = 0 ] && chown "$user:" "$dir"
	as_server test -w "$dir" || die "user '$user' cannot write '$dir'; choose another DIR"
	as_server "$bin/initdb" -D "$dir/data" -U "$role" --auth=trust -E UTF8 --no-locale \
		--no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
	while :; do
		port=$(free_port)
		cat >>"$dir/data/postgresql.conf" <<-EOF
		# pg-cluster.sh
		listen_addresses = '127.0.0.1'
		port = $port
		unix_socket_directories = '$dir'
		max_connections = 200
		fsync = on
		synchronous_commit = on
		EOF
		if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			start >/dev/null; then
			break
		fi
		tries=$((tries + 1))
		[ "$tries" -lt 5 ] || { cat "$dir/server.log" >&2; die "the server did not start"; }
	done
	as_server "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$role" "$db" ||
		die "cannot create database '$db'"
	echo "postgres://$role@127.0.0.1:$port/$db" >"$dir/url"
	cat "$dir/url"
}

url() {
	[ -f "$dir/url" ] || die "no cluster in '$dir'"
	cat "$dir/url"
}

restart() {
	[ -d "$dir/data" ] || die "no cluster in '$dir'"
	as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -m fast \
		restart >/dev/null
}

halt() {
	[ -d "$dir/data" ] || die "no cluster in '$dir'"
	as_server "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >/dev/null
}

crash() {
	[ -d "$dir/data" ] || die "no cluster in '$dir'"
	as_server "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m immediate stop >/dev/null
}

resume() {
	[ -d "$dir/data" ] || die "no cluster in '$dir'"
	as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

stop() {
	if [ -f "$dir/data/postmaster.pid" ]; then
		as_server "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >/dev/null ||
			as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null || true
	fi
	rm -rf "$dir"
}

case "$cmd" in
start | url | restart | halt | crash | resume | stop) ;;
*) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
bin=$(find_bin)
user=$(server_user)
"$cmd"
