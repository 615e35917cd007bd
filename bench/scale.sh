#!/bin/sh
# scale.sh -- issue 32's goals at scale, on SQLite and PostgreSQL, each
# figure beside the same one measured in the same run on a baseline
# database of 1,000 checkpoints, with the ratio:
#
#   1. a database of BIG checkpoints in one Space ("big"; default
#      1,000,000), a Space of FORK checkpoints ("fork-src"; 100,000) and
#      SPACES Spaces of one checkpoint each (10,000), written through the
#      store's API in big transactions, with the rows committing them would
#      write, reflog included (bench-scale build, bench/scale_bench.c);
#      the baseline: 1,000 in "big", 1,000 in "fork-src", BASE_SPACES Spaces;
#   2. whole-process times of `smriti` (hyperfine, median of RUNS): `head big --json`,
#      `log big --limit 20`, `search latency --limit 20` (a word in every
#      10th checkpoint: the newest 20 of tens of thousands of matches),
#      `space list --json --limit 20` (the first page) and, for
#      information, `space list --json` (every Space: it grows with them);
#      `fsck` of everything, in microseconds per checkpoint (linear: the
#      ratio is near 1);
#   3. over HTTP (`smriti serve`, bench-scale http: one kept-alive
#      connection, median latency, and the server's CPU per request):
#      GET /repos/big/head (REQS requests, the best of three batches), and
#      the web UI's history first page, GET
#      /v4/repos/big/graph?limit=400&changes=1 (src/ui/history.js;
#      GRAPH_REQS requests: it took 9 s a request at 20,000 checkpoints on
#      a loaded machine); and, for information, the web UI's Spaces page,
#      GET /v4/overview?limit=101 (src/ui/spaces.js: the 100 most recently
#      active and one more; it sorts every Space by activity, so it grows
#      with them; GRAPH_REQS requests);
#   4. fork of "fork-src" (`smriti fork`, whole process, median of 5) and
#      the database's growth per fork; and the same fork through `smriti
#      serve` (POST /v4/repos/fork-src/fork, median of FORK_REQS, and the
#      server's CPU per fork): a whole process on PostgreSQL pays a new
#      connection and a new server backend, which a server does not;
#   5. on Spaces whose HEAD holds 5, 300 and 990 items: the database's
#      growth per checkpoint that adds one task, and the rate of
#      PATCH /v4/repos/{id}/head doing so (PATCHES each, one connection;
#      each also drops the task the patch before added, so HEAD keeps its
#      size), with its ratio to the 5-item rate; and the same patches
#      asking for the minimal answer (Prefer: return=minimal).
#
# Goals (issue 32): 2-4 within 2x of the baseline, fsck linear; fork at most
# 10 ms and 4 KB; a one-item checkpoint at most 2 KB; patch rate at 300
# items >= 0.8x and at 990 >= 0.6x the 5-item rate.  Nothing here asserts
# them: this prints the figures.  Times are wall times on a machine that may
# be shared: the load average is printed with them.
#
#   bench/scale.sh                                   the full size (minutes)
#   SCALE_CHECKPOINTS=20000 SCALE_FORK=10000 SCALE_SPACES=1000 bench/scale.sh
#   SCALE_BACKENDS=sqlite bench/scale.sh             one backend
#
# SCALE_DIR=/path keeps the databases it builds there (SQLite files, and
# for PostgreSQL, unless SMRITI_BENCH_PG or SMRITI_TEST_PG names one, a
# cluster in SCALE_DIR/pg, halted at the end with its data kept); a later
# run with the same sizes measures them again without building (a file
# NAME.built beside them says a build finished).  Without it, everything
# goes into a temporary directory and is removed.
#
# Environment: SCALE_CHECKPOINTS, SCALE_FORK, SCALE_SPACES, SCALE_BASELINE
# (1000), SCALE_BASE_SPACES (10), SCALE_RUNS (20), SCALE_REQS (1000),
# SCALE_GRAPH_REQS (3), SCALE_FORK_REQS (50), SCALE_PATCHES (1000),
# SCALE_TIMEOUT (600 s: a CLI command, fsck or the forks taking longer are
# given as "-"), SCALE_HTTP_TIMEOUT (300 s a
# request; ditto), SCALE_BACKENDS ("sqlite postgres"); PostgreSQL is
# SMRITI_BENCH_PG or SMRITI_TEST_PG (the benchmark writes into schemas of
# its own and drops them), else a throwaway cluster (scripts/pg-cluster.sh).
# SMRITI_BUILD selects the build directory (default build).
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
BIG=${SCALE_CHECKPOINTS:-1000000}
FORK=${SCALE_FORK:-100000}
SPACES=${SCALE_SPACES:-10000}
BASE=${SCALE_BASELINE:-1000}
BASE_SPACES=${SCALE_BASE_SPACES:-10}
RUNS=${SCALE_RUNS:-20}
REQS=${SCALE_REQS:-1000}
GRAPH_REQS=${SCALE_GRAPH_REQS:-3}
FORK_REQS=${SCALE_FORK_REQS:-50}
# PostgreSQL's relations grow by whole 8 KB pages, and a patch writes to
# about 19 of them (tables and indexes): over 200 patches the rounding alone
# could move the growth a checkpoint by ~700 B either way.
PATCHES=${SCALE_PATCHES:-1000}
TIMEOUT=${SCALE_TIMEOUT:-600}
HTTP_TIMEOUT=${SCALE_HTTP_TIMEOUT:-300}
BACKENDS=${SCALE_BACKENDS:-sqlite postgres}
command -v hyperfine >/dev/null || { echo "scale.sh needs hyperfine" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti" "$BUILD/smriti-full" "$BUILD/bench-scale" >/dev/null
S=$PWD/$BUILD/smriti-full
# The command a person or an agent types: smriti, which runs SQLite itself and
# hands PostgreSQL (and the server) to smriti-full by exec, as installed.  The
# whole-process figures time it: smriti-full alone spends about 16 ms of each
# start loading the 38 libraries of its HTTP client and PostgreSQL's, which
# a command on SQLite never needs.
C=$PWD/$BUILD/smriti
B=$PWD/$BUILD/bench-scale

KEEP=${SCALE_DIR:-}
halt_pg=
case " $BACKENDS " in
*" postgres "*)
	SMRITI_BENCH_PG=${SMRITI_BENCH_PG:-${SMRITI_TEST_PG:-}}
	if [ -n "$KEEP" ] && [ -z "$SMRITI_BENCH_PG" ]; then
		# the kept cluster: started once, resumed and halted by each run
		mkdir -p "$KEEP"
		if [ -d "$KEEP/pg/data" ]; then
			scripts/pg-cluster.sh resume "$KEEP/pg"
			SMRITI_BENCH_PG=$(scripts/pg-cluster.sh url "$KEEP/pg")
		else
			SMRITI_BENCH_PG=$(scripts/pg-cluster.sh start "$KEEP/pg")
		fi
		halt_pg=$KEEP/pg
	fi
	. bench/bench_pg.sh          # $dir, $url, and cleanup (the cluster, $dir)
	trap 'cleanup_scale; cleanup; halt_kept' EXIT INT TERM
	;;
