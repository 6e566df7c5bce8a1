/* SPDX-License-Identifier: ISC */
/*
 * Input replay, output matching and held output for retry's attempts.
 * Memory stays constant whatever the amount of data: input is copied to
 * 64 KiB of memory, then an unlinked file; output passes through one
 * 64 KiB buffer per stream.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/ioctl.h>		/* FIONREAD: of a pipe, on Linux and the BSDs */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common.h"
#include "relay.h"

/*
 * Linux: splice(2) and tee(2) move data between a pipe and a file, or two
 * pipes, inside the kernel.  With SPLICE_F_NONBLOCK they never wait for a
 * pipe, whatever its descriptor's flags: so retry writes any amount to its
 * own stdout or stderr, which it must not make non-blocking (their open
 * file descriptions are shared with the caller), and a reader that stops
 * reading still cannot stop retry's loop.  Elsewhere, and where they
 * refuse a descriptor (EINVAL), read(2) and write(2) do the same work.
 */
#define SPLICE_MAX	(1 << 20)	/* Linux's largest pipe (pipe-max-size) */

static int	 at_bound(const struct relay *);
static int	 unkept(struct relay *, off_t, const char *, size_t);
static int	 unhold(struct relay *, struct pump *);
static int	 resume_pipe(struct relay *, struct pump *);

/* ---- Helpers ------------------------------------------------------- */

static int
fail(struct relay *r, const char *what)
{
	r->failed = what;
	return -1;
}

/* A write to a temporary file failed for want of room: a full TMPDIR. */
static int
no_room(int error)
{
#ifdef EDQUOT
	if (error == EDQUOT)
		return 1;
#endif
	return error == ENOSPC;
}

/*
 * What fd takes at once without making retry wait for its reader: any
 * amount for a pipe on Linux (splice and tee, above), and for a regular
 * file or /dev/null, which never wait for one; elsewhere PIPE_BUF bytes
 * once poll(2) says it is writable, which a terminal, a socket or a pipe
 * then takes whole.  Nothing for a stream the caller closed, which
 * proc_hold_stdio() holds with /dev/null opened for reading.
 */
static enum sink
sink_of(int fd)
{
	struct stat st, null;
	int flags = fcntl(fd, F_GETFL);

	if (flags != -1 && (flags & O_ACCMODE) == O_RDONLY)
		return SINK_NONE;
	if (fstat(fd, &st) == -1)
		return SINK_SMALL;	/* writes will say what is wrong */
#ifdef SPLICE_F_NONBLOCK
	if (S_ISFIFO(st.st_mode))
		return SINK_PIPE;
#endif
	if (S_ISREG(st.st_mode))
		return SINK_FILE;
	if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	    S_ISCHR(null.st_mode) && null.st_rdev == st.st_rdev)
		return SINK_FILE;
	return SINK_SMALL;
}

/*
 * Linux: the attempt's input pipe as large as pipe-max-size allows, so
 * that one splice(2) or write(2) of the copy moves up to SPLICE_MAX, not
 * 64 KiB, between two turns of poll(2).  Where the system refuses (an
 * unprivileged user past its pipe quota, EPERM; older kernels), the pipe
 * keeps its size: nothing depends on it.
 */
static void
widen(int fd)
{
#ifdef F_SETPIPE_SZ
	if (fcntl(fd, F_SETPIPE_SZ, SPLICE_MAX) == -1)
		return;		/* refused: the default size serves */
#else
	(void)fd;
#endif
}

/* ---- Matching lines ------------------------------------------------ */

/*
 * --hint-from-stderr: p carries the attempt's stderr (with -Q, which
 * pipes both streams into one pump, out).
 */
static int
watches_hint(const struct relay *r, const struct pump *p)
{
	return r->hint_watch && (p == &r->err || (r->hold_all != -1 &&
	    p == &r->out));
}

/*
 * Does p need its lines looked at?  A pattern that has matched once in an
 * attempt needs no more; --hint-from-stderr looks at every stderr line,
 * as the last Retry-After counts.
 */
static int
wants_lines(const struct relay *r, const struct pump *p)
{
	return (r->on != NULL && !r->on_hit) ||
	    (r->stop != NULL && !r->stop_hit) || watches_hint(r, p);
}

/* --hint-from-stderr: nothing kept, as before an attempt. */
static void
forget_hint(struct relay *r)
{
	r->hint_len = 0;
	r->hint_status = 0;
	r->hint[0] = '\0';
}

/*
 * --hint-from-stderr: the oldest header kept (after the status line, when
 * there is one) goes, to make room for a newer one.
 */
static void
forget_oldest_header(struct relay *r)
{
	char *from = r->hint, *end = r->hint + r->hint_len, *nl;

	/* Every line kept ends in a newline. */
	if (r->hint_status && (nl = memchr(from, '\n', r->hint_len)) != NULL)
		from = nl + 1;
	if ((nl = memchr(from, '\n', (size_t)(end - from))) == NULL) {
		forget_hint(r);		/* no header: not reached */
		return;
	}
	memmove(from, nl + 1, (size_t)(end - (nl + 1)));
	r->hint_len -= (size_t)(nl + 1 - from);
	r->hint[r->hint_len] = '\0';
}

/*
 * --hint-from-stderr: the lines that parse_hint() reads later, as curl -D
 * /dev/stderr writes them, kept as a hint file's content would be: a
 * status line begins the text afresh (the last response counts), and a
 * header that a hint reads is added; hint_line() says which is which, so
 * that parse.c alone knows the names.  Each is cut at its first NUL (the
 * text is a C string) and to HINT_LINE_KEPT bytes (too long as a hint
 * anyway); when the text is full, its oldest header makes room, as the
 * last of each counts.
 */
static void
watch_hint(struct relay *r, const char *s, size_t n)
{
	enum hint_line kind = hint_line(s, n);
	const char *nul = memchr(s, '\0', n);

	if (kind == HINT_LINE_OTHER)
		return;
	if (nul != NULL)
		n = (size_t)(nul - s);
	if (n > HINT_LINE_KEPT)
		n = HINT_LINE_KEPT;
	if (kind == HINT_LINE_STATUS) {
		r->hint_len = 0;
		r->hint_status = 1;
	}
	while (r->hint_len + n + 1 >= sizeof(r->hint))
		forget_oldest_header(r);
	memcpy(r->hint + r->hint_len, s, n);
	r->hint_len += n;
	r->hint[r->hint_len++] = '\n';
	r->hint[r->hint_len] = '\0';
}

/*
 * Matches s[0, n), at most its first LINEMAX - 1 bytes, a line of p, in
 * place: the byte after them is lent for the NUL that regexec(3) wants,
 * and given back.
 */
