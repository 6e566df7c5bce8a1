#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The heartbeat recipes of README.md and retry.1 EXAMPLES (issue 33):
# healthchecks.io, Cronitor and Sentry's cron check-ins, each run as the
# docs print it against a local fake of the service (ping-server), only
# the base URL and the job's path changed.  Each ping is curl's, so every
# test skips without curl.
#
# The tests "with retry" run them through retry itself; the one of curl's
# --retry through a stand-in for retry's hooks (stub_retry_on_path), as
# it is curl's behaviour, not retry's, that it shows.
load helpers/common
load helpers/ping

setup() {
	in_test_dir
	need_curl
}

teardown() {
	[ ! -e ping/pid ] || ping_stop || true
	kill_later
}

# The recipes, each with the real base URL that the tests replace.
HC_URL=https://hc-ping.com/UUID
CR_URL=https://cronitor.link/p/KEY/backup
SE_URL=https://o0.ingest.sentry.io/api/PROJECT/cron/backup/KEY/

# recipe SERVICE: the script of SERVICE's recipe pointed at the fake:
# hc-readme (README.md), hc, cronitor or sentry (retry.1, which says
# "PING as above" for the last two: the first block's PING line).
recipe() {
	local text
	case $1 in
	hc-readme) text=$(readme_recipe "export HC=") url=$HC_URL ;;
	hc) text=$(man_recipe "export HC=") url=$HC_URL ;;
	cronitor) text=$(man_recipe "export CR=") url=$CR_URL ;;
	sentry) text=$(man_recipe "export SE=") url=$SE_URL ;;
	esac
	[ -n "$text" ] || { echo "no recipe for $1"; return 1; }
	case $1 in
	cronitor | sentry)
		text="$(man_recipe "export HC=" | grep '^export PING=')
$text" ;;
	esac
	local_recipe "$text" "$url"
}

# run_recipe SERVICE: runs the recipe of SERVICE with sh, stdout and
# stderr apart; the requests it made are in $PINGS.
run_recipe() {
	recipe "$1" >recipe.sh || return 1
	run --separate-stderr sh recipe.sh </dev/null
}

# expect_pings SERVICE STATUS LAST: $PINGS holds exactly a start ping and
# an end ping for a run that ended with STATUS, under one run id, the end
# carrying LAST (the last attempt's output) where the service takes it.
expect_pings() {
	local service=$1 status=$2 last=$3 id lines end
	mapfile -t lines <"$PINGS"
	printf 'requests:\n'; printf '  %s\n' "${lines[@]}"
	[ "${#lines[@]}" -eq 2 ]
	case $service in
	hc*)
		[[ ${lines[0]} =~ ^GET\ /UUID/start\?rid=($UUID)\ 0$ ]]
		id=${BASH_REMATCH[1]}
		# The whole output, its last newline too.
		[ "${lines[1]}" = "POST /UUID/$status?rid=$id $((${#last} + 1))" ]
		[ "$(cat "$PINGS.2")" = "$last" ]
		;;
	cronitor)
		[[ ${lines[0]} =~ ^GET\ /p/KEY/backup\?state=run\&series=($UUID)\ 0$ ]]
		id=${BASH_REMATCH[1]}
		if [ "$status" -eq 0 ]; then
			[ "${lines[1]}" = "GET /p/KEY/backup?state=complete&series=$id 0" ]
			return
		fi
		end="GET /p/KEY/backup?state=fail&series=$id&status_code=$status&message="
		[ "${lines[1]:0:${#end}}" = "$end" ]
		# The message: the output's last 1000 bytes, less the
		# newlines at its end, as "$(tail -c 1000 ...)" gives them.
		end=${lines[1]#"$end"}
		[ "$(urldecode "${end% 0}")" = "$(printf '%s' "$last" | tail -c 1000)" ]
		;;
	sentry)
		end='GET /api/PROJECT/cron/backup/KEY/?check_in_id='
		[[ ${lines[0]} =~ ^${end//\?/\\?}($UUID)\&status=in_progress\ 0$ ]]
		id=${BASH_REMATCH[1]}
		if [ "$status" -eq 0 ]; then
			[ "${lines[1]}" = "$end$id&status=ok 0" ]
		else
			[ "${lines[1]}" = "$end$id&status=error 0" ]
		fi
		;;
	esac
}

@test "ping-server: logs each request and its body, answers OK (503 to the first N with -f), and takes garbage with a 400" {
	ping_server -f 1
	printf 'line one\nline two\n' >body
	run curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/a/start?rid=x"
	[ "$output" = 503 ]
	run curl -fsS --data-binary @body "http://127.0.0.1:$PORT/a/1?rid=x"
	[ "$status" -eq 0 ]
	[ "$output" = OK ]
	exec 5<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'garbage\r\n\r\n' >&5
	read -r answer <&5
	exec 5<&-
	[ "$answer" = $'HTTP/1.1 400 Bad Request\r' ]
	run curl -sS -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' \
	    --data-binary @body "http://127.0.0.1:$PORT/chunked"
	[ "$output" = 411 ]
	[ "$(cat "$PINGS")" = "GET /a/start?rid=x 0
POST /a/1?rid=x 18
- garbage 0
- POST /chunked HTTP/1.1 0" ]
	cmp body "$PINGS.2"
	[ ! -s "$PINGS.3" ]
	kill -TERM "$(cat ping/pid)"
	gone "$(cat ping/pid)"
}

@test "every recipe pings through PING, which is curl -fsS -m 10 --retry 3 -o /dev/null" {
	local service text
	for service in hc-readme hc cronitor sentry; do
		case $service in
		hc-readme) text=$(readme_recipe "export HC=") ;;
		hc) text=$(man_recipe "export HC=") ;;
		cronitor) text=$(man_recipe "export CR=") ;;
		sentry) text=$(man_recipe "export SE=") ;;
		esac
		echo "$service:"
		echo "$text"
		# curl only in PING, and PING (where the recipe sets it) as the
		# issue says, with -o /dev/null: the service's "OK" would be
		# cron's mail.
		[ "$(grep -c curl <<<"$text")" = "$(grep -c '^export PING=' <<<"$text")" ]
		if grep -q '^export PING=' <<<"$text"; then
			[ "$(grep '^export PING=' <<<"$text")" = "export PING='curl -fsS -m 10 --retry 3 -o /dev/null'" ]
		fi
		# Each hook is $PING ... or "$end", itself $PING ...
		! grep -E -- "--on-[a-z]+ +'[^\$]" <<<"$text" || false
		! grep -E -- "--on-[a-z]+ +\"[^\$]" <<<"$text" || false
		! grep -E "^end='[^\$]" <<<"$text" || false
	done
}

