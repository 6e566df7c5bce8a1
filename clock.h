/* SPDX-License-Identifier: ISC */
/*
 * The clocks: monotonic nanoseconds for every wait and limit, real time
 * for hints and reports.  A leaf: it asks no other part of retry.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

#define NS_PER_SEC	INT64_C(1000000000)
#define NEVER		INT64_MAX	/* a time that never comes */

int		 clock_check(void);
int64_t		 monotonic_now(void);
int64_t		 realtime_now(void);

#endif
