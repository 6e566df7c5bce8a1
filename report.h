/*
 * The JSON report of a run (--report FILE): attempts are spooled to an
 * unlinked file as they end, and the whole object is written at the end,
 * to a temporary file beside FILE that is then renamed over it.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>
#include <stdio.h>

struct report {
	const char	*path;		/* "-": stderr */
	char		 temp[4096];	/* beside path, renamed over it */
	FILE		*out;		/* the temporary file, or stderr */
	FILE		*spool;		/* the attempts so far */
	long		 attempts;
};

/* One attempt; times in ns from the start, delay < 0 when none followed. */
struct attempt_record {
	long		 number;
	int64_t		 start, duration, delay;
	int		 status, termsig, timed_out, from_hint;
	int		 error;		/* it could not start: errno, or 0 */
};

int	report_open(struct report *, const char *);
int	report_attempt(struct report *, const struct attempt_record *);
int	report_finish(struct report *, char *const [], const char *, int, int,
	    int64_t);
void	report_abandon(struct report *);

#endif
