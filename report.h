/* SPDX-License-Identifier: ISC */
/*
 * The JSON report of a run (--report FILE), a listener of its events:
 * attempts are kept in memory as their delays are known, and the whole
 * object is written at the end by outfile.c (a new file renamed over
 * FILE, or a device or FIFO written in place).
 */
#ifndef REPORT_H
#define REPORT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "outfile.h"

struct report {
	const char	*path;		/* "-": stderr */
	struct outfile	 out;		/* else where it goes */
	FILE		*spool;		/* the attempts so far, in memory */
	char		*attempts_text;
	size_t		 attempts_len;
	long		 attempts;
	FILE		*waits;		/* the waits so far, likewise */
	char		*waits_text;
	size_t		 waits_len;
	long		 nwaits;
	FILE		*changes;	/* the circuit's changes, likewise */
	char		*changes_text;
	size_t		 changes_len;
	long		 nchanges;
	const char	*store;		/* "store" member, or NULL: none */
	char		*text;		/* "-": the object, built in memory */
	size_t		 text_len;
};

/* One attempt; times in ns from the start, delay < 0 when none followed. */
struct attempt_record {
	long		 number;
	int64_t		 start, duration, delay;
	int		 status, termsig, timed_out, from_hint;
	int		 reset;		/* --reset-after started the schedule afresh */
	int64_t		 started_at;	/* real time */
	int		 error;		/* it could not start: errno, or 0 */
};

#include "event.h"

void	report_start(const char *);
void	report_event(const struct event *);
void	report_drop(void);

int	report_open(struct report *, const char *);
int	report_attempt(struct report *, const struct attempt_record *);
/* What the report says of the whole run. */
struct report_end {
	char *const	*argv;
	int64_t		 started_at;	/* real time */
	const char	*key, *circuit, *store_url;	/* or NULL */
	const char	*outcome;
	int		 passed_after_retries, status, signal;
	int64_t		 total;
	int64_t		 until;		/* "-": a stalled stderr waited for */
};

int	report_wait(struct report *, int64_t, int64_t, const char *);
int	report_change(struct report *, int64_t, const char *);
int	report_finish(struct report *, const struct report_end *);
void	report_abandon(struct report *);

struct circuit_view;
int	report_status(struct report *, const char *, const struct circuit_view *,
	    int);

#endif
