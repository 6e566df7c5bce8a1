/* SPDX-License-Identifier: ISC */
/*
 * The table of outcomes, and the verdict drawn from it, that the messages,
 * the report, the metrics, the annotation, the end hook, the flake counts
 * and the exit status all read, so that none can disagree.
 */
#include "compat.h"	/* first: the feature macros */

#include <stddef.h>
#include <string.h>

#include "common.h"

/* The last attempt's status, but 1 where it exited 0 and the run gave up. */
#define EXIT_GAVE_UP	1

const struct outcome_row outcome_table[NOUTCOMES] = {
	[RUNNING] = { "running", NULL, "running", EXIT_LAST, PASSES_NEVER,
	    0, 0 },
	[SUCCEEDED] = { "success", NULL, "success", EXIT_LAST, PASSES_ALWAYS,
	    1, 1 },
	[NOT_RETRYABLE] = { "status not retryable", NULL, "not_retryable",
	    EXIT_LAST, PASSES_NEVER, 1, 1 },
	/* Apart from NOT_RETRYABLE for its last line, which names the HTTP
	 * status; the report's key is the same. */
	[HTTP_REFUSED] = { "HTTP status not retryable", NULL, "not_retryable",
	    EXIT_LAST, PASSES_NEVER, 1, 1 },
	/* -o 0 retries a success: one at the end has nothing to give up. */
	[EXHAUSTED] = { "attempts used up", NULL, "attempts_exhausted",
	    EXIT_LAST, PASSES_UNMATCHED, 1, 1 },
	[DEADLINE] = { "deadline", NULL, "deadline", EXIT_LAST_OR_TIMEDOUT,
	    PASSES_NEVER, 1, 1 },
	[INTERRUPTED] = { "interrupted", NULL, "interrupted", EXIT_BY_SIGNAL,
	    PASSES_NEVER, 0, 0 },
	/* A command that cannot run is a job that fails: it counts. */
	[CANNOT_RUN] = { "cannot run the command", NULL, "not_retryable",
	    EXIT_LAST, PASSES_NEVER, 0, 1 },
	[OUTPUT_STOP] = { "output matched --stop-on-output",
	    "its output matched --stop-on-output", "not_retryable",
	    EXIT_LAST, PASSES_NEVER, 1, 1 },
	[CIRCUIT_OPEN] = { "circuit open", NULL, "circuit_open",
	    EXIT_TEMPFAIL_ALWAYS, PASSES_NEVER, 1, 1 },
	[BUDGET_SPENT] = { "retry budget spent", NULL, "budget_spent",
	    EXIT_LAST, PASSES_NEVER, 1, 1 },
	/* Says nothing of the command: it was told to stop writing. */
	[READER_GONE] = { "the reader of the output has gone",
	    "the reader of the output has gone", "not_retryable", EXIT_LAST,
	    PASSES_NEVER, 0, 0 },
	[STORE_DOWN] = { "store unavailable", NULL, "store_unavailable",
	    EXIT_TEMPFAIL_ALWAYS, PASSES_NEVER, 0, 0 },
	[INPUT_CUT] = { "standard input too long to replay", NULL,
	    "not_retryable", EXIT_LAST, PASSES_NEVER, 1, 1 },
	[INPUT_UNKEPT] = { "no room to keep standard input for a replay",
	    NULL, "not_retryable", EXIT_LAST, PASSES_NEVER, 1, 1 },
	[OUTPUT_UNHELD] = { "no room to hold the output (-O)", NULL,
	    "not_retryable", EXIT_LAST, PASSES_NEVER, 1, 1 },
	/* Nothing ran: the run's time ran out, the downstream did not fail. */
	[TOO_LATE] = { "less than --min-time left before the deadline", NULL,
	    "too_late", EXIT_LAST_OR_TIMEDOUT, PASSES_NEVER, 0, 0 },
};

/* Does a run that ended for why, after the last attempt a, pass? */
static int
passes(enum outcome why, const struct last_attempt *a)
{
	switch (outcome_table[why].passes) {
	case PASSES_ALWAYS:
		return 1;
	case PASSES_UNMATCHED:
		return a->status == 0 && !a->matched;
	case PASSES_NEVER:
		break;
	}
	return 0;
}

/*
 * The exit status of a run that ended for why after a, and in *sig the
 * signal that retry is to die of instead (the status is then 128 + *sig),
 * or 0.  A signal wins over every rule but 75: a run told to stop says
 * so.  A run that gave up never exits 0, so that `retry ... && next` never
 * goes on after "giving up": an attempt that exited 0 but was failed by
 * its output (--on-output, --stop-on-output, -o 0) gives 1.
 */
static int
exit_status(enum outcome why, const struct last_attempt *a, int *sig)
{
	enum exit_rule rule = outcome_table[why].rule;

	*sig = 0;
	if (rule == EXIT_TEMPFAIL_ALWAYS)
		return EXIT_TEMPFAIL;
	if (a->signal != 0 || rule == EXIT_BY_SIGNAL) {
		*sig = a->signal;
		return 128 + a->signal;
	}
	if (rule == EXIT_LAST_OR_TIMEDOUT && a->attempts == 0)
		return EXIT_TIMEDOUT;
	if (a->status == 0 && !passes(why, a))
		return EXIT_GAVE_UP;
	return a->status;
}

/* The end of a run that ended for why after a, for every listener. */
struct verdict
outcome_verdict(enum outcome why, const struct last_attempt *a)
{
	struct verdict v;

	v.status = exit_status(why, a, &v.signal);
	v.passed = v.status == 0 && v.signal == 0 && a->attempts > 0;
	v.after_retries = v.passed && a->attempts > 1;
	v.notice = !v.passed ? NOTICE_ERROR : v.after_retries ?
	    NOTICE_WARNING : NOTICE_NONE;
	v.flakes = outcome_table[why].flakes && a->attempts > 0;
	v.counts_job = outcome_table[why].counts_job && a->attempts > 0 &&
	    v.signal == 0;
	memset(&v.job, 0, sizeof(v.job));
	return v;
}
