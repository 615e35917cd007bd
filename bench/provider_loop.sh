#!/bin/sh
# provider_loop.sh -- the provider loop alone: STREAMS streamed replies at
# once (default 500) against the fake provider, each trickled over
# TRICKLE_MS (5000) in DELTAS deltas (50), after a single stream as the
# baseline.  Prints completions, wall and CPU time, the delta latency from
# the fake's write to our callback (median, p99) and the resident set.
# See provider_loop_bench.c.
#   bench/provider_loop.sh [STREAMS [TRICKLE_MS [DELTAS]]]
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/bench-provider_loop" >/dev/null
out=$(mktemp /tmp/smriti-fake-port-XXXXXX)
node tests/fake-provider/server.mjs --port 0 >"$out" &
fake=$!
trap 'kill $fake 2>/dev/null; wait $fake 2>/dev/null; rm -f "$out"' EXIT
while ! grep -q LISTENING "$out"; do sleep 0.05; done
port=$(sed -n 's/^LISTENING //p' "$out")
"$B/bench-provider_loop" "$port" "$@"
