/* SPDX-License-Identifier: ISC */
/*
 * The one place where the feature macros are picked, per platform: every
 * .c file includes this first, before any system header.  POSIX.1-2008
 * with XSI everywhere; on macOS and FreeBSD also the platform's own
 * interfaces, which their headers hide under _XOPEN_SOURCE alone.
 */
#ifndef COMPAT_H
#define COMPAT_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE	700
#endif

#if defined(__linux__)
/*
 * glibc shows vfork() and getentropy(), which are not in POSIX.1-2008,
 * with _DEFAULT_SOURCE, and O_TMPFILE only with _GNU_SOURCE (musl shows
 * all three with either).  Anything else it shows is kept out by
 * tests/check/portable-audit.
 */
#define _GNU_SOURCE	1 /* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#elif defined(__APPLE__)
/* Strict mode hides O_NOFOLLOW, mkdtemp(), SIGWINCH and SIGIO. */
#define _DARWIN_C_SOURCE	1
#elif defined(__FreeBSD__)
/* _XOPEN_SOURCE leaves __BSD_VISIBLE undefined: SIGWINCH and SIGIO hide. */
#define __BSD_VISIBLE	1
#endif

/*
 * getentropy(3): glibc 2.25, musl 1.1.20, FreeBSD 12, OpenBSD, macOS
 * 10.12 (in <sys/random.h>).  Elsewhere retry reads /dev/urandom.
 */
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
    defined(__APPLE__)
#define HAVE_GETENTROPY	1
#endif

/*
 * copy_file_range(2): Linux 4.5, in glibc since 2.27 and in musl (which
 * names no version: <features.h> shows __GLIBC__ only with glibc).  A
 * kernel without it says ENOSYS, and retry reads and writes instead.
 */
#if defined(__linux__)
#include <features.h>
#if !defined(__GLIBC__) || __GLIBC__ > 2 || \
    (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 27)
#define HAVE_COPY_FILE_RANGE	1
#endif
#endif

/*
 * REG_STARTEND: regexec(3) given where the string ends, so that a NUL in
 * it is a byte like any other.  glibc, the BSDs and macOS have it; musl
 * has not, and there a line is matched up to its first NUL.
 */
#if defined(__GLIBC__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
    defined(__NetBSD__) || defined(__APPLE__)
#define HAVE_REG_STARTEND	1
#endif

/*
 * pipe2(2) with O_CLOEXEC and O_NONBLOCK: glibc 2.9, musl, FreeBSD 10 (in
 * POSIX only since 2024).  Elsewhere pipe(2) and fcntl(2).
 */
#if defined(__linux__) || defined(__FreeBSD__)
#define HAVE_PIPE2	1
#endif

/* clock_nanosleep(2) (POSIX, with _POSIX_CLOCK_SELECTION): not on macOS. */
#if !defined(__APPLE__)
#define HAVE_CLOCK_NANOSLEEP	1
#endif

#endif
