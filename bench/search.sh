#!/bin/sh
# search.sh -- issue 13's figures on a Space of N checkpoints (default
# 100,000), each beside a baseline measured in the same run: bundle import
# and export in checkpoints/s (baseline: plain SQLite inserts of the same
# rows in one transaction), in-process search median and p90 (baseline: a
# LIKE scan), and the search index's size over the distinct text it holds.
# Rates are in CPU time: the machine is shared.  See bench/search_bench.c.
set -eu
cd "$(dirname "$0")/.."
n=${1:-100000}
make -s -j2 build/bench-search >/dev/null
dir=$(mktemp -d /tmp/smriti-bench-search-XXXXXX)
trap 'rm -rf "$dir"' EXIT
build/bench-search "$dir" "$n"
