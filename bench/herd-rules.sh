#!/bin/sh
# SPDX-License-Identifier: ISC
# bench/herd-rules.sh [RESULTS.md]: the calls a downstream sees under the
# rules of a shared circuit (issue 32, item 6).  A downstream that fails one
# call in three, called by runs one after another under --trip 5 and under
# --trip 30%/20; and 1 to 200 runs at once whose every attempt fails, under
# --budget 20/1m and under --budget 20%/1m, on the state directory and, when
# redis-server is installed, on a store.  Counts, not speed: a verdict where
# retry-circuit(7) says what to expect.  Prints a section of
# bench/RESULTS.md; given the file, puts it in place of the one an earlier
# run wrote there (at the end if none).  QUICK=1: 30 runs, and 1, 10 and 50
# at once.  `make bench-rules`; bench/run.sh runs it too.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)
bench=$top/bench
retry=$top/retry
results=${1-}
# shellcheck source=bench/lib.sh
. "$bench/lib.sh"
heading='## 12. The rules of a shared circuit: the calls a downstream sees (issue 32)'

if [ "${QUICK:-0}" = 1 ]; then
	mode=quick flap_runs=30 sizes='1 10 50'
else
	mode=full flap_runs=150 sizes='1 10 50 100 200'
fi

say() {
	printf 'bench/herd-rules: %s\n' "$*" >&2
}

if [ ! -x "$retry" ]; then
	say "no ./retry: run make first"
	exit 1
fi

# The same PATH as bench/run.sh's, and nothing inherited that would change
# the runs: an outer retry's attempt (one attempt only), a store, CI lines.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
unset RETRY_ATTEMPT RETRY_DEADLINE RETRY_IDEMPOTENCY_KEY RETRY_MAX_ATTEMPTS \
	RETRY_AFTER_FILE RETRY_STORE GITHUB_ACTIONS GITLAB_CI REDISCLI_AUTH ||
	true

work=$(mktemp -d "${TMPDIR:-/tmp}/retry-bench-rules.XXXXXX")
sock_dir=
server=
stop() {
	if [ -n "$server" ]; then
		kill -TERM "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work" ${sock_dir:+"$sock_dir"}
}
trap stop EXIT
trap 'exit 130' INT TERM

# statuses FILE: the exit statuses listed in FILE, as "14 × 0, 16 × 75".
statuses() {
	sort -n "$1" | uniq -c | awk '{ printf "%s%d × %s", (NR > 1 ? ", " : ""),
	    $1, $2 }'
}

cpu() {
	sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1
}

# wait_lines FILE N SECONDS: until FILE holds N lines, SECONDS at most.
wait_lines() {
	wl=0
	while [ "$(wc -l <"$1")" -lt "$2" ]; do
		[ "$wl" -lt $(($3 * 20)) ] || return 1
		sleep 0.05
		wl=$((wl + 1))
	done
}

load_start=$(loadavg)
# Under make bench, the source that bench/run.sh named before it wrote
# RESULTS.md, which would make the tree look modified by now.
source_id=${BENCH_SOURCE:-$(git --no-optional-locks -C "$top" describe \
    --always --dirty 2>/dev/null || echo 'not a git checkout')}

# --- a flapping downstream ----------------------------------------------------

