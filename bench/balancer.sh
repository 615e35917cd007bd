#!/bin/sh
# balancer.sh -- what nginx in front of the servers (docs/scale-out.md, "The
# load balancer: nginx") adds to a HEAD read: SERVERS servers (3) on one
# PostgreSQL, READS reads (500) per path in ROUNDS rounds (3), straight and
# through nginx, by curl over kept-alive connections.  See balancer.mjs.
#   SMRITI_TEST_PG=postgres://... BUILD=build-x bench/balancer.sh
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti-full" >/dev/null
exec node bench/balancer.mjs "$B"
