#!/bin/sh
# SPDX-License-Identifier: ISC
# bench/store.sh [RESULTS.md]: what the shared circuit of --store costs
# (issue 16), and how many hosts one Redis serves (issue 24: PART=capacity
# for that part alone, on stdout).  The time per attempt of 200 runs at once, each 5 failed
# attempts through the circuit and a budget, with the record in Redis over
# a Unix socket and over TCP, against the local record and against no
# circuit; and of one run alone.  Target: --store within 1.5x of the local
# record.  Prints a section of bench/RESULTS.md; given the file, puts it
# in place of the section an earlier run put there (at the end if none).  QUICK=1:
# a smoke run (40 runs, 1 round).  `make bench-store`; bench/run.sh runs it
# too.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)
retry=$top/retry
results=${1-}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
heading='## 11. The shared store (--store)'

if [ "${QUICK:-0}" = 1 ]; then
	procs=40 rounds=1 attempts=3 alone=20 cap_procs=100
else
	procs=200 rounds=7 attempts=5 alone=100 cap_procs=1000
fi
# PART=capacity: the capacity figures alone (issue 24), on stdout.
part=${PART:-all}

say() {
	printf 'bench/store: %s\n' "$*" >&2
}

if [ ! -x "$retry" ]; then
	say "no ./retry: run make first"
	exit 1
fi
if ! command -v redis-server >/dev/null 2>&1 ||
    ! command -v redis-cli >/dev/null 2>&1; then
	say "no redis-server or redis-cli (Debian's redis-server: make deps); skipped"
	exit 0
fi
proxy=$top/tests/helpers/slow-proxy
if [ ! -x "$proxy" ]; then
	say "building tests/helpers/slow-proxy (for a free port)"
	${CC:-cc} -std=c99 -O2 -o "$proxy" "$top/tests/helpers/slow-proxy.c"
fi

# The socket's path must be short: /tmp, not a deep $TMPDIR.
work=$(mktemp -d /tmp/retry-bench-store.XXXXXX)
server=
stop() {
	if [ -n "$server" ]; then
		kill -TERM "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

load_start=$(loadavg)
port=$("$proxy" -p)
redis-server --port "$port" --bind 127.0.0.1 --unixsocket "$work/sock" \
    --unixsocketperm 700 --save '' --appendonly no --dir "$work" \
    --logfile "$work/log" --daemonize no &
server=$!
n=0
until redis-cli -s "$work/sock" ping >/dev/null 2>&1; do
	n=$((n + 1))
	if [ "$n" -gt 100 ]; then
		say "redis-server did not start: $(tail -n 1 "$work/log")"
		exit 1
	fi
	sleep 0.05
done

now() {
	date +%s%N
}

# The retry options of each variant, after the common ones.  The store's
# steps get 10 s, not the default 250 ms: 200 runs on 2 cores can wait
# longer than that for the CPU, and a step given up goes on without the
# circuit (--store-fail open), which skips the very work measured here
# and leaves its attempts uncounted (seen once in a full run, 950 of 1000).
opts() {
	case $1 in
	none)	;;
	local)	echo "--circuit bench --trip 1000000 --budget 1000/1m" ;;
	unix)	echo "--circuit bench --trip 1000000 --budget 1000/1m" \
		    "--store redis+unix://$work/sock --store-timeout 10s" ;;
	tcp)	echo "--circuit bench --trip 1000000 --budget 1000/1m" \
		    "--store redis://127.0.0.1:$port --store-timeout 10s" ;;
	esac
}

# The failures that the circuit counted, or "-" without one.
counted() {
	case $1 in
	none)	echo - ;;
	local)	awk '$1 == "failures" { print $2 }' "$work/state/bench" ;;
	*)	redis-cli -s "$work/sock" hget 'retry:{bench}:state' f ;;
	esac
}

fresh() {
	rm -rf "$work/state"
	redis-cli -s "$work/sock" flushall >/dev/null
}