# flap TAG RULE: $flap_runs runs one after another, under --trip RULE, in a
# fresh directory; a row of the table.  The call at which the circuit
# opened is the downstream's count when a run says so: a run that opens it
# makes no call after the one that opened it, and the next run starts
# after it has ended.
flap() {
	d=$work/flap.$1
	mkdir "$d"
	: >"$d/calls"
	: >"$d/status"
	: >"$d/err"
	opened=- said=
	i=0
	while [ "$i" -lt "$flap_runs" ]; do
		st=0
		RETRY_STATE_DIR=$d/state "$retry" -n 3 -b 1ms -j none -D 2s \
		    --circuit flap --cool 1m --trip "$2" -- \
		    sh "$bench/downstream.sh" flap "$d" </dev/null >/dev/null \
		    2>"$d/run.err" || st=$?
		echo "$st" >>"$d/status"
		cat "$d/run.err" >>"$d/err"
		if [ "$opened" = - ] &&
		    grep -q '^retry: circuit flap opened' "$d/run.err"; then
			opened=$(wc -l <"$d/calls" | tr -d ' ')
			said=$(sed -n 's/^retry: circuit flap opened: //p' \
			    "$d/run.err" | head -n 1)
		fi
		i=$((i + 1))
	done
	record=$(RETRY_STATE_DIR=$d/state "$retry" --circuit-status flap |
	    awk '$1 == "state:" { s = $2 } $1 == "failures:" {
		$1 = ""; f = substr($0, 2) } END { sub(/,$/, "", s)
		printf "%s; failures: %s", s, f }') || true
	awk -v rule="$2" -v opened="$opened" -v said="$said" \
	    -v record="$record" -v statuses="$(statuses "$d/status")" '
	{ n++; a[n] = $1; f[n] = $2; failed += $2; if ($1 > 1) retries++ }
	END {
		# Where retry-circuit(7) opens the circuit, on the calls seen:
		# the Nth failure in a row, or the first failure that finds
		# P% of the last M failed, once M were seen.
		share = rule ~ /%/
		if (share) {
			split(rule, r, /[%\/]/)
			p = r[1]; m = r[3]
		}
		at = 0
		for (k = 1; k <= n && !at; k++) {
			if (!f[k]) {
				row = 0
				continue
			}
			row++
			if (!share) {
				if (row >= rule + 0)
					at = k
				continue
			}
			if (k < m + 0)
				continue
			c = 0
			for (j = k - m + 1; j <= k; j++)
				c += f[j]
			if (c * 100 >= p * m)
				at = k
		}
		after = 0; rafter = 0
		for (k = at + 1; at && k <= n; k++) {
			after++
			if (a[k] > 1)
				rafter++
		}
		if (opened == "-")
			seen = "never"
		else
			seen = sprintf("at call %d (\"%s\")", opened, said)
		if (at)
			expect = sprintf("at call %d", at)
		else
			expect = sprintf("never, in these %d calls", n)
		if (!at && opened == "-")
			v = "never opens: as expected"
		else if (at && opened == at && !after)
			v = sprintf("opens at call %d, no call after: as expected", at)
		else
			v = "**not as expected**"
		printf "| `--trip %s` | %d | %d (%.0f%%) | %d | %s | %s | %s | %s | %s | %s |\n",
		    rule, n, failed, (n ? 100 * failed / n : 0), retries, seen,
		    expect, (at ? after " / " rafter : "–"), record, statuses, v
	}' "$d/calls"
	if grep -v -e '^retry: attempt' -e '^retry: circuit flap' \
	    "$d/err" >"$d/odd"; then
		say "--trip $2: $(head -n 1 "$d/odd")"
	fi
}

say "a flapping downstream: $flap_runs runs under --trip 5, then --trip 30%/20"
flap_load0=$(loadavg)
flap_fs=$(fstype "$work")
flap_table=$(flap count 5; flap share 30%/20)
flap_load1=$(loadavg)

# --- a crowd ------------------------------------------------------------------

