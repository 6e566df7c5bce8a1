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

#if defined(__APPLE__)
/* Strict mode hides O_NOFOLLOW, mkdtemp(), SIGWINCH and SIGIO. */
#define _DARWIN_C_SOURCE	1
#elif defined(__FreeBSD__)
/* _XOPEN_SOURCE leaves __BSD_VISIBLE undefined: SIGWINCH and SIGIO hide. */
#define __BSD_VISIBLE	1
#endif

#endif
