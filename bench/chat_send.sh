#!/bin/sh
# chat_send.sh -- the server's own overhead per chat.send (total time in the
# operation minus the provider's HTTP time) at 10, 1,000 and 10,000 prior
# turns, against the fake provider answering at once.  See chat_send.mjs.
#   BUILD=build-x bench/chat_send.sh     (default build/)
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
make -s -j2 BUILD="$B" "$B/smriti-full" "$B/bench-chat_send" >/dev/null
exec node bench/chat_send.mjs "$B"
