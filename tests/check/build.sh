#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-build: retry builds warning-free (-Werror) with gcc and clang,
# C99 and C11, -O0 and -O2, and the tests' C helpers compile clean with
# both, so that no compiler a packager picks shows a warning we never saw.
set -eu
cd "$(dirname "$0")/../.."
trap 'rm -f retry.check' EXIT
for cc in gcc clang; do
	for std in c99 c11; do
		for opt in -O0 -O2; do
			echo "$cc -std=$std $opt"
			$cc -std=$std $opt -Wall -Wextra -Wpedantic -Werror \
			    $OUR_CPPFLAGS -o retry.check $SRCS
		done
	done
done
for cc in gcc clang; do
	for p in $TESTPROGS; do
		$cc $OUR_CFLAGS -Werror $OUR_CPPFLAGS -fsyntax-only "$p.c"
	done
done
