/* SPDX-License-Identifier: ISC */
/*
 * Process control for retry's attempts: start, signals, terminal, group
 * kill, and the one wait.  The part of retry that most needs review: every
 * subtlety of signals and job control is here, each with its why.
 */
#include "compat.h"	/* first: the feature macros */

#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "relay.h"

#define FINE_NS		2000000		/* the last 2 ms of a sleep: exact */
#define TICK_NS		10000000	/* a lock wait looks up this often */

/*
 * The signals whose disposition retry changes.  First, NFORWARDED that it
 * catches and forwards to the attempt: all that end a process by default
 * but for those that report a fault of retry's own (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT) and the real-time ones, so
 * that retry never dies of them before cleaning up.  Then three that it
 * handles for itself.
 */
static const int handled[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2,
	SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ,
#if defined(SIGIO)		/* Linux: SIGPOLL too; macOS: SIGPOLL is 7 */
	SIGIO,
#elif defined(SIGPOLL)
	SIGPOLL,
#endif
	SIGCHLD, SIGCONT, SIGPIPE
};
#define NHANDLED	(int)(sizeof(handled) / sizeof(handled[0]))
#define NFORWARDED	(NHANDLED - 3)

static struct sigaction	 original[NHANDLED];	/* as retry found them */
static int		 changed[NHANDLED];	/* retry changed this one */
static sigset_t		 original_mask;
static struct relay	*io;			/* the attempts' stdio */
static int64_t		 deadline = NEVER;	/* the run's: drains end there */

static int		 tty = -1;	/* a standard stream that is the terminal */
static pid_t		 child;		/* the attempt, also its process group */
static pid_t		 lent;		/* the group we lent the terminal to */
static volatile int	 child_error;	/* written by the vfork() child */
static pid_t		 parent;	/* retry, as the child sees it */
static const int	*child_fds;	/* the child's stdin, stdout, stderr */
static char		**sh_argv;	/* /bin/sh FILE ARG...: a script sans #! */

static void	 abandon_attempt(void);
static int	 wait_event(int64_t);

/* ---- Setting up ---------------------------------------------------- */

/*
 * A stdin, stdout or stderr that the caller closed is held by /dev/null
 * opened the other way round, so that nothing retry opens later takes its
 * number (its messages would go there): reads and writes still fail with
 * EBADF, but for stdin, where a closed one counts as empty.  Being
 * close-on-exec, they are closed again in every attempt.
 */
void
proc_hold_stdio(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lowest free number: fd itself. */
		if (open("/dev/null", O_RDONLY | O_CLOEXEC) == -1)
			fatal("/dev/null");
	}
}

/*
 * The terminal that retry may lend: one of its standard streams, so that
 * no /dev/tty is opened where they show there is none to hand over.
 */
static void
find_terminal(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (isatty(fd)) {
			tty = fd;
			return;
		}
}

/*
 * Handlers for the signals above, without SA_RESTART, so that a blocking
 * call (a write to a full stderr, a lock wait) returns EINTR.  No signal
 * is blocked: the self-pipe makes that unnecessary.  A signal that retry
 * was started ignoring (nohup) stays ignored, one it was started blocking
 * stays blocked; SIGPIPE is ignored so that a closed stderr cannot kill it.
 */
static void
catch_signals(void)
{
	struct sigaction sa, ign;
	int i;

	if (sigprocmask(SIG_BLOCK, NULL, &original_mask) == -1)
		fatal("sigprocmask");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sp_on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i < NHANDLED; i++) {
		if (sigaction(handled[i], handled[i] == SIGPIPE ? &ign : &sa,
		    &original[i]) == -1)
			fatal("sigaction");
		changed[i] = 1;
		if (i < NFORWARDED && original[i].sa_handler == SIG_IGN) {
			if (sigaction(handled[i], &original[i], NULL) == -1)
				fatal("sigaction");
			changed[i] = 0;
		}
	}
}

