/*
 * Input replay, output matching and held output for retry's attempts.
 * Memory stays constant whatever the amount of data: input is copied to an
 * unlinked file, output passes through one pipe-sized buffer per stream.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "relay.h"

static int
fail(struct relay *r, const char *what)
{
	r->failed = what;
	return -1;
}

static int
nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags == -1 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static int
new_pipe(int fds[2])
{
	if (pipe(fds) == -1)
		return -1;
	fds[0] = fd_keep(fds[0]);
	fds[1] = fd_keep(fds[1]);
	return fds[0] == -1 || fds[1] == -1 ? -1 : 0;
}

static void
match_line(struct relay *r, struct pump *p)
{
	p->line[p->linelen] = '\0';
	if (r->on != NULL && regexec(r->on, p->line, 0, NULL, 0) == 0)
		r->on_hit = 1;
	if (r->stop != NULL && regexec(r->stop, p->line, 0, NULL, 0) == 0)
		r->stop_hit = 1;
}

/* Splits output into lines for the patterns; a long line by its start. */
static void
match_feed(struct relay *r, struct pump *p, const char *s, size_t n)
{
	size_t i;

	if (r->on == NULL && r->stop == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (s[i] == '\n') {
			if (!p->skipping)
				match_line(r, p);
			p->linelen = 0;
			p->skipping = 0;
		} else if (!p->skipping) {
			p->line[p->linelen++] = s[i];
			if (p->linelen == LINEMAX - 1) {
				match_line(r, p);
				p->skipping = 1;
			}
		}
	}
}

/* The last line may lack its newline. */
static void
match_end(struct relay *r, struct pump *p)
{
	if (p->linelen > 0 && !p->skipping)
		match_line(r, p);
	p->linelen = 0;
	p->skipping = 0;
}

static void
pump_reset(struct pump *p, int from, int to)
{
	p->from = from;
	p->to = to;
	p->off = p->len = p->linelen = 0;
	p->skipping = p->draining = 0;
}

/* A pipe from the child's stream to retry's fd `to`, read without blocking. */
static int
open_pump(struct pump *p, int to, int *child_end)
{
	int fds[2];

	if (new_pipe(fds) == -1 || nonblocking(fds[0]) == -1)
		return -1;
	pump_reset(p, fds[0], to);
	*child_end = fds[1];
	return 0;
}

static int
close_source(struct relay *r, struct pump *p)
{
	int fd = p->from;

	match_end(r, p);
	p->from = -1;
	return close(fd);
}

/*
 * Sets what each attempt's stdio will be.  A regular file on stdin is read
 * again from where retry found it; --replay-stdin copies anything else to
 * a file as it arrives.  The caller refuses a terminal.
 */
int
relay_init(struct relay *r, int replay, int hold, const regex_t *on,
    const regex_t *stop)
{
	struct stat st;

	r->on = on;
	r->stop = stop;
	r->on_hit = r->stop_hit = 0;
	r->rewind = r->replay = r->source_eof = 0;
	r->copy = r->to_child = r->held = -1;
	r->released = 0;
	r->copied = r->fed = 0;
	pump_reset(&r->out, -1, -1);
	pump_reset(&r->err, -1, -1);
	r->child_fd[0] = r->child_fd[1] = r->child_fd[2] = -1;
	r->failed = NULL;
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		r->start_offset = lseek(STDIN_FILENO, 0, SEEK_CUR);
		r->rewind = r->start_offset != -1;
	} else if (replay) {
		if ((r->copy = scratch_file()) == -1)
			return fail(r, "--replay-stdin");
		/* A closed stdin is held by /dev/null (retry.c): empty. */
		r->replay = 1;
	}
	if (hold && (r->held = scratch_file()) == -1)
		return fail(r, "--buffer-stdout");
	return 0;
}

/* Before each fork: the attempt's stdin, stdout and stderr. */
int
relay_prepare(struct relay *r)
{
	int fds[2], matching = r->on != NULL || r->stop != NULL;

	r->on_hit = r->stop_hit = 0;
	if (r->rewind && lseek(STDIN_FILENO, r->start_offset, SEEK_SET) == -1)
		return fail(r, "stdin");
	if (r->replay) {
		if (new_pipe(fds) == -1 || nonblocking(fds[1]) == -1)
			return fail(r, "pipe");
		r->child_fd[0] = fds[0];
		r->to_child = fds[1];
		r->fed = 0;
	}
	if (r->held != -1) {
		/*
		 * A new file for each attempt: whatever a process that an
		 * earlier attempt left behind still writes goes to the old
		 * one, which nobody reads.
		 */
		if (close(r->held) == -1 || (r->held = scratch_file()) == -1)
			return fail(r, "temporary file");
		r->child_fd[1] = r->held;
		r->released = 0;
	} else if (matching &&
	    open_pump(&r->out, STDOUT_FILENO, &r->child_fd[1]) == -1)
		return fail(r, "pipe");
	if (matching &&
	    open_pump(&r->err, STDERR_FILENO, &r->child_fd[2]) == -1)
		return fail(r, "pipe");
	return 0;
}

/* After the fork, in retry: the child's ends are the child's alone. */
int
relay_forked(struct relay *r)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (r->child_fd[i] != -1 && r->child_fd[i] != r->held &&
		    close(r->child_fd[i]) == -1)
			return fail(r, "close");
		r->child_fd[i] = -1;
	}
	return 0;
}

static int
watch(struct pollfd *fds, int n, int fd, short events)
{
	fds[n].fd = fd;
	fds[n].events = events;
	fds[n].revents = 0;
	return n + 1;
}

/*
 * Fills fds (RELAY_NFDS at most) with what relay waits for; returns how
 * many.  A pump that drains a finished attempt is due at once: *now is
 * set.
 */
