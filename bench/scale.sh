#!/bin/sh
# scale.sh -- issue 32's goals at scale, on SQLite and PostgreSQL, each
# figure beside the same one measured in the same run on a baseline
# database of 1,000 checkpoints, with the ratio:
#
#   1. a database of BIG checkpoints in one Space ("big"; default
#      1,000,000), a Space of FORK checkpoints ("fork-src"; 100,000) and
#      SPACES Spaces of one checkpoint each (10,000), written through the
#      store's API in big transactions (bench-scale build, bench/scale_bench.c);
#      the baseline: 1,000 in "big", 1,000 in "fork-src", BASE_SPACES Spaces;
#   2. whole-process times (hyperfine, median of RUNS) of `head big --json`,
#      `log big --limit 20`, `search latency --limit 20` (a word in every
#      10th checkpoint: the newest 20 of tens of thousands of matches) and
#      `space list --json`; `fsck` of everything, in microseconds per
#      checkpoint (linear: the ratio is near 1);
#   3. over HTTP (`smriti serve`, bench-scale http: one kept-alive
#      connection, REQS requests, median latency): GET /repos/big/head, and
#      the web UI's history first page, GET /v4/repos/big/graph?limit=400&changes=1
#      (src/ui/history.js);
#   4. fork of "fork-src" (`smriti fork`, whole process, median of 5) and
#      the database's growth per fork;
#   5. on Spaces whose HEAD holds 5, 300 and 990 decisions: the database's
#      growth per checkpoint that adds one task, and the rate of
#      PATCH /v4/repos/{id}/head doing so (PATCHES each, one connection),
#      with its ratio to the 5-item rate; and the same patches asking for
#      the minimal answer (Prefer: return=minimal).
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
# Environment: SCALE_CHECKPOINTS, SCALE_FORK, SCALE_SPACES, SCALE_BASELINE
# (1000), SCALE_BASE_SPACES (10), SCALE_RUNS (20), SCALE_REQS (200),
# SCALE_PATCHES (200), SCALE_BACKENDS ("sqlite postgres"); PostgreSQL is
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
REQS=${SCALE_REQS:-200}
PATCHES=${SCALE_PATCHES:-200}
BACKENDS=${SCALE_BACKENDS:-sqlite postgres}
command -v hyperfine >/dev/null || { echo "scale.sh needs hyperfine" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" "$BUILD/bench-scale" >/dev/null
S=$PWD/$BUILD/smriti-full
B=$PWD/$BUILD/bench-scale

case " $BACKENDS " in
*" postgres "*)
	SMRITI_BENCH_PG=${SMRITI_BENCH_PG:-${SMRITI_TEST_PG:-}}
	. bench/bench_pg.sh          # $dir, $url, and cleanup (the cluster, $dir)
	trap 'cleanup_scale; cleanup' EXIT INT TERM
	;;
*)
	dir=$(mktemp -d /tmp/smriti-bench-scale-XXXXXX)
	trap 'cleanup_scale; rm -rf "$dir"' EXIT INT TERM
	url=
	;;
esac
pid=
schemas=

stop_server() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	pid=
}

# The DSN of database $2 ("big", "base", "items") of backend $1; makes a schema for PostgreSQL.
dsn_of() {
	if [ "$1" = sqlite ]; then
		echo "$dir/$2.db"
		return
	fi
	schema=scale_$2_$$
	psql -q "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null 2>&1
	schemas="$schemas $schema"
	case "$url" in *\?*) sep='&' ;; *) sep='?' ;; esac
	echo "$url${sep}options=-csearch_path%3D$schema"
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

