#!/bin/sh
# mcp_bench.sh -- MCP figures: time from process start to a completed
# initialize + tools/call (mcp_startup.mjs, median of RUNS) and tool calls
# per second over one stdio session (mcp_calls.mjs).
#   BUILD=build-x RUNS=50 CALLS=5000 WRITES=500 bench/mcp_bench.sh   (defaults shown; build/)
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti" "$B/smriti-full" >/dev/null
node bench/mcp_startup.mjs "$B" "${RUNS:-50}"
exec node bench/mcp_calls.mjs "$B" "${CALLS:-5000}" "${WRITES:-500}"