# herd VARIANT: $procs runs at once of $attempts failed attempts each;
# prints the ns per attempt, and checks that each attempt was counted.
# A run of the local record may be refused (125) at its start, which is
# counted in $work/refused.VARIANT (see the note in the section).
herd() {
	fresh
	pids=
	t0=$(now)
	i=0
	while [ "$i" -lt "$procs" ]; do
		# shellcheck disable=SC2046
		RETRY_STATE_DIR=$work/state "$retry" -q -n "$attempts" -b 1ms \
		    -f 1 -j none $(opts "$1") false </dev/null 2>>"$work/err" &
		pids="$pids $!"
		i=$((i + 1))
	done
	bad=0 refused=0
	for p in $pids; do
		st=0
		wait "$p" || st=$?
		if [ "$st" -eq 125 ] && [ "$1" = local ]; then
			refused=$((refused + 1))
		elif [ "$st" -ne 1 ]; then
			bad=$((bad + 1))
		fi
	done
	t1=$(now)
	echo "$refused" >>"$work/refused.$1"
	c=$(counted "$1")
	if [ "$bad" -ne 0 ] || { [ "$c" != - ] &&
	    [ "$c" -ne $(((procs - refused) * attempts)) ]; }; then
		say "$1: $bad runs did not exit 1, or $c failures counted"
		exit 1
	fi
	echo $(((t1 - t0) / ((procs - refused) * attempts)))
}

# single VARIANT: one run of $alone attempts, 1 ms apart: ns per attempt,
# the delays taken out.
single() {
	fresh
	t0=$(now)
	# shellcheck disable=SC2046
	RETRY_STATE_DIR=$work/state "$retry" -q -n "$alone" -b 1ms -f 1 \
	    -j none $(opts "$1") false </dev/null || true
	t1=$(now)
	echo $(((t1 - t0 - (alone - 1) * 1000000) / alone))
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
	    if (NR % 2) print v[(NR + 1) / 2]
	    else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---- Capacity: the server's cost of a step (issue 24) ----------------------

# server_cpu: the server's CPU seconds so far, user and system.
server_cpu() {
	redis-cli -s "$work/sock" info cpu | tr -d '\r' | awk -F: '
	    $1 == "used_cpu_sys" || $1 == "used_cpu_user" { t += $2 }
	    END { printf "%.6f\n", t }'
}

# script_calls FIELD: EVALSHA and EVAL together, calls or usec.
script_calls() {
	redis-cli -s "$work/sock" info commandstats | tr -d '\r' | tr ',:' '\n' |
	    awk -v f="$1" '/^cmdstat_eval(sha)?$/ { on = 1; next }
		/^cmdstat_/ { on = 0 } on && index($0, f "=") == 1 {
		    n += substr($0, length(f) + 2) } END { print n + 0 }'
}

# burst NAMES OPTS: $cap_procs runs at once, each `retry -q -n1 OPTS true`
# over TCP (a new connection, three steps: admit, result, the run's end), on one
# circuit (NAMES=one) or each on its own (many); each run's wall time in
# ns into $work/lat.NAMES.  Prints: steps, wall ns, server CPU µs, script µs.
burst() {
	fresh
	rm -f "$work/lat.$1"
	redis-cli -s "$work/sock" config resetstat >/dev/null
	c0=$(server_cpu)
	t0=$(now)
	i=0 pids=
	while [ "$i" -lt "$cap_procs" ]; do
		name=cap
		[ "$1" = many ] && name=cap$i
		# shellcheck disable=SC2016
		sh -c 'a=$(date +%s%N); "$0" -q -n1 $1 true; b=$(date +%s%N)
		    echo $((b - a))' "$retry" "$2 --circuit $name" \
		    >>"$work/lat.$1" 2>>"$work/err" </dev/null &
		pids="$pids $!"
		i=$((i + 1))
	done
	# Not a bare wait: that would wait for the server too.
	for p in $pids; do
		wait "$p" || true
	done
	t1=$(now)
	c1=$(server_cpu)
	echo "$(script_calls calls) $((t1 - t0)) $(awk -v a="$c0" -v b="$c1" \
	    'BEGIN { printf "%.0f", (b - a) * 1e6 }') $(script_calls usec)"
}

# pct P FILE: the P-th percentile of the numbers in FILE.
pct() {
	sort -n "$2" | awk -v p="$1" '{ v[NR] = $1 } END {
	    i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; print v[i] }'
}

