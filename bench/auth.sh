#!/bin/sh
# auth.sh -- what authentication costs per request: GET /repos/{id}/head
# under wrk (2 threads, 32 keep-alive connections), with a person's token
# against without one.
#
# Each round starts two servers on fresh stores holding one Space: one
# without users (no token needed, as before teams) and one with a person
# who has a reader role and a token (the server then wants a token on every
# request), and measures them in the order no token, token, token, no token,
# so that the machine's load drifting during a round weighs on both alike.
# (Measuring one server before and after it had users, as this bench first
# did, put every "after" behind its "before": with no token in both halves
# the second still came out 8-10% slower by CPU per request.)
# A second part compares, in one server with SMRITI_TOKEN and that person,
# the person's token (a SHA-256 and the lookups in what the thread kept;
# see docs/security.md) with the administrator's (a SHA-256 only),
# alternating; on PostgreSQL it also counts the database's transactions
# per request of each, which does not depend on the machine's load.  Each
# measurement also reads the server's own CPU time (/proc/PID/stat) per
# request: on a busy shared machine req/s moves with everyone else's work,
# what the server spent per request much less.  Medians of
# AUTH_BENCH_ROUNDS (default 3) rounds of AUTH_BENCH_SECONDS (default 5).
#
# With AUTH_BENCH_CALLGRIND=1 it also runs the first comparison with the
# server under valgrind's callgrind and reports the instructions it executed
# per request: a count the machine's other work does not move.
#
#   bench/auth.sh                       SQLite
#   AUTH_BENCH_PG=URL bench/auth.sh     PostgreSQL (a schema per round, dropped afterwards)
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
SECS=${AUTH_BENCH_SECONDS:-5}
ROUNDS=${AUTH_BENCH_ROUNDS:-3}
command -v wrk >/dev/null || { echo "auth.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" >/dev/null
S=$PWD/$BUILD/smriti-full
dir=$(mktemp -d /tmp/smriti-auth-bench-XXXXXX)
pid=
pid_open=
pid_user=
WRAP=
admin=bench-admin-token-0123456789
cleanup() {
	for p in $pid $pid_open $pid_user; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# fresh() runs in a subshell: find its schemas by name
	if [ -n "${AUTH_BENCH_PG:-}" ]; then
		psql -qAt "$AUTH_BENCH_PG" -c "SELECT 'DROP SCHEMA ' || nspname || ' CASCADE;'
			FROM pg_namespace WHERE nspname LIKE 'smriti_auth_bench_$$_%'" |
			psql -qAt "$AUTH_BENCH_PG" >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
kind=SQLite
[ -n "${AUTH_BENCH_PG:-}" ] && kind=PostgreSQL
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# fresh NAME -> prints the DSN of a new store holding Space "bench" with one checkpoint
fresh() {
	if [ -n "${AUTH_BENCH_PG:-}" ]; then
		x=smriti_auth_bench_$$_$1
		psql -qAt -v ON_ERROR_STOP=1 "$AUTH_BENCH_PG" -c "CREATE SCHEMA $x" >/dev/null
		sep='?'
		case $AUTH_BENCH_PG in *\?*) sep='&' ;; esac
		db="$AUTH_BENCH_PG${sep}options=-csearch_path%3D$x"
	else
		db=$dir/$1.db
	fi
	$S --db "$db" space create bench >/dev/null
	$S --db "$db" commit bench -m "bench checkpoint" --summary "one checkpoint" \
		--decision "measure the head read" --task "report req/s and p99" >/dev/null
	echo "$db"
}

# serve DB [env...] -> starts a server (pid in $pid), sets $url
serve() {
	db=$1
	shift
	: >"$dir/serve.log"
	env "$@" $WRAP "$S" --db "$db" serve --listen 127.0.0.1:0 --quiet 2>"$dir/serve.log" >/dev/null &
	pid=$!
	i=0
	until grep -q '^listening on ' "$dir/serve.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && { cat "$dir/serve.log" >&2; exit 1; }
		sleep 0.05
	done
	url=$(sed -n 's/^listening on //p' "$dir/serve.log" | head -n 1)
}

stop() {
	kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	pid=
}

# PostgreSQL: transactions committed in the database so far (each statement of Smriti outside
# a write is one), to count what a request costs in round trips; 0 on SQLite
xacts() {
	if [ -n "${AUTH_BENCH_PG:-}" ]; then
		psql -qAt "$AUTH_BENCH_PG" -c "SELECT pg_stat_clear_snapshot();
			SELECT xact_commit + xact_rollback FROM pg_stat_database
			WHERE datname = current_database()" | tail -n 1
	else
		echo 0
	fi
}

# the server's CPU time so far, in clock ticks (user + system)
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }

