/* SPDX-License-Identifier: ISC */
/*
 * A run of the command: the facts of how it is going, which retry.c's
 * loop keeps and its listeners read (see event.h).
 */
#ifndef RUN_H
#define RUN_H

#include <stdint.h>

#include "backoff.h"
#include "options.h"
#include "outcome.h"
#include "proc.h"

enum timed_out { NOT_TIMED_OUT, TIMED_OUT, AT_DEADLINE };
/* Where the deadline passed once a delay had begun, if it did. */
enum late { ON_TIME, LATE_IN_HOOK, LATE_BEFORE_ATTEMPT };

/* How the run is going. */
struct run {
	int64_t		 start, deadline;	/* monotonic ns; NEVER: none */
	int64_t		 start_real;		/* the start, as real time */
	int64_t		 writes_until;		/* a stalled reader of retry's own
					   output is waited for until then */
	const char	*key;			/* the idempotency key */
	int		 holding;		/* -Q holds the output */
	struct backoff	 backoff;
	struct rng	 rng;			/* the schedule's draws */
	struct rng	 aside;			/* all other draws */
	long		 attempt;		/* in the schedule: 1, 2, ... */
	long		 attempts;		/* in the run, resets or not */
	int		 reset;			/* the last ran --reset-after */
	struct ending	 end;			/* what came of the last one */
	enum timed_out	 timed_out;
	int		 status;		/* its status, as reported */
	int		 on_hit, stop_hit;	/* its output matched */
	int64_t		 out_bytes;		/* it put on stdout (not a tty) */
	int		 input_cut;		/* stdin passed input_kept */
	int64_t		 input_kept;		/* bytes of stdin kept to replay */
	int		 input_error;		/* why no more: errno, or 0 */
	int		 input_unkept;		/* no room for the copy: errno */
	int		 output_unheld;		/* none for -O's file: errno */
	int64_t		 input_unread;		/* taken of stdin, read by none */
	int		 interrupt;		/* a signal retry itself got */
	int64_t		 began, ended;		/* the last attempt's */
	int64_t		 delay, asleep;
	enum late	 late;			/* DEADLINE though the delay fit */
	int		 from_hint;		/* the delay came from a hint */
	int		 store_down;		/* --store failed */
	const char	*store_err;		/* how */
	enum outcome	 why;
};

#endif