static void
match_here(struct relay *r, const struct pump *p, char *s, size_t n)
{
	if (watches_hint(r, p))
		watch_hint(r, s, n > LINEMAX - 1 ? LINEMAX - 1 : n);
	if (r->on != NULL && !r->on_hit && line_matches(r->on, s, n))
		r->on_hit = 1;
	if (r->stop != NULL && !r->stop_hit && line_matches(r->stop, s, n))
		r->stop_hit = 1;
}

/*
 * Whole lines s[0, n), the byte at n lent (see line_matches), for the
 * patterns: those that memmem or one regexec of many lines can skip are.
 */
static void
match_lines(struct relay *r, char *s, size_t n)
{
	if (r->on != NULL && !r->on_hit && matcher_lines(&r->m_on, s, n))
		r->on_hit = 1;
	if (r->stop != NULL && !r->stop_hit && matcher_lines(&r->m_stop, s, n))
		r->stop_hit = 1;
}

/*
 * The part of a line that one read got: kept in p->line up to LINEMAX - 1
 * bytes, and matched as soon as it has them (the rest is skipped).
 */
static void
line_add(struct relay *r, struct pump *p, const char *s, size_t n)
{
	size_t space = LINEMAX - 1 - p->linelen;

	if (p->skipping)
		return;
	if (n > space)
		n = space;
	memcpy(p->line + p->linelen, s, n);
	p->linelen += n;
	if (p->linelen == LINEMAX - 1) {
		match_here(r, p, p->line, p->linelen);
		p->skipping = 1;
	}
}

static void
line_reset(struct pump *p)
{
	p->linelen = 0;
	p->skipping = 0;
}

/*
 * The line that ends at nl: whole in s, or begun in an earlier read and
 * kept in p->line; matched, and p ready for the next.
 */
static void
match_line(struct relay *r, struct pump *p, char *s, const char *nl)
{
	if (p->linelen > 0 || p->skipping) {
		line_add(r, p, s, (size_t)(nl - s));
		if (!p->skipping)
			match_here(r, p, p->line, p->linelen);
	} else
		match_here(r, p, s, (size_t)(nl - s));
	line_reset(p);
}

/*
 * Splits output into lines for the patterns, with memchr(3); a line that
 * is whole in s is matched where it is, one begun in an earlier read
 * from p->line.  s is writable: see match_here().
 */
