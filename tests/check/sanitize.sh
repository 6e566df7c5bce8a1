#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-sanitize: the whole suite against retry-sanitize, built with
# AddressSanitizer and UBSan that stop at the first fault, to catch the
# memory and undefined-behaviour errors that ./retry survives unseen.
set -eu
cd "$(dirname "$0")/../.."
if [ ! -e retry-sanitize ] ||
    [ -n "$(find $SRCS $HDRS Makefile -newer retry-sanitize)" ]; then
	set -x
	$CC $OUR_CFLAGS $OUR_CPPFLAGS -O1 -g \
	    -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer -o retry-sanitize $SRCS
	{ set +x; } 2>/dev/null
fi
TEST_RETRY_BINARY=$(pwd)/retry-sanitize TEST_SANITIZED=1 \
    ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    sh tests/run-bats tests
