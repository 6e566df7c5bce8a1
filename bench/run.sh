#!/bin/sh
# SPDX-License-Identifier: ISC
# bench/run.sh: the benchmarks of retry (issue 6), run by `make bench`.
# Writes bench/RESULTS.md and bench/herd.svg; with QUICK=1, a short smoke
# run that writes them to $BENCH_OUT (a directory in $TMPDIR) instead.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)
bench=$top/bench
# shellcheck source=bench/lib.sh
. "$bench/lib.sh"
retry=$top/retry

if [ "${QUICK:-0}" = 1 ]; then
	mode=quick
	out=${BENCH_OUT:-${TMPDIR:-/tmp}/retry-bench-quick}
	rounds=30 acc_rounds=1 trials=10 herd=40
	replay_bytes=67108864
	tp_bytes=67108864 tp_rounds=3 crowd=50 crowd_rounds=2
	pipe_bytes=8388608 pipe_rounds=3
	wake_20ms=1 wake_2s=3 wake_10s=1 start_rounds=30
	grow_attempts='1 10 100' grow_rss=100 grow_crowds='1 10 20'
	grow_stdin='1024 1048576 16777216' grow_lines='1 1000 100000'
	grow_rounds=1
else
	mode=full
	out=${BENCH_OUT:-$bench}
	rounds=400 acc_rounds=10 trials=100 herd=200
	replay_bytes=1073741824
	tp_bytes=1073741824 tp_rounds=7 crowd=200 crowd_rounds=7
	pipe_bytes=268435456 pipe_rounds=21
	wake_20ms=4 wake_2s=20 wake_10s=20 start_rounds=400
	grow_attempts='1 10 100 1000 10000' grow_rss=10000
	grow_crowds='1 10 50 200'
	grow_stdin='1024 1048576 67108864 1073741824'
	grow_lines='1 1000 100000 10000000' grow_rounds=3
fi
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/retry-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
sum=$work/sum
notes=$work/notes
: >"$sum"
: >"$notes"

# The same PATH and no inherited RETRY_* for every command measured.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
unset RETRY_ATTEMPT RETRY_DEADLINE RETRY_IDEMPOTENCY_KEY \
	RETRY_MAX_ATTEMPTS RETRY_AFTER_FILE || true

say() {
	printf 'bench: %s\n' "$*" >&2
}

note() {
	say "$*"
	printf -- '- %s\n' "$*" >>"$notes"
}

# A value from the summary: get KEY [INDEX [FIELD]].
get() {
	awk -v k="$1" -v i="${2-}" -v f="${3-}" '
	    $1 == k && i == "" { print $2; exit }
	    $1 == k && $2 == i { print (f == "" ? $3 : $f); exit }' "$sum"
}

# Whether a <= b, as numbers.
le() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'
}

verdict() {
	if [ "$1" = 0 ]; then echo '**met**'; else echo '**missed**'; fi
}

ms() {
	awk -v ns="$1" 'BEGIN { printf "%.2f ms", ns / 1e6 }'
}

stats() {
	awk -f "$bench/stats.awk" -f "$@"
}

# The C helpers, when make has not built them (sh bench/run.sh alone).
for h in stamp spawn latency herd floor crowd linematch oversleep grow; do
	src=$bench/$h.c
	extra=$bench/common.c
	case $h in stamp | floor | linematch) extra= ;; esac
	if [ ! -x "$bench/$h" ] ||
	    [ -n "$(find "$src" -newer "$bench/$h" 2>/dev/null)" ]; then
		say "building bench/$h"
		# shellcheck disable=SC2086
		${CC:-cc} -std=c99 -O2 -D_XOPEN_SOURCE=700 -o "$bench/$h" \
		    "$src" $extra
	fi
done
if [ ! -x "$retry" ]; then
	say "no ./retry: run make first"
	exit 1
fi

# --- peers ----------------------------------------------------------------
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

# Debian's packages that the bench compares with, installed when missing
# and when root; a peer that is still missing is skipped.
install_package() {
	command -v dpkg-query >/dev/null 2>&1 || return 0
	installed "$1" && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		return 0
	fi
	say "installing Debian's $1"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "$1" >"$work/apt.log" 2>&1 || {
		apt-get update -qq >>"$work/apt.log" 2>&1 &&
		    apt-get install -y -qq "$1" >>"$work/apt.log" 2>&1
	} || say "could not install $1 (see apt-get)"
}

install_package retry
deb_retry=
if installed retry && [ -x /usr/bin/retry ]; then
	deb_retry=/usr/bin/retry
else
	note "Debian's retry is not installed: its rows are skipped."
fi
timeout_cmd=$(command -v timeout || true)
[ -n "$timeout_cmd" ] || note "timeout (coreutils) not found: its rows are skipped."

# --- the machine ----------------------------------------------------------
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
# Named before this run writes herd.svg and RESULTS.md, which would make
# every tree look modified.
source_id=$(git --no-optional-locks -C "$top" describe --always --dirty \
    2>/dev/null || echo 'not a git checkout')
machine() {
	printf '| | |\n|---|---|\n'
	printf '| date (start to end) | %s to %s |\n' "$date_start" \
	    "$(date -u '+%H:%M UTC')"
	printf '| CPUs (nproc) | %s |\n' "$(nproc 2>/dev/null || echo '?')"
	printf '| CPU model | %s |\n' "$(sed -n 's/^model name[^:]*: //p' \
	    /proc/cpuinfo 2>/dev/null | head -n 1)"
	printf '| memory | %s |\n' "$(awk '/^MemTotal/ { printf "%.1f GiB", \
	    $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
	printf '| kernel | %s |\n' "$(uname -srm)"
	printf '| system | %s |\n' "$(. /etc/os-release 2>/dev/null &&
	    echo "$PRETTY_NAME")"
	printf '| libc | %s |\n' "$(ldd --version 2>/dev/null | head -n 1)"
	printf '| compiler | %s |\n' "$(${CC:-cc} --version 2>/dev/null |
	    head -n 1)"
	printf '| load average at start (1, 5, 15 min) | %s |\n' "$load_start"
	printf '| load average at end | %s |\n' \
	    "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	printf '| retry | %s, source %s |\n' "$("$retry" --version)" "$source_id"
	printf '| Debian'"'"'s retry | %s |\n' "$(dpkg-query -W -f='${Version}' \
	    retry 2>/dev/null || echo 'not installed')"
	printf '| timeout | %s |\n' "$("${timeout_cmd:-false}" --version \
	    2>/dev/null | head -n 1)"
	printf '| locale | LANG=%s LC_ALL=%s |\n' "${LANG-}" "${LC_ALL-}"
	printf '| PATH for all commands | %s |\n' "$PATH"
}