# run NAME URL [TOKEN] -> appends "req/s p99" to $dir/NAME, the requests to $dir/NAME.n and
# the server's CPU microseconds per request to $dir/NAME.cpu (less at the mercy of the
# machine's other work than req/s: what the server itself spent)
run() {
	c0=$(cpu)
	if [ -n "${3:-}" ]; then
		wrk -t2 -c32 -d"${SECS}s" --latency -H "Authorization: Bearer $3" "$2" >"$dir/wrk.txt"
	else
		wrk -t2 -c32 -d"${SECS}s" --latency "$2" >"$dir/wrk.txt"
	fi
	if grep -q 'Non-2xx' "$dir/wrk.txt"; then
		echo "auth.sh: $1 saw non-2xx answers" >&2
		exit 1
	fi
	awk '
		/Requests\/sec:/ { rps = $2 }
		/^ +99%/ {
			v = $2; u = v; sub(/[a-z]+$/, "", v); sub(/^[0-9.]+/, "", u)
			if (u == "us") v /= 1000; else if (u == "s") v *= 1000
			p99 = v
		}
		END { printf "%.0f %.3f\n", rps, p99 }' "$dir/wrk.txt" >>"$dir/$1"
	sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$dir/wrk.txt" >"$dir/$1.n"
	echo "$c0 $(cpu) $(cat "$dir/$1.n") $(getconf CLK_TCK)" |
		awk '{ printf "%.2f\n", ($2 - $1) * 1e6 / $4 / $3 }' >>"$dir/$1.cpu"
}

# count NAME URL [TOKEN] -> appends "transactions per request" to $dir/NAME.tx (PostgreSQL)
count() {
	sleep 11       # what came before is reported
	a=$(xacts)
	SECS=2 run "$@"
	sleep 11       # an idle backend reports its counts within 10 s (PGSTAT_IDLE_INTERVAL)
	b=$(xacts)
	echo "$a $b $(cat "$dir/$1.n")" | awk '{ printf "%.3f\n", ($2 - $1) / $3 }' >>"$dir/$1.tx"
}

last() { tail -n 1 "$dir/$1" | cut -d' ' -f1; }

# add_person: gives the store $db a person with a reader role (its token in $token) and waits
# until the server at $url wants a token
add_person() {
	$S --db "$db" user add alice >/dev/null
	$S --db "$db" grant alice bench reader >/dev/null
	token=$($S --db "$db" token create alice 2>/dev/null)
	i=0
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/repos/$id/head")" = 401 ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "the server did not notice its users" >&2; exit 1; }
		sleep 0.05
	done
}

# instr NAME URL [TOKEN] -> appends the server's instructions per request (callgrind: what
# the process executed in user space, whatever else the machine runs) to $dir/NAME.ir
instr() {
	SECS=2 run warm "$2" "${3:-}"
	callgrind_control -z "$pid" >/dev/null 2>&1
	n0=$(ls "$dir"/cg.* 2>/dev/null | wc -l)
	SECS=5 run "$1" "$2" "${3:-}"
	callgrind_control -d "$pid" >/dev/null 2>&1
	i=0
	until [ "$(ls "$dir"/cg.* 2>/dev/null | wc -l)" -gt "$n0" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "callgrind wrote no dump" >&2; exit 1; }
		sleep 0.1
	done
	sleep 0.5
	echo "$(sed -n 's/^summary: //p' "$(ls -t "$dir"/cg.* | head -n 1)") $(cat "$dir/$1.n")" |
		awk '{ printf "%.0f\n", $1 / $2 }' >>"$dir/$1.ir"
}

# sum2 FILE -> the sum of the first fields of its last two lines
sum2() { tail -n 2 "$dir/$1" | awk '{ s += $1 } END { print s }'; }

# Part 1: a server without users (no token) beside one with a person (its token), new ones
# every round, measured open, person, person, open.
r=0
while [ $r -lt "$ROUNDS" ]; do
	db=$(fresh "o$r")
	id_open=$($S --db "$db" space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)
	serve "$db"
	pid_open=$pid
	url_open=$url/repos/$id_open/head
	db=$(fresh "u$r")
	id=$($S --db "$db" space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)
	serve "$db"
	pid_user=$pid
	add_person
	url_user=$url/repos/$id/head
	pid=$pid_open
	SECS=1 run warm "$url_open"
	pid=$pid_user
	SECS=1 run warm "$url_user" "$token"
	for phase in open user user open; do
		if [ $phase = open ]; then
			pid=$pid_open
			run open "$url_open"
		else
			pid=$pid_user
			run user "$url_user" "$token"
		fi
	done
	echo "$(sum2 open) $(sum2 user)" | awk '{ print $2 / $1 }' >>"$dir/ratio"
	echo "$(sum2 open.cpu) $(sum2 user.cpu)" | awk '{ print $1 / $2 }' >>"$dir/cratio"
	pid=$pid_user
	stop
	pid=$pid_open
	stop
	pid_open=
	pid_user=
	r=$((r + 1))
done

