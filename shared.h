/* SPDX-License-Identifier: ISC */
/*
 * The boundary of the shared state of --circuit NAME: what a step of
 * either backend (the record in the state directory, circuit.c, or the
 * Redis store, store.c) answers, in the same words, and the rules that
 * change the state (breaker.c).  gate.c picks the backend; neither
 * backend knows the other or the gate.
 */
#ifndef SHARED_H
#define SHARED_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define BUDGET_MAX	1000	/* retries a window can count */
#define SHARE_MAX	1000	/* P of --budget P%/DUR */
#define FIRSTS_MAX	16	/* parts of a window that count first attempts */
#define FIRSTS_PARTS	10	/* parts of a window, in the rules */
#define MARKS_MAX	100	/* attempts that --trip P%/M looks back on */
#define SPAN_MIN	5	/* M of --trip P%/M, at least */
#define COUNT_MAX	INT_MAX	/* a count in a row stops growing here */
#define RESULT_GRACE_NS	INT64_C(100000000)	/* recording past the deadline */

enum circuit_state { CLOSED, OPEN, HALF_OPEN };

/* How a step went. */
enum circuit_step {
	STEP_DONE,		/* done: its results are filled in */
	STEP_TIMEOUT,		/* the wait for the record reached until */
	STEP_SIGNAL,		/* a signal came while waiting: c->signal */
	STEP_FAILED,		/* the record cannot be used: c->err says why */
	STEP_STORE,		/* --store failed: c->err says why, c->denied */
	STEP_BUSY		/* the record: another run holds its lock */
};

/* May an attempt start now? */
enum admission {
	ADMIT_GO,		/* closed */
	ADMIT_PROBE,		/* half-open, and this run holds the probe */
	ADMIT_WAIT,		/* open: for wait ns; 0: another run probes */
	ADMIT_BUDGET		/* a retry, and the budget is spent: wait ns */
};

/* The breaker's settings, from the command line. */
struct breaker {
	long		 trip;		/* failures in a row that open it */
	long		 ratio;		/* or P of --trip P%/M, 0: none */
	long		 span;		/* and its M */
	int64_t		 cool;		/* first cool-down, doubled per opening */
	int64_t		 cap;		/* the cool-down's limit, with cool */
};

/* What an attempt's end did to the circuit (a result step). */
enum turn {
	TURN_NONE,
	TURN_OPENED,		/* it opened: shared.failures (in a row, or
				   of the last M with --trip P%/M) */
	TURN_CLOSED		/* it closed again, open or half-open before */
};

/* How a run ended, as the record keeps it: its letter in "runs". */
enum run_kind {
	RUN_AT_ONCE = 'p',	/* passed at its first attempt */
	RUN_RETRIED = 'r',	/* passed after retries */
	RUN_FAILED = 'f'	/* ran and did not pass */
};

#define RUNS_MAX	100	/* runs the record keeps, the last ones */

/*
 * The state of a name that the rules read and change (breaker.c), as a
 * backend loads and stores it.  Times are a backend's clock in ns.
 */
struct breaker_state {
	enum circuit_state state;
	long		 failures;	/* failed attempts in a row */
	long		 openings;	/* openings in a row */
	int64_t		 half_open_at;	/* while open */
	long		 budget;	/* N of the last --budget N/DUR */
	int64_t		 window;	/* its window, or a --budget P%/DUR's */
	long		 share;		/* P of the last --budget P%/DUR */
	long		 least;		/* and its --budget-min */
	long		 ratio;		/* P of the last --trip P%/M */
	long		 span;		/* and its M */
	size_t		 nretries;
	int64_t		 retries[BUDGET_MAX];	/* oldest first */
	size_t		 nfirsts;	/* parts of the window, oldest first: */
	int64_t		 first_at[FIRSTS_MAX];	/* where each begins */
	long		 first_n[FIRSTS_MAX];	/* first attempts in it */
	size_t		 nmarks;
	char		 marks[MARKS_MAX + 1];	/* 1 failed, 0 not, per attempt
					   of --trip P%/M, oldest first */
	size_t		 nruns;
	char		 runs[RUNS_MAX + 1];	/* p, r or f per run, oldest first */
};

/* What a run asks before an attempt. */
struct admit_ask {
	long		 budget;	/* --budget N/DUR's N, or 0 */
	long		 share;		/* --budget P%/DUR's P, or 0 */
	long		 least;		/* its --budget-min */
	int64_t		 window;	/* either's window */
	int		 retry;		/* the attempt is a retry */
};

/* What --circuit-status shows. */
struct circuit_view {
	enum circuit_state state;
	long		 failures, openings;
	int64_t		 half_opens_in;	/* ns from now, while open; <= 0: due */
	long		 probe;		/* the probing process, while half-open */
	long		 budget;	/* N of the last --budget, or 0 */
	int64_t		 window;	/* its window */
	long		 retries;	/* retries made in the last window */
	long		 share, least;	/* P and --budget-min of the last
					   --budget P%/DUR, or 0 */
	long		 allowed;	/* the retries they allow now */
	long		 arrived;	/* first attempts in the last window */
	long		 ratio, span;	/* P and M of the last --trip P%/M */
	long		 seen;		/* attempts of those kept, at most 100 */
	long		 failing;	/* of the last M of them, failed */
	int		 corrupt;	/* the record is corrupt (status only) */
	char		 probe_host[65];	/* --store: the probe's host */
	int		 found;		/* there is a record of the name */
	const char	*place;		/* where: the state directory, the URL */
	char		 runs[RUNS_MAX + 1];	/* the last runs' letters, oldest first */
	int		 on_store;	/* place is the store's URL */
	long		 at_once, retried, failed;	/* of runs: the gate counts */
	double		 flake_rate;	/* retried / passed, or -1: none passed */
};

/* What a step says besides its result, whichever backend took it. */
struct shared {
	const char	*name;
	int		 probing;	/* this run holds the probe */
	int		 corrupt;	/* it replaced a corrupt record, not said */
	int		 signal;	/* STEP_SIGNAL: the one that came */
	int		 denied;	/* STEP_STORE: refused at the first */
	int		 unwanted_password;	/* the store has none: unsent */
	enum turn	 turned;	/* a result step: what it did */
	long		 failures;	/* TURN_OPENED: after this many */
	long		 taken_from;	/* an admit step took the probe of this
					 * process, gone, and ended its attempt's
					 * leftovers (the record only), or 0 */
	long		 ended, left;	/* taken_from: processes sent SIGKILL,
					 * and of them not gone after the wait */
	int		 end_error;	/* taken_from: why none was sent, or 0 */
	char		 err[PATH_MAX + 128];	/* STEP_FAILED, STEP_STORE: why */
};

int		 breaker_wants_probe(const struct breaker_state *, int64_t);
enum admission	 breaker_admit(struct breaker_state *,
		    const struct admit_ask *, int, int64_t, int64_t *, int *);
enum turn	 breaker_result(struct breaker_state *, const struct breaker *,
		    int, int, double, int64_t, long *, int *);
void		 breaker_run_ended(struct breaker_state *, enum run_kind);
void		 breaker_view(const struct breaker_state *, int64_t,
		    struct circuit_view *);
void		 breaker_count_runs(struct circuit_view *);
size_t		 breaker_lua(char *, size_t);

#endif