capacity_section() {
	# A long --store-timeout: the server is measured, not the timeout.
	tcp="--store redis://127.0.0.1:$port --store-timeout 5s"
	burst none "" >"$work/cap.none"
	burst one "$tcp" >"$work/cap.one"
	burst many "$tcp" >"$work/cap.many"
	cap_load=$(loadavg)
	awk -v n="$cap_procs" -v load="$cap_load" -v cpus="$(nproc)" \
	    -v none_p50="$(pct 50 "$work/lat.none")" \
	    -v one="$(cat "$work/cap.one")" -v many="$(cat "$work/cap.many")" \
	    -v one_p50="$(pct 50 "$work/lat.one")" \
	    -v one_p99="$(pct 99 "$work/lat.one")" \
	    -v many_p50="$(pct 50 "$work/lat.many")" \
	    -v many_p99="$(pct 99 "$work/lat.many")" '
	function ms(ns) { return sprintf("%.1f ms", ns / 1e6) }
	function row(what, f, p50, p99,   steps) {
		split(f, x, " ")
		steps = x[1]
		cpu[what] = x[3] / steps
		printf "| %s | %d | %.0f | %s / %s | %s | %.1f µs | %.1f µs |\n",
		    what, steps, steps / (x[2] / 1e9), ms(p50), ms(p99),
		    (p50 > none_p50 ? ms((p50 - none_p50) / 2) : "n/a (noise)"),
		    x[3] / steps, x[4] / steps
	}
	BEGIN {
		print "### Capacity: one Redis, many hosts"
		print ""
		printf "%d runs started at once, each `retry -q -n1 --circuit NAME " \
		    "--store redis://127.0.0.1:PORT --store-timeout 5s true`: a new " \
		    "TCP connection and " \
		    "three steps (admit, result, the run'"'"'s end).  Measured on %d shared CPUs " \
		    "(load %s as this part began, the bench'"'"'s own runs " \
		    "included): the " \
		    "client side, %d processes on the same cores, bounds the rate; " \
		    "the server CPU per step is the figure that carries over.  A run " \
		    "without a circuit takes %s (p50) here; a step is half the " \
		    "difference.\n\n", n, cpus, load, n, ms(none_p50)
		print "| names | script calls | calls/s | run p50 / p99 | step p50 (est.) | server CPU per step (INFO cpu) | script per step (commandstats) |"
		print "|---|---:|---:|---|---:|---:|---:|"
		row("one circuit", one, one_p50, one_p99)
		row("a circuit per run", many, many_p50, many_p99)
		c = cpu["one circuit"] > cpu["a circuit per run"] ? \
		    cpu["one circuit"] : cpu["a circuit per run"]
		printf "\nCapacity, from the larger server CPU per step, c = %.1f µs " \
		    "(connection, AUTH and the script; Redis runs them on one " \
		    "core): one core does 1e6 / c = %.0f steps/s.  A run that " \
		    "succeeds takes 3 steps; one that fails 5 times, 11.\n\n",
		    c, 1e6 / c
		print "| setup | limit | hosts, a job every minute |"
		print "|---|---|---:|"
		printf "| one circuit (one slot, one core), runs spread by `--splay 30s` | 30 s × %.0f steps/s ÷ 3 steps | %.0f |\n", 1e6 / c, 30 * 1e6 / c / 3
		printf "| the same, runs failing 5 times | 30 s × %.0f ÷ 11 | %.0f |\n", 1e6 / c, 30 * 1e6 / c / 11
		printf "| one circuit, no splay: all at :00, within `--store-timeout` 250ms | 0.25 s × %.0f ÷ 3 | %.0f |\n", 1e6 / c, 0.25 * 1e6 / c / 3
		printf "| many circuits on a cluster of 3 primaries, `--splay 30s` | 3 × 30 s × %.0f ÷ 3 | %.0f |\n", 1e6 / c, 3 * 30 * 1e6 / c / 3
	}'
}

if [ "$part" = capacity ]; then
	say "capacity: $cap_procs runs at once, three times"
	capacity_section
	exit 0
fi

