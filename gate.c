/* SPDX-License-Identifier: ISC */
/*
 * --circuit: the record that every run of a name shares, in the state
 * directory or on a --store, as a gate that answers the run loop.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "common.h"
#include "gate.h"
#include "shared.h"
#include "store.h"

static struct circuit	 circuit;	/* the record in the state directory */
static struct shared	*sh = &circuit.sh;	/* what each step says */
static int		 on_store;	/* --store: the steps go there */
static int		 off;	/* the store failed, --store-fail open */

/* ---- The two backends, one interface ------------------------------ */

/*
 * A step's answer s; for a busy lock, after proc.c's wait for it, which
 * keeps an attempt's stdio moving (circuit_lock_of()).
 */
static enum circuit_step
lock_wait(enum circuit_step s, int64_t until)
{
	const struct flock *lk;
	int fd;

	if (s != STEP_BUSY)
		return s;
	lk = circuit_lock_of(&circuit, &fd);
	return circuit_lock_waited(&circuit, proc_lock(fd, lk, until,
	    &circuit.sh.signal));
}

static enum circuit_step
step_admit(int64_t until, const struct admit_ask *a, enum admission *v,
    int64_t *wait)
{
	enum circuit_step s;

	if (on_store)
		return store_admit(sh, until, a, v, wait);
	while ((s = lock_wait(circuit_admit(&circuit, a, v, wait), until)) ==
	    STEP_BUSY)
		continue;
	return s;
}

static enum circuit_step
step_result(int64_t until, int success, const struct breaker *b, double u)
{
	enum circuit_step s;

	if (on_store)
		return store_result(sh, until, success, b, u);
	while ((s = lock_wait(circuit_result(&circuit, success, b, u),
	    until)) == STEP_BUSY)
		continue;
	return s;
}

static enum circuit_step
step_run_ended(int64_t until, enum run_kind kind)
{
	enum circuit_step s;

	if (on_store)
		return store_run_ended(sh, until, kind);
	while ((s = lock_wait(circuit_run_ended(&circuit, kind), until)) ==
	    STEP_BUSY)
		continue;
	return s;
}

static enum circuit_step
step_reset(void)
{
	enum circuit_step s;

	if (on_store)
		return store_reset(sh);
	while ((s = lock_wait(circuit_reset(&circuit), NEVER)) == STEP_BUSY)
		continue;
	return s;
}

static enum circuit_step
step_view(struct circuit_view *v)
{
	return on_store ? store_view(sh, v) : circuit_view(&circuit, v);
}

/*
 * How often the probe's lease must be renewed while its attempt runs: on
 * a store, while this run holds the probe; else 0 (a lock needs none).
 */
static int64_t
lease(void)
{
	return on_store && sh->probing ? STORE_RENEW_NS : 0;
}

/* ---- The gate ----------------------------------------------------- */

/*
 * RETRY_STORE, for a run with a circuit or a job whose command line gives no
 * --store; empty is unset.  A bad one is a usage error, its password
 * masked.
 */
void
gate_store_from_environment(struct policy *p)
{
	const char *url = getenv("RETRY_STORE");
	char err[MSGMAX];

	if (p->store.given || (p->circuit == NULL && p->job == NULL &&
	    p->circuit_command != CIRCUIT_LIST) || url == NULL || *url == '\0')
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
			fatalx("%s", sh->err);
		return;
	}
	/* No state directory is opened, nothing is sent yet. */
	memset(sh, 0, sizeof(*sh));
	sh->name = p->circuit;
	on_store = 1;
	store_open(sh, &p->store, p->store_timeout);
	if (p->circuit == NULL)		/* --circuit-list */
		return;
	detail("circuit %s: store %s, %s a step at most, --store-fail %s",
	    p->circuit, p->store.shown, fmt_duration(d, sizeof(d),
	    p->store_timeout), p->store_closed ? "closed" : "open");
}

/* Before the first attempt of a run with --circuit. */
void
gate_open(const struct policy *p)
{
	if (p->circuit != NULL)
		open_circuit(p, 0);
}

static struct gate
go(void)
{
	struct gate g = { GATE_GO, WAIT_BACKOFF, 0, RUNNING, 0, 0, NULL,
	    TURN_NONE, 0 };

	return g;
}

