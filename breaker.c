/* SPDX-License-Identifier: ISC */
/*
 * The rules of the circuit breaker and the retry budget, once: a state
 * and the time in, the new state and an answer out.  No I/O and no clock:
 * the backends (circuit.c's record, store.c's Redis) load a state, hand
 * it here, and store what comes back; how they keep the probe is theirs.
 */
#include "compat.h"	/* first: the feature macros */

#include <string.h>

#include "shared.h"

/* n + 1, but no more than COUNT_MAX. */
static long
count_up(long n)
{
	return n < COUNT_MAX ? n + 1 : n;
}

/* Open, or due to half-open: the one attempt that may start probes. */
int
breaker_wants_probe(const struct breaker_state *s, int64_t now)
{
	return s->state == HALF_OPEN ||
	    (s->state == OPEN && now >= s->half_open_at);
}

/*
 * --budget n/window: a retry now, if fewer than n were taken within the
 * window (returns 0), else how long until enough of the oldest leave it.
 */
static int64_t
take_retry(struct breaker_state *s, long n, int64_t window, int64_t now,
    int *changed)
{
	size_t old = 0, i;

	while (old < s->nretries && s->retries[old] <= now - window)
		old++;
	for (i = old; i < s->nretries; i++)
		s->retries[i - old] = s->retries[i];
	s->nretries -= old;
	if (old > 0)
		*changed = 1;
	if ((long)s->nretries >= n)	/* > 0: all within the window */
		return s->retries[s->nretries - (size_t)n] + window - now;
	/* Oldest first, even should the clock have gone back. */
	s->retries[s->nretries] = s->nretries > 0 &&
	    s->retries[s->nretries - 1] > now ? s->retries[s->nretries - 1] :
	    now;
	s->nretries++;
	*changed = 1;
	return 0;
}

/*
 * May an attempt start now?  Closed: go.  Open and cooling down: wait
 * until it half-opens.  Due or half-open: the run that got the probe
 * (got_probe, asked only when breaker_wants_probe()) goes, and the
 * circuit is half-open; the others wait for it.  A retry that may go
 * takes its place in the budget, or waits while the budget is spent
 * (ADMIT_BUDGET), without the probe: the backend gives it back, since a
 * probe held through that wait would hold back first attempts too, which
 * the budget never holds back.  The run's --budget is noted, for
 * --circuit-status.  *wait: how long, for ADMIT_WAIT (0: another run
 * probes) and ADMIT_BUDGET.
 */
enum admission
breaker_admit(struct breaker_state *s, const struct admit_ask *a,
    int got_probe, int64_t now, int64_t *wait, int *changed)
{
	enum admission v = ADMIT_GO;

	*wait = 0;
	if (a->budget != 0 && (s->budget != a->budget ||
	    s->window != a->window)) {
		s->budget = a->budget;
		s->window = a->window;
		*changed = 1;
	}
	if (s->state == OPEN && now < s->half_open_at) {
		*wait = s->half_open_at - now;
		return ADMIT_WAIT;
	}
	if (s->state != CLOSED && !got_probe)
		return ADMIT_WAIT;
	if (s->state != CLOSED)
		v = ADMIT_PROBE;
	if (a->retry && a->budget != 0 &&
	    (*wait = take_retry(s, a->budget, a->window, now, changed)) != 0)
		return ADMIT_BUDGET;
	if (v == ADMIT_PROBE && s->state != HALF_OPEN) {
		s->state = HALF_OPEN;
		*changed = 1;
	}
	return v;
}

/*
 * Opens the circuit, for a cool-down that doubles with each opening in a
 * row, up to the larger of the cap and the first cool-down, with equal
 * jitter (u uniform in [0, 1)).
 */
static void
open_circuit(struct breaker_state *s, const struct breaker *b, double u,
    int64_t now)
{
	double cool = (double)b->cool, limit;
	long k;

	limit = (double)(b->cap > b->cool ? b->cap : b->cool);
	s->openings = count_up(s->openings);
	for (k = 1; k < s->openings && cool < limit; k++)
		cool *= 2;
	if (cool > limit)
		cool = limit;
	cool = cool / 2 + u * cool / 2;
	s->state = OPEN;
	/* now is below 2^62 (Unix ns) until 2116, cool within DUR_MAX. */
	s->half_open_at = now + (int64_t)cool;
}

/*
 * How an attempt ended.  Any success closes the circuit and clears the
 * counts in a row; a failure counts, and opens the circuit when it is the
 * probe's, or the trip-th in a row while closed.  Returns whether the end
 * opened the circuit or closed it again.
 */
enum turn
breaker_result(struct breaker_state *s, const struct breaker *b,
    int success, int probing, double u, int64_t now, int *changed)
{
	enum turn t = TURN_NONE;

	if (success) {
		if (s->state == CLOSED && s->failures == 0 &&
		    s->openings == 0)
			return TURN_NONE;
		if (s->state != CLOSED)
			t = TURN_CLOSED;
		s->state = CLOSED;
		s->failures = s->openings = 0;
		s->half_open_at = 0;
	} else {
		s->failures = count_up(s->failures);
		if (probing || (s->state == CLOSED && s->failures >= b->trip)) {
			open_circuit(s, b, u, now);
			t = TURN_OPENED;
		}
	}
	*changed = 1;
	return t;
}

/* How a run ended, kept with the last RUNS_MAX: the oldest goes first. */
void
breaker_run_ended(struct breaker_state *s, enum run_kind kind)
{
	if (s->nruns == RUNS_MAX) {
		memmove(s->runs, s->runs + 1, RUNS_MAX - 1);
		s->nruns--;
	}
	s->runs[s->nruns++] = (char)kind;
	s->runs[s->nruns] = '\0';
}

/* The retries of the budget within the window that ends now. */
long
breaker_retries_within(const struct breaker_state *s, int64_t now)
{
	long n = 0;
	size_t i;

	for (i = 0; i < s->nretries; i++)
		n += s->retries[i] > now - s->window;
	return n;
}

/*
 * The runs that the state keeps, counted into the view, and the flake
 * rate: of the runs that passed, the share that needed a retry (-1 when
 * none passed).
 */
void
breaker_count_runs(struct circuit_view *v)
{
	const char *r;

	v->at_once = v->retried = v->failed = 0;
	for (r = v->runs; *r != '\0'; r++) {
		v->at_once += *r == RUN_AT_ONCE;
		v->retried += *r == RUN_RETRIED;
		v->failed += *r == RUN_FAILED;
	}
	v->flake_rate = v->at_once + v->retried == 0 ? -1 :
	    (double)v->retried / (double)(v->at_once + v->retried);
}
