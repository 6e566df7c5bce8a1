#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# --metrics FILE: Prometheus's text format that promtool accepts and a
# real node_exporter serves, written whole under SIGKILL, the last success
# carried over a failed run, and refused up front where it cannot go.
# promtool and node_exporter come from Debian's prometheus and
# prometheus-node-exporter packages; without them those tests skip.
load helpers/common

setup() {
	in_test_dir
	mkdir text
}

teardown() {
	kill_later
}

# gauge FILE NAME: the value of NAME's sample in FILE.
gauge() {
	awk -v n="$2" 'index($0, n "{") == 1 { print $NF }' "$1"
}

need_promtool() {
	command -v promtool >/dev/null ||
	    skip "no promtool: Debian's prometheus package (make test gets it as root unless RETRY_NO_FETCH=1)"
}

@test "--metrics: every gauge the issue names, with HELP and TYPE, which promtool accepts" {
	need_promtool
	local before after
	before=$(date +%s)
	run -0 --separate-stderr "$RETRY" -n 4 -b 10ms -j none \
	    --metrics text/nightly.prom flaky state 2
	after=$(date +%s)
	cat text/nightly.prom
	promtool check metrics <text/nightly.prom
	local g
	for g in run_start_timestamp_seconds run_end_timestamp_seconds \
	    last_success_timestamp_seconds exit_status attempts \
	    sleep_seconds duration_seconds passed_after_retries outcome; do
		grep -qx "# HELP retry_$g .*" text/nightly.prom
		grep -qx "# TYPE retry_$g gauge" text/nightly.prom
	done
	[ "$(gauge text/nightly.prom retry_exit_status)" = 0 ]
	[ "$(gauge text/nightly.prom retry_attempts)" = 3 ]
	[ "$(gauge text/nightly.prom retry_passed_after_retries)" = 1 ]
	grep -qx 'retry_outcome{job="nightly",outcome="success"} 1' \
	    text/nightly.prom
	# The times agree: it ended after it began, and at its last success;
	# it slept two delays of 10 and 20 ms, within its duration; and it ran
	# within the wall-clock seconds read around it (not around promtool,
	# which a loaded machine may take seconds to start).
	local start end last sleep dur
	start=$(gauge text/nightly.prom retry_run_start_timestamp_seconds)
	end=$(gauge text/nightly.prom retry_run_end_timestamp_seconds)
	last=$(gauge text/nightly.prom retry_last_success_timestamp_seconds)
	sleep=$(gauge text/nightly.prom retry_sleep_seconds)
	dur=$(gauge text/nightly.prom retry_duration_seconds)
	awk -v s="$start" -v e="$end" -v l="$last" -v z="$sleep" -v d="$dur" \
	    -v b="$before" -v a="$after" 'BEGIN { exit !(s <= e && l == e &&
	    z >= 0.03 && z <= d && d < 10 && s >= b && e < a + 1) }'
	[ "$(mode_of text/nightly.prom)" = 644 ]
}

@test "--metrics: a failed run keeps the last success of the run before; a FILE missing, or not this user's, starts from 0" {
	need_promtool
	run -0 "$RETRY" -n 1 --metrics text/job.prom true
	local before
	before=$(gauge text/job.prom retry_last_success_timestamp_seconds)
	[ "$before" != 0 ]
	run -3 --separate-stderr "$RETRY" -n 2 -b 1ms --metrics text/job.prom \
	    sh -c 'exit 3'
	promtool check metrics <text/job.prom
	[ "$(gauge text/job.prom retry_last_success_timestamp_seconds)" = "$before" ]
	[ "$(gauge text/job.prom retry_exit_status)" = 3 ]
	[ "$(gauge text/job.prom retry_passed_after_retries)" = 0 ]
	grep -qx 'retry_outcome{job="job",outcome="attempts_exhausted"} 1' \
	    text/job.prom
	# Missing: 0.
	run -1 "$RETRY" -n 1 --metrics text/new.prom false
	[ "$(gauge text/new.prom retry_last_success_timestamp_seconds)" = 0 ]
}

@test "--metrics: the last success in a FILE of another user's is not believed" {
	need_root_and_nobody
	printf 'retry_last_success_timestamp_seconds{job="job"} 1234\n' \
	    >text/job.prom
	chown nobody text/job.prom
	run -1 "$RETRY" -n 1 --metrics text/job.prom false
	[ "$(gauge text/job.prom retry_last_success_timestamp_seconds)" = 0 ]
	[ "$(owner_of text/job.prom)" = root ]
}