# crowd TAG N STORE BUDGET...: N runs at once whose every attempt fails,
# their first attempts held at the barrier until all N have started, so
# that a share counts all of them; prints "N|FIRSTS|RETRIES|STATUSES".
# The gate's writer, in the background, gives each first attempt one
# line and keeps the FIFO open until all have read theirs, so that a
# first attempt slow to open it still finds its line; it is ended by its
# PID if the runs end without opening it (their deadline came first).
crowd() {
	d=$work/crowd.$1
	n=$2 store=$3
	shift 3
	mkdir "$d"
	mkfifo "$d/gate"
	: >"$d/calls"
	: >"$d/released"
	: >"$d/status"
	[ -z "$store" ] || redis-cli -s "$sock_dir/sock" flushall >/dev/null
	pids=
	i=0
	while [ "$i" -lt "$n" ]; do
		# shellcheck disable=SC2086
		RETRY_STATE_DIR=$d/state "$retry" -q -n 3 -b 100ms -j none \
		    -D 5s --trip 100000 --circuit crowd $store "$@" -- \
		    sh "$bench/downstream.sh" down "$d" </dev/null >/dev/null \
		    2>>"$d/err" &
		pids="$pids $!"
		i=$((i + 1))
	done
	wait_lines "$d/calls" "$n" 20 ||
	    say "$1: $(wc -l <"$d/calls" | tr -d ' ') of $n first attempts in 20 s"
	{
		awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) print "" }'
		wait_lines "$d/released" "$n" 10 || true
	} >"$d/gate" &
	gate=$!
	for p in $pids; do
		st=0
		wait "$p" || st=$?
		echo "$st" >>"$d/status"
	done
	kill "$gate" 2>/dev/null || true
	wait "$gate" 2>/dev/null || true
	[ ! -s "$d/err" ] || say "$1: $(head -n 1 "$d/err")"
	awk -v n="$n" -v st="$(statuses "$d/status")" '
	    $1 == 1 { first++ } $1 > 1 { retries++ }
	    END { printf "%d|%d|%d|%s\n", n, first, retries, st }' "$d/calls"
}

# crowd_rows LABEL STORE: a row of the table per size, both budgets; the
# rules: the retries the runs want (2 a run), at most 20 for 20/1m, and
# 3 + 20% of the first attempts, rounded down, for 20%/1m.
crowd_rows() {
	for n in $sizes; do
		fixed=$(crowd "$1.fixed.$n" "$n" "$2" --budget 20/1m)
		share=$(crowd "$1.share.$n" "$n" "$2" --budget 20%/1m --budget-min 3)
		say "$1, $n at once: 20/1m: $fixed; 20%/1m: $share"
		echo "$fixed|$share" | awk -F'|' -v where="$1" '
		function min(a, b) { return a < b ? a : b }
		function per(r, f) { return f ? sprintf("%.2f", r / f) : "–" }
		{
			n = $1
			ef = min(2 * n, 20)
			es = min(2 * n, min(1000, 3 + int(20 * n / 100)))
			ok = $2 == n && $3 == ef && $6 == n && $7 == es &&
			    $4 == n " × 1" && $8 == n " × 1"
			printf "| %s | %d | %d | %d (%d) | %s | %d | %d (%d) | %s | %s; %s | %s |\n",
			    where, n, $2, $3, ef, per($3, $2), $6, $7, es,
			    per($7, $6), $4, $8,
			    ok ? "as the rules say" : "**not as the rules say**"
		}'
	done
}

say "a crowd: $sizes runs at once, under --budget 20/1m and 20%/1m"
crowd_load0=$(loadavg)
crowd_fs=$(fstype "$work")
crowd_table=$(crowd_rows 'state directory' '')

redis_note=
if ! command -v redis-server >/dev/null 2>&1 ||
    ! command -v redis-cli >/dev/null 2>&1; then
	redis_note="The same through a store was skipped: redis-server or redis-cli is not installed here (Debian's redis-server: \`make deps\`)."
else
	# A Unix socket's path must be short: /tmp, not a deep $TMPDIR.
	sock_dir=$(mktemp -d /tmp/retry-bench-rules.XXXXXX)
	redis-server --port 0 --unixsocket "$sock_dir/sock" \
	    --unixsocketperm 700 --save '' --appendonly no --dir "$sock_dir" \
	    --logfile "$sock_dir/log" --daemonize no &
	server=$!
	k=0
	until redis-cli -s "$sock_dir/sock" ping >/dev/null 2>&1; do
		k=$((k + 1))
		if [ "$k" -gt 100 ]; then
			redis_note="The same through a store was skipped: redis-server did not start ($(tail -n 1 "$sock_dir/log"))."
			break
		fi
		sleep 0.05
	done
	if [ -z "$redis_note" ]; then
		say "the same through Redis, on a Unix socket"
		crowd_table="$crowd_table