# --- a variant of retry: static --------------------------------------------
say "building the variants of retry in $work/src"
mkdir "$work/src"
cp "$top"/Makefile "$top"/*.c "$top"/*.h "$work/src/"
static=
if make -s -C "$work/src" retry CFLAGS=-O2 LDFLAGS=-static \
    >"$work/static.log" 2>&1 && "$work/src/retry" -n1 -- true; then
	mv "$work/src/retry" "$work/retry-static"
	static=$work/retry-static
else
	note "the static build failed (make retry CFLAGS=-O2 LDFLAGS=-static: $(tail -n 1 "$work/static.log")): its row is skipped."
fi

# --- 1. overhead ----------------------------------------------------------
say "1. overhead: $rounds interleaved rounds"
names="retry -n1 -- true"
set -- "$retry" -n1 -- true
if [ -n "$timeout_cmd" ]; then
	names="$names|timeout 60 true"
	set -- "$@" :: timeout 60 true
fi
if [ -n "$deb_retry" ]; then
	names="$names|Debian's retry -t 1 -- true"
	set -- "$@" :: "$deb_retry" -t 1 -- true
fi
names="$names|true (bare)"
set -- "$@" :: true
bare=$(echo "$names" | awk -F'|' '{ print NF - 1 }')
if [ -n "$static" ]; then
	names="$names|retry, static build"
	set -- "$@" :: "$static" -n1 -- true
fi
"$bench/spawn" -r "$rounds" -w 5 "$@" >"$work/overhead.txt"
alt=
[ -z "$static" ] || alt=$(echo "$names" | awk -F'|' '{ print NF - 1 }')
overhead_table=$(stats "$bench/overhead.awk" -v names="$names" -v ret=0 \
    -v bare="$bare" -v alt="$alt" -v sum="$sum" "$work/overhead.txt")
idx() {
	echo "$names" | awk -F'|' -v n="$1" '{
	    for (i = 1; i <= NF; i++) if ($i ~ n) { print i - 1; exit } }'
}
i_timeout=$(idx '^timeout')
i_deb=$(idx "^Debian")
i_static=$(idx 'static')

# --- the profile of start-up (full mode, with the tools that are here) ------
profile=$work/profile.md
: >"$profile"
wrappers() {
	printf '%s\n' "retry|$retry -n1 -- true"
	[ -z "$timeout_cmd" ] || printf '%s\n' "timeout|timeout 60 true"
	[ -z "$deb_retry" ] || printf '%s\n' "Debian's retry|$deb_retry -t 1 -- true"
	[ -z "$static" ] || printf '%s\n' "retry, static|$static -n1 -- true"
}
if [ "$mode" = full ]; then
	say "profiling the start-up"
	{
		echo "What each wrapper does by itself (not its child), one run of \`-- true\`:"
		echo
		echo "| wrapper | shared libraries | system calls (strace -c) | instructions (callgrind) | of which in ld.so | page faults (perf stat --no-inherit, mean of 50) |"
		echo "|---|---:|---:|---:|---:|---:|"
	} >>"$profile"
	wrappers | while IFS='|' read -r label cmd; do
		# shellcheck disable=SC2086
		set -- $cmd
		libs=$(ldd "$1" 2>/dev/null | grep -c '=>' || true)
		calls=–
		if command -v strace >/dev/null 2>&1 &&
		    strace -c -o "$work/strace.txt" "$@" </dev/null >/dev/null 2>&1; then
			calls=$(awk '$NF == "total" { print $4 }' "$work/strace.txt")
			[ "$label" != retry ] || cp "$work/strace.txt" "$work/strace.retry"
		fi
		ir=– irld=–
		if command -v valgrind >/dev/null 2>&1 &&
		    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
		    "$@" </dev/null >/dev/null 2>&1; then
			ir=$(awk '/^summary:/ { print $2 }' "$work/cg.out")
			irld=$(callgrind_annotate --inclusive=yes "$work/cg.out" \
			    2>/dev/null | awk '/rtld.c:_dl_start / {
			    gsub(",", "", $1); print $1; exit }')
			[ -n "$irld" ] && irld=$(awk -v a="$irld" -v b="$ir" \
			    'BEGIN { printf "%.0f%%", 100 * a / b }')
			[ "$label" != retry ] || cp "$work/cg.out" "$work/cg.retry"
		fi
		faults=–
		if command -v perf >/dev/null 2>&1 &&
		    perf stat --no-inherit -x, -r 50 -e page-faults -o \
		    "$work/perf.txt" "$@" </dev/null >/dev/null 2>&1; then
			faults=$(awk -F, '/page-faults/ { printf "%.0f", $1 }' \
			    "$work/perf.txt")
		fi
		printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$libs" \
		    "$calls" "${ir:-–}" "${irld:-–}" "${faults:-–}" >>"$profile"
	done
	if [ -f "$work/strace.retry" ]; then
		{
			echo
			echo "retry's system calls (\`strace -c $retry -n1 -- true\`):"
			echo
			echo '```'
			echo "calls syscall"
			awk 'NR > 2 && $NF != "total" && !/^-/ { print $4, $NF }' \
			    "$work/strace.retry" | sort -rn | head -n 30
			echo '```'
		} >>"$profile"
	fi
	if [ -f "$work/cg.retry" ]; then
		{
			echo
			echo "Where retry's instructions go (\`valgrind --tool=callgrind\`, inclusive, top 20):"
			echo
			echo '```'
			callgrind_annotate --inclusive=yes "$work/cg.retry" 2>/dev/null |
			    awk '/^-+$/ { dash++; next } dash >= 3 && NF && /\(/ ' |
			    sed 's/ ([ 0-9.]*%)//; s|\./[^ ]*/||' | head -n 20
			echo '```'
		} >>"$profile"
	fi
	if command -v perf >/dev/null 2>&1; then
		wrappers | while IFS='|' read -r label cmd; do
			# shellcheck disable=SC2086
			set -- $cmd
			perf record -q -o "$work/pf.data" -e page-faults -c 1 -d \
			    --no-inherit "$@" </dev/null >/dev/null 2>&1 || continue
			perf report -i "$work/pf.data" --mem-mode --stdio -n \
			    --sort dso_daddr 2>/dev/null | awk -v w="$label" '
			    /^#/ || NF < 3 { next }
			    { d = $3; sub(/.*\//, "", d); print w "|" d "|" $2 }'
		done >"$work/pf.txt"
		if [ -s "$work/pf.txt" ]; then
			printf '\nPage faults by mapping (`perf record -e page-faults -d --no-inherit`, one run each):\n\n' >>"$profile"
			awk -F'|' '
			    !($1 in col) { col[$1] = ++nc; name[nc] = $1 }
			    !($2 in row) { row[$2] = ++nr; rname[nr] = $2 }
			    { v[$2, $1] += $3; tot[$1] += $3 }
			    END {
				printf "| mapping |"
				for (c = 1; c <= nc; c++)
					printf " %s |", name[c]
				printf "\n|---|"
				for (c = 1; c <= nc; c++)
					printf "---:|"
				print ""
				for (r = 1; r <= nr; r++) {
					printf "| %s |", rname[r]
					for (c = 1; c <= nc; c++)
						printf " %s |", v[rname[r], name[c]]
					print ""
				}
				printf "| **total** |"
				for (c = 1; c <= nc; c++)
					printf " **%d** |", tot[name[c]]
				print ""
			    }' "$work/pf.txt" >>"$profile"
		fi
	fi
else
	echo "(skipped in the quick mode)" >>"$profile"
fi

# --- 2. timing accuracy ---------------------------------------------------
say "2. timing accuracy: $acc_rounds rounds of 50 attempts"
r=0
while [ "$r" -lt "$acc_rounds" ]; do
	status=0
	"$retry" -n 50 --jitter none --base 20ms --cap 20ms -- \
	    "$bench/stamp" -f 1000 "$work/acc.$r" </dev/null 2>/dev/null ||
	    status=$?
	[ "$status" = 1 ] || note "accuracy round $r: retry exited $status, not 1"
	"$bench/spawn" -r 50 -w 0 -d 20000000 "$bench/stamp" -f 1000 \
	    "$work/floor.$r" >/dev/null
	r=$((r + 1))
done
accuracy_table=$(stats "$bench/accuracy.awk" -v delay=20000000 -v sum="$sum" \
    "$work"/acc.* "$work"/floor.*)

# --- 3. signal latency, and 4. the RSS of a wrapper alone --------------------
say "3. signal latency: $trials trials each"
mk=$work/marker
names="retry"
set -- "$retry" -n 2 --jitter none --base 60s --cap 60s -- \
    "$bench/stamp" -f 1 "$mk"
if [ -n "$deb_retry" ]; then
	names="$names|Debian's retry"
	set -- "$@" :: "$deb_retry" -t 2 -d 60 -- "$bench/stamp" -f 1 "$mk"
fi
"$bench/latency" -e -n "$trials" -m "$mk" "$@" >"$work/asleep.txt"
asleep_table=$(stats "$bench/latency.awk" -v names="$names" -v tag=asleep \
    -v sum="$sum" "$work/asleep.txt")
names="retry"
set -- "$retry" -n1 -- "$bench/stamp" -s 60 "$mk"
if [ -n "$timeout_cmd" ]; then
	names="$names|timeout"
	set -- "$@" :: timeout 60 "$bench/stamp" -s 60 "$mk"
fi
if [ -n "$deb_retry" ]; then
	names="$names|Debian's retry"
	set -- "$@" :: "$deb_retry" -t 1 -- "$bench/stamp" -s 60 "$mk"
fi
"$bench/latency" -n "$trials" -m "$mk" "$@" >"$work/running.txt"
running_table=$(stats "$bench/latency.awk" -v names="$names" -v tag=running \
    -v sum="$sum" "$work/running.txt")

# --- 4. memory with --replay-stdin -----------------------------------------
replay=
if "$retry" --help 2>/dev/null | grep -q -- '--replay-stdin'; then
	say "4. --replay-stdin over $replay_bytes bytes"
	mkfifo "$work/in"
	head -c "$replay_bytes" /dev/zero >"$work/in" &
	# shellcheck disable=SC2016
	"$bench/spawn" -i "$work/in" -r 1 -w 0 "$retry" --replay-stdin -n 2 \
	    -b 10ms -- sh -c 'cat >/dev/null; [ "${RETRY_ATTEMPT:-1}" -ge 2 ]' \
	    >"$work/replay.txt"
	wait
	replay=$(awk '{ print $4 }' "$work/replay.txt")
	replay_status=$(awk '{ print $6 }' "$work/replay.txt")
fi

# --- 5. the herd -----------------------------------------------------------
say "5. the herd: $herd processes per jitter mode"
herd_table=$work/herd.md
: >"$herd_table"
: >"$work/herd.data"
row=0
for j in none full equal decorrelated; do
	base=1s lo=1000 hi=1000
	case $j in
	full) lo=0 ;;
	equal) lo=500 ;;
	decorrelated) base=333ms lo=333 hi=999 ;;
	esac
	"$bench/herd" -n "$herd" -m "$work/herd.$j" -l "$work/herd.$j.log" \
	    "$retry" -n 2 --report - --jitter "$j" --base "$base" --cap 1s -- \
	    "$bench/stamp" -f 1 -w 3 "$work/herd.$j" >"$work/herd.$j.out"
	release=$(awk '$1 == "release" { print $2 }' "$work/herd.$j.out")
	stats "$bench/herd.awk" -v mode="$j" -v row="$row" -v release="$release" \
	    -v lo="$lo" -v hi="$hi" -v seed=1 -v sum="$sum" \
	    -v data="$work/herd.data" "$work/herd.$j" "$work/herd.$j".log.* \
	    >>"$herd_table"
	row=$((row + 1))
done
awk -f "$bench/svg.awk" -v title="The herd: $herd retry processes whose first attempts all fail at 0" \
    "$work/herd.data" >"$out/herd.svg"

# --- conditions of the sections below ---------------------------------------

# Sections 6 to 10 and 13 run in the order 8, 6, 10, 9, 13, 7: the sleeps
# first, on a machine that nothing of the bench has loaded yet, and last
# the crowd of section 7, whose hundreds of processes lift the load
# average for a minute after they are gone.
# --- 8. sleep accuracy (issue 10) ---------------------------------------------
say "8. sleep accuracy at 20 ms, 2 s and 10 s"
wake_load0=$(loadavg)
# wake_runs DELAY NS COUNT ATTEMPTS STAGGER: COUNT runs of ATTEMPTS failing
# attempts DELAY (NS) apart, started STAGGER seconds apart, in the
# background; beside each, the floor: bench/oversleep, as many sleeps.
wake_runs() {
	k=0
	while [ "$k" -lt "$3" ]; do
		"$retry" -n "$4" -j none -b "$1" -c "$1" \
		    --report "$work/wake.$1.$k.json" false \
		    </dev/null >/dev/null 2>&1 &
		"$bench/oversleep" "$2" $(($4 - 1)) >"$work/floor.$1.$k" &
		k=$((k + 1))
		sleep "$5"
	done
}
# Samples: runs x (attempts - 1); full: 200, 200 and 120; quick: 20, 3, 1.
if [ "$mode" = full ]; then
	wake_runs 10s 10000000000 "$wake_10s" 7 0.5
	wake_runs 2s 2000000000 "$wake_2s" 11 0.1
	wake_n=51
else
	wake_runs 10s 10000000000 "$wake_10s" 2 0.5
	wake_runs 2s 2000000000 "$wake_2s" 2 0.1
	wake_n=21
fi
k=0
while [ "$k" -lt "$wake_20ms" ]; do
	"$retry" -n "$wake_n" -j none -b 20ms -c 20ms \
	    --report "$work/wake.20ms.$k.json" false </dev/null >/dev/null 2>&1 ||
	    true
	"$bench/oversleep" 20000000 $((wake_n - 1)) >"$work/floor.20ms.$k"
	k=$((k + 1))
done
wait
wake_table=$(
	for d in 20ms 2s 10s; do
		stats "$bench/wake.awk" -v label="$d, retry" -v key="wake_$d" \
		    -v sum="$sum" "$work"/wake."$d".*.json
		stats "$bench/wake.awk" -v label="$d, floor (bench/oversleep)" \
		    -v key="floor_$d" -v sum="$sum" "$work"/floor."$d".*
	done
)
wake_load1=$(loadavg)

# --- 6. throughput (issue 15) -------------------------------------------------
say "6. throughput: $tp_rounds paired rounds of $((tp_bytes / 1048576)) MiB"
tp_load0=$(loadavg)
tp_fs=$(fstype "$work")
re='throttl(ed|ing)|HTTP 429'
# Log-like lines of 60 to 80 bytes, none of which matches $re.
awk 'BEGIN { for (i = 0; i < 100000; i++)
	printf "2026-11-30T01:%02d:%02d.%06d host app[%d]: GET /api/v1/items/%d 200 %dms\n",
	    i % 60, i % 60, i, i % 999, i, i % 300 }' >"$work/lines"