static struct gate
end(enum outcome why, int signal)
{
	struct gate g = go();

	g.kind = GATE_END;
	g.end = why;
	g.signal = signal;
	return g;
}

/*
 * The store failed.  Credentials or rights refused at its first step are
 * a mistake that no waiting mends: one line, 125, nothing run.  Else,
 * with --store-fail closed the run ends (75) before its next attempt;
 * open, it goes on as if it had no circuit, said once.
 */
static struct gate
store_failed(const struct policy *p)
{
	struct gate g;

	if (sh->denied)
		fatalx("%s", sh->err);
	g = p->store_closed ? end(STORE_DOWN, 0) : go();
	g.store_failed = sh->err;
	if (!p->store_closed && !off)
		warningx("%s; going on without circuit %s", sh->err,
		    p->circuit);
	off = off || !p->store_closed;
	return g;
}

/*
 * What a step of the shared record came to: done (go), a wait for it cut
 * short by the deadline or a signal, or a failure of retry's own (125),
 * or of the store.  A corrupt record that the step replaced is said once.
 */
static struct gate
step_answer(const struct policy *p, enum circuit_step s)
{
	static int said;

	/* As redis-cli: REDISCLI_AUTH may be meant for another server. */
	if (sh->unwanted_password && !said)
		detail("store %s: the server has no password; going on without "
		    "one", p->store.shown);
	said = said || sh->unwanted_password;
	if (sh->corrupt) {
		sh->corrupt = 0;
		say("circuit %s: the record was corrupt; it starts afresh",
		    p->circuit);
	}
	switch (s) {
	case STEP_DONE:
	case STEP_BUSY:		/* lock_wait() takes it: never here */
		break;
	case STEP_TIMEOUT:
		return end(DEADLINE, 0);
	case STEP_SIGNAL:
		return end(INTERRUPTED, sh->signal);
	case STEP_FAILED:
		fatalx("%s", sh->err);
	case STEP_STORE:
		return store_failed(p);
	}
	return go();
}

/* A wait of wait ns for reason, that ends the run with why if it passes the deadline. */
static struct gate
wait_for(enum wait_reason reason, int64_t wait, enum outcome why)
{
	struct gate g = go();

	g.kind = GATE_WAIT;
	g.reason = reason;
	g.wait = wait;
	g.end = why;
	return g;
}

/*
 * The probe was taken over from a run that is gone: the group of its
 * attempt, if it ran here, is what a run killed with SIGKILL leaves (its
 * leader alone dies with it, where the system allows), and would probe
 * beside this run's.  Ended first, outside the lock, before this run's
 * attempt starts: the probe keeps the others out meanwhile.
 */
static void
end_left_group(int64_t until)
{
	struct group_end g;

	sh->taken_from = 0;
	sh->end_error = 0;
	if (on_store || circuit.left.pgid == 0)
		return;
	if (proc_end_group(&circuit.left, until, &g) == -1)
		sh->end_error = errno;
	memset(&circuit.left, 0, sizeof(circuit.left));
	if (sh->end_error == 0 && g.ended == 0)
		return;
	sh->taken_from = circuit.left_by;
	sh->ended = sh->end_error == 0 ? g.ended : 0;
	sh->left = sh->end_error == 0 ? g.left : 0;
}

/*
 * The probe was taken over from a run that is gone, and what its attempt
 * left here was ended: said, since it kills processes.
 */
static void
say_taken_over(const struct policy *p)
{
	if (sh->taken_from == 0)
		return;
	if (sh->end_error != 0)
		warningx("circuit %s: process %ld, its probe, is gone; cannot "
		    "end what its attempt left: %s", p->circuit, sh->taken_from,
		    strerror(sh->end_error));
	else if (sh->left > 0)
		say("circuit %s: process %ld, its probe, is gone; sent SIGKILL "
		    "to the %ld process%s its attempt left, %ld not gone yet",
		    p->circuit, sh->taken_from, sh->ended, sh->ended == 1 ? "" :
		    "es", sh->left);
	else
		say("circuit %s: process %ld, its probe, is gone; ended the "
		    "%ld process%s its attempt left", p->circuit,
		    sh->taken_from, sh->ended, sh->ended == 1 ? "" : "es");
	sh->taken_from = 0;
}

