#!/bin/sh
# group_commit.sh -- acknowledged durable writes per second through
# `smriti serve` on SQLite, 1 writer vs 32 at once (group commit); see
# group_commit.mjs.   BUILD=build-x bench/group_commit.sh  (default build/)
# CLIENT=c: the writers in C (bench/group_commit_bench.c) instead of node.
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti-full" "$B/bench-group_commit" >/dev/null
exec node bench/group_commit.mjs "$B"
