#!/bin/sh
# group_commit.sh -- acknowledged durable writes per second through
# `smriti serve` on SQLite, 1 writer vs 32 at once: 32 Spaces with a parent
# each (group commit), and 32 writers on one Space without a parent through
# /chat/commit and through PATCH .../head; with 409s, latency, the server's
# CPU per write and a check of HEAD's chain; see group_commit.mjs.
#   BUILD=build-x bench/group_commit.sh  (default build/)
#   SECS=5 (per phase), CLIENT=node (node writers instead of C), PATCH=task,
#   DB=postgres://... (fresh Spaces in that database)
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti-full" "$B/bench-group_commit" >/dev/null
exec node bench/group_commit.mjs "$B"
