#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# retry inside a script at a real terminal: tests/helpers/ptyrun plays
# the interactive shell and starts a dash or bash script as its foreground
# job; retry is then one process of the script's process group, not its
# leader.
# Ctrl-C and Ctrl-Z must act on the whole script, as for the plain command.
load helpers/common

PTYRUN=$BATS_TEST_DIRNAME/helpers/ptyrun
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-30}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The shells to try: dash and bash, where they are installed and work
# (make check-busybox mounts busybox over dash, which it cannot be).
shells() {
	local sh
	for sh in dash bash; do
		"$sh" -c 'exit 0' >/dev/null 2>&1 && echo "$sh"
	done
}

# The attempts wait in a builtin (read), not in a child of their own: a key
# that hits a shell's vfork() of a command reaches a half-made child.

@test "Ctrl-C during an attempt in a dash or bash script kills the script by SIGINT" {
	need_keyboard_signals
	local sh
	for sh in $(shells); do
		run --separate-stderr "$PTYRUN" -o attempt -p 100 -i '\003' -- "$sh" -c '
			"$0" -n 3 -b 10ms sh -c "echo attempt; read -r line"
			echo "AFTER $?"' "$RETRY"
		echo "$sh: status $status, output: $output"
		[ "$status" -eq 130 ]
		[[ $stderr == *"ptyrun: killed by signal 2"* ]]
		[[ $output != *AFTER* ]]
		# One attempt: retry does not go on either.
		[ "$(grep -c attempt <<<"$output")" -eq 2 ]
		[[ $output == *"attempt 1/3 killed by SIGINT; giving up"* ]]
	done
}

@test "Ctrl-C during an attempt runs the script's INT trap, once" {
	need_keyboard_signals
	local sh
	for sh in $(shells); do
		run --separate-stderr "$PTYRUN" -o attempt -p 100 -i '\003' -- "$sh" -c '
			trap "echo TRAPPED; exit 7" INT
			"$0" -n 3 -b 10ms sh -c "echo attempt; read -r line"
			echo "AFTER $?"' "$RETRY"
		echo "$sh: status $status, output: $output"
		[ "$status" -eq 7 ]
		[ "$(grep -c TRAPPED <<<"$output")" -eq 1 ]
		[[ $output != *AFTER* ]]
	done
}

@test "Ctrl-C during a delay in a script kills the script by SIGINT" {
	need_keyboard_signals
	local sh
	for sh in $(shells); do
		run --separate-stderr "$PTYRUN" -o 'next in' -p 50 -i '\003' -- \
		    "$sh" -c '"$0" -b 20s false; echo "AFTER $?"' "$RETRY"
		echo "$sh: status $status, output: $output"
		[ "$status" -eq 130 ]
		[[ $output != *AFTER* ]]
	done
}

@test "Ctrl-Z during an attempt in a script stops the whole job; fg completes the run" {
	local sh
	for sh in $(shells); do
		run --separate-stderr "$PTYRUN" -o attempt -p 100 -i '\032' -z \
		    -p 50 -c -p 100 -i 'typed\n' -o AFTER -- "$sh" -c '
			"$0" -n 3 -b 10ms sh -c "echo attempt; read -r line
				echo \"got \$line\""
			echo "AFTER $?"' "$RETRY"
		echo "$sh: status $status, output: $output, stderr: $stderr"
		[ "$status" -eq 0 ]
		# The shell's job stopped: the script's shell, not retry alone.
		[[ $stderr == *"ptyrun: stopped by signal $(kill -l TSTP)"* ]]
		[[ $output == *"got typed"* ]]
		[[ $output == *"AFTER 0"* ]]
	done
}

@test "after Ctrl-Z and fg in a script, the attempt can still read the terminal" {
	run --separate-stderr "$PTYRUN" -o ready -p 100 -i '\032' -z -p 50 -c \
	    -p 100 -i 'one\n' -o 'got one' -- sh -c '
		"$0" -n 1 sh -c "echo ready; read -r a; echo \"got \$a\""
		echo "AFTER $?"' "$RETRY"
	[ "$status" -eq 0 ]
	[[ $output == *"got one"* ]]
	[[ $output == *"AFTER 0"* ]]
}

@test "retry in an orphaned process group, its attempt reading the terminal, does not spin" {
	[ -r /proc/self/stat ] || skip "no /proc to read CPU times from"
	# The script starts retry in the background and exits: retry's group is
	# orphaned, and a stop that retry passes on to it is discarded.
	"$PTYRUN" -b -t 20000 -p 2500 -- sh -c '"$0" -n 0 -b 100ms -c 200ms \
	    sh -c "exec cat </dev/tty" 2>err 3>&- & echo $! >pid' "$RETRY" 3>&- &
	local ptyrun=$!
	wait_for pid
	sleep 0.3
	local pid t0 t1 c0 c1
	pid=$(cat pid)
	c0=$(cpu_ticks "$pid")
	t0=$(now_ms)
	sleep 1.5
	c1=$(cpu_ticks "$pid")
	t1=$(now_ms)
	kill -TERM "$pid" 2>/dev/null || true
	wait "$ptyrun" || true
	cat err
	# Under 5 % of the wall time (a tick is 10 ms).
	echo "$((c1 - c0)) ticks in $((t1 - t0)) ms"
	[ $(((c1 - c0) * 10 * 100)) -lt $(((t1 - t0) * 5)) ]
	# The attempts were hung up instead, as in an orphaned group.
	grep -q 'killed by SIGHUP' err
}

@test "retry's own failure (125) during an attempt at the terminal gives the terminal back" {
	# The copy of stdin grows past a file size limit: retry fails, 125.
	run --separate-stderr "$PTYRUN" -o 'shell has it' -- sh -c '
		(ulimit -f 50; { sleep 0.3; head -c 1000000 /dev/zero; } |
		    "$0" -I sh -c "trap \"\" XFSZ; echo \$\$ >pid; exec sleep 30")
		echo "status $?"
		[ "$(proc-state $$ tpgid)" -eq "$(proc-state $$ pgid)" ] &&
		    echo "shell has it"' "$RETRY"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"status 125"* ]]
	[[ $output == *"retry: temporary file: File too large"* ]]
	# The attempt went with retry.
	! alive "$(cat pid)" || false
}

# cpu_ticks PID: user plus system time of PID so far, in clock ticks.
cpu_ticks() {
	local f
	read -ra f <"/proc/$1/stat"
	echo $((f[13] + f[14]))
}
