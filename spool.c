/* SPDX-License-Identifier: ISC */
/*
 * -Q's spool: one file without a name in $TMPDIR holds what the attempts
 * wrote (through the relay) and retry's lines (through say.c), in
 * the order written; a second holds the index, the header of each
 * attempt and where its output lies, so that memory stays the same
 * whatever the number of attempts.  When a write into either fails (a
 * full disk, EIO), what was held goes to stderr at once, then one line
 * that says so, and from there on everything passes through: nothing is
 * lost, and the attempts never see the disk's error.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>		/* loff_t, on musl */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define HEADERMAX	512

struct entry {
	int64_t		 start, end;	/* of the attempt's output */
	int32_t		 len;		/* of the header that follows */
};

static int	 spool = -1;	/* what the attempts and retry wrote */
static int	 index_fd = -1;
static int	 failed;	/* errno of the write that failed, or 0 */
static int64_t	 until = NEVER;	/* writes to a stalled stderr wait no longer */
static struct entry cur;	/* the attempt not yet in the index */
static int	 cur_open;	/* cur.start is set; cur.end -1 while it runs */
static char	 cur_header[HEADERMAX];
static off_t	 marked;	/* spool_mark(): the run's end */

/*
 * The two files, or -1 with errno when TMPDIR cannot have them.  Writes
 * of the held output to stderr wait for a stalled reader until by_then
 * at most (a signal ends them at once).
 */
int
spool_open(int64_t by_then)
{
	int e;

	until = by_then;
	if ((spool = scratch_file()) != -1 &&
	    (index_fd = scratch_file()) != -1)
		return spool;
	e = errno;
	(void)spool_drop();	/* what failed is e */
	errno = e;
	return -1;
}

/* It holds: not failed, not dropped. */
int
spool_holding(void)
{
	return spool != -1 && !failed;
}

/* The file the attempts' output is copied into, or -1 when none holds. */
int
spool_fd(void)
{
	return spool_holding() ? spool : -1;
}

/* Where the spool ends now; -1 when lseek(2) cannot say. */
static off_t
end_now(void)
{
	return lseek(spool, 0, SEEK_CUR);
}

/*
 * An attempt starts: its output is what comes into the spool from here.
 * label is the header shown before it should the spool fail while it
 * runs, before its own header is known.
 */
void
spool_begin(const char *label, size_t len)
{
	if (!spool_holding())
		return;
	if ((cur.start = end_now()) == -1) {
		spool_failed(errno);
		return;
	}
	cur.end = -1;
	cur.len = (int32_t)(len < sizeof(cur_header) ? len :
	    sizeof(cur_header));
	memcpy(cur_header, label, (size_t)cur.len);
	cur_open = 1;
}

/* The attempt has ended, its output is all in. */
void
spool_end_attempt(void)
{
	if (spool_holding() && cur_open && (cur.end = end_now()) == -1)
		spool_failed(errno);
}

/*
 * The attempt's header, now known, goes into the index before its
 * output.  An index that fails keeps it in memory for the failure's
 * report.
 */
void
spool_index(const char *header, size_t len)
{
	if (!spool_holding() || !cur_open)
		return;
	if (cur.end == -1 && (cur.end = end_now()) == -1) {
		spool_failed(errno);
		return;
	}
	cur.len = (int32_t)(len < sizeof(cur_header) ? len :
	    sizeof(cur_header));
	memcpy(cur_header, header, (size_t)cur.len);
	/* Part of an entry at the index's end ends show_all()'s reading
	 * there, and cur, still open, is shown in its place. */
	if (write_all(index_fd, (const char *)&cur, sizeof(cur)) == -1 ||
	    write_all(index_fd, cur_header, (size_t)cur.len) == -1) {
		spool_failed(errno);
		return;
	}
	cur_open = 0;
}

/*
 * One of retry's lines into the spool: 0 when held, -1 when not (it
 * failed, now or before): then the caller writes it to stderr, after
 * what was held.
 */
