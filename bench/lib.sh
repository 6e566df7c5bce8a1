# SPDX-License-Identifier: ISC
# shellcheck shell=sh
# The bench scripts' shared shell functions, read with ". bench/lib.sh"
# by bench/run.sh, bench/store.sh and bench/herd-rules.sh: the conditions
# a run states beside its figures, and a section put into RESULTS.md.

# The load average, its three figures.
loadavg() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'
}

# The type of the file system under a directory: findmnt's (util-linux),
# else stat -f's, which names ext4 ext2/ext3.
fstype() {
	fs=$(findmnt -n -o FSTYPE -T "$1" 2>/dev/null | head -n 1)
	[ -n "$fs" ] || fs=$(stat -f -c %T "$1" 2>/dev/null) || fs='?'
	echo "$fs"
}

# put_section RESULTS HEADING SECTION TEMP: the file SECTION, which begins
# with the line HEADING, in RESULTS in place of the section an earlier
# run wrote there, up to the next section ("## "), or at its end when
# there is none (TEMP: a scratch file); RESULTS made when missing.
put_section() {
	if [ ! -f "$1" ]; then
		cat "$3" >"$1"
		return
	fi
	awk -v h="$2" -v s="$3" '
	function put(  l) {
		while ((getline l <s) > 0)
			print l
		done = 1
	}
	$0 == h { put(); skip = 1; next }
	skip && /^## / { skip = 0; print "" }
	!skip { print }
	END { if (!done) { print ""; put() } }' "$1" >"$4"
	cat "$4" >"$1"
}
