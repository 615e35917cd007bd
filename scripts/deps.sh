#!/bin/sh
# deps.sh -- installs the Debian packages Smriti needs for one purpose, when
# they are missing.  As root it runs apt-get; otherwise it prints the exact
# command to run and fails.
#
#   scripts/deps.sh run     build and run Smriti (scripts/run)
#   scripts/deps.sh test    that, and what the tests use (scripts/test; the default)
#   scripts/deps.sh bench   that, and what the benchmarks use (bench/)
#
# Each list is one need: put a new package in the list of what needs it.
set -eu

# Compiling smriti and smriti-full (debian/control's Build-Depends name the same).
BUILD_PACKAGES="gcc make pkg-config libsqlite3-dev libjansson-dev nettle-dev
libmicrohttpd-dev libcurl4-openssl-dev libpq-dev zlib1g-dev libbrotli-dev libmimalloc-dev"

# Running them: the certificates behind the providers' HTTPS, and git for
# `smriti export --git` (git fast-import builds the repository).
RUN_PACKAGES="ca-certificates git"

# The tests: a PostgreSQL server for the PostgreSQL backend, the sqlite3 and
# jq tools they drive, the man page and shell completion checks, and
# building, linting and installing the Debian package (tests/package), the
# browser tests (Debian's chromium, with a font for its screenshots), the
# fuzz targets (clang with libFuzzer and the sanitizers' runtimes), and nginx
# in front of two servers with a throwaway certificate (tests/js/nginx).
TEST_PACKAGES="postgresql sqlite3 jq man-db bash-completion zsh scdoc nginx openssl
build-essential dpkg-dev debhelper lintian systemd chromium fonts-dejavu-core
clang libclang-rt-dev"

# The benchmarks (bench/): load generators, GNU time for peak memory, and a
# PostgreSQL server for the PostgreSQL rows.
BENCH_PACKAGES="wrk hyperfine curl time postgresql valgrind"

purpose=${1:-test}
case $purpose in
run) packages="$BUILD_PACKAGES $RUN_PACKAGES" ;;
test) packages="$BUILD_PACKAGES $RUN_PACKAGES $TEST_PACKAGES" ;;
bench) packages="$BUILD_PACKAGES $RUN_PACKAGES $BENCH_PACKAGES" ;;
*)
	echo "usage: scripts/deps.sh [run|test|bench]" >&2
	exit 2
	;;
esac

missing=""
for p in $packages; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# The tests and benchmarks need npm (and a Node.js to run it): Debian's,
# unless some other nodejs (NodeSource's, which carries its own npm) is
# there already, which Debian's npm would conflict with.
if [ "$purpose" != run ] && ! command -v npm >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi

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

# Running needs no Node.js; the tests and the benchmarks' clients do.
[ "$purpose" = run ] && exit 0
# The system's Node.js only runs npm: `npm ci` installs the Node.js the
# tests run on (the npm package "node", an LTS release; see package.json).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "deps: the tests need npm and a Node.js to run it, 18 or newer" >&2
	echo "  (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
	echo "deps: Node.js $(node --version) is too old to run npm here; need >= 18" >&2
	exit 1
fi
