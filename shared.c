/* SPDX-License-Identifier: ISC */
/*
 * --circuit: the record that every run of a name shares, in the state
 * directory or on a --store, as the run loop of retry.c meets it.
 */
#include "compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "circuit.h"
#include "msg.h"
#include "parse.h"
#include "run.h"
#include "url.h"

static struct circuit	 circuit;

/*
 * RETRY_STORE, for a run with a circuit whose command line gives no
 * --store; empty is unset.  A bad one is a usage error, its password
 * masked.
 */
void
store_from_environment(struct policy *p)
{
	const char *url = getenv("RETRY_STORE");
	char err[MSGMAX];

	if (p->store.given || p->circuit == NULL || url == NULL || *url == '\0')
		return;
	if (url_check("RETRY_STORE", url, &p->store, err, sizeof(err)) == -1)
		fatalx("%s", err);
}

/* The shared state of --circuit: on the store, else in the state directory. */
static void
open_circuit(const struct policy *p, int reading_only)
{
	char d[32];

	if (!p->store.given) {
		if (circuit_open(&circuit, p->circuit, reading_only) == -1)
			fatalx("%s", circuit.err);
		return;
	}
	circuit_open_store(&circuit, p->circuit, &p->store, p->store_timeout);
	detail("circuit %s: store %s, %s a step at most, --store-fail %s",
	    p->circuit, p->store.shown, fmt_duration(d, sizeof(d),
	    p->store_timeout), p->store_closed ? "closed" : "open");
}

/* Before the first attempt of a run with --circuit. */
void
join_circuit(const struct policy *p)
{
	if (p->circuit != NULL)
		open_circuit(p, 0);
}

/*
 * The store failed.  Credentials or rights refused at its first step are
 * a mistake that no waiting mends: one line, 125, nothing run.  Else,
 * with --store-fail closed the run ends (75) before its next attempt;
 * open, it goes on as if it had no circuit, said once.
 */
static enum outcome
store_failed(const struct policy *p, struct run *r)
{
	if (circuit.denied)
		fatalx("%s", circuit.err);
	r->store_down = 1;
	r->store_err = circuit.err;
	if (p->store_closed)
		return STORE_DOWN;
	if (!r->circuit_off)
		warningx("%s; going on without circuit %s", circuit.err,
		    p->circuit);
	r->circuit_off = 1;
	return RUNNING;
}

/*
 * What a step of the shared record came to, for the run: a wait for it cut
 * short by the deadline or a signal, or a failure of retry's own (125),
 * or of the store.  A corrupt record that the step replaced is said once.
 */
static enum outcome
step_outcome(const struct policy *p, struct run *r, enum circuit_step s)
{
	if (circuit.corrupt) {
		circuit.corrupt = 0;
		say("circuit %s: the record was corrupt; it starts afresh",
		    p->circuit);
	}
	switch (s) {
	case STEP_DONE:
		break;
	case STEP_TIMEOUT:
		return DEADLINE;
	case STEP_SIGNAL:
		r->interrupt = circuit.signal;
		return INTERRUPTED;
	case STEP_FAILED:
		fatalx("%s", circuit.err);
	case STEP_STORE:
		return store_failed(p, r);
	}
	return RUNNING;
}

/* The wait for another run's probe: 50-150 ms, apart from the others'. */
static int64_t
probe_wait(struct run *r)
{
	return (int64_t)((0.05 + 0.1 * rng_uniform(&r->aside)) *
	    (double)NS_PER_SEC);
}

/* While the circuit is open or another run probes it. */
static enum outcome
wait_while_open(const struct policy *p, struct run *r, int64_t wait,
    int *told)
{
	char d[32];

	if (wait == 0 && !(*told)++)
		detail("circuit %s is half-open; another run probes it",
		    p->circuit);
	else if (wait != 0)
		detail("circuit %s is open; waiting %ss", p->circuit,
		    fmt_seconds(d, sizeof(d), 0, wait));
	if (wait == 0)
		wait = probe_wait(r);
	return pause_until(r, monotonic_now() + wait, CIRCUIT_OPEN);
}

