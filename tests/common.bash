# Shared by every test file: where things are, and small polling helpers.
bats_require_minimum_version 1.5.0

# make check-sanitize points RETRY_BINARY at a sanitizer build.
RETRY=${RETRY_BINARY:-$BATS_TEST_DIRNAME/../retry}
HELPERS=$BATS_TEST_DIRNAME/helpers
PATH=$HELPERS:$PATH

# Milliseconds on the monotonic-ish wall clock, for bounded timing checks.
now_ms() {
	date +%s%3N
}

# wait_for FILE [TENTHS]: poll until FILE exists, at most TENTHS/10 s (50).
wait_for() {
	local n=0
	while [ ! -e "$1" ]; do
		[ "$n" -ge "${2:-50}" ] && return 1
		sleep 0.1
		n=$((n + 1))
	done
}

# alive PID: the process exists and is not a zombie.
alive() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case $state in Z*) return 1 ;; esac
}
