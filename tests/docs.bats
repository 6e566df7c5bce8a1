#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The man page and the README agree with the binary (make install: make.bats).
load helpers/common

TOP=$BATS_TEST_DIRNAME/..

# The man page as a reader sees it, overstrikes ("X\bX", "_\bX") taken out
# as col -b would.
rendered() {
	local bs
	bs=$(printf '\b')
	if command -v mandoc >/dev/null; then
		mandoc -Tascii "$TOP/retry.1"
	else
		groff -Tascii -mandoc "$TOP/retry.1" 2>/dev/null
	fi | sed "s/.$bs//g"
}

# Other tools' options that retry.1 names (Coming from another retry): the
# ones retry refuses, and curl's.
# And the mistyped ones of DIAGNOSTICS.
FOREIGN='--atempts --delay --max-time --message --retry --retry-delay --retry-max-time --times --until --ver --while'

@test "every long option in --help is in retry.1, and every one in retry.1 is in --help" {
	help=$("$RETRY" --help | grep -o -- '--[a-z][a-z0-9-]\+' | sort -u)
	page=$(rendered | grep -o -- '--[a-z][a-z0-9-]\+' | sort -u |
	    grep -vxF -f <(tr ' ' '\n' <<<"$FOREIGN"))
	[ -n "$help" ]
	[ "$help" = "$page" ]
	# Each of the refused ones is refused.
	local o
	for o in --delay --message --times --until --while; do
		run -125 "$RETRY" "$o" 1 true
		[[ $output == "retry: $o is a "* ]]
	done
}

@test "every short option in --help is in the SYNOPSIS of retry.1" {
	for o in $("$RETRY" --help | grep -o -- '^  -[a-zA-Z]' | tr -d ' -'); do
		grep -q "^\.Op Fl .*$o" "$TOP/retry.1" || grep -q "^\.It Fl $o " "$TOP/retry.1"
	done
}

@test "retry.1 is clean under mandoc -Tlint" {
	command -v mandoc >/dev/null || skip "mandoc is not installed (make deps)"
	# Cross-references to pages missing from mandoc.db are not the page's fault.
	run mandoc -Tlint "$TOP/retry.1"
	[ -z "$(grep -v 'outdated mandoc.db\|mandoc.db lacks' <<<"$output")" ]
}

@test "retry.1 is clean under groff -ww" {
	command -v groff >/dev/null || skip "groff is not installed"
	run groff -ww -z -mandoc "$TOP/retry.1"
	[ -z "$output" ]
}

@test "the README's dry run is what retry prints" {
	want=$(awk '/^\$ retry --dry-run --seed 7$/ { on = 1; next } on && /^```/ { exit } on' "$TOP/README.md")
	[ -n "$want" ]
	[ "$("$RETRY" --dry-run --seed 7)" = "$want" ]
}

@test "--help fits in 80 columns and --version is 'retry X.Y.Z'" {
	run -0 "$RETRY" --help
	[ -z "$(awk 'length > 80' <<<"$output")" ]
	run -0 "$RETRY" --version
	[[ $output =~ ^retry\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}
