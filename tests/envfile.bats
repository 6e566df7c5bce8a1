#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# RETRY_ENV_FILE: what an attempt or an --on-retry hook writes there, in
# GITHUB_ENV's syntax, is set for the attempts that follow; the names
# refused, the file over 64 KiB or malformed refused whole; where the
# file is and when it goes.
load helpers/common

setup() {
	in_test_dir
	unset RETRY_ENV_FILE MIRROR TOKEN XDG_RUNTIME_DIR
}

# The variables an attempt sees, a line per attempt, into seen.
SEEN='echo "$RETRY_ATTEMPT ${MIRROR-unset} ${TOKEN-unset}" >>seen'

@test "a hook that writes MIRROR=b makes the next attempt see it, and every later one; the hook itself does not" {
	run -1 --separate-stderr "$RETRY" -q -n 3 -b 1ms \
	    --on-retry 'echo "hook ${MIRROR-unset}" >>seen; echo MIRROR=b >>"$RETRY_ENV_FILE"' \
	    sh -c "$SEEN; exit 1"
	expect_stderr ""
	[ "$(cat seen)" = "1 unset unset
hook unset
2 b unset
hook b
3 b unset" ]
}

@test "an attempt writing it works too; values persist until one writes the name again" {
	run -0 --separate-stderr "$RETRY" -q -n 4 -b 1ms sh -c "$SEEN"'
		case $RETRY_ATTEMPT in
		1) echo MIRROR=a >>"$RETRY_ENV_FILE" ;;
		3) echo MIRROR=c >>"$RETRY_ENV_FILE"; echo TOKEN=t >>"$RETRY_ENV_FILE" ;;
		4) exit 0 ;;
		esac
		exit 1'
	expect_stderr ""
	[ "$(cat seen)" = "1 unset unset
2 a unset
3 a unset
4 c t" ]
}

@test "the attempt's and the hook's lines both count, the later winning; an empty value is set, empty lines skipped" {
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms \
	    --on-retry 'printf "\nMIRROR=hook\nEMPTY=\n" >>"$RETRY_ENV_FILE"' \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ] &&
		{ echo "$MIRROR ${TOKEN-unset} [${EMPTY-unset}]"; exit 0; }
		printf "MIRROR=attempt\nTOKEN=a=b=c\n" >"$RETRY_ENV_FILE"; exit 1'
	[ "$output" = "hook a=b=c []" ]
}

@test "multi-line values: NAME<<DELIM ... DELIM, as in GITHUB_ENV" {
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms sh -c '
		if [ "$RETRY_ATTEMPT" = 2 ]; then
			printf "[%s]\n" "$TOKEN" "$MIRROR" "$EMPTY"; exit 0
		fi
		printf "TOKEN<<EOF\nline 1\n\nline=3 <<EOF\nEOF\nMIRROR<<x\nb\nx\nEMPTY<<E\nE\n" >>"$RETRY_ENV_FILE"
		exit 1'
	expect_stderr ""
	[ "$output" = "[line 1

line=3 <<EOF]
[b]
[]" ]
}

@test "hostile names are refused, one warning each, and nothing else changes" {
	PATH_BEFORE=$PATH
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms \
	    --on-retry 'printf "1A=x\nA-B=x\n=x\nRETRY_KEY=x\nRETRY_ATTEMPT=9\nPATH=/nowhere\nLD_PRELOAD=/x.so\nLD_LIBRARY_PATH=/x\nIFS=x\nMIRROR=b\n" >>"$RETRY_ENV_FILE"' \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ] || exit 1
		echo "$MIRROR ${RETRY_KEY-unset} ${LD_PRELOAD-unset} ${LD_LIBRARY_PATH-unset} $(env | grep -c "^IFS=")"
		[ "$PATH" = "$0" ] && echo same PATH' "$PATH_BEFORE"
	expect_stderr "retry: RETRY_ENV_FILE: '1A' not set: not a name ([A-Za-z_][A-Za-z0-9_]*)
retry: RETRY_ENV_FILE: 'A-B' not set: not a name ([A-Za-z_][A-Za-z0-9_]*)
retry: RETRY_ENV_FILE: '' not set: not a name ([A-Za-z_][A-Za-z0-9_]*)
retry: RETRY_ENV_FILE: 'RETRY_KEY' not set: a name of retry's own (RETRY_*)
retry: RETRY_ENV_FILE: 'RETRY_ATTEMPT' not set: a name of retry's own (RETRY_*)
retry: RETRY_ENV_FILE: 'PATH' not set: needs --env-from-hooks all
retry: RETRY_ENV_FILE: 'LD_PRELOAD' not set: needs --env-from-hooks all
retry: RETRY_ENV_FILE: 'LD_LIBRARY_PATH' not set: needs --env-from-hooks all
retry: RETRY_ENV_FILE: 'IFS' not set: needs --env-from-hooks all"
	[ "$output" = "b unset unset unset 0
same PATH" ]
}

