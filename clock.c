/* SPDX-License-Identifier: ISC */
/*
 * The clocks, read in nanoseconds.  clock_check() is the one place a
 * clock's failure is reported; after it, reading can no longer fail.
 */
#include "compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

static int64_t
read_clock(clockid_t id)
{
	struct timespec ts;

	/*
	 * Only EINVAL (a clock the system lacks) or EFAULT can make it fail,
	 * and clock_check() has already asked both clocks once: a failure
	 * now is a broken libc, which no message of ours would help.
	 */
	if (clock_gettime(id, &ts) == -1)
		abort();
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* 0 when both clocks can be read, else -1 with errno. */
int
clock_check(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1 ||
	    clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return -1;
	return 0;
}

int64_t
monotonic_now(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t
realtime_now(void)
{
	return read_clock(CLOCK_REALTIME);
}
