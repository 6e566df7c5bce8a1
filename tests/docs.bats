#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The man pages and the README agree with the binary (make install: make.bats).
load helpers/common

TOP=$BATS_TEST_DIRNAME/..
# The pages: the tool, the files it writes, its shared state.
PAGES='retry.1 retry-formats.5 retry-circuit.7'

# PAGE as a reader sees it, overstrikes ("X\bX", "_\bX") taken out as
# col -b would.
rendered() {
	local bs
	bs=$(printf '\b')
	if command -v mandoc >/dev/null; then
		mandoc -Tascii "$TOP/$1"
	else
		groff -Tascii -mandoc "$TOP/$1" 2>/dev/null
	fi | sed "s/.$bs//g"
}

# The long options a page names.
page_options() {
	rendered "$1" | grep -o -- '--[a-z][a-z0-9-]\+' | sort -u
}

# The mistyped option of retry.1's DIAGNOSTICS, which retry refuses, and
# curl's options in the heartbeat recipes of its EXAMPLES.
FOREIGN='--atempts --data-binary --data-urlencode --retry'
# Other programs' options that a page quotes: node_exporter's, in the
# recipe of retry-formats.5, and curl's, for RETRY_LOG there.
OTHERS='--collector --data-binary'

@test "every long option in --help is in retry.1, and every one in retry.1 is in --help" {
	help=$("$RETRY" --help | grep -o -- '--[a-z][a-z0-9-]\+' | sort -u)
	page=$(page_options retry.1 | grep -vxF -f <(tr ' ' '\n' <<<"$FOREIGN"))
	[ -n "$help" ]
	[ "$help" = "$page" ]
	run -125 "$RETRY" --atempts 3 true
	[ "$output" = "retry: unknown option '--atempts': did you mean --attempts?" ]
	# The other tools' options that the README's "Coming from another
	# retry" says retry refuses are refused.
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

@test "the options that retry-circuit.7 and retry-formats.5 name are retry's" {
	help=$("$RETRY" --help | grep -o -- '--[a-z][a-z0-9-]\+' | sort -u)
	local page o
	for page in retry-circuit.7 retry-formats.5; do
		[ -z "$(page_options "$page" | grep -vxF -f <(echo "$help") |
		    grep -vxF -f <(tr ' ' '\n' <<<"$OTHERS"))" ]
	done
	# The circuit's options are all explained in retry-circuit.7.
	for o in --circuit --trip --cool --budget --circuit-status \
	    --circuit-list --circuit-reset --store --store-timeout --store-fail; do
		grep -q "^\.It Fl ${o#-}" "$TOP/retry-circuit.7"
	done
}

@test "the three pages are clean under mandoc -Tlint" {
	command -v mandoc >/dev/null || skip "mandoc is not installed (make deps)"
	# Together, so that each finds the others it cross-references; pages
	# missing from an outdated mandoc.db are not the pages' fault.
	run mandoc -Tlint $(printf "$TOP/%s " $PAGES)
	[ -z "$(grep -v 'outdated mandoc.db\|mandoc.db lacks' <<<"$output")" ]
}

@test "the three pages are clean under groff -ww" {
	command -v groff >/dev/null || skip "groff is not installed"
	local page
	for page in $PAGES; do
		run groff -ww -z -mandoc "$TOP/$page"
		[ -z "$output" ]
	done
}

@test "each page names the other two in SEE ALSO" {
	local page other
	for page in $PAGES; do
		for other in $PAGES; do
			[ "$page" = "$other" ] && continue
			sed -n '/^\.Sh SEE ALSO/,/^\.Sh/p' "$TOP/$page" |
			    grep -qx "\.Xr ${other%.*} ${other##*.}.*" ||
			    { echo "$page: no $other in SEE ALSO"; false; }
		done
	done
}

@test "retry.1 stays a page to scan: at most 700 lines at 80 columns" {
	local n
	if command -v man >/dev/null; then
		n=$(MANWIDTH=80 man "$TOP/retry.1" 2>/dev/null | wc -l)
	else
		n=$(mandoc -Tascii -O width=80 "$TOP/retry.1" | wc -l)
	fi
	echo "retry.1: $n lines"
	[ "$n" -gt 100 ] && [ "$n" -le 700 ]
}

@test "the README starts with the tool: an example in its first 40 lines, before any build step; HACKING.md linked once" {
	local first example build
	first=$(head -n 40 "$TOP/README.md")
	example=$(grep -n -m1 '^retry \|^\$ retry \| retry -' <<<"$first" | cut -d: -f1)
	build=$(grep -n -m1 '^make' "$TOP/README.md" | cut -d: -f1)
	[ -n "$example" ] && [ -n "$build" ] && [ "$example" -lt "$build" ]
	[ "$(grep -c 'HACKING\.md' "$TOP/README.md")" -eq 1 ]
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