while :; do cat "$work/lines"; done 2>/dev/null | head -c "$tp_bytes" >"$work/text"
N=$tp_bytes
names="retry -I cat|cat|tee FILE (the copy without retry)"
names="$names|retry -O (to a pipe)|a file, then cat (held without retry)"
names="$names|head >FILE (a new file in TMPDIR, alone)"
names="$names|retry --on-output RE cat|grep -E RE|bench/linematch RE (libc's regexec, line by line)"
set -- sh -c "head -c $N /dev/zero | \"$retry\" -I cat" \
    :: sh -c "head -c $N /dev/zero | cat" \
    :: sh -c "head -c $N /dev/zero | tee \"$work/tee\" | cat" \
    :: sh -c "\"$retry\" -O head -c $N /dev/zero | cat" \
    :: sh -c "{ head -c $N /dev/zero >\"$work/held\"; cat \"$work/held\"; } | cat" \
    :: sh -c "head -c $N /dev/zero >\"$work/file\"" \
    :: "$retry" --on-output "$re" cat "$work/text" \
    :: sh -c "cat \"$work/text\" | grep -E '$re'; [ \$? = 1 ]" \
    :: sh -c "cat \"$work/text\" | \"$bench/linematch\" '$re'; [ \$? = 1 ]"
"$bench/spawn" -r "$tp_rounds" -w 1 "$@" >"$work/tp.txt"
rm -f "$work/tee" "$work/held" "$work/file"
tp_table=$(stats "$bench/pairs.awk" -v names="$names" -v bytes="$N" -v key=tp \
    -v pairs="tp_I:0:1:cat|tp_Ifloor:0:2:tee FILE|tp_Ifile:0:5:head >FILE|tp_O:3:1:cat|tp_Ofloor:3:4:a file, then cat|tp_Ofile:3:5:head >FILE|tp_M:6:7:grep -E RE|tp_Mfloor:6:8:bench/linematch RE" \
    -v sum="$sum" "$work/tp.txt")
# retry's own peak RSS (VmHWM), read by its last attempt.
hwm() {
	awk '/^VmHWM/ { print $2 }' "$1" 2>/dev/null || echo '?'
}
# shellcheck disable=SC2016
head -c "$N" /dev/zero | "$retry" -I -n 2 -b 1ms -j none sh -c '
	cat >/dev/null; [ "$RETRY_ATTEMPT" = 2 ] || exit 1
	cat /proc/$PPID/status >"$1"' sh "$work/hwm.I" 2>/dev/null
# shellcheck disable=SC2016
"$retry" -O -n 2 -b 1ms -j none sh -c '
	[ "$RETRY_ATTEMPT" = 2 ] && exec cat /proc/$PPID/status >"$1"
	head -c "$2" /dev/zero; exit 1' sh "$work/hwm.O" "$N" 2>&1 |
    cat >/dev/null
# shellcheck disable=SC2016
"$retry" --on-output "$re" -n 1 sh -c '
	cat "$2"; cat /proc/$PPID/status >"$1"' sh "$work/hwm.M" \
    "$work/text" | cat >/dev/null
rm -f "$work/text"
hwm_I=$(hwm "$work/hwm.I") hwm_O=$(hwm "$work/hwm.O") hwm_M=$(hwm "$work/hwm.M")
tp_load1=$(loadavg)

# --- 10. data at the speed of the pipe (issue 23) -----------------------------
say "10. the speed of the pipe: $pipe_rounds paired rounds of $((pipe_bytes / 1048576)) MiB"
pipe_load0=$(loadavg)
pipe_fs=$(fstype "$work")
awk 'BEGIN { for (i = 0; i < 100000; i++)
	printf "2026-11-30T01:%02d:%02d.%06d host app[%d]: GET /api/v1/items/%d 200 %dms\n",
	    i % 60, i % 60, i, i % 999, i, i % 300 }' >"$work/lines"
while :; do cat "$work/lines"; done 2>/dev/null | head -c "$pipe_bytes" >"$work/text"
N=$pipe_bytes
# The three patterns: alternatives of literals, one literal, no literal
# at all (`[0-9]{3} ms` would still hold " ms" for the prefilter).
re1='(ERROR|FATAL)' re2='timed out' re3='^[0-9]+ [a-z]+$'
# The first attempt fails and is held; released to stderr, which goes
# down the same pipe; the second, the last, writes nothing.
# shellcheck disable=SC2016
held='[ "$RETRY_ATTEMPT" = 2 ] || { head -c "$1" /dev/zero; exit 1; }'
names="retry -O -n1 (last attempt, to a pipe)|cat"
names="$names|retry -O -n 2 (first attempt held, to a pipe)|retry -I cat"
# (Labels by number: "|" separates them, and the first pattern holds one.)
names="$names|retry --on-output RE1 cat|grep -E RE1"
names="$names|retry --on-output RE2 cat|grep -E RE2"
names="$names|retry --on-output RE3 cat|grep -E RE3"
# What bounds -I and a held -O, beside them: a new file of N in TMPDIR
# alone (the copy, the held output), and the same file read back.
names="$names|head >FILE (a new file in TMPDIR, alone)"
names="$names|a file, then cat (held without retry)"
# And the hop of -O's last attempt: a process between producer and reader.
names="$names|cat into cat (one more hop, without retry)"
# And libc's memmem(3) alone, nothing else: the search that retry ran for
# a one-literal pattern until issue 35 (find.c's own since), kept beside it.
names="$names|bench/linematch -F RE2 (libc's memmem alone)"
set -- sh -c "\"$retry\" -O -n1 head -c $N /dev/zero | cat" \
    :: sh -c "head -c $N /dev/zero | cat" \
    :: sh -c "\"$retry\" -O -n 2 -b 1ms -j none sh -c '$held' sh $N 2>&1 | cat" \
    :: sh -c "head -c $N /dev/zero | \"$retry\" -I cat"
for re in "$re1" "$re2" "$re3"; do
	set -- "$@" :: "$retry" --on-output "$re" cat "$work/text" \
	    :: sh -c "cat \"$work/text\" | grep -E '$re'; [ \$? = 1 ]"
done
set -- "$@" :: sh -c "head -c $N /dev/zero >\"$work/bound\"" \
    :: sh -c "{ head -c $N /dev/zero >\"$work/bound\"; cat \"$work/bound\"; } | cat" \
    :: sh -c "head -c $N /dev/zero | cat | cat" \
    :: sh -c "cat \"$work/text\" | \"$bench/linematch\" -F '$re2'; [ \$? = 1 ]"
"$bench/spawn" -r "$pipe_rounds" -w 1 "$@" >"$work/pipe.txt"
rm -f "$work/bound"
pipe_table=$(stats "$bench/pairs.awk" -v names="$names" -v bytes="$N" \
    -v key=pipe -v pairs="pipe_Olast:0:1:cat|pipe_Oheld:2:1:cat|pipe_I:3:1:cat|pipe_M1:4:5:grep -E|pipe_M2:6:7:grep -E|pipe_M3:8:9:grep -E|pipe_Ifile:3:10:head >FILE|pipe_Oheldfile:2:11:a file, then cat|pipe_filecat:10:1:cat|pipe_heldcat:11:1:cat|pipe_Olasthop:0:12:cat into cat|pipe_hopcat:12:1:cat|pipe_M2floor:6:13:memmem alone|pipe_memgrep:13:7:grep -E" \
    -v sum="$sum" "$work/pipe.txt")
# retry's peak RSS (VmHWM) on each path, read by its last attempt after a
# whole run of the same size.
# shellcheck disable=SC2016
"$retry" -O -n1 sh -c 'head -c "$2" /dev/zero; cat /proc/$PPID/status >"$1"' \
    sh "$work/hwm.Olast" "$N" | cat >/dev/null
# shellcheck disable=SC2016
"$retry" -O -n 2 -b 1ms -j none sh -c '
	[ "$RETRY_ATTEMPT" = 2 ] && exec cat /proc/$PPID/status >"$1"
	head -c "$2" /dev/zero; exit 1' sh "$work/hwm.Oheld" "$N" 2>&1 |
    cat >/dev/null
# shellcheck disable=SC2016
head -c "$N" /dev/zero | "$retry" -I -n 2 -b 1ms -j none sh -c '
	cat >/dev/null; [ "$RETRY_ATTEMPT" = 2 ] || exit 1
	cat /proc/$PPID/status >"$1"' sh "$work/hwm.pI" 2>/dev/null
k=1
for re in "$re1" "$re2" "$re3"; do
	# shellcheck disable=SC2016
	"$retry" --on-output "$re" -n 1 sh -c '
		cat "$2"; cat /proc/$PPID/status >"$1"' sh "$work/hwm.M$k" \
	    "$work/text" >/dev/null
	k=$((k + 1))
done
rm -f "$work/text"
pipe_load1=$(loadavg)

# --- 9. start-up against the two-process floor (issue 11) ---------------------
say "9. start-up: retry -n1 -- true against bench/floor true, $start_rounds rounds x 4"
start_load0=$(loadavg)
ptyrun=$top/tests/helpers/ptyrun
disk=$work
if [ "$(fstype "$disk")" = tmpfs ]; then
	disk=$(mktemp -d "$top/.bench-disk.XXXXXX")
	trap 'rm -rf "$work" "$disk"' EXIT
fi
shm=
[ "$(fstype /dev/shm)" = tmpfs ] && shm=$(mktemp -d /dev/shm/retry-bench.XXXXXX)
: >"$work/start.md"
# start_case LABEL DIR TERMINAL [BINARY [WHICH]]: a row of the table, and
# "start_KEY" in sum; BINARY is ./retry unless given (./retry-static),
# and WHICH says which build it is.
start_case() {
	if [ "$3" = yes ]; then
		TMPDIR=$2 "$ptyrun" -t 600000 -- "$bench/spawn" -T \
		    -r "$start_rounds" -w 5 "${4:-$retry}" -n1 -- true :: \
		    "$bench/floor" true | tr -d '\r' >"$work/start.txt"
	else
		TMPDIR=$2 "$bench/spawn" -r "$start_rounds" -w 5 \
		    "${4:-$retry}" -n1 -- true :: "$bench/floor" true \
		    >"$work/start.txt"
	fi
	stats "$bench/pairs.awk" -v names="retry -n1 -- true|bench/floor true" \
	    -v bytes=0 -v pairs="start_$1:1:0:floor" -v sum="$work/start.sum" \
	    "$work/start.txt" >/dev/null
	grep "^start_$1 " "$work/start.sum" >>"$sum"
	stats "$bench/start.awk" -v key="start_$1" -v fs="$(fstype "$2")${5:+, $5}" \
	    -v tty="$3" -v sum="$sum" "$work/start.sum" "$work/start.txt" \
	    >>"$work/start.md"
}
start_case disk "$disk" no
# make static's build beside it: what the dynamic linker's work costs.
[ ! -x "$top/retry-static" ] ||
    start_case static "$disk" no "$top/retry-static" "make static's build"
# And make release's x86_64 binary (zig's musl, static, stripped).
release_bin=$top/release/retry-$("$retry" --version | cut -d' ' -f2)-linux-x86_64
[ ! -x "$release_bin" ] ||
    start_case release "$disk" no "$release_bin" "the release's x86_64 binary"
[ -z "$shm" ] || start_case tmpfs "$shm" no
if [ -x "$ptyrun" ]; then
	start_case disk_tty "$disk" yes
	[ -z "$shm" ] || start_case tmpfs_tty "$shm" yes
else
	note "tests/helpers/ptyrun is not built: the rows with a terminal are skipped (make tests/helpers/ptyrun)."
fi
[ -n "$shm" ] || note "/dev/shm is not a tmpfs here: the tmpfs rows are skipped."
[ -z "$shm" ] || rm -rf "$shm"
start_load1=$(loadavg)

