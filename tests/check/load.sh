#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-load (ROUNDS=5): the whole suite ROUNDS times on a busy
# machine, a CPU hog (yes >/dev/null) on each core, pinned with taskset
# where it can be, to catch the tests that only a loaded machine fails.
# Says how each round went, and the failures; fails if any round failed.
# Arguments, if any, go to run-bats in place of "tests" (tests/make.bats).
set -eu
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-5}
case $rounds in
'' | *[!0-9]* | 0*)
	echo "check-load: ROUNDS=$rounds: give the number of rounds, 1 or more" >&2
	exit 2
	;;
esac
[ "$#" -gt 0 ] || set -- tests
logs=$(mktemp -d "${TMPDIR:-/tmp}/check-load.XXXXXX")
hogs=

# stop_hogs: the hogs killed by their pids and waited for, the logs gone.
# SIGKILL: they may have inherited an ignored SIGTERM.
stop_hogs() {
	for pid in $hogs; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	hogs=
	rm -rf "$logs"
}
trap stop_hogs EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# One hog per core that this process may run on, pinned to it when
# taskset can (a cpuset may leave out some numbers: those run unpinned).
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
pinned=
core=0
while [ "$core" -lt "$cores" ]; do
	if command -v taskset >/dev/null 2>&1 &&
	    taskset -c "$core" true 2>/dev/null; then
		taskset -c "$core" yes >/dev/null &
		pinned="$pinned $core"
	else
		yes >/dev/null &
	fi
	hogs="$hogs $!"
	core=$((core + 1))
done
echo "check-load: $cores CPU hogs (yes >/dev/null, pids$hogs; pinned to cores:${pinned:- none}); $rounds rounds of: run-bats $*"

# loadavg: the 1-minute load average, where /proc has it.
loadavg() {
	la=unknown
	[ ! -r /proc/loadavg ] || read -r la _ </proc/loadavg
	echo "$la"
}

failed=0
round=1
while [ "$round" -le "$rounds" ]; do
	start=$(date +%s)
	status=0
	sh tests/run-bats "$@" >"$logs/round" 2>&1 </dev/null || status=$?
	took=$(($(date +%s) - start))
	if [ "$status" -eq 0 ]; then
		echo "check-load: round $round/$rounds: passed in ${took}s, load average $(loadavg)"
	else
		failed=$((failed + 1))
		echo "check-load: round $round/$rounds: FAILED (status $status) in ${took}s, load average $(loadavg); its failures:"
		# Each failed test with the lines bats gives under it; the
		# whole log when no test failed (bats itself did).
		awk '/^(not )?ok / { p = /^not ok/ } p' "$logs/round" >"$logs/failed"
		if [ -s "$logs/failed" ]; then
			cat "$logs/failed"
		else
			cat "$logs/round"
		fi
	fi
	round=$((round + 1))
done
if [ "$failed" -ne 0 ]; then
	echo "check-load: $failed of $rounds rounds failed" >&2
	exit 1
fi
echo "check-load: every round passed (ROUNDS=$rounds)"