static void
match_feed(struct relay *r, struct pump *p, char *s, size_t n)
{
	char *end = s + n, *nl, *last;

	if (!watches_hint(r, p) && wants_lines(r, p) &&
	    (nl = memchr(s, '\n', n)) != NULL) {
		/*
		 * The line that an earlier read began, or the first; then
		 * every whole line at once, and the start of the last.
		 */
		for (last = end; last[-1] != '\n'; last--)
			continue;
		match_line(r, p, s, nl);
		if (last - 1 > nl && wants_lines(r, p))
			match_lines(r, nl + 1, (size_t)(last - 1 - (nl + 1)));
		s = last;
	}
	while (wants_lines(r, p) &&
	    (nl = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		match_line(r, p, s, nl);
		s = nl + 1;
	}
	if (wants_lines(r, p))
		line_add(r, p, s, (size_t)(end - s));
}

/* The last line may lack its newline. */
static void
match_end(struct relay *r, struct pump *p)
{
	if (p->linelen > 0 && !p->skipping && wants_lines(r, p))
		match_here(r, p, p->line, p->linelen);
	line_reset(p);
}

/* ---- The attempt's last output, for the hooks ------------------------ */

/*
 * Whether the output that an attempt writes to fd may be relayed to keep
 * its tail: not a terminal, which the attempt keeps (an interactive
 * command must find a terminal, not a pipe), and not closed (an attempt
 * keeps its EBADF there).
 */
int
relay_can_keep(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags != -1 && (flags & O_ACCMODE) != O_RDONLY && !isatty(fd);
}

/* fd and other lead to one file, as after 2>&1. */
static int
one_file(int fd, int other)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstat(other, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * RETRY_LOG is wanted: each attempt's last TAIL_KEPT bytes of stdout and
 * stderr, as they are read, both streams in one ring; a stream that
 * relay_can_keep() allows gets a pump for it.
 */
void
relay_keep_tail(struct relay *r)
{
	r->tail_wanted = 1;
	r->tail_of[STDOUT_FILENO] = relay_can_keep(STDOUT_FILENO);
	r->tail_of[STDERR_FILENO] = relay_can_keep(STDERR_FILENO);
	r->tail_one = r->tail_of[STDOUT_FILENO] &&
	    r->tail_of[STDERR_FILENO] && one_file(STDOUT_FILENO, STDERR_FILENO);
	r->sink[STDOUT_FILENO] = sink_of(STDOUT_FILENO);
	r->sink[STDERR_FILENO] = sink_of(STDERR_FILENO);
}

/* Bytes of p that go into the tail: the attempt's, not the held file's. */
static int
keeps_tail(const struct relay *r, const struct pump *p)
{
	return r->tail_wanted && !p->file;
}

/* n bytes of the attempt's output, at the end of the tail's ring. */
static void
keep_tail(struct relay *r, const struct pump *p, const char *s, size_t n)
{
	size_t at, first;

	if (!keeps_tail(r, p))
		return;
	if (n >= TAIL_KEPT) {
		memcpy(r->tail, s + n - TAIL_KEPT, TAIL_KEPT);
		r->tail_head = 0;
		r->tail_len = TAIL_KEPT;
		return;
	}
	at = (r->tail_head + r->tail_len) % TAIL_KEPT;
	first = TAIL_KEPT - at < n ? TAIL_KEPT - at : n;
	memcpy(r->tail + at, s, first);
	memcpy(r->tail, s + first, n - first);
	if ((r->tail_len += n) > TAIL_KEPT) {
		r->tail_head = (r->tail_head + r->tail_len - TAIL_KEPT) %
		    TAIL_KEPT;
		r->tail_len = TAIL_KEPT;
	}
}

static void
reverse(char *s, size_t n)
{
	char c;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		c = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = c;
	}
}

/*
 * The last output of the attempt that ended (empty before any, or with
 * nothing kept): the ring turned in place to begin at its oldest byte.
 */
const char *
relay_tail(struct relay *r, size_t *len)
{
	reverse(r->tail, r->tail_head);
	reverse(r->tail + r->tail_head, TAIL_KEPT - r->tail_head);
	reverse(r->tail, TAIL_KEPT);
	r->tail_head = 0;
	*len = r->tail_len;
	return r->tail;
}

/* ---- Setting up ---------------------------------------------------- */

static void
pump_reset(const struct relay *r, struct pump *p, int from, int to)
{
	p->from = from;
	p->to = to;
	p->file = p->full = p->draining = p->unranged = 0;
	p->sink = to >= 0 && to <= STDERR_FILENO ? r->sink[to] : SINK_SMALL;
	p->pos = 0;
	p->off = p->len = 0;
	line_reset(p);
}

/* A pipe from the child's stream to retry's fd `to`, read without blocking. */
static int
open_pump(struct relay *r, struct pump *p, int to, int *child_end)
{
	int fds[2];

	if (new_pipe(fds) == -1 || nonblocking(fds[0]) == -1)
		return -1;
	pump_reset(r, p, fds[0], to);
	*child_end = fds[1];
	return 0;
}

static int
close_source(struct relay *r, struct pump *p)
{
	int fd = p->from;

	if (p == &r->out && r->resume != -1)
		return resume_pipe(r, p);	/* the held part is out */
	match_end(r, p);
	p->from = -1;
	p->full = 0;
	return close(fd) == -1 ? fail(r, "close") : 0;
}

/*
 * A regular file on stdin is read again from where retry found it.
 * --replay-stdin copies anything else to a file as it arrives, spliced
 * from a pipe; the caller refuses a terminal.  By default a pipe or a
 * socket is copied too, memory first, then a file, up to REPLAY_BOUND:
 * a retried attempt must not run silently on less input than the first
 * had, as it would on a shared pipe that the first has emptied.  A
 * terminal, /dev/null and other devices are never copied: what an attempt
 * reads there was typed or is nothing.
 */
static int
init_input(struct relay *r, enum input mode)
{
	struct stat st;
	int known = fstat(STDIN_FILENO, &st) == 0;

	if (mode == INPUT_SHARED ||
	    (mode == INPUT_BOUNDED && !fd_holds_data(STDIN_FILENO)))
		return 0;
	if (known && S_ISREG(st.st_mode)) {
		r->start_offset = lseek(STDIN_FILENO, 0, SEEK_CUR);
		r->rewind = r->start_offset != -1;
	} else if (mode == INPUT_REPLAYED) {
		if ((r->copy = scratch_file()) == -1)
			return fail(r, "--replay-stdin");
		/* A closed stdin is held by /dev/null (retry.c): empty. */
		r->replay = 1;
#ifdef SPLICE_F_NONBLOCK
		r->in_pipe = known && S_ISFIFO(st.st_mode);
		r->copy_spliced = 1;
#endif
	} else if (known && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		r->replay = 1;
		r->bound = REPLAY_BOUND;
#ifdef SPLICE_F_NONBLOCK
		r->in_pipe = S_ISFIFO(st.st_mode);
#endif
	}
	return 0;
}

/*
 * count: a failed attempt's output on stdout will stay there before the
 * next one's (retry cmd | jq), and the run loop wants to say how much.
 * On a file the offset tells; a pipe or a socket gets a pump that counts
 * what it passes on.  Nothing for a terminal, where the reader sees it.
 */
static void
init_count(struct relay *r, int count)
{
	struct stat st;
	int flags;

	r->count_out = r->out_append = 0;
	r->out_bytes = 0;
	r->out_start = -1;
	r->out_counted = -1;
	if (!count || !fd_holds_data(STDOUT_FILENO) ||
	    fstat(STDOUT_FILENO, &st) == -1)
		return;
	if (S_ISREG(st.st_mode)) {
		r->out_start = 0;	/* read before each attempt */
		flags = fcntl(STDOUT_FILENO, F_GETFL);
		r->out_append = flags != -1 && (flags & O_APPEND) != 0;
	} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		r->count_out = 1;
}

/*
 * Sets what each attempt's stdio will be.  Only when output is relayed
 * are retry's stdout and stderr looked at (sink_of).  count: say how much
 * each attempt put on stdout (init_count).
 */
int
relay_init(struct relay *r, enum input input, int hold, int hold_all,
    int hint, int count, const regex_t *on, const regex_t *stop)
{
	r->on = on;
	r->stop = stop;
	/* No faster way yet: relay_patterns() finds one. */
	memset(&r->m_on, 0, sizeof(r->m_on));
	memset(&r->m_stop, 0, sizeof(r->m_stop));
	r->on_hit = r->stop_hit = 0;
	r->hint_watch = hint;
	forget_hint(r);
	r->rewind = r->replay = r->in_pipe = r->source_eof = 0;
	r->bound = 0;
	r->cut = r->spill_error = r->unkept = 0;
	r->pending = 0;
	r->copy_spliced = r->child_full = 0;
	r->copy = r->to_child = r->held = -1;
	r->unheld = 0;
	r->resume = -1;
	r->unheld_len = 0;
	r->ended = 0;
	r->last = 0;
	r->hold_all = hold_all;
	r->released = 0;
	r->copied = r->fed = 0;
	r->child_in = -1;
	r->given = r->passed = r->read_most = r->read_passed = 0;
	r->feed_off = r->feed_len = 0;
	r->sink[0] = r->sink[1] = r->sink[2] = SINK_SMALL;
	init_count(r, count && !hold && hold_all == -1);
	if (hold || hint || r->count_out || on != NULL || stop != NULL) {
		r->sink[STDOUT_FILENO] = sink_of(STDOUT_FILENO);
		r->sink[STDERR_FILENO] = sink_of(STDERR_FILENO);
	}
	pump_reset(r, &r->out, -1, -1);
	pump_reset(r, &r->err, -1, -1);
	r->out.buf = r->outbuf;
	r->out.line = r->outline;
	r->err.buf = r->errbuf;
	r->err.line = r->errline;
	r->child_fd[0] = r->child_fd[1] = r->child_fd[2] = -1;
	r->failed = NULL;
	r->tail_wanted = 0;
	r->tail_of[0] = r->tail_of[1] = r->tail_of[2] = r->tail_one = 0;
	r->tail_head = r->tail_len = 0;
	if (init_input(r, input) == -1)
		return -1;
	if (hold && (r->held = scratch_file()) == -1)
		return fail(r, "--buffer-stdout");
	return 0;
}

/*
 * The texts of --on-output and --stop-on-output (or NULL), compiled in
 * relay_init()'s: how to match them faster than line by line.
 */
int
relay_patterns(struct relay *r, const char *on, const char *stop)
{
	if ((on != NULL && matcher_init(&r->m_on, r->on, on) == -1) ||
	    (stop != NULL && matcher_init(&r->m_stop, r->stop, stop) == -1))
		return fail(r, "regcomp");
	return 0;
}

/*
 * One chunk of an attempt's stdout, matched as relayed output is; end:
 * the stream ends after it.  For the fuzzer, which compares it with
 * regexec(3) line by line.
 */
void
relay_match_text(struct relay *r, char *s, size_t n, int end)
{
	match_feed(r, &r->out, s, n);
	if (end)
		match_end(r, &r->out);
}

/*
 * The attempt writes to a regular file on stdout itself: what it wrote is
 * how far the offset of its own open file description moved.  A file
 * opened with O_APPEND (>>, a log that others append to as well) is
 * opened again for it (Linux's /proc/self/fd/1 opens the file itself),
 * so that the others' writes move the caller's offset, not the attempt's;
 * each write of the attempt still goes to the end.  One without it, or
 * where that fails, shares retry's offset with whoever else writes it.
 * Any lseek(2) that fails turns counting off for the run.
 */
static int
count_by_offset(struct relay *r)
{
	int flags = fcntl(STDOUT_FILENO, F_GETFL), fd = -1;

	if (r->out_append && flags != -1)
		fd = open("/proc/self/fd/1", (flags & (O_ACCMODE | O_APPEND |
		    O_SYNC | O_DSYNC)) | O_CLOEXEC);
	r->out_counted = fd != -1 ? fd : STDOUT_FILENO;
	r->out_start = lseek(r->out_counted, 0, fd != -1 ? SEEK_END : SEEK_CUR);
	if (r->out_start == -1) {
		r->out_counted = -1;
		return fd != -1 ? close(fd) : 0;
	}
	if (fd != -1)
		r->child_fd[1] = fd;
	return 0;
}

/* Before each fork: the attempt's stdin, stdout and stderr. */
int
relay_prepare(struct relay *r)
{
	int fds[2], matching = r->on != NULL || r->stop != NULL;

	r->on_hit = r->stop_hit = 0;
	forget_hint(r);
	r->tail_head = r->tail_len = 0;
	line_reset(&r->out);
	line_reset(&r->err);
	if (r->rewind && lseek(STDIN_FILENO, r->start_offset, SEEK_SET) == -1)
		return fail(r, "stdin");
	if (r->replay) {
		if (new_pipe(fds) == -1 || nonblocking(fds[1]) == -1)
			return fail(r, "pipe");
		widen(fds[1]);
		r->child_fd[0] = r->child_in = fds[0];
		r->to_child = fds[1];
		r->fed = r->given = 0;
		r->feed_off = r->feed_len = 0;
		r->child_full = 0;
	}
	if (r->hold_all != -1) {
		/*
		 * -Q: both streams into one pipe, in the order written, that
		 * relay copies into the spool: a full disk is retry's to
		 * handle (spool_gone), never an error of the attempt's.
		 * Once the spool has failed, to stderr, where -Q shows them.
		 */
		if (!spool_holding())
			r->hold_all = STDERR_FILENO;
		if (open_pump(r, &r->out, r->hold_all, &r->child_fd[1]) == -1)
			return fail(r, "pipe");
		if (r->hold_all != STDERR_FILENO)
			r->out.sink = SINK_FILE;
		r->child_fd[2] = r->child_fd[1];
		return 0;
	}
	r->ended = 0;
	if (r->tail_one && !matching && !r->hint_watch && r->held == -1) {
		/*
		 * RETRY_LOG of an attempt whose stdout and stderr are one
		 * file (cron's >>log 2>&1, a runner's one pipe): one pipe
		 * for both, so that its lines reach the file in the order
		 * written, as without retry in between.
		 */
		if (open_pump(r, &r->out, STDOUT_FILENO, &r->child_fd[1]) == -1)
			return fail(r, "pipe");
		r->child_fd[2] = r->child_fd[1];
		r->out_bytes = 0;
		return 0;
	}
	if (r->held != -1 && (r->last || r->unheld)) {
		/*
		 * -O and an attempt that no other can follow: its output
		 * would go to stdout at its end anyway, so it goes there as
		 * it comes, matched on the way if need be (below).
		 */
		if (close(r->held) == -1)
			return fail(r, "close");
		r->held = -1;
	}
	if (r->held != -1) {
		/*
		 * A new file for each attempt, which retry fills from the
		 * attempt's pipe: when it has no room, retry (not the
		 * attempt) learns it, and passes the output on (unhold).
		 */
		if (close(r->held) == -1 || (r->held = scratch_file()) == -1)
			return fail(r, "temporary file");
		if (open_pump(r, &r->out, r->held, &r->child_fd[1]) == -1)
			return fail(r, "pipe");
		r->out.sink = SINK_FILE;
		widen(r->child_fd[1]);
		r->released = 0;
	} else if ((matching || r->count_out || r->tail_of[STDOUT_FILENO]) &&
	    open_pump(r, &r->out, STDOUT_FILENO, &r->child_fd[1]) == -1)
		return fail(r, "pipe");
	r->out_bytes = 0;
	if (r->out_start != -1 && r->child_fd[1] == -1 &&
	    count_by_offset(r) == -1)
		return fail(r, "close");
	if ((matching || r->hint_watch || r->tail_of[STDERR_FILENO]) &&
	    open_pump(r, &r->err, STDERR_FILENO, &r->child_fd[2]) == -1)
		return fail(r, "pipe");
	return 0;
}

/*
 * Before relay_prepare(): the attempt about to start is the run's last
 * (no attempt can follow it), or may not be.  -O then sends its output to
 * stdout as it comes rather than at its end: the same bytes, sooner.
 */
void
relay_last(struct relay *r, int last)
{
	r->last = last;
}

/* After the fork, in retry: the child's ends are the child's alone. */
int
relay_forked(struct relay *r)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (r->child_fd[i] != -1 && r->child_fd[i] != r->held &&
		    (i < 2 || r->child_fd[2] != r->child_fd[1]) &&
		    r->child_fd[i] != r->out_counted &&
		    r->child_fd[i] != r->child_in && close(r->child_fd[i]) == -1)
			return fail(r, "close");
	}
	r->child_fd[0] = r->child_fd[1] = r->child_fd[2] = -1;
	return 0;
}

