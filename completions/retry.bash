# SPDX-License-Identifier: ISC
# bash completion for retry(1).  Completes retry's options and their values
# up to the command, then hands the rest to the command's own completion
# (bash-completion's _command_offset when loaded, a small fallback if not).

# Kept in step with retry's --help and sources by tests/completion.bats.
# Every signal name retry knows is offered, whatever the platform: WINCH
# and IO are there on Linux, macOS and FreeBSD, PWR on Linux alone, and
# retry answers a name its platform lacks with "unknown signal".
_retry_shorts=(-b -c -D -f -h -I -j -K -k -n -O -o -Q -q -s -T -V -v -x)
_retry_longs=(--alert-after --attempts --base --budget --budget-min --buffer-stdout --cap --ci
	--circuit --circuit-list --circuit-reset --circuit-status --cool
	--deadline --dry-run --env-from-hooks
	--factor --help --hint-from-stderr --hook-grace --http-4xx --jitter --job --job-reset
	--job-status --key
	--kill-after --max-delay --metrics --min-time --notify-pass --on --on-giveup
	--on-output --on-recover --on-retry --on-start --on-success
	--on-tolerate --quiet --quiet-unless-failed
	--replay-stdin --report
	--reset-after --seed --share-stdin --signal --splay --stop-on
	--stop-on-output --store --store-fail --store-timeout --timeout --trace
	--trace-service --trip --verbose --version)
_retry_jitters=(none full equal decorrelated)
_retry_signals=(HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE
	ALRM TERM CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF SYS
	WINCH IO PWR)

# _retry_add CUR PREFIX WORD...: adds to COMPREPLY each WORD that starts
# with CUR, with PREFIX in front.
_retry_add()
{
	local cur=$1 prefix=$2 w
	shift 2
	for w; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$prefix$w")
	done
	return 0
}

# _retry_long NAME: sets the caller's "long" to the long option that
# getopt_long takes NAME for: an exact name, or an unambiguous abbreviation
# (--ji is --jitter).  Fails, leaving "long" empty, for none.
_retry_long()
{
	local o
	long=
	for o in "${_retry_longs[@]}"; do
		[[ $o == "--$1" ]] && { long=$o; return 0; }
		if [[ $o == "--$1"* ]]; then
			[[ $long ]] && { long=; return 1; }
			long=$o
		fi
	done
	[[ $long ]]
}

# _retry_takes_value OPT: OPT ("-n" or "--attempts") needs a value.
_retry_takes_value()
{
	case $1 in
	-[bcDfjKknosTx] | --alert-after | --attempts | --base | --budget | --budget-min | \
	--cap | --ci | \
	--circuit | --circuit-reset | --circuit-status | --cool | --deadline | \
	--env-from-hooks | --factor | --hook-grace | --http-4xx | --jitter | --job | \
	--job-reset | --job-status | --key | --kill-after | \
	--max-delay | --metrics | --min-time | --on | --on-giveup | \
	--on-output | \
	--on-recover | --on-retry | --on-start | --on-success | --on-tolerate | \
	--report | --reset-after | --seed | --signal | --splay | --stop-on | \
	--stop-on-output | --store | --store-fail | --store-timeout | \
	--timeout | --trace | --trace-service | --trip)
		return 0 ;;
	esac
	return 1
}

# _retry_circuits CUR PREFIX [SUB]: adds to COMPREPLY, with PREFIX in
# front, the names of the circuits that have a record, as retry finds them:
# the files in $RETRY_STATE_DIR, else $XDG_STATE_HOME/retry, else
# ~/.local/state/retry; with SUB (.jobs), the jobs' in that subdirectory.
# Symbolic links are left out: retry refuses them.
_retry_circuits()
{
	local dir f
	if [[ ${RETRY_STATE_DIR-} ]]; then
		dir=$RETRY_STATE_DIR
	elif [[ ${XDG_STATE_HOME-} ]]; then
		dir=$XDG_STATE_HOME/retry
	elif [[ ${HOME-} ]]; then
		dir=$HOME/.local/state/retry
	else
		return 0
	fi
	[[ ${3-} ]] && dir=$dir/$3
	for f in "$dir/$1"*; do
		[[ -f $f && ! -L $f ]] && COMPREPLY+=("$2${f##*/}")
	done
	return 0
}