# Part 2: one server with SMRITI_TOKEN and a person: person against administrator, alternating.
db=$(fresh admin)
id=$($S --db "$db" space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)
$S --db "$db" user add alice >/dev/null
$S --db "$db" grant alice bench reader >/dev/null
token=$($S --db "$db" token create alice 2>/dev/null)
serve "$db" SMRITI_TOKEN=$admin
SECS=1 run warm "$url/repos/$id/head" "$token"
r=0
while [ $r -lt "$ROUNDS" ]; do
	if [ $((r % 2)) = 0 ]; then
		run admin "$url/repos/$id/head" "$admin"
		run user2 "$url/repos/$id/head" "$token"
	else
		run user2 "$url/repos/$id/head" "$token"
		run admin "$url/repos/$id/head" "$admin"
	fi
	echo "$(last admin) $(last user2)" | awk '{ print $2 / $1 }' >>"$dir/ratio2"
	echo "$(tail -n 1 "$dir/admin.cpu") $(tail -n 1 "$dir/user2.cpu")" | awk '{ print $1 / $2 }' >>"$dir/cratio2"
	r=$((r + 1))
done
if [ -n "${AUTH_BENCH_PG:-}" ]; then
	count admintx "$url/repos/$id/head" "$admin"
	count usertx "$url/repos/$id/head" "$token"
fi
stop

# Part 3 (AUTH_BENCH_CALLGRIND=1): part 1 with the server under callgrind, counting the
# instructions it executes per request, which the machine's other work does not move.
if [ -n "${AUTH_BENCH_CALLGRIND:-}" ]; then
	command -v valgrind >/dev/null || { echo "AUTH_BENCH_CALLGRIND needs valgrind" >&2; exit 1; }
	db=$(fresh cg)
	id=$($S --db "$db" space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)
	WRAP="valgrind --tool=callgrind --callgrind-out-file=$dir/cg.%p" serve "$db"
	instr cgopen "$url/repos/$id/head"
	add_person
	instr cguser "$url/repos/$id/head" "$token"
	stop
fi

median() { sort -n -k1,1 "$dir/$1" | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
rounds() { awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 }' "$dir/$1"; }
echo "GET /repos/{id}/head, $kind, wrk -t2 -c32, $ROUNDS rounds of ${SECS}s, $(nproc) cores"
echo " load average at the start: $load0; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo " a server without users beside one with a person, alternating:"
printf '   %-34s %10s req/s   p99 %8s ms\n' "no token (no users; baseline)" $(median open)
printf '   %-34s %10s req/s   p99 %8s ms\n' "a person's token (reader)" $(median user)
median ratio | awk '{ printf "   person token / no token, median of the rounds: %.3f (%.1f%% %s)\n", $1,
	($1 < 1 ? 1 - $1 : $1 - 1) * 100, $1 < 1 ? "slower" : "faster" }'
printf '   server CPU per request: no token %s us, person token %s us\n' "$(median open.cpu)" "$(median user.cpu)"
median cratio | awk '{ printf "   as a throughput ratio (CPU no token / CPU person), median: %.3f\n", $1 }'
printf '   every round, req/s ratio: %s; CPU ratio: %s\n' "$(rounds ratio)" "$(rounds cratio)"
echo " in one server with SMRITI_TOKEN and users, alternating:"
printf '   %-34s %10s req/s   p99 %8s ms\n' "SMRITI_TOKEN (administrator)" $(median admin)
printf '   %-34s %10s req/s   p99 %8s ms\n' "a person's token (reader)" $(median user2)
median ratio2 | awk '{ printf "   person token / administrator token, median of the rounds: %.3f\n", $1 }'
printf '   server CPU per request: administrator %s us, person token %s us\n' "$(median admin.cpu)" "$(median user2.cpu)"
median cratio2 | awk '{ printf "   as a throughput ratio (CPU administrator / CPU person), median: %.3f\n", $1 }'
printf '   every round, req/s ratio: %s; CPU ratio: %s\n' "$(rounds ratio2)" "$(rounds cratio2)"
if [ -n "${AUTH_BENCH_CALLGRIND:-}" ]; then
	echo " under callgrind, instructions per request (user space, all threads; before and after users):"
	printf '   %-34s %10s\n' "no token (no users; baseline)" "$(cat "$dir/cgopen.ir")"
	printf '   %-34s %10s\n' "a person's token (reader)" "$(cat "$dir/cguser.ir")"
	echo "$(cat "$dir/cgopen.ir") $(cat "$dir/cguser.ir")" |
		awk '{ printf "   as a throughput ratio (no token / person): %.3f\n", $1 / $2 }'
fi
if [ -n "${AUTH_BENCH_PG:-}" ]; then
	echo " PostgreSQL transactions per request (pg_stat_database; the head read is one):"
	printf '   %-34s %10s\n' "SMRITI_TOKEN (administrator)" "$(cat "$dir/admintx.tx")"
	printf '   %-34s %10s\n' "a person's token (reader)" "$(cat "$dir/usertx.tx")"
fi
