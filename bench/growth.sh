#!/bin/sh
# growth.sh -- database growth per Checkpoint (issue 32's "at most 2 KB"),
# SQLite and PostgreSQL in the same run: a Space gets a state of N decisions
# (5, 300, 1000; about 75 bytes each), then 100 `smriti commit SPACE --task`
# that each add one task; the figure is the growth over those 100, divided
# by 100 (STEPS=N: another number).  SQLite: the file after a WAL checkpoint.  PostgreSQL: the sum of
# pg_total_relation_size of the tables, in a fresh database each time,
# once as measured first (no VACUUM: one-time costs such as the free space
# and visibility maps a table gets on its first vacuum, and the flush of
# the first state's search rows out of the GIN pending list, fall inside
# the 100) and once with VACUUM ANALYZE before the 100 (what a Checkpoint
# itself adds).  With -t, the growth of each table (with its indexes) too.
#
#   bench/growth.sh [-t] [BIN...]    BIN: smriti-full binaries to compare
#                                    (default build/smriti-full)
#   SMRITI_BENCH_PG=postgres://... bench/growth.sh   an existing server
#                                    (it creates and drops databases there)
set -eu
cd "$(dirname "$0")/.."
tables=0
if [ "${1:-}" = -t ]; then
	tables=1
	shift
fi
[ $# -gt 0 ] || set -- build/smriti-full
. bench/bench_pg.sh
base=${url%/*}
steps=${STEPS:-100}

# SQL on database $1
q() { psql -qAt "$1" -c "$2"; }
pg_total() {
	q "$1" "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r'"
}
pg_tables() {
	q "$1" "SELECT relname, pg_total_relation_size(oid) FROM pg_class
		WHERE relkind = 'r' AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) ORDER BY 1"
}
sqlite_size() {
	sqlite3 "$1" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
	stat -c %s "$1"
}
state() {
	python3 -c 'import json, sys
n = int(sys.argv[1])
print(json.dumps({"title": "a large state", "decisions": ["A decision about one part of the"
	" system, written out at the length people write them: number %d of big" % i
	for i in range(n)]}))' "$1" >"$dir/state$1.json"
}

# growth BIN N sqlite|pg|pg-vacuum: bytes a Checkpoint
growth() {
	bin=$1 n=$2 how=$3
	if [ "$how" = sqlite ]; then
		db=$dir/g.db
		rm -f "$db" "$db-wal" "$db-shm"
	else
		name=growth_$$_$n
		q "$url" "DROP DATABASE IF EXISTS $name" >/dev/null 2>&1
		q "$url" "CREATE DATABASE $name" >/dev/null
		db=$base/$name
	fi
	SMRITI_DB=$db "$bin" space create s >/dev/null
	SMRITI_DB=$db "$bin" commit s --from-json "$dir/state$n.json" -q >/dev/null
	[ "$how" = pg-vacuum ] && q "$db" "VACUUM ANALYZE" >/dev/null
	if [ "$how" = sqlite ]; then b0=$(sqlite_size "$db"); else b0=$(pg_total "$db"); fi
	[ "$tables" = 1 ] && [ "$how" != sqlite ] && pg_tables "$db" >"$dir/t0"
	i=1
	while [ $i -le $steps ]; do
		SMRITI_DB=$db "$bin" commit s --task "task $i of big" -q >/dev/null
		i=$((i + 1))
	done
	if [ "$how" = sqlite ]; then b1=$(sqlite_size "$db"); else b1=$(pg_total "$db"); fi
	if [ "$tables" = 1 ] && [ "$how" != sqlite ]; then
		pg_tables "$db" | join -t '|' "$dir/t0" - |
			awk -F'|' '$3 != $2 { printf "    %-16s %6d B\n", $1, ($3 - $2) / '$steps' }' >&2
	fi
	[ "$how" = sqlite ] || q "$url" "DROP DATABASE $name" >/dev/null
	echo $(((b1 - b0) / steps))
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-32s %-10s %8s %8s %8s\n' binary backend 5 300 1000
for n in 5 300 1000; do state $n; done
for bin in "$@"; do
	for how in sqlite pg pg-vacuum; do
		printf '%-32s %-10s' "$bin" "$how"
		for n in 5 300 1000; do printf ' %8s' "$(growth "$bin" $n $how)"; done
		echo
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
