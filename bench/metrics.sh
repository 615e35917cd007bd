#!/bin/sh
# metrics.sh -- what GET /metrics's counting costs the hottest read: GET
# /repos/{id}/head req/s on `smriti serve` with metrics on (the default)
# against the same server with --no-metrics, in the same run, under wrk
# (2 threads, 32 keep-alive connections).  Both servers run with --quiet so
# that the access log does not hide the difference, on the same database.
# The runs alternate (off, on, off, on, ...) so that load from elsewhere on
# the machine falls on both; each side's median is reported, and the ratio
# on/off (goal: above 0.95, under 5% slower).  Ends with a `curl /metrics`
# sample of the server that counted.
#
#   bench/metrics.sh                     5 rounds of 5 s per side
#   METRICS_BENCH_SECONDS=10 METRICS_BENCH_ROUNDS=3 bench/metrics.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
SECS=${METRICS_BENCH_SECONDS:-5}
ROUNDS=${METRICS_BENCH_ROUNDS:-5}
command -v wrk >/dev/null || { echo "metrics.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" >/dev/null
S=$PWD/$BUILD/smriti-full
dir=$(mktemp -d /tmp/smriti-metrics-bench-XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT

export SMRITI_DB="$dir/bench.db"
$S space create bench >/dev/null
$S commit bench -m "bench checkpoint" --summary "a Space with one checkpoint" \
	--decision "measure the head read" --assumption "loopback only" >/dev/null
id=$($S space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)

# start NAME ARGS... -> prints the server's URL
start() {
	name=$1
	shift
	$S serve --listen 127.0.0.1:0 --quiet "$@" 2>"$dir/$name.log" >/dev/null &
	pids="$pids $!"
	i=0
	until grep -q '^listening on ' "$dir/$name.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { cat "$dir/$name.log" >&2; exit 1; }
		sleep 0.05
	done
	sed -n 's/^listening on //p' "$dir/$name.log" | head -n 1
}

on=$(start on)
off=$(start off --no-metrics)
for u in "$on" "$off"; do
	curl -sf "$u/repos/$id/head" >/dev/null || { echo "head read failed on $u" >&2; exit 1; }
	wrk -t2 -c32 -d1s "$u/repos/$id/head" >/dev/null      # warm-up
done

rps() {
	wrk -t2 -c32 -d"${SECS}s" "$1/repos/$id/head" | awk '/Requests\/sec:/ { printf "%.0f\n", $2 }'
}

: >"$dir/on.txt"
: >"$dir/off.txt"
r=0
while [ $r -lt "$ROUNDS" ]; do
	rps "$off" >>"$dir/off.txt"
	rps "$on" >>"$dir/on.txt"
	r=$((r + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_on=$(median "$dir/on.txt")
m_off=$(median "$dir/off.txt")
echo "GET /repos/{id}/head, wrk -t2 -c32, $ROUNDS x ${SECS}s per side, alternating"
echo "  metrics off (--no-metrics): $(tr '\n' ' ' <"$dir/off.txt")-> median $m_off req/s"
echo "  metrics on  (default):      $(tr '\n' ' ' <"$dir/on.txt")-> median $m_on req/s"
awk -v a="$m_on" -v b="$m_off" 'BEGIN {
	d = a / b - 1
	printf "  ratio on/off: %.3f (%.1f%% %s)\n", a / b, (d < 0 ? -d : d) * 100, (d < 0 ? "slower" : "faster")
}'
echo
echo "curl $on/metrics (first lines):"
curl -sf "$on/metrics" | grep -v '^smriti_provider_calls_total.*} 0$' | head -n 40
