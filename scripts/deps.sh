#!/bin/sh
# deps.sh -- installs the Debian packages Smriti builds and tests with, when
# they are missing.  As root it runs apt-get; otherwise it prints the exact
# command to run and fails.  Called by scripts/run and scripts/test.
set -eu

PACKAGES="gcc make pkg-config libsqlite3-dev libjansson-dev nettle-dev libmicrohttpd-dev
libcurl4-openssl-dev libpq-dev sqlite3 postgresql wrk hyperfine time curl ca-certificates"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "deps: installing$missing" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	else
		echo "deps: missing Debian packages; run:" >&2
		echo "  sudo apt-get install -y$missing" >&2
		exit 1
	fi
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "deps: the tests need Node.js >= 20 and npm (Debian: apt-get install nodejs npm," >&2
	echo "  or NodeSource's nodejs 20 package)" >&2
	exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
	echo "deps: Node.js $(node --version) is too old for the tests; need >= 20" >&2
	exit 1
fi
