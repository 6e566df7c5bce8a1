/* SPDX-License-Identifier: ISC */
/*
 * The delay schedule of retry: a random generator and the backoff with its
 * jitter.  No I/O, no global state, so that tests and fuzzers can drive it
 * directly.
 */
#ifndef BACKOFF_H
#define BACKOFF_H

#include <stdint.h>

#include "clock.h"

/* The longest duration, ~31.7 years: no overflow when added to a clock. */
#define DUR_MAX		(INT64_C(1000000000) * NS_PER_SEC)

enum jitter { JITTER_NONE, JITTER_FULL, JITTER_EQUAL, JITTER_DECORRELATED };

/* xoshiro256** state. */
struct rng {
	uint64_t s[4];
};

struct backoff {
	int64_t base, cap;	/* nanoseconds, 0 < base <= cap */
	double factor;		/* >= 1 */
	enum jitter jitter;
	double prev;		/* decorrelated: the previous delay, ns */
	double grown;		/* base x factor^(k-1) while not above cap */
	uint64_t failures;	/* k: failed attempts so far */
};

/* What lies behind one delay, for verbose messages. */
struct step {
	int64_t step;		/* b_k, or 3 x d_{k-1} for decorrelated */
	int64_t lo, hi;		/* the band the delay was drawn from */
	int64_t delay;
	int capped;		/* the cap cut the step */
};

void		 rng_seed(struct rng *, uint64_t);
uint64_t	 rng_next(struct rng *);
double		 rng_uniform(struct rng *);

void		 backoff_init(struct backoff *, int64_t, double, int64_t,
		    enum jitter);
int64_t		 backoff_next(struct backoff *, struct rng *, struct step *);

#endif