# The same against 0.3.0, built from its commit beside this build (a clone
# with history; the full mode): what the features added since cost a run
# that uses none of them (issue 34: within noise of 0.3's).
v03=acf345b
v03_row=
if [ "$mode" = full ] && git -C "$top" cat-file -e "$v03^{commit}" 2>/dev/null &&
    mkdir "$work/v03" && git -C "$top" archive "$v03" | tar -x -C "$work/v03" &&
    make -C "$work/v03" -s retry >/dev/null 2>&1; then
	say "9. start-up against 0.3.0 ($v03), $start_rounds rounds x 3"
	TMPDIR=$disk "$bench/spawn" -r "$start_rounds" -w 5 "$retry" -n1 -- true \
	    :: "$work/v03/retry" -n1 -- true :: "$bench/floor" true >"$work/v03.txt"
	stats "$bench/pairs.awk" \
	    -v names="retry -n1 -- true|0.3.0 -n1 -- true|bench/floor true" \
	    -v bytes=0 -v sum="$sum" \
	    -v pairs="start_v03:1:0:0.3.0|start_now_floor:2:0:floor|start_v03_floor:2:1:floor" \
	    "$work/v03.txt" >/dev/null
	v03_row=$(awk '$1 == "start_v03" { r = $2; lo = $3; hi = $4 }
	    $1 == "start_now_floor" { nf = $2 } $1 == "start_v03_floor" { of = $2 }
	    END { printf "| 9. start-up ÷ 0.3.0'"'"'s (paired; ÷ the floor: %.3f and 0.3.0 %.3f) | %.3f [%.3f, %.3f] | within noise (±2%%) | %s |\n",
		nf, of, r, lo, hi, (r <= 1.02 ? "**met**" : "**missed**") }' "$sum")
else
	note "9. start-up against 0.3.0 is measured in the full mode, in a clone that has its commit $v03: skipped."
fi

# --- 13. growth with the work (issue 35) ----------------------------------------
# How retry's costs grow with the work: attempts, attempts that print, runs
# on one circuit, stdin, lines of output.  Each part states its conditions;
# its tables go to RESULTS.md after sections 11 and 12 (bench/store.sh and
# bench/herd-rules.sh write those).
say "13. growth: attempts $grow_attempts; $grow_rss that print; crowds of $grow_crowds; stdin $grow_stdin bytes; $grow_lines lines"
probe=$top/tests/helpers/attempt-probe
if [ ! -x "$probe" ] ||
    [ -n "$(find "$probe.c" -newer "$probe" 2>/dev/null)" ]; then
	say "building tests/helpers/attempt-probe"
	${CC:-cc} -std=c99 -O2 -o "$probe" "$probe.c"
fi
gtmp=$(fstype "${TMPDIR:-/tmp}")
g=$work/grow.txt
: >"$g"
# gtime KEY ROUND [-i INPUT] CMD [ARG ...]: a line "KEY ROUND wall_ns cpu_ns
# maxrss_kb status" in $g, from bench/grow time (wait4's rusage).
gtime() {
	k=$1 r=$2
	shift 2
	printf '%s %s %s\n' "$k" "$r" "$("$bench/grow" time "$@")" >>"$g"
}
# gmed KEY FIELD: the median over the rounds of a field of $g (3: wall ns,
# 4: CPU ns, 5: maxrss kB).
gmed() {
	awk -v k="$1" -v f="$2" '$1 == k { print $f }' "$g" | sort -n | awk '
	    { a[NR] = $1 }
	    END {
		if (NR == 0)
			print 0
		else if (NR % 2)
			print a[(NR + 1) / 2]
		else
			print (a[NR / 2] + a[NR / 2 + 1]) / 2
	    }'
}
# gcond LOAD0: the conditions of a part, said under its table.
gcond() {
	printf 'Conditions: TMPDIR on %s; no terminal (stdio on /dev/null or pipes); load average %s at the start, %s at the end; %s round(s), the median.\n' \
	    "$gtmp" "$1" "$(loadavg)" "$grow_rounds"
}
# The attempts of the stdin and output parts: each reads its stdin to the
# end, or writes N lines (bench/grow lines), then writes its parent's
# (retry's) VmHWM to a file.
cat >"$work/sink" <<'SINK'
#!/bin/sh
cat >/dev/null
exec awk '/^VmHWM/ { print $2 }' "/proc/$PPID/status" >"$1"
SINK
cat >"$work/talk" <<'TALK'
#!/bin/sh
"$1" lines "$2"
exec awk '/^VmHWM/ { print $2 }' "/proc/$PPID/status" >"$3"
TALK
chmod +x "$work/sink" "$work/talk"
quick_b='-b 0.000001 -c 0.000001 -j none'

# 13a. N attempts of false, no delay to speak of (1 ns: -b 0 is refused),
# against bench/grow loop N false: the same processes without retry.
g_load0=$(loadavg)
r=0
while [ "$r" -lt "$grow_rounds" ]; do
	for n in $grow_attempts; do
		if [ $((r % 2)) = 0 ]; then
			# shellcheck disable=SC2086
			gtime "att_r$n" "$r" "$retry" -q -n "$n" $quick_b false
			gtime "att_f$n" "$r" "$bench/grow" loop "$n" false
		else
			gtime "att_f$n" "$r" "$bench/grow" loop "$n" false
			# shellcheck disable=SC2086
			gtime "att_r$n" "$r" "$retry" -q -n "$n" $quick_b false
		fi
	done
	r=$((r + 1))
done
{
	echo "| attempts | retry: wall / CPU per attempt | floor: wall / CPU per attempt | retry − floor per attempt: wall / CPU | peak RSS (wait4: retry or an attempt) |"
	echo "|---:|---:|---:|---:|---:|"
	for n in $grow_attempts; do
		awk -v n="$n" -v rw="$(gmed "att_r$n" 3)" -v rc="$(gmed "att_r$n" 4)" \
		    -v fw="$(gmed "att_f$n" 3)" -v fc="$(gmed "att_f$n" 4)" \
		    -v rss="$(gmed "att_r$n" 5)" 'BEGIN {
			printf "| %d | %.0f / %.0f µs | %.0f / %.0f µs | %.0f / %.0f µs | %d kB |\n",
			    n, rw / n / 1e3, rc / n / 1e3, fw / n / 1e3, fc / n / 1e3,
			    (rw - fw) / n / 1e3, (rc - fc) / n / 1e3, rss }'
	done
	echo
	gcond "$g_load0"
} >"$work/g_att.md"
n1=$(echo "$grow_attempts" | awk '{ print $1 }')
nmax=$(echo "$grow_attempts" | awk '{ print $NF }')
g_att_marginal=$(awk -v a="$n1" -v b="$nmax" -v r1="$(gmed "att_r$n1" 3)" \
    -v rb="$(gmed "att_r$nmax" 3)" -v f1="$(gmed "att_f$n1" 3)" \
    -v fb="$(gmed "att_f$nmax" 3)" 'BEGIN {
	printf "Each attempt added from %d to %d costs retry %.0f µs of wall time and the floor %.0f µs: %.0f µs of retry'"'"'s own per attempt (start-up, paid once, is what makes 1 attempt dearer).", a, b, (rb - r1) / (b - a) / 1e3, (fb - f1) / (b - a) / 1e3, ((rb - r1) - (fb - f1)) / (b - a) / 1e3 }')

# 13b. retry's memory over many attempts that print 1 KiB each: VmHWM and
# VmRSS read from /proc by the attempts marked (tests/helpers/attempt-probe),
# plain, with -O (each attempt held, then released to stderr) and with
# --on-output (every line read by retry).
g_load0=$(loadavg)
marks=$(awk -v n="$grow_rss" 'BEGIN { for (m = 1; m < n; m *= 10) printf "%d,", m; print n }')
for v in plain O M; do
	case $v in
	plain) set -- ;;
	O) set -- -O ;;
	M) set -- --on-output 'timed out' ;;
	esac
	rm -f "$work/rss.$v"
	# shellcheck disable=SC2086
	"$retry" -q -n "$grow_rss" $quick_b "$@" -- "$probe" 1024 "$work/rss.$v" \
	    "$marks" </dev/null >/dev/null 2>&1 || true
done
{
	echo "| attempt | plain: VmHWM / VmRSS | \`-O\`: VmHWM / VmRSS | \`--on-output 'timed out'\`: VmHWM / VmRSS |"
	echo "|---:|---:|---:|---:|"
	awk 'FILENAME ~ /plain$/ { p[$1] = $3 " / " $4 " kB"; at[$1] = 1 }
	    FILENAME ~ /O$/ { o[$1] = $3 " / " $4 " kB"; at[$1] = 1 }
	    FILENAME ~ /M$/ { m[$1] = $3 " / " $4 " kB"; at[$1] = 1 }
	    END { for (a in at) print a, "| " p[a] " | " o[a] " | " m[a] " |" }' \
	    "$work/rss.plain" "$work/rss.O" "$work/rss.M" | sort -n |
	    sed 's/^\([0-9]*\) /| \1 /'
	echo
	printf 'Conditions: TMPDIR on %s; no terminal; load average %s at the start, %s at the end; one run each.\n' \
	    "$gtmp" "$g_load0" "$(loadavg)"
} >"$work/g_rss.md"

# 13c. 1 to 200 runs at once on one --circuit (bench/crowd): the record in
# the state directory, in Redis on a Unix socket when redis-server is
# here, and no circuit.  Each run: 5 attempts that fail, 1 ms apart.
g_load0=$(loadavg)
mkdir "$work/gstate"
gredis='' gsock=''
grow_cleanup() {
	[ -z "$gredis" ] || kill -TERM "$gredis" 2>/dev/null || true
	rm -rf "$work" "$gsock"
	[ "$disk" = "$work" ] || rm -rf "$disk"
}
trap grow_cleanup EXIT
if command -v redis-server >/dev/null 2>&1 &&
    command -v redis-cli >/dev/null 2>&1; then
	# The socket's path must be short: /tmp, not a deep $TMPDIR.
	gsock=$(mktemp -d /tmp/retry-grow.XXXXXX)
	redis-server --port 0 --unixsocket "$gsock/sock" --unixsocketperm 700 \
	    --save '' --appendonly no --dir "$gsock" --logfile "$gsock/log" \
	    --daemonize no &
	gredis=$!
	k=0
	until redis-cli -s "$gsock/sock" ping >/dev/null 2>&1; do
		k=$((k + 1))
		if [ "$k" -gt 100 ]; then
			note "13. redis-server did not start: its column is skipped."
			kill -TERM "$gredis" 2>/dev/null || true
			gredis=
			break
		fi
		sleep 0.05
	done
else
	note "13. redis-server or redis-cli is not installed: the Redis column is skipped."
fi
copts='-n 5 -b 1ms -c 1ms -j none'
for k in $grow_crowds; do
	# shellcheck disable=SC2086
	set -- "$retry" $copts --trip 1000000 --circuit growth -- false \
	    :: "$retry" $copts -- false
	if [ -n "$gredis" ]; then
		# shellcheck disable=SC2086
		set -- "$@" :: "$retry" $copts --trip 1000000 --circuit growth \
		    --store "redis+unix://$gsock/sock" -- false
	fi
	RETRY_STATE_DIR=$work/gstate "$bench/crowd" -n "$k" -r "$grow_rounds" \
	    "$@" >"$work/gcrowd.$k"
