# bench_pg.sh -- sourced by the benchmarks that need PostgreSQL (from the
# repository's root): makes the temporary directory $dir, sets $url to
# $SMRITI_BENCH_PG or to a throwaway cluster in $dir/pg
# (scripts/pg-cluster.sh), and stops the cluster and removes $dir on exit.
dir=$(mktemp -d /tmp/smriti-bench-pg-XXXXXX)
chmod 755 "$dir"
started=0
cleanup() {
	if [ "$started" = 1 ]; then
		scripts/pg-cluster.sh stop "$dir/pg" >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

if [ -n "${SMRITI_BENCH_PG:-}" ]; then
	url=$SMRITI_BENCH_PG
else
	url=$(scripts/pg-cluster.sh start "$dir/pg")
	started=1
fi
