#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The command line: every usage error exits 125 with one line naming the
# option and the value and runs nothing; --help and --version; where
# options stop, "--", bundling, "--opt=value".
load helpers/common

# usage_error MESSAGE ARG...: "retry ARG... touch SENTINEL" exits 125 with
# "retry: MESSAGE" as the only line on stderr, nothing on stdout, and the
# sentinel command never runs.  (Without bats' run, which costs more than
# retry itself in the long loops below.)
# The reasons that name the fix.
DUR="invalid duration (a number and a unit, ms, s, m or h, or several, as in 1m30s)"
BIG="duration too large (at most about 31 years)"
CODES="invalid exit status list (statuses 0 to 255 and ranges such as 75-78, joined by commas without spaces)"
COUNT="invalid number (0 for no limit, or 1 to 2147483647)"

usage_error() {
	local want="retry: $1" out err status=0
	shift
	"$RETRY" "$@" touch "$BATS_TEST_TMPDIR/ran" >"$BATS_TEST_TMPDIR/out" \
	    2>"$BATS_TEST_TMPDIR/err" || status=$?
	IFS= read -r -d '' out <"$BATS_TEST_TMPDIR/out" || true
	IFS= read -r -d '' err <"$BATS_TEST_TMPDIR/err" || true
	if [ "$status" -ne 125 ] || [ "$err" != "$want"$'\n' ] ||
	    [ -n "$out" ] || [ -e "$BATS_TEST_TMPDIR/ran" ]; then
		echo "retry $*: exit $status, stdout [$out] stderr [$err]"
		echo "wanted exit 125 and stderr [$want]"
		[ -e "$BATS_TEST_TMPDIR/ran" ] && echo "and the command ran"
		return 1
	fi
}

@test "malformed durations are usage errors for every duration option" {
	for v in '' -1 1x 1e999 nan inf 1.2.3 5m-3s 1s1s 1m1h 1ms500ms . ms \
	    1m30 ' 1' '1 s' 1S; do
		usage_error "--base '$v': $DUR" --base "$v"
	done
	for opt in -b -c --cap --max-delay -D --deadline -T --timeout \
	    -k --kill-after; do
		for v in '' 1x 5m-3s 5min 5mins; do
			usage_error "$opt '$v': $DUR" "$opt" "$v"
		done
	done
}

@test "a duration too large to keep is a usage error, not a wrap-around" {
	for opt in --base --cap --deadline --timeout --kill-after; do
		for v in 99999999999h 1000000001s 1000000000.5s 100000000000000000000 \
		    99999999999999999999999ms; do
			usage_error "$opt '$v': $BIG" "$opt" "$v"
		done
	done
}

@test "a duration that overflows 64 bits while being read is too large" {
	for opt in --base --cap --deadline --timeout --kill-after; do
		for v in 9223372036854775808 9223372036854775809ms \
		    18446744073709551617s 9999999999999999999; do
			usage_error "$opt '$v': $BIG" "$opt" "$v"
		done
	done
}

@test "well-formed durations are accepted" {
	for v in 1 1.5 .5 250ms 1m30s 1h1ms 2h30m15s500ms 1000000000s; do
		run -0 --separate-stderr "$RETRY" -n1 -k "$v" true
		[ "$stderr" = "" ]
	done
}

@test "--base, --timeout and --deadline must be greater than 0" {
	for opt in -b --base -T --timeout -D --deadline; do
		usage_error "$opt '0': must be greater than 0" "$opt" 0
	done
	for v in 0s 0ms 0.0 0h0m0s; do
		usage_error "--base '$v': must be greater than 0" --base "$v"
	done
}

