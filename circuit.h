/* SPDX-License-Identifier: ISC */
/*
 * The circuit breaker and the retry budget that the runs of one NAME share
 * (--circuit NAME): a record per NAME, changed one step at a time under a
 * lock, each step a function of its own.
 */
#ifndef CIRCUIT_H
#define CIRCUIT_H

#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

struct store;
struct store_url;

#define BUDGET_MAX	1000	/* retries a window can count */

enum circuit_state { CLOSED, OPEN, HALF_OPEN };

/* How a step went. */
enum circuit_step {
	STEP_DONE,		/* done: its results are filled in */
	STEP_TIMEOUT,		/* the wait for the record reached until */
	STEP_SIGNAL,		/* a signal came while waiting: c->signal */
	STEP_FAILED,		/* the record cannot be used: c->err says why */
	STEP_STORE		/* --store failed: c->err says why, c->denied */
};

/* May an attempt start now? */
enum verdict {
	ADMIT_GO,		/* closed */
	ADMIT_PROBE,		/* half-open, and this run holds the probe */
	ADMIT_WAIT,		/* open: for wait ns; 0: another run probes */
	ADMIT_BUDGET		/* a retry, and the budget is spent: wait ns */
};

/* The breaker's settings, from the command line. */
struct breaker {
	long		 trip;		/* failures in a row that open it */
	int64_t		 cool;		/* first cool-down, doubled per opening */
	int64_t		 cap;		/* the cool-down's limit, with cool */
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
	int		 corrupt;	/* the record is corrupt (status only) */
	char		 probe_host[65];	/* --store: the probe's host */
};

struct circuit {
	const char	*name;
	char		 dir_path[PATH_MAX];	/* the state directory */
	int		 dir;		/* it, open */
	int		 lock;		/* .NAME.lock, open; -1: reading only */
	int		 record;	/* the record, open during a step, or -1 */
	off_t		 size;		/* its length when the step read it */
	int		 probing;	/* this run holds the probe */
	int		 corrupt;	/* it replaced a corrupt record, not said */
	int		 rewrite;	/* the record read was corrupt */
	int		 missing;	/* reading only: no state directory yet */
	int		 signal;	/* STEP_SIGNAL: the one that came */
	char		 err[PATH_MAX + 128];	/* STEP_FAILED, or open: why */
	struct store	*store;		/* --store: the steps go there */
	int		 denied;	/* STEP_STORE: refused at the first */
};

int		 circuit_open(struct circuit *, const char *, int);
void		 circuit_open_store(struct circuit *, const char *,
		    const struct store_url *, int64_t);
int64_t		 circuit_lease(const struct circuit *);
enum circuit_step	 circuit_renew(struct circuit *);
enum circuit_step	 circuit_admit(struct circuit *, int64_t, long, int64_t,
		    int, enum verdict *, int64_t *);
enum circuit_step	 circuit_result(struct circuit *, int64_t, int,
		    const struct breaker *, double);
enum circuit_step	 circuit_reset(struct circuit *);
enum circuit_step	 circuit_view(struct circuit *, struct circuit_view *);
int		 circuit_print(FILE *, const char *, const struct circuit_view *);

#endif