*)
	dir=$(mktemp -d /tmp/smriti-bench-scale-XXXXXX)
	trap 'cleanup_scale; rm -rf "$dir"' EXIT INT TERM
	url=
	;;
esac
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	KEEP=$(cd "$KEEP" && pwd)
else
	KEEP=$dir
fi
pid=
schemas=
run=$(date +%s)

halt_kept() {
	[ -n "$halt_pg" ] && scripts/pg-cluster.sh halt "$halt_pg" >/dev/null 2>&1 || true
}

stop_server() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	pid=
}

# The DSN of database $2 (a name: "big_SIZES", "base_SIZES", "items") of
# backend $1: a file of $KEEP, or a schema of its own for PostgreSQL.
dsn_of() {
	case "$1 $2" in
	"sqlite items"*) echo "$dir/sqlite_$2.db"; return ;;
	sqlite*) echo "$KEEP/sqlite_$2.db"; return ;;
	esac
	case "$url" in *\?*) sep='&' ;; *) sep='?' ;; esac
	echo "$url${sep}options=-csearch_path%3Dscale_$2"
}

# Empties database $2 of backend $1 (DSN $3) for a build, and forgets it was built.
dsn_clear() {
	rm -f "$KEEP/$1_$2.built"
	if [ "$1" = sqlite ]; then
		rm -f "$3" "$3-wal" "$3-shm"
		return
	fi
	psql -q "$url" -c "DROP SCHEMA IF EXISTS scale_$2 CASCADE; CREATE SCHEMA scale_$2" \
		>/dev/null 2>&1
}

