/* SPDX-License-Identifier: ISC */
/*
 * clock-now [-r] [-n | -s]: prints the time now, in place of GNU date's
 * %N: milliseconds on the monotonic clock; -r the real clock (Unix time),
 * -n nanoseconds instead, -s seconds with nine decimals.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct timespec ts;
	clockid_t id = CLOCK_MONOTONIC;
	int c, unit = 'm';

	while ((c = getopt(argc, argv, "nrs")) != -1)
		switch (c) {
		case 'r':
			id = CLOCK_REALTIME;
			break;
		case 'n':
		case 's':
			unit = c;
			break;
		default:
			(void)fprintf(stderr,
			    "usage: clock-now [-r] [-n | -s]\n");
			return 2;
		}
	if (optind != argc || clock_gettime(id, &ts) == -1) {
		(void)fprintf(stderr, "usage: clock-now [-r] [-n | -s]\n");
		return 2;
	}
	if (unit == 'n')
		c = printf("%lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	else if (unit == 's')
		c = printf("%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	else
		c = printf("%lld\n", (long long)ts.tv_sec * 1000 +
		    ts.tv_nsec / 1000000);
	return c < 0 || fflush(stdout) == EOF;
}
