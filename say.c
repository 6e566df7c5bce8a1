/* SPDX-License-Identifier: ISC */
/*
 * The run's messages on stderr, a listener of its events: the policy
 * (-v), each retry and its delay, every other wait as it begins, the
 * circuit's changes, and the one line on why the run ended, all written
 * as retry(1) shows them.  Here too say() and detail(), the run's lines
 * that any part of retry tells, which -Q's spool holds while it holds.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static enum verbosity	 verbosity = NORMAL;
static int		 held;		/* -Q: the run's lines go into its spool */

/* ---- The run's lines ------------------------------------------------ */

void
say_verbosity(enum verbosity v)
{
	verbosity = v;
}

/*
 * Where the run's lines go from now on: -Q's spool (on), which holds them
 * with the attempts' output until the run's end shows whether they are
 * for anyone's eyes, or stderr.  A spool that has failed holds nothing:
 * they go to stderr, after what it held.
 */
void
say_hold(int on)
{
	held = on;
	msg_stderr_afresh();
}

/* Where the run's lines go now (a hook's output goes the same way). */
int
say_fd(void)
{
	return held && spool_holding() ? spool_fd() : STDERR_FILENO;
}

/*
 * One of the run's lines, formatted as every message is (msg.c), into
 * -Q's spool while it holds them, as they are, else (the spool failed:
 * after what it held) to stderr, at priority pri in the journal.
 */
static void
run_line(enum priority pri, const char *fmt, va_list ap)
{
	char line[MSGMAX];
	size_t len;
	int saved = errno;

	len = msg_format(line, fmt, ap, NULL);
	if (!held || spool_put(line, len) == -1)
		msg_line(pri, line, len);
	errno = saved;
}

/* A line of the run's story; -q hides it. */
void
say(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < NORMAL)
		return;
	va_start(ap, fmt);
	run_line(PRI_NOTICE, fmt, ap);
	va_end(ap);
}

/* A line that only -v shows. */
void
detail(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < VERBOSE)
		return;
	va_start(ap, fmt);
	run_line(PRI_INFO, fmt, ap);
	va_end(ap);
}

/* ---- The listener --------------------------------------------------- */

/*
 * The attempts of the policy line: "5 attempts (0: no limit)", or under
 * an outer retry, which multiplies them, how many that makes at most.
 */
static const char *
attempts_words(char *buf, size_t size, const struct policy *p)
{
	const char *s = p->attempts == 1 ? "" : "s";
	long m = p->outer_attempts;

	if (!p->nested)
		(void)snprintf(buf, size, "%ld attempt%s (0: no limit)",
		    p->attempts, s);
	else if (!p->attempts_given && m == 1)
		(void)snprintf(buf, size, "1 attempt, and the outer retry makes 1: "
		    "none is retried (-n to retry here)");
	else if (!p->attempts_given)
		(void)snprintf(buf, size, "1 attempt: the outer retry retries "
		    "(-n to retry here too)");
	else if (m < 0)
		(void)snprintf(buf, size, "%ld attempt%s (0: no limit) under "
		    "an outer retry", p->attempts, s);
	else if (p->attempts == 0 || m == 0)
		(void)snprintf(buf, size, "%ld attempt%s under an outer retry's "
		    "%ld: no limit", p->attempts, s, m);
	else
		(void)snprintf(buf, size, "%ld attempt%s under an outer retry's "
		    "%ld: up to %lld", p->attempts, s, m,
		    (long long)p->attempts * m);
	return buf;
}

/* -v: the policy as the run understood it, before the first attempt. */
static void
say_policy(const struct policy *p, const struct run *r)
{
	char on[1024], base[32], cap[32], timeout[32], deadline[96], n[128];
	char least[32], d[32];
	struct codes retry_on;
	int i;

	if (verbosity < VERBOSE)
		return;		/* formatting it costs a run's start-up */
	memset(&retry_on, 0, sizeof(retry_on));
	for (i = 0; i < 256; i++)
		if (codes_has(&p->on, i) && !codes_has(&p->stop_on, i))
			codes_add(&retry_on, i);
	fmt_duration(least, sizeof(least), p->min_time);
	if (r->deadline == NEVER)
		(void)snprintf(deadline, sizeof(deadline), "none");
	else if (p->min_time == 0)
		fmt_duration(deadline, sizeof(deadline), r->deadline - r->start);
	else
		(void)snprintf(deadline, sizeof(deadline), "%s (min-time %s)",
		    fmt_duration(d, sizeof(d), r->deadline - r->start), least);
	detail("policy: %s, delay %s x %g up to %s with %s jitter, retry on %s, "
	    "timeout %s, deadline %s, key %s",
	    attempts_words(n, sizeof(n), p),
	    fmt_duration(base, sizeof(base), p->base), p->factor,
	    fmt_duration(cap, sizeof(cap), p->cap), jitter_name(p->jitter),
	    fmt_codes(on, sizeof(on), &retry_on),
	    p->timeout ? fmt_duration(timeout, sizeof(timeout), p->timeout) :
	    "none", deadline, getenv("RETRY_IDEMPOTENCY_KEY"));
	if (p->min_time != 0 && r->deadline == NEVER)
		detail("--min-time %s does nothing: the run has no deadline, own "
		    "or inherited", least);
}

