#!/bin/sh
# SPDX-License-Identifier: ISC
# bench/store.sh [RESULTS.md]: what the shared circuit of --store costs
# (issue 16).  The time per attempt of 200 runs at once, each 5 failed
# attempts through the circuit and a budget, with the record in Redis over
# a Unix socket and over TCP, against the local record and against no
# circuit; and of one run alone.  Target: --store within 1.5x of the local
# record.  Prints a section of bench/RESULTS.md; given the file, puts it
# at its end, in place of the section an earlier run put there.  QUICK=1:
# a smoke run (40 runs, 1 round).  `make bench-store`; bench/run.sh runs it
# too.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)
retry=$top/retry
results=${1-}
heading='## 10. The shared store (--store)'

if [ "${QUICK:-0}" = 1 ]; then
	procs=40 rounds=1 attempts=3 alone=20
else
	procs=200 rounds=7 attempts=5 alone=100
fi

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

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
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

# The retry options of each variant, after the common ones.
opts() {
	case $1 in
	none)	;;
	local)	echo "--circuit bench --trip 1000000 --budget 1000/1m" ;;
	unix)	echo "--circuit bench --trip 1000000 --budget 1000/1m" \
		    "--store redis+unix://$work/sock" ;;
	tcp)	echo "--circuit bench --trip 1000000 --budget 1000/1m" \
		    "--store redis://127.0.0.1:$port" ;;
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
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

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

section >"$work/section.md"
if [ -n "$results" ]; then
	# This section is the last of the file: the one an earlier run put
	# there goes, from its heading to the end.
	if [ -f "$results" ]; then
		awk -v h="$heading" '$0 == h { exit }
		    /^$/ { blank++; next }
		    { while (blank > 0) { print ""; blank-- } print }' \
		    "$results" >"$work/results.md"
		cat "$work/results.md" >"$results"
	fi
	{ echo; cat "$work/section.md"; } >>"$results"
	say "appended to $results"
fi
cat "$work/section.md"