/* ---- What to wait for ------------------------------------------------ */

static int
watch(struct pollfd *fds, int n, int fd, short events)
{
	fds[n].fd = fd;
	fds[n].events = events;
	fds[n].revents = 0;
	return n + 1;
}

/* Output that waits for its stream to take it. */
static int
pump_blocked(const struct pump *p)
{
	return p->len > 0 || p->full;
}

/*
 * Fills fds (RELAY_NFDS at most) with what relay waits for; returns how
 * many.  Work that needs no wait (draining a finished attempt, matching
 * its held output, input that has not been offered yet) is due at once:
 * *now is set.
 */
int
relay_poll(struct relay *r, struct pollfd *fds, int *now)
{
	struct pump *pumps[2] = { &r->out, &r->err }, *p;
	int n = 0, i;

	if (r->replay && !r->source_eof && !at_bound(r))
		n = watch(fds, n, STDIN_FILENO, POLLIN);
	if (r->to_child != -1 && (r->fed < r->copied ||
	    r->feed_off < r->feed_len)) {
		if (r->child_full)
			n = watch(fds, n, r->to_child, POLLOUT);
		else
			*now = 1;
	} else if (r->to_child != -1 && (r->source_eof ||
	    (at_bound(r) && r->pending > 0)))
		*now = 1;	/* all given, the attempt's end of input; or
				 * what was read before the copy failed */
	else if (r->to_child != -1 && at_bound(r))
		n = watch(fds, n, STDIN_FILENO, POLLIN);	/* pass_input */
	for (i = 0; i < 2; i++) {
		p = pumps[i];
		if (pump_blocked(p))
			n = watch(fds, n, p->to, POLLOUT);
		else if (p->from != -1 && p->draining)
			*now = 1;
		else if (p->from != -1)
			n = watch(fds, n, p->from, POLLIN);
	}
	return n;
}