/* "attempt 2/5", or "attempt 2" when attempts are unlimited. */
const char *
say_label(char *buf, size_t size, const struct policy *p,
    const struct run *r)
{
	if (p->attempts == 0)
		(void)snprintf(buf, size, "attempt %ld", r->attempt);
	else
		(void)snprintf(buf, size, "attempt %ld/%ld", r->attempt,
		    p->attempts);
	return buf;
}

/*
 * How the last attempt ended: "failed with exit 1", "killed by SIGKILL";
 * also for -Q's header of the attempt.
 */
const char *
say_ending(char *buf, size_t size, const struct policy *p,
    const struct run *r)
{
	char name[32], d[32];

	if (r->end.error != 0)
		(void)snprintf(buf, size, "could not start: %s",
		    strerror(r->end.error));
	else if (r->timed_out == AT_DEADLINE)
		(void)snprintf(buf, size, "timed out at the deadline");
	else if (r->timed_out == TIMED_OUT)
		(void)snprintf(buf, size, "timed out after %s",
		    fmt_duration(d, sizeof(d), p->timeout));
	else if (r->end.termsig != 0)
		(void)snprintf(buf, size, "killed by %s",
		    signal_name(name, sizeof(name), r->end.termsig));
	else if (r->status == 0)
		(void)snprintf(buf, size, "succeeded");
	else
		(void)snprintf(buf, size, "failed with exit %d", r->status);
	return buf;
}

/* -v: where a backoff delay came from. */
static void
explain_delay(const struct policy *p, const struct step *st)
{
	char delay[32], lo[32], hi[32], step[32], cap[32];

	detail("drew %s from [%s, %s]: %s jitter, step %s%s%s",
	    fmt_duration(delay, sizeof(delay), st->delay),
	    fmt_duration(lo, sizeof(lo), st->lo),
	    fmt_duration(hi, sizeof(hi), st->hi), jitter_name(p->jitter),
	    fmt_duration(step, sizeof(step), st->step),
	    st->capped ? ", cut to the cap " : "",
	    st->capped ? fmt_duration(cap, sizeof(cap), p->cap) : "");
}

/*
 * Once a run: a failed attempt's output stays on a stdout that is not a
 * terminal (a pipe to jq, a file), and the next attempt's will follow it
 * there; -O would keep all but the last attempt's off it.
 */
static void
say_output_stays(const struct run *r)
{
	static int told;

	if (told || r->out_bytes <= 0)
		return;
	told = 1;
	say("attempt %ld left %lld byte%s on standard output; the next "
	    "attempt's output follows (-O sends only the last attempt's there)",
	    r->attempt, (long long)r->out_bytes, r->out_bytes == 1 ? "" : "s");
}

/*
 * "attempt 1/5 failed with exit 1; next in 0.250s", with what a hint
 * adds, and with -v how the delay was drawn when no hint gave it.  With
 * -Q the attempt's header in the failure report says it instead, unless
 * the spool has failed and all passes through.
 */
static void
say_retry(const struct policy *p, const struct run *r, const struct event *ev)
{
	char label[64], end[96], d[32], ran[32], reset[128] = "";

	if (r->holding && spool_holding()) {
		if (ev->reason == WAIT_BACKOFF)
			explain_delay(p, ev->step);
		return;
	}
	if (r->reset)
		(void)snprintf(reset, sizeof(reset), "; it ran %ss, at least "
		    "--reset-after: attempts and delays start afresh",
		    fmt_seconds(ran, sizeof(ran), 0, r->ended - r->began));
	say("%s %s%s; next in %ss%s", say_label(label, sizeof(label), p,
	    r), say_ending(end, sizeof(end), p, r), reset,
	    fmt_seconds(d, sizeof(d), 0, ev->wait),
	    ev->reason == WAIT_HINT ? ev->note : "");
	if (ev->reason == WAIT_BACKOFF)
		explain_delay(p, ev->step);
	say_output_stays(r);
}

/*
 * Every wait, said once as it begins, with its length and its reason: a
 * retry's delay (say_retry), the splay, an open circuit, a probe of
 * another run (said once before an attempt: it is waited for in short
 * looks), a spent budget.  A person at a terminal never waits without a
 * line that says why; -q keeps only the last line.
 */
