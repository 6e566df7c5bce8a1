#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-musl: the whole suite against retry-musl, a static build with
# musl (Debian's musl-tools; MUSLCC=musl-gcc), as Alpine's retry would be,
# since musl's libc differs from glibc where signals and stdio meet.
set -eu
cd "$(dirname "$0")/../.."
MUSLCC=${MUSLCC:-musl-gcc}
if [ ! -e retry-musl ] ||
    [ -n "$(find $SRCS $HDRS Makefile -newer retry-musl)" ]; then
	set -x
	$MUSLCC $OUR_CFLAGS $OUR_CPPFLAGS $DEFAULT_CFLAGS -static \
	    -o retry-musl $SRCS
	{ set +x; } 2>/dev/null
fi
# TEST_LIBC: what musl's regexec(3) lacks (REG_STARTEND), tests/match.bats.
TEST_LIBC=musl TEST_RETRY_BINARY=$(pwd)/retry-musl sh tests/run-bats tests