done
if [ -n "$gredis" ]; then
	kill -TERM "$gredis" 2>/dev/null || true
	wait "$gredis" 2>/dev/null || true
	gredis=
fi
{
	echo "| runs at once | time per run (crowd ÷ runs): state directory / Redis / no circuit | per attempt: state directory / Redis / no circuit | the circuit's cost per attempt (with − without): state directory / Redis | runs that exited 0 (none should) |"
	echo "|---:|---:|---:|---:|---:|"
	for k in $grow_crowds; do
		sort -n -k 3 "$work/gcrowd.$k" | awk -v k="$k" '
		    { t[$2, ++n[$2]] = $3; bad += ($4 < k) ? k - $4 : 0 }
		    function med(i,   m) {
			m = n[i]
			if (m == 0)
				return -1
			return m % 2 ? t[i, (m + 1) / 2] : (t[i, m / 2] + t[i, m / 2 + 1]) / 2
		    }
		    function cell(ns, div) {
			return ns < 0 ? "–" : sprintf("%.0f", ns / div / 1e3)
		    }
		    function diff(a, b) {
			return a < 0 ? "–" : sprintf("%.0f", (a - b) / (5 * k) / 1e3)
		    }
		    END {
			f = med(0); w = med(1); r = med(2)
			printf "| %d | %s / %s / %s µs | %s / %s / %s µs | %s / %s µs | %d |\n",
			    k, cell(f, k), cell(r, k), cell(w, k),
			    cell(f, 5 * k), cell(r, 5 * k), cell(w, 5 * k),
			    diff(f, w), diff(r, w), bad }'
	done
	echo
	printf 'Conditions: the record (RETRY_STATE_DIR) on %s; Redis %s; no terminal; load average %s at the start, %s at the end; %s crowd(s) of each, the median.\n' \
	    "$(fstype "$work/gstate")" \
	    "$([ -n "$gsock" ] && echo "$(redis-server --version | cut -d' ' -f1-3), on a Unix socket, no persistence" || echo 'not installed')" \
	    "$g_load0" "$(loadavg)" "$grow_rounds"
} >"$work/g_crowd.md"

# 13d. stdin of 1 KiB to 1 GiB, with and without -I, against the same
# pipeline without retry.
g_load0=$(loadavg)
for s in $grow_stdin; do
	r=0
	while [ "$r" -lt "$grow_rounds" ]; do
		# shellcheck disable=SC2016
		gtime "in_p$s" "$r" sh -c 'head -c "$1" /dev/zero |
		    "$2" -n 2 -b 1ms -j none "$3" "$4"' sh "$s" "$retry" \
		    "$work/sink" "$work/hwm.in_p$s"
		# shellcheck disable=SC2016
		gtime "in_I$s" "$r" sh -c 'head -c "$1" /dev/zero |
		    "$2" -I -n 2 -b 1ms -j none "$3" "$4"' sh "$s" "$retry" \
		    "$work/sink" "$work/hwm.in_I$s"
		# shellcheck disable=SC2016
		gtime "in_f$s" "$r" sh -c 'head -c "$1" /dev/zero | "$2" "$3"' \
		    sh "$s" "$work/sink" "$work/hwm.in_f"
		r=$((r + 1))
	done
done
{
	echo "| stdin | retry: time, ns per byte, VmHWM | \`retry -I\`: time, ns per byte, VmHWM | without retry: time, ns per byte |"
	echo "|---:|---:|---:|---:|"
	for s in $grow_stdin; do
		awk -v s="$s" -v p="$(gmed "in_p$s" 3)" -v i="$(gmed "in_I$s" 3)" \
		    -v f="$(gmed "in_f$s" 3)" \
		    -v hp="$(cat "$work/hwm.in_p$s" 2>/dev/null)" \
		    -v hi="$(cat "$work/hwm.in_I$s" 2>/dev/null)" 'BEGIN {
			u = s >= 1073741824 ? sprintf("%d GiB", s / 1073741824) : \
			    s >= 1048576 ? sprintf("%d MiB", s / 1048576) : \
			    sprintf("%d KiB", s / 1024)
			printf "| %s | %.1f ms, %.3f, %s kB | %.1f ms, %.3f, %s kB | %.1f ms, %.3f |\n",
			    u, p / 1e6, p / s, hp, i / 1e6, i / s, hi, f / 1e6, f / s }'
	done
	echo
	gcond "$g_load0"
} >"$work/g_in.md"
s1=$(echo "$grow_stdin" | awk '{ print $1 }')
smax=$(echo "$grow_stdin" | awk '{ print $NF }')
g_in_marginal=$(awk -v a="$s1" -v b="$smax" \
    -v p1="$(gmed "in_p$s1" 3)" -v pb="$(gmed "in_p$smax" 3)" \
    -v i1="$(gmed "in_I$s1" 3)" -v ib="$(gmed "in_I$smax" 3)" \
    -v f1="$(gmed "in_f$s1" 3)" -v fb="$(gmed "in_f$smax" 3)" 'BEGIN {
	printf "Each byte added from the smallest size to the largest: retry %.3f ns, `retry -I` %.3f ns, without retry %.3f ns (at the small sizes the time is the start-up of the processes, not the bytes).", (pb - p1) / (b - a), (ib - i1) / (b - a), (fb - f1) / (b - a) }')

# 13e. 1 to 10^7 lines of output read by --on-output, against the same
# attempt without retry.
g_load0=$(loadavg)
for l in $grow_lines; do
	r=0
	while [ "$r" -lt "$grow_rounds" ]; do
		gtime "ln_r$l" "$r" "$retry" -n 2 -b 1ms -j none \
		    --on-output 'timed out' "$work/talk" "$bench/grow" "$l" \
		    "$work/hwm.ln$l"
		gtime "ln_f$l" "$r" "$work/talk" "$bench/grow" "$l" "$work/hwm.lnf"
		r=$((r + 1))
	done
done
{
	echo "| lines (64 bytes) | \`retry --on-output 'timed out'\`: time, ns per line, VmHWM | without retry: time, ns per line |"
	echo "|---:|---:|---:|"
	for l in $grow_lines; do
		awk -v l="$l" -v r="$(gmed "ln_r$l" 3)" -v f="$(gmed "ln_f$l" 3)" \
		    -v h="$(cat "$work/hwm.ln$l" 2>/dev/null)" 'BEGIN {
			printf "| %d | %.1f ms, %.1f, %s kB | %.1f ms, %.1f |\n",
			    l, r / 1e6, r / l, h, f / 1e6, f / l }'
	done
	echo
	gcond "$g_load0"
} >"$work/g_ln.md"
l1=$(echo "$grow_lines" | awk '{ print $1 }')
lmax=$(echo "$grow_lines" | awk '{ print $NF }')
g_ln_marginal=$(awk -v a="$l1" -v b="$lmax" \
    -v r1="$(gmed "ln_r$l1" 3)" -v rb="$(gmed "ln_r$lmax" 3)" \
    -v f1="$(gmed "ln_f$l1" 3)" -v fb="$(gmed "ln_f$lmax" 3)" 'BEGIN {
	printf "Each line added from %d to %d: retry %.1f ns, without retry %.1f ns.", a, b, (rb - r1) / (b - a), (fb - f1) / (b - a) }')

# --- 7. one circuit, many runs (issue 15) --------------------------------------
say "7. one circuit: $crowd_rounds paired crowds of $crowd runs"
crowd_load0=$(loadavg)
mkdir "$work/state"
crowd_fs=$(fstype "$work/state")
RETRY_STATE_DIR=$work/state "$bench/crowd" -n "$crowd" -r "$crowd_rounds" \
    "$retry" -n 5 -b 1ms -c 1ms -j none --trip 1000000 --circuit bench -- false \
    :: "$retry" -n 5 -b 1ms -c 1ms -j none -- false >"$work/crowd.txt"
crowd_table=$(stats "$bench/crowd.awk" -v attempts=$((crowd * 5)) \
    -v sum="$sum" "$work/crowd.txt")
crowd_load1=$(loadavg)

# --- the verdicts ----------------------------------------------------------
v_deb=– v_timeout=– r_deb=– r_timeout=–
if [ -n "$i_deb" ]; then
	r_deb=$(get ratio "$i_deb")
	le "$r_deb" 1.0 && v_deb=$(verdict 0) || v_deb=$(verdict 1)
fi
if [ -n "$i_timeout" ]; then
	r_timeout=$(get ratio "$i_timeout")
	le "$r_timeout" 0.9 && v_timeout=$(verdict 0) || v_timeout=$(verdict 1)
fi
acc_median=$(get acc_median) acc_p99=$(get acc_p99) acc_drift=$(get acc_drift)
le "$acc_median" 1000000 && v_accm=$(verdict 0) || v_accm=$(verdict 1)
le "$acc_p99" 5000000 && v_accp=$(verdict 0) || v_accp=$(verdict 1)
abs_drift=$(awk -v d="$acc_drift" 'BEGIN { print d < 0 ? -d : d }')
le "$abs_drift" 1000000 && v_drift=$(verdict 0) || v_drift=$(verdict 1)
asleep=$(get asleep_median 0) running=$(get running_median 0)
le "$asleep" 10000000 && v_asleep=$(verdict 0) || v_asleep=$(verdict 1)
le "$running" 10000000 && v_running=$(verdict 0) || v_running=$(verdict 1)
hwm_retry=$(get running_hwm 0)
hwm_timeout=– v_hwm=–
if [ -n "$timeout_cmd" ]; then
	hwm_timeout=$(get running_hwm 1)
	le "$hwm_retry" "$hwm_timeout" && v_hwm=$(verdict 0) || v_hwm=$(verdict 1)
fi
maxrss_retry=$(get rss 0)
maxrss_timeout=$([ -n "$i_timeout" ] && get rss "$i_timeout" || echo –)
if [ -n "$replay" ]; then
	le "$replay" 4096 && v_replay=$(verdict 0) || v_replay=$(verdict 1)
	replay_cell="$replay kB (ru_maxrss of retry and its attempts; exit $replay_status)"
else
	v_replay="not available yet"
	replay_cell="not available yet: \`retry --help\` lists no \`--replay-stdin\`"
fi
herd_ok=0 worst=0
for j in full equal decorrelated; do
	b=$(get "herd_${j}_busiest") e=$(get "herd_${j}_expect")
	d=$(get "herd_${j}_distinct") n=$(get "herd_${j}_n")
	[ "$d" = "$n" ] && [ "$n" = "$herd" ] || herd_ok=1
	le "$b" "$(awk -v e="$e" 'BEGIN { print 2 * e }')" || herd_ok=1
	le "$b" "$worst" || worst=$b
done
v_herd=$(verdict "$herd_ok")
herd_stat=0
for j in full equal decorrelated; do
	le "$(get "herd_${j}_busiest")" "$(get "herd_${j}_ideal95")" || herd_stat=1