int
spool_put(const char *line, size_t len)
{
	off_t before;
	int e;

	if (!spool_holding())
		return -1;
	if ((before = end_now()) == -1) {
		spool_failed(errno);
		return -1;
	}
	if (write_all(spool, line, len) == -1) {
		e = errno;
		/* Half a line held would show twice: it goes out whole below. */
		if (ftruncate(spool, before) == -1 ||
		    lseek(spool, before, SEEK_SET) == -1)
			e = errno;
		spool_failed(e);
		return -1;
	}
	return 0;
}

/* ---- Showing what was held ----------------------------------------- */

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

/* Copies the spool's bytes [from, to) to stderr; -1 when it stopped. */
static int
copy_bytes(off_t from, off_t to)
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
		if (sp_write(STDERR_FILENO, buf, (size_t)n, until) == -1)
			return -1;
		from += n;
	}
	return 0;
}

/*
 * As copy_bytes, and a newline after an attempt's unfinished last line,
 * so that the header or the line of retry's that follows starts a line.
 */
static int
copy_out(off_t from, off_t to)
{
	char last;

	if (copy_bytes(from, to) == -1)
		return -1;
	if (to > from && pread(spool, &last, 1, to - 1) == 1 && last != '\n')
		return sp_write(STDERR_FILENO, "\n", 1, until);
	return 0;
}

/*
 * All that was held, on stderr: what retry said before an attempt, then
 * its header and its output, attempt by attempt, the one not yet indexed
 * under its label, then what came after.  A stderr that fails, a signal
 * or a reader stalled past until ends it: the exit status still tells.
 */
static void
show_all(void)
{
	char header[HEADERMAX];
	struct entry e;
	off_t at = 0, pos = 0, end;

	if ((end = end_now()) == -1)
		return;
	while (pread(index_fd, &e, sizeof(e), at) == (ssize_t)sizeof(e) &&
	    e.len > 0 && (size_t)e.len <= sizeof(header) &&
	    pread(index_fd, header, (size_t)e.len, at + (off_t)sizeof(e)) ==
	    e.len) {
		at += (off_t)sizeof(e) + e.len;
		if (copy_out(pos, e.start) == -1 || sp_write(STDERR_FILENO,
		    header, (size_t)e.len, until) == -1 ||
		    copy_out(e.start, e.end) == -1)
			return;
		pos = e.end;
	}
	if (cur_open && cur.start >= pos) {
		if (copy_out(pos, cur.start) == -1 || sp_write(STDERR_FILENO,
		    cur_header, (size_t)cur.len, until) == -1)
			return;
		pos = cur.start;
	}
	(void)copy_out(pos, end);
}

/*
 * A write into the spool failed with error: what it holds goes to stderr
 * now, then the line that says why and that all from here passes
 * through.  Once: it holds nothing more.
 */
void
spool_failed(int error)
{
	char line[256];
	int len;

	if (!spool_holding())
		return;
	failed = error != 0 ? error : EIO;
	show_all();
	len = snprintf(line, sizeof(line), "retry: -Q: temporary file: %s; "
	    "what it held is above, the output passes through from here\n",
	    strerror(failed));
	if (len > 0 && (size_t)len < sizeof(line))
		(void)sp_write(STDERR_FILENO, line, (size_t)len, until);
}

/* The run has ended: what is held from here is the end hook's and after. */
void
spool_mark(void)
{
	if (spool_holding() && (marked = end_now()) == -1)
		spool_failed(errno);
}

/* What is held, on stderr: all, or only what came since spool_mark(). */
void
spool_show(int since_mark)
{
	off_t end;

	if (!spool_holding())
		return;
	if (!since_mark)
		show_all();
	else if ((end = end_now()) != -1)
		(void)copy_out(marked, end);
}

/* The files go (they have no name: closing is enough); -1 with errno. */
int
spool_drop(void)
{
	int e = 0;

	if (spool != -1 && close(spool) == -1)
		e = errno;
	if (index_fd != -1 && close(index_fd) == -1)
		e = errno;
	spool = index_fd = -1;
	cur_open = 0;
	errno = e;
	return e != 0 ? -1 : 0;
}