# _retry_values OPT CUR PREFIX: adds to COMPREPLY the values of OPT that
# start with CUR, each with PREFIX in front.  Options whose values are
# durations, numbers, codes, budgets, keys or regular expressions get
# nothing (and no file names).
_retry_values()
{
	local -a names
	local w
	case $1 in
	--report | --metrics | --trace)
		# A file name ("-", stderr, is not offered).  Without a PREFIX
		# the reply is a file name alone: let bash quote it as one and
		# add "/" to directories.
		while IFS= read -r w; do
			COMPREPLY+=("$3$w")
		done < <(compgen -f -- "$2")
		[[ $3 ]] || compopt -o filenames 2>/dev/null ;;
	--circuit | --circuit-reset | --circuit-status)
		_retry_circuits "$2" "$3" ;;
	--job | --job-reset | --job-status)
		_retry_circuits "$2" "$3" .jobs ;;
	-j | --jitter)
		_retry_add "$2" "$3" "${_retry_jitters[@]}" ;;
	--store-fail)
		_retry_add "$2" "$3" open closed ;;
	--http-4xx)
		_retry_add "$2" "$3" stop retry ;;
	--env-from-hooks)
		_retry_add "$2" "$3" safe all ;;
	--ci)
		_retry_add "$2" "$3" none github gitlab auto ;;
	-s | --signal)
		# retry takes names with or without SIG, in any case: follow
		# what was typed.
		names=("${_retry_signals[@]}")
		if [[ $2 == [Ss][Ii]* ]]; then
			names=("${names[@]/#/SIG}")
		fi
		if [[ $2 == [a-z]* ]]; then
			names=("${names[@],,}")
		fi
		_retry_add "$2" "$3" "${names[@]}" ;;
	esac
	return 0
}

