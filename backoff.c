/* SPDX-License-Identifier: ISC */
/*
 * The delay schedule of retry: the random generator and the backoff with
 * its jitter.  Pure functions of their arguments: everything here can be
 * tested and fuzzed in isolation.
 */
#include "compat.h"	/* first: the feature macros */

#include <stddef.h>
#include <stdint.h>

#include "common.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Spreads one 64-bit seed over the whole state, as xoshiro's authors advise. */
void
rng_seed(struct rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** by Blackman and Vigna. */
uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1), from the top 53 bits: every double equally spaced. */
double
rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

void
backoff_init(struct backoff *b, int64_t base, double factor, int64_t cap,
    enum jitter jitter)
{
	b->base = base;
	b->factor = factor;
	b->cap = cap;
	b->jitter = jitter;
	b->prev = (double)base;
	b->grown = (double)base;
	b->failures = 0;
}

/*
 * min(cap, base x factor^(k-1)), kept as a running product: once it
 * passes the cap it stops growing, so no k or factor, however large, can
 * overflow it, and no pow() (nor libm, which costs start-up) is needed.
 */
static double
exponential_step(struct backoff *b, int *capped)
{
	double cap = (double)b->cap;

	if (b->failures > 1 && b->grown <= cap)
		b->grown *= b->factor;
	*capped = b->grown > cap;
	return *capped ? cap : b->grown;
}

/*
 * The delay after one more failed attempt, in nanoseconds, never above the
 * cap; *st (if not NULL) says how it was drawn.
 */
int64_t
backoff_next(struct backoff *b, struct rng *r, struct step *st)
{
	double lo, hi, step, d, cap = (double)b->cap;
	int capped;

	b->failures++;
	if (b->jitter == JITTER_DECORRELATED) {
		lo = (double)b->base;
		step = hi = 3 * b->prev;
		d = lo + rng_uniform(r) * (hi - lo);
		capped = d > cap;
		if (capped)
			d = cap;
		b->prev = d;
	} else {
		step = hi = exponential_step(b, &capped);
		if (b->jitter == JITTER_NONE)
			lo = hi;
		else if (b->jitter == JITTER_FULL)
			lo = 0;
		else
			lo = hi / 2;
		d = lo + rng_uniform(r) * (hi - lo);
	}
	if (d > cap)
		d = cap;
	if (st != NULL) {
		st->step = (int64_t)step;	/* at most 3 x cap: it fits */
		st->lo = (int64_t)lo;
		st->hi = (int64_t)hi;
		st->delay = (int64_t)d;
		st->capped = capped;
	}
	return (int64_t)d;
}