/* Did poll(2) find fd ready (or in error, which the I/O will tell)? */
static int
ready(const struct pollfd *fds, int n, int fd)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i].fd == fd)
			return fds[i].revents != 0;
	return 0;
}

/* ---- Input: stdin to the copy, the copy to the attempt ------------------ */

/* The copy holds all it may: stdin waits for an attempt (pass_input). */
static int
at_bound(const struct relay *r)
{
	return r->bound != 0 && r->copied >= r->bound;
}

/* At most this much of stdin goes to the copy at once. */
static size_t
room(const struct relay *r, size_t most)
{
	if (r->bound != 0 && (off_t)most > r->bound - r->copied)
		return (size_t)(r->bound - r->copied);
	return most;
}

static int
took_input(struct relay *r, ssize_t n)
{
	if (n == 0)
		r->source_eof = 1;
	r->copied += n;
	return 0;
}

/*
 * The copy has filled mem: it goes on in a file.  Without one (no
 * TMPDIR, a full disk) the bound becomes what mem holds: the run goes on,
 * and only a retry that would need more is refused (relay_input_cut).
 */
static int
spill(struct relay *r)
{
	if ((r->copy = scratch_file()) == -1 ||
	    pwrite(r->copy, r->mem, (size_t)r->copied, 0) != r->copied) {
		r->spill_error = errno != 0 ? errno : EIO;
		if (r->copy != -1 && close(r->copy) == -1)
			return fail(r, "close");
		r->copy = -1;
		r->bound = r->copied;
		return 0;
	}
#ifdef SPLICE_F_NONBLOCK
	r->copy_spliced = 1;
#endif
	return 0;
}

/* Without -I, the start of the input: into mem, no file yet. */
static int
take_into_mem(struct relay *r)
{
	ssize_t n;

	if (r->copied == (off_t)sizeof(r->mem))
		return spill(r);
	n = read(STDIN_FILENO, r->mem + r->copied,
	    room(r, sizeof(r->mem) - (size_t)r->copied));
	if (n == -1)
		return errno == EINTR || errno == EAGAIN ? 0 : fail(r, "stdin");
	return took_input(r, n);
}

/*
 * Input that arrived goes to the copy at once, so the producer never
 * waits (but at the bound).  From a pipe, splice(2) moves it into the
 * file without passing through retry; SPLICE_F_NONBLOCK, because another
 * reader of a shared stdin may have emptied it since poll(2).  Each byte
 * is then copied once, into the file's pages, which feed_child() lends
 * to the attempt's pipe.  tee(2) to the attempt first would copy no less
 * and make two paths to keep in step, so there is none.
 */
static int
take_input(struct relay *r)
{
	ssize_t n, w;
	off_t at;

	if (r->copy == -1)
		return take_into_mem(r);
#ifdef SPLICE_F_NONBLOCK
	if (r->in_pipe) {
		loff_t to = r->copied;

		n = splice(STDIN_FILENO, NULL, r->copy, &to,
		    room(r, SPLICE_MAX), SPLICE_F_NONBLOCK);
		if (n >= 0)
			return took_input(r, n);
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		if (no_room(errno))
			return unkept(r, 0, NULL, 0);	/* the rest is in stdin */
		if (errno != EINVAL)
			return fail(r, "temporary file");
		r->in_pipe = 0;		/* a file system without splice */
	}
#endif
	n = read(STDIN_FILENO, r->chunk, room(r, sizeof(r->chunk)));
	if (n == -1)
		return errno == EINTR || errno == EAGAIN ? 0 : fail(r, "stdin");
	for (at = 0; at < n; at += w)
		if ((w = pwrite(r->copy, r->chunk + at, (size_t)(n - at),
		    r->copied + at)) == -1)
			return no_room(errno) ? unkept(r, at, r->chunk + at,
			    (size_t)(n - at)) : fail(r, "temporary file");
	return took_input(r, n);
}

/*
 * The copy's file has no room for more (a full TMPDIR): the copy ends with
 * the kept bytes it has, and what stdin still brings passes through to the
 * attempts (pass_input), kept nowhere, from the n bytes of rest that were
 * read but did not fit (held in mem, which the file has made free).  No
 * attempt is stopped for it; a retry that would need more than the copy
 * is refused (INPUT_UNKEPT).
 */
static int
unkept(struct relay *r, off_t kept, const char *rest, size_t n)
{
	r->unkept = errno;
	r->copied += kept;
	r->bound = r->copied;
	if (n > 0)
		memcpy(r->mem, rest, n);
	r->pending = n;
	return 0;
}

/* The attempt closed its stdin: it gets no more of the copy. */
static int
child_gone(struct relay *r)
{
	r->fed = r->copied;
	r->feed_off = r->feed_len = 0;
	if (close(r->to_child) == -1)
		return fail(r, "close");
	r->to_child = -1;
	return 0;
}

/* A write to the attempt's stdin failed: full, interrupted or closed. */
static int
feed_failed(struct relay *r)
{
	if (errno == EAGAIN)
		r->child_full = 1;
	else if (errno == EPIPE)
		return child_gone(r);
	else if (errno != EINTR)
		return fail(r, "pipe");
	return 0;
}

/* What is in feed, to the attempt, as much as its pipe takes. */
static int
write_feed(struct relay *r, int counts)
{
	ssize_t n;

	n = write(r->to_child, r->feed + r->feed_off,
	    r->feed_len - r->feed_off);
	if (n == -1)
		return feed_failed(r);
	r->given += n;
	if (counts)
		r->fed += n;
	if ((r->feed_off += (size_t)n) == r->feed_len)
		r->feed_off = r->feed_len = 0;
	return 0;
}

/*
 * Without splice(2): the copy is read once into feed and written from
 * there as the pipe takes it, so that no byte is read twice.
 */
