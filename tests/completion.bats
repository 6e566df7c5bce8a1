#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The shell completions in completions/.  bash's is run here, by calling
# _retry with the COMP_* variables bash would set; zsh's in a real
# interactive zsh on a pseudo-terminal (zpty); fish's through complete -C.
# All three are held to the options ./retry --help prints and to the signal
# and jitter names in retry's sources.  Forks are few: the machine may be
# busy, and this file should take seconds.

load helpers/common

COMPDIR=$BATS_TEST_DIRNAME/../completions
TOP=$BATS_TEST_DIRNAME/..
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

# What the completions must know, one a line: every option --help prints
# (long and short), the signal names retry takes (its signames table) and
# the jitter modes (its jitter_names table).
setup_file() {
	local help
	help=$("$RETRY" --help)
	HELP=$help
	HELP_OPTIONS=$({
		grep -o -- '--[a-z][a-z0-9-]*' <<<"$help"
		grep -oE -- '^ +-[a-zA-Z],' <<<"$help" | tr -d ' ,'
	} | sort -u)
	SIGNALS=$(sed -n '/signames\[\] = {/,/^};/p' "$TOP"/*.c |
	    grep -oE '[{] "[A-Z0-9]+", SIG' | cut -d'"' -f2)
	JITTERS=$(sed -n '/jitter_names\[\] = {/,/^};/p' "$TOP"/*.c |
	    grep -oE '"[a-z]+"' | tr -d '"')
	export HELP HELP_OPTIONS SIGNALS JITTERS
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	touch file1 file2
	# fakecmd: a command with a completion of its own in every shell.  fish
	# loads completions only for a command it finds, so retry is in PATH.
	mkdir -p bin
	printf '#!/bin/sh\n' >bin/fakecmd
	chmod +x bin/fakecmd
	ln -s "$RETRY" bin/retry
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

# untraced COMMAND...: runs COMMAND without bats's DEBUG trap, which bats
# runs before every command (functions included) and which would make the
# completion functions, thousands of commands, take seconds.
untraced() {
	local status=0
	[ -n "${debug_trap+set}" ] || debug_trap=$(trap -p DEBUG)
	trap - DEBUG
	"$@" || status=$?
	eval "$debug_trap"
	return "$status"
}

# same_set WHAT EXPECTED ACTUAL: the two newline-separated lists hold the
# same words, in any order; else says which differ.
same_set() {
	untraced same_set_ "$@"
}

same_set_() {
	local -A want=() got=()
	local -a bad=()
	local w
	while IFS= read -r w; do
		[ -z "$w" ] || want[$w]=1
	done <<<"$2"
	while IFS= read -r w; do
		[ -z "$w" ] || got[$w]=1
	done <<<"$3"
	for w in "${!want[@]}"; do
		[ -n "${got[$w]-}" ] || bad+=("$1: missing '$w'")
	done
	for w in "${!got[@]}"; do
		[ -n "${want[$w]-}" ] || bad+=("$1: unexpected '$w'")
	done
	[ "${#bad[@]}" -eq 0 ] && return
	printf '%s\n' "${bad[@]:0:10}"
	[ "${#bad[@]}" -le 10 ] || echo "$1: and $((${#bad[@]} - 10)) more"
	return 1
}

# ---- bash ----

# bash_complete LINE: runs _retry for the cursor at the end of LINE, with
# COMP_WORDS split as bash splits it (blanks between words; "=" a word of
# its own while COMP_WORDBREAKS holds it).  The reply is left in COMPREPLY
# and, one a line, in $reply.
bash_complete() {
	local w
	local -a ws
	COMP_LINE=$1
	COMP_POINT=${#1}
	COMP_WORDS=()
	read -ra ws <<<"$1"
	for w in "${ws[@]}"; do
		while [[ $COMP_WORDBREAKS == *=* && $w == *=* ]]; do
			[ -z "${w%%=*}" ] || COMP_WORDS+=("${w%%=*}")
			COMP_WORDS+=("=")
			w=${w#*=}
		done
		[ -z "$w" ] || COMP_WORDS+=("$w")
	done
	[[ $1 != *' ' ]] || COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	# As at the prompt: no errexit in the completion functions.
	untraced _retry 2>/dev/null || true
	printf -v reply '%s\n' "${COMPREPLY[@]}"
}

# bash_expect LINE WORD...: completing LINE gives exactly the WORDs.
bash_expect() {
	local line=$1 want
	shift
	printf -v want '%s\n' "$@"
	bash_complete "$line"
	same_set "bash '$line'" "$want" "$reply"
}

# A completion function for fakecmd that records the words it was given.
_fakecmd() {
	local w
	fake_words="$COMP_CWORD:${COMP_WORDS[*]}"
	for w in sub1 sub2 other --fake-opt; do
		[[ $w != "$2"* ]] || COMPREPLY+=("$w")
	done
}

@test "bash: the completion passes shellcheck" {
	command -v shellcheck >/dev/null || skip "shellcheck is not installed"
	shellcheck -s bash -S warning "$COMPDIR/retry.bash"
}

@test "bash: 'retry -' offers every option --help prints, and only those" {
	source "$COMPDIR/retry.bash"
	bash_complete 'retry -'
	same_set "retry -" "$HELP_OPTIONS" "$reply"
	bash_complete 'retry --'
	same_set "retry --" "$(grep -- '^--' <<<"$HELP_OPTIONS")" "$reply"
	# An option takes a value exactly when --help shows one.
	local l opt meta re='^ +(-([a-zA-Z]), )?(--[a-z][a-z0-9-]*)( ([A-Z][A-Z/]*))? '
	while IFS= read -r l; do
		[[ $l =~ $re ]] || continue
		meta=${BASH_REMATCH[5]}
		for opt in ${BASH_REMATCH[2]:+-${BASH_REMATCH[2]}} \
		    "${BASH_REMATCH[3]}"; do
			if [ -n "$meta" ]; then
				_retry_takes_value "$opt" ||
				    { echo "$opt takes a value"; false; }
			elif _retry_takes_value "$opt"; then
				echo "$opt takes no value"
				false
			fi
		done
	done <<<"$HELP"
	_retry_takes_value --max-delay
}

@test "bash: long options complete by prefix" {
	source "$COMPDIR/retry.bash"
	bash_expect 'retry --ji' --jitter
	bash_expect 'retry --k' --key --kill-after
	bash_expect 'retry --max' --max-delay
	bash_expect 'retry -q --dry' --dry-run
	bash_expect 'retry --nosuch'
}

@test "bash: jitter modes after --jitter, --jitter=, -j and -j glued" {
	source "$COMPDIR/retry.bash"
	bash_expect 'retry --jitter ' $JITTERS
	bash_expect 'retry -j ' $JITTERS
	bash_expect 'retry -q --jitter d' decorrelated
	# "=" breaks words by default: the reply replaces what follows it.
	bash_expect 'retry --jitter=' $JITTERS
	bash_expect 'retry --jitter=fu' full
	bash_expect 'retry --ji=e' equal
	bash_expect 'retry --jitter=full --jitter=n' none
	# Without "=" in COMP_WORDBREAKS the reply is the whole word.
	COMP_WORDBREAKS=${COMP_WORDBREAKS//=/}
	bash_expect 'retry --jitter=fu' --jitter=full
	bash_expect 'retry -jf' -jfull
	bash_expect 'retry -qvjn' -qvjnone
}

@test "bash: signal names after --signal, as retry takes them" {
	source "$COMPDIR/retry.bash"
	bash_expect 'retry --signal ' $SIGNALS
	bash_expect 'retry -s ' $SIGNALS
	bash_expect 'retry -s K' KILL
	bash_expect 'retry -s te' term
	bash_expect 'retry --signal=SIGK' SIGKILL
	bash_expect 'retry -sUS' -sUSR1 -sUSR2
	# retry takes every name offered (each -s is checked; the last wins).
	run -0 "$RETRY" $(printf -- '-s %s ' $SIGNALS term SIGKILL) \
	    --dry-run -n 1
}

@test "bash: nothing, not even file names, for durations, numbers, codes, keys" {
	source "$COMPDIR/retry.bash"
	local opt
	for opt in -n --attempts -D --deadline -T --timeout -k --kill-after \
	    -b --base -f --factor -c --cap --max-delay --seed -o --on \
	    -x --stop-on -K --key; do
		bash_expect "retry $opt "
		bash_expect "retry $opt fi"
	done
	bash_expect 'retry --timeout=fi'
	# A value that looks like an option is still the value.
	bash_expect 'retry -K -'
	bash_expect 'retry -qn '
}

# bash_handover: the checks on handing over to the command, with whatever
# _command_offset (or none) the test has loaded.
bash_handover() {
	source "$COMPDIR/retry.bash"
	complete -F _fakecmd fakecmd
	bash_expect 'retry -n 3 fakecmd su' sub1 sub2
	[ "$fake_words" = "1:fakecmd su" ]
	bash_expect 'retry fakecmd ' sub1 sub2 other --fake-opt
	bash_expect 'retry -qn3 fakecmd o' other
	bash_expect 'retry --attempts 3 --jitter=full fakecmd su' sub1 sub2
	bash_expect 'retry -- fakecmd su' sub1 sub2
	bash_expect 'retry -n 3 -- fakecmd sub1 s' sub1 sub2
	[ "$fake_words" = "2:fakecmd sub1 s" ]
	# After the command, options are the command's.
	bash_expect 'retry -n 3 fakecmd --' --fake-opt
	bash_expect 'retry fakecmd --ji'
	# The command's name; files for a command without a completion.
	bash_complete 'retry -n 3 fakec'
	[[ $reply == *fakecmd* ]]
	bash_complete 'retry -q -- fakec'
	[[ $reply == *fakecmd* ]]
	bash_expect 'retry -n 3 nocompletion fi' file1 file2
}

@test "bash: hands over to the command's completion with _command_offset" {
	[ -f "$BASH_COMPLETION" ] || skip "bash-completion is not installed"
	untraced source "$BASH_COMPLETION"
	declare -F _command_offset >/dev/null ||
	    declare -F _comp_command_offset >/dev/null
	bash_handover
}

@test "bash: hands over to the command's completion without bash-completion" {
	if declare -F _command_offset _comp_command_offset >/dev/null; then
		echo "bash-completion is loaded"
		false
	fi
	bash_handover
	complete -W 'alpha beta' wordcmd
	bash_expect 'retry -n 3 wordcmd al' alpha
}

@test "bash: 'retry git che' completes as 'git che' does" {
	[ -f "$BASH_COMPLETION" ] || skip "bash-completion is not installed"
	command -v git >/dev/null || skip "git is not installed"
	untraced source "$BASH_COMPLETION"
	source "$COMPDIR/retry.bash"
	# What bash-completion gives for "git che" itself.
	COMP_LINE='git che' COMP_POINT=7 COMP_WORDS=(git che) COMP_CWORD=1
	COMPREPLY=()
	untraced _command_offset 0 2>/dev/null || true
	[ "${#COMPREPLY[@]}" -gt 0 ] || skip "bash-completion has no git completion here"
	local want
	printf -v want '%s\n' "${COMPREPLY[@]}"
	[[ $want == *checkout* ]]
	bash_complete 'retry -n 3 --jitter full git che'
	[ "$reply" = "$want" ]
}

# ---- zsh and fish: output parsing ----

# split_blocks: splits $output at its "@@" lines into block[1], block[2]...
# (the matches of each query, one a line).
split_blocks() {
	local l n=1
	block=([1]=)
	while IFS= read -r l; do
		if [ "$l" = @@ ]; then
			n=$((n + 1))
			block[n]=
		else
			block[n]+=${block[n]:+$'\n'}$l
		fi
	done <<<"$output"
}

# ---- zsh ----

need_zsh() {
	command -v zsh >/dev/null || skip "zsh is not installed"
}

# zsh_complete QUERY...: types each QUERY and Tab in an interactive zsh on
# a pseudo-terminal, with compinit and completions/ on fpath; a compadd
# wrapper writes the matches to a file.  Prints each query's matches, one a
# line, then "@@".  Exits 77 when zsh has no zpty module.
zsh_complete() {
	cat >drive.zsh <<'EOF'
emulate -L zsh
zmodload zsh/zpty 2>/dev/null || { print -u2 "no zsh/zpty"; exit 77 }
zmodload zsh/datetime || exit 2
local compdir=$1 dump=$2 out=$3 q chunk
local -F limit
shift 3
# Ours and the directories of functions zsh ships for completion.  compinit
# reads every file on fpath: Unix, the biggest, is only autoloaded, after.
local -a dirs unix
dirs=(${(M)fpath:#*/Completion(|/Base|/Zsh)})
unix=(${(M)fpath:#*/Completion/Unix})
(( $#dirs )) || dirs=($fpath)
cat >$out.rc <<RC
PS1='' RPROMPT='' PROMPT2=''
bindkey -e
unsetopt autolist listambiguous
setopt nobeep
fpath=(${(q)compdir} ${(j: :)${(@q)dirs}})
autoload -Uz compinit && compinit -u -d ${(q)dump}
fpath+=(${(j: :)${(@q)unix}})
for d in ${(j: :)${(@q)unix}}; do autoload -Uz -- \$d/_*(N:t); done
compadd() {
	if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
		builtin compadd "\$@"
		return
	fi
	local -a __t_hits
	builtin compadd -A __t_hits "\$@"
	(( \$#__t_hits )) && print -rl -- \$__t_hits >>${(q)out}
	builtin compadd "\$@"
}
_fakecmd() { compadd sub1 sub2 other --fake-opt }
compdef _fakecmd fakecmd
_t_done() { print -r -- @@ >>${(q)out} }
_t_complete() { comppostfuncs=(_t_done); _main_complete }
zle -C t-complete complete-word _t_complete
bindkey '^I' t-complete
print READY
RC
zpty t zsh -f -i || exit 2
zpty -w t "source ${(q)out}.rc"
# The first compinit writes its dump, which takes a while.
(( limit = EPOCHREALTIME + 20 ))
until zpty -rt t chunk 2>/dev/null && [[ $chunk == *READY* ]]; do
	(( EPOCHREALTIME > limit )) && { print -u2 "zsh did not start"; exit 3 }
	sleep 0.01
done
for q; do
	: >$out
	zpty -w -n t "$q"$'\t'
	(( limit = EPOCHREALTIME + 5 ))
	until [[ -s $out && $(<$out) == (*$'\n'|)@@ ]]; do
		# Read what zsh echoes, so that it never blocks on a full pty.
		while zpty -rt t chunk 2>/dev/null; do :; done
		(( EPOCHREALTIME > limit )) && { print -u2 "no completion for: $q"; exit 3 }
		sleep 0.01
	done
	cat $out
	zpty -w -n t $'\C-u'
done
zpty -d t
EOF
	zsh -f drive.zsh "$COMPDIR" "$BATS_FILE_TMPDIR/zcompdump" \
	    "$BATS_TEST_TMPDIR/matches" "$@"
}

@test "zsh: the completion parses (zsh -n)" {
	need_zsh
	zsh -n "$COMPDIR/_retry"
	[ "$(head -n 1 "$COMPDIR/_retry")" = "#compdef retry" ]
}

@test "zsh: options and their values, through a real zsh" {
	need_zsh
	run zsh_complete 'retry --ji' 'retry -' 'retry --jitter ' \
	    'retry --jitter=' 'retry -q -j ' 'retry --signal ' 'retry -n ' \
	    'retry -T 1 --max' 'retry -h -' 'retry -jf'
	[ "$status" -ne 77 ] || skip "zsh has no zsh/zpty module"
	[ "$status" -eq 0 ]
	split_blocks
	[ "${block[1]}" = --jitter ]
	# zsh adds "-" (and may add "--") for stacking letters and for -S.
	same_set "retry -" "$HELP_OPTIONS" "$(grep -vx -- '--*' <<<"${block[2]}")"
	same_set "--jitter" "$JITTERS" "${block[3]}"
	same_set "--jitter=" "$JITTERS" "${block[4]}"
	same_set "-j" "$JITTERS" "${block[5]}"
	same_set "--signal" "$SIGNALS" "${block[6]}"
	[ "${block[7]}" = "" ]
	[ "${block[8]}" = --max-delay ]
	[ "${block[9]}" = "" ]
	[ "${block[10]}" = full ]
}

@test "zsh: the command and its arguments go to the command's completion" {
	need_zsh
	run zsh_complete 'retry -n 3 fakecmd su' 'retry -- fakecmd su' \
	    'retry -qn3 --jitter=full fakecmd o' 'retry -n 3 fakecmd --' \
	    'retry -q fakec' 'retry -n 3 nocompletion fi'
	[ "$status" -ne 77 ] || skip "zsh has no zsh/zpty module"
	[ "$status" -eq 0 ]
	split_blocks
	same_set "fakecmd su" $'sub1\nsub2' "${block[1]}"
	same_set "-- fakecmd su" $'sub1\nsub2' "${block[2]}"
	[ "${block[3]}" = other ]
	[ "${block[4]}" = --fake-opt ]
	grep -qx fakecmd <<<"${block[5]}"
	same_set "nocompletion fi" $'file1\nfile2' "${block[6]}"
}

# ---- fish ----

need_fish() {
	command -v fish >/dev/null || skip "fish is not installed"
}

# fish_complete QUERY...: prints the words complete -C gives for each QUERY,
# then "@@".  fish finds retry.fish on fish_complete_path, as when installed.
fish_complete() {
	HOME=$BATS_TEST_TMPDIR XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config \
	    XDG_DATA_HOME=$BATS_TEST_TMPDIR/data fish -c '
		set -p fish_complete_path $argv[1]
		complete -c fakecmd -xa "sub1 sub2 other --fake-opt"
		for q in $argv[2..-1]
			complete -C "$q" | string replace -r "\t.*" ""
			echo @@
		end' "$COMPDIR" "$@"
}

@test "fish: the completion parses (fish -n)" {
	need_fish
	fish -n "$COMPDIR/retry.fish"
}

@test "fish: options and their values" {
	need_fish
	run -0 fish_complete 'retry --ji' 'retry -' 'retry --jitter ' \
	    'retry --jitter=' 'retry -q -j ' 'retry --signal ' 'retry -n ' \
	    'retry -jf' 'retry --k' 'retry -qn 3 -'
	split_blocks
	[ "${block[1]}" = --jitter ]
	same_set "retry -" "$HELP_OPTIONS" "${block[2]}"
	same_set "--jitter" "$JITTERS" "${block[3]}"
	same_set "--jitter=" "$(sed 's/^/--jitter=/' <<<"$JITTERS")" "${block[4]}"
	same_set "-j" "$JITTERS" "${block[5]}"
	same_set "--signal" "$SIGNALS" "${block[6]}"
	[ "${block[7]}" = "" ]
	[ "${block[8]}" = -jfull ]
	same_set "--k" $'--key\n--kill-after' "${block[9]}"
	# -n took its value: still before the command.
	[[ ${block[10]} == *--jitter* ]]
}

@test "fish: the command and its arguments go to the command's completion" {
	need_fish
	run -0 fish_complete 'retry -n 3 fakecmd su' 'retry -- fakecmd su' \
	    'retry -qn 3 --jitter=full fakecmd o' 'retry -n 3 fakecmd --' \
	    'retry -n 3 fish --' 'retry -q fakec' 'retry -n 3 nocompletion fi'
	split_blocks
	same_set "fakecmd su" $'sub1\nsub2' "${block[1]}"
	same_set "-- fakecmd su" $'sub1\nsub2' "${block[2]}"
	[ "${block[3]}" = other ]
	[ "${block[4]}" = --fake-opt ]
	# fish's options (its completion for ls depends on which ls is
	# found), and none of retry's.
	grep -qx -- --command <<<"${block[5]}"
	if grep -E -- '^--(attempts|jitter|signal|dry-run)$' <<<"${block[5]}"; then
		echo "retry's options offered after the command"
		false
	fi
	grep -qx fakecmd <<<"${block[6]}"
	same_set "nocompletion fi" $'file1\nfile2' "${block[7]}"
}

# ---- all three, from the text ----

@test "every option --help prints is in each completion file, and no other" {
	local got
	source "$COMPDIR/retry.bash"
	printf -v got '%s\n' "${_retry_shorts[@]}" "${_retry_longs[@]}"
	same_set retry.bash "$HELP_OPTIONS" "$got"
	# zsh: the specs, as in {-n+,--attempts=}'[...]' and '--seed=[...]'.
	got=$(grep -oE -- "(-[a-zA-Z]|--[a-z][a-z0-9-]*)[]=+,}[]" \
	    "$COMPDIR/_retry" | sed 's/.$//')
	same_set _retry "$HELP_OPTIONS" "$got"
	# fish: -s n and -l attempts on the "complete -c retry" lines.
	got=$(grep '^complete -c retry ' "$COMPDIR/retry.fish" |
	    grep -oE -- ' -(s [a-zA-Z]|l [a-z][a-z0-9-]*)' |
	    sed 's/^ -s /-/; s/^ -l /--/')
	same_set retry.fish "$HELP_OPTIONS" "$got"
}

@test "every signal name and jitter mode is in each completion file" {
	local f name text
	[ "$(wc -l <<<"$SIGNALS")" -ge 27 ]
	[ "$(wc -l <<<"$JITTERS")" -eq 4 ]
	for f in retry.bash _retry retry.fish; do
		text=$(<"$COMPDIR/$f")
		for name in $SIGNALS $JITTERS; do
			[[ $text =~ (^|[^A-Za-z0-9_])$name([^A-Za-z0-9_]|$) ]] ||
			    { echo "$name is not in $f"; false; }
		done
	done
}