/*
 * With --circuit, before an attempt: wait while the circuit is open or
 * another run probes it, and for a retry, wait for the shared budget
 * (one step of the record says both).
 */
enum outcome
wait_for_circuit(const struct policy *p, struct run *r)
{
	char d[32];
	enum verdict v;
	enum outcome o;
	int64_t wait;
	int told = 0;

	while (p->circuit != NULL && !r->circuit_off) {
		if ((o = step_outcome(p, r, circuit_admit(&circuit, r->deadline,
		    p->budget, p->budget_window, r->attempt > 0, &v, &wait))) !=
		    RUNNING || r->circuit_off)
			return o;
		if (v == ADMIT_WAIT) {
			if ((o = wait_while_open(p, r, wait, &told)) != RUNNING)
				return o;
			continue;
		}
		if (v != ADMIT_BUDGET)
			return RUNNING;
		/* Jittered, so that the waiting runs do not all come back at once. */
		wait += (int64_t)(rng_uniform(&r->aside) * 0.1 *
		    (double)p->budget_window);
		detail("retry budget of circuit %s spent; waiting %ss",
		    p->circuit, fmt_seconds(d, sizeof(d), 0, wait));
		if ((o = pause_until(r, monotonic_now() + wait, BUDGET_SPENT)) !=
		    RUNNING)
			return o;
	}
	return RUNNING;
}

/*
 * While the probe's attempt runs on a store: its lease, renewed.  What
 * goes wrong is kept in the circuit, for the next step to tell.
 */
static void
renew_lease(void)
{
	if (circuit_lease(&circuit) == 0)
		return;		/* lost before, or the store failed */
	if (circuit_renew(&circuit) == STEP_DONE && circuit_lease(&circuit) == 0)
		detail("circuit %s: another run has taken the probe over",
		    circuit.name);
}

/* An attempt that probes a circuit on a store renews its lease meanwhile. */
void
lease_ticks(const struct policy *p, const struct run *r, struct limit *lim)
{
	lim->tick = NULL;
	lim->tick_every = NEVER;
	if (p->circuit == NULL || r->circuit_off || circuit_lease(&circuit) == 0)
		return;
	lim->tick = renew_lease;
	lim->tick_every = circuit_lease(&circuit);
}

/* With --circuit: the attempt's end counts for every run of the name. */
void
tell_circuit(const struct policy *p, struct run *r)
{
	struct breaker b;
	int success;

	if (p->circuit == NULL || r->circuit_off)
		return;
	success = r->end.error == 0 && r->status == 0 && !r->on_hit &&
	    !r->stop_hit;
	if (!success && !retryable(p, r))
		return;		/* not the downstream's failure */
	b.trip = p->trip;
	b.cool = p->cool;
	b.cap = p->cap;
	/* Interrupted: the run ends now, not after a wait for the lock. */
	if (step_outcome(p, r, circuit_result(&circuit, r->interrupt != 0 ?
	    0 : r->deadline, success, &b, rng_uniform(&r->aside))) != RUNNING)
		detail("circuit %s: the end of attempt %ld was not recorded",
		    p->circuit, r->attempt);
}

/* --circuit-status and --circuit-reset. */
int
circuit_command(const struct policy *p)
{
	struct circuit_view v;

	open_circuit(p, p->circuit_command == CIRCUIT_STATUS);
	if (p->circuit_command == CIRCUIT_RESET) {
		if (circuit_reset(&circuit) != STEP_DONE)
			fatalx("%s", circuit.err);
		return 0;
	}
	if (circuit_view(&circuit, &v) != STEP_DONE)
		fatalx("%s", circuit.err);
	if (v.corrupt)
		warningx("circuit %s: the record is corrupt; the next run starts "
		    "it afresh", p->circuit);
	(void)circuit_print(stdout, p->circuit, &v);	/* close_stdout() checks */
	return close_stdout();
}