/*
 * Everything before the first attempt: the run's relay (whose descriptors
 * every wait serves), the time past which messages do not wait, the
 * terminal, the self-pipe and the handlers.  Whatever way retry exits
 * later, the attempt goes first (abandon_attempt).
 */
void
proc_init(struct relay *r, int64_t run_deadline)
{
	int wake[2];

	io = r;
	deadline = run_deadline;
	find_terminal();
	/* Above stdio, so that a closed stdin or stdout cannot take it. */
	if (new_pipe_nonblocking(wake) == -1 ||
	    sp_open(wake, handled, NFORWARDED, run_deadline) == -1)
		fatal("self-pipe");
	catch_signals();
	if (atexit(abandon_attempt) != 0)
		fatal("atexit");
}

/* ---- The one wait -------------------------------------------------- */

/*
 * The end of a sleep, to the target: clock_nanosleep()'s slack is a
 * fixed 50 us, where poll()'s grows with the timeout (Linux: 0.1 %, so a
 * 10 s delay would end 10 ms late).  A signal ends it at once (EINTR);
 * one that came just before it waits at most FINE_NS.
 */
static int
sleep_exactly(int64_t until)
{
	struct timespec ts;
	int e;

#ifdef HAVE_CLOCK_NANOSLEEP
	ts.tv_sec = (time_t)(until / NS_PER_SEC);
	ts.tv_nsec = (long)(until % NS_PER_SEC);
	e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
#else
	int64_t left = until - monotonic_now();

	if (left <= 0)
		return 0;
	ts.tv_sec = (time_t)(left / NS_PER_SEC);
	ts.tv_nsec = (long)(left % NS_PER_SEC);
	e = nanosleep(&ts, NULL) == -1 ? errno : 0;
#endif
	if (e != 0 && e != EINTR) {
		errno = e;
		fatal("clock_nanosleep");
	}
	return e == EINTR;
}

/*
 * The one wait: sleeps until a signal comes (the self-pipe), relay's
 * descriptors are ready (their I/O is done here), or the monotonic time
 * until passes.  Returns 1 when something happened, 0 when nothing did
 * (the callers look at the clock and the flags again).  A long sleep wakes
 * a little early in poll(), then sleeps the rest exactly.  An until that
 * has passed does the I/O that is ready, without waiting.
 */
static int
wait_event(int64_t until)
{
	struct pollfd fds[1 + RELAY_NFDS];
	int64_t left;
	int n = 1, now = 0, timeout = -1, ready;

	if (sp_pending()) {
		sp_take_wake();
		return 1;
	}
	fds[0].fd = sp_fd();
	fds[0].events = POLLIN;
	if (io != NULL)
		n += relay_poll(io, fds + 1, &now);
	if (now)
		timeout = 0;
	else if (until != NEVER) {
		if ((left = until - monotonic_now()) <= 0)
			timeout = 0;
		else if (left < FINE_NS)
			return sleep_exactly(until);
		else {
			left -= left / 512 + FINE_NS / 2;
			timeout = left / 1000000 > INT_MAX ? INT_MAX :
			    (int)(left / 1000000);
		}
	}
	if ((ready = poll(fds, (nfds_t)n, timeout)) == -1) {
		if (errno != EINTR)
			fatal("poll");
		return 1;	/* the handler set pending */
	}
	if (fds[0].revents != 0)
		sp_take_wake();
	if (io != NULL && (ready > (fds[0].revents != 0) || now) &&
	    relay_service(io, fds + 1, n - 1) == -1)
		fatal("%s", io->failed);
	return ready > 0 || now;
}

/* Sleeps until the monotonic time until; returns a signal that cut it short. */
int
proc_sleep(int64_t until)
{
	int sig;

	while ((sig = sp_caught()) == 0 && monotonic_now() < until)
		(void)wait_event(until);
	return sig;
}

/*
 * Output still in flight goes out before retry moves on; a signal for
 * retry cuts it short (the caller handles it, it is not lost).  Once one
 * has come, or the run's deadline has passed, the run is ending: what a
 * stream does not take at once is dropped, as messages are (sp_may_write),
 * so that a reader that has stopped reading cannot hold retry after it was
 * told to go, or past its deadline.
 */