@test "past 16 names refused, the rest are counted in one line" {
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms \
	    --on-retry 'for i in $(seq 20); do echo "RETRY_X$i=1"; done >>"$RETRY_ENV_FILE"; echo MIRROR=b >>"$RETRY_ENV_FILE"' \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ] || exit 1; echo "$MIRROR"'
	[ "$output" = b ]
	[ "${#stderr_lines[@]}" -eq 17 ]
	[ "${stderr_lines[15]}" = "retry: RETRY_ENV_FILE: 'RETRY_X16' not set: a name of retry's own (RETRY_*)" ]
	[ "${stderr_lines[16]}" = "retry: RETRY_ENV_FILE: 4 more names not set" ]
}

@test "--env-from-hooks all lets PATH, LD_* and IFS through, never RETRY_*" {
	# env itself, retried on its success: no shell resets IFS on the way.
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms -o 0 --env-from-hooks all \
	    --on-retry 'printf "LD_X=y\nIFS=:\nRETRY_MAX_ATTEMPTS=9\n" >>"$RETRY_ENV_FILE"' \
	    env
	expect_stderr "retry: RETRY_ENV_FILE: 'RETRY_MAX_ATTEMPTS' not set: a name of retry's own (RETRY_*)"
	[ "$(grep -E '^(LD_X|IFS|RETRY_MAX_ATTEMPTS)=' <<<"$output" | sort)" = "IFS=:
LD_X=y
RETRY_MAX_ATTEMPTS=2
RETRY_MAX_ATTEMPTS=2" ]
	# The PATH set finds the programs the attempt runs, and the attempt.
	mkdir bin
	printf '#!/bin/sh\necho from bin\n' >bin/tool
	chmod +x bin/tool
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms --env-from-hooks all \
	    --on-retry 'printf "PATH=%s/bin:%s\n" "$PWD" "$PATH" >>"$RETRY_ENV_FILE"' \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ] || exit 1; tool'
	expect_stderr ""
	[ "$output" = "from bin" ]
}

@test "a file over 64 KiB is refused whole with one warning, and emptied; one of 64 KiB is read" {
	run -0 --separate-stderr "$RETRY" -q -n 3 -b 1ms sh -c "$SEEN"'
		case $RETRY_ATTEMPT in
		1) { echo MIRROR=big; head -c 65536 /dev/zero | tr "\0" x | sed "s/^/PAD=/"; } >"$RETRY_ENV_FILE" ;;
		2) { echo TOKEN=fits; head -c 65530 /dev/zero | tr "\0" x | sed "s/^/PAD=/"; } | head -c 65536 >"$RETRY_ENV_FILE" ;;
		3) exit 0 ;;
		esac
		exit 1'
	expect_stderr "retry: RETRY_ENV_FILE: over 64 KiB, refused whole: nothing set"
	[ "$(cat seen)" = "1 unset unset
2 unset unset
3 unset fits" ]
}

@test "a malformed line or an unterminated heredoc refuses the whole file with one warning" {
	run -0 --separate-stderr "$RETRY" -q -n 3 -b 1ms sh -c "$SEEN"'
		case $RETRY_ATTEMPT in
		1) printf "MIRROR=a\nno equals sign\nTOKEN=t\n" >"$RETRY_ENV_FILE" ;;
		2) printf "MIRROR=a\nTOKEN<<EOF\nnever ended\n" >"$RETRY_ENV_FILE" ;;
		3) exit 0 ;;
		esac
		exit 1'
	expect_stderr "retry: RETRY_ENV_FILE: line 2 is neither NAME=VALUE nor NAME<<DELIMITER: nothing set
retry: RETRY_ENV_FILE: line 2 starts a value that no delimiter ends: nothing set"
	[ "$(cat seen)" = "1 unset unset
2 unset unset
3 unset unset" ]
}

@test "-v says each name set, never its value" {
	run -0 --separate-stderr "$RETRY" -v -n 2 -b 1ms \
	    --on-retry 'printf "TOKEN=s3cr3t\nMIRROR=b\n" >>"$RETRY_ENV_FILE"' \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ]'
	[ "$(grep -c 'RETRY_ENV_FILE' <<<"$stderr")" -eq 2 ]
	grep -qx 'retry: RETRY_ENV_FILE sets TOKEN' <<<"$stderr"
	grep -qx 'retry: RETRY_ENV_FILE sets MIRROR' <<<"$stderr"
	[[ $stderr != *s3cr3t* ]]
}