done
v_herd_stat=$(verdict "$herd_stat")
comb=$(get herd_none_busiest)
le "$((3 * worst))" "$comb" && v_comb=$(verdict 0) || v_comb=$(verdict 1)
jitter_cells=
for j in full equal decorrelated; do
	jitter_cells="$jitter_cells${jitter_cells:+; }$j $(get "herd_${j}_busiest") vs $(get "herd_${j}_expect") ($(get "herd_${j}_distinct") distinct)"
done

# Sections 6 to 9: field N of the summary line KEY, and their verdicts.
field() {
	awk -v k="$1" -v f="$2" '$1 == k { print $f; exit }' "$sum"
}
is_kb() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}
tp_I=$(field tp_I 2) tp_O=$(field tp_O 2) tp_M=$(field tp_M 2)
# -I and a held -O against the file-write floor (issue 35): they must
# write the same file, so `cat`, which writes none, is shown beside them
# but is no target.
tp_Ifile=$(field tp_Ifile 2) tp_Ofloor=$(field tp_Ofloor 2)
is_kb "$hwm_I" && le 1.0 "$tp_Ifile" && le "$hwm_I" 4095 &&
    v_tpI=$(verdict 0) || v_tpI=$(verdict 1)
is_kb "$hwm_O" && le 1.0 "$tp_Ofloor" && le "$hwm_O" 4095 &&
    v_tpO=$(verdict 0) || v_tpO=$(verdict 1)
is_kb "$hwm_M" && le 0.8 "$tp_M" && le "$hwm_M" 4095 &&
    v_tpM=$(verdict 0) || v_tpM=$(verdict 1)
# pipe_row KEY HWM TARGET LABEL [BOUND]: a summary row of section 10, its
# verdict on both the ratio and retry's peak RSS (under 4 MiB); BOUND, what
# bounds the path, measured beside it.
pipe_row() {
	r=$(field "$1" 2)
	if is_kb "$2" && le "$3" "$r" && le "$2" 4095; then
		v=$(verdict 0)
	else
		v=$(verdict 1)
	fi
	printf '| 10. %s, %s MiB ÷ theirs; retry'"'"'s peak RSS | %s [%s, %s]; %s kB%s | ≥ %s; < 4 MiB | %s |\n' \
	    "$4" $((pipe_bytes / 1048576)) "$r" "$(field "$1" 3)" \
	    "$(field "$1" 4)" "$2" "${5:+; $5}" "$3" "$v"
}
pipe_rows() {
	pipe_row pipe_Olast "$(hwm "$work/hwm.Olast")" 0.9 \
	    '`-O`, the last attempt, to a pipe, against `cat`' \
	    "beside it: \`cat\` into \`cat\`, one more process between them, runs at $(field pipe_hopcat 2) of \`cat\`"
	pipe_row pipe_Oheldfile "$(hwm "$work/hwm.Oheld")" 1.0 \
	    '`-O`, a first attempt held, then released to a pipe, against the file-write floor (a new file in TMPDIR, then read back)' \
	    "beside it, against \`cat\`: retry $(field pipe_Oheld 2), the floor $(field pipe_heldcat 2)"
	pipe_row pipe_Ifile "$(hwm "$work/hwm.pI")" 1.0 \
	    '`-I` against the file-write floor (a new file in TMPDIR, alone)' \
	    "beside it, against \`cat\`: retry $(field pipe_I 2), the floor $(field pipe_filecat 2)"
	pipe_row pipe_M1 "$(hwm "$work/hwm.M1")" 1.1 \
	    "\`--on-output '$re1'\` against \`grep -E\`"
	pipe_row pipe_M2 "$(hwm "$work/hwm.M2")" 1.0 \
	    "\`--on-output '$re2'\` against \`grep -E\`" \
	    "beside it: libc's memmem(3) alone, the search retry ran before find.c, over the same text runs at $(field pipe_memgrep 2) of \`grep -E\`; retry at $(field pipe_M2floor 2) of that"
	pipe_row pipe_M3 "$(hwm "$work/hwm.M3")" 0.5 \
	    "\`--on-output '$re3'\` (no literal) against \`grep -E\`"
}
crowd_ratio=$(field crowd 2)
le "$crowd_ratio" 1.2 && v_crowd=$(verdict 0) || v_crowd=$(verdict 1)
# wake_cell D: retry's and the floor's "median / p99 µs" (samples);
# wake_ok KEY: both under 0.5 ms.
wake_cell() {
	awk -v k="wake_$1" -v f="floor_$1" '
	    $1 == k { r = sprintf("%.0f / %.0f µs (%d samples)", $2 / 1000,
		$3 / 1000, $5) }
	    $1 == f { fl = sprintf("%.0f / %.0f µs", $2 / 1000, $3 / 1000) }
	    END { printf "%s; the floor: %s", r, fl }' "$sum"
}
wake_ok() {
	awk -v k="$1" '$1 == k { ok = $5 > 0 && $2 < 500000 && $3 < 500000 }
	    END { exit !ok }' "$sum"
}
wake_ok wake_20ms && v_wake_20ms=$(verdict 0) || v_wake_20ms=$(verdict 1)
wake_ok wake_2s && v_wake_2s=$(verdict 0) || v_wake_2s=$(verdict 1)
wake_ok wake_10s && v_wake_10s=$(verdict 0) || v_wake_10s=$(verdict 1)
# start_row KEY LABEL [TARGET]: the summary row of a start-up case, if
# measured; the target is 1.05 unless given.
start_row() {
	awk -v k="start_$1" -v l="$2" -v t="${3:-1.05}" '$1 == k { printf "| 9. start-up: `retry -n1 -- true` ÷ the two-process floor, %s | %.3f [%.3f, %.3f] | ≤ %s | %s |\n",
	    l, $2, $3, $4, t, $2 <= t + 0 ? "**met**" : "**missed**" }' "$sum"
}
# faults_row: issue 35's target for the page faults of the first case.
faults_row() {
	awk '$1 == "faults_disk" { printf "| 9. minor page faults of `retry -n1 -- true`, wrapper and child (wait4, median) | %d; the floor %d | ≤ the floor'"'"'s + 8 | %s |\n",
	    $2, $3, $2 <= $3 + 8 ? "**met**" : "**missed**" }' "$sum"
}

# What section 10 says of the bound of -I and of a held -O.
pipe_findings() {
	awk -v cat="$(field pipe_t1 2)" -v file="$(field pipe_t10 2)" \
	    -v held="$(field pipe_t11 2)" -v I="$(field pipe_Ifile 2)" \
	    -v O="$(field pipe_Oheldfile 2)" -v hop="$(field pipe_hopcat 2)" \
	    -v mg="$(field pipe_memgrep 2)" -v mf="$(field pipe_M2floor 2)" 'BEGIN {
		printf "What bounds `-I` and a held `-O`, in this run: writing a new file of that size in TMPDIR, and nothing else, takes %.0f ms, %.1f times what the pipeline through `cat` takes (%.0f ms); writing it and reading it back, as a held attempt must, %.0f ms.  The time goes to the kernel filling page-cache pages, which a tmpfs or a memfd must fill as well, so a path that keeps a copy runs near the speed of that write, %.2f of `cat` here, not near `cat`: `-I` runs at %.2f× the speed of that write alone (head(1) writes in small pieces, retry splices up to 1 MiB at a time), a held `-O` at %.2f× that of the write and the read.  The last attempt of `-O` keeps no copy: it is not held, and passes from the attempt'"'"'s pipe to stdout by splice(2), which costs less than any process between the two (`cat` into `cat` runs at %.2f of `cat`).", file / 1e6, file / cat, cat / 1e6, held / 1e6, cat / file, I, O, hop
		printf "  For `--on-output` with one literal, retry finds it with a search of its own (find.c: a memchr(3) skip loop on the literal'"'"'s rarest byte, or Horspool'"'"'s on pairs of bytes, chosen per literal); libc'"'"'s memmem(3) alone, which it used before, runs at %.2f of the speed of `grep -E` here, and retry at %.2f× the speed of memmem alone.\n", mg, mf
	    }'
}

# What section 6 says about its targets, in numbers of this run.
tp_findings() {
	awk -v cat="$(field tp_t1 2)" -v file="$(field tp_t5 2)" \
	    -v I="$(field tp_Ifile 2)" -v O="$(field tp_Ofile 2)" \
	    -v grep="$(field tp_t7 2)" -v lm="$(field tp_t8 2)" \
	    -v M="$(field tp_Mfloor 2)" 'BEGIN {
		printf "What bounds these paths, in this run: writing a new file of that size in TMPDIR, and nothing else, takes %.2f s, %.1f times what the whole pipeline through `cat` takes (%.2f s).  Such a file goes into the page cache, and to the disk at the disk'"'"'s speed only once it passes the kernel'"'"'s dirty-page limits (vm.dirty_ratio, a share of free memory), so this bound is the page cache'"'"'s or the disk'"'"'s, whichever the size reaches, not retry'"'"'s.  `-I` must write such a file (the copy) as `-O` must for an attempt that may be retried (the held output; the last attempt is not held): against `cat`, no path that writes one can pass %.2f here.  `-I` runs at %.2f× and `-O` at %.2f× the speed of that write alone.", file / 1e9, file / cat, cat / 1e9, cat / file, I, O
		printf "  For `--on-output`, libc'"'"'s regexec(3) on each line and nothing else (bench/linematch) takes %.2f s where `grep -E` takes %.2f s (grep runs its own DFA and a Boyer-Moore search for the pattern'"'"'s fixed strings over the whole buffer, not a matcher per line); retry runs at %.2f× the speed of that floor, because since issue 23 it runs regexec(3) only on the lines that hold a fixed string every match must contain (here: none).\n", lm / 1e9, grep / 1e9, M
	    }'
}

# sizes: a row per build of the start-up table, and per release binary.
sizes() {
	for f in "$retry" "$top/retry-static" "$top"/release/retry-*-linux-*; do
		case $f in *.minisig) continue ;; esac
		[ -f "$f" ] || continue
		printf '| %s | %s |\n' "${f#"$top"/}" "$(wc -c <"$f" | tr -d ' ')"
	done
}

# What section 9 says about its target.
start_findings() {
	printf 'Where the difference goes: the floor calls 3 functions of libc, retry about 100, each bound by the dynamic linker at its first call (callgrind, 2026-12-07: 219,000 instructions to the floor'"'"'s 128,000; binding all 133 of its PLT slots at once, LD_BIND_NOW, costs 73,000 more, some 550 each, so the 100 bound lazily come to about 55,000 of the 91,000 more), and it faults in some 20 pages more (see "Where the start-up time goes" under 1): libc'"'"'s text for those functions, the vDSO'"'"'s clock pages, BSS pages of small variables that lie between the large buffers of their files, the stack of main(); its own work before the attempt (signal handlers set and, in the child, set back, which the contract needs; the self-pipe, one pipe2(2) call; the environment; the hint directory, which RETRY_AFTER_FILE needs even for one attempt) is the rest.'
	[ -z "$i_static" ] ||
	    printf '  The static build of section 1 starts in %s of the time of the dynamic one.' \
	    "$(awk -v r="$(get ratio "$i_static")" 'BEGIN { printf "%.0f%%", 100 / r }')"
	echo
}