# Builds database $2 of backend $1 at DSN $3 (bench-scale build $4 $5 $6)
# unless a finished build of it is kept: prints how long it took, or that it
# was kept.
build_db() {
	if [ -f "$KEEP/$1_$2.built" ]; then
		echo "  kept from $(cat "$KEEP/$1_$2.built"): $(($4 + $5 + $6)) checkpoints, \
$(db_bytes "$3" | awk '{ printf "%.1f MB", $1 / 1e6 }')"
		return
	fi
	dsn_clear "$1" "$2" "$3"
	t0=$(now)
	"$B" build "$3" "$4" "$5" "$6" 2>"$dir/build.log" || { cat "$dir/build.log" >&2; exit 1; }
	t1=$(now)
	date -u +%Y-%m-%dT%H:%MZ >"$KEEP/$1_$2.built"
	echo "$t0 $t1 $(($4 + $5 + $6)) $(db_bytes "$3")" | awk '{
		printf "  built %d checkpoints in %.0f s (%.0f/s), %.1f MB (%.0f bytes a checkpoint)\n",
			$3, $2 - $1, $3 / ($2 - $1), $4 / 1e6, $4 / $3 }'
}

# Bytes the database holds: SQLite's pages in use (WAL included), PostgreSQL's
# tables, indexes and TOAST of the schema.
db_bytes() {
	case "$1" in
	postgres*)
		psql -At "$1" -c "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm')"
		;;
	*)
		python3 -c 'import sqlite3, sys
h = sqlite3.connect(sys.argv[1])
q = lambda p: h.execute("PRAGMA " + p).fetchone()[0]
print((q("page_count") - q("freelist_count")) * q("page_size"))' "$1"
		;;
	esac
}

now() { date +%s.%N; }

# Each command as a whole process (hyperfine -N): "wall1 cpu1 wall2 cpu2 ...", wall
# the median and cpu the mean of user + system, in ms (the client's: a
# PostgreSQL server's own CPU is not in it).  One run of each first: a
# command longer than SCALE_TIMEOUT gives "- -"; one longer than a second
# runs 3 times, not RUNS.
medians() {
	db=$1
	shift
	out=
	for c in "$@"; do
		t0=$(now)
		# shellcheck disable=SC2086 # the command's words
		if ! SMRITI_DB=$db timeout "$TIMEOUT" $c >/dev/null 2>&1; then
			out="$out - -"
			continue
		fi
		runs=$(echo "$(now) $t0 $RUNS" | awk '{ print ($1 - $2 > 1) ? 3 : $3 }')
		if ! SMRITI_DB=$db hyperfine -N --warmup 2 --runs "$runs" --export-json \
			"$dir/h.json" "$c" >/dev/null 2>"$dir/hyperfine.err"; then
			echo "  $c: $(tail -n 1 "$dir/hyperfine.err")" >&2
			out="$out - -"
			continue
		fi
		out="$out $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.2f %.2f" % (r["median"] * 1000, (r["user"] + r["system"]) * 1000))' "$dir/h.json")"
	done
	echo $out
}

# The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
ticks() {
	sed 's/.*) //' /proc/$pid/stat | awk '{ print $12 + $13 }'
}

# N requests (bench-scale http) -> "median_ms server_cpu_us_per_request",
# or "- -" when one failed or took longer than SCALE_HTTP_TIMEOUT seconds.
http_figures() {
	n=$1
	shift
	t0=$(ticks)
	if ! r=$(SCALE_HTTP_TIMEOUT=$HTTP_TIMEOUT "$B" http "$server" "$n" "$@"); then
		echo "- -"
		return
	fi
	t1=$(ticks)
	echo "$r" | awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v n="$n" \
		'{ printf "%s %.1f\n", $1, t * 1e6 / hz / n }'
}

