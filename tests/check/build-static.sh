#!/bin/sh
# SPDX-License-Identifier: ISC
# make static: ./retry-static, linked statically, for a start-up without
# the dynamic linker's work (bench/run.sh measures it beside ./retry).
# With musl-gcc when there is one; else glibc's static-pie, whose
# getaddrinfo(3) still loads the NSS libraries of the glibc it was built
# with at run time, so --store by a host name needs them (an address or a
# Unix socket does not).
set -eu
cd "$(dirname "$0")/../.."
MUSLCC=${MUSLCC:-musl-gcc}
if command -v "$MUSLCC" >/dev/null 2>&1; then
	set -x
	$MUSLCC $OUR_CFLAGS $OUR_CPPFLAGS $DEFAULT_CFLAGS -static \
	    -o retry-static $SRCS
else
	echo "make static: no $MUSLCC; glibc's static-pie (--store by host name then needs glibc's NSS libraries at run time)" >&2
	# The linker's warning about getaddrinfo says just that: said above.
	log=$(mktemp "${TMPDIR:-/tmp}/retry-static.XXXXXX")
	trap 'rm -f "$log"' EXIT
	status=0
	set -x
	${CC:-cc} $OUR_CFLAGS $OUR_CPPFLAGS $DEFAULT_CFLAGS -static-pie \
	    -o retry-static $SRCS 2>"$log" || status=$?
	{ set +x; } 2>/dev/null
	grep -v -e 'statically linked applications requires at runtime' \
	    -e ': in function ' "$log" >&2 || true
	[ "$status" -eq 0 ] || exit "$status"
fi
{ set +x; } 2>/dev/null
./retry-static --version >/dev/null
