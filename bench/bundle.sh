#!/bin/sh
# bundle.sh -- issue 13's export and import figures alone: a bundle of N
# checkpoints (default 100,000) imported from its text (every hash
# recomputed, every item checked, one transaction, the search index
# written) and exported back (compared with what was imported), in
# checkpoints/s of CPU time, beside a baseline measured in the same run:
# the same rows inserted into a plain SQLite table in one transaction.
# bench/search.sh gives the same figures and the search ones after them.
set -eu
cd "$(dirname "$0")/.."
n=${1:-100000}
make -s -j2 build/bench-search >/dev/null
dir=$(mktemp -d /tmp/smriti-bench-bundle-XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
build/bench-search "$dir" "$n" --bundle-only