@test "a ping that meets a 503 is sent again (curl --retry 3), and the run goes on" {
	ping_server -f 1
	stub_retry_on_path
	backup_job 0
	run_recipe hc
	[ "$status" -eq 0 ]
	# curl -S says each error, one that it retries too.
	[ "$stderr" = "curl: (22) The requested URL returned error: 503" ]
	mapfile -t lines <"$PINGS"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "${lines[1]}" ]
	matches "${lines[1]}" "^GET /UUID/start\?rid=$UUID 0$"
	matches "${lines[2]}" "^POST /UUID/0\?rid=$UUID 28$"
}

# each_recipe STATUS OUTPUT LOG: every recipe, run through retry against
# a fresh ping-server, exits STATUS with OUTPUT on stdout, curl silent,
# and pings its start and its end under one run id, LOG in the end's body.
each_recipe() {
	local service
	for service in hc-readme hc cronitor sentry; do
		echo "--- $service"
		ping_server
		run_recipe "$service"
		[ "$status" -eq "$1" ]
		[ "$output" = "$2" ]
		[[ $stderr != *curl* ]]
		expect_pings "$service" "$1" "$3"
		ping_stop
	done
}

@test "each recipe with retry: a run that gives up pings its start and its status under one run id, with the last attempt's output" {
	retry_on_path
	backup_job 3
	each_recipe 3 "attempt 1 out
attempt 2 out
attempt 3 out
attempt 4 out" "attempt 4 out
attempt 4 err"
}

@test "each recipe with retry: a run that passes after a retry pings its start and its success under one run id" {
	retry_on_path
	backup_job '$((RETRY_ATTEMPT < 2))'
	each_recipe 0 "attempt 1 out
attempt 2 out" "attempt 2 out
attempt 2 err"
}

@test "healthchecks.io's end ping carries the last 10 KiB that the last attempt wrote, and two runs have two run ids" {
	local first second
	ping_server
	retry_on_path
	# 20000 bytes: "line N" lines to stdout, the last one to stderr.
	printf '#!/bin/sh\nawk '\''BEGIN { for (i = 1; i <= 2500; i++) printf "line%%03d\\n", i %% 1000 }'\''\necho "the end" >&2\nexit 1\n' >backup
	chmod +x backup
	./backup >whole 2>&1 || true
	run_recipe hc
	[ "$status" -eq 1 ]
	mapfile -t lines <"$PINGS"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} =~ ^POST\ /UUID/1\?rid=($UUID)\ 10240$ ]]
	tail -c 10240 whole | cmp - "$PINGS.2"
	first=${BASH_REMATCH[1]}
	run_recipe hc
	mapfile -t lines <"$PINGS"
	[[ ${lines[3]} =~ ^POST\ /UUID/1\?rid=($UUID)\ 10240$ ]]
	second=${BASH_REMATCH[1]}
	[ "$first" != "$second" ]
}
