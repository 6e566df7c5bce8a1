#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# action.yml, run as GitHub's runner runs a composite action's steps: the
# action's checkout at $GITHUB_ACTION_PATH, each "run:" written to a file
# and run by "bash --noprofile --norc -eo pipefail FILE" (shell: bash) in
# the job's workspace, and each line the step adds to $GITHUB_PATH put in
# front of PATH for the steps after it.
load helpers/common

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	unset GITHUB_ACTIONS GITLAB_CI GITHUB_STEP_SUMMARY GITHUB_OUTPUT
}

# steps: each step of action.yml as "SHELL<TAB>RUN", in order.  The file
# keeps every step to a name, one "shell:" and a one-line "run:", in a
# composite action; anything else (env:, if:, a block "run: |") fails
# the test rather than being misread.
steps() {
	awk '
	    /^  using: / { using = $2 }
	    /^    - / { if (n++) print sh "\t" run; sh = run = ""; sub(/^    - /, "      ") }
	    /^      [a-z-]+:/ && !/^      (name|shell|run): / { bad = "step key " $1 }
	    /^      shell: / { sh = substr($0, 14) }
	    /^      run: / { run = substr($0, 12) }
	    /^      run: [|>]/ { bad = "a block run:" }
	    END {
		if (n) print sh "\t" run
		if (using != "composite") bad = "using: " using
		if (bad != "") { print "action.yml: " bad >"/dev/stderr"; exit 1 }
	    }' "$TOP/action.yml"
}

# job: a runner's job with a copy of the checkout that the build needs.
job() {
	action=$BATS_TEST_TMPDIR/_actions/retry
	work=$BATS_TEST_TMPDIR/workspace
	mkdir -p "$action" "$work"
	cp "$TOP"/Makefile "$TOP"/*.c "$TOP"/*.h "$action/"
	export GITHUB_ACTIONS=true GITHUB_ACTION_PATH=$action \
	    GITHUB_PATH=$BATS_TEST_TMPDIR/path \
	    GITHUB_STEP_SUMMARY=$BATS_TEST_TMPDIR/summary \
	    GITHUB_OUTPUT=$BATS_TEST_TMPDIR/output
	: >"$GITHUB_PATH"
	: >"$GITHUB_STEP_SUMMARY"
	: >"$GITHUB_OUTPUT"
}

# run_steps: every step of the action, as the runner runs it.
run_steps() {
	local sh run n=0
	steps >"$BATS_TEST_TMPDIR/steps" || return 1
	while IFS=$'\t' read -r sh run; do
		[ "$sh" = bash ] || { echo "step $n: shell '$sh', not bash"; return 1; }
		n=$((n + 1))
		printf '%s\n' "$run" >"$BATS_TEST_TMPDIR/step$n.sh"
		(cd "$work" && bash --noprofile --norc -eo pipefail \
		    "$BATS_TEST_TMPDIR/step$n.sh") || return 1
	done <"$BATS_TEST_TMPDIR/steps"
	[ "$n" -gt 0 ] || { echo "action.yml has no steps"; return 1; }
}

# later_path: PATH in a later step, the lines of $GITHUB_PATH first.
later_path() {
	local dir p=$PATH
	while IFS= read -r dir; do p=$dir:$p; done <"$GITHUB_PATH"
	echo "$p"
}

@test "action.yml's steps, run as the runner runs them, build retry from the action's checkout and put it on PATH for later steps" {
	job
	run -0 run_steps
	[ -x "$action/retry" ]
	[ "$(cat "$GITHUB_PATH")" = "$action" ]
	PATH=$(later_path) run -0 command -v retry
	[ "$output" = "$action/retry" ]
	PATH=$(later_path) run -0 retry --version
	[ "$output" = "$("$RETRY" --version)" ]
}

@test "in a later step of a job that used the action, retry folds each attempt in a GitHub group without being told" {
	job
	run -0 run_steps
	PATH=$(later_path) run -1 retry -n 2 -b 10ms -- sh -c 'echo attempt; exit 1'
	[ "$(grep -c '^::group::' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^::endgroup::' <<<"$output")" -eq 2 ]
	grep -q '^::error' <<<"$output"
	[ -s "$GITHUB_STEP_SUMMARY" ]
}
