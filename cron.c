/* SPDX-License-Identifier: ISC */
/*
 * The cron mode (-Q), a listener of the run's events: both output
 * streams of every attempt and the run's lines are held in the spool
 * (spool.c), in the order written; retry's warnings and errors go to
 * stderr at once (msg.c).  A run that succeeds shows none of it,
 * its end hook's output included; one that fails shows each attempt under
 * a header that says how it ended and what followed, then retry's last
 * line, as chronic(1) would but attempt by attempt.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static long	 indexed;	/* attempts in the index */
static long	 warned;	/* msg_warnings() at a passed run's end */
static int64_t	 began_real;	/* the last attempt's start, real time */

/*
 * The spool.  Returns the file the attempts' output is copied into, or
 * -1 when TMPDIR cannot have it: then said once, and the output passes
 * through as without -Q, rather than the job failing for want of a place
 * to hold it.  A stalled reader of the failure's report holds retry until
 * until at most.
 */
int
cron_start(int64_t until)
{
	if (spool_open(until) == -1) {
		warning("-Q: no file in %s, so output passes through",
		    temp_dir());
		return -1;
	}
	return spool_fd();
}

/*
 * "retry: attempt 2/5, started 2026-12-03T08:00:00Z": when, on the wall
 * clock in UTC, as a mail read later wants it.
 */
static int
start_line(char *buf, size_t size, const struct event *ev)
{
	char label[64], when[32];
	int len;

	len = snprintf(buf, size, "retry: %s, started %s", say_label(label,
	    sizeof(label), ev->policy, ev->run), fmt_utc(when, sizeof(when),
	    began_real));
	return len < 0 || (size_t)len >= size ? (int)strlen(buf) : len;
}

/* The header the attempt starting gets, should the spool fail in it. */
static void
begin_attempt(const struct event *ev)
{
	char text[256];
	int len;

	began_real = realtime_now();
	len = start_line(text, sizeof(text) - 1, ev);
	text[len++] = '\n';
	spool_begin(text, (size_t)len);
}

/*
 * The header of the attempt that just ended: when it started, how it
 * ended, how long it ran, and the wait that followed and why.  The last
 * says only how long it ran: the run's last line, after its output, says
 * how it ended.
 */
static void
index_attempt(const struct event *ev)
{
	const struct run *r = ev->run;
	char text[512], end[128], ran[32], wait[32];
	int len, more;

	if (indexed == r->attempts)
		return;
	indexed = r->attempts;
	len = start_line(text, sizeof(text), ev);
	fmt_seconds(ran, sizeof(ran), 0, r->ended - r->began);
	if (ev->kind == WAIT_BEGINS)
		more = snprintf(text + len, sizeof(text) - (size_t)len,
		    ", %s after %ss; next in %ss%s\n", say_ending(end,
		    sizeof(end), ev->policy, r), ran, fmt_seconds(wait,
		    sizeof(wait), 0, ev->wait), ev->reason == WAIT_HINT ?
		    ev->note : "");
	else
		more = snprintf(text + len, sizeof(text) - (size_t)len,
		    ", ran %ss\n", ran);
	if (more < 0 || (size_t)more >= sizeof(text) - (size_t)len) {
		len = (int)strlen(text);
		text[len - 1] = '\n';	/* cut, but one line */
	} else
		len += more;
	spool_index(text, (size_t)len);
}

/*
 * "retry: job NAME failed N runs in a row (since TIME)": the first line
 * of an alert's mail, the time in UTC as the attempts' headers have it;
 * a history that could not be kept has no count to give.
 */
static void
alert_line(const struct job_end *j)
{
	char text[512], since[32];
	int len;

	if (j->unknown)
		len = snprintf(text, sizeof(text), "retry: job %s: its history "
		    "could not be kept; this failed run alerts\n", j->name);
	else
		len = snprintf(text, sizeof(text), "retry: job %s failed %ld "
		    "run%s in a row (since %s)\n", j->name, j->failed_in_row,
		    j->failed_in_row == 1 ? "" : "s", fmt_utc(since,
		    sizeof(since), j->since));
	if (len > 0 && (size_t)len < sizeof(text))
		msg_put(text, (size_t)len);
}

/*
 * The listener.  At the run's end, one that failed, or that a signal
 * ended, shows what was held before its last line (say.c comes after
 * this); one that succeeded holds on, for its end hook (cron_end).
 */
void
cron_event(const struct event *ev)
{
	if (!spool_holding())
		return;		/* failed: all passes through now */
	switch (ev->kind) {
	case ATTEMPT_STARTS:
		begin_attempt(ev);
		break;
	case ATTEMPT_ENDS:
		spool_end_attempt();
		break;
	case WAIT_BEGINS:
		if (ev->reason == WAIT_BACKOFF || ev->reason == WAIT_HINT)
			index_attempt(ev);
		break;
	case RUN_ENDS:
		if (ev->run->attempts > 0)
			index_attempt(ev);
		/* A failed run that --alert-after tolerates sends no mail. */
		if (ev->verdict->passed || ev->verdict->job.tolerated) {
			say_verbosity(QUIET);	/* but warnings */
			spool_mark();
			warned = msg_warnings();
		} else {
			if (ev->verdict->job.alert)
				alert_line(&ev->verdict->job);
			spool_show(0);
			say_hold(0);
			cron_drop();	/* shown: the rest passes through */
		}
		break;
	case RUN_BEGINS:
	case CIRCUIT_CHANGES:
		break;
	}
}

/*
 * After the end hook: a run that succeeded leaves no trace, unless retry
 * warned after its end (a hook that failed) or dies of a signal: then
 * what came after the end, the hook's output with it.
 */
void
cron_end(int dying)
{
	if (spool_holding() && (dying || msg_warnings() > warned))
		spool_show(1);
	say_hold(0);
	cron_drop();
}

/* The files go. */
void
cron_drop(void)
{
	if (spool_drop() == -1)
		warning("-Q: close");
}
