# SPDX-License-Identifier: ISC
# Assertions on attempt counts, file contents and elapsed times, for
# retry, process, files and faults.bats; load it after helpers/common with
# "load helpers/assert".

# attempts FILE: how many runs a flaky-style state file recorded (0 if none).
attempts() {
	if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# expect_file FILE TEXT: FILE holds exactly TEXT (trailing newlines aside).
expect_file() {
	local got
	got=$(cat "$1")
	[ "$got" = "$2" ] && return
	printf 'expected in %s:\n%s\nactual:\n%s\n' "$1" "$2" "$got"
	return 1
}

# in_band SECONDS LO HI: LO <= SECONDS <= HI, SECONDS with 3 decimals, LO
# and HI in milliseconds.
in_band() {
	between "$((10#${1/./}))" "$2" "$3"
}

# within T0 LO HI: now_ms - T0 is within [LO, HI] milliseconds.
within() {
	local took=$(($(now_ms) - $1))
	[ "$took" -ge "$2" ] && [ "$took" -le "$3" ] && return
	echo "took $took ms, not within [$2, $3] ms"
	return 1
}
