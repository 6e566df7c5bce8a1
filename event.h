/* SPDX-License-Identifier: ISC */
/*
 * The story of a run as the run loop tells it, one event at a time, to
 * every listener (the messages, the report, ...).  A listener formats and
 * keeps what it is told; it decides nothing about the run.
 */
#ifndef EVENT_H
#define EVENT_H

#include <stdint.h>

struct policy;
struct run;
struct step;
struct verdict;

enum event_kind {
	RUN_BEGINS,		/* the policy is settled, nothing has run */
	ATTEMPT_STARTS,		/* run->attempt is about to start */
	ATTEMPT_ENDS,		/* run->end, status, began and ended say how */
	WAIT_BEGINS,		/* reason, wait */
	CIRCUIT_CHANGES,	/* state: what this run found or made it */
	RUN_ENDS		/* run->why; verdict */
};

/* Why the run waits before an attempt. */
enum wait_reason {
	WAIT_BACKOFF,		/* the schedule's delay; step says how drawn */
	WAIT_HINT,		/* the attempt's Retry-After; note says it */
	WAIT_SPLAY,		/* --splay, before the first attempt */
	WAIT_CIRCUIT_OPEN,	/* the shared circuit is open */
	WAIT_PROBE_ELSEWHERE,	/* another run probes the half-open circuit */
	WAIT_BUDGET		/* the shared retry budget is spent */
};

/* What the circuit is, as this run meets it or makes it. */
enum circuit_change {
	CIRCUIT_PROBING,	/* half-open, and this run holds the probe */
	CIRCUIT_OPENED,		/* an attempt's end opened it: failures */
	CIRCUIT_CLOSED		/* an attempt's success closed it again */
};

struct event {
	enum event_kind		 kind;
	const struct policy	*policy;
	const struct run	*run;
	enum wait_reason	 reason;	/* WAIT_BEGINS */
	int64_t			 wait;		/* WAIT_BEGINS: ns */
	const struct step	*step;		/* WAIT_BACKOFF: the draw */
	const char		*note;		/* WAIT_HINT: what it said */
	enum circuit_change	 change;	/* CIRCUIT_CHANGES */
	long			 failures;	/* CIRCUIT_OPENED: in a row */
	const struct verdict	*verdict;	/* RUN_ENDS: outcome.c's */
};

#endif