# What the overhead rows say about start-up, in numbers of this run.
findings() {
	printf 'Against a bare `true` (median of paired ratios): retry %s×' \
	    "$(get bare 0)"
	[ -z "$i_timeout" ] || printf ', timeout %s×' "$(get bare "$i_timeout")"
	[ -z "$i_deb" ] || printf ", Debian's retry %s×" "$(get bare "$i_deb")"
	[ -z "$i_static" ] || printf ', retry static %s×' "$(get bare "$i_static")"
	printf '; the floor of two process starts is about 2×.'
	[ -z "$i_static" ] || printf '  The static build runs in %s of the time of the dynamic one (paired median), with %s page faults instead of %s (wrapper and child); static retry ÷ Debian'"'"'s retry = %s, ÷ timeout = %s.' \
	    "$(awk -v r="$(get ratio "$i_static")" 'BEGIN { printf "%.0f%%", 100 / r }')" \
	    "$(get faults "$i_static")" "$(get faults 0)" \
	    "$([ -n "$i_deb" ] && get alt "$i_deb" || echo –)" \
	    "$([ -n "$i_timeout" ] && get alt "$i_timeout" || echo –)"
	echo
}

# Was the machine quiet?  The 1-minute load average before the first
# measurement, against 0.5; later ones count the bench's own processes.
quiet_or_not() {
	l=$(echo "$load_start" | cut -d' ' -f1)
	if le "$l" 0.5; then
		printf 'The machine was quiet when the run began: 1-minute load average %s.' "$l"
	else
		printf 'The machine was **not quiet** when the run began: 1-minute load average %s, other work was running; figures are noisier than on an idle machine (paired rounds keep the ratios fair to both sides).' "$l"
	fi
	printf '  While it runs, the bench keeps one to four processes of its own busy, which the load averages given with each section count too.\n'
}