void
proc_drain(void)
{
	int late;

	while (io != NULL && !relay_output_done(io) && !sp_any_caught()) {
		late = sp_signalled() || monotonic_now() >= deadline;
		if (wait_event(late ? 0 : deadline) == 0 && late) {
			if (relay_drop(io) == -1)
				fatal("%s", io->failed);
			return;
		}
	}
}

/*
 * Takes the fcntl(2) lock fl on fd, waiting while another process holds
 * it: in the kernel (F_SETLKW), so that the holder's release wakes us at
 * once.  A signal ends the wait (EINTR, no SA_RESTART); so does until,
 * through a one-shot timer that also bounds, to TICK_NS, how late a
 * signal that came just before the F_SETLKW is seen.  *sig gets the
 * signal for LOCK_SIGNAL.  Without proc_init() (--circuit-status) signals
 * keep their default actions: a plain F_SETLKW.
 */
enum lock_wait
proc_lock(int fd, const struct flock *lock, int64_t until, int *sig)
{
	struct flock fl = *lock;
	struct itimerval tick, off;
	int64_t left;
	int ret, e;

	memset(&off, 0, sizeof(off));
	for (;;) {
		if (fcntl(fd, sp_is_open() ? F_SETLK : F_SETLKW, &fl) == 0)
			return LOCK_TAKEN;
		if (errno == EINTR && !sp_is_open())
			continue;
		if (errno != EAGAIN && errno != EACCES)
			return LOCK_FAILED;
		if ((*sig = sp_caught()) != 0)
			return LOCK_SIGNAL;
		if ((left = until - monotonic_now()) <= 0)
			return LOCK_TIMEOUT;
		if (left > TICK_NS)
			left = TICK_NS;
		memset(&tick, 0, sizeof(tick));
		tick.it_value.tv_usec = (suseconds_t)((left + 999) / 1000);
		sp_ticking(1);
		if (setitimer(ITIMER_REAL, &tick, NULL) == -1)
			fatal("setitimer");
		ret = fcntl(fd, F_SETLKW, &fl);
		e = errno;
		/* Off before the flag: a late tick is still taken for one. */
		if (setitimer(ITIMER_REAL, &off, NULL) == -1)
			fatal("setitimer");
		sp_ticking(0);
		if (ret == 0)
			return LOCK_TAKEN;
		if (e != EINTR) {
			errno = e;
			return LOCK_FAILED;
		}
		if (io != NULL)
			(void)wait_event(0);	/* relay's I/O, meanwhile */
	}
}

/* ---- The terminal -------------------------------------------------- */

static int
in_foreground(void)
{
	return tty != -1 && tcgetpgrp(tty) == getpgrp();
}

/* sigprocmask(how) of SIGTTOU alone. */
static int
mask_ttou(int how)
{
	sigset_t ttou;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	return sigprocmask(how, &ttou, NULL);
}

/*
 * While the attempt holds the terminal, retry is in the background:
 * tcsetpgrp() and what retry relays to the terminal for the attempt (its
 * output, under "stty tostop") would raise SIGTTOU.  Blocked, it lets
 * both through.
 */
static void
note_lent(pid_t pgid)
{
	lent = pgid;
	if (mask_ttou(SIG_BLOCK) == -1)
		fatal("sigprocmask");
}

static void
lend_terminal(void)
{
	note_lent(child);
	if (tcsetpgrp(tty, child) == -1)
		warning("cannot give the terminal to the command");
}

/* Before retry prints or sleeps, the terminal is its own again. */
static void
take_terminal_back(void)
{
	if (lent == 0)
		return;
	lent = 0;
	if (tcsetpgrp(tty, getpgrp()) == -1)
		warning("cannot take the terminal back");
	if (!sigismember(&original_mask, SIGTTOU) && mask_ttou(SIG_UNBLOCK) ==
	    -1)
		fatal("sigprocmask");
}

