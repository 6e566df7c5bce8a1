#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-release, after make release: SHA256SUMS holds; every binary
# is static (no program interpreter, no shared library); the aarch64,
# armv7 and riscv64 ones pass a part of the suite that needs no pty or
# Redis under Debian's qemu-user-static, and the x86_64 one the whole
# suite; lintian has nothing to say of the packages, and the amd64 one
# installs, works and purges (tests/release/deb.bats); the source tarball
# alone makes the same binaries, signed and verified with a throw-away
# minisign key.
set -eu
cd "$(dirname "$0")/../.."
top=$(pwd)
rel=$top/release
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retry-check-release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
# QEMU_PART: the files that need no pty, no Redis and no helper of ours
# beyond those a shell script is.
QEMU_PART="tests/retry.bats tests/schedule.bats tests/usage.bats tests/outcome.bats"

# fail MESSAGE: says what failed and marks the check failed.
fail() {
	echo "check-release: $*" >&2
	status=1
}

# is_static FILE: file(1) calls it statically linked, with no interpreter.
is_static() {
	case $(file -b "$1") in
	*interpreter*) return 1 ;;
	*"statically linked"*) return 0 ;;
	*) return 1 ;;
	esac
}

# under_qemu ARCH QEMU CPU: the part of the suite with ARCH's binary,
# through a wrapper that calls qemu-QEMU-static as TEST_RETRY_BINARY, on
# the oldest CPU the binary is for (qemu's default, "max", would let an
# instruction that CPU lacks pass).
under_qemu() {
	wrapper=$tmp/retry-$1
	printf '#!/bin/sh\nexec qemu-%s-static -cpu %s "%s" "$@"\n' "$2" "$3" \
	    "$rel/retry-$VERSION-linux-$1" >"$wrapper"
	chmod +x "$wrapper"
	echo "== $1, under qemu-$2-static -cpu $3: $QEMU_PART"
	# shellcheck disable=SC2086 # a list of files
	TEST_QEMU=$2 TEST_LIBC=musl TEST_RETRY_BINARY=$wrapper \
	    sh tests/run-bats $QEMU_PART || fail "$1 fails under qemu-$2-static"
}

# lint DEB: lintian, which prints nothing for a clean package (as an
# unprivileged user when root, since it says that root is not advised).
lint() {
	rc=0
	if [ "$(id -u)" -eq 0 ]; then
		said=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		    env HOME="$tmp" lintian "$1" 2>&1) || rc=$?
	else
		said=$(lintian "$1" 2>&1) || rc=$?
	fi
	if [ -n "$said" ] || [ "$rc" -ne 0 ]; then
		echo "$said" >&2
		fail "lintian: ${1##*/} (status $rc)"
	else
		echo "lintian: ${1##*/}: clean"
	fi
}

# from_tarball: the tarball, unpacked, makes the same release, signed with
# a key made for this check: each signature verifies, and one over a
# changed file does not.
from_tarball() {
	minisign -G -W -p "$tmp/key.pub" -s "$tmp/key.sec" >/dev/null
	tar -xzf "$rel/retry-$VERSION.tar.gz" -C "$tmp"
	# A signed release needs a dated NEWS entry: this one gets today's.
	sed "s/^$VERSION (unreleased)\$/$VERSION ($(date -u +%Y-%m-%d))/" \
	    "$tmp/retry-$VERSION/NEWS" >"$tmp/NEWS"
	mv "$tmp/NEWS" "$tmp/retry-$VERSION/NEWS"
	(
		cd "$tmp/retry-$VERSION" || exit 1
		ZIG=${ZIG:-$top/.deps/zig/zig} ZIG_GLOBAL_CACHE_DIR=$top/.deps/zig-cache \
		    ${MAKE:-make} -s release SIGN=minisign \
		    MINISIGN_KEY="$tmp/key.sec" >/dev/null 2>"$tmp/log"
	) || { cat "$tmp/log" >&2; fail "make release from the tarball"; return; }
	for f in "$rel"/retry-"$VERSION"-linux-*; do
		cmp -s "$f" "$tmp/retry-$VERSION/release/${f##*/}" ||
		    fail "${f##*/}: the tarball makes another binary"
	done
	n=0
	for f in "$tmp/retry-$VERSION"/release/*; do
		case $f in *.minisig) continue ;; esac
		n=$((n + 1))
		minisign -V -q -p "$tmp/key.pub" -m "$f" ||
		    fail "${f##*/}: its signature does not verify"
	done
	echo "signed and verified: $n files"
	f=$tmp/retry-$VERSION/release/SHA256SUMS
	echo >>"$f"
	if minisign -V -q -p "$tmp/key.pub" -m "$f" 2>/dev/null; then
		fail "a changed SHA256SUMS still verifies"
	fi
}

if [ ! -f "$rel/SHA256SUMS" ]; then
	echo "check-release: no release/SHA256SUMS: make release first" >&2
	exit 1
fi
# Exactly the files a release is, each once in SHA256SUMS.
want="SHA256SUMS retry-$VERSION-linux-aarch64 retry-$VERSION-linux-armv7
retry-$VERSION-linux-riscv64 retry-$VERSION-linux-x86_64 retry-$VERSION.tar.gz
retry-backoff_$VERSION-1_amd64.deb retry-backoff_$VERSION-1_arm64.deb"
have=
for f in "$rel"/*; do
	case $f in *.minisig) ;; *) have="$have ${f##*/}" ;; esac
done
# words: its arguments, one a line, in C's order.
words() {
	printf '%s\n' "$@" | LC_ALL=C sort
}
# shellcheck disable=SC2086 # lists of words
[ "$(words $have)" = "$(words $want)" ] ||
    fail "release/ holds$have, not $want"
# shellcheck disable=SC2046 # a list of words
[ "$(words SHA256SUMS $(awk '{ print $2 }' "$rel/SHA256SUMS"))" = "$(words $want)" ] ||
    fail "SHA256SUMS lists another set of files"
(cd "$rel" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS"
for f in "$rel"/retry-"$VERSION"-linux-*; do
	case $f in *.minisig) continue ;; esac
	is_static "$f" || fail "${f##*/} is not static: $(file -b "$f")"
done
for deb in "$rel"/*.deb; do
	lint "$deb"
done
from_tarball
# Here a test of the package that cannot run fails rather than skips.
RELEASE_CHECK=1 sh tests/run-bats tests/release ||
    fail "the package as a user meets it"
under_qemu aarch64 aarch64 cortex-a53
# The Raspberry Pi 2's.
under_qemu armv7 arm cortex-a7
under_qemu riscv64 riscv64 rv64
echo "== x86_64: the whole suite"
TEST_LIBC=musl TEST_RETRY_BINARY=$rel/retry-$VERSION-linux-x86_64 \
    sh tests/run-bats tests || fail "x86_64 fails the suite"
exit "$status"
