#!/bin/sh
# SPDX-License-Identifier: ISC
# make dist: retry-VERSION.tar.gz, what a user needs to build, test and
# install and no more: the files git tracks (in a tarball, its MANIFEST),
# less CI's script and the benchmark results.
set -eu
cd "$(dirname "$0")/../.."
umask 022
dist=retry-$VERSION
# git's list, so that nothing is listed twice and nothing untracked
# (.deps/, build products, a fuzzer's work) slips in.  The tarball carries
# it as MANIFEST, for a make dist where there is no git.
omit='^(\.ci/|\.gitignore$|bench/RESULTS\.md$|bench/herd\.svg$)'
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	files=$(git ls-files | grep -Ev "$omit")
elif [ -f MANIFEST ]; then
	files=$(grep -v '^MANIFEST$' MANIFEST)
else
	echo "make dist: no git checkout and no MANIFEST" >&2
	exit 1
fi
rm -rf "$dist" "$dist.tar.gz"
for f in $files; do
	mkdir -p "$dist/$(dirname "$f")"
	cp -p "$f" "$dist/$f"
done
printf '%s\n' $files MANIFEST | sort >"$dist/MANIFEST"
tar -cf - "$dist" | gzip -9 -n >"$dist.tar.gz"
rm -rf "$dist"
echo "$dist.tar.gz"
