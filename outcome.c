/* SPDX-License-Identifier: ISC */
/*
 * The table of outcomes that the messages, the report and the exit status
 * all read, so that the three can never disagree.
 */
#include "compat.h"	/* first: the feature macros */

#include <stddef.h>

#include "outcome.h"

const struct outcome_row outcome_table[NOUTCOMES] = {
	[RUNNING] = { "running", NULL, "running", EXIT_LAST },
	[SUCCEEDED] = { "success", NULL, "success", EXIT_LAST },
	[NOT_RETRYABLE] = { "status not retryable", NULL, "not_retryable",
	    EXIT_LAST },
	[EXHAUSTED] = { "attempts used up", NULL, "attempts_exhausted",
	    EXIT_LAST },
	[DEADLINE] = { "deadline", NULL, "deadline", EXIT_LAST_OR_TIMEDOUT },
	[INTERRUPTED] = { "interrupted", NULL, "interrupted", EXIT_BY_SIGNAL },
	[CANNOT_RUN] = { "cannot run the command", NULL, "not_retryable",
	    EXIT_LAST },
	[OUTPUT_STOP] = { "output matched --stop-on-output",
	    "its output matched --stop-on-output", "not_retryable",
	    EXIT_LAST },
	[CIRCUIT_OPEN] = { "circuit open", NULL, "circuit_open",
	    EXIT_TEMPFAIL_ALWAYS },
	[BUDGET_SPENT] = { "retry budget spent", NULL, "budget_spent",
	    EXIT_LAST },
	[READER_GONE] = { "the reader of the output has gone",
	    "the reader of the output has gone", "not_retryable", EXIT_LAST },
	[STORE_DOWN] = { "store unavailable", NULL, "store_unavailable",
	    EXIT_TEMPFAIL_ALWAYS },
	[INPUT_CUT] = { "standard input too long to replay", NULL,
	    "not_retryable", EXIT_LAST },
	[INPUT_UNKEPT] = { "no room to keep standard input for a replay",
	    NULL, "not_retryable", EXIT_LAST },
	[OUTPUT_UNHELD] = { "no room to hold the output (-O)", NULL,
	    "not_retryable", EXIT_LAST },
};

/*
 * The exit status of a run that ended for why after attempts attempts,
 * the last with status last, with signal (0: none) the signal that
 * retry got or that the keyboard sent the attempt.  *sig gets the signal
 * retry is to die of instead (the status is then 128 + *sig), or 0.  A
 * signal wins over every rule but 75: a run told to stop says so.
 */
int
outcome_exit_status(enum outcome why, long attempts, int last, int signal,
    int *sig)
{
	enum exit_rule rule = outcome_table[why].rule;

	*sig = 0;
	if (rule == EXIT_TEMPFAIL_ALWAYS)
		return EXIT_TEMPFAIL;
	if (signal != 0 || rule == EXIT_BY_SIGNAL) {
		*sig = signal;
		return 128 + signal;
	}
	if (rule == EXIT_LAST_OR_TIMEDOUT && attempts == 0)
		return EXIT_TIMEDOUT;
	return last;
}