@test "--factor must be a decimal number of at least 1" {
	usage_error "--factor '0.5': factor must be at least 1" --factor 0.5
	usage_error "-f '0.999': factor must be at least 1" -f 0.999
	usage_error "-f '0': factor must be at least 1" -f 0
	usage_error "--factor 'abc': invalid number" --factor abc
	usage_error "--factor '': invalid number" --factor ''
	for v in -2 1e3 1,5 0x10 inf nan 1.2.3 ' 2'; do
		usage_error "-f '$v': invalid number" -f "$v"
	done
}

@test "--cap below --base is rejected, in either order" {
	usage_error "--cap '1s' is below --base '2s'" --cap 1s --base 2s
	usage_error "--cap '1s' is below --base '2s'" --base 2s --cap 1s
	usage_error "-c '500ms' is below -b '1s'" -c 500ms -b 1s
	usage_error "-c '500ms' is below --base '1s'" -c 500ms
	usage_error "--max-delay '999ms' is below --base '1s'" --max-delay 999ms
	# The default cap is 30s.
	usage_error "-b '31s' is above the default --cap '30s'" -b 31s
	usage_error "--base '31s' is above the default --cap '30s'" --base 31s
	run -0 --separate-stderr "$RETRY" --dry-run -n2 -j none -b 2s -c 2s
	[ "$output" = "$(printf '2\t2.000\t2.000')" ]
}

@test "malformed exit status lists are usage errors for --on and --stop-on" {
	for v in 256 5-3 , 1,,2 a -1 '' 1, ,1 1-2-3 1--2 0-256 ' 1' 1.0; do
		usage_error "--on '$v': $CODES" --on "$v"
		usage_error "-x '$v': $CODES" -x "$v"
	done
	usage_error "-o '5-3': $CODES" -o 5-3
	usage_error "-o '1, 2': $CODES" -o '1, 2'
	usage_error "--stop-on '1,,2': $CODES" --stop-on 1,,2
}

@test "a malformed number of attempts is a usage error" {
	for opt in -n --attempts; do
		for v in -1 1.5 '' +1 ' 1' 1e3 x 99999999999999999999 \
		    2147483648; do
			usage_error "$opt '$v': $COUNT" "$opt" "$v"
		done
	done
}

@test "an unknown jitter mode is a usage error" {
	usage_error "--jitter 'bogus': unknown jitter mode" --jitter bogus
	usage_error "-j '': unknown jitter mode" -j ''
	usage_error "-j 'none,full': unknown jitter mode" -j none,full
}

@test "an unknown signal is a usage error" {
	for v in FOO SIGFOO 0 999 -9 '' SIG; do
		usage_error "--signal '$v': unknown signal" --signal "$v"
		usage_error "-s '$v': unknown signal" -s "$v"
	done
}

@test "signals are names with or without SIG, in any case, or numbers" {
	for v in TERM SIGTERM sigterm Kill 9 INT usr1 HUP; do
		run -0 --separate-stderr "$RETRY" -n1 -s "$v" true
		[ "$stderr" = "" ]
	done
}

@test "an empty --key is a usage error" {
	usage_error "--key '': must not be empty" --key ''
	usage_error "-K '': must not be empty" -K ''
}

@test "a malformed --seed is a usage error" {
	usage_error "--seed 'abc': invalid seed" --seed abc
	usage_error "--seed '': invalid seed" --seed ''
	usage_error "--seed '-1': invalid seed" --seed -1
	usage_error "--seed '18446744073709551616': seed too large" \
	    --seed 18446744073709551616
}

@test "unknown options are usage errors, long and short" {
	usage_error "unknown option '--bogus'" --bogus
	# The option without its value.
	usage_error "unknown option '--bogus'" --bogus=1
	usage_error "unknown option '-Z'" -Z
	usage_error "unknown option '-Z'" -qZ
	usage_error "unknown option '-Z'" -n 2 -Z
	usage_error "ambiguous option '--ver': --verbose or --version?" --ver
}

