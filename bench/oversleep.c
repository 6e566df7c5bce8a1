/* SPDX-License-Identifier: ISC */
/*
 * oversleep: the floor of sleep accuracy.  How late this machine wakes a
 * process that sleeps to an absolute CLOCK_MONOTONIC time, as retry's
 * delays end.
 */
#include "../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

/*
 * usage: oversleep ns count
 *
 * count times: sleeps until ns after now with clock_nanosleep(2)
 * (TIMER_ABSTIME), and prints how many ns after that time it woke.
 */
int
main(int argc, char *argv[])
{
	struct timespec ts;
	long long d, until;
	long count, i;
	int e;

	if (argc != 3) {
		(void)fprintf(stderr, "usage: oversleep ns count\n");
		return 2;
	}
	d = strtoll(argv[1], NULL, 10);
	count = strtol(argv[2], NULL, 10);
	for (i = 0; i < count; i++) {
		until = now_ns() + d;
		ts.tv_sec = (time_t)(until / 1000000000LL);
		ts.tv_nsec = (long)(until % 1000000000LL);
		while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
		    &ts, NULL)) == EINTR)
			continue;
		if (e != 0) {
			errno = e;
			die("clock_nanosleep");
		}
		(void)printf("%lld\n", now_ns() - until);
	}
	if (fflush(stdout) == EOF)
		die("stdout");
	return 0;
}