static int
feed_buffered(struct relay *r)
{
	size_t want = sizeof(r->feed);
	ssize_t n;

	if (r->feed_off == r->feed_len) {
		if ((off_t)want > r->copied - r->fed)
			want = (size_t)(r->copied - r->fed);
		if ((n = pread(r->copy, r->feed, want, r->fed)) <= 0) {
			if (n == 0)
				errno = EIO;	/* the copy lost its end */
			return fail(r, "temporary file");
		}
		r->feed_off = 0;
		r->feed_len = (size_t)n;
	}
	return write_feed(r, 1);
}

/*
 * The attempt gets the copy from its start.  One that stops reading or
 * closes its stdin stops getting it; the copy stays whole for the next.
 * splice(2) gives the pipe the copy's pages, no copy through retry.
 */
static int
feed_child(struct relay *r)
{
#ifdef SPLICE_F_NONBLOCK
	size_t want = SPLICE_MAX;
	loff_t at = r->fed;
#endif
	ssize_t n;

	if (r->copy == -1) {
		n = write(r->to_child, r->mem + r->fed,
		    (size_t)(r->copied - r->fed));
		if (n == -1)
			return feed_failed(r);
		r->fed += n;
		r->given += n;
		return 0;
	}
#ifdef SPLICE_F_NONBLOCK
	if (r->copy_spliced) {
		if ((off_t)want > r->copied - r->fed)
			want = (size_t)(r->copied - r->fed);
		n = splice(r->copy, &at, r->to_child, NULL, want,
		    SPLICE_F_NONBLOCK);
		if (n > 0) {
			r->fed += n;
			r->given += n;
			return 0;
		}
		if (n == 0) {
			errno = EIO;	/* the copy lost its end */
			return fail(r, "temporary file");
		}
		if (errno != EINVAL)
			return feed_failed(r);
		r->copy_spliced = 0;	/* a file system without splice */
	}
#endif
	return feed_buffered(r);
}

/*
 * Past the bound, once the attempt has had all the copy: stdin passes
 * through feed to the attempt, a chunk at a time as it takes them, and
 * is kept nowhere.  The copy is then cut: no later attempt could get the
 * whole input, and the run loop ends the run rather than retry.  The
 * producer waits for the attempt, and for nobody when none runs.
 */
static int
pass_input(struct relay *r, int readable)
{
	ssize_t n;

	if (r->feed_off == r->feed_len && r->pending > 0) {
		memcpy(r->feed, r->mem, r->pending);	/* see unkept() */
		n = (ssize_t)r->pending;
		r->pending = 0;
		r->cut = 1;
		r->passed += n;
		r->feed_off = 0;
		r->feed_len = (size_t)n;
	} else if (r->feed_off == r->feed_len) {
		if (!readable)
			return 0;
		n = read(STDIN_FILENO, r->feed, sizeof(r->feed));
		if (n == -1)
			return errno == EINTR || errno == EAGAIN ? 0 :
			    fail(r, "stdin");
		if (n == 0) {
			r->source_eof = 1;	/* it all fitted after all */
			return 0;
		}
		r->cut = 1;
		r->passed += n;
		r->feed_off = 0;
		r->feed_len = (size_t)n;
	}
	return write_feed(r, 0);
}

/* ---- Output: the attempt's pipes, or the held file, to retry's own ------ */

/*
 * retry's own stream has no reader (EPIPE): the source closes too, so
 * that the child learns it as it would have without retry in between.
 */
static int
output_gone(struct relay *r, struct pump *p)
{
	p->off = p->len = 0;
	p->full = 0;
	return p->from == -1 ? 0 : close_source(r, p);
}

/*
 * retry's own stream cannot be written (closed, EBADF; a device's EIO; a
 * full disk): what comes is still read and matched, and dropped, for this
 * attempt and the later ones.  Closing the source instead would kill the
 * attempt with SIGPIPE and hide its later lines from the patterns.
 */
static int
discard(struct relay *r, struct pump *p)
{
	p->sink = SINK_NONE;
	if (p->to >= 0 && p->to <= STDERR_FILENO)
		r->sink[p->to] = SINK_NONE;
	p->off = p->len = 0;
	p->full = 0;
	return 0;
}

/*
 * -Q's spool could not take p's bytes (a full disk): it shows what it
 * held, and p goes on to stderr from the first byte it did not take.
 */
static int
spool_gone(struct relay *r, struct pump *p)
{
	spool_failed(errno);
	r->sink[STDERR_FILENO] = sink_of(STDERR_FILENO);
	p->to = r->hold_all = STDERR_FILENO;
	p->sink = r->sink[STDERR_FILENO];
	return 0;
}

/* n bytes of the attempt went out: counted when they went to stdout. */
static void
moved(struct relay *r, const struct pump *p, ssize_t n)
{
	if (p == &r->out && !p->file && p->to == STDOUT_FILENO)
		r->out_bytes += n;
}

/*
 * Writes from buf as much as p->to takes without waiting (see sink_of).
 * A reader that has gone (EPIPE) is told to the attempt: output_gone().
 */
static int
flush(struct relay *r, struct pump *p)
{
	size_t want = p->len - p->off;
	ssize_t n;

	if (p->sink == SINK_NONE)
		return discard(r, p);
	if (p->sink != SINK_FILE && want > PIPE_BUF)
		want = PIPE_BUF;
	if ((n = write(p->to, p->buf + p->off, want)) >= 0) {
		moved(r, p, n);
		if ((p->off += (size_t)n) == p->len)
			p->off = p->len = 0;
		return 0;
	}
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	if (p->to == r->hold_all && p->to != STDERR_FILENO)
		return spool_gone(r, p);
	if (p->to == r->held && p->to != -1)
		return no_room(errno) ? unhold(r, p) : fail(r, "temporary file");
	return errno == EPIPE ? output_gone(r, p) : discard(r, p);
}

/*
 * read(2) and write(2): read when the buffer is empty, matched as it
 * comes; a file or /dev/null takes it at once, anything else once poll(2)
 * says so.
 */
static int
pass_buffered(struct relay *r, struct pump *p)
{
	ssize_t n;

	if (p->file)
		n = pread(p->from, p->buf, CHUNK, p->pos);
	else
		n = read(p->from, p->buf, CHUNK);
	if (n > 0) {
		p->pos += n;
		keep_tail(r, p, p->buf, (size_t)n);
		if (!p->file)
			match_feed(r, p, p->buf, (size_t)n);
		p->off = 0;
		p->len = (size_t)n;
		return p->sink == SINK_FILE || p->sink == SINK_NONE ?
		    flush(r, p) : 0;
	}
	if (n == -1 && errno == EINTR)
		return 0;
	if (n == -1 && errno != EAGAIN)
		return fail(r, p->file ? "temporary file" : "pipe");
	/* End of file, or all that a finished attempt left in the pipe. */
	if (n == 0 || p->draining)
		return close_source(r, p);
	return 0;
}