static void
say_wait(const struct policy *p, const struct event *ev)
{
	static long probe_told = -1;	/* the attempt it was said for */
	char d[32];

	fmt_seconds(d, sizeof(d), 0, ev->wait);
	switch (ev->reason) {
	case WAIT_BACKOFF:
	case WAIT_HINT:
		say_retry(p, ev->run, ev);
		break;
	case WAIT_SPLAY:
		say("splay: %ss before the first attempt", d);
		break;
	case WAIT_CIRCUIT_OPEN:
		say("circuit %s is open; waiting %ss", p->circuit, d);
		break;
	case WAIT_PROBE_ELSEWHERE:
		if (probe_told == ev->run->attempts)
			break;
		probe_told = ev->run->attempts;
		say("circuit %s is half-open; another run probes it; waiting",
		    p->circuit);
		break;
	case WAIT_BUDGET:
		say("retry budget of circuit %s spent; waiting %ss", p->circuit,
		    d);
		break;
	}
}

/*
 * A "--" after the command that was not found: the command is likely a
 * word of a value, as in "-D 5 mins -- cmd", where options ended at "mins".
 */
static int
later_separator(char *const argv[])
{
	int i;

	for (i = 1; argv[i] != NULL; i++)
		if (strcmp(argv[i], "--") == 0)
			return 1;
	return 0;
}

/*
 * --min-time ended the run after an attempt: the next would have had too
 * little time, after the delay drawn, or after a hook or a wait took it.
 */
static void
say_min_time(const struct policy *p, const struct run *r, const char *label,
    const char *end)
{
	char t[32], least[32];

	fmt_duration(least, sizeof(least), p->min_time);
	if (r->late != ON_TIME)
		say("%s %s; giving up: less than %s was left before the "
		    "deadline %s (--min-time)", label, end, least,
		    r->late == LATE_IN_HOOK ? "after --on-retry" :
		    "for the next attempt");
	else
		say("%s %s; giving up: after a delay of %ss, less than %s would "
		    "be left before the deadline (--min-time)", label, end,
		    fmt_seconds(t, sizeof(t), 0, r->delay), least);
}

/* Why the run ended before any attempt, or at its deadline. */
static void
say_deadline(const struct policy *p, const struct run *r, const char *label,
    const char *end)
{
	char t[32];

	if (r->attempts == 0 && r->deadline <= r->start)
		say("the deadline has passed; not running '%s'", p->argv[0]);
	else if (r->attempts == 0 && p->splay > 0)
		say("the splay would pass the deadline; not running '%s'",
		    p->argv[0]);
	else if (r->attempts == 0)
		say("the deadline came before the first attempt; not running "
		    "'%s'", p->argv[0]);
	else if (r->timed_out == AT_DEADLINE)
		say("%s %s; giving up", label, end);
	else if (r->short_of == SHORT_OF_MIN_TIME)
		say_min_time(p, r, label, end);
	else if (r->late != ON_TIME)	/* the delay said fitted */
		say("%s %s; giving up: the deadline passed %s", label, end,
		    r->late == LATE_IN_HOOK ? "during --on-retry" :
		    "before the next attempt");
	else
		say("%s %s; giving up: a delay of %ss would pass the deadline",
		    label, end, fmt_seconds(t, sizeof(t), 0, r->delay));
}

/* Interrupted by a signal retry got, or by the keyboard's in the attempt. */
static void
say_interrupted(const struct run *r, const char *label, const char *end)
{
	char name[32];

	if (r->attempts == 0)
		say("interrupted by %s before the first attempt",
		    signal_name(name, sizeof(name), r->interrupt));
	else if (r->interrupt != 0)
		say("%s %s; giving up: interrupted by %s", label, end,
		    signal_name(name, sizeof(name), r->interrupt));
	else
		say("%s %s; giving up: interrupted", label, end);
}

/*
 * The standard input passed what retry keeps to replay without -I: the
 * line names both ways on, and -v why no file held more.
 */
static void
say_input_cut(const struct run *r, const char *label, const char *end)
{
	char kept[32];

	if (r->input_kept % (1 << 20) == 0)
		(void)snprintf(kept, sizeof(kept), "%lld MiB",
		    (long long)(r->input_kept >> 20));
	else
		(void)snprintf(kept, sizeof(kept), "%lld KiB",
		    (long long)(r->input_kept >> 10));
	if (r->input_error != 0)
		detail("standard input kept in memory only: temporary file: %s",
		    strerror(r->input_error));
	say("%s %s; giving up: its standard input passed the %s kept for a "
	    "retry (-I keeps any size, --share-stdin lets attempts read on)",
	    label, end, kept);
}

