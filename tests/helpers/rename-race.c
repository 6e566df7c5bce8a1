/* SPDX-License-Identifier: ISC */
/*
 * rename-race DIR LINK NAME MS: for MS milliseconds, puts the directory DIR and
 * the symbolic link LINK in turn at NAME (rename(2), each in one step),
 * as fast as it can: an attacker racing retry between a check of NAME and
 * a use of it.  Prints how many swaps it made.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long
now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1) {
		perror("rename-race: clock_gettime");
		exit(1);
	}
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* from to: rename, and give up loudly on anything but a lost race. */
static void
move(const char *from, const char *to)
{
	/* A run made or took the name first: ENOENT, EISDIR, ENOTDIR... */
	if (rename(from, to) == -1 && errno != ENOENT && errno != EISDIR &&
	    errno != ENOTDIR && errno != ENOTEMPTY && errno != EEXIST) {
		(void)fprintf(stderr, "rename-race: %s -> %s: %s\n", from, to,
		    strerror(errno));
		exit(1);
	}
}

int
main(int argc, char *argv[])
{
	long until, swaps = 0;

	if (argc != 5) {
		(void)fprintf(stderr, "usage: rename-race dir link name ms\n");
		return 2;
	}
	until = now_ms() + strtol(argv[4], NULL, 10);
	while (now_ms() < until) {
		move(argv[1], argv[3]);		/* the real directory */
		move(argv[3], argv[1]);
		move(argv[2], argv[3]);		/* the link to the victim */
		move(argv[3], argv[2]);
		swaps++;
	}
	(void)printf("%ld\n", swaps);
	return ferror(stdout) || fclose(stdout) == EOF;
}