#ifdef SPLICE_F_NONBLOCK
/*
 * splice(2) or tee(2) moved nothing.  EAGAIN: p->to is full or, from a
 * pipe, the source is empty (FIONREAD tells which); EPIPE: retry's stream
 * has no reader; EINVAL: they cannot serve these descriptors, read(2) and
 * write(2) will.
 */
static int
not_spliced(struct relay *r, struct pump *p)
{
	int queued = 0;

	if (errno == EINTR)
		return 0;
	if (p->to == r->held && p->to != -1 && no_room(errno))
		return unhold(r, p);
	if (p->to == r->held && p->to != -1 && errno == EINVAL) {
		p->unranged = 1;	/* no splice into this file system */
		return 0;
	}
	if (errno == EPIPE)
		return output_gone(r, p);
	if (errno == EINVAL) {	/* for this run's later attempts too */
		p->sink = SINK_SMALL;
		if (p->to >= 0 && p->to <= STDERR_FILENO)
			r->sink[p->to] = SINK_SMALL;
		return 0;
	}
	if (errno != EAGAIN)
		return fail(r, p->file ? "temporary file" : "pipe");
	if (!p->file && ioctl(p->from, FIONREAD, &queued) == -1)
		return fail(r, "pipe");
	if (p->file || queued > 0)
		p->full = 1;
	else if (p->draining)
		return close_source(r, p);
	return 0;
}

/* Output that no pattern needs to see, to a pipe: moved in the kernel. */
static int
pass_spliced(struct relay *r, struct pump *p)
{
	loff_t pos = p->pos;
	ssize_t n;

	n = splice(p->from, p->file ? &pos : NULL, p->to, NULL, SPLICE_MAX,
	    SPLICE_F_NONBLOCK);
	if (n == -1)
		return not_spliced(r, p);
	if (n == 0)
		return close_source(r, p);
	p->pos = pos;
	moved(r, p, n);
	return 0;
}

/* read(2) until n bytes have come that are known to be there. */
static int
read_exactly(int fd, char *buf, size_t n)
{
	ssize_t got;

	while (n > 0) {
		if ((got = read(fd, buf, n)) > 0) {
			buf += got;
			n -= (size_t)got;
		} else if (got == 0 || errno != EINTR) {
			if (got == 0)
				errno = EIO;
			return -1;
		}
	}
	return 0;
}

/*
 * Output that the patterns must see, to a pipe: tee(2) puts what p->to
 * takes there, without a copy through retry, then read(2) takes the same
 * bytes out of the child's pipe for matching.
 */
static int
pass_teed(struct relay *r, struct pump *p)
{
	ssize_t n;

	n = tee(p->from, p->to, CHUNK, SPLICE_F_NONBLOCK);
	if (n == -1)
		return not_spliced(r, p);
	if (n == 0)
		return close_source(r, p);
	if (read_exactly(p->from, p->buf, (size_t)n) == -1)
		return fail(r, "pipe");
	moved(r, p, n);
	keep_tail(r, p, p->buf, (size_t)n);
	match_feed(r, p, p->buf, (size_t)n);
	return 0;
}
#endif

#ifdef HAVE_COPY_FILE_RANGE
/*
 * The held file to a regular file (-O with stdout on a file): moved in
 * the kernel, its blocks shared where the file system can.  The held file
 * is read at its own offset; the destination's, shared with the caller,
 * moves on as a write(2) would move it.  Any refusal (EXDEV, ENOSYS,
 * EINVAL for /dev/null, EBADF for O_APPEND) or error: read(2) and
 * write(2) take over for this attempt, and say what is wrong if anything.
 */
static int
pass_ranged(struct relay *r, struct pump *p)
{
	loff_t pos = p->pos;
	ssize_t n;

	n = copy_file_range(p->from, &pos, p->to, NULL, SPLICE_MAX, 0);
	if (n == -1 && errno == EINTR)
		return 0;
	/* 0 is the end, or a file system that copies nothing (procfs):
	 * pread(2) tells which. */
	if (n <= 0) {
		p->unranged = 1;
		return pass_buffered(r, p);
	}
	p->pos = pos;
	moved(r, p, n);
	return 0;
}
#endif

/*
 * -O's file has no room for the attempt's output (a full TMPDIR): rather
 * than lose it, retry sends what the file holds to stdout, then what it
 * refused (p->buf's rest), then the pipe as it comes (resume_pipe).  So
 * stdout gets the attempt's output whole, after one line that says so;
 * no later attempt's may follow it there (OUTPUT_UNHELD).
 */
