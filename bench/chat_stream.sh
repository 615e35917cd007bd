#!/bin/sh
# chat_stream.sh -- the streaming chat server under load: STREAMS streaming
# sends at once (default 500) against a fake provider trickling each reply
# over TRICKLE_MS (5000), with an agent's writes and reads measured during
# the load against the same requests with none, in ROUNDS rounds (3) whose
# samples are pooled.  LOAD_NICE=19 runs the fake provider and the stream
# clients (stand-ins for other machines) at nice 19; report figures both
# ways.  See chat_stream.mjs.
#   BUILD=build-x [ROUNDS=3] [LOAD_NICE=0] bench/chat_stream.sh [STREAMS [TRICKLE_MS [DELTAS]]]
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti-full" >/dev/null
exec node bench/chat_stream.mjs "$B" "$@"