@test "--metrics: the last success in a FILE with another name (a hard link) is believed, a regular file of the user's; a circuit record with one is not" {
	# path_own_file()'s rule for both; the record's alone asks for one name.
	printf '# kept\nretry_last_success_timestamp_seconds{job="job"} 1234\n' \
	    >text/job.prom
	ln text/job.prom linked
	run -1 "$RETRY" -n 1 --metrics text/job.prom false
	[ "$(gauge text/job.prom retry_last_success_timestamp_seconds)" = 1234 ]
	# Replaced beside it, not written through: the other name is the old.
	[ "$(head -n 1 linked)" = "# kept" ]
	mkdir -m 700 state
	export RETRY_STATE_DIR=$PWD/state
	"$RETRY" -q -n 1 --circuit hl false || true
	ln state/hl other
	run -125 --separate-stderr "$RETRY" -n 1 --circuit hl false
	expect_stderr "retry: record $PWD/state/hl has another name (a hard link); not used"
}

@test "--metrics: the job label is FILE's name less .prom, escaped as the format wants" {
	need_promtool
	run -1 "$RETRY" -n 1 --metrics 'text/we"ird\job.prom' false
	promtool check metrics <'text/we"ird\job.prom'
	grep -qF 'retry_attempts{job="we\"ird\\job"} 1' 'text/we"ird\job.prom'
	run -1 "$RETRY" -n 1 --metrics text/plain false
	grep -qF 'retry_attempts{job="plain"} 1' text/plain
}

# repeat N TEXT: TEXT N times.
repeat() {
	local i
	for i in $(seq "$1"); do
		printf '%s' "$2"
	done
}

# tricky_names: one a line, names whose labels 0.3 got wrong, or got
# right only by luck: a two-byte and a four-byte character across byte 253
# of the escaped label (where 0.3 cut it, inside the character), and a
# name with ", \ and a newline.  NAME.prom is 239 or 241 bytes: the
# longest that a temporary name leaves (outfile.c).
tricky_names() {
	local a
	a=$(repeat 212 a)
	printf '%s\n' "$(repeat 20 '"')${a}é" "$(repeat 20 '\')${a}🙂"
}