/*
 * With --circuit, before an attempt (a retry when retrying): go, or wait
 * while the circuit is open, while another run probes it (50-150 ms,
 * apart from the others), or, for a retry, until the shared budget has
 * room (jittered, so that the waiting runs do not all come back at once).
 * One step of the record says which; until bounds a wait for its lock.
 */
struct gate
gate_admit(const struct policy *p, int retrying, int64_t until,
    struct rng *aside)
{
	struct admit_ask a = { p->budget, p->budget_share, p->budget_min,
	    p->budget_window, retrying };
	struct gate g;
	enum admission v;
	int64_t wait;

	if (p->circuit == NULL || off)
		return go();
	g = step_answer(p, step_admit(until, &a, &v, &wait));
	end_left_group(until);
	say_taken_over(p);
	if (g.kind != GATE_GO || g.store_failed != NULL)
		return g;
	switch (v) {
	case ADMIT_GO:
		break;
	case ADMIT_PROBE:
		g.probing = 1;
		break;
	case ADMIT_WAIT:
		if (wait != 0)
			return wait_for(WAIT_CIRCUIT_OPEN, wait, CIRCUIT_OPEN);
		return wait_for(WAIT_PROBE_ELSEWHERE, (int64_t)((0.05 + 0.1 *
		    rng_uniform(aside)) * (double)NS_PER_SEC), CIRCUIT_OPEN);
	case ADMIT_BUDGET:
		return wait_for(WAIT_BUDGET, wait + (int64_t)(rng_uniform(aside) *
		    0.1 * (double)p->budget_window), BUDGET_SPENT);
	}
	return g;
}

/*
 * While the probe's attempt runs on a store: its lease, renewed, the step
 * done by until, when the attempt's watch must act (its limit), whatever
 * --store-timeout says.  What goes wrong is kept in the circuit, for the
 * next step to tell.
 */
static void
renew_lease(int64_t until)
{
	if (lease() == 0)
		return;		/* lost before, or the store failed */
	if (store_renew(sh, until) == STEP_DONE && lease() == 0)
		detail("circuit %s: another run has taken the probe over",
		    sh->name);
}

/*
 * The probe's attempt has started: its group goes into the record (not
 * on a store, whose lease has its own end), by until, where the system
 * can mark it (Linux).  Returns a signal that came while the record was
 * locked, for the watch to forward.  A record that cannot be written is
 * retry's own failure, as in any step.
 */
static int
note_group(long pgid, int64_t until)
{
	struct group_mark m;
	enum circuit_step s;

	if (!sh->probing || proc_mark_group(pgid, &m) == -1)
		return 0;
	while ((s = lock_wait(circuit_probe_group(&circuit, &m), until)) ==
	    STEP_BUSY)
		continue;
	switch (s) {
	case STEP_DONE:
	case STEP_BUSY:
		break;
	case STEP_SIGNAL:
		return sh->signal;
	case STEP_TIMEOUT:
		detail("circuit %s: the probe's process group was not recorded "
		    "(the record stayed locked)", sh->name);
		break;
	case STEP_FAILED:
	case STEP_STORE:
		fatalx("%s", sh->err);
	}
	return 0;
}

/*
 * An attempt that probes a circuit on a store renews its lease meanwhile;
 * one that probes a record names its process group there as it starts.
 */
void
gate_lease_ticks(const struct policy *p, struct limit *lim)
{
	lim->tick = NULL;
	lim->tick_every = NEVER;
	lim->started = NULL;
	if (p->circuit != NULL && !off && !on_store && sh->probing)
		lim->started = note_group;
	if (p->circuit == NULL || off || lease() == 0)
		return;
	lim->tick = renew_lease;
	lim->tick_every = lease();
}

/*
 * With --circuit: the end of attempt n counts for every run of the name,
 * recorded by until (the deadline), or when that has passed (an attempt
 * stopped at it, or by a signal: until 0) within RESULT_GRACE_NS: the
 * lock of a record is held for microseconds, a store answers within one.
 * The answer is go, or the end that a signal or a failure made of the step.
 */
struct gate
gate_record(const struct policy *p, long n, enum counts c, int64_t until,
    struct rng *aside)
{
	int64_t grace = monotonic_now() + RESULT_GRACE_NS;
	struct breaker b;
	struct gate g;