# _retry_command_offset N: completes COMP_WORDS[N...] as a command line of
# its own.  Without bash-completion, offers command names for the command,
# then what the command's own "complete" spec gives, else file names.
_retry_command_offset()
{
	if declare -F _comp_command_offset >/dev/null; then
		_comp_command_offset "$1"
		return
	fi
	if declare -F _command_offset >/dev/null; then
		_command_offset "$1"
		return
	fi

	local i line=$COMP_LINE point=$COMP_POINT spec func
	for ((i = 0; i < $1; i++)); do
		while [[ $line == [[:blank:]]* ]]; do
			line=${line:1}
			point=$((point - 1))
		done
		line=${line#"${COMP_WORDS[i]}"}
		point=$((point - ${#COMP_WORDS[i]}))
	done
	while [[ $line == [[:blank:]]* ]]; do
		line=${line:1}
		point=$((point - 1))
	done
	local -a COMP_WORDS=("${COMP_WORDS[@]:$1}")
	local COMP_CWORD=$((COMP_CWORD - $1)) COMP_LINE=$line COMP_POINT=$point
	local cur=${COMP_WORDS[COMP_CWORD]} w

	COMPREPLY=()
	if ((COMP_CWORD == 0)); then
		while IFS= read -r w; do
			COMPREPLY+=("$w")
		done < <(compgen -c -- "$cur")
		return
	fi
	spec=$(complete -p -- "${COMP_WORDS[0]}" 2>/dev/null) ||
	    spec=$(complete -p -- "${COMP_WORDS[0]##*/}" 2>/dev/null)
	if [[ $spec == *' -F '* ]]; then
		func=${spec#* -F }
		func=${func%% *}
		while [[ $spec == *' -o '* ]]; do
			spec=${spec#* -o }
			compopt -o "${spec%% *}" 2>/dev/null
		done
		"$func" "${COMP_WORDS[0]}" "$cur" "${COMP_WORDS[COMP_CWORD - 1]}"
		return
	fi
	if [[ $spec ]]; then
		# "complete -W ... cmd" takes the same options as compgen.
		spec=${spec#complete }
		spec=${spec% *}
		while IFS= read -r w; do
			COMPREPLY+=("$w")
		done < <(eval "compgen $spec -- \"\$cur\"")
		return
	fi
	compopt -o filenames 2>/dev/null
	while IFS= read -r w; do
		COMPREPLY+=("$w")
	done < <(compgen -f -- "$cur")
}

_retry()
{
	COMPREPLY=()

	# Put back together the words that COMP_WORDBREAKS split, as the shell
	# will pass them ("--jitter" "=" "full" is --jitter=full): a word is
	# glued to the one before when no blank separates them in COMP_LINE.
	local -a words=() starts=()
	local i n=-1 line=$COMP_LINE glued cword
	for ((i = 0; i <= COMP_CWORD; i++)); do
		glued=
		if ((i > 0)); then
			if [[ $line == [[:blank:]]* ]]; then
				line=${line#"${line%%[![:blank:]]*}"}
			elif [[ ${COMP_WORDS[i]} && $line == "${COMP_WORDS[i]}"* ]]; then
				glued=1
			elif [[ ${COMP_WORDS[i]} == = || ${COMP_WORDS[i - 1]} == = ]]; then
				glued=1 # COMP_LINE does not match; guess
			fi
		fi
		line=${line#"${COMP_WORDS[i]}"}
		if [[ $glued ]] && ((n > 0)); then
			words[n]+=${COMP_WORDS[i]}
		else
			n=$((n + 1))
			words[n]=${COMP_WORDS[i]}
			starts[n]=$i
		fi
	done
	cword=$n
	local cur=${words[cword]}

	# Walk retry's options as getopt_long "+..." does, to the first operand.
	local w opt='' long k c
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ $opt ]]; then
			opt=
			continue
		fi
		case $w in
		--)
			_retry_command_offset "${starts[i + 1]}"
			return ;;
		--*=*) ;;
		--?*)
			_retry_long "${w#--}" && _retry_takes_value "$long" &&
			    opt=$long ;;
		-?*)
			for ((k = 1; k < ${#w}; k++)); do
				c=${w:k:1}
				if _retry_takes_value "-$c"; then
					((k == ${#w} - 1)) && opt=-$c
					break
				fi
			done ;;
		*)
			_retry_command_offset "${starts[i]}"
			return ;;
		esac
	done

	if [[ $opt ]]; then
		_retry_values "$opt" "$cur" ""
		return
	fi
	case $cur in
	--*=*)
		w=${cur%%=*}
		_retry_long "${w#--}" || long=$w
		# When "=" breaks words, the shell replaces only what follows it.
		if [[ $COMP_WORDBREAKS == *=* ]]; then
			_retry_values "$long" "${cur#*=}" ""
		else
			_retry_values "$long" "${cur#*=}" "$w="
		fi ;;
	--*)
		_retry_add "$cur" "" "${_retry_longs[@]}" ;;
	-*)
		# A value glued to a short option: -jfu, -qsKI.
		for ((k = 1; k < ${#cur} - 1; k++)); do
			c=${cur:k:1}
			if _retry_takes_value "-$c"; then
				_retry_values "-$c" "${cur:k+1}" "${cur:0:k+1}"
				return
			fi
		done
		_retry_add "$cur" "" "${_retry_shorts[@]}" "${_retry_longs[@]}" ;;
	*)
		_retry_command_offset "${starts[cword]}" ;;
	esac
}
complete -F _retry retry