@test "--metrics: the job label is the whole name, never cut inside a character, with \\, \" and a newline escaped" {
	local name label names
	mapfile -t names < <(tricky_names)
	[ "${#names[@]}" -eq 2 ]
	for name in "${names[@]}"; do
		run -0 "$RETRY" -n 1 --metrics "text/$name.prom" true
		label=${name//\\/\\\\}
		label=${label//\"/\\\"}
		grep -qxF "retry_attempts{job=\"$label\"} 1" "text/$name.prom"
	done
	run -0 "$RETRY" -n 1 --metrics $'text/new\nline "q" \\b é.prom' true
	grep -qxF 'retry_attempts{job="new\nline \"q\" \\b é"} 1' \
	    $'text/new\nline "q" \\b é.prom'
}

@test "--metrics: promtool accepts the labels of names with \", \\, a newline and characters across byte 253" {
	need_promtool
	local name names
	mapfile -t names < <(tricky_names)
	for name in "${names[@]}"; do
		run -0 "$RETRY" -n 1 --metrics "text/$name.prom" true
		promtool check metrics <"text/$name.prom"
	done
	run -0 "$RETRY" -n 1 --metrics $'text/new\nline "q" \\b é.prom' true
	promtool check metrics <$'text/new\nline "q" \\b é.prom'
}

@test "--metrics: a name that is not UTF-8 is refused at the start, 125, nothing run, since a label must be UTF-8" {
	local bad shown
	# A byte that starts nothing, a sequence cut short by .prom, a
	# surrogate, an overlong /.
	for bad in '\xff' '\xc3' '\xed\xa0\x80' '\xc0\xaf'; do
		shown="x${bad}y"
		[ "$bad" = '\xc3' ] && shown="x$bad"
		run -125 --separate-stderr "$RETRY" --metrics \
		    "text/$(printf "$shown").prom" touch ran
		[ "$stderr" = "retry: --metrics 'text/$shown.prom': the name is not UTF-8, which its job label must be; rename it" ]
		[ ! -e ran ]
		[ -z "$(ls text)" ]
	done
	# Only the name makes the label: a directory's may be anything.
	mkdir "text/$(printf 'd\xff')"
	run -0 "$RETRY" --metrics "text/$(printf 'd\xff')/job.prom" true
	grep -qx 'retry_attempts{job="job"} 1' "text/$(printf 'd\xff')/job.prom"
}

@test "--metrics: a symbolic link at FILE that may be followed: what it leads to is replaced, never written through" {
	echo old >target
	ln -s ../target text/job.prom
	local before
	before=$(ls -i target | awk '{ print $1 }')
	run -0 "$RETRY" -n 1 --metrics text/job.prom true
	[ -L text/job.prom ]
	grep -q '^retry_exit_status{job="job"} 0$' target
	[ "$(ls -i target | awk '{ print $1 }')" != "$before" ]
	# Another user's links: tests/links.bats.
}

@test "--metrics: a SIGKILL at any moment leaves the old FILE or the new one, whole, and no temporary file that a collector reads" {
	need_promtool
	"$RETRY" -n 1 --metrics text/job.prom true
	local i pid
	for i in $(seq 1 30); do
		"$RETRY" -n 2 -b 1ms -j none --metrics text/job.prom \
		    sh -c 'exit 1' 2>/dev/null 3>&- &
		pid=$!
		sleep "0.00$((RANDOM % 10))"
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		promtool check metrics <text/job.prom
		[ "$(grep -c '^retry_' text/job.prom)" -eq 9 ]
	done
	# Only FILE ends in .prom: a killed run's temporary file does not.
	[ "$(ls text | grep -c '\.prom$')" -eq 1 ]
	# The next run sweeps what killed runs left.
	"$RETRY" -n 1 --metrics text/job.prom true
	[ "$(ls text)" = job.prom ]
}

@test "--metrics: a directory that is missing or not writable, FILE a directory, or an empty FILE: 125, nothing run" {
	run -125 --separate-stderr "$RETRY" --metrics nosuch/job.prom touch ran
	[ "$stderr" = "retry: --metrics 'nosuch/job.prom': No such file or directory" ]
	run -125 --separate-stderr "$RETRY" --metrics text touch ran
	[ "$stderr" = "retry: --metrics 'text': Is a directory" ]
	run -125 --separate-stderr "$RETRY" --metrics '' touch ran
	[ "$stderr" = "retry: --metrics '': must not be empty" ]
	[ ! -e ran ]
}

@test "--metrics: a real node_exporter serves the file from its textfile directory" {
	command -v prometheus-node-exporter >/dev/null ||
	    skip "no node_exporter: Debian's prometheus-node-exporter package (make test gets it as root unless RETRY_NO_FETCH=1)"
	command -v curl >/dev/null || skip "no curl to scrape node_exporter with"
	run -0 "$RETRY" -n 3 -b 1ms --metrics text/nightly.prom flaky state 1
	run -1 "$RETRY" -n 1 --metrics text/other.prom false
	local name names
	mapfile -t names < <(tricky_names)
	for name in "${names[@]}"; do
		run -0 "$RETRY" -n 1 --metrics "text/$name.prom" true
	done
	local port pid n=0
	port=$(slow-proxy -p)
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
	    --collector.disable-defaults --collector.textfile \
	    --collector.textfile.directory="$PWD/text" 2>exporter.log 3>&- &
	pid=$!
	later "$pid"
	until curl -fsS "http://127.0.0.1:$port/metrics" >scraped 2>/dev/null; do
		alive "$pid" || { cat exporter.log; false; }
		[ "$n" -lt 100 ]
		sleep 0.05
		n=$((n + 1))
	done
	kill -TERM "$pid"
	grep -qx 'retry_exit_status{job="nightly"} 0' scraped
	grep -qx 'retry_exit_status{job="other"} 1' scraped
	grep -qx 'retry_passed_after_retries{job="nightly"} 1' scraped
	# The tricky names' labels too, whole.
	[ "$(grep -c '^retry_exit_status{job=' scraped)" -eq 4 ]
	grep -qF "aé\"} 0" scraped
	grep -qF "a🙂\"} 0" scraped
	# No error reading the files.
	grep -qx 'node_textfile_scrape_error 0' scraped
}

@test "--metrics: a device or a FIFO at FILE is refused, never replaced (as root, /dev/null would be)" {
	need_root_and_nobody
	mknod text/fakenull c 1 3
	mkfifo text/fifo
	run -125 --separate-stderr "$RETRY" --metrics text/fakenull touch ran
	[ "$stderr" = "retry: --metrics 'text/fakenull': not a regular file, which it would replace" ]
	run -125 --separate-stderr "$RETRY" --metrics text/fifo touch ran
	[ ! -e ran ]
	[ -c text/fakenull ]
	[ -p text/fifo ]
}
