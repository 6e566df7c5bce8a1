/* SPDX-License-Identifier: ISC */
/*
 * find.c: the first place of a fixed string in bytes, as memmem(3) finds
 * it, by a search planned once per string (match.c's prefilter).
 */
#ifndef FIND_H
#define FIND_H

#include <stddef.h>

#define LITMAX		64	/* bytes of a string, at most */

/* A fixed string and how find.c looks for it, planned by finder_init(). */
struct finder {
	size_t		 len;
	size_t		 rare;		/* where its rarest byte is */
	int		 skip;		/* 1: memchr(3) on that byte; 0: Horspool */
	unsigned char	 shift[256];	/* Horspool's, by the window's last pair */
	unsigned char	 shift1;	/* and past a near miss */
	char		 lit[LITMAX];
};

void		 finder_init(struct finder *, const char *, size_t);
const char	*finder_find(const struct finder *, const char *, size_t);

#endif
