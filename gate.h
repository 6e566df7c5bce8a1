/* SPDX-License-Identifier: ISC */
/*
 * --circuit and --store as the run loop meets them: before each attempt a
 * gate that answers go, wait this long for this reason, or end with this
 * outcome; after it, the attempt's end counted for every run of the name
 * (and whether that opened or closed the circuit); at the run's end, how
 * the run ended, for the flake count.  The gate never sleeps and never
 * judges an attempt: retry.c does both.
 */
#ifndef GATE_H
#define GATE_H

#include <stdint.h>

#include "common.h"
#include "shared.h"

/* What an attempt's end means for the circuit. */
enum counts { COUNTS_SUCCESS, COUNTS_FAILURE, COUNTS_NOTHING };

/* The gate's answer. */
struct gate {
	enum { GATE_GO, GATE_WAIT, GATE_END } kind;
	enum wait_reason reason;	/* GATE_WAIT: why */
	int64_t		 wait;		/* GATE_WAIT: how long, ns */
	enum outcome	 end;		/* GATE_END: why; GATE_WAIT: past the deadline */
	int		 signal;	/* GATE_END by a signal: which */
	int		 probing;	/* GATE_GO: half-open, this run probes */
	const char	*store_failed;	/* the store failed just now: how */
	enum turn	 turned;	/* gate_record: this end opened or closed it */
	long		 failures;	/* TURN_OPENED: after this many in a row */
};

void		 gate_store_from_environment(struct policy *);
void		 gate_open(const struct policy *);
struct gate	 gate_admit(const struct policy *, int, int64_t, struct rng *);
void		 gate_lease_ticks(const struct policy *, struct limit *);
struct gate	 gate_record(const struct policy *, long, enum counts, int64_t,
		    struct rng *);
struct gate	 gate_run_ended(const struct policy *, enum run_kind, int64_t);
int		 gate_command(const struct policy *);

#endif