/* The one line that says why the run ended, passed as v says. */
static void
say_why(const struct policy *p, const struct run *r, const struct verdict *v)
{
	char label[64], end[96];

	say_label(label, sizeof(label), p, r);
	say_ending(end, sizeof(end), p, r);
	switch (r->why) {
	case SUCCEEDED:
	case RUNNING:
	case NOUTCOMES:
		break;
	case CANNOT_RUN:
		say("cannot run '%s': %s%s", p->argv[0], strerror(r->end.error),
		    r->end.error == ENOENT && later_separator(p->argv) ?
		    " (options end at the first operand: a value has no "
		    "spaces)" : "");
		break;
	case NOT_RETRYABLE:
		say("%s %s; giving up: status %d is not retryable", label, end,
		    r->status);
		break;
	case HTTP_REFUSED:
		say("%s %s; giving up: HTTP %d is not retried; --http-4xx retry "
		    "to retry it", label, end, r->hint.status);
		break;
	case EXHAUSTED:	/* -o 0 retries a success: nothing to give up */
		say("%s %s; %sno attempts left", label, end,
		    v->passed ? "" : "giving up: ");
		break;
	case DEADLINE:
		say_deadline(p, r, label, end);
		break;
	case TOO_LATE:
		say("less than %s left before the deadline; not starting",
		    fmt_duration(label, sizeof(label), p->min_time));
		break;
	case INTERRUPTED:
		say_interrupted(r, label, end);
		break;
	case OUTPUT_STOP:
	case READER_GONE:
		say("%s %s; giving up: %s", label, end,
		    outcome_table[r->why].giving_up);
		break;
	case CIRCUIT_OPEN:
		say("circuit %s stays open past the deadline; giving up",
		    p->circuit);
		break;
	case BUDGET_SPENT:	/* its attempt was said with its "next in" */
		say("the retry budget of circuit %s stays spent past the "
		    "deadline; giving up", p->circuit);
		break;
	case STORE_DOWN:
		say("%s; giving up (--store-fail closed)", r->store_err);
		break;
	case INPUT_CUT:
		say_input_cut(r, label, end);
		break;
	case INPUT_UNKEPT:
		say("%s %s; giving up: no room in TMPDIR to keep its standard "
		    "input for a retry (%s)", label, end,
		    strerror(r->input_unkept));
		break;
	case OUTPUT_UNHELD:
		say("%s %s; giving up: its output went to standard output, as "
		    "-O had no room in TMPDIR to hold it (%s)", label, end,
		    strerror(r->output_unheld));
		break;
	}
}

/*
 * Input that retry took from its stdin to replay and no attempt read is
 * lost to the next reader of the pipe (a "while read" loop around retry):
 * said even with -q.
 */
static void
say_unread(const struct run *r)
{
	if (r->input_unread <= 0)
		return;
	warningx("%lld byte%s of standard input went to no attempt (retry "
	    "took them to replay; --share-stdin leaves them to the next "
	    "reader, </dev/null gives the command none)",
	    (long long)r->input_unread, r->input_unread == 1 ? "" : "s");
}

/* Why the run ended and, with -v, a summary of it. */
static void
say_end(const struct policy *p, const struct run *r, const struct verdict *v)
{
	char t[32], s[32];

	say_unread(r);
	say_why(p, r, v);
	detail("%ld attempt%s in %ss, %ss asleep; stopped: %s", r->attempts,
	    r->attempts == 1 ? "" : "s",
	    fmt_seconds(t, sizeof(t), 0, r->took),
	    fmt_seconds(s, sizeof(s), 0, r->asleep), outcome_table[r->why].words);
}

/* A change of the shared circuit that this run made or met. */
static void
say_circuit(const struct event *ev)
{
	switch (ev->change) {
	case CIRCUIT_PROBING:
		say("circuit %s is half-open; this run probes it",
		    ev->policy->circuit);
		break;
	case CIRCUIT_OPENED:
		if (ev->policy->trip_ratio != 0)
			say("circuit %s opened: %ld of the last %ld attempts "
			    "failed", ev->policy->circuit, ev->failures,
			    ev->policy->trip_span);
		else
			say("circuit %s opened after %ld failure%s in a row",
			    ev->policy->circuit, ev->failures,
			    ev->failures == 1 ? "" : "s");
		break;
	case CIRCUIT_CLOSED:
		say("circuit %s is closed again", ev->policy->circuit);
		break;
	}
}

/* The listener: each event that has words, in retry(1)'s words. */
void
say_event(const struct event *ev)
{
	switch (ev->kind) {
	case RUN_BEGINS:
		say_policy(ev->policy, ev->run);
		break;
	case WAIT_BEGINS:
		say_wait(ev->policy, ev);
		break;
	case RUN_ENDS:
		say_end(ev->policy, ev->run, ev->verdict);
		break;
	case CIRCUIT_CHANGES:
		say_circuit(ev);
		break;
	case ATTEMPT_STARTS:
	case ATTEMPT_ENDS:
		break;		/* said with the wait or the end that follows */
	}
}