/* ---- Starting an attempt ------------------------------------------- */

/* execve(2), and /bin/sh for a file without "#!", as execvp(3) does. */
static void
exec_file(const char *path, char *const argv[])
{
	extern char **environ;
	struct stat st;

	(void)execve(path, argv, environ);
	if (errno == EACCES && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		errno = EISDIR;		/* as the shell says it */
	if (errno != ENOEXEC)
		return;
	sh_argv[1] = (char *)path;
	(void)execve("/bin/sh", sh_argv, environ);
	errno = ENOEXEC;
}

/*
 * execvp(3), as POSIX describes it, with no allocation (this runs in the
 * vfork() child) and with /bin/sh for a file without "#!" everywhere
 * (musl's execvp has no such fallback).  Returns with errno set.
 */
static void
exec_path(char *const argv[])
{
	char path[PATH_MAX];
	const char *dirs, *end;
	size_t dlen, flen = strlen(argv[0]);
	int denied = 0;

	/* As execvp(3) and a shell: no file has an empty name. */
	if (flen == 0) {
		errno = ENOENT;
		return;
	}
	if (strchr(argv[0], '/') != NULL) {
		exec_file(argv[0], argv);
		return;
	}
	if ((dirs = getenv("PATH")) == NULL)
		dirs = "/usr/bin:/bin";
	for (;; dirs = end + 1) {
		if ((end = strchr(dirs, ':')) == NULL)
			end = dirs + strlen(dirs);
		dlen = (size_t)(end - dirs);
		if (dlen == 0)		/* an empty entry is the current one */
			dirs = ".", dlen = 1;
		if (dlen + flen + 2 <= sizeof(path)) {
			memcpy(path, dirs, dlen);
			path[dlen] = '/';
			memcpy(path + dlen + 1, argv[0], flen + 1);
			exec_file(path, argv);
			if (errno == EACCES || errno == EISDIR)
				denied = 1;
			else if (errno != ENOENT && errno != ENOTDIR &&
			    errno != ENAMETOOLONG)
				return;
		}
		if (*end == '\0')
			break;
	}
	errno = denied ? EACCES : ENOENT;
}

/*
 * In the vfork() child, which borrows retry's memory and stack until it
 * execs: its own process group, the terminal if retry lends it, the
 * dispositions retry changed and the mask it was started with, the stdio
 * that relay chose; then the command.  Only system calls, no allocation,
 * nothing that retry's memory would keep: an exec failure reaches retry
 * through child_error, as vfork() leaves it there.
 */
static void
exec_child(char *const argv[], int lend)
{
	int i;

	if (setpgid(0, 0) == -1)
		goto fail;
#ifdef PR_SET_PDEATHSIG
	/*
	 * Linux: the attempt dies with retry, even when retry is killed with
	 * SIGKILL and cannot stop it.  Should retry be gone already, too late.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		goto fail;
	if (getppid() != parent)
		_exit(EXIT_OWN_FAILURE);
#endif
	/* Every signal is blocked here, SIGTTOU too: no stop for this. */
	if (lend)
		(void)tcsetpgrp(tty, getpid());	/* the parent checks */
	for (i = 0; i < NHANDLED; i++)
		if (changed[i] && sigaction(handled[i], &original[i], NULL) ==
		    -1)
			goto fail;
	for (i = 0; child_fds != NULL && i < 3; i++)
		if (child_fds[i] != -1 && dup2(child_fds[i], i) == -1)
			goto fail;
	if (sigprocmask(SIG_SETMASK, &original_mask, NULL) == -1)
		goto fail;
	exec_path(argv);
fail:
	child_error = errno;
	_exit(errno == ENOENT ? 127 : 126);
}

/* argv with /bin/sh in front, for exec_file(); the path goes in [1]. */
static void
make_sh_argv(char *const argv[])
{
	size_t n;

	for (n = 0; argv[n] != NULL; n++)
		continue;
	if ((sh_argv = malloc((n + 2) * sizeof(*sh_argv))) == NULL)
		fatal("malloc");
	sh_argv[0] = "/bin/sh";
	memcpy(sh_argv + 2, argv + 1, n * sizeof(*sh_argv));
}

/*
 * Starts argv in a process group of its own, lent the terminal when retry
 * is in the foreground.  Returns 0, or the error that kept the command
 * from running (its child then reaped).
 *
 * vfork(): the child borrows retry's memory until it execs, so no page
 * table is copied (fork), and it can do what must come before exec (its
 * group, the terminal), which posix_spawn() cannot.  Every signal is
 * blocked around it, so that none of retry's handlers runs in the child.
 */
static int
start(char *const argv[], int lend)
{
	sigset_t all, saved;
	int e, status;

	if (sh_argv == NULL)
		make_sh_argv(argv);
	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &saved) == -1)
		fatal("sigprocmask");
	child_error = 0;
	parent = getpid();
	/* The child only makes system calls and execs: see exec_child(). */
	if ((child = vfork()) == 0)	/* NOLINT(clang-analyzer-security.insecureAPI.vfork) */
		exec_child(argv, lend);	/* NOLINT(clang-analyzer-unix.Vfork) */
	e = child == -1 ? errno : child_error;
	if (sigprocmask(SIG_SETMASK, &saved, NULL) == -1)
		fatal("sigprocmask");
	if (child == -1) {
		child = 0;
		return e;
	}
	if (lend) {
		note_lent(child);
		if (e == 0 && tcgetpgrp(tty) != child)
			warning("cannot give the terminal to the command");
	}
	if (e == 0)
		return 0;
	while (waitpid(child, &status, 0) == -1)
		if (errno != EINTR)
			fatal("waitpid");
	child = 0;
	take_terminal_back();
	return e;
}

