#!/bin/sh
# peers.sh -- Smriti beside its peers, same machine, same run: LangGraph.js's
# SQLite and PostgreSQL checkpoint savers and the reference MCP memory
# server.  Prints a table of both sides' figures and their ratios (cold CLI
# read, MCP start to first result, MCP steady calls, durable write and HEAD
# read on SQLite and PostgreSQL, 32 writers at once on PostgreSQL through one
# `smriti serve` vs PostgresSaver with 32 puts at once, peak RSS) with the
# date, the machine and every peer's version.  bench/peers/run.mjs says what
# each row measures.
#
#   bench/peers.sh                 a throwaway cluster (scripts/pg-cluster.sh)
#   SMRITI_BENCH_PG=postgres://... bench/peers.sh    an existing database
#                                  (the benchmark works in fresh schemas and drops them)
#
# The peers are bench-only npm packages (bench/peers/package.json and its
# lock file), installed here on first use, not by the tests' `npm ci`:
# better-sqlite3 compiles from source, which takes minutes (and stays at
# major version 12: 13 crashes on Node 20).  BUILD selects
# the build directory (default build); RUNS, CALLS, WRITES, READS, ROUNDS,
# MANY_WRITERS and MANY_SECS the sizes (see run.mjs); ONLY=pg-writers runs
# the 32 writers on PostgreSQL alone.  Needs hyperfine and GNU time
# (/usr/bin/time).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
for tool in hyperfine /usr/bin/time node npm; do
	command -v "$tool" >/dev/null || { echo "peers: '$tool' is missing (scripts/deps.sh)" >&2; exit 1; }
done

if [ ! -f bench/peers/node_modules/.package-lock.json ] ||
	[ bench/peers/package-lock.json -nt bench/peers/node_modules/.package-lock.json ]; then
	echo "peers: installing the peers (bench/peers/package-lock.json)" >&2
	npm ci --prefix bench/peers --no-audit --no-fund --loglevel=error >&2
fi
make -s -j2 BUILD="$build" "$build/smriti" "$build/smriti-full" "$build/bench-peers" \
	"$build/bench-group_commit" >/dev/null

. bench/bench_pg.sh
node bench/peers/run.mjs "$build" "$dir" "$url"