variants="none local unix tcp"
say "$rounds rounds of $procs runs x $attempts attempts, variants interleaved"
r=1
while [ "$r" -le "$rounds" ]; do
	for v in $variants; do
		herd "$v" >>"$work/herd.$v"
		single "$v" >>"$work/single.$v"
	done
	for v in unix tcp; do
		for base in local none; do
			awk -v a="$(sed -n "${r}p" "$work/herd.$v")" \
			    -v b="$(sed -n "${r}p" "$work/herd.$base")" \
			    'BEGIN { printf "%.3f\n", a / b }' \
			    >>"$work/ratio.$v.$base"
		done
	done
	say "round $r: $(for v in $variants; do
		printf '%s %s us  ' "$v" "$(($(sed -n "${r}p" "$work/herd.$v") / 1000))"
	    done)"
	r=$((r + 1))
done
load_end=$(loadavg)

us() {
	awk -v ns="$1" 'BEGIN { printf "%.1f µs", ns / 1000 }'
}
row() {
	printf '| %s | %s | %s |\n' "$1" "$(us "$(median <"$work/herd.$2")")" \
	    "$(us "$(median <"$work/single.$2")")"
}
verdict() {
	awk -v x="$1" 'BEGIN { print (x <= 1.5 ? "**met**" : "**missed**") }'
}
refused=$(awk '{ n += $1 } END { print n + 0 }' "$work/refused.local")
refusal=$(sort -u "$work/err" | head -n 1 | sed 's#/tmp/[^ ]*#RECORD#')
ru=$(median <"$work/ratio.unix.local")
rt=$(median <"$work/ratio.tcp.local")

mode=full
[ "${QUICK:-0}" != 1 ] || mode=quick
server_version=$(redis-server --version | cut -d' ' -f1-3)
section() {
	cat <<EOF
$heading

Written by \`bench/store.sh\` ($mode mode), $(date -u '+%Y-%m-%d %H:%M UTC'),
on $(nproc) CPUs; load average at its start $load_start, at its end
$load_end; $server_version, on the same machine.

$procs runs started at once, each \`retry -q -n $attempts -b 1ms -f 1 -j none
OPTIONS false\`: $attempts failed attempts, 1 ms apart, so every attempt
goes through the circuit (\`--trip 1000000\`: it never opens) and every
retry through the budget (\`--budget 1000/1m\`: never spent), two steps
of the record per retry.  Time per attempt: the wall-clock time of the
$procs runs, from the first start to the last exit, over their
$((procs * attempts)) attempts; the median of $rounds rounds, the variants
interleaved in each, the record cleared before each.  Every failure was
counted by the circuit, or the bench stops.  "One run": a single run of
$alone attempts, the $((alone - 1)) ms of delays taken out.

| OPTIONS | $procs at once: per attempt | one run: per attempt |
|---|---:|---:|
$(row "none (no circuit)" none)
$(row "\`--circuit bench\`, the local record" local)
$(row "\`--store redis+unix://...\`, a Unix socket" unix)
$(row "\`--store redis://127.0.0.1:PORT\`, TCP" tcp)

| figure | result | target | |
|---|---|---|---|
| \`--store\` over a Unix socket ÷ the local record, $procs at once (median of the rounds' ratios) | $ru | ≤ 1.5 | $(verdict "$ru") |
| \`--store\` over TCP ÷ the local record, $procs at once | $rt | ≤ 1.5 | $(verdict "$rt") |
| \`--store\` over a Unix socket ÷ no circuit, $procs at once | $(median <"$work/ratio.unix.none") | (for reference) | |
| \`--store\` over TCP ÷ no circuit, $procs at once | $(median <"$work/ratio.tcp.none") | (for reference) | |
EOF
	[ "$refused" -eq 0 ] || cat <<EOF

Of the $((procs * rounds)) runs of the local record, $refused were
refused at their start with status 125, as
\`$refusal\`:
circuit_open() checks the record without its lock, and a record that
another run renames a new one over in that instant has no link left
(st_nlink 0), which the check takes for another one.  Their attempts are
left out of the local record's figures; the store is not concerned.
EOF
}

{
	section
	echo
	capacity_section
} >"$work/section.md"
if [ -n "$results" ]; then
	# bench/herd-rules.sh's section comes after this one.
	put_section "$results" "$heading" "$work/section.md" "$work/results.md"
	say "written to $results"
fi
cat "$work/section.md"
