# SPDX-License-Identifier: ISC
# For the heartbeat recipes' tests (recipes.bats, jobsim.bats): a fake of
# the monitors' ping endpoints (ping-server), and the recipes as the docs
# print them, taken from README.md and retry.1 so that the text users copy
# is the text that is tested; only the base URL and the job's path are
# changed, each exactly once.

TOP=$BATS_TEST_DIRNAME/..

# need_curl: skips the test unless curl is installed.
need_curl() {
	command -v curl >/dev/null ||
	    skip "no curl: the recipes ping with curl (Debian's curl package)"
}

# ping_server [-f N]: the fake in ./ping, its port in $PORT, its log in
# $PINGS (one "METHOD TARGET LENGTH" line a request, the Kth body in
# $PINGS.K), stopped in teardown (kill_later).  -f N: the first N
# requests are answered 503.
ping_server() {
	mkdir -p ping
	ping-server "$@" ping/port ping/log 3>&- &
	later "$!"
	echo "$!" >ping/pid
	wait_for ping/port || return 1
	PORT=$(cat ping/port)
	PINGS=$PWD/ping/log
	: >>"$PINGS"
}

# ping_stop: the fake stopped (SIGTERM) and gone, with its files.
ping_stop() {
	kill -TERM "$(cat ping/pid)" && gone "$(cat ping/pid)" && rm -r ping
}

# ping_restart: a new fake, its log empty, its bodies numbered from 1.
ping_restart() {
	ping_stop && ping_server "$@"
}

# pings_from K: the log's lines from the Kth on.
pings_from() {
	tail -n "+$1" "$PINGS"
}

# urldecode TEXT: TEXT with each %XX as its byte and '+' as a space.
urldecode() {
	local s=${1//+/ }
	printf '%b' "${s//%/\\x}"
}

# man_recipe WORD: the literal block of retry.1's EXAMPLES that has WORD
# in it, as a shell would read it: mdoc's escapes undone, the prompts
# taken off.
man_recipe() {
	awk -v word="$1" '
		/^\.Sh EXAMPLES/ { on = 1; next }
		/^\.Sh / { on = 0 }
		on && /^\.Bd -literal/ { block = ""; inside = 1; next }
		on && /^\.Ed/ {
			if (index(block, word)) printf "%s", block
			inside = 0; next
		}
		inside { block = block $0 "\n" }' "$TOP/retry.1" |
	    sed -e 's/\\e/\\/g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/^\$ //'
}

# readme_recipe WORD: the ```sh block of README.md that has WORD in it.
readme_recipe() {
	awk -v word="$1" '
		/^```sh$/ { block = ""; inside = 1; next }
		inside && /^```$/ {
			if (index(block, word)) printf "%s", block
			inside = 0; next
		}
		inside { block = block $0 "\n" }' "$TOP/README.md"
}

# once TEXT FROM TO: TEXT with its one FROM replaced by TO; fails when
# FROM is not in TEXT exactly once (the docs changed: look again).
once() {
	local n
	n=$(grep -cF -- "$2" <<<"$1")
	if [ "$n" -ne 1 ]; then
		printf 'expected "%s" once in the recipe, found it %s times:\n%s\n' \
		    "$2" "$n" "$1"
		return 1
	fi
	printf '%s\n' "${1/"$2"/"$3"}"
}

# local_recipe TEXT URL: the recipe TEXT pointed at the fake (URL, its
# real base URL, becomes http://127.0.0.1:$PORT with the same path) and
# at ./backup in place of /usr/local/bin/backup.
local_recipe() {
	local text
	text=$(once "$1" "=$2" "=http://127.0.0.1:$PORT/${2#https://*/}") &&
	    text=$(once "$text" /usr/local/bin/backup "$PWD/backup") &&
	    printf '%s\n' "$text"
}

# retry_on_path: ./bin/retry runs $RETRY with -b 1ms before the recipe's
# options, so that its retries take no time; ./bin is first in PATH.
retry_on_path() {
	mkdir -p bin
	printf '#!/bin/sh\nexec "%s" -b 1ms "$@"\n' "$RETRY" >bin/retry
	chmod +x bin/retry
	PATH=$PWD/bin:$PATH
}

# stub_retry_on_path: ./bin/retry is a stand-in that calls the hooks of
# its command line as retry(1) promises, with the variables it promises
# (a fixed RETRY_RUN_ID), around one attempt: so the recipes' URLs and
# quoting are tested whatever the retry at hand can do.
stub_retry_on_path() {
	mkdir -p bin
	cat >bin/retry <<-'EOF'
	#!/bin/sh
	start= success= giveup=
	while [ "$1" != -- ]; do
		case $1 in
		--on-start) start=$2; shift ;;
		--on-success) success=$2; shift ;;
		--on-giveup) giveup=$2; shift ;;
		-n | -D) shift ;;
		esac
		shift
	done
	shift
	export RETRY_RUN_ID=0b7e5d5a-3f7e-4c1e-9d2a-2f1c3b4a5d6e RETRY_LOG=
	export RETRY_DURATION=0.000 RETRY_STATUS=0 RETRY_ATTEMPT=1
	sh -c "$start"
	RETRY_LOG=$PWD/attempt.log
	"$@" >"$RETRY_LOG" 2>&1 && status=0 || status=$?
	RETRY_STATUS=$status RETRY_DURATION=0.250
	if [ "$status" -eq 0 ]; then sh -c "$success"; else sh -c "$giveup"; fi
	exit "$status"
	EOF
	chmod +x bin/retry
	PATH=$PWD/bin:$PATH
}

# backup_job STATUS: ./backup, a job that writes "attempt N out" to
# stdout and "attempt N err" to stderr and exits STATUS; STATUS may be
# an expression of $RETRY_ATTEMPT, as '$((RETRY_ATTEMPT < 2))'.
backup_job() {
	printf '#!/bin/sh\necho "attempt $RETRY_ATTEMPT out"\necho "attempt $RETRY_ATTEMPT err" >&2\nexit %s\n' \
	    "$1" >backup
	chmod +x backup
}

# A UUID, as RETRY_RUN_ID is.
UUID='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
