#!/bin/sh
# metrics.sh -- what GET /metrics's counting costs the hottest read: GET
# /repos/{id}/head req/s on `smriti serve` with metrics on (the default)
# against the same server with --no-metrics, in the same run, under wrk
# (2 threads, 32 keep-alive connections).  Both servers run with --quiet so
# that the access log does not hide the difference, on the same database.
# The runs alternate (off on, on off, off on, ...) so that load from
# elsewhere on the machine falls on both alike; each side's median is reported, and the ratio
# on/off (goal: above 0.95, under 5% slower), and the server's CPU time per
# request on each side (from /proc/PID/stat over the runs), which other load
# on a shared machine disturbs far less than req/s.  Ends with a
# `curl /metrics` sample of the server that counted.  METRICS_BENCH_OFF_ARGS=""
# makes both sides count: an A/A run that shows the noise of the machine.
# Then bench-metrics (bench/metrics_bench.c) times the counting call alone,
# in nanoseconds, against the clock read it needs, and callgrind counts the
# server's instructions per read on each side (valgrind), which no load
# from elsewhere can move.
#
#   bench/metrics.sh                     10 rounds of 3 s per side
#   METRICS_BENCH_SECONDS=10 METRICS_BENCH_ROUNDS=3 bench/metrics.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
SECS=${METRICS_BENCH_SECONDS:-3}
ROUNDS=${METRICS_BENCH_ROUNDS:-10}
command -v wrk >/dev/null || { echo "metrics.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" "$BUILD/bench-metrics" >/dev/null
S=$PWD/$BUILD/smriti-full
dir=$(mktemp -d /tmp/smriti-metrics-bench-XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT
trap "exit 1" HUP INT TERM PIPE

export SMRITI_DB="$dir/bench.db"
$S space create bench >/dev/null
$S commit bench -m "bench checkpoint" --summary "a Space with one checkpoint" \
	--decision "measure the head read" --assumption "loopback only" >/dev/null
id=$($S space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)

# start NAME ARGS... -> the server's pid in $dir/NAME.pid, its URL in $dir/NAME.url
start() {
	name=$1
	shift
	$S serve --listen 127.0.0.1:0 --quiet "$@" 2>"$dir/$name.log" >/dev/null &
	echo $! >"$dir/$name.pid"
	pids="$pids $!"
	i=0
	until grep -q '^listening on ' "$dir/$name.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { cat "$dir/$name.log" >&2; exit 1; }
		sleep 0.05
	done
	sed -n 's/^listening on //p' "$dir/$name.log" | head -n 1 >"$dir/$name.url"
}

start on
start off ${METRICS_BENCH_OFF_ARGS---no-metrics}
on=$(cat "$dir/on.url")
off=$(cat "$dir/off.url")
for u in "$on" "$off"; do
	curl -sf "$u/repos/$id/head" >/dev/null || { echo "head read failed on $u" >&2; exit 1; }
	wrk -t2 -c32 -d1s "$u/repos/$id/head" >/dev/null      # warm-up
done

# CPU ticks (user + system) the server NAME has used so far
ticks() { awk '{ print $14 + $15 }' "/proc/$(cat "$dir/$1.pid")/stat"; }

# run NAME: one wrk run on that server; appends its req/s to NAME.txt and
# "requests ticks" to NAME.cpu (the server's CPU time over the run)
run() {
	t0=$(ticks "$1")
	wrk -t2 -c32 -d"${SECS}s" "$(cat "$dir/$1.url")/repos/$id/head" >"$dir/wrk.txt"
	t1=$(ticks "$1")
	awk '/Requests\/sec:/ { printf "%.0f\n", $2 }' "$dir/wrk.txt" >>"$dir/$1.txt"
	awk -v t="$((t1 - t0))" '/requests in/ { print $1, t }' "$dir/wrk.txt" >>"$dir/$1.cpu"
}

: >"$dir/on.txt"
: >"$dir/off.txt"
: >"$dir/on.cpu"
: >"$dir/off.cpu"
r=0
while [ $r -lt "$ROUNDS" ]; do
	# which side goes first alternates too: off on, on off, off on, ...
	if [ $((r % 2)) -eq 0 ]; then
		run off
		run on
	else
		run on
		run off
	fi
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
# the median of the rounds' own ratios: each pair ran back to back, under
# much the same load from elsewhere
paste "$dir/on.txt" "$dir/off.txt" | awk '{ print $1 / $2 }' >"$dir/ratios.txt"
echo "  per-round ratios on/off: $(awk '{ printf "%.3f ", $1 }' "$dir/ratios.txt")-> median $(median "$dir/ratios.txt")"

# server CPU microseconds per request over all rounds: what counting costs, far
# less sensitive than req/s to other load on the machine
hz=$(getconf CLK_TCK)
cpu() { awk -v hz="$hz" '{ n += $1; t += $2 } END { printf "%.2f\n", t / hz * 1e6 / n }' "$dir/$1.cpu"; }
c_on=$(cpu on)
c_off=$(cpu off)
echo "  server CPU per request: off $c_off us, on $c_on us, ratio on/off $(awk -v a="$c_on" -v b="$c_off" 'BEGIN { printf "%.3f", a / b }')"
echo
"$BUILD/bench-metrics" 5000000 | tee "$dir/micro.txt"
awk -v cpu="$c_off" '/2 threads/ { for (i = 1; i <= NF; i++) if ($i == "adds") ns = $(i + 1) }
	END { printf "  = %.2f%% of the CPU time of one head read (%s us)\n", ns / 10 / cpu, cpu }' "$dir/micro.txt"

# instructions per request under callgrind: counted, not timed, so other
# load on the machine does not move them.  Each side is a fresh server
# (one event thread) under valgrind; after 2000 warm-up reads the counters
# are zeroed, 2000 more reads run on one keep-alive connection, and the
# server's instructions are dumped.  The counting functions' own share is
# read from the dump of the side that counts.
instructions() {
	name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$dir/$name.cg" "$S" serve \
		--listen 127.0.0.1:0 --quiet --threads 1 --workers 1 "$@" 2>"$dir/$name.vg.log" &
	vg=$!
	pids="$pids $vg"
	i=0
	until grep -q '^listening on ' "$dir/$name.vg.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && { cat "$dir/$name.vg.log" >&2; exit 1; }
		sleep 0.1
	done
	u=$(sed -n 's/^listening on //p' "$dir/$name.vg.log" | head -n 1)
	awk -v u="$u/repos/$id/head" 'BEGIN { for (i = 0; i < 2000; i++) printf "url = \"%s\"\noutput = \"/dev/null\"\n", u }' >"$dir/$name.curl"
	curl -s -K "$dir/$name.curl"
	callgrind_control -z "$vg" >/dev/null 2>&1
	curl -s -K "$dir/$name.curl"
	callgrind_control -d "$vg" >/dev/null 2>&1
	kill "$vg"
	wait "$vg" 2>/dev/null || true
	sed -n 's/^summary: //p' "$dir/$name.cg".* | head -n 1
}
if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
	ir_on=$(instructions on)
	ir_off=$(instructions off --no-metrics)
	own=$(callgrind_annotate --auto=no --inclusive=no --threshold=100 "$dir/on.cg".* 2>/dev/null |
		awk '/metrics\.c:(metrics_hist_observe|http_metrics_count)/ { gsub(",", "", $1); n += $1 } END { print n + 0 }')
	awk -v a="$ir_on" -v b="$ir_off" -v own="$own" 'BEGIN {
		printf "  instructions per head read (callgrind, 2000 reads): off %.0f, on %.0f, ratio on/off %.4f\n", b / 2000, a / 2000, a / b
		printf "  of which the counting functions: %.0f per read (%.3f%%)\n", own / 2000, own / a * 100
	}'
else
	echo "  (valgrind not installed: no instruction counts)"
fi

echo
echo "curl $on/metrics (first lines):"
curl -sf "$on/metrics" | grep -v '^smriti_provider_calls_total.*} 0$' | head -n 40
