/* SPDX-License-Identifier: ISC */
/*
 * The cron mode (-Q): both output streams of every attempt go into one
 * file without a name in $TMPDIR, in the order written, and so do retry's
 * own lines.  A run that succeeds shows none of it; one that fails shows
 * each attempt under a header that says how it ended and what followed,
 * then retry's last line, as chronic(1) would but attempt by attempt.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cron.h"
#include "fd.h"
#include "msg.h"
#include "parse.h"
#include "run.h"
#include "say.h"
#include "scratch.h"

/*
 * The index: for each attempt, where its output lies in the spool and the
 * header to show before it; on disk too, so that memory stays the same
 * whatever the number of attempts.
 */
struct entry {
	int64_t		 start, end;	/* of the attempt's output */
	int32_t		 len;		/* of the header that follows */
};

static int	 spool = -1;	/* what the attempts and retry wrote */
static int	 index_fd = -1;
static off_t	 seg_start, seg_end;	/* the last attempt's output */
static long	 indexed;	/* attempts in the index */

/*
 * The spool and the index.  Returns the spool, which the attempts write
 * (stdout and stderr) and retry's lines go to, or -1 when TMPDIR cannot
 * have them: then said once, and the output passes through as without
 * -Q, rather than the job failing for want of a place to hold it.
 */
int
cron_start(void)
{
	if ((spool = scratch_file()) == -1 ||
	    (index_fd = scratch_file()) == -1) {
		warning("-Q: no file in %s, so output passes through",
		    temp_dir());
		cron_drop();
		return -1;
	}
	return spool;
}

/* Where the spool is now: the end of what was written to it. */
static off_t
spool_end(void)
{
	off_t end = lseek(spool, 0, SEEK_CUR);

	if (end == -1)
		fatal("-Q: temporary file");
	return end;
}

/*
 * The header of the attempt that just ended: how it ended, how long it
 * ran, and the wait that followed and why (none after the last).
 */
static void
index_attempt(const struct event *ev)
{
	const struct run *r = ev->run;
	char text[512], attempt[192], ran[32], wait[32];
	struct entry e;
	int len;

	if (indexed == r->attempts)
		return;
	indexed = r->attempts;
	say_attempt(attempt, sizeof(attempt), ev->policy, r);
	fmt_seconds(ran, sizeof(ran), 0, r->ended - r->began);
	if (ev->kind == WAIT_BEGINS)
		len = snprintf(text, sizeof(text), "retry: %s after %ss; next "
		    "in %ss%s\n", attempt, ran, fmt_seconds(wait, sizeof(wait),
		    0, ev->wait), ev->reason == WAIT_HINT ? ev->note : "");
	else
		len = snprintf(text, sizeof(text), "retry: %s after %ss\n",
		    attempt, ran);
	if (len < 0 || (size_t)len >= sizeof(text))
		len = (int)strlen(text);
	e.start = seg_start;
	e.end = seg_end;
	e.len = len;
	if (write_all(index_fd, (const char *)&e, sizeof(e)) == -1 ||
	    write_all(index_fd, text, (size_t)len) == -1)
		fatal("-Q: temporary file");
}

#ifdef HAVE_COPY_FILE_RANGE
/*
 * As much of the spool's bytes [from, to) as copy_file_range(2) moves to
 * stderr, in the kernel; it refuses a stderr that is not a regular file,
 * or opened with O_APPEND.  Returns where it stopped.
 */
static off_t
copy_ranged(off_t from, off_t to)
{
	loff_t pos = from;
	ssize_t n;

	while (pos < to) {
		n = copy_file_range(spool, &pos, STDERR_FILENO, NULL,
		    (size_t)(to - pos), 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	return (off_t)pos;
}
#endif

/* Copies the spool's bytes [from, to) to stderr. */
static int
copy_out(off_t from, off_t to)
{
	char buf[65536];
	ssize_t n;

#ifdef HAVE_COPY_FILE_RANGE
	/* What it leaves, read(2) and write(2) move, or say what is wrong. */
	from = copy_ranged(from, to);
#endif
	while (from < to) {
		n = pread(spool, buf, (size_t)(to - from) < sizeof(buf) ?
		    (size_t)(to - from) : sizeof(buf), from);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (write_all(STDERR_FILENO, buf, (size_t)n) == -1)
			return -1;
		from += n;
	}
	return 0;
}

/*
 * The failed run's report on stderr: what retry said before an attempt,
 * then its header and its output, attempt by attempt, then what came
 * after the last.  A stderr that fails ends it: the exit status still
 * tells.
 */
static void
show(void)
{
	char header[512];
	struct entry e;
	off_t at = 0, pos = 0;

	while (pread(index_fd, &e, sizeof(e), at) == (ssize_t)sizeof(e) &&
	    e.len > 0 && (size_t)e.len <= sizeof(header) &&
	    pread(index_fd, header, (size_t)e.len, at + (off_t)sizeof(e)) ==
	    e.len) {
		at += (off_t)sizeof(e) + e.len;
		if (copy_out(pos, e.start) == -1 ||
		    write_all(STDERR_FILENO, header, (size_t)e.len) == -1 ||
		    copy_out(e.start, e.end) == -1)
			return;
		pos = e.end;
	}
	(void)copy_out(pos, spool_end());	/* what failed, the status tells */
}

/*
 * The listener.  At the end, a run that succeeded leaves no trace but a
 * warning of retry's own; one that failed, or that a signal ended, shows
 * what was held before its last line (say.c comes after this).
 */
void
cron_event(const struct event *ev)
{
	if (spool == -1)
		return;
	switch (ev->kind) {
	case ATTEMPT_STARTS:
		seg_start = spool_end();
		break;
	case ATTEMPT_ENDS:
		seg_end = spool_end();
		break;
	case WAIT_BEGINS:
		if (ev->reason == WAIT_BACKOFF || ev->reason == WAIT_HINT)
			index_attempt(ev);
		break;
	case RUN_ENDS:
		if (ev->run->attempts > 0)
			index_attempt(ev);
		msg_to(STDERR_FILENO);
		if (ev->status == 0 && ev->signal == 0)
			msg_verbosity(QUIET);	/* but warnings */
		else
			show();
		cron_drop();
		break;
	case RUN_BEGINS:
	case CIRCUIT_CHANGES:
		break;
	}
}

/* The files go (they have no name: closing is enough). */
void
cron_drop(void)
{
	if (spool != -1 && close(spool) == -1)
		warning("-Q: close");
	if (index_fd != -1 && close(index_fd) == -1)
		warning("-Q: close");
	spool = index_fd = -1;
}