# Median whole-process ms of each command, hyperfine -N: "CMD1|CMD2|..." -> "ms1 ms2 ..."
medians() {
	db=$1
	shift
	SMRITI_DB=$db hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$dir/h.json" "$@" \
		>/dev/null 2>&1
	python3 -c 'import json, sys
print(" ".join("%.2f" % (r["median"] * 1000) for r in json.load(open(sys.argv[1]))["results"]))' \
		"$dir/h.json"
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

# fork time (ms, median of 5 whole processes) and growth per fork (bytes): "ms bytes"
forks() {
	before=$(db_bytes "$1")
	: >"$dir/forks"
	for k in 1 2 3 4 5; do
		t0=$(now)
		SMRITI_DB=$1 "$S" fork fork-src --into "forked-$k" -q >/dev/null
		t1=$(now)
		echo "$t0 $t1" | awk '{ printf "%.2f\n", ($2 - $1) * 1000 }' >>"$dir/forks"
	done
	after=$(db_bytes "$1")
	echo "$(sort -n "$dir/forks" | sed -n 3p) $(((after - before) / 5))"
}

# fsck of the whole database: microseconds per checkpoint
fsck_us() {
	t0=$(now)
	SMRITI_DB=$1 "$S" fsck --json >"$dir/fsck.json"
	t1=$(now)
	n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoints"])' "$dir/fsck.json")
	echo "$t0 $t1 $n" | awk '{ printf "%.2f\n", ($2 - $1) * 1e6 / $3 }'
}

# Every figure of one database: "head log search list fsck http_head http_graph fork_ms fork_bytes"
measure() {
	cli=$(medians "$1" "$S head big --json" "$S log big --limit 20" \
		"$S search latency --limit 20" "$S space list --json")
	f=$(fsck_us "$1")
	start_server "$1"
	h=$("$B" http "$server" "$REQS" GET /repos/big/head | cut -d' ' -f1)
	g=$("$B" http "$server" "$((REQS / 4 + 1))" GET '/v4/repos/big/graph?limit=400&changes=1' |
		cut -d' ' -f1)
	stop_server
	echo "$cli $f $h $g $(forks "$1")"
}

# A Space "items$2" whose HEAD holds $2 decisions, in database $1.
items_space() {
	python3 -c 'import json, sys
k = int(sys.argv[1])
print(json.dumps({"title": "%d items" % k, "decisions": [{"text": "decision %d of the state, with a few words" % i} for i in range(k)]}))' \
		"$2" >"$dir/items.json"
	SMRITI_DB=$1 "$S" space create "items$2" >/dev/null
	SMRITI_DB=$1 "$S" commit "items$2" --from-json "$dir/items.json" -q >/dev/null
}

# Growth per patch (bytes), patch rate (req/s) and with the minimal answer: "bytes rate rate_min answer_bytes"
patches() {
	body='{"add": {"tasks": [{"text": "task %ld added by one patch", "status": "open"}]}}'
	before=$(db_bytes "$1")
	r=$("$B" http "$server" "$PATCHES" PATCH "/v4/repos/items$2/head" "$body")
	after=$(db_bytes "$1")
	m=$(SCALE_HTTP_HEADER='Prefer: return=minimal' "$B" http "$server" "$PATCHES" PATCH \
		"/v4/repos/items$2/head" \
		'{"add": {"tasks": [{"text": "task %ld added minimally", "status": "open"}]}}')
	echo "$(((after - before) / PATCHES)) $(echo "$r" | cut -d' ' -f3) $(echo "$m" | cut -d' ' -f3) $(echo "$r" | cut -d' ' -f4)"
}

row() { # label baseline value unit goal
	printf '  %-44s %12s %12s %8s   %s\n' "$1" "$2" "$3" \
		"$(echo "$2 $3" | awk '{ if ($1 > 0) printf "%.2fx", $2 / $1; else print "-" }')" "$4"
}

report() {
	set -- $1 $2
	# $1..$11 baseline, $12..$22 at scale
	b_head=$1 b_log=$2 b_search=$3 b_list=$4 b_fsck=$5 b_http=$6 b_graph=$7 b_fork=$8 b_forkb=$9
	shift 9
	s_head=$1 s_log=$2 s_search=$3 s_list=$4 s_fsck=$5 s_http=$6 s_graph=$7 s_fork=$8 s_forkb=$9
	printf '  %-44s %12s %12s %8s   %s\n' "" "$BASE ckpts" "$BIG ckpts" "ratio" "goal"
	row "head big --json (ms, whole process)" "$b_head" "$s_head" "<= 2x"
	row "log big --limit 20 (ms)" "$b_log" "$s_log" "<= 2x"
	row "search latency --limit 20 (ms)" "$b_search" "$s_search" "<= 2x"
	row "space list --json (ms; $BASE_SPACES vs $SPACES Spaces)" "$b_list" "$s_list" "<= 2x"
	row "fsck (us per checkpoint)" "$b_fsck" "$s_fsck" "linear (~1x)"
	row "GET /repos/big/head (ms, median)" "$b_http" "$s_http" "<= 2x"
	row "UI history first page, graph?limit=400 (ms)" "$b_graph" "$s_graph" "<= 2x"
	row "fork of fork-src (ms; $BASE vs $FORK ckpts)" "$b_fork" "$s_fork" "<= 10 ms"
	row "database growth per fork (bytes)" "$b_forkb" "$s_forkb" "<= 4096"
}

run_backend() {
	kind=$1
	echo
	echo "== $kind ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
	base=$(dsn_of "$kind" base)
	big=$(dsn_of "$kind" big)
	items=$(dsn_of "$kind" items)
	"$B" build "$base" "$BASE" "$BASE" "$BASE_SPACES" 2>"$dir/build.log"
	t0=$(now)
	"$B" build "$big" "$BIG" "$FORK" "$SPACES" 2>"$dir/build.log"
	t1=$(now)
	echo "$t0 $t1 $((BIG + FORK + SPACES)) $(db_bytes "$big")" | awk '{
		printf "  built %d checkpoints in %.0f s (%.0f/s), %.1f MB (%.0f bytes a checkpoint)\n",
			$3, $2 - $1, $3 / ($2 - $1), $4 / 1e6, $4 / $3 }'
	b=$(measure "$base")
	s=$(measure "$big")
	report "$b" "$s"
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

	for k in 5 300 990; do
		items_space "$items" "$k"
	done
	start_server "$items"
	echo "  one task added by PATCH /v4/repos/{id}/head, $PATCHES patches each (one connection):"
	printf '  %-12s %14s %14s %10s %18s %14s\n' "HEAD holds" "growth/ckpt" "patches/s" \
		"vs 5" "minimal: patches/s" "answer bytes"
	for k in 5 300 990; do
		set -- $(patches "$items" "$k")
		[ "$k" = 5 ] && rate5=$2
		printf '  %-12s %12s B %14s %10s %18s %14s\n' "$k items" "$1" "$2" \
			"$(echo "$2 $rate5" | awk '{ printf "%.2fx", $1 / $2 }')" "$3" "$4"
	done
	stop_server
	echo "  goals: growth <= 2048 B at 300 and 990 items; rate >= 0.8x at 300, >= 0.6x at 990"
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