static int
unhold(struct relay *r, struct pump *p)
{
	int from, error = errno;
	off_t held = lseek(r->held, 0, SEEK_CUR);

	r->unheld = error;
	warningx("-O: no room in %s to hold the attempt's output (%s): the "
	    "%lld bytes held and the rest go to standard output now, and no "
	    "retry may follow", temp_dir(), strerror(r->unheld),
	    (long long)(held > 0 ? held : 0));
	r->unheld_len = p->len - p->off;
	memcpy(r->unheld_buf, p->buf + p->off, r->unheld_len);
	if ((from = fcntl(r->held, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) == -1)
		return fail(r, "temporary file");
	r->resume = p->from;
	r->released = 1;	/* relay_release() has nothing more to send */
	p->from = from;
	p->to = STDOUT_FILENO;
	p->sink = r->sink[STDOUT_FILENO];
	p->file = p->draining = 1;	/* a file: read to its end */
	p->pos = 0;
	p->off = p->len = 0;
	p->full = p->unranged = 0;
	return 0;
}

/* The held part is out: on to what the file refused, then the pipe. */
static int
resume_pipe(struct relay *r, struct pump *p)
{
	int fd = p->from;

	p->from = r->resume;
	r->resume = -1;
	p->file = p->unranged = 0;
	p->draining = r->ended;
	p->pos = 0;
	memcpy(p->buf, r->unheld_buf, r->unheld_len);
	p->off = 0;
	p->len = r->unheld_len;
	r->unheld_len = 0;
	return close(fd) == -1 ? fail(r, "close") : 0;
}

/* Moves what the source has to p->to, the way p->sink allows. */
static int
pass(struct relay *r, struct pump *p)
{
#ifdef HAVE_COPY_FILE_RANGE
	if (p->file && p->sink == SINK_FILE && !p->unranged)
		return pass_ranged(r, p);
#endif
#ifdef SPLICE_F_NONBLOCK
	/* What the patterns or the tail must see passes through retry. */
	if (p->sink == SINK_PIPE)
		return p->file || !(wants_lines(r, p) || keeps_tail(r, p)) ?
		    pass_spliced(r, p) : pass_teed(r, p);
	/* -O's pipe into its file: what the file takes leaves the pipe. */
	if (p->to == r->held && p->to != -1 && !wants_lines(r, p) &&
	    !keeps_tail(r, p) && !p->unranged)
		return pass_spliced(r, p);
#endif
	return pass_buffered(r, p);
}

/* One step of a pump, when poll(2) found the side it waits for ready. */
static int
run_pump(struct relay *r, struct pump *p, const struct pollfd *fds, int nfds)
{
	if (pump_blocked(p)) {
		if (!ready(fds, nfds, p->to))
			return 0;
		p->full = 0;
		if (p->len > 0)
			return flush(r, p);
	} else if (p->from == -1 ||
	    !(p->draining || ready(fds, nfds, p->from)))
		return 0;
	return pass(r, p);
}

/*
 * Does the I/O that poll(2) found ready in fds, filled by relay_poll(),
 * and what was due at once.  Input that just arrived is offered to the
 * attempt in the same turn, unless its pipe was full.
 */
int
relay_service(struct relay *r, const struct pollfd *fds, int n)
{
	int readable = r->replay && !r->source_eof &&
	    ready(fds, n, STDIN_FILENO);

	if (readable && !at_bound(r)) {
		if (take_input(r) == -1)
			return -1;
		readable = 0;	/* read once a turn: stdin may block */
	}
	if (r->to_child != -1 && r->child_full && ready(fds, n, r->to_child))
		r->child_full = 0;
	if (r->to_child != -1 && r->fed < r->copied && !r->child_full) {
		if (feed_child(r) == -1)
			return -1;
	} else if (r->to_child != -1 && at_bound(r) && !r->child_full &&
	    pass_input(r, readable) == -1)
		return -1;
	if (r->to_child != -1 && r->source_eof && r->fed == r->copied) {
		if (close(r->to_child) == -1)
			return fail(r, "close");
		r->to_child = -1;	/* end of input for the attempt */
	}
	if (run_pump(r, &r->out, fds, n) == -1 ||
	    run_pump(r, &r->err, fds, n) == -1)
		return -1;
	return 0;
}

/* All output is out. */
int
relay_output_done(const struct relay *r)
{
	return r->out.from == -1 && !pump_blocked(&r->out) &&
	    r->err.from == -1 && !pump_blocked(&r->err);
}

/*
 * --hint-from-stderr: the attempt's last status line and the headers of a
 * hint after it, a line each, or NULL when it wrote none.
 */
const char *
relay_hint(const struct relay *r)
{
	return r->hint_watch && r->hint[0] != '\0' ? r->hint : NULL;
}

/* Bytes in the pipe that fd reads, still unread (0 where none can tell). */
static off_t
queued(int fd)
{
#ifdef FIONREAD
	int n;

	if (ioctl(fd, FIONREAD, &n) == 0 && n > 0)
		return n;
#else
	(void)fd;
#endif
	return 0;
}

/*
 * How much of its stdin the ended attempt read: what was given to its
 * pipe less what is still in it (retry holds a read end for FIONREAD).
 * The copy's start is read again by each attempt; what passed unkept
 * (pass_input) by one.
 */
static int
count_read(struct relay *r)
{
	off_t got = r->given - queued(r->child_in), of_copy;
	int fd;

	if (got < 0)
		got = 0;
	of_copy = got < r->copied ? got : r->copied;
	if (of_copy > r->read_most)
		r->read_most = of_copy;
	r->read_passed += got - of_copy;
	fd = r->child_in;
	r->child_in = -1;
	return close(fd);
}

/*
 * Bytes that retry took from its stdin (kept to replay, or passed on) and
 * no attempt read: they are lost to whoever reads the pipe after retry,
 * as in "producer | while read x; do retry cmd; done".
 */
off_t
relay_unread(const struct relay *r)
{
	return r->copied + r->passed + (off_t)r->pending - r->read_most -
	    r->read_passed;
}

/*
 * The attempt has ended: its stdin closes; its output pipes give what is
 * in them and then close, even if a process it left behind holds them.
 * -O's and -Q's output were matched on their way into the file.
 */
int
relay_attempt_ended(struct relay *r)
{
	off_t end;

	if (r->child_in != -1 && count_read(r) == -1)
		return fail(r, "close");
	if (r->to_child != -1) {
		if (close(r->to_child) == -1)
			return fail(r, "close");
		r->to_child = -1;
	}
	r->feed_off = r->feed_len = 0;	/* what passed, for it alone */
	if (r->out_counted != -1) {
		if ((end = lseek(r->out_counted, 0, SEEK_CUR)) > r->out_start)
			r->out_bytes = end - r->out_start;
		if (r->out_counted != STDOUT_FILENO && close(r->out_counted) == -1)
			return fail(r, "close");
		r->out_counted = -1;
	}
	r->out.draining = r->err.draining = 1;
	r->ended = 1;
	return 0;
}

/*
 * --buffer-stdout: the held output of the attempt goes out to fd.  It is
 * read at its own offsets: the file's, shared with what the attempt left
 * behind, stays where they write.
 */
int
relay_release(struct relay *r, int fd)
{
	int from;

	/* Once only: output sent to stderr before a delay that the run did
	 * not survive must not reach stdout as well. */
	if (r->held == -1 || r->released)
		return 0;
	r->released = 1;
	if ((from = fcntl(r->held, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) == -1)
		return fail(r, "temporary file");
	pump_reset(r, &r->out, from, fd);
	r->out.file = 1;
	r->out.draining = 1;	/* a file: read until its end, never wait */
	return 0;
}

/*
 * The run ends before its output is out (the deadline, a signal): what is
 * left in the attempt's pipes, the buffers and the held file is dropped.
 */
int
relay_drop(struct relay *r)
{
	struct pump *pumps[2] = { &r->out, &r->err }, *p;
	int i;

	if (r->resume != -1) {
		if (close(r->resume) == -1)
			return fail(r, "close");
		r->resume = -1;
	}
	for (i = 0; i < 2; i++) {
		p = pumps[i];
		p->off = p->len = 0;
		p->full = 0;
		if (p->from != -1 && close_source(r, p) == -1)
			return -1;
	}
	return 0;
}

/*
 * Has the reader of fd, a pipe, gone?  Then an attempt that died of
 * SIGPIPE wrote for no one, and no retry would change that.  poll(2) says
 * POLLERR (Linux) or POLLHUP for a pipe without a reader; a file, a
 * terminal or a socket is never taken for one.
 */
int
relay_reader_gone(int fd)
{
	struct pollfd p;
	struct stat st;

	if (fstat(fd, &st) == -1 || !S_ISFIFO(st.st_mode))
		return 0;
	p.fd = fd;
	p.events = POLLOUT;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}