	if (p->circuit == NULL || off || c == COUNTS_NOTHING)
		return go();
	if (until < grace)
		until = grace;
	b.trip = p->trip;
	b.ratio = p->trip_ratio;
	b.span = p->trip_span;
	b.cool = p->cool;
	b.cap = p->cap;
	g = step_answer(p, step_result(until, c == COUNTS_SUCCESS, &b,
	    rng_uniform(aside)));
	/*
	 * Closed, a store that failed here (or while the probe's lease was
	 * renewed) ends the run only before a next attempt: when there is
	 * none (a success, the last attempt), nothing else would say it.
	 */
	if (g.store_failed != NULL && p->store_closed)
		warningx("%s; the end of attempt %ld was not recorded "
		    "(--store-fail closed)", g.store_failed, n);
	else if (g.kind != GATE_GO)
		detail("circuit %s: the end of attempt %ld was not recorded",
		    p->circuit, n);
	else if (g.store_failed == NULL) {
		g.turned = sh->turned;
		g.failures = sh->failures;
	}
	return g;
}

/*
 * With --circuit, once the run has ended (kind), after an attempt at
 * least: kept for the flake count, bounded as gate_record() is, so that a
 * run stopped at its deadline or by a signal (until 0) is counted too.
 * The answer is go, or the end that a signal or a failure made of it.
 */
struct gate
gate_run_ended(const struct policy *p, enum run_kind kind, int64_t until)
{
	int64_t grace = monotonic_now() + RESULT_GRACE_NS;
	struct gate g;

	if (p->circuit == NULL || off)
		return go();
	if (until < grace)
		until = grace;
	g = step_answer(p, step_run_ended(until, kind));
	if (g.store_failed != NULL && p->store_closed)
		warningx("%s; the end of the run was not recorded "
		    "(--store-fail closed)", g.store_failed);
	else if (g.kind != GATE_GO)
		detail("circuit %s: the end of the run was not recorded",
		    p->circuit);
	return g;
}

/*
 * --circuit-status: the record, where it was read, and with --report the
 * same as JSON.  Exits as a run that met it would begin: 0 closed (no
 * record is a closed circuit), 75 open or half-open.
 */
static int
show_status(const struct policy *p)
{
	struct report rep;
	struct circuit_view v;
	int status;

	/* As for a run: a path that cannot take it is refused first. */
	if (p->report != NULL && report_open(&rep, p->report) == -1)
		fatalx("--report '%s': %s", p->report, strerror(errno));
	if (step_view(&v) != STEP_DONE)
		fatalx("%s", sh->err);
	v.on_store = on_store;
	breaker_count_runs(&v);
	status = v.state == CLOSED ? 0 : EXIT_TEMPFAIL;
	if (v.corrupt)
		warningx("circuit %s: the record is corrupt; the next run starts "
		    "it afresh", p->circuit);
	(void)circuit_print(stdout, p->circuit, &v);	/* close_stdout() checks */
	if (p->report != NULL && report_status(&rep, p->circuit, &v,
	    status) == -1)
		fatal("--report '%s'", p->report);
	return close_stdout() != 0 ? EXIT_OWN_FAILURE : status;
}

/*
 * --circuit-list: the names that have a record in the one place that a
 * status would read (the state directory, or the store's keys), sorted,
 * one a line.
 */
static int
list_names(void)
{
	struct names names;
	size_t i;
	int e;

	memset(&names, 0, sizeof(names));
	e = on_store ? store_list(sh, &names) != STEP_DONE :
	    circuit_list(&circuit, &names) == -1;
	if (e)
		fatalx("%s", sh->err);
	names_sort(&names);
	for (i = 0; i < names.n; i++)
		(void)printf("%s\n", names.v[i]);	/* close_stdout() checks */
	names_free(&names);
	return close_stdout();
}

/* --circuit-status, --circuit-list and --circuit-reset. */
int
gate_command(const struct policy *p)
{
	open_circuit(p, p->circuit_command != CIRCUIT_RESET);
	switch (p->circuit_command) {
	case CIRCUIT_RESET:
		if (step_reset() != STEP_DONE)
			fatalx("%s", sh->err);
		return 0;
	case CIRCUIT_LIST:
		return list_names();
	case CIRCUIT_STATUS:
	case CIRCUIT_RUN:
		break;
	}
	return show_status(p);
}