/* ---- Watching it ----------------------------------------------------- */

static void
signal_group(int sig)
{
	char name[32];

	/* ESRCH: the whole group is gone already. */
	if (killpg(child, sig) == -1 && errno != ESRCH)
		warning("cannot send %s to the command",
		    signal_name(name, sizeof(name), sig));
}

/* SIGCONT after the signal, so that a stopped group acts on it. */
static void
signal_attempt(int sig)
{
	signal_group(sig);
	if (sig != SIGKILL && sig != SIGCONT)
		signal_group(SIGCONT);
}

/*
 * The attempt was stopped by the terminal: Ctrl-Z while it held it, or
 * using it from the background.  Without retry in between, the terminal
 * would have stopped the job retry belongs to; so retry stops its own
 * process group with the same signal, and the calling shell, a script's
 * included, sees its job stop.  Once continued (fg or bg), retry lends the
 * terminal again if it is back in the foreground, and continues the
 * attempt.  An orphaned group cannot be stopped: the kernel discards the
 * signal (no SIGCONT follows).  No one could continue the attempt then
 * either, so it gets SIGHUP and SIGCONT, as the kernel treats a stopped
 * process in an orphaned group; otherwise retry would spin continuing an
 * attempt that stops again at once.  A stop from elsewhere (SIGSTOP, or
 * SIGTSTP while the attempt was not in the foreground) is left to whoever
 * sent it.
 */
static void
follow_stop(int sig)
{
	char name[32];

	if ((sig != SIGTSTP || lent == 0) && sig != SIGTTIN && sig != SIGTTOU)
		return;
	take_terminal_back();
	sp_forget_continued();
	if (kill(0, sig) == -1)
		warning("cannot stop with %s", signal_name(name, sizeof(name),
		    sig));
	if (!sp_continued()) {
		detail("cannot stop with the attempt (orphaned process "
		    "group); it gets SIGHUP");
		signal_attempt(SIGHUP);
		return;
	}
	if (in_foreground())
		lend_terminal();
	signal_group(SIGCONT);
}