int
relay_poll(struct relay *r, struct pollfd *fds, int *now)
{
	struct pump *pumps[2] = { &r->out, &r->err }, *p;
	int n = 0, i;

	if (r->replay && !r->source_eof)
		n = watch(fds, n, STDIN_FILENO, POLLIN);
	if (r->to_child != -1 && r->fed < r->copied)
		n = watch(fds, n, r->to_child, POLLOUT);
	else if (r->to_child != -1 && r->source_eof)
		*now = 1;	/* all given: the attempt's end of input, now */
	for (i = 0; i < 2; i++) {
		p = pumps[i];
		if (p->len > 0)
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

/* Input that arrived goes to the copy at once, so the producer never waits. */
static int
take_input(struct relay *r)
{
	ssize_t n, w;
	off_t at;

	n = read(STDIN_FILENO, r->chunk, sizeof(r->chunk));
	if (n == -1)
		return errno == EINTR || errno == EAGAIN ? 0 : fail(r, "stdin");
	if (n == 0)
		r->source_eof = 1;
	for (at = 0; at < n; at += w)
		if ((w = pwrite(r->copy, r->chunk + at, (size_t)(n - at),
		    r->copied + at)) == -1)
			return fail(r, "temporary file");
	r->copied += n;
	return 0;
}

/*
 * The attempt gets the copy from its start.  One that stops reading or
 * closes its stdin stops getting it; the copy stays whole for the next.
 */
static int
feed_child(struct relay *r)
{
	size_t want = sizeof(r->chunk);
	ssize_t n, w;

	if ((off_t)want > r->copied - r->fed)
		want = (size_t)(r->copied - r->fed);
	if ((n = pread(r->copy, r->chunk, want, r->fed)) == -1)
		return fail(r, "temporary file");
	if ((w = write(r->to_child, r->chunk, (size_t)n)) >= 0) {
		r->fed += w;
		return 0;
	}
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	if (errno != EPIPE)
		return fail(r, "pipe");
	r->fed = r->copied;	/* the attempt closed its stdin */
	return close(r->to_child) == -1 ? fail(r, "close") :
	    (r->to_child = -1, 0);
}

/*
 * One step of a pump: read when its buffer is empty, write when not.  If
 * retry's own stream is gone, the child's pipe closes too, so the child
 * learns it as it would have without retry in between.
 */
static int
run_pump(struct relay *r, struct pump *p, const struct pollfd *fds, int nfds)
{
	ssize_t n;

	if (p->len > 0 && ready(fds, nfds, p->to)) {
		if ((n = write(p->to, p->buf + p->off, p->len - p->off)) >= 0) {
			if ((p->off += (size_t)n) == p->len)
				p->off = p->len = 0;
			return 0;
		}
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		p->off = p->len = 0;
		if (p->from != -1 && close_source(r, p) == -1)
			return fail(r, "close");
		return 0;
	}
	if (p->from == -1 || p->len > 0 ||
	    !(p->draining || ready(fds, nfds, p->from)))
		return 0;
	n = read(p->from, p->buf, sizeof(p->buf));
	if (n > 0) {
		match_feed(r, p, p->buf, (size_t)n);
		p->len = (size_t)n;
		return 0;
	}
	if (n == -1 && errno == EINTR)
		return 0;
	if (n == -1 && errno != EAGAIN)
		return fail(r, "pipe");
	/* End of file, or all that a finished attempt left in the pipe. */
	if (n == 0 || p->draining)
		return close_source(r, p) == -1 ? fail(r, "close") : 0;
	return 0;
}

/* Does the I/O that poll(2) found ready in fds, filled by relay_poll(). */
int
relay_service(struct relay *r, const struct pollfd *fds, int n)
{
	if (r->replay && !r->source_eof && ready(fds, n, STDIN_FILENO) &&
	    take_input(r) == -1)
		return -1;
	if (r->to_child != -1 && r->fed < r->copied &&
	    ready(fds, n, r->to_child) && feed_child(r) == -1)
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

int
relay_output_done(const struct relay *r)
{
	return r->out.from == -1 && r->out.len == 0 &&
	    r->err.from == -1 && r->err.len == 0;
}

/*
 * The attempt has ended: its stdin closes; its output pipes give what is
 * in them and then close, even if a process it left behind holds them.
 * Held output is read once for the patterns.
 */
int
relay_attempt_ended(struct relay *r)
{
	ssize_t n;

	if (r->to_child != -1) {
		if (close(r->to_child) == -1)
			return fail(r, "close");
		r->to_child = -1;
	}
	r->out.draining = r->err.draining = 1;
	if (r->held == -1 || (r->on == NULL && r->stop == NULL))
		return 0;
	if (lseek(r->held, 0, SEEK_SET) == -1)
		return fail(r, "temporary file");
	while ((n = read(r->held, r->chunk, sizeof(r->chunk))) > 0)
		match_feed(r, &r->out, r->chunk, (size_t)n);
	match_end(r, &r->out);
	return n == -1 ? fail(r, "temporary file") : 0;
}

/* --buffer-stdout: the held output of the attempt goes out to fd. */
int
relay_release(struct relay *r, int fd)
{
	int from;

	/* Once only: output sent to stderr before a delay that the run did
	 * not survive must not reach stdout as well. */
	if (r->held == -1 || r->released)
		return 0;
	r->released = 1;
	if (lseek(r->held, 0, SEEK_SET) == -1 ||
	    (from = fcntl(r->held, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) == -1)
		return fail(r, "temporary file");
	pump_reset(&r->out, from, fd);
	r->out.draining = 1;	/* a file: read until its end, never wait */
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
