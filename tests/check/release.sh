#!/bin/sh
# SPDX-License-Identifier: ISC
# make release: into release/, what a user downloads: the source tarball
# of make dist, a static binary per architecture (zig's cc, which brings
# musl for each; HACKING.md, Releases, says why), two Debian packages made
# from the x86_64 and aarch64 binaries, SHA256SUMS over them all, and with
# SIGN=minisign (MINISIGN_KEY=FILE) a .minisig beside each.  A tree whose
# NEWS has no entry for VERSION is refused.
set -eu
cd "$(dirname "$0")/../.."
umask 022
pkg=retry-backoff
ZIG=${ZIG:-.deps/zig/zig}
# zig keeps the musl it builds per target here; make deps fills it, so
# that a release only compiles retry.
export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$(pwd)/.deps/zig-cache}"
export ZIG_LOCAL_CACHE_DIR="$ZIG_GLOBAL_CACHE_DIR"

# The release's architectures: NAME:ZIG-TARGET[:FLAG].  ARMv7 with
# hardware floating point: the Raspberry Pi 2 and later.
TARGETS="x86_64:x86_64-linux-musl aarch64:aarch64-linux-musl
armv7:arm-linux-musleabihf:-mcpu=generic+v7a riscv64:riscv64-linux-musl"

# news_heading: NEWS's heading for VERSION, a line "VERSION" or
# "VERSION (...)" underlined with '=', as every release's is; nothing
# when it has none.
news_heading() {
	[ ! -r NEWS ] || awk -v v="$VERSION" '
	    prev != "" && /^=+$/ && (prev == v || index(prev, v " (") == 1) { print prev; exit }
	    { prev = $0 }' NEWS
}

# build NAME:TARGET[:FLAG] OUTPUT SOURCE...: a static, stripped program,
# with the warnings and optimisation of the normal build.
build() {
	target=${1#*:} flag=
	case $target in *:*) flag=${target#*:} target=${target%%:*} ;; esac
	out_file=$2
	shift 2
	# shellcheck disable=SC2086 # each holds several flags
	"$ZIG" cc -target "$target" $flag $OUR_CFLAGS $OUR_CPPFLAGS \
	    $DEFAULT_CFLAGS -static -s -o "$out_file" "$@"
}

# warm: builds a program that needs nothing for each target, so that zig
# compiles its musl for each (once per target and CPU, into its cache),
# here rather than in make release: make deps calls this.  It also keeps
# musl's own warnings (its crt under zig's clang 16) out of make release.
warm() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/retry-warm.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo 'int main(void) { return 0; }' >"$tmp/empty.c"
	for t in $TARGETS; do
		if ! build "$t" "$tmp/empty" "$tmp/empty.c" 2>"$tmp/log"; then
			cat "$tmp/log" >&2
			exit 1
		fi
	done
}