/*
 * Has the attempt ended?  Then it is reaped into *status.  A stop is
 * passed on first (follow_stop).  The kernel is asked only after a
 * SIGCHLD.  When retry stopped the attempt, what is left of its group is
 * killed before the leader is reaped: the unreaped leader still holds the
 * group's number, so no other group can have taken it.
 */
static int
reaped(int *status, int kill_rest)
{
	siginfo_t si;

	if (!sp_take_child_changed())
		return 0;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)child, &si, WEXITED | WSTOPPED |
		    WNOHANG | WNOWAIT) == -1)
			fatal("waitid");
		if (si.si_pid == 0)
			return 0;
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED)
			break;
		if (waitpid(child, status, WUNTRACED | WNOHANG) == -1)
			fatal("waitpid");
		follow_stop(si.si_status);
	}
	if (kill_rest)
		signal_group(SIGKILL);
	while (waitpid(child, status, 0) == -1)
		if (errno != EINTR)
			fatal("waitpid");
	child = 0;
	return 1;
}

static int64_t
min_time(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* A signal retry caught, passed on to the attempt and noted in *e. */
static void
forward(struct ending *e, int sig)
{
	if (e->signal == 0)
		e->signal = sig;
	if (sig == SIGINT || sig == SIGQUIT)
		e->forwarded_int_quit = 1;
	signal_attempt(sig);
}

/*
 * Sleeps until the attempt ends, forwarding every signal retry catches,
 * stopping it with lim->signal at lim->at and with SIGKILL kill_after
 * later, and calling lim->tick (if any) every lim->tick_every meanwhile,
 * to be done by the time the loop must act next (the limit, or the
 * SIGKILL), so that no tick holds the attempt past them.  lim->started
 * is told the attempt's group first; a signal that its lock wait took is
 * forwarded as any other.
 */
static void
watch(const struct limit *lim, struct ending *e)
{
	int64_t now, kill_at = NEVER, tick_at = NEVER;
	int sig, status;

	if (lim->started != NULL && (sig = lim->started((long)child,
	    lim->at)) != 0)
		forward(e, sig);
	if (lim->tick != NULL)
		tick_at = monotonic_now() + lim->tick_every;
	while (!reaped(&status, e->stopped)) {
		while ((sig = sp_caught()) != 0)
			forward(e, sig);
		now = monotonic_now();
		if (!e->stopped && now >= lim->at) {
			e->stopped = 1;
			signal_attempt(lim->signal);
			kill_at = lim->kill_after < NEVER - now ?
			    now + lim->kill_after : NEVER;
		}
		if (e->stopped && now >= kill_at) {
			signal_group(SIGKILL);
			kill_at = NEVER;
		}
		if (now >= tick_at && lim->tick != NULL) {
			lim->tick(e->stopped ? kill_at : lim->at);
			tick_at = monotonic_now() + lim->tick_every;
		}
		(void)wait_event(min_time(tick_at, e->stopped ? kill_at : lim->at));
	}
	if (WIFSIGNALED(status)) {
		e->termsig = WTERMSIG(status);
		e->status = 128 + e->termsig;
	} else
		e->status = WEXITSTATUS(status);
}

/*
 * Runs argv once, with the stdio relay prepared for it, and says what
 * came of it in *e.  After it: its output is out, the terminal is retry's
 * again, and a SIGINT or SIGQUIT that the attempt got from the keyboard
 * while it held the terminal is passed on to retry's own process group, as
 * the terminal would have sent it there without retry in between: the
 * shell running a script must see it to stop the script (and run its
 * trap).
 */
void
proc_run(char *const argv[], const struct limit *lim, struct ending *e)
{
	int sig, from_keyboard;

	memset(e, 0, sizeof(e[0]));
	if (io != NULL && relay_prepare(io) == -1)
		fatal("%s", io->failed);
	child_fds = io != NULL ? io->child_fd : NULL;	/* NULL: retry's own */
	e->error = start(argv, in_foreground());
	if (io != NULL && relay_forked(io) == -1)
		fatal("close");
	if (e->error == 0)
		watch(lim, e);
	/* Not the keyboard's when retry passed one on: someone sent it retry. */
	e->keyboard = !e->stopped && !e->forwarded_int_quit &&
	    (e->termsig == SIGINT || e->termsig == SIGQUIT);
	from_keyboard = lent != 0 && e->keyboard;	/* lent: ours to pass on */
	take_terminal_back();
	if (from_keyboard && kill(0, e->termsig) == -1)
		warning("kill");
	if (io != NULL && relay_attempt_ended(io) == -1)
		fatal("%s", io->failed);
	proc_drain();
	/* One that came as the attempt ended, or the one just passed on. */
	if ((sig = sp_caught()) != 0 && e->signal == 0)
		e->signal = sig;
}

/*
 * Runs a hook's argv once, as an attempt is run (its own process group,
 * stopped at lim, signals passed on and recorded in *e), but never lent
 * the terminal: its stdin is /dev/null and its stdout and stderr are out
 * (where retry's lines go), so that nothing of it mixes with the
 * command's output.
 */
void
proc_run_hook(char *const argv[], int out, const struct limit *lim,
    struct ending *e)
{
	int fds[3];

	memset(e, 0, sizeof(e[0]));
	if ((fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	fds[1] = fds[2] = out;
	child_fds = fds;
	e->error = start(argv, 0);
	child_fds = NULL;	/* fds lives no longer than this call */
	if (close(fds[0]) == -1)
		fatal("close");
	if (e->error == 0)
		watch(lim, e);
	if (e->signal == 0)
		e->signal = sp_caught();
}

/* ---- Another run's attempt group (Linux /proc) ---------------------- */

#define STAT_FIELDS	18	/* of /proc/PID/stat, from 4 (ppid) to 21 */
#define GROUP_GONE_NS	(NS_PER_SEC)	/* the wait for a killed group */
#define LOOK_NS		10000000	/* how often that wait looks */

/* What /proc/PID/stat says of a process. */
struct stat_line {
	char		 state;		/* Z: a zombie, X: dead */
	long		 pgrp, session;
	unsigned long long start;	/* clock ticks since boot */
};

/* What a look through /proc found of a group. */
struct members {
	long		 running;	/* not zombies */
	int		 foreign;	/* one not of the group marked */
};

/*
 * /proc/PID/stat into *st (proc(5)): fields 3 (state), 5 (pgrp), 6
 * (session) and 22 (starttime), counted after the command's name, which
 * may hold spaces and parentheses, so from its last ")".  -1 when there
 * is no such process, or no such file (not Linux).
 */
static int
read_stat(long pid, struct stat_line *st)
{
	char path[64], buf[2048], *p, *end;
	unsigned long long v[STAT_FIELDS];
	ssize_t n;
	size_t got = 0;
	int fd, i;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got,
	    sizeof(buf) - 1 - got)) != 0)
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	(void)close(fd);	/* read only: nothing to lose */
	buf[got] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return -1;
	st->state = p[2];
	p += 3;
	for (i = 0; i < STAT_FIELDS; i++, p = end) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);	/* a negative nice wraps: unused */
		if (end == p || errno != 0)
			return -1;
	}
	st->pgrp = (long)v[5 - 4];
	st->session = (long)v[6 - 4];
	errno = 0;
	st->start = strtoull(p, &end, 10);
	return end == p || errno != 0 || v[5 - 4] > LONG_MAX ||
	    v[6 - 4] > LONG_MAX ? -1 : 0;
}