@test "a near miss of a long option says which was meant" {
	usage_error "unknown option '--atempts': did you mean --attempts?" --atempts 3
	usage_error "unknown option '--jiter': did you mean --jitter?" --jiter=full
	usage_error "unknown option '--dealine': did you mean --deadline?" --dealine 5s
	usage_error "unknown option '--stop-om': did you mean --stop-on?" --stop-om 2
	# Not a near miss: nothing made up.
	usage_error "unknown option '--xyzzy'" --xyzzy
}

@test "an option missing its value is a usage error, long and short" {
	run -125 --separate-stderr "$RETRY" --attempts
	[ "$stderr" = "retry: option '--attempts' needs a value" ]
	[ "$output" = "" ]
	run -125 --separate-stderr "$RETRY" -n
	[ "$stderr" = "retry: option '-n' needs a value" ]
	run -125 --separate-stderr "$RETRY" -qb
	[ "$stderr" = "retry: option '-b' needs a value" ]
	run -125 --separate-stderr "$RETRY" -q --deadline
	[ "$stderr" = "retry: option '--deadline' needs a value" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "a value given to a flag is a usage error" {
	usage_error "option '--quiet=1' takes no value" --quiet=1
	usage_error "option '--verbose=yes' takes no value" --verbose=yes
	usage_error "option '--dry-run=1' takes no value" --dry-run=1
	usage_error "option '--help=x' takes no value" --help=x
	usage_error "option '--version=x' takes no value" --version=x
}

@test "no command at all is a usage error" {
	for args in '' '-n 3' '-q' '--' '-n 3 --' '--verbose'; do
		# shellcheck disable=SC2086
		run -125 --separate-stderr "$RETRY" $args
		[ "$stderr" = "retry: no command given: write retry [options] -- command [arg ...]" ]
		[ "$output" = "" ]
	done
	# Another retry's -v is the version: -v alone says where that is.
	run -125 --separate-stderr "$RETRY" -v
	[ "$stderr" = "retry: no command given (-v is --verbose here: the version is -V)" ]
}

@test "--dry-run with unlimited attempts and no deadline is a usage error" {
	usage_error "--dry-run with unlimited attempts needs a --deadline" \
	    --dry-run -n 0
	usage_error "--dry-run with unlimited attempts needs a --deadline" \
	    --attempts=0 --dry-run
	run -125 --separate-stderr "$RETRY" --dry-run -n0
	[ "$stderr" = "retry: --dry-run with unlimited attempts needs a --deadline" ]
}

@test "--min-time needs a deadline, own, inherited, or an outer retry's to come; it must be greater than 0" {
	usage_error "--min-time needs a deadline: give -D DUR (or run under a retry that has one)" \
	    --min-time 2s
	usage_error "--min-time '0': must be greater than 0" --min-time 0 -D 5s
	usage_error "--min-time 'soon': invalid duration (a number and a unit, ms, s, m or h, or several, as in 1m30s)" \
	    --min-time soon -D 5s
	# With one, nothing is refused (the command runs: touch).
	run -0 "$RETRY" --min-time 1ms -D 5s true
	run -0 env RETRY_DEADLINE=4000000000.000 "$RETRY" --min-time 1ms true
	run -0 env RETRY_ATTEMPT=1 "$RETRY" --min-time 1ms true
	# An empty RETRY_DEADLINE is none.
	RETRY_DEADLINE= usage_error "--min-time needs a deadline: give -D DUR (or run under a retry that has one)" \
	    --min-time 2s
}

@test "a malformed RETRY_DEADLINE in the environment is a usage error" {
	for v in abc 1.2.3 -5 ' 5' .5 1e9 99999999999999999999 '12 '; do
		export RETRY_DEADLINE="$v"
		usage_error "RETRY_DEADLINE '$v': invalid time"
		usage_error "RETRY_DEADLINE '$v': invalid time" -n 1 --
	done
	unset RETRY_DEADLINE
	for v in abc .5; do
		run -125 --separate-stderr env RETRY_DEADLINE="$v" \
		    "$RETRY" --dry-run -n 3
		[ "$stderr" = "retry: RETRY_DEADLINE '$v': invalid time" ]
		[ "$output" = "" ]
	done
}

@test "the first bad option is the one reported" {
	usage_error "-n 'x': $COUNT" -n x -b 0 -j bogus
	usage_error "-j 'bogus': unknown jitter mode" -j bogus -n x
}

@test "--help goes to stdout, exits 0, and fits in 80 columns" {
	for opt in --help -h; do
		run -0 --separate-stderr "$RETRY" "$opt"
		[ "$stderr" = "" ]
		[ "${lines[0]}" = "usage: retry [options] [--] command [arg ...]" ]
		[ "${#lines[@]}" -gt 10 ]
		for line in "${lines[@]}"; do
			if [ "${#line}" -gt 80 ]; then
				echo "too wide (${#line}): $line"
				return 1
			fi
		done
		[[ $output != *$'\t'* ]]
	done
}

@test "--help names every option" {
	run -0 "$RETRY" --help
	for opt in -n --attempts -D --deadline -T --timeout -s --signal \
	    -k --kill-after -b --base -f --factor -c --cap --max-delay \
	    -j --jitter --seed -o --on -x --stop-on -K --key --dry-run \
	    -q --quiet -v --verbose -h --help -V --version; do
		[[ $output == *"$opt"[,\ ]* ]] || { echo "missing $opt"; return 1; }
	done
}

@test "--help and --version win over a command, which is not run" {
	run -0 --separate-stderr "$RETRY" -n 2 --help touch "$BATS_TEST_TMPDIR/ran"
	[ "$stderr" = "" ]
	[ "${lines[0]}" = "usage: retry [options] [--] command [arg ...]" ]
	run -0 --separate-stderr "$RETRY" -V touch "$BATS_TEST_TMPDIR/ran"
	[ "$stderr" = "" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "--version prints exactly 'retry X.Y.Z', the Makefile's VERSION" {
	version=$(sed -n 's/^VERSION *= *//p' "$BATS_TEST_DIRNAME/../Makefile")
	[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
	for opt in --version -V -qV; do
		run -0 --separate-stderr "$RETRY" "$opt"
		[ "$output" = "retry $version" ]
		[ "$stderr" = "" ]
	done
}

@test "options stop at the first operand" {
	run -0 --separate-stderr "$RETRY" -n1 sh -c 'exit 0' -n
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RETRY" -n 1 printf %s -n
	[ "$output" = "-n" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RETRY" -n 1 printf '%s ' --bogus -Z --help
	[ "$output" = "--bogus -Z --help " ]
	# The command's own -h is its own, not a request for retry's help.
	run -0 --separate-stderr "$RETRY" printf %s -h
	[ "$output" = "-h" ]
}

@test "'--' ends the options" {
	run -0 --separate-stderr "$RETRY" -- printf %s -n
	[ "$output" = "-n" ]
	run -0 --separate-stderr "$RETRY" -n1 -- printf '%s ' -- -n
	[ "$output" = "-- -n " ]
	[ "$stderr" = "" ]
}

@test "short options bundle, with or without a separate value" {
	state=$BATS_TEST_TMPDIR/state
	run -1 --separate-stderr "$RETRY" -qn1 flaky "$state" 5
	[ "$stderr" = "" ]
	[ "$(wc -l <"$state")" -eq 1 ]
	rm "$state"
	run -1 --separate-stderr "$RETRY" -qn 2 -b10ms flaky "$state" 5
	[ "$stderr" = "" ]
	[ "$(wc -l <"$state")" -eq 2 ]
	rm "$state"
	# Without -q the same bundle speaks.
	run -1 --separate-stderr "$RETRY" -n1 flaky "$state" 5
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	want=$(printf '2\t0.010\t0.010\n3\t0.030\t0.040')
	run -0 --separate-stderr "$RETRY" --dry-run -n3 -jnone -b10ms -f3
	[ "$output" = "$want" ]
	run -0 --separate-stderr "$RETRY" --dry-run -n 3 -j none -b 10ms -f 3
	[ "$output" = "$want" ]
}

@test "long options take '=value' or a separate value" {
	want=$(printf '2\t0.010\t0.010\n3\t0.030\t0.040')
	run -0 --separate-stderr "$RETRY" --dry-run --attempts=3 --jitter=none \
	    --base=10ms --factor=3 --cap=1s
	[ "$output" = "$want" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RETRY" --dry-run --attempts 3 --jitter none \
	    --base 10ms --factor 3 --cap 1s
	[ "$output" = "$want" ]
	state=$BATS_TEST_TMPDIR/state
	run -1 --separate-stderr "$RETRY" --quiet --attempts=2 --base=10ms \
	    flaky "$state" 5
	[ "$stderr" = "" ]
	[ "$(wc -l <"$state")" -eq 2 ]
}

@test "what Debian's retry (and recur) means by -t, -d, -m, -u and -w is refused here, with what to write" {
	usage_error "-t is a tries count in other retry tools: write -n 3 for attempts or --timeout 3s" -t 3 -d 1
	usage_error "--times is a tries count in other retry tools: write -n 3 for attempts or --timeout 3s" --times=3
	usage_error "-t is a tries count in other retry tools: write --timeout 30s for a limit on each attempt, or -n N for attempts" -t 30s
	usage_error "-d is a fixed delay in other retry tools: write -b 1s -f 1 -j none for one, or --deadline 1s for a limit on the whole run" -d 1
	usage_error "--delay is a fixed delay in other retry tools: write -b 2s -f 1 -j none for one, or --deadline 2s for a limit on the whole run" --delay 2,5,10
	usage_error "-m is a message in other retry tools: retry words its own (-q for less, -v for more)" -m hello
	usage_error "--message is a message in other retry tools: retry words its own (-q for less, -v for more)" --message=hello
	usage_error "-u is a condition in other retry tools: write -o CODES for the statuses to retry (-o 0: until it fails) and -x for those never to retry" -u fail
	usage_error "--until is a condition in other retry tools: write -o CODES for the statuses to retry (-o 0: until it fails) and -x for those never to retry" --until=success
	usage_error "-w is a condition in other retry tools: write -o CODES for the statuses to retry, as in -o 1-255" -w 1
	usage_error "--while is a condition in other retry tools: write -o CODES for the statuses to retry, as in -o 1-255" --while 1
	# No delay at all: what it points to (-b 0s) would itself be refused.
	usage_error "-d is a fixed delay in other retry tools: write -b 1ms -f 1 -j none for the least there is" -d 0
	usage_error "--delay is a fixed delay in other retry tools: write -b 1ms -f 1 -j none for the least there is" --delay=0.0
	usage_error "-d is a fixed delay in other retry tools: write -b 0.05 -f 1 -j none for one, or --deadline 0.05 for a limit on the whole run" -d 0.05
	# What means the same: -h, --help, --version.
	run -0 "$RETRY" -h
	run -0 "$RETRY" --version
}

@test "curl's --retry, --retry-delay, --retry-max-time and --max-time are refused with what they are here" {
	usage_error "unknown option '--retry': it is a count of retries in curl: write -n N for attempts in all (curl's --retry 3 is -n 4)" --retry 3
	usage_error "unknown option '--retry-delay': it is a fixed delay in curl: write -b DUR -f 1 -j none" --retry-delay=2
	usage_error "unknown option '--retry-max-time': it is curl's limit on its retrying: write -D DUR (--deadline)" --retry-max-time 60
	usage_error "unknown option '--max-time': it is curl's limit on each transfer: write -T DUR (--timeout) for each attempt, -D DUR for the whole run" --max-time 10
}
