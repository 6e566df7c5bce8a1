#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-static: cppcheck and clang-tidy on the C sources and the tests'
# C helpers, shellcheck on the project's scripts, and negations in bats
# that cannot fail; any finding fails, so the analysers' warnings are read
# when they appear, not in a heap later.
set -eu
cd "$(dirname "$0")/../.."
helpers=$(for p in $TESTPROGS; do echo "$p.c"; done)

# cppcheck's variableScope wants declarations where first used, and its
# redundantContinue an empty loop body written as ";": style(9) puts
# declarations at the top of the block and writes "continue;", so those
# two are off.
echo "cppcheck"
cppcheck --enable=warning,style,performance,portability --std=c99 \
    --suppress=variableScope --suppress=redundantContinue --inline-suppr \
    --quiet --error-exitcode=1 $OUR_CPPFLAGS $SRCS $helpers

# cert-err33-c wants every printf's result used: stdio output is checked
# once with ferror() and fclose() where it is built up (report.c, stdout).
checks='-*,bugprone-*,cert-*,clang-analyzer-*,misc-*,performance-*'
checks="$checks,portability-*,-bugprone-easily-swappable-parameters"
checks="$checks,-cert-err33-c,-misc-unused-parameters"
echo "clang-tidy"
clang-tidy --quiet --warnings-as-errors='*' -checks="$checks" \
    $SRCS $helpers -- -std=c99 $OUR_CPPFLAGS

# The completions are checked by the suite.
echo "shellcheck"
shellcheck -S warning $SCRIPTS

# In a bats test, "! cmd" that is not the test's last command never fails
# it (bats' set -e passes over a negated command): write "run ! cmd", or
# "! cmd || false" where $output must stay.
echo "bats negations"
if grep -n '^[[:space:]]*! ' tests/*.bats | grep -v -e '|| false$' -e '\\$'; then
	echo "static.sh: the lines above can never fail their test: end each with '|| false', or use 'run !'" >&2
	exit 1
fi
