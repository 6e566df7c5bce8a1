#!/bin/sh
# SPDX-License-Identifier: ISC
# make fuzz: each libFuzzer target of tests/fuzz/ runs FUZZTIME seconds
# (60 by default) from its seeds in tests/fuzz/corpus/, under ASan and
# UBSan, since the parsers it drives read what users and files give them.
set -eu
cd "$(dirname "$0")/../.."
FUZZCC=${FUZZCC:-clang}	# and its runtime, Debian's libclang-rt-14-dev
FUZZTIME=${FUZZTIME:-60}
# The pure parts that the fuzzers drive: tests/fuzz/NAME is fuzz_NAME.c
# and these (msg.c and its leaves for relay.c's lines on a full TMPDIR;
# env.c and its own for options.c, which asks it whether the run is an
# outer retry's attempt).
linked="options.c parse.c backoff.c url.c relay.c match.c find.c fd.c spool.c \
    msg.c clock.c env.c random.c sha256.c say.c outcome.c envfile.c"
for f in $FUZZERS; do
	main=tests/fuzz/fuzz_${f##*/}.c
	if [ ! -e "$f" ] ||
	    [ -n "$(find "$main" $linked $HDRS -newer "$f")" ]; then
		set -x
		$FUZZCC $OUR_CPPFLAGS -g -O1 \
		    -fsanitize=fuzzer,address,undefined \
		    -fno-sanitize-recover=all -o "$f" "$main" $linked
		{ set +x; } 2>/dev/null
	fi
done
for f in $FUZZERS; do
	name=${f##*/}
	mkdir -p "tests/fuzz/work/$name"
	"$f" -max_total_time="$FUZZTIME" -print_final_stats=1 \
	    -artifact_prefix="tests/fuzz/work/$name-" \
	    "tests/fuzz/work/$name" "tests/fuzz/corpus/$name"
done