/*
 * The mark of the attempt group pgid, which has just started: its
 * leader's session and start, for a later run to know the group by
 * (proc_end_group).  -1 where /proc cannot tell (not Linux).
 */
int
proc_mark_group(long pgid, struct group_mark *m)
{
	struct stat_line st;

	if (read_stat(pgid, &st) == -1 || st.pgrp != pgid)
		return -1;
	m->pgid = pgid;
	m->sid = st.session;
	m->start = st.start;
	return 0;
}

/*
 * The processes of group m->pgid, from /proc: how many run, and whether
 * one is not of the group marked (another session, or started before its
 * leader), which a group of the same number made later would have.
 */
static int
look_at_group(const struct group_mark *m, struct members *in)
{
	struct stat_line st;
	struct dirent *d;
	DIR *dir;
	char *end;
	long pid;

	in->running = 0;
	in->foreign = 0;
	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL) {
		errno = 0;
		pid = strtol(d->d_name, &end, 10);
		if (*end != '\0' || end == d->d_name || errno != 0 ||
		    read_stat(pid, &st) == -1 || st.pgrp != m->pgid)
			continue;	/* not a process, or gone meanwhile */
		if (st.session != m->sid || st.start < m->start)
			in->foreign = 1;
		in->running += st.state != 'Z' && st.state != 'X';
	}
	(void)closedir(dir);	/* read only: nothing to lose */
	return 0;
}

