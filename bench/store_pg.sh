#!/bin/sh
# store_pg.sh -- PostgreSQL next to SQLite in the same run: checkpoint commits
# per second and HEAD reads per second through the operations layer, with 1
# and with 4 workers (each its own store handle, as the server's workers).
#
#   bench/store_pg.sh              a throwaway cluster (scripts/pg-cluster.sh)
#   SMRITI_BENCH_PG=postgres://... bench/store_pg.sh    an existing database
#                                  (the benchmark writes Spaces into a fresh schema)
#
# BUILD selects the build directory (default build); extra arguments go to
# bench-store (-n COMMITS -r READS -t THREADS; -u: the commits are patches on HEAD).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
make -s -j2 BUILD="$build" "$build/bench-store" >/dev/null
. bench/bench_pg.sh
schema=bench_$(date +%s)_$$
psql -q "$url" -c "CREATE SCHEMA $schema" >/dev/null
case "$url" in *\?*) sep='&' ;; *) sep='?' ;; esac

echo "PostgreSQL $(psql -At "$url" -c 'SHOW server_version') on 127.0.0.1 (TCP), SQLite in $dir"
"$build/bench-store" "$@" "sqlite=$dir/bench.db" \
	"postgres=$url${sep}options=-csearch_path%3D$schema"
psql -q "$url" -c "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1