@test "the file: a name beside the hint's that the first write makes, read once and removed, gone after the run however it ends" {
	unset XDG_RUNTIME_DIR
	local dir=$TMPDIR/retry-$(id -u)
	run -1 --separate-stderr "$RETRY" -q -n 3 -b 1ms sh -c '
		echo "$RETRY_ENV_FILE" >>paths
		[ -e "$RETRY_ENV_FILE" ] && echo there >>paths
		echo "MIRROR=$RETRY_ATTEMPT" >>"$RETRY_ENV_FILE"; exit 1'
	expect_stderr ""
	[ "$(sort -u paths | wc -l)" -eq 1 ]
	matches "$(head -1 paths)" "^$dir/[0-9]+-[0-9a-f]{16}\.env\$"
	[ -z "$(ls -A "$dir")" ]
	# Passed, or stopped by a signal in an attempt that wrote it.
	run -0 "$RETRY" -n 3 sh -c 'echo A=1 >"$RETRY_ENV_FILE"'
	run -143 "$RETRY" -n 3 sh -c 'echo A=1 >"$RETRY_ENV_FILE"; kill -TERM $PPID; sleep 5'
	[ -z "$(ls -A "$dir")" ]
	# An attempt that put a directory there.
	run -1 --separate-stderr "$RETRY" -q -n 2 -b 1ms \
	    sh -c 'echo "$RETRY_ENV_FILE" >path; mkdir "$RETRY_ENV_FILE"; exit 1'
	expect_stderr "retry: RETRY_ENV_FILE $(cat path) not read: not a regular file"
	[ -z "$(ls -A "$dir")" ]
	# Killed with SIGKILL, a file left is swept by the next run that reads one.
	"$RETRY" -n 2 sh -c 'echo A=1 >"$RETRY_ENV_FILE"; echo "$RETRY_ENV_FILE" >left; exec sleep 5' 3>&- &
	local pid=$!
	wait_for_text left env
	kill -KILL "$pid"
	wait "$pid" || true
	[ -e "$(cat left)" ]
	run -0 "$RETRY" -n 2 -b 1ms sh -c '[ "$RETRY_ATTEMPT" = 2 ] ||
		{ echo A=1 >"$RETRY_ENV_FILE"; exit 1; }'
	[ -z "$(ls -A "$dir")" ]
}

@test "a FIFO left at the path holds retry neither before the next attempt nor at the end" {
	run -1 --separate-stderr "$RETRY" -q -n 2 -b 1ms \
	    sh -c 'echo "$RETRY_ENV_FILE" >path; rm -f "$RETRY_ENV_FILE"; mkfifo "$RETRY_ENV_FILE"; exit 1'
	expect_stderr "retry: RETRY_ENV_FILE $(cat path) not read: not a regular file"
	[ ! -e "$(cat path)" ]
}

@test "a run of one attempt has no RETRY_ENV_FILE, not even an inherited one" {
	RETRY_ENV_FILE=/tmp/outer run -0 "$RETRY" -n 1 sh -c 'echo "${RETRY_ENV_FILE-unset}"'
	[ "$output" = unset ]
	# Unless --reset-after may count from 1 again.
	run -0 "$RETRY" -n 1 --reset-after 1h sh -c 'echo "${RETRY_ENV_FILE-unset}"'
	matches "$output" "/[0-9]+-[0-9a-f]{16}\.env\$"
}

@test "TMPDIR missing: RETRY_ENV_FILE unset, said with -v only, the run goes on" {
	RETRY_ENV_FILE=/tmp/outer TMPDIR=$BATS_TEST_TMPDIR/none run -1 --separate-stderr \
	    "$RETRY" -q -n 2 -b 1ms sh -c 'echo "${RETRY_ENV_FILE-unset}"; exit 1'
	[ "$output" = "unset
unset" ]
	[ "$stderr" = "" ]
	TMPDIR=$BATS_TEST_TMPDIR/none run -1 --separate-stderr \
	    "$RETRY" -v -n 2 -b 1ms false
	[ "$(grep -c 'RETRY_ENV_FILE is unset' <<<"$stderr")" -eq 1 ]
	grep -qxF "retry: RETRY_ENV_FILE is unset: no private directory: $BATS_TEST_TMPDIR/none/retry-$(id -u): No such file or directory" <<<"$stderr"
}

@test "a TMPDIR that an attempt sets is the next attempts', not retry's: -O's files stay where the run began" {
	run -1 --separate-stderr "$RETRY" -n 3 -b 1ms -f 1 -j none -O -- \
	    sh -c 'echo TMPDIR=/nonexistent >>"$RETRY_ENV_FILE"; echo "t=$TMPDIR"; exit 1'
	[ "$output" = "t=/nonexistent" ]
	[ "${stderr_lines[-1]}" = "retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	[ "$(grep -c '^t=' <<<"$stderr")" -eq 2 ]
}

@test "--on-start may write it too: the first attempt finds the variable" {
	run -0 "$RETRY" -n 2 --on-start 'echo MIRROR=a >>"$RETRY_ENV_FILE"' \
	    sh -c 'echo "$MIRROR"'
	[ "$output" = a ]
}