/*
 * Is group m the one that was marked?  Its leader, while it is there,
 * must be the process marked: same group, session and start, or its
 * number has been given again, and the group is long gone.  Without its
 * leader the group still holds its number, which the system gives no
 * new process meanwhile: each of its processes must be of the session
 * and have started no earlier than the leader.
 */
static int
is_marked_group(const struct group_mark *m, struct members *in)
{
	struct stat_line leader;

	if (read_stat(m->pgid, &leader) == 0 && (leader.pgrp != m->pgid ||
	    leader.session != m->sid || leader.start != m->start))
		return 0;
	return look_at_group(m, in) == 0 && !in->foreign && in->running > 0;
}

/*
 * Ends what is left of the attempt group that another run marked (a run
 * that was killed, whose attempt's leader alone died with it): SIGKILL to
 * the group, if it is the one marked, then a wait until none of it runs,
 * of GROUP_GONE_NS at most and no later than until, which a signal for
 * retry cuts short (it stays for the caller to take).  0 with *g filled
 * in (nothing ended: not that group, or none of it left), or -1 with
 * errno when the signal could not be sent.
 */
int
proc_end_group(const struct group_mark *m, int64_t until, struct group_end *g)
{
	struct members in;
	int64_t now, end = monotonic_now() + GROUP_GONE_NS;

	g->ended = g->left = 0;
	if (m->pgid <= 1 || !is_marked_group(m, &in))
		return 0;
	if (killpg((pid_t)m->pgid, SIGKILL) == -1)
		return errno == ESRCH ? 0 : -1;
	g->ended = g->left = in.running;
	if (until < end)
		end = until;
	while (look_at_group(m, &in) == 0 && (g->left = in.running) > 0 &&
	    !sp_any_caught() && (now = monotonic_now()) < end)
		(void)wait_event(now + LOOK_NS < end ? now + LOOK_NS : end);
	return 0;
}

/* ---- The end ------------------------------------------------------- */

/*
 * However retry exits, an attempt still running goes first, all of its
 * group, and the terminal is taken back: a failure of retry's own (125)
 * must not leave a command running that no one watches.
 */
static void
abandon_attempt(void)
{
	int status;

	if (child > 0) {
		signal_group(SIGKILL);
		while (waitpid(child, &status, 0) == -1 && errno == EINTR)
			continue;
		child = 0;
	}
	take_terminal_back();
}

/*
 * Dies of sig the way the default action would, so that a calling shell
 * sees the interruption (Cracauer, "Proper handling of SIGINT/SIGQUIT"):
 * core dumps off, default action, unblocked, raised.
 */
void
proc_die(int sig)
{
	struct rlimit nocore;
	struct sigaction sa;
	sigset_t set;

	abandon_attempt();
	nocore.rlim_cur = nocore.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &nocore) == -1)
		warning("setrlimit");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (sigaction(sig, &sa, NULL) == -1 ||
	    sigprocmask(SIG_UNBLOCK, &set, NULL) == -1 || raise(sig) != 0)
		warning("cannot die of signal %d", sig);
	_exit(128 + sig);
}
