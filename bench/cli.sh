#!/bin/sh
# cli.sh -- CLI and store benchmarks of the foundation, each next to a
# baseline measured in the same run on this machine:
#   1. `smriti head --json` as a whole process (median of 200) vs /bin/true
#   2. checkpoint commits/s through the CLI and through the store API vs a
#      plain SQLite insert with the same synchronous=FULL setting
#   3. `smriti log --limit 20` on a Space with 10,000 checkpoints (median of 200)
set -eu
cd "$(dirname "$0")/.."
make -s -j2 build/smriti build/smriti-full build/bench-commit >/dev/null
dir=$(mktemp -d /tmp/smriti-bench-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export SMRITI_DB="$dir/cli.db"
S=$PWD/build/smriti

median() { # hyperfine JSON -> median in ms of command $2
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]; print("%.2f" % (r["median"]*1000))' "$1" "$2"
}

$S space create bench >/dev/null
$S commit bench -m "first" --decision "measure things" >/dev/null
hyperfine -N --warmup 20 --runs 200 --export-json "$dir/head.json" \
	"/bin/true" "$S head bench --json" >/dev/null 2>&1
echo "1. whole-process wall time, median of 200 runs"
echo "   /bin/true                    $(median "$dir/head.json" 0) ms"
echo "   smriti head --json           $(median "$dir/head.json" 1) ms"

n=300
t0=$(date +%s.%N)
i=0
while [ $i -lt $n ]; do
	$S commit bench --replace -m "step $i" --decision "keep going" >/dev/null
	i=$((i + 1))
done
t1=$(date +%s.%N)
echo "2. checkpoint commits per second (synchronous=FULL, WAL)"
python3 -c "import sys; print('   through the CLI (process each) %10.0f' % ($n/($t1-$t0)))"
build/bench-commit compare "$dir" 2000 | sed 's/^/   /'

build/bench-commit seed "$dir/log.db" big 10000
SMRITI_DB="$dir/log.db" hyperfine -N --warmup 20 --runs 200 --export-json "$dir/log.json" \
	"/bin/true" "$S log big --limit 20" "$S log big --limit 20 --json" >/dev/null 2>&1
echo "3. log --limit 20 on a Space with 10,000 checkpoints, median of 200 runs"
echo "   /bin/true                    $(median "$dir/log.json" 0) ms"
echo "   smriti log --limit 20        $(median "$dir/log.json" 1) ms"
echo "   smriti log --limit 20 --json $(median "$dir/log.json" 2) ms"
