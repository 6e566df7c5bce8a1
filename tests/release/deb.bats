#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# make check-release: the amd64 package of release/ as a user meets it,
# in a throw-away root (an overlay of / in a mount namespace of its own,
# so that the machine's own packages are left as they were): apt-get
# installs it, man finds its pages, bash completes its options at a
# pseudo-terminal, and apt-get purge leaves none of its files.

bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	VERSION=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
	DEB=$(echo "$TOP"/release/retry-backoff_"$VERSION"-1_amd64.deb)
	export TOP VERSION DEB
}

# cannot WHY: a test that cannot run here skips, but under make
# check-release (RELEASE_CHECK=1), which is there to run it, fails.
cannot() {
	if [ -n "${RELEASE_CHECK:-}" ]; then
		echo "cannot test the package: $1"
		return 1
	fi
	skip "$1"
}

setup() {
	[ -f "$DEB" ] || cannot "no $DEB: make release first"
	[ "$(id -u)" -eq 0 ] || cannot "needs root, for a mount namespace and apt-get"
	unshare --mount true 2>/dev/null || cannot "no mount namespace here"
	ROOT=$BATS_TEST_TMPDIR/ovl/root
}

@test "the package is retry-backoff, conflicts with and replaces Debian's retry, and provides nothing" {
	run -0 dpkg-deb -f "$DEB" Package Version Architecture Conflicts Replaces Provides
	[ "$output" = "Package: retry-backoff
Version: $VERSION-1
Architecture: amd64
Conflicts: retry
Replaces: retry" ]
}

# in_root SCRIPT: runs SCRIPT with bash as root of a private overlay of /,
# whose changes vanish with the namespace.  The package and ptyrun are
# copied in at /tmp.
in_root() {
	unshare --mount bash -c '
		set -e
		ovl=$1
		mkdir -p "$ovl"
		mount --make-rprivate /
		mount -t tmpfs tmpfs "$ovl"
		mkdir "$ovl/upper" "$ovl/work" "$ovl/root"
		mount -t overlay overlay \
		    -o "lowerdir=/,upperdir=$ovl/upper,workdir=$ovl/work" "$ovl/root"
		for d in proc dev sys; do mount --rbind "/$d" "$ovl/root/$d"; done
		mount -t tmpfs tmpfs "$ovl/root/tmp"
		cp "$2" "$3" "$ovl/root/tmp/"
		exec chroot "$ovl/root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		    DEBIAN_FRONTEND=noninteractive bash -c "$4"
	' in_root "${ROOT%/root}" "$DEB" "$BATS_TEST_DIRNAME/../helpers/ptyrun" "$1"
}

@test "the .deb installs with apt-get: retry --version, its three man pages found by man, bash completes 'retry --ji' at a pseudo-terminal" {
	run in_root '
		set -e
		apt-get install -y /tmp/'"${DEB##*/}"' >/dev/null 2>&1 ||
		    apt-get install -y /tmp/'"${DEB##*/}"'
		retry --version
		for f in /usr/share/bash-completion/completions/retry \
		    /usr/share/zsh/vendor-completions/_retry \
		    /usr/share/fish/vendor_completions.d/retry.fish; do
			dpkg -S "$f" | grep -qx "retry-backoff: $f" ||
			    { echo "$f is not the package'"'"'s"; exit 1; }
		done
		man -w retry
		man -w 5 retry-formats
		man -w 7 retry-circuit
		mkdir /tmp/home
		env -i HOME=/tmp/home TERM=xterm PATH=/usr/bin:/bin \
		    /tmp/ptyrun -t 20000 -o "# " -i "retry --ji\011" -i "\n" \
		    -o "option '"'--jitter'"' needs a value" -i "exit 0\n" \
		    -- bash --login -i >/dev/null 2>/tmp/err ||
		    { cat /tmp/err; exit 1; }
		echo completed'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "retry $VERSION" ]
	[ "${lines[1]}" = /usr/share/man/man1/retry.1.gz ]
	[ "${lines[2]}" = /usr/share/man/man5/retry-formats.5.gz ]
	[ "${lines[3]}" = /usr/share/man/man7/retry-circuit.7.gz ]
	[ "${lines[4]}" = completed ]
}

@test "apt-get purge leaves none of the package's files" {
	run in_root '
		set -e
		apt-get install -y /tmp/'"${DEB##*/}"' >/dev/null 2>&1
		dpkg -L retry-backoff >/tmp/files
		grep -qx /usr/bin/retry /tmp/files
		apt-get purge -y retry-backoff >/dev/null 2>&1
		dpkg -s retry-backoff 2>/dev/null && exit 1
		while IFS= read -r f; do
			[ -d "$f" ] || [ ! -e "$f" ] || echo "left: $f"
		done </tmp/files
		echo "listed $(wc -l </tmp/files)"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "listed "* ]]
}

# Debian's retry (another tool) owns the name: ours replaces it only when
# asked.  apt-get --trivial-only refuses whatever would remove a package,
# which is what a prompt guards; an upgrade never swaps one for the other.
@test "where Debian's retry is installed, installing the .deb removes it only as a change apt-get must be asked for, and an upgrade never swaps them" {
	run in_root '
		dpkg -s retry >/dev/null 2>&1 ||
		    apt-get install -y retry >/dev/null 2>&1 || { echo "no Debian retry"; exit 0; }
		apt-get install --trivial-only /tmp/'"${DEB##*/}"' >/dev/null 2>&1 &&
		    { echo "installed without asking"; exit 1; }
		dpkg -s retry >/dev/null || { echo "retry removed"; exit 1; }
		apt-get -s install /tmp/'"${DEB##*/}"' | grep "^Remv retry " || exit 1
		# Installed in its place, ours stays through any upgrade.
		apt-get install -y /tmp/'"${DEB##*/}"' >/dev/null 2>&1 || exit 1
		dpkg -s retry >/dev/null 2>&1 && { echo "both installed"; exit 1; }
		apt-get -s dist-upgrade | grep -E "^(Inst retry |Remv retry-backoff)" && exit 1
		dpkg -s retry-backoff >/dev/null || exit 1
		echo refused'
	echo "$output"
	[ "$output" != "no Debian retry" ] ||
	    cannot "Debian's retry is neither installed nor installable here (no network?)"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = refused ]
}