# The HEAD reads: http_figures three times over, the lowest of the three
# medians and the mean of the server's CPU.  One connection's requests one
# after another wait on the wake-up of an idle thread each; on this VM
# (cpuidle governor haltpoll) whole batches ran at 15-17 us a read or at
# 80-95 us, by the second they started in, on either database and with the
# same server.
http_best() {
	all=
	for _ in 1 2 3; do
		all="$all$(http_figures "$@")
"
	done
	printf '%s' "$all" | awk '$1 == "-" { bad = 1 }
		{ if (n == 0 || $1 < best) best = $1; cpu += $2; n++ }
		END { if (bad || n == 0) print "- -"; else printf "%s %.1f\n", best, cpu / n }'
}

start_server() {
	: >"$dir/serve.log"
	SMRITI_DB=$1 "$S" serve --listen 127.0.0.1:0 --quiet 2>>"$dir/serve.log" >/dev/null &
	pid=$!
	i=0
	until grep -q '^listening on ' "$dir/serve.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && { cat "$dir/serve.log" >&2; exit 1; }
		sleep 0.05
	done
	server=$(sed -n 's/^listening on //p' "$dir/serve.log" | head -n 1)
}

# One whole process: "wall_ms cpu_ms" (/usr/bin/time: its user + system),
# and its exit status.
timed() {
	st=0
	/usr/bin/time -f '%e %U %S' -o "$dir/time" "$@" >"$dir/out" || st=$?
	tail -n 1 "$dir/time" | awk '{ printf "%.2f %.2f\n", $1 * 1000, ($2 + $3) * 1000 }'
	return $st
}

# Fork time (the median of 5 whole processes, hyperfine: wall and CPU, ms)
# and growth per fork (bytes): "wall cpu bytes"
forks() {
	before=$(db_bytes "$1")
	if ! SMRITI_DB=$1 timeout "$TIMEOUT" hyperfine -N --runs 1 --parameter-scan k 1 5 \
		--export-json "$dir/h.json" "$C fork fork-src --into forked-$run-{k} -q" \
		>/dev/null 2>&1; then
		echo "- - -"
		return
	fi
	after=$(db_bytes "$1")
	python3 -c 'import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
print("%.2f %.2f" % (statistics.median(x["median"] * 1000 for x in r),
                     statistics.median((x["user"] + x["system"]) * 1000 for x in r)))' \
		"$dir/h.json" | tr '\n' ' '
	echo "$(((after - before) / 5))"
}

# fsck of the whole database, per checkpoint: "wall_us cpu_us"
fsck_us() {
	if ! SMRITI_DB=$1 timed timeout "$TIMEOUT" "$C" fsck --json >"$dir/fsck"; then
		echo "- -"
		return
	fi
	set -- $(cat "$dir/fsck")
	n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoints"])' "$dir/out")
	echo "$1 $2 $n" | awk '{ printf "%.2f %.2f\n", $1 * 1000 / $3, $2 * 1000 / $3 }'
}

# Removes the Spaces forks() and the served forks made in database $1, with
# `gc --prune` (the reflog kept), when the databases are kept for a later
# run: left in place, each run's 55 forks made every checkpoint of fork-src
# a result held by 55 more Spaces, and the next run's search expanded each
# candidate into all of them (19 ms at the baseline after a few runs, 4 ms
# without).
drop_forks() {
	if [ "$KEEP" = "$dir" ]; then
		return 0   # a temporary database: removed with $dir
	fi
	SMRITI_DB=$1 "$C" space list --names | grep -E "^(forked|served)-$run-" |
		while IFS= read -r name; do
			SMRITI_DB=$1 "$C" space delete "$name" --yes >/dev/null
		done
	SMRITI_DB=$1 "$C" gc --prune=now --expire=never >/dev/null
}

