/* SPDX-License-Identifier: ISC */
/*
 * How a run ends: the outcomes, and the one table that gives each its
 * words, its report key and its exit-status rule.
 */
#ifndef OUTCOME_H
#define OUTCOME_H

#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the circuit stays open */
#define EXIT_TIMEDOUT	124
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

/*
 * Why the run ends; RUNNING while it does not.  After an attempt the run
 * loop (judge_attempt) tries them in this order, the first that holds
 * wins: CANNOT_RUN, INTERRUPTED, OUTPUT_STOP, DEADLINE (stopped at it),
 * READER_GONE, then SUCCEEDED or NOT_RETRYABLE, then EXHAUSTED, then
 * INPUT_CUT (stdin passed what is kept for a retry) or INPUT_UNKEPT (the
 * file of the copy had no room for it), then OUTPUT_UNHELD (-O's file
 * had none: the attempt's output went to stdout).  The
 * others end a wait: DEADLINE (the next delay would pass it),
 * INTERRUPTED, CIRCUIT_OPEN, BUDGET_SPENT and STORE_DOWN.
 */
enum outcome {
	RUNNING, SUCCEEDED, NOT_RETRYABLE, EXHAUSTED, DEADLINE, INTERRUPTED,
	CANNOT_RUN, OUTPUT_STOP, CIRCUIT_OPEN, BUDGET_SPENT, READER_GONE,
	STORE_DOWN, INPUT_CUT, INPUT_UNKEPT, OUTPUT_UNHELD, NOUTCOMES
};

/* The exit status an outcome gives, as retry(1)'s EXIT STATUS says. */
enum exit_rule {
	EXIT_LAST,		/* the last attempt's status, as reported */
	EXIT_LAST_OR_TIMEDOUT,	/* that, or 124 when no attempt ran */
	EXIT_BY_SIGNAL,		/* retry dies of the signal: 128 + N */
	EXIT_TEMPFAIL_ALWAYS	/* 75, whatever else happened */
};

/* Whether a run that ends so has passed. */
enum passes {
	PASSES_NEVER,		/* it gave up, or was stopped */
	PASSES_ALWAYS,
	PASSES_UNMATCHED	/* when the last exited 0, its output unmatched */
};

/* The run's one CI annotation. */
enum notice { NOTICE_NONE, NOTICE_WARNING, NOTICE_ERROR };

struct outcome_row {
	const char	*words;		/* -v's summary: "stopped: WORDS" */
	const char	*giving_up;	/* "...; giving up: GIVING_UP", or NULL */
	const char	*key;		/* the report's "outcome" */
	enum exit_rule	 rule;
	enum passes	 passes;
	int		 flakes;	/* kept in the circuit's flake counts */
};

extern const struct outcome_row outcome_table[NOUTCOMES];

/* How the run's last attempt ended, as the verdict needs it. */
struct last_attempt {
	long		 attempts;	/* in the run: 0 if none ran */
	int		 status;	/* the last one's, as reported */
	int		 matched;	/* its output matched --on-output */
	int		 signal;	/* retry got it, or the keyboard sent it */
};

/*
 * What the end of a run is, decided once, here, for every listener: the
 * last line, the report, the metrics, the annotation, the end hook and
 * the flake counts all read it.
 */
struct verdict {
	int		 status;	/* the exit status */
	int		 signal;	/* retry dies of it instead, or 0 */
	int		 passed;	/* exit status 0 after an attempt */
	int		 after_retries;	/* passed, after failed attempts */
	enum notice	 notice;
	int		 flakes;	/* counts in the flake counts */
};

struct verdict	 outcome_verdict(enum outcome, const struct last_attempt *);

#endif
