#!/bin/sh
# SPDX-License-Identifier: ISC
# make distcheck: the tarball that make dist wrote, unpacked in a temporary
# directory, builds with the same make, passes its tests, installs and
# uninstalls leaving no file behind, and makes the same tarball again.
set -eu
cd "$(dirname "$0")/../.."
dist=retry-$VERSION
# The make that make distcheck ran, for the tarball's; not for its tests.
make=${MAKE:-make}
unset MAKE
top=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retry-distcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The bats that make test runs here (fetched if need be) is lent to the
# tarball's, so that it fetches none again.
bats=$(sh tests/run-bats --locate)
gzip -dc "$dist.tar.gz" | (cd "$tmp" && tar -xf -)
cd "$tmp/$dist"
"$make"
"$make" test BATS="$bats"
"$make" install DESTDIR="$tmp/root"
"$make" uninstall DESTDIR="$tmp/root"
left=$(find "$tmp/root" ! -type d)
if [ -n "$left" ]; then
	echo "make distcheck: left behind by uninstall:" $left >&2
	exit 1
fi
"$make" dist >/dev/null
gzip -dc "$dist.tar.gz" | tar -tf - | sort >"$tmp/again"
gzip -dc "$top/$dist.tar.gz" | tar -tf - | sort >"$tmp/first"
if ! cmp -s "$tmp/first" "$tmp/again"; then
	echo "make distcheck: make dist from the tarball differs" >&2
	exit 1
fi
echo "$dist.tar.gz: builds, passes its tests, installs and uninstalls"