# Every figure of one database, each "wall cpu": head log search list
# (a page) listall fsck http_head http_graph http_overview served fork,
# then the fork's growth in bytes.
measure() {
	cli=$(medians "$1" "$C head big --json" "$C log big --limit 20" \
		"$C search latency --limit 20" "$C space list --json --limit 20" \
		"$C space list --json")
	f=$(fsck_us "$1")
	start_server "$1"
	h=$(http_best "$REQS" GET /repos/big/head)
	g=$(http_figures "$GRAPH_REQS" GET '/v4/repos/big/graph?limit=400&changes=1')
	o=$(http_figures "$GRAPH_REQS" GET "/v4/overview?limit=101")
	k=$(http_figures "$FORK_REQS" POST /v4/repos/fork-src/fork "{\"into\": \"served-$run-%ld\"}")
	stop_server
	echo "$cli $f $h $g $o $k $(forks "$1")"
	drop_forks "$1"
}

# A Space "items$2" whose HEAD holds $2 items ($2 - 1 decisions and the
# task the first patch drops), in database $1.
items_space() {
	python3 -c 'import json, sys
k = int(sys.argv[1])
print(json.dumps({"title": "%d items" % k,
                  "decisions": [{"text": "decision %d of the state, with a few words" % i}
                                for i in range(k - 1)],
                  "tasks": [{"text": "task -1 of the run", "status": "open"}]}))' \
		"$2" >"$dir/items.json"
	SMRITI_DB=$1 "$S" space create "items$2" >/dev/null
	SMRITI_DB=$1 "$S" commit "items$2" --from-json "$dir/items.json" -q >/dev/null
}

# PATCHES patches on Space items$2, from number $1 on, each adding one task
# and dropping the one the patch before added (HEAD keeps its size):
# "req_per_s server_cpu_us answer_bytes"
patch_run() {
	t0=$(ticks)
	r=$(SCALE_HTTP_FIRST=$1 "$B" http "$server" "$PATCHES" PATCH "/v4/repos/items$2/head" \
		'{"add": {"tasks": [{"text": "task %ld of the run", "status": "open"}]},
		  "drop": {"tasks": ["task %lp of the run"]}}')
	t1=$(ticks)
	echo "$r" | awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v n="$PATCHES" \
		'{ printf "%s %.0f %s\n", $3, t * 1e6 / hz / n, $4 }'
}

# Growth per patch (bytes), then patch_run's figures whole and minimal:
# "bytes rate cpu answer_bytes rate_min cpu_min"
patches() {
	before=$(db_bytes "$1")
	r=$(patch_run 0 "$2")
	after=$(db_bytes "$1")
	m=$(SCALE_HTTP_HEADER='Prefer: return=minimal' patch_run "$PATCHES" "$2")
	echo "$(((after - before) / PATCHES)) $r $(echo "$m" | cut -d' ' -f1-2)"
}

ratio() {
	echo "$1 $2" | awk '{ if ($1 > 0 && $2 != "-") printf "%.2fx", $2 / $1; else print "-" }'
}

# label, baseline wall, cpu, at scale wall, cpu, goal
row() {
	printf '  %-42s %9s %9s %7s   %9s %9s %7s   %s\n' "$1" "$2" "$4" "$(ratio "$2" "$4")" \
		"$3" "$5" "$(ratio "$3" "$5")" "$6"
}

