#!/bin/sh
# auth.sh -- what authentication costs per request: GET /repos/{id}/head
# under wrk (2 threads, 32 keep-alive connections) on two `smriti serve`
# processes over copies of one SQLite store, in the same run:
#
#   open    no users, no token (loopback, as before teams): the baseline
#   user    a database with users: every request carries a person's token,
#           checked against its stored SHA-256 (one lookup), and the Space
#           read checks that person's role (one more)
#   admin   the same server with SMRITI_TOKEN, sent as the bearer token
#
# Rounds alternate the three (AUTH_BENCH_ROUNDS, default 3, of
# AUTH_BENCH_SECONDS, default 5; each round starts with the next one) and
# the medians are compared, so a busy machine slows every side alike.
# Prints req/s, p99 and the ratios to open, and the person's token against
# SMRITI_TOKEN on the same server (the lookups alone, one process).
set -eu
cd "$(dirname "$0")/.."
BUILD=${SMRITI_BUILD:-build}
SECS=${AUTH_BENCH_SECONDS:-5}
ROUNDS=${AUTH_BENCH_ROUNDS:-3}
command -v wrk >/dev/null || { echo "auth.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
make -s -j2 BUILD="$BUILD" "$BUILD/smriti-full" >/dev/null
S=$PWD/$BUILD/smriti-full
dir=$(mktemp -d /tmp/smriti-auth-bench-XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT

$S --db "$dir/open.db" space create bench >/dev/null
$S --db "$dir/open.db" commit bench -m "bench checkpoint" --summary "one checkpoint" \
	--decision "measure the head read" --task "report req/s and p99" >/dev/null
cp "$dir/open.db" "$dir/users.db"
$S --db "$dir/users.db" user add alice >/dev/null
$S --db "$dir/users.db" grant alice bench reader >/dev/null
token=$($S --db "$dir/users.db" token create alice 2>/dev/null)
admin=bench-admin-token-0123456789
id=$($S --db "$dir/open.db" space list --json | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -n 1)

# serve DB LOG [env...] -> starts a server, prints its URL
serve() {
	db=$1 log=$2
	shift 2
	env "$@" "$S" --db "$db" serve --listen 127.0.0.1:0 --quiet 2>"$log" >/dev/null &
	pids="$pids $!"
	i=0
	until grep -q '^listening on ' "$log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { cat "$log" >&2; exit 1; }
		sleep 0.05
	done
	sed -n 's/^listening on //p' "$log" | head -n 1
}
open_url=$(serve "$dir/open.db" "$dir/open.log")
user_url=$(serve "$dir/users.db" "$dir/users.log" SMRITI_TOKEN=$admin)
curl -sf "$open_url/repos/$id/head" >/dev/null || { echo "open read failed" >&2; exit 1; }
curl -sf -H "Authorization: Bearer $token" "$user_url/repos/$id/head" >/dev/null ||
	{ echo "user read failed" >&2; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$user_url/repos/$id/head")" = 401 ] ||
	{ echo "the users' server answered without a token" >&2; exit 1; }

# run NAME URL [TOKEN] -> appends "req/s p99" to $dir/NAME
run() {
	if [ -n "${3:-}" ]; then
		wrk -t2 -c32 -d"${SECS}s" --latency -H "Authorization: Bearer $3" "$2" >"$dir/wrk.txt"
	else
		wrk -t2 -c32 -d"${SECS}s" --latency "$2" >"$dir/wrk.txt"
	fi
	grep -q 'Non-2xx' "$dir/wrk.txt" && echo "   WARNING: $1 saw non-2xx answers" >&2
	awk '
		/Requests\/sec:/ { rps = $2 }
		/^ +99%/ {
			v = $2; u = v; sub(/[a-z]+$/, "", v); sub(/^[0-9.]+/, "", u)
			if (u == "us") v /= 1000; else if (u == "s") v *= 1000
			p99 = v
		}
		END { printf "%.0f %.3f\n", rps, p99 }' "$dir/wrk.txt" >>"$dir/$1"
}

SECS=1 run warm "$open_url/repos/$id/head"
SECS=1 run warm "$user_url/repos/$id/head" "$token"
r=0
# each round starts with the next of the three, so none is always first after a pause
run_one() {
	case $1 in
	0) run open "$open_url/repos/$id/head" ;;
	1) run user "$user_url/repos/$id/head" "$token" ;;
	2) run admin "$user_url/repos/$id/head" "$admin" ;;
	esac
}
while [ $r -lt "$ROUNDS" ]; do
	run_one $((r % 3))
	run_one $(((r + 1) % 3))
	run_one $(((r + 2) % 3))
	r=$((r + 1))
done

median() { sort -n -k1,1 "$dir/$1" | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
o=$(median open) u=$(median user) a=$(median admin)
echo "GET /repos/{id}/head, SQLite, wrk -t2 -c32, $ROUNDS x ${SECS}s alternating, $(nproc) cores"
printf '   %-34s %10s req/s   p99 %8s ms\n' "no token (no users; baseline)" $o
printf '   %-34s %10s req/s   p99 %8s ms\n' "a person's token (reader)" $u
printf '   %-34s %10s req/s   p99 %8s ms\n' "SMRITI_TOKEN (administrator)" $a
echo "$o $u $a" | awk '{
	printf "   person token: %.1f%% slower than no token (throughput ratio %.3f)\n", (1 - $3 / $1) * 100, $3 / $1
	printf "   admin token:  %.1f%% slower than no token (throughput ratio %.3f)\n", (1 - $5 / $1) * 100, $5 / $1
	printf "   person token against admin token, same server: ratio %.3f\n", $3 / $5 }'
