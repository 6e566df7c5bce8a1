/* SPDX-License-Identifier: ISC */
/*
 * A run of the command: how it is going and why it ends.  retry.c runs
 * it; words.c tells it; shared.c keeps its circuit with other runs.
 */
#ifndef RUN_H
#define RUN_H

#include <stdint.h>

#include "backoff.h"
#include "options.h"
#include "proc.h"

#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the circuit stays open */
#define EXIT_TIMEDOUT	124
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

enum timed_out { NOT_TIMED_OUT, TIMED_OUT, AT_DEADLINE };

/* Why the run ends; RUNNING while it does not. */
enum outcome {
	RUNNING, SUCCEEDED, NOT_RETRYABLE, EXHAUSTED, DEADLINE, INTERRUPTED,
	CANNOT_RUN, OUTPUT_STOP, CIRCUIT_OPEN, BUDGET_SPENT, READER_GONE,
	STORE_DOWN
};

/* How the run is going. */
struct run {
	int64_t		 start, deadline;	/* monotonic ns; NEVER: none */
	struct backoff	 backoff;
	struct rng	 rng;			/* the schedule's draws */
	struct rng	 aside;			/* all other draws */
	long		 attempt;
	struct ending	 end;			/* what came of the last one */
	enum timed_out	 timed_out;
	int		 status;		/* its status, as reported */
	int		 on_hit, stop_hit;	/* its output matched */
	int		 interrupt;		/* a signal retry itself got */
	int64_t		 began, ended;		/* the last attempt's */
	int64_t		 delay, asleep;
	int		 from_hint;		/* the delay came from a hint */
	long		 recorded;		/* attempts in the report */
	int		 store_down;		/* --store failed */
	const char	*store_err;		/* how */
	int		 circuit_off;		/* so, --store-fail open: none */
	enum outcome	 why;
};

/* retry.c */
enum outcome	 pause_until(struct run *, int64_t, enum outcome);
int		 retryable(const struct policy *, const struct run *);

/* shared.c: --circuit and --store */
void		 store_from_environment(struct policy *);
void		 join_circuit(const struct policy *);
enum outcome	 wait_for_circuit(const struct policy *, struct run *);
void		 lease_ticks(const struct policy *, const struct run *,
		    struct limit *);
void		 tell_circuit(const struct policy *, struct run *);
int		 circuit_command(const struct policy *);

/* words.c: what the run says */
void		 say_policy(const struct policy *, const struct run *);
void		 say_retry(const struct policy *, const struct run *,
		    const struct step *, const char *);
void		 say_end(const struct policy *, const struct run *);
const char	*outcome_key(enum outcome);

#endif