# $1: the baseline's figures, $2: the same at scale (measure's order)
report() {
	set -- $1 $2
	for name in head log search list listall fsck http graph overview served fork; do
		eval "b_$name=\"\$1 \$2\""
		shift 2
	done
	b_forkb=$1
	shift
	for name in head log search list listall fsck http graph overview served fork; do
		eval "s_$name=\"\$1 \$2\""
		shift 2
	done
	s_forkb=$1
	printf '  %-42s %9s %9s %7s   %9s %9s %7s   %s\n' "" "wall:base" "scale" "ratio" \
		"cpu:base" "scale" "ratio" "goal"
	pair() { row "$LABEL" "$2" "$3" "$4" "$5" "$GOAL"; }
	LABEL="head big --json (ms, whole process)" GOAL="<= 2x" pair x $b_head $s_head
	LABEL="log big --limit 20 (ms)" GOAL="<= 2x" pair x $b_log $s_log
	LABEL="search latency --limit 20 (ms)" GOAL="<= 2x" pair x $b_search $s_search
	LABEL="space list --json --limit 20 (ms)" GOAL="<= 2x" pair x $b_list $s_list
	LABEL="  every Space ($BASE_SPACES vs $SPACES+2)" GOAL="(grows with them)" \
		pair x $b_listall $s_listall
	LABEL="fsck (us per checkpoint)" GOAL="linear (~1x)" pair x $b_fsck $s_fsck
	LABEL="GET /repos/big/head (ms; cpu: server us)" GOAL="<= 2x" pair x $b_http $s_http
	LABEL="UI history page, graph?limit=400 (ditto)" GOAL="<= 2x" pair x $b_graph $s_graph
	LABEL="  UI Spaces page, overview?limit=101 (ditto)" GOAL="(sorts every Space)" \
		pair x $b_overview $s_overview
	LABEL="fork of fork-src (ms; $BASE vs $FORK ckpts)" GOAL="<= 10 ms" pair x $b_fork $s_fork
	LABEL="  through smriti serve (ms; cpu: server us)" GOAL="<= 10 ms" pair x $b_served $s_served
	printf '  %-42s %9s %9s %7s   %s\n' "database growth per fork (bytes)" "$b_forkb" "$s_forkb" \
		"$(ratio "$b_forkb" "$s_forkb")" "<= 4096"
}

run_backend() {
	kind=$1
	echo
	echo "== $kind ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
	bname=base_${BASE}_${BASE_SPACES}
	sname=big_${BIG}_${FORK}_${SPACES}
	base=$(dsn_of "$kind" "$bname")
	big=$(dsn_of "$kind" "$sname")
	items=$(dsn_of "$kind" "items_$$")
	# the items Space's database is built anew each run; the others only
	# without SCALE_DIR
	if [ "$kind" = postgres ]; then
		schemas="scale_items_$$"
		[ "$KEEP" = "$dir" ] && schemas="$schemas scale_$bname scale_$sname"
	fi
	dsn_clear "$kind" "items_$$" "$items"
	build_db "$kind" "$bname" "$base" "$BASE" "$BASE" "$BASE_SPACES" >/dev/null
	build_db "$kind" "$sname" "$big" "$BIG" "$FORK" "$SPACES"
	b=$(measure "$base")
	s=$(measure "$big")
	report "$b" "$s"
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

	for k in 5 300 990; do
		items_space "$items" "$k"
	done
	start_server "$items"
	echo "  PATCH /v4/repos/{id}/head adding one task (and dropping the one added before), $PATCHES"
	echo "  patches each (one connection):"
	printf '  %-10s %12s %10s %7s %12s %8s %13s %12s %8s\n' "HEAD holds" "growth/ckpt" \
		"patches/s" "vs 5" "server us/p" "vs 5" "answer bytes" "minimal p/s" "us/p"
	for k in 5 300 990; do
		set -- $(patches "$items" "$k")
		[ "$k" = 5 ] && rate5=$2 cpu5=$3
		printf '  %-10s %10s B %10s %7s %12s %8s %13s %12s %8s\n' "$k items" "$1" "$2" \
			"$(ratio "$rate5" "$2")" "$3" "$(ratio "$3" "$cpu5")" "$4" "$5" "$6"
	done
	stop_server
	echo "  goals: growth <= 2048 B at 300 and 990 items; rate >= 0.8x at 300, >= 0.6x at 990"
	echo "  (\"vs 5\" of server us/p: the 5-item CPU over this one's, the rate ratio a loaded"
	echo "  machine moves less)"
}

cleanup_scale() {
	stop_server
	for s in $schemas; do
		psql -q "$url" -c "DROP SCHEMA $s CASCADE" >/dev/null 2>&1 || true
	done
	schemas=
}

echo "bench/scale.sh: $BIG checkpoints in one Space, $FORK in another, $SPACES Spaces;" \
	"baseline $BASE"
for kind in $BACKENDS; do
	run_backend "$kind"
	cleanup_scale
done
