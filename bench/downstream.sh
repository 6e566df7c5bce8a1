#!/bin/sh
# SPDX-License-Identifier: ISC
# bench/downstream.sh MODE DIR: the downstream that bench/herd-rules.sh's
# runs of retry call.  Each call appends "ATTEMPT FAILED" (RETRY_ATTEMPT,
# 1 or 0) to DIR/calls, so that line K is the Kth call.
#   flap: fails every third call (3, 6, 9, ...), numbered under a lock
#         (flock(1) when there is one, else a directory);
#   down: fails every call; a first attempt first reads one line from the
#         FIFO DIR/gate, the barrier, then appends a line to DIR/released.
mode=$1 dir=$2
attempt=${RETRY_ATTEMPT:-1}

lock() {
	if command -v flock >/dev/null 2>&1; then
		exec 9>>"$dir/lock" && flock 9
	else
		until mkdir "$dir/lock.d" 2>/dev/null; do sleep 0.01; done
	fi
}
unlock() {
	if command -v flock >/dev/null 2>&1; then
		exec 9>&-
	else
		rmdir "$dir/lock.d"
	fi
}

case $mode in
flap)
	lock
	k=$(($(wc -l <"$dir/calls") + 1))
	failed=0
	[ $((k % 3)) != 0 ] || failed=1
	echo "$attempt $failed" >>"$dir/calls"
	unlock
	exit "$failed"
	;;
down)
	# One short line, appended: a single write(2) that no other call's
	# can split, so no lock.
	echo "$attempt 1" >>"$dir/calls"
	if [ "$attempt" = 1 ]; then
		read -r _ <"$dir/gate" || true
		echo >>"$dir/released"
	fi
	exit 1
	;;
*)
	echo "bench/downstream.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
