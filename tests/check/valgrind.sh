#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-valgrind: ./retry under valgrind's memcheck for a representative
# set of invocations: no errors and nothing definitely lost (else exit 1), in
# the build a user runs rather than a sanitized one.
set -eu
cd "$(dirname "$0")/../.."
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
failed=0

check() {
	want=$1
	shift
	got=0
	valgrind -q --error-exitcode=99 --leak-check=full \
	    --errors-for-leak-kinds=definite --log-file="$log/vg" \
	    ./retry "$@" >/dev/null 2>"$log/err" || got=$?
	if [ "$got" -ne "$want" ] || [ -s "$log/vg" ]; then
		echo "valgrind: retry $*: exit $got, wanted $want" >&2
		cat "$log/vg" "$log/err" >&2
		failed=1
	else
		echo "valgrind: retry $*: clean"
	fi
}

check 0 true
check 1 -b 1ms -n 3 false
check 0 -b 1ms -n 5 sh -c '[ "$RETRY_ATTEMPT" -ge 3 ]'
check 124 -n 1 -T 50ms sleep 5
check 124 -D 100ms -k 10ms sh -c 'trap "" TERM; sleep 1'
check 127 nosuchcommand
# --trace keeps the first and last attempts' spans: 130 attempts wrap the ring.
check 1 --trace "$log/spans" -b 1ms -c 1ms -n 130 false
TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 \
    check 0 --trace "$log/spans" -n 1 true
NOTIFY_SOCKET=@retry-valgrind-none check 1 -b 1ms -n 2 false
check 0 -v --dry-run -n 20 -j decorrelated
check 125 -b 1x true
check 125 --bogus
check 0 --help
exit "$failed"
