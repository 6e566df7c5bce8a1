/* SPDX-License-Identifier: ISC */
/*
 * The clocks, read in nanoseconds, and the waits on them: the caught
 * signals and the self-pipe, where a handler only records what came and
 * writes a byte that ends any poll(2), and the waits read the records.
 * clock_check() is the one place a clock's failure is reported; after it,
 * reading can no longer fail.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static int64_t
read_clock(clockid_t id)
{
	struct timespec ts;

	/*
	 * Only EINVAL (a clock the system lacks) or EFAULT can make it fail,
	 * and clock_check() has already asked both clocks once: a failure
	 * now is a broken libc, which no message of ours would help.
	 */
	if (clock_gettime(id, &ts) == -1)
		abort();
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* 0 when both clocks can be read, else -1 with errno. */
int
clock_check(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1 ||
	    clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return -1;
	return 0;
}

int64_t
monotonic_now(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t
realtime_now(void)
{
	return read_clock(CLOCK_REALTIME);
}

/* ---- The caught signals and the self-pipe ----------------------------- */

#define MAXFORWARDED	16	/* more than retry forwards */

static const int	*forwarded_signals;	/* those that count as caught */
static int		 nforwarded;
static volatile sig_atomic_t caught[MAXFORWARDED];
static volatile sig_atomic_t signalled;		/* any forwarded one, ever */
static volatile sig_atomic_t child_changed;	/* SIGCHLD came */
static volatile sig_atomic_t continued;		/* SIGCONT came */
static volatile sig_atomic_t pending;		/* any of them, not yet taken */
static volatile sig_atomic_t ticking;		/* a lock wait's timer runs */
static int		 wake[2] = { -1, -1 };	/* the self-pipe */
static int64_t		 deadline = NEVER;	/* messages wait no longer */

/*
 * Takes fds as the self-pipe: the caller's, made as every descriptor of
 * retry is (fd.c: above stdio, close-on-exec) and non-blocking at both
 * ends, so that a handler's write and a wait's read never block.
 * sigs[0..n) are the signals that count as caught (retry forwards them);
 * messages wait for a full stderr until until at most.  0, or -1 with
 * errno.
 */
int
sp_open(const int fds[2], const int *sigs, int n, int64_t until)
{
	if (n > MAXFORWARDED) {
		errno = EINVAL;
		return -1;
	}
	forwarded_signals = sigs;
	nforwarded = n;
	deadline = until;
	wake[0] = fds[0];
	wake[1] = fds[1];
	return 0;
}

/* Before sp_open() nothing is caught: the waits are bounded by time only. */
int
sp_is_open(void)
{
	return wake[0] != -1;
}

/* The self-pipe's read end, for a poll that waits for more. */
int
sp_fd(void)
{
	return wake[0];
}

/* The lock wait's tick comes from the kernel; a SIGALRM someone sent is not. */
static int
sent_by_process(const siginfo_t *si)
{
	if (si == NULL)
		return 1;
#ifdef SI_TKILL
	if (si->si_code == SI_TKILL)	/* tgkill(2), as raise(3) sends */
		return 1;
#endif
	return si->si_code == SI_USER || si->si_code == SI_QUEUE;
}

/* The handler of every signal retry catches: it records, and wakes the wait. */
void
sp_on_signal(int sig, siginfo_t *si, void *context)
{
	int saved = errno, i;
	ssize_t n;

	(void)context;
	if (sig == SIGCHLD)
		child_changed = 1;
	else if (sig == SIGCONT)
		continued = 1;
	else if (sig != SIGALRM || !ticking || sent_by_process(si)) {
		for (i = 0; i < nforwarded; i++)
			if (forwarded_signals[i] == sig)
				caught[i] = 1;
		signalled = 1;
	}
	pending = 1;
	n = write(wake[1], "", 1);	/* full: a wake is pending anyway */
	(void)n;
	errno = saved;
}

/* The first forwarded signal caught since the last call, or 0. */
int
sp_caught(void)
{
	int i;

	for (i = 0; i < nforwarded; i++)
		if (caught[i]) {
			caught[i] = 0;
			return forwarded_signals[i];
		}
	return 0;
}

/* A forwarded signal is waiting to be taken by sp_caught(). */
int
sp_any_caught(void)
{
	int i;

	for (i = 0; i < nforwarded; i++)
		if (caught[i])
			return 1;
	return 0;
}

/* A forwarded signal came at some time: the run is ending. */
int
sp_signalled(void)
{
	return signalled;
}

/* SIGCHLD came since the last call. */
int
sp_take_child_changed(void)
{
	if (!child_changed)
		return 0;
	child_changed = 0;
	return 1;
}

int
sp_continued(void)
{
	return continued;
}

void
sp_forget_continued(void)
{
	continued = 0;
}

/* A signal came that no wait has taken yet. */
int
sp_pending(void)
{
	return pending;
}

/* Empties the self-pipe; the records say what came. */
void
sp_take_wake(void)
{
	char buf[64];

	pending = 0;
	while (read(wake[0], buf, sizeof(buf)) > 0)
		continue;
}

/* While on, a SIGALRM from the kernel is the lock wait's tick, not caught. */
void
sp_ticking(int on)
{
	ticking = on;
}

/*
 * One poll(2) of fd for events and of the self-pipe, until the monotonic
 * time until at the latest (NEVER: no bound; one that has passed: no
 * wait).  Returns 1 when fd is ready (or in error, which its I/O will
 * tell), 0 when it is not, -1 with errno when poll failed (EINTR: a
 * signal came).  A wake is taken and left pending for the run loop.
 */
int
sp_poll_one(int fd, short events, int64_t until)
{
	struct pollfd p[2];
	int64_t left;
	int timeout = -1, n = wake[0] == -1 ? 1 : 2;

	p[0].fd = fd;
	p[0].events = events;
	p[1].fd = wake[0];
	p[1].events = POLLIN;
	if (until != NEVER) {
		left = until - monotonic_now();
		timeout = left <= 0 ? 0 : left / 1000000 >= INT_MAX ? INT_MAX :
		    (int)((left + 999999) / 1000000);
	}
	if (poll(p, (nfds_t)n, timeout) == -1)
		return -1;	/* revents are not set */
	if (p[0].revents != 0)
		return 1;
	if (n == 2 && p[1].revents != 0) {
		sp_take_wake();
		pending = 1;
	}
	return 0;
}

/*
 * Waits until fd is ready for events (POLLIN, POLLOUT; fd -1: none), a
 * forwarded signal comes, or the monotonic time until passes: a network
 * peer's wait, in the self-pipe's terms.  Returns 1 when ready (or in
 * error, which the I/O will tell), 0 when until came, -1 with errno:
 * EINTR when a signal came (sp_caught() has it), else poll(2)'s, for the
 * caller to report.  Before sp_open() only the time bounds it.
 */
int
sp_wait_fd(int fd, short events, int64_t until)
{
	int ready;

	for (;;) {
		if (sp_any_caught()) {
			errno = EINTR;
			return -1;
		}
		if (until != NEVER && monotonic_now() >= until)
			return 0;
		if ((ready = sp_poll_one(fd, events, until)) == -1 &&
		    errno != EINTR)
			return -1;
		if (ready == 1)
			return 1;
	}
}

/*
 * Waits until fd may be written without blocking: 1 when it may (poll(2)
 * says so, or will say why not), 0 when the write is to be dropped
 * because a forwarded signal came or until passed while fd was full.
 */
static int
wait_writable(int fd, int64_t until)
{
	int ready;

	for (;;) {
		ready = sp_poll_one(fd, POLLOUT, signalled ? 0 : until);
		if (ready == -1 && errno == EINTR)
			continue;	/* look again, with what came */
		if (ready != 0)
			return 1;	/* -1: write(2) will say what is wrong */
		if (signalled || (until != NEVER && monotonic_now() >= until))
			return 0;
	}
}

/*
 * Before each write of a message to fd: 1 when it may be written, 0 when
 * it is to be dropped for a signal or the run's deadline (wait_writable),
 * -1 before sp_open() (no signal to wait for: write as is).
 */
int
sp_may_write(int fd)
{
	if (wake[0] == -1)
		return -1;
	return wait_writable(fd, deadline);
}

/*
 * All of buf to fd, one of retry's own streams, whose reader may stall:
 * each piece waits for room (wait_writable), so that a signal acts at
 * once and until (NEVER: no bound) ends the wait; a pipe, a terminal or a
 * socket gets PIPE_BUF at a time, what poll(2) promises to take without
 * blocking.  0, or -1 with errno: the write's error, EINTR for a signal,
 * ETIMEDOUT for until.  Before sp_open(), a plain write(2).
 */
int
sp_write(int fd, const char *buf, size_t len, int64_t until)
{
	struct stat st;
	size_t most = SSIZE_MAX;
	ssize_t n;

	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
		most = PIPE_BUF;
	while (len > 0) {
		if (wake[0] != -1 && wait_writable(fd, until) == 0) {
			errno = signalled ? EINTR : ETIMEDOUT;
			return -1;
		}
		if ((n = write(fd, buf, len < most ? len : most)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;	/* cannot happen for len > 0 */
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}
