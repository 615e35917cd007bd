#!/bin/sh
# http_head.sh -- throughput of the agent's hottest read, GET /repos/{id}/head,
# on `smriti serve` with a SQLite store, under wrk (2 threads, 32 keep-alive
# connections, 10 s).  The baseline in the same run is GET /healthz on the
# same server: a prebuilt response, so it measures the HTTP layer alone and
# the ratio shows what the store read and JSON rendering cost.  {id} is the
# Space's id; the same read by name (one more SQLite lookup) is shown too.  The
# three run in turn, ROUNDS times (a shared machine's load moves between runs;
# each round's ratio is against the baseline just before it).  Prints
# requests/s, p99 latency and the server's CPU time per request of each, each
# round's ratios (throughput; CPU per request, which a loaded machine moves
# less) and the median throughput ratio, and the server's peak RSS (VmHWM).
#
#   bench/http_head.sh                 access log on (to a temp file)
#   HTTP_BENCH_SECONDS=30 HTTP_BENCH_ROUNDS=5 bench/http_head.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
SECS=${HTTP_BENCH_SECONDS:-10}
ROUNDS=${HTTP_BENCH_ROUNDS:-3}
command -v wrk >/dev/null || { echo "http_head.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" >/dev/null
S=$PWD/$BUILD/smriti-full
dir=$(mktemp -d /tmp/smriti-http-bench-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

export SMRITI_DB="$dir/bench.db"
$S space create bench >/dev/null
$S commit bench -m "bench checkpoint" --summary "a Space with one checkpoint" \
	--decision "measure the head read" --assumption "loopback only" \
	--task "report req/s and p99" >/dev/null

$S serve --listen 127.0.0.1:0 2>>"$dir/serve.log" >/dev/null &
pid=$!
i=0
until grep -q '^listening on ' "$dir/serve.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$dir/serve.log" >&2; exit 1; }
	sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$dir/serve.log" | head -n 1)

id=$($S space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)
curl -sf "$url/repos/$id/head" >/dev/null || { echo "head read failed" >&2; exit 1; }

# run URL -> "req/s p99" (p99 in ms)
# The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
ticks() {
	sed 's/.*) //' /proc/$pid/stat | awk '{ print $12 + $13 }'
}
hz=$(getconf CLK_TCK)

# run URL -> "req/s p99 cpu" (p99 in ms; cpu: the server's CPU time per
# request in us, which a loaded machine changes less than the rate)
run() {
	: >"$dir/serve.log"      # the access log (appended): keep it small
	t0=$(ticks)
	wrk -t2 -c32 -d"${SECS}s" --latency "$1" >"$dir/wrk.txt"
	t1=$(ticks)
	awk -v ticks=$((t1 - t0)) -v hz="$hz" '
		/requests in/ { n = $1 }
		/Requests\/sec:/ { rps = $2 }
		/^ +99%/ {
			v = $2; u = v; sub(/[a-z]+$/, "", v); sub(/^[0-9.]+/, "", u)
			if (u == "us") v /= 1000; else if (u == "s") v *= 1000
			p99 = v
		}
		END { printf "%.0f %.3f %.1f\n", rps, p99, n ? ticks * 1e6 / hz / n : 0 }' "$dir/wrk.txt"
}

run "$url/healthz" >/dev/null            # warm-up: threads, store handles
echo "GET /repos/{id}/head on smriti serve (SQLite), wrk -t2 -c32 -d${SECS}s, $(nproc) cores, $ROUNDS rounds"
errors=0
ratios=
r=1
while [ $r -le "$ROUNDS" ]; do
	base=$(run "$url/healthz")
	head=$(run "$url/repos/$id/head")
	errors=$((errors + $(grep -c 'Non-2xx' "$dir/wrk.txt" || true)))
	byname=$(run "$url/repos/bench/head")
	errors=$((errors + $(grep -c 'Non-2xx' "$dir/wrk.txt" || true)))
	ratio=$(echo "$base $head" | awk '{ printf "%.2f", $4 / $1 }')
	ratios="$ratios $ratio"
	echo "round $r (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	printf '   %-26s %10s req/s   p99 %8s ms   server CPU %6s us/request\n' \
		"GET /healthz (baseline)" ${base}
	printf '   %-26s %10s req/s   p99 %8s ms   server CPU %6s us/request\n' \
		"GET /repos/{id}/head" ${head}
	printf '   %-26s %10s req/s   p99 %8s ms   server CPU %6s us/request\n' \
		"GET /repos/{name}/head" ${byname}
	echo "   head / healthz throughput ratio: $ratio;" \
		"CPU per request, healthz / head: $(echo "$base $head" | awk '{ printf "%.2f", $3 / $6 }')"
	r=$((r + 1))
done
rss=$(awk '/VmHWM/ { print $2 " " $3 }' /proc/$pid/status)
echo "$ratios" | tr ' ' '\n' | sed '/^$/d' | sort -n |
	awk '{ v[NR] = $1 } END { printf "head / healthz throughput ratio, median of %d rounds: %.2f\n", NR, v[int((NR + 1) / 2)] }'
echo "server peak RSS (VmHWM): $rss"
[ "$errors" = 0 ] || echo "WARNING: wrk saw non-2xx answers"
