#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-portable: what FreeBSD and macOS would make of every C source,
# since no machine here runs either: portable-audit reads them for FreeBSD,
# and clang compiles them for macOS against the headers make deps fetched.
set -eu
cd "$(dirname "$0")/../.."
# FreeBSD: no package here ships its headers.  macOS: each source compiled
# (-fsyntax-only, -Werror) for x86_64-apple-darwin against the macOS 13
# headers that zig 0.11 ships.  bench/ is Linux's only and is left out.
inc=.deps/zig/lib/libc/include
srcs="$SRCS $(for p in $TESTPROGS; do echo "$p.c"; done)"
srcs="$srcs $(for f in $FUZZERS; do echo "tests/fuzz/fuzz_${f##*/}.c"; done)"
sh tests/check/portable-audit $srcs $HDRS tests/helpers/signal-names.h \
    tests/helpers/serve.h
if [ ! -d $inc/any-macos-any ]; then
	echo "check-portable: no macOS headers: make deps" >&2
	exit 1
fi
status=0
for f in $srcs; do
	if clang --target=x86_64-apple-darwin22 -nostdlibinc \
	    -isystem $inc/x86_64-macos.13-none -isystem $inc/any-macos.13-any \
	    -isystem $inc/any-macos-any $OUR_CFLAGS $OUR_CPPFLAGS \
	    -Werror -fsyntax-only "$f"; then
		echo "macOS: $f: clean"
	else
		echo "macOS: $f fails"
		status=1
	fi
done
exit "$status"
