#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# retry at a real terminal: tests/helpers/ptyrun plays the interactive
# shell, starts retry as its foreground (or background) job and types at it.
load helpers/common

PTYRUN=$BATS_TEST_DIRNAME/helpers/ptyrun

# The children wait in builtins: a key that hits a shell's vfork() of a
# command reaches a half-made child, and no job control can help that.

@test "Ctrl-C during an attempt reaches the attempt once; retry dies of SIGINT" {
	need_keyboard_signals
	count=$BATS_TEST_TMPDIR/ints
	run --separate-stderr "$PTYRUN" -o ready -i '\003' -- "$RETRY" -b 10ms \
	    sh -c 'trap "echo int >>'"$count"'; trap - INT; kill -INT \$\$" INT
		echo attempt $RETRY_ATTEMPT; echo ready; read -r line'
	[ "$status" -eq 130 ]
	[ "$(cat "$count")" = int ]
	[[ $output == *"attempt 1"* ]]
	[[ $output != *"attempt 2"* ]]
	[[ $output == *"retry: attempt 1/5 killed by SIGINT; giving up: interrupted"* ]]
}

@test "Ctrl-C during a delay ends retry at once, by SIGINT" {
	need_keyboard_signals
	run --separate-stderr "$PTYRUN" -o 'next in' -i '\003' -- "$RETRY" -b 20s false
	[ "$status" -eq 130 ]
	[[ $output == *"giving up: interrupted by SIGINT"* ]]
	# Typically a few ms; the bound leaves room for a loaded machine.
	[[ $stderr =~ ended\ ([0-9]+)\ ms\ after ]]
	[ "${BASH_REMATCH[1]}" -lt 250 ]
}

@test "an attempt reads a line typed at the terminal, and gets it back after" {
	run --separate-stderr "$PTYRUN" -o 'say something' -i 'hello\n' -o 'shell has it' -- \
	    sh -c '"$0" -b 10ms sh -c '\''[ "$RETRY_ATTEMPT" = 1 ] && exit 1
		echo say something; read -r line; echo "read: $line"'\''
		[ "$(proc-state $$ tpgid)" -eq "$(proc-state $$ pgid)" ] && echo shell has it' "$RETRY"
	[ "$status" -eq 0 ]
	[[ $output == *"read: hello"* ]]
	[[ $output == *"shell has it"* ]]
}

@test "the attempt runs in the foreground in a group of its own" {
	run --separate-stderr "$PTYRUN" -- "$RETRY" -n1 \
	    sh -c 'echo "pgid=$(proc-state $$ pgid) tpgid=$(proc-state $$ tpgid) retry=$(proc-state $PPID pgid)"'
	[ "$status" -eq 0 ]
	[[ $output =~ pgid=\ *([0-9]+)\ tpgid=\ *([0-9]+)\ retry=\ *([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[3]}" ]
}

@test "with stty tostop, output that retry relays for the attempt holding the terminal does not stop retry" {
	# retry is outside the foreground group while the attempt has it: its
	# writes to the terminal raised SIGTTOU, and the run hung stopped.
	run --separate-stderr "$PTYRUN" -t 5000 -- sh -c 'stty tostop
		"$0" -n 1 --on-output zzz --stop-on-output yyy sh -c "echo from-the-attempt"
		echo "status $?"' "$RETRY"
	[ "$status" -eq 0 ]
	[[ $output == *"from-the-attempt"* ]]
	[[ $output == *"status 0"* ]]
}

@test "retry in the background does not take the terminal" {
	run --separate-stderr "$PTYRUN" -b -- "$RETRY" -n1 \
	    sh -c 'echo "pgid=$(proc-state $$ pgid) tpgid=$(proc-state $$ tpgid)"'
	[ "$status" -eq 0 ]
	[[ $output =~ pgid=\ *([0-9]+)\ tpgid=\ *([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]
}

@test "Ctrl-Z stops the attempt and retry as one job; fg resumes both" {
	run --separate-stderr "$PTYRUN" -o ready -i '\032' -z -p 20 -c -o done -- \
	    "$RETRY" -b 10ms sh -c 'echo ready; i=0
		while [ $i -lt 20000 ]; do i=$((i + 1)); done; echo done'
	[ "$status" -eq 0 ]
	[[ $stderr == "ptyrun: stopped by signal $(kill -l TSTP)"* ]]
	[[ $output == *done* ]]
}

@test "after fg the attempt has the terminal again and can read from it" {
	run --separate-stderr "$PTYRUN" -o ready -i '\032' -z -p 20 -c -p 50 -i 'typed\n' -o 'got' -- \
	    "$RETRY" -b 10ms sh -c 'echo ready; read -r l; echo "got $l"'
	[ "$status" -eq 0 ]
	[[ $output == *"got typed"* ]]
}

@test "an attempt in the background that reads the terminal stops retry too" {
	# cat: busybox ash's read builtin polls first, and poll(2) raises no
	# SIGTTIN; read(2) does.
	run --separate-stderr "$PTYRUN" -b -z -k 9 -- "$RETRY" -n1 cat
	[ "$status" -eq 137 ]
	[[ $stderr == *"ptyrun: stopped by signal $(kill -l TTIN)"* ]]
}

@test "SIGINT sent to retry's PID by another process while the attempt holds the terminal is not the keyboard's: retry's group does not get it" {
	need_keyboard_signals
	cd "$BATS_TEST_TMPDIR"
	# A sibling in retry's process group, as a calling script would be:
	# sh starts it, then retry takes sh's place as the group's leader.
	( wait_for rpid 100 && kill -INT "$(cat rpid)" ) 3>&- &
	run --separate-stderr "$PTYRUN" -o ready -- sh -c '
		with-signals -d INT catch-signal sib &
		while [ ! -e sib.ready ]; do sleep 0.01; done
		exec "$0" -n 3 -b 10ms sh -c "echo \$PPID >rpid; echo ready; read -r line"' \
	    "$RETRY"
	echo "status $status, output: $output"
	kill "$(cat sib.ready)" 2>/dev/null || true
	# retry forwarded it and died of it, as a run told to stop does ...
	[ "$status" -eq 130 ]
	[[ $output == *"retry: attempt 1/3 killed by SIGINT; giving up: interrupted by SIGINT"* ]]
	# ... but did not pass it on as if the terminal had sent it.
	[ ! -e sib ] || [ "$(cat sib)" != INT ]
}

@test "at a terminal, a run that finds the circuit open says so at once, not after the cool-down" {
	need_keyboard_signals
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	"$RETRY" -q -n 1 --circuit c --trip 1 --cool 1h false || true
	run --separate-stderr "$PTYRUN" -t 5000 -o 'circuit c is open; waiting' \
	    -i '\003' -- "$RETRY" --circuit c true
	echo "status $status, output: $output"
	[ "$status" -eq 130 ]
	matches "$output" 'retry: circuit c is open; waiting [0-9]+\.[0-9]{3}s'
	[[ $output == *"interrupted by SIGINT before the first attempt"* ]]
}