$(crowd_rows Redis "--store redis+unix://$sock_dir/sock --store-timeout 5s --store-fail closed")"
		redis_note="The rows \"Redis\": $(redis-server --version | cut -d' ' -f1-3), on the same machine, started by the bench on a Unix socket, emptied (FLUSHALL) before each row."
	fi
fi
[ -z "$redis_note" ] || say "$redis_note"
crowd_load1=$(loadavg)
load_end=$(loadavg)

# --- the section --------------------------------------------------------------
# bench/run.sh says BENCH_WHOLE=1; run alone, the section says so.
alone=
[ "${BENCH_WHOLE:-0}" = 1 ] ||
    alone="  This section was run alone (\`make bench-rules\`), not in the run of \`make bench\` that wrote the rest of this file: its conditions are these, not those of \"The machine\"."
section() {
	cat <<EOF
$heading

Written by \`bench/herd-rules.sh\` ($mode mode), $(date -u '+%Y-%m-%d %H:%M UTC'),
$("$retry" --version) (source $source_id), on $(nproc) CPUs ($(cpu)),
$(uname -sr); load average at its start $load_start, at its end
$load_end.$alone  Counts, not speed: each verdict is what
retry-circuit(7) says the rule does, against what the downstream saw.

### A flapping downstream: \`--trip 5\` and \`--trip 30%/20\`

$flap_runs runs one after another (each starts once the one before has
ended), a fresh state directory per rule, on $flap_fs (TMPDIR); load
average $flap_load0 at the start, $flap_load1 at the end:

    RETRY_STATE_DIR=DIR ./retry -n 3 -b 1ms -j none -D 2s --circuit flap --cool 1m --trip RULE -- sh bench/downstream.sh flap DIR

The downstream fails every third call it sees (calls 3, 6, 9, ...),
whichever run makes it, so a run whose first attempt fails passes at its
retry.  *By the rule*: where retry-circuit(7) opens the circuit, applied
to the calls the downstream logged: \`--trip N\` at the Nth failure in a
row; \`--trip P%/M\` at the first failure that finds at least P% of the
last M calls failed, once M were seen.  *After it*: the calls, and the
retries among them, that the downstream saw after that call.  The record
at the end: \`--circuit-status flap\`'s state and failures lines.

| rule | calls seen | failed | retries | the circuit opened | by the rule | after it: calls / retries | the record at the end | the runs' exit statuses | |
|---|---:|---:|---:|---|---|---:|---|---|---|
$flap_table

### A crowd: \`--budget 20/1m\` and \`--budget 20%/1m\`

N runs at once whose every attempt fails, a fresh state directory (or an
emptied store) per row, on $crowd_fs (TMPDIR); load average $crowd_load0
at the start, $crowd_load1 at the end:

    RETRY_STATE_DIR=DIR ./retry -q -n 3 -b 100ms -j none -D 5s --trip 100000 --circuit crowd BUDGET [--store redis+unix://SOCK --store-timeout 5s --store-fail closed] -- sh bench/downstream.sh down DIR
    BUDGET: --budget 20/1m, or --budget 20%/1m --budget-min 3

Each first attempt waits at a barrier, a FIFO that the bench opens once
all N first attempts have called, so that all N were counted before the
first of them fails.  Each run then asks the budget for 2 retries, 100 ms
and 200 ms after; a retry refused would wait past the 5 s deadline (for a
retry to leave the minute, or a tenth of it for more first attempts), so
its run gives up at once with its last status, 1.  *The rules*, in
brackets: the retries the runs want (2 a run), at most 20 for \`20/1m\`
and 3 + ⌊20% of N⌋ for \`20%/1m\`.

| record | runs at once | 20/1m: first attempts | retries (the rules) | retries per first attempt | 20%/1m: first attempts | retries (the rules) | retries per first attempt | exit statuses (20/1m; 20%/1m) | |
|---|---:|---:|---:|---:|---:|---:|---:|---|---|
$crowd_table

$redis_note
EOF
}

section >"$work/section.md"
if [ -n "$results" ]; then
	put_section "$results" "$heading" "$work/section.md" "$work/results.md"
	say "written to $results"
fi
cat "$work/section.md"