# stage DIR: the files of a package under DIR, as make install lays them
# out for a package (HACKING.md, Installing and packaging), with Debian's
# documents; each package puts its release binary in place of ./retry.
stage() {
	root=$1 doc=$1/usr/share/doc/$pkg
	${MAKE:-make} -s install PREFIX=/usr DESTDIR="$root" \
	    ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
	    FISHCOMPDIR=/usr/share/fish/vendor_completions.d >/dev/null
	gzip -9 -n "$root"/usr/share/man/man?/*
	install -d -m 755 "$doc"
	copyright >"$doc/copyright"
	gzip -9 -n -c NEWS >"$doc/changelog.gz"
	changelog | gzip -9 -n >"$doc/changelog.Debian.gz"
	install -d -m 755 "$root/usr/share/lintian/overrides"
	overrides >"$root/usr/share/lintian/overrides/$pkg"
}

copyright() {
	cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: retry

Files: *
Copyright: $(sed -n 's/^Copyright (c) //p' LICENSE)
License: ISC
EOF
	sed -n '/^Permission/,$p' LICENSE | sed 's/^$/./; s/^/ /'
}

changelog() {
	cat <<EOF
$pkg ($VERSION-1) unstable; urgency=medium

  * retry $VERSION, from its release binaries (NEWS: changelog.gz).

 -- $maintainer  $(date -u -d "@$SOURCE_DATE_EPOCH" -R)
EOF
}

# Each override says why, as lintian asks.
overrides() {
	cat <<EOF
# retry is linked statically against musl on purpose: the same binary
# runs on any Linux of its architecture, and the package ships the very
# file that SHA256SUMS lists and make check-release tested.
$pkg: statically-linked-binary [usr/bin/retry]
# This package is made and published by retry's authors beside the
# release binaries, not uploaded to Debian, so no bug of Debian's asks
# for it and there is none to close.
$pkg: initial-upload-closes-no-bugs [usr/share/doc/$pkg/changelog.Debian.gz:1]
EOF
}

# control DIR DEBARCH: DEBIAN/control.  Debian's own retry (another tool,
# whose command line differs) owns the name and /usr/bin/retry: Conflicts
# and Replaces make installing this one an explicit, prompted replacement
# that apt-get upgrade never does by itself; no Provides, since scripts
# written for that retry would not run with this one.
control() {
	size=$(du -sk --exclude=DEBIAN "$1" | cut -f1)
	cat <<EOF
Package: $pkg
Version: $VERSION-1
Architecture: $2
Maintainer: $maintainer
Installed-Size: $size
Conflicts: retry
Replaces: retry
Section: utils
Priority: optional
Description: run a command again, with backoff, jitter and a circuit breaker
 retry runs a command and, when it fails with an exit status on its retry
 list, runs it again after a delay that grows exponentially and is spread
 by jitter, until it succeeds, the attempts run out or a deadline passes.
 Runs that name the same circuit share a breaker and a retry budget, on
 one host or through Redis.
 .
 This is not the retry of Debian's package "retry", whose options differ:
 installing this package replaces that one.
EOF
}

# deb ARCH DEBARCH: release/retry-backoff_VERSION-1_DEBARCH.deb, from a
# copy of $work/stage with ARCH's binary.
deb() {
	dir=$work/deb-$2
	mkdir "$dir"
	cp -pR "$work/stage" "$dir/root"
	install -m 755 "$out/retry-$VERSION-linux-$1" "$dir/root/usr/bin/retry"
	install -d -m 755 "$dir/root/DEBIAN"
	control "$dir/root" "$2" >"$dir/root/DEBIAN/control"
	(cd "$dir/root" && find usr -type f | LC_ALL=C sort | xargs md5sum) \
	    >"$dir/root/DEBIAN/md5sums"
	chmod 644 "$dir/root/DEBIAN/md5sums"
	dpkg-deb --root-owner-group -Zxz --build "$dir/root" \
	    "$out/${pkg}_$VERSION-1_$2.deb" >/dev/null
}

if [ "${1:-}" = warm ]; then
	warm
	exit 0
fi
heading=$(news_heading)
if [ -z "$heading" ]; then
	echo "make release: NEWS has no entry for $VERSION: add a heading '$VERSION (YYYY-MM-DD)' underlined with '='" >&2
	exit 1
fi
if [ ! -x "$ZIG" ]; then
	echo "make release: no zig at $ZIG: make deps (or ZIG=/path/to/zig)" >&2
	exit 1
fi
if [ -n "${SIGN:-}" ] && { [ "$SIGN" != minisign ] || [ ! -r "${MINISIGN_KEY:-}" ]; }; then
	echo "make release: SIGN=minisign needs MINISIGN_KEY=FILE, a readable minisign secret key" >&2
	exit 1
fi
# A signed release is one to publish: its NEWS entry must have its date.
if [ -n "${SIGN:-}" ] && [ "$heading" = "$VERSION (unreleased)" ]; then
	echo "make release: NEWS calls $VERSION unreleased: date its heading, '$VERSION (YYYY-MM-DD)', before a signed release" >&2
	exit 1
fi
maintainer='The retry authors <retry@users.noreply.github.com>'
# The packages' dates and files' times come from the last commit, so that
# the same tree makes the same packages.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null ||
    date -r NEWS +%s)}
export SOURCE_DATE_EPOCH
# Everything is made in a directory of its own, which becomes release/
# only when it is whole: a failed release leaves no part of one.
work=$(mktemp -d "${TMPDIR:-/tmp}/retry-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/release
mkdir "$out"
tarball=$(VERSION=$VERSION sh tests/check/dist.sh)
mv "$tarball" "$out/"
for t in $TARGETS; do
	echo "make release: retry-$VERSION-linux-${t%%:*}"
	# shellcheck disable=SC2086 # the list of sources
	build "$t" "$out/retry-$VERSION-linux-${t%%:*}" $SRCS
done
stage "$work/stage"
deb x86_64 amd64
deb aarch64 arm64
(cd "$out" && sha256sum -- * >SHA256SUMS)
if [ "${SIGN:-}" = minisign ]; then
	# One call, so that the key's password is asked once.
	(cd "$out" && minisign -S -s "$MINISIGN_KEY" -t "retry $VERSION" -m *)
fi
rm -rf release
mv "$out" release
ls -l release