# --- RESULTS.md -------------------------------------------------------------
say "writing $out/RESULTS.md"
b() { printf '`%s`' "$*"; }
{
	cat <<EOF
# Benchmark results

Written by \`bench/run.sh\` ($mode mode$([ "$mode" = quick ] && echo ', a smoke run: few rounds, the figures are rough')).
Every figure comes from this run on this machine; times are medians, and
comparisons are ratios of paired runs taken in interleaved rounds, never
one absolute time.  Run it again with \`make bench\`.

$(quiet_or_not)

## The machine

$(machine)

## Summary

| figure | result | target | |
|---|---|---|---|
| 1. overhead vs Debian's retry | retry ÷ Debian's retry = $r_deb | ≤ 1.0 | $v_deb |
| 1. overhead vs timeout | retry ÷ timeout = $r_timeout | ≤ 0.9 | $v_timeout |
| 2. gap error, median | $(ms "$acc_median") | < 1 ms | $v_accm |
| 2. gap error, p99 | $(ms "$acc_p99") (quantile by quantile: $(ms "$(get acc_qq99)"); the floor's own p99 − median: $(ms "$(awk -v a="$(get acc_floor99)" -v b="$(get acc_floor)" 'BEGIN { print a - b }')")) | < 5 ms | $v_accp |
| 2. drift over 50 attempts | $(ms "$acc_drift") | none (\|drift\| < 1 ms) | $v_drift |
| 3. SIGTERM while asleep → reaped, median | $(ms "$asleep") | < 10 ms | $v_asleep |
| 3. SIGTERM while an attempt runs → reaped, median | $(ms "$running") | < 10 ms | $v_running |
| 4. peak RSS, plain run (VmHWM, retry alone) | retry $hwm_retry kB, timeout $hwm_timeout kB | ≤ timeout's | $v_hwm |
| 4. peak RSS with \`--replay-stdin\` of $((replay_bytes / 1048576)) MiB | $replay_cell | < 4 MiB | $v_replay |
| 5. herd, jitter modes: busiest 10 ms vs uniform, distinct delays | $jitter_cells | ≤ 2× uniform, $herd distinct | $v_herd |
| 5. herd, the same against ideal uniform draws | busiest ≤ the 95th percentile of $herd ideal uniform draws | (see 5) | $v_herd_stat |
| 5. herd, none: the comb | $comb of $herd in one 10 ms bucket | visible (≥ 3× any jitter mode's $worst) | $v_comb |
| 6. throughput of \`-I\` ÷ the file-write floor's (\`head >FILE\`, a new file in TMPDIR), $((tp_bytes / 1048576)) MiB; retry's peak RSS | $tp_Ifile; $hwm_I kB; beside it, ÷ \`cat\`'s: $tp_I | ≥ 1.0; < 4 MiB | $v_tpI |
| 6. throughput of \`-O\`, held, ÷ the file-write floor's (a new file in TMPDIR, then read back); retry's peak RSS | $tp_Ofloor; $hwm_O kB; beside it, ÷ \`cat\`'s: $tp_O | ≥ 1.0; < 4 MiB | $v_tpO |
| 6. throughput of \`--on-output RE\` ÷ \`grep -E RE\`'s; retry's peak RSS | $tp_M; $hwm_M kB | ≥ 0.8; < 4 MiB | $v_tpM |
| 7. $crowd runs on one \`--circuit\`: time per attempt ÷ without | $crowd_ratio | ≤ 1.2 | $v_crowd |
| 8. sleep error (woke − asked) at 20 ms: median / p99 | $(wake_cell 20ms) | < 0.5 ms | $v_wake_20ms |
| 8. the same at 2 s | $(wake_cell 2s) | < 0.5 ms | $v_wake_2s |
| 8. the same at 10 s | $(wake_cell 10s) | < 0.5 ms | $v_wake_10s |
$(start_row disk "TMPDIR on $(fstype "$disk"), no terminal"
	start_row static "make static's build, TMPDIR on $(fstype "$disk"), no terminal" 1.02
	start_row release "the release's x86_64 binary, TMPDIR on $(fstype "$disk"), no terminal" 1.02
	start_row tmpfs "TMPDIR on tmpfs, no terminal"
	start_row disk_tty "TMPDIR on $(fstype "$disk"), at a terminal"
	start_row tmpfs_tty "TMPDIR on tmpfs, at a terminal"
	faults_row
	[ -z "$v03_row" ] || printf '%s\n' "$v03_row")
$(pipe_rows)

EOF
	if [ -s "$notes" ]; then
		echo "Notes from this run:"
		echo
		cat "$notes"
		echo
	fi
	cat <<EOF
## 1. Overhead of the wrapper

Each round runs every command once, in an order that moves by one each
round, timed by \`bench/spawn\` from before \`posix_spawnp\` to after \`wait4\`
(CLOCK_MONOTONIC), stdio on /dev/null; 5 warm-up rounds are dropped.  A
ratio is taken within each round and the median of the ratios is
reported, with a distribution-free 95% confidence interval.

    bench/spawn -r $rounds -w 5 ./retry -n1 -- true :: timeout 60 true :: /usr/bin/retry -t 1 -- true :: true$([ -n "$static" ] && echo ' :: retry-static -n1 -- true')

$overhead_table

- *retry, static build*: the same sources built with
  $(b make retry CFLAGS=-O2 LDFLAGS=-static) in a copy of the tree.
- Peak RSS and page faults here are those of the wrapper *and* its child
  (\`wait4\`'s rusage); see 4 for the wrapper alone.

$(findings)

### Where the start-up time goes

$(cat "$profile")

## 2. Timing accuracy

    ./retry -n 50 --jitter none --base 20ms --cap 20ms -- bench/stamp -f 1000 FILE
    bench/spawn -r 50 -w 0 -d 20000000 bench/stamp -f 1000 FILE2      # the floor, same round

\`bench/stamp\` appends its CLOCK_MONOTONIC time when it starts and when it
is about to exit.  The *gap* is the start of attempt k+1 minus the end of
attempt k: it holds the 20 ms delay, but also what it costs this machine
to let a process exit, reap it, fork and execute the next one, which is
not retry's doing, nor is the time this busy machine takes to run a
process that wakes up.  So each round also runs the *floor*: the same
child 50 times from the smallest C loop that does the same (\`bench/spawn
-d\`: \`wait4\`, sleep 20 ms to an absolute CLOCK_MONOTONIC deadline,
\`posix_spawnp\`, as retry starts an attempt without a terminal), and the gap error is gap − 20 ms − the floor's median in the
same round.  The tail of that error is mostly the machine's (compare the
floor's own p99), so the quantile-by-quantile difference is given too.  The drift is the
least-squares slope of the gap error over the attempts, times the number
of gaps: a late wake-up that pushed the later ones would show there.
(retry's delays run from the end of each attempt, so the start of attempt
50 is necessarily later by the sum of all gaps; the question is whether
the gaps themselves grow.)

$accuracy_table

## 3. Signal latency

\`bench/latency\` starts the wrapper, waits until its attempt runs (the
child's start line) or, for the sleeping case, until the attempt has
ended and been reaped (the child's end line and no child left in
/proc/PID/task/PID/children), waits 5 ms more, sends SIGTERM and times
\`kill\` to \`waitpid\` (CLOCK_MONOTONIC).  The wrappers take turns trial by
trial.

Asleep in a 60 s delay:

    ./retry -n 2 --jitter none --base 60s --cap 60s -- bench/stamp -f 1 FILE
    /usr/bin/retry -t 2 -d 60 -- bench/stamp -f 1 FILE

$asleep_table

While an attempt runs (the signal must reach it, and the wrapper exit after it):

    ./retry -n1 -- bench/stamp -s 60 FILE
    timeout 60 bench/stamp -s 60 FILE
    /usr/bin/retry -t 1 -- bench/stamp -s 60 FILE

$running_table

"Attempt outlived it" counts the trials where the child was still alive
after the wrapper had been reaped (it is then killed by the bench).

## 4. Memory

Peak RSS of the wrapper alone: VmHWM from /proc/PID/status, read while its
attempt runs (section 3, the running case), so that the child's memory is
not counted; retry does not allocate after that point.  Median of the
trials: retry $hwm_retry kB, timeout $hwm_timeout kB.

For comparison, \`wait4\`'s ru_maxrss in section 1 is the peak of the
wrapper *and* its child (Linux counts the larger), with \`true\` as the
child: retry $maxrss_retry kB, timeout $maxrss_timeout kB.

\`--replay-stdin\`: $replay_cell.

## 5. The herd

    bench/herd -n $herd -m FILE -l LOG ./retry -n 2 --report - --jitter MODE --base 1s --cap 1s -- bench/stamp -f 1 -w 3 FILE
    (decorrelated: --base 333ms --cap 1s, so that its delays span [333 ms, 999 ms] without touching the cap)

\`bench/herd\` forks $herd children that block on a pipe, then closes it:
all of them execute retry in the same instant.  Each first attempt
writes its start time and blocks on a second pipe, the barrier; once
all $herd have started, the bench closes the barrier, so every first
attempt fails in the same instant, *release* (time 0 below).

- *scheduled*: the delay that each retry drew, from its report (to
  the microsecond): when the second attempts would start if every client
  had a machine of its own, which is what a real herd is.
- *observed*: when each second attempt started, seen by the child.  On
  this machine $herd processes that fail and wake up together queue for
  its CPUs, so the observed arrivals are spread by the machine itself
  (the spread of the failures and of the arrivals are in the table).
- *uniform*: the number per 10 ms bucket if the delays were spread
  evenly over their band; *ideal*: the busiest bucket of $herd truly
  uniform draws over the same band (median and 95th percentile of 2000
  simulated herds): even perfect draws put about 3× the mean in the
  busiest of many buckets, so "within 2× of the expectation" is judged
  against both.

| mode | delays drawn from | distinct delays | scheduled: busiest 10 ms | uniform per 10 ms (busiest ÷ it) | ideal uniform busiest (median / 95th pct) | observed: busiest 10 ms | first attempts failed (median / max after release) | observed arrivals p1–p99 |
|---|---|---:|---:|---:|---:|---:|---:|---:|
$(cat "$herd_table")

![the herd](herd.svg)

## 6. Throughput of the data paths (issue 15)

$((tp_bytes / 1048576)) MiB through each path, timed by \`bench/spawn\` in
$tp_rounds paired rounds (one warm-up round dropped), every command of a round
one after the other in an order that moves each round; a ratio is the
reference's time over retry's in the same round (so: retry's throughput
as a share of the reference's), and the median of those is reported.
Conditions: TMPDIR (where \`-I\` and \`-O\` keep their files, and \`tee\` and
the held file of the floors are written) on $tp_fs; no terminal (stdin
and stdout of each command on /dev/null but where the pipeline says
otherwise); load average $tp_load0 at the start, $tp_load1 at the end.

    -I:           head -c N /dev/zero | ./retry -I cat
                  head -c N /dev/zero | cat                          # the target's reference
                  head -c N /dev/zero | tee FILE | cat               # the same work without retry: a copy on disk
    -O:           ./retry -O head -c N /dev/zero | cat
                  { head -c N /dev/zero >FILE; cat FILE; } | cat     # the same work without retry
    both:         head -c N /dev/zero >FILE                          # only writing a new file of that size
    --on-output:  ./retry --on-output 'RE' cat TEXT                  # stdout on /dev/null
                  cat TEXT | grep -E 'RE'                            # the target's reference
                  cat TEXT | bench/linematch 'RE'                    # libc's regexec(3) on each line, nothing else
    RE = $re; TEXT: log lines of 60 to 80 bytes, none matching

$tp_table

Against \`head >FILE\`: the time this machine takes to write as many bytes
to a new file in TMPDIR and do nothing else, over retry's: the share of
retry's time that the copy of \`-I\`, or the held file of \`-O\`, costs by
itself.  Near 1, the path runs at the speed of that file system, and
only a faster TMPDIR could bring it closer to \`cat\`, which writes no
file.

$(tp_findings)

Peak RSS of retry alone (VmHWM from /proc, read by its last attempt,
after a whole run of the same size through the path): \`-I\` $hwm_I kB,
\`-O\` $hwm_O kB (the first attempt's held output released to a pipe),
\`--on-output\` $hwm_M kB.

## 7. One circuit, $crowd runs at once (issue 15)

\`bench/crowd\` starts $crowd copies of each command in the same instant
and times them until the last has ended; $crowd_rounds paired crowds, the order
alternating.  Each run makes 5 attempts that fail, 1 ms apart, each of
which reads and writes the circuit's record under its lock twice (may it
start, how it ended); \`--trip 1000000\` keeps the circuit closed, so
what is measured is the cost of the shared record, not the breaker.
Conditions: the record (RETRY_STATE_DIR) on $crowd_fs; no terminal; load
average $crowd_load0 at the start, $crowd_load1 at the end.

    ./retry -n 5 -b 1ms -c 1ms -j none --trip 1000000 --circuit bench -- false
    ./retry -n 5 -b 1ms -c 1ms -j none -- false

$crowd_table

## 8. Sleep accuracy (issue 10)

\`./retry -n N -j none -b D -c D --report FILE false\`: per attempt, the
report gives its start, its duration and the delay that follows, to the
microsecond on retry's own monotonic clock, so that what a delay
overslept is start[k+1] − (start[k] + duration[k]) − delay[k] (this
includes what retry does between reaping one attempt and starting the
next: its message, the hint check, the report).  At 2 s and 10 s many
runs sleep at once, their starts staggered over the delay (0.1 s and
0.5 s apart), so that enough samples come in reasonable time; the 20 ms
runs go meanwhile.  Beside each run, as many sleeps of the floor,
\`bench/oversleep\`: \`clock_nanosleep\` to an absolute time and nothing
else, so that what this machine adds to any wake-up can be told from
what retry adds.  No terminal; load average $wake_load0 at the start,
$wake_load1 at the end.

| delay | samples | median | p99 | max | both < 0.5 ms |
|---|---:|---:|---:|---:|---|
$wake_table

## 9. Start-up against the two-process floor (issue 11)

\`bench/floor true\` is the smallest program that does what \`retry -n1 --
true\` must: \`vfork\`, \`execvp\`, \`waitpid\`, compiled with the same flags.
\`bench/spawn\` times both in $start_rounds paired rounds (5 warm-up rounds
dropped) with TMPDIR on the disk and on a tmpfs, and without and with a
terminal (under \`tests/helpers/ptyrun\`, as the foreground job, so that retry lends
the terminal to its attempt and takes it back).  Load average
$start_load0 at the start, $start_load1 at the end.

| TMPDIR on | terminal | retry, median | floor, median | retry ÷ floor (median of paired ratios) [95% CI] | ≤ 1.05 | minor page faults, retry / floor (wait4: wrapper and child, median) | peak RSS, retry / floor (wait4, median) |
|---|---|---:|---:|---:|---|---:|---:|
$(cat "$work/start.md")

$(start_findings)

The size of each build (\`./retry\` and \`retry-static\` keep \`-g\`; the
release's, those of make release when release/ holds them, are stripped):

| build | bytes |
|---|---:|
$(sizes)

## 10. Data at the speed of the pipe (issue 23)

$((pipe_bytes / 1048576)) MiB through each path, timed by \`bench/spawn\` in
$pipe_rounds paired rounds (one warm-up round dropped), in an order that
moves each round; a ratio is the reference's time over retry's in the
same round, and the median of those is reported.  Conditions: TMPDIR
(where \`-I\` keeps its copy and \`-O\` its held file) on $pipe_fs; no
terminal (stdin and stdout on /dev/null but where the pipeline says
otherwise); load average $pipe_load0 at the start, $pipe_load1 at the end.

    -O, last:     ./retry -O -n1 head -c N /dev/zero | cat
    -O, held:     ./retry -O -n 2 -b 1ms -j none sh -c 'attempt 1: head -c N /dev/zero; exit 1; attempt 2: exit 0' 2>&1 | cat
                  (the first attempt may be retried, so it is held, then released to stderr, down the same pipe)
    -I:           head -c N /dev/zero | ./retry -I cat
    reference:    head -c N /dev/zero | cat
    the bounds:   head -c N /dev/zero >FILE                          # a new file in TMPDIR, alone
                  { head -c N /dev/zero >FILE; cat FILE; } | cat     # held without retry
                  head -c N /dev/zero | cat | cat                    # one more hop, for the last attempt
                  cat TEXT | bench/linematch -F 'RE2'                # libc's memmem(3) alone, for RE2
    --on-output:  ./retry --on-output 'RE' cat TEXT                  # stdout on /dev/null
                  cat TEXT | grep -E 'RE'                            # the reference
    RE1 = $re1 (alternatives of literals), RE2 = $re2 (one literal),
    RE3 = $re3 (no literal); TEXT: log lines of 60 to 80 bytes, none matching

$pipe_table

$(pipe_findings)

Peak RSS of retry alone (VmHWM from /proc, read by its last attempt after
a whole run of the same size through the path) is in the summary.
EOF
} >"$out/RESULTS.md"

# A part that fails leaves its section out, so the bench as a whole fails
# at its end (after the parts that can still run), saying which.
failed=
sh "$bench/store.sh" "$out/RESULTS.md" >/dev/null || failed="$failed bench/store.sh"
BENCH_WHOLE=1 BENCH_SOURCE=$source_id sh "$bench/herd-rules.sh" "$out/RESULTS.md" >/dev/null ||
    failed="$failed bench/herd-rules.sh"
# Section 13, after 11 and 12, in place of the one an earlier run wrote.
g_heading='## 13. Growth with the work (issue 35)'
{
	cat <<GROW
$g_heading

How retry's costs grow with the work, each part against the same work
without retry.  Times are \`bench/grow time\`'s: CLOCK_MONOTONIC from spawn
to \`wait4\`, and CPU as user plus system time from \`wait4\`'s rusage, which
counts the command and all it waited for.  VmHWM and VmRSS are retry's
own, read from /proc/PID/status by its attempt.

### Attempts

    ./retry -q -n N -b 0.000001 -c 0.000001 -j none false     # 1 ns apart: -b 0 is refused
    bench/grow loop N false                                   # the floor: the same N processes, no retry

$(cat "$work/g_att.md")

$g_att_marginal

### Memory over $grow_rss attempts that print 1 KiB each

    ./retry -q -n $grow_rss -b 0.000001 -c 0.000001 -j none [-O | --on-output 'timed out'] \\
        tests/helpers/attempt-probe 1024 FILE $marks           # stdout and stderr on /dev/null

$(cat "$work/g_rss.md")

### Runs at once on one circuit

    bench/crowd -n K -r $grow_rounds ./retry -n 5 -b 1ms -c 1ms -j none --trip 1000000 --circuit growth -- false \\
        :: ./retry -n 5 -b 1ms -c 1ms -j none -- false \\
        :: ./retry -n 5 -b 1ms -c 1ms -j none --trip 1000000 --circuit growth --store redis+unix://SOCK -- false

Each attempt reads and writes the circuit's record under its lock twice;
retry reports no time spent waiting for a lock, so the lock waits are
inside "the circuit's cost per attempt", and what the crowd adds to them
is the rise of that cost over the one run alone.

$(cat "$work/g_crowd.md")

### Standard input

    head -c N /dev/zero | ./retry [-I] -n 2 -b 1ms -j none SINK   # SINK: cat >/dev/null, then retry's VmHWM
    head -c N /dev/zero | SINK                                   # without retry

$(cat "$work/g_in.md")

$g_in_marginal

### Lines of output

    ./retry -n 2 -b 1ms -j none --on-output 'timed out' TALK N    # TALK: bench/grow lines N, then retry's VmHWM
    TALK N                                                        # without retry; stdout on /dev/null

$(cat "$work/g_ln.md")

$g_ln_marginal
GROW
} >"$work/growth.md"
put_section "$out/RESULTS.md" "$g_heading" "$work/growth.md" "$work/growth.tmp"
say "done: $out/RESULTS.md and $out/herd.svg"
[ "$mode" = full ] || cat "$out/RESULTS.md"
if [ -n "$failed" ]; then
	say "failed:$failed (their sections are missing from $out/RESULTS.md)"
	exit 1
fi
