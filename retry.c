/*
 * retry: run a command again after a growing, jittered delay until it
 * succeeds, its attempts run out or a deadline passes.  See retry(1).
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/select.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"
#include "circuit.h"
#include "options.h"
#include "relay.h"
#include "report.h"

#ifndef VERSION
#define VERSION "unknown"
#endif

#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the circuit stays open */
#define EXIT_TIMEDOUT	124
#define EXIT_FAILURE_	125	/* retry itself failed; nothing more is run */
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127
#define NEVER		INT64_MAX

/* C99 has no _Noreturn; the analyzers and -Wextra want to know. */
#if defined(__GNUC__) || defined(__clang__)
#define NORETURN	__attribute__((__noreturn__))
#else
#define NORETURN
#endif
#define MSGMAX		1024

enum { NOT_TIMED_OUT, TIMED_OUT, AT_DEADLINE };
enum outcome {
	RUNNING, SUCCEEDED, NOT_RETRYABLE, EXHAUSTED, DEADLINE, INTERRUPTED,
	CANNOT_RUN, OUTPUT_STOP, CIRCUIT_OPEN, BUDGET_SPENT
};

/* How the run is going. */
struct run {
	int64_t		 start, deadline;	/* monotonic ns; NEVER: none */
	struct backoff	 backoff;
	struct rng	 rng;			/* the schedule's draws */
	struct rng	 aside;			/* all other draws */
	long		 attempt;
	pid_t		 child;			/* also its process group */
	int		 stopping;		/* the attempt was told to stop */
	int		 timed_out;
	int		 status;		/* as the shell's $? */
	int		 termsig;		/* the attempt died of it, or 0 */
	int		 exec_errno;		/* the command could not be run */
	int		 interrupt;		/* a signal retry itself got */
	int64_t		 began, ended;		/* the last attempt's */
	int64_t		 delay, asleep;
	int		 from_hint;		/* the delay came from a hint */
	long		 recorded;		/* attempts in the report */
	int		 splayed;		/* --splay is behind us */
	enum outcome	 why;
};

static void	 read_command_line(int, char *[], struct policy *);
static int	 circuit_command(const struct policy *);
static void	 seed_generator(const struct policy *, struct run *);
static int	 print_schedule(const struct policy *, struct run *);
static void	 begin_run(const struct policy *, struct run *);
static int	 run_attempt(const struct policy *, struct run *);
static int	 should_retry(const struct policy *, struct run *);
static int	 sleep_before_retry(const struct policy *, struct run *);
static void	 report_end(const struct policy *, struct run *);
static void	 exit_as_run_ended(const struct run *) NORETURN;
static int	 exit_status(const struct run *, int *);
static void	 clear_hint(void);
static int	 sleep_until(int64_t);
static int	 wait_for(struct run *, int64_t, enum outcome);
static void	 take_late_signal(struct run *);
static int	 retryable(const struct policy *, const struct run *);
static void	 fatal(const char *, ...) NORETURN;
static void	 usage_error(const char *, ...) NORETURN;
static void	 die_by_signal(int) NORETURN;
static void	 hold_closed_stdio(void);
static void	 exec_child(char **, int, int) NORETURN;

static int	 verbosity = NORMAL;
static int	 stderr_broken;
static int	 tty = -1;		/* controlling terminal, if any */
static pid_t	 tty_lent;		/* group we handed the terminal to */
static struct relay io;			/* the attempts' stdio */
static struct report report;
static int	 reporting;
static char	 hint_dir[PATH_MAX], hint_file[PATH_MAX];
static struct circuit circuit;		/* --circuit: the shared record */
static unsigned char entropy[24];	/* from the kernel: seed, then key */
static size_t	 entropy_left;

/*
 * Signals forwarded to the attempt; a handler only marks them caught.
 * Beyond the usual four, all others that end a process by default, but
 * for those that report a fault of retry's own (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGSYS, SIGABRT) and the real-time ones: retry must not
 * die of them before it has cleaned up.
 */
static const int forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2,
	SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPOLL
};
#define NFORWARDED	(int)(sizeof(forwarded) / sizeof(forwarded[0]))
static volatile sig_atomic_t caught[NFORWARDED];

/* Dispositions and mask retry started with, restored in every child. */
static const int changed[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2,
	SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPOLL, SIGCHLD, SIGPIPE
};
#define NCHANGED	(int)(sizeof(changed) / sizeof(changed[0]))
static struct sigaction	 original_action[NCHANGED];
static sigset_t		 original_mask, wait_mask;
static sigset_t		 changed_set;	/* of those, the ones retry changed */
static int		 chld_ignored;	/* SIGCHLD was ignored at the start */

extern char **environ;

int
main(int argc, char *argv[])
{
	struct policy p;
	struct run r;

	hold_closed_stdio();
	read_command_line(argc, argv, &p);
	if (p.circuit_command != CIRCUIT_RUN)
		return circuit_command(&p);
	seed_generator(&p, &r);
	if (p.dry_run)
		return print_schedule(&p, &r);
	begin_run(&p, &r);
	while (run_attempt(&p, &r) && should_retry(&p, &r) &&
	    sleep_before_retry(&p, &r))
		continue;
	report_end(&p, &r);
	exit_as_run_ended(&r);
}

/*
 * A stdin, stdout or stderr that the caller closed is held by /dev/null
 * opened the other way round, so that nothing retry opens later takes its
 * number (its messages would go there): reads and writes still fail with
 * EBADF, but for stdin, where a closed one counts as empty.  Being
 * close-on-exec, they are closed again in every attempt.
 */
static void
hold_closed_stdio(void)
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

/* Writes one line "retry: ..." to stderr in a single write(2). */
static void
vmessage(const char *fmt, va_list ap, const char *suffix)
{
	struct sigaction ign, old;
	char line[MSGMAX];
	size_t len, done = 0;
	ssize_t n;
	int saved = errno;

	if (stderr_broken)
		return;
	(void)snprintf(line, sizeof(line), "retry: ");	/* cannot fail */
	len = strlen(line);
	/* A long line is cut.  ap is started by every caller: clang 14's
	 * analyzer loses track of it (NOLINTNEXTLINE below says so). */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	len = strlen(line);
	if (suffix != NULL)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
		    ": %s", suffix);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/*
	 * A reader of stderr that has gone must not kill retry, not even
	 * before catch_signals() ignores SIGPIPE for good: EPIPE is enough.
	 */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	if (sigaction(SIGPIPE, &ign, &old) == -1)
		stderr_broken = 1;	/* cannot happen: a valid signal */
	while (!stderr_broken && done < len) {
		n = write(STDERR_FILENO, line + done, len - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Nowhere left to say it; the exit status still tells. */
			stderr_broken = 1;
			break;
		}
		done += (size_t)n;
	}
	if (sigaction(SIGPIPE, &old, NULL) == -1)
		stderr_broken = 1;
	errno = saved;
}

static void
say(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < NORMAL)
		return;
	va_start(ap, fmt);
	vmessage(fmt, ap, NULL);
	va_end(ap);
}

static void
detail(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < VERBOSE)
		return;
	va_start(ap, fmt);
	vmessage(fmt, ap, NULL);
	va_end(ap);
}

/* A failure of retry itself, with errno's text: exit 125, like err(3). */
static void
fatal(const char *fmt, ...)
{
	va_list ap;
	const char *why = strerror(errno);

	va_start(ap, fmt);
	vmessage(fmt, ap, why);
	va_end(ap);
	exit(EXIT_FAILURE_);
}

/* A warning with errno's text, like warn(3); retry carries on. */
static void
warning(const char *fmt, ...)
{
	va_list ap;
	const char *why = strerror(errno);

	va_start(ap, fmt);
	vmessage(fmt, ap, why);
	va_end(ap);
}

/* Bad usage: one line naming the problem, exit 125, nothing run. */
static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, NULL);
	va_end(ap);
	exit(EXIT_FAILURE_);
}

/* stdout is checked once at the end, so that a full disk is an error. */
static int
close_stdout(void)
{
	if (ferror(stdout) | (fclose(stdout) == EOF)) {	/* both, always */
		warning("stdout");
		return EXIT_FAILURE_;
	}
	return 0;
}

/* The policy, or --help, --version or a usage error and exit. */
static void
read_command_line(int argc, char *argv[], struct policy *p)
{
	char err[MSGMAX];

	switch (parse_options(argc, argv, p, err, sizeof(err))) {
	case PARSED_RUN:
		verbosity = p->verbosity;
		return;
	case PARSED_HELP:
		if (fputs(help_text, stdout) == EOF)
			fatal("stdout");
		exit(close_stdout());
	case PARSED_VERSION:
		if (printf("retry %s\n", VERSION) < 0)
			fatal("stdout");
		exit(close_stdout());
	case PARSED_ERROR:
		usage_error("%s", err);
	}
}

static int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) == -1)
		fatal("clock_gettime");
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static int64_t
monotonic_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* "2s", "0.05s", "1m30s" stays "90s": seconds, trailing zeros cut. */
static const char *
fmt_duration(char *buf, size_t size, int64_t ns)
{
	size_t len;

	(void)snprintf(buf, size, "%lld.%06lld", (long long)(ns / NS_PER_SEC),
	    (long long)(ns % NS_PER_SEC / 1000));
	len = strlen(buf);
	while (buf[len - 1] == '0')
		buf[--len] = '\0';
	if (buf[len - 1] == '.')
		buf[--len] = '\0';
	(void)snprintf(buf + len, size - len, "s");
	return buf;
}

/*
 * sec + ns as seconds with exactly three decimals, cut (not rounded) to
 * the millisecond, so that a total short of the deadline never shows it.
 */
static const char *
fmt_seconds(char *buf, size_t size, int64_t sec, int64_t ns)
{
	int64_t ms = ns / 1000000;

	(void)snprintf(buf, size, "%lld.%03lld", (long long)sec + ms / 1000,
	    (long long)ms % 1000);
	return buf;
}

static const char *
fmt_codes(char *buf, size_t size, const struct codes *set)
{
	size_t len = 0;
	int lo, hi;

	buf[0] = '\0';
	for (lo = 0; lo < 256; lo = hi + 1) {
		hi = lo;
		if (!codes_has(set, lo))
			continue;
		while (hi < 255 && codes_has(set, hi + 1))
			hi++;
		len += (size_t)snprintf(buf + len, size - len,
		    lo == hi ? "%s%d" : "%s%d-%d", len ? "," : "", lo, hi);
		if (len >= size)
			break;
	}
	return buf[0] ? buf : "none";
}


static void
kernel_random(void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/urandom");
	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			fatal("/dev/urandom");
		}
		done += (size_t)n;
	}
	if (close(fd) == -1)
		fatal("/dev/urandom");
}

/*
 * Seeds from --seed, else from the kernel, never from the clock or the
 * pid: processes started in the same instant must draw different delays.
 */
static void
seed_generator(const struct policy *p, struct run *r)
{
	unsigned char bytes[8];
	uint64_t seed = p->seed;
	int i;

	memset(r, 0, sizeof(*r));
	if (!p->seeded) {
		/* One read for the seed and, later, the key. */
		kernel_random(entropy, sizeof(entropy));
		entropy_left = sizeof(entropy);
		memcpy(bytes, entropy, sizeof(bytes));
		entropy_left -= sizeof(bytes);
		for (seed = 0, i = 0; i < 8; i++)
			seed = seed << 8 | bytes[i];
	}
	rng_seed(&r->rng, seed);
	/* Hints and shared waits draw apart: the schedule stays --dry-run's. */
	rng_seed(&r->aside, seed ^ UINT64_C(0x9e3779b97f4a7c15));
	backoff_init(&r->backoff, p->base, p->factor, p->cap, p->jitter);
}

/* Unix time "1767225600.123" in ns; 0 when malformed or past year 2255. */
static int
parse_unix_time(const char *s, int64_t *ns)
{
	int64_t sec = 0, frac = 0, scale = NS_PER_SEC;

	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++)
		if ((sec = sec * 10 + (*s - '0')) > INT64_C(9000000000))
			return 0;
	if (*s == '.')		/* "5." is 5, as in durations */
		for (s++; isdigit((unsigned char)*s); s++)
			if (scale > 1)
				frac += (*s - '0') * (scale /= 10);
	if (*s != '\0')
		return 0;
	*ns = sec * NS_PER_SEC + frac;
	return 1;
}

/*
 * The deadline on the monotonic clock: --deadline from start, or an outer
 * retry's RETRY_DEADLINE, whichever is earlier; NEVER when neither.
 */
static int64_t
find_deadline(const struct policy *p, int64_t start, int *outer)
{
	const char *env = getenv("RETRY_DEADLINE");
	int64_t deadline = NEVER, when, left;

	*outer = 0;
	if (p->deadline != 0)
		deadline = start + p->deadline;
	if (env == NULL || *env == '\0')
		return deadline;
	if (!parse_unix_time(env, &when))
		usage_error("RETRY_DEADLINE '%s': invalid time", env);
	left = when - clock_ns(CLOCK_REALTIME);
	if (start + left < deadline) {
		deadline = start + left;
		*outer = 1;
	}
	return deadline;
}

/* --splay: uniform in [0, DUR], before the first attempt. */
static int64_t
splay_delay(const struct policy *p, struct run *r)
{
	return (int64_t)(rng_uniform(&r->rng) * (double)p->splay);
}

/*
 * --dry-run: a line per delay, "attempt<TAB>delay<TAB>total", up to where
 * the attempts or the deadline would end the run, attempts taking no time.
 * The total is kept in whole seconds and nanoseconds: with no deadline it
 * may pass what int64 nanoseconds hold.
 */
static int
print_schedule(const struct policy *p, struct run *r)
{
	char d[32], t[32];
	int64_t delay, budget, sec = 0, ns = 0;
	long next;
	int outer;

	budget = find_deadline(p, 0, &outer);
	if (p->attempts == 0 && budget == NEVER)
		usage_error("--dry-run with unlimited attempts needs a --deadline");
	/* A splay is the delay before attempt 1. */
	for (next = p->splay > 0 ? 1 : 2; p->attempts == 0 ||
	    next <= p->attempts; next++) {
		delay = next == 1 ? splay_delay(p, r) :
		    backoff_next(&r->backoff, &r->rng, NULL);
		/* Before the deadline, sec * NS_PER_SEC + ns < budget fits. */
		if (budget != NEVER && delay >= budget - (sec * NS_PER_SEC + ns))
			break;
		sec += delay / NS_PER_SEC;
		if ((ns += delay % NS_PER_SEC) >= NS_PER_SEC) {
			sec++;
			ns -= NS_PER_SEC;
		}
		if (printf("%ld\t%s\t%s\n", next, fmt_seconds(d, sizeof(d), 0,
		    delay), fmt_seconds(t, sizeof(t), sec, ns)) < 0)
			break;	/* close_stdout() reports it */
	}
	return close_stdout();
}

static void
export(const char *name, const char *value)
{
	if (setenv(name, value, 1) == -1)
		fatal("setenv %s", name);
}

static void
export_number(const char *name, long n)
{
	char buf[32];

	(void)snprintf(buf, sizeof(buf), "%ld", n);
	export(name, buf);
}

/*
 * RETRY_ATTEMPT, rewritten in place: setenv(3) would keep every old value
 * allocated, and a run with unlimited attempts would grow without end.
 */
static void
export_attempt(long attempt)
{
	static char var[] = "RETRY_ATTEMPT=-9223372036854775808";
	static int in_environ;

	(void)snprintf(var + strlen("RETRY_ATTEMPT="),
	    sizeof(var) - strlen("RETRY_ATTEMPT="), "%ld", attempt);
	if (!in_environ && putenv(var) != 0)
		fatal("putenv RETRY_ATTEMPT");
	in_environ = 1;
}

/* A random UUID, version 4, from the kernel's generator. */
static const char *
new_uuid(char *buf, size_t size)
{
	unsigned char u[16];

	if (entropy_left == sizeof(u))
		memcpy(u, entropy + sizeof(entropy) - sizeof(u), sizeof(u));
	else
		kernel_random(u, sizeof(u));
	entropy_left = 0;
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);	/* version 4 */
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	(void)snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
	    u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
	    u[14], u[15]);
	return buf;
}

/* What every attempt finds in its environment, but its number. */
static void
export_environment(const struct policy *p, const struct run *r, int outer)
{
	char buf[64];
	const char *key = p->key, *inherited = getenv("RETRY_IDEMPOTENCY_KEY");
	int64_t when;

	if (key == NULL && inherited != NULL && *inherited != '\0')
		key = inherited;
	if (key == NULL)
		key = new_uuid(buf, sizeof(buf));
	export("RETRY_IDEMPOTENCY_KEY", key);
	export_number("RETRY_MAX_ATTEMPTS", p->attempts);
	if (r->deadline == NEVER || outer)
		return;		/* an outer retry's value stands as it is */
	when = clock_ns(CLOCK_REALTIME) + (r->deadline - monotonic_now());
	(void)snprintf(buf, sizeof(buf), "%lld.%03lld",
	    (long long)(when / NS_PER_SEC),
	    (long long)(when % NS_PER_SEC / 1000000));
	export("RETRY_DEADLINE", buf);
}

/* The terminal, if any, on a descriptor above stdio and closed on exec. */
static void
open_terminal(void)
{
	int fd;

	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)
		return;		/* no controlling terminal: nothing to lend */
	if (fd > STDERR_FILENO) {
		tty = fd;
		return;
	}
	/* stdio was closed; keep messages from going to the terminal. */
	if ((tty = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) == -1)
		fatal("/dev/tty");
	if (close(fd) == -1)
		fatal("/dev/tty");
}

/* A handler only records; the run loop does the work. */
static void
on_signal(int sig)
{
	int i;

	for (i = 0; i < NFORWARDED; i++)
		if (forwarded[i] == sig)
			caught[i] = 1;
	/* SIGCHLD only has to end pselect(); the loop then asks waitid(). */
}

/*
 * Blocks the signals retry handles: they are delivered only inside
 * pselect(), so none can slip in between a check and a sleep.  Signals
 * that retry was started ignoring (nohup) stay ignored, and those it was
 * started blocking stay blocked.  SIGPIPE is ignored so that a closed
 * stderr cannot kill retry.
 */
static void
catch_signals(void)
{
	struct sigaction sa, ign;
	sigset_t handled;
	int i;

	sigemptyset(&handled);
	for (i = 0; i < NFORWARDED; i++)
		sigaddset(&handled, forwarded[i]);
	sigaddset(&handled, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &handled, &original_mask) == -1)
		fatal("sigprocmask");
	wait_mask = original_mask;
	for (i = 0; i < NFORWARDED; i++)
		if (!sigismember(&original_mask, forwarded[i]))
			sigdelset(&wait_mask, forwarded[i]);
	sigdelset(&wait_mask, SIGCHLD);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	ign = sa;
	ign.sa_handler = SIG_IGN;
	sigemptyset(&changed_set);
	for (i = 0; i < NCHANGED; i++) {
		if (sigaction(changed[i], NULL, &original_action[i]) == -1)
			fatal("sigaction");
		if (original_action[i].sa_handler == SIG_IGN) {
			if (changed[i] != SIGCHLD)
				continue;
			chld_ignored = 1;
		}
		if (sigaction(changed[i], changed[i] == SIGPIPE ? &ign : &sa,
		    NULL) == -1)
			fatal("sigaction");
		sigaddset(&changed_set, changed[i]);
	}
}

/* In the child: the dispositions and mask that retry was started with. */
static int
restore_signals(void)
{
	int i;

	for (i = 0; i < NCHANGED; i++)
		if (sigaction(changed[i], &original_action[i], NULL) == -1)
			return -1;
	return sigprocmask(SIG_SETMASK, &original_mask, NULL);
}

/* The first forwarded signal caught since the last call, or 0. */
static int
take_caught_signal(void)
{
	int i;

	for (i = 0; i < NFORWARDED; i++)
		if (caught[i]) {
			caught[i] = 0;
			return forwarded[i];
		}
	return 0;
}

/*
 * Sleeps in the kernel until a signal arrives or the monotonic time
 * until passes (NEVER: no limit).  The handled signals are unblocked only
 * here, atomically, so one sent just before the call is not lost.
 */
static void
wait_for_event(int64_t until)
{
	struct timespec ts, *limit = NULL;
	fd_set rd, wr;
	int64_t left;
	int nfds, now = 0, ready;

	FD_ZERO(&rd);
	FD_ZERO(&wr);
	if ((nfds = relay_fds(&io, &rd, &wr, &now)) == -1)
		fatal("%s", io.failed);
	if (now)
		until = 0;	/* relay has work to do at once */
	if (until != NEVER) {
		left = until - monotonic_now();
		if (left <= 0 && !now)
			return;
		ts.tv_sec = (time_t)(left > 0 ? left / NS_PER_SEC : 0);
		ts.tv_nsec = (long)(left > 0 ? left % NS_PER_SEC : 0);
		limit = &ts;
	}
	ready = pselect(nfds, &rd, &wr, NULL, limit, &wait_mask);
	if (ready == -1 && errno != EINTR)
		fatal("pselect");
	if (ready == -1) {
		FD_ZERO(&rd);	/* the sets say nothing after EINTR */
		FD_ZERO(&wr);
	}
	if ((ready > 0 || now) && relay_service(&io, &rd, &wr) == -1)
		fatal("%s", io.failed);
}

static int
in_foreground(void)
{
	return tty != -1 && tcgetpgrp(tty) == getpgrp();
}

/* sigprocmask(how) of SIGTTOU alone; *old, if given, gets the mask before. */
static int
mask_ttou(int how, sigset_t *old)
{
	sigset_t ttou;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	return sigprocmask(how, &ttou, old);
}

/* tcsetpgrp() from a background group raises SIGTTOU unless it is blocked. */
static int
set_foreground(pid_t pgid)
{
	sigset_t old;
	int ret;

	if (mask_ttou(SIG_BLOCK, &old) == -1)
		return -1;
	ret = tcsetpgrp(tty, pgid);
	if (sigprocmask(SIG_SETMASK, &old, NULL) == -1)
		return -1;
	return ret;
}

/*
 * While the attempt holds the terminal, what retry relays to it (output
 * conditions) is the attempt's output: with "stty tostop", writing it from
 * outside the foreground group would stop retry with SIGTTOU.  Blocked,
 * SIGTTOU lets the write through.
 */
static void
note_lent(pid_t pgid)
{
	tty_lent = pgid;
	if (mask_ttou(SIG_BLOCK, NULL) == -1)
		fatal("sigprocmask");
}

static void
lend_terminal(pid_t pgid)
{
	note_lent(pgid);
	if (set_foreground(pgid) == -1)
		warning("cannot give the terminal to the command");
}

/* Before retry prints or sleeps, the terminal is its own again. */
static void
take_terminal_back(void)
{
	if (tty_lent == 0)
		return;
	tty_lent = 0;
	if (set_foreground(getpgrp()) == -1)
		warning("cannot take the terminal back");
	if (!sigismember(&original_mask, SIGTTOU) &&
	    mask_ttou(SIG_UNBLOCK, NULL) == -1)
		fatal("sigprocmask");
}

static void
signal_group(pid_t pgid, int sig)
{
	char name[32];

	/* ESRCH: the whole group is gone already. */
	if (killpg(pgid, sig) == -1 && errno != ESRCH)
		warning("cannot send %s to the command",
		    signal_name(name, sizeof(name), sig));
}

/* SIGCONT after the signal, so that a stopped group acts on it. */
static void
signal_attempt(pid_t pgid, int sig)
{
	signal_group(pgid, sig);
	if (sig != SIGKILL && sig != SIGCONT)
		signal_group(pgid, SIGCONT);
}

/* In the child: the stdin, stdout and stderr that relay chose. */
static int
take_stdio(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (io.child_fd[i] != -1 && dup2(io.child_fd[i], i) == -1)
			return -1;
	return 0;
}

/*
 * In the child: its own process group, the terminal if retry holds it,
 * retry's original signal state, then the command.  An exec failure
 * travels to the parent as errno on the close-on-exec pipe.
 */
static void
exec_child(char **argv, int errfd, int fg)
{
	int e;

	if (setpgid(0, 0) == -1)
		goto fail;
	if (fg && set_foreground(getpgrp()) == -1)
		warning("cannot give the terminal to the command");
	if (restore_signals() == -1 || take_stdio() == -1)
		goto fail;
	execvp(argv[0], argv);
fail:
	e = errno;
	/* Should this write fail, the status 126/127 still tells the parent. */
	if (write(errfd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
	_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
}

/* posix_spawn() and its helpers return the error instead of setting errno. */
static void
spawn_check(int e, const char *what)
{
	if (e != 0) {
		errno = e;
		fatal("%s", what);
	}
}

/*
 * Like exec_child(), with posix_spawnp(): a process group of its own,
 * retry's original signal state, the stdio that relay chose.  Returns 0
 * or the error that kept the command from running.
 */
static int
spawn_child(char **argv, struct run *r)
{
	posix_spawnattr_t sa;
	posix_spawn_file_actions_t fa;
	int e, i;

	spawn_check(posix_spawnattr_init(&sa), "posix_spawnattr_init");
	spawn_check(posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK),
	    "posix_spawnattr_setflags");
	spawn_check(posix_spawnattr_setpgroup(&sa, 0),
	    "posix_spawnattr_setpgroup");
	/* What retry caught or ignored goes back to the default it was. */
	spawn_check(posix_spawnattr_setsigdefault(&sa, &changed_set),
	    "posix_spawnattr_setsigdefault");
	spawn_check(posix_spawnattr_setsigmask(&sa, &original_mask),
	    "posix_spawnattr_setsigmask");
	spawn_check(posix_spawn_file_actions_init(&fa),
	    "posix_spawn_file_actions_init");
	for (i = 0; i < 3; i++)
		if (io.child_fd[i] != -1)
			spawn_check(posix_spawn_file_actions_adddup2(&fa,
			    io.child_fd[i], i), "posix_spawn_file_actions_adddup2");
	e = posix_spawnp(&r->child, argv[0], &fa, &sa, argv, environ);
	spawn_check(posix_spawn_file_actions_destroy(&fa),
	    "posix_spawn_file_actions_destroy");
	spawn_check(posix_spawnattr_destroy(&sa), "posix_spawnattr_destroy");
	return e;
}

/*
 * With fork() and exec_child(), which can also hand the terminal over.
 * Returns 0 or the error that kept the command from running.
 */
static int
fork_child(char **argv, struct run *r, int fg)
{
	int fds[2], e, status;
	ssize_t n;

	if (pipe(fds) == -1)
		fatal("pipe");
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) == -1)
		fatal("fcntl");
	if (fflush(NULL) == EOF)
		fatal("fflush");
	if ((r->child = fork()) == -1)
		fatal("fork");
	if (r->child == 0)
		exec_child(argv, fds[1], fg);
	if (fg)
		note_lent(r->child);
	if (close(fds[1]) == -1)
		fatal("close");
	/*
	 * End of file: exec closed the pipe, the command runs.  Only the
	 * child calls setpgid(): retry signals the group only after this
	 * read, by which time the group exists.
	 */
	do
		n = read(fds[0], &e, sizeof(e));
	while (n == -1 && errno == EINTR);
	if (n == -1)
		fatal("read");
	if (close(fds[0]) == -1)
		fatal("close");
	if (n == 0)
		return 0;
	if (waitpid(r->child, &status, 0) == -1)
		fatal("waitpid");
	return n == (ssize_t)sizeof(e) ? e : EIO;
}

/*
 * Starts the command in a process group of its own, in the foreground of
 * the terminal when retry is there.  Returns 0, with the reason recorded,
 * when the command could not be executed.
 *
 * posix_spawnp() started a command in about 30% less time than fork() on
 * the bench's machine: fork() copies retry's page tables for nothing.  It cannot hand over the
 * terminal or give back an ignored SIGCHLD, and unlike execvp() it does not
 * run a file without "#!" through sh: those go through fork().
 */
static int
start_child(char **argv, struct run *r)
{
	int e, fg = in_foreground();

	if (relay_prepare(&io) == -1)
		fatal("%s", io.failed);
	if (fg || chld_ignored || (e = spawn_child(argv, r)) == ENOEXEC)
		e = fork_child(argv, r, fg);
	if (relay_forked(&io) == -1)
		fatal("close");
	if (e == 0)
		return 1;
	r->exec_errno = e;
	r->status = e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	return 0;
}

static void
record_status(struct run *r, int status)
{
	if (WIFSIGNALED(status)) {
		r->termsig = WTERMSIG(status);
		r->status = 128 + r->termsig;
	} else
		r->status = WEXITSTATUS(status);
	if (r->timed_out)
		r->status = EXIT_TIMEDOUT;
}

/*
 * The attempt was stopped by the terminal (Ctrl-Z, or input while in the
 * background).  Stop retry as well, so that the shell sees one stopped
 * job; once continued (fg or bg), continue the attempt, in the terminal's
 * foreground again when retry is there.  Other stops (SIGSTOP from
 * elsewhere) are left to whoever sent them.
 */
static void
follow_stop(const struct run *r, int sig)
{
	if (tty == -1 || (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
		return;
	take_terminal_back();
	if (raise(sig) != 0)
		warning("raise");
	if (in_foreground())
		lend_terminal(r->child);
	signal_group(r->child, SIGCONT);
}

/*
 * Asks, without blocking, whether the attempt has ended, and records its
 * status if so.  A stop is passed on by follow_stop().
 */
static int
attempt_ended(struct run *r)
{
	siginfo_t si;
	int status;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)r->child, &si,
	    WEXITED | WSTOPPED | WNOHANG | WNOWAIT) == -1)
		fatal("waitid");
	if (si.si_pid == 0)
		return 0;
	if (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED &&
	    si.si_code != CLD_DUMPED) {
		if (waitpid(r->child, &status, WUNTRACED | WNOHANG) == -1)
			fatal("waitpid");
		follow_stop(r, si.si_status);
		return 0;
	}
	/*
	 * Nothing of a stopped attempt may outlive it.  The unreaped leader
	 * still holds the group's number, so no other group can have it.
	 */
	if (r->stopping)
		signal_group(r->child, SIGKILL);
	if (waitpid(r->child, &status, 0) == -1)
		fatal("waitpid");
	record_status(r, status);
	return 1;
}

static int
signal_pending(void)
{
	int i;

	for (i = 0; i < NFORWARDED; i++)
		if (caught[i])
			return 1;
	return 0;
}

/*
 * Output still in flight goes out before retry moves on; a signal for
 * retry cuts it short (it is handled by the caller, not lost).
 */
static void
drain_output(void)
{
	while (!relay_output_done(&io) && !signal_pending())
		wait_for_event(NEVER);
}

/* After an attempt: its output finished, and read for the patterns. */
static void
finish_output(void)
{
	if (relay_attempt_ended(&io) == -1)
		fatal("%s", io.failed);
	drain_output();
}

/* --buffer-stdout: the held output of the attempt to fd. */
static void
release_output(int fd)
{
	if (relay_release(&io, fd) == -1)
		fatal("%s", io.failed);
	drain_output();
}

/*
 * Sleeps until the attempt ends, forwarding the signals retry catches,
 * stopping it with --signal at its timeout or the deadline, and with
 * SIGKILL --kill-after later.
 */
static void
watch_child(const struct policy *p, struct run *r)
{
	int64_t now = monotonic_now(), stop_at = r->deadline, kill_at = NEVER;
	int sig, at_deadline;

	if (p->timeout != 0 && p->timeout < r->deadline - now)
		stop_at = now + p->timeout;
	at_deadline = stop_at == r->deadline;
	while (!attempt_ended(r)) {
		while ((sig = take_caught_signal()) != 0) {
			if (r->interrupt == 0)
				r->interrupt = sig;
			signal_attempt(r->child, sig);
		}
		now = monotonic_now();
		if (!r->stopping && now >= stop_at) {
			r->stopping = 1;
			r->timed_out = at_deadline ? AT_DEADLINE : TIMED_OUT;
			signal_attempt(r->child, p->signal);
			kill_at = p->kill_after < NEVER - now ?
			    now + p->kill_after : NEVER;
		}
		if (r->stopping && now >= kill_at) {
			signal_group(r->child, SIGKILL);
			kill_at = NEVER;
		}
		wait_for_event(r->stopping ? kill_at : stop_at);
	}
}

/* A failure of the shared record is retry's own; a corrupt one is said once. */
static void
check_record(const struct policy *p, int ret, const char *err)
{
	if (ret == -1) {
		say("%s", err);
		exit(EXIT_FAILURE_);
	}
	if (ret == 1)
		say("circuit %s: the record was corrupt; it starts afresh",
		    p->circuit);
}

/*
 * Runs one update of the shared record, waiting a few ms at a time while
 * another process holds its lock; a signal or the deadline ends the wait
 * (returns 0, with why recorded).  Without a run (status, reset) it just
 * waits.
 */
static int
update_record(const struct policy *p, struct run *r, enum outcome why,
    int (*change)(struct record *, void *), void *arg)
{
	struct timespec pause = { 0, 2000000 };
	char err[MSGMAX];
	int ret;

	while ((ret = circuit_update(&circuit, change, arg, err,
	    sizeof(err))) == CIRCUIT_BUSY) {
		if (r == NULL) {
			if (nanosleep(&pause, NULL) == -1 && errno != EINTR)
				fatal("nanosleep");
		} else if (!wait_for(r, monotonic_now() + 2000000, why))
			return 0;
	}
	check_record(p, ret, err);
	return 1;
}

/* Unix ns from now on the real clock, as a time on the monotonic one. */
static int64_t
monotonic_from_real(int64_t when)
{
	return monotonic_now() + (when - clock_ns(CLOCK_REALTIME));
}

/*
 * Waits, in a sleep that signals cut short, until the monotonic time
 * wake, unless that is at or past the deadline.  Returns 0, with why and
 * the interrupting signal recorded, when the run must end instead.
 */
static int
wait_for(struct run *r, int64_t wake, enum outcome why)
{
	int64_t now = monotonic_now();

	if (wake >= r->deadline) {
		r->why = why;
		if (why == DEADLINE && r->attempt == 0)
			r->status = EXIT_TIMEDOUT;	/* nothing ran */
		return 0;
	}
	r->interrupt = sleep_until(wake);
	r->asleep += monotonic_now() - now;
	if (r->interrupt != 0) {
		r->why = INTERRUPTED;
		return 0;
	}
	return 1;
}

/*
 * Before an attempt: the splay before the first; with --circuit, wait
 * while the circuit is open or another process probes it, and for a
 * retry, wait for the shared budget.
 */
static int
may_start(const struct policy *p, struct run *r)
{
	char d[32];
	struct admission a;
	struct budget b;
	int64_t wake;

	if (r->why != RUNNING)
		return 0;	/* begin_run() found no time left */
	if (r->attempt == 0 && p->splay > 0 && !r->splayed) {
		r->splayed = 1;
		wake = monotonic_now() + splay_delay(p, r);
		detail("splay: %ss before the first attempt",
		    fmt_seconds(d, sizeof(d), 0, wake - monotonic_now()));
		if (!wait_for(r, wake, DEADLINE))
			return 0;
	}
	while (p->circuit != NULL) {
		a.now = clock_ns(CLOCK_REALTIME);
		a.self = getpid();
		if (!update_record(p, r, DEADLINE, circuit_admit, &a))
			return 0;
		if (a.verdict == ADMIT_WAIT) {
			/* Half-open elsewhere: look again in 50-150 ms. */
			wake = a.wake != 0 ? monotonic_from_real(a.wake) :
			    monotonic_now() + (int64_t)((0.05 +
			    0.1 * rng_uniform(&r->aside)) * NS_PER_SEC);
			detail("circuit %s is open; waiting %ss", p->circuit,
			    fmt_seconds(d, sizeof(d), 0, wake - monotonic_now()));
			if (!wait_for(r, wake, CIRCUIT_OPEN))
				return 0;
			continue;
		}
		if (r->attempt == 0 || p->budget == 0)
			break;
		b.now = a.now;
		b.window = p->budget_window;
		b.n = p->budget;
		if (!update_record(p, r, DEADLINE, circuit_take_retry, &b))
			return 0;
		if (b.granted)
			break;
		/* Jittered, so that the waiting runs do not all come back at once. */
		wake = monotonic_from_real(b.free_at) + (int64_t)(rng_uniform(
		    &r->aside) * 0.1 * (double)p->budget_window);
		detail("retry budget of circuit %s spent; waiting %ss",
		    p->circuit, fmt_seconds(d, sizeof(d), 0,
		    wake - monotonic_now()));
		if (!wait_for(r, wake, BUDGET_SPENT))
			return 0;
	}
	/* A signal caught while the record was updated: no attempt now. */
	if ((r->interrupt = take_caught_signal()) != 0) {
		r->why = INTERRUPTED;
		return 0;
	}
	return 1;
}

/* With --circuit: the attempt's end counts for every run of the name. */
static void
tell_circuit(const struct policy *p, struct run *r)
{
	struct result res;

	if (p->circuit == NULL)
		return;
	res.success = r->exec_errno == 0 && r->status == 0 && !io.on_hit &&
	    !io.stop_hit;
	if (!res.success && !retryable(p, r))
		return;		/* not the downstream's failure */
	res.now = clock_ns(CLOCK_REALTIME);
	res.self = getpid();
	res.trip = p->trip;
	res.cool = p->cool;
	res.cap = p->cap;
	res.u = rng_uniform(&r->aside);
	if (!update_record(p, r, r->why, circuit_result, &res))
		detail("circuit %s: the end of attempt %ld was not recorded",
		    p->circuit, r->attempt);
}

/* --circuit-status and --circuit-reset. */
static int
circuit_command(const struct policy *p)
{
	char err[MSGMAX], d[32];
	struct record rec;
	int64_t now;
	size_t i, n = 0;

	if (circuit_open(&circuit, p->circuit, err, sizeof(err)) == -1)
		usage_error("%s", err);
	if (p->circuit_command == CIRCUIT_RESET) {
		update_record(p, NULL, RUNNING, circuit_reset, NULL);
		return 0;
	}
	update_record(p, NULL, RUNNING, circuit_read, &rec);
	now = clock_ns(CLOCK_REALTIME);
	if (printf("circuit:   %s\nstate:     %s", p->circuit,
	    circuit_state_name(rec.state)) < 0)
		fatal("stdout");
	if (rec.state == OPEN && rec.half_open_at > now)
		printf(", half-opens in %ss", fmt_seconds(d, sizeof(d), 0,
		    rec.half_open_at - now));
	else if (rec.state == OPEN)
		printf(", half-opens at the next attempt");
	else if (rec.state == HALF_OPEN)
		printf(", probed by process %ld", (long)rec.probe);
	printf("\nfailures:  %ld in a row\nopenings:  %ld in a row\n",
	    rec.failures, rec.openings);
	for (i = 0; i < rec.nretries; i++)
		n += rec.retries[i] > now - rec.window;
	if (rec.window > 0)
		printf("retries:   %zu in the last %s (budget %ld)\n", n,
		    fmt_duration(d, sizeof(d), rec.window), rec.budget);
	else
		printf("retries:   not counted: no run with --budget yet\n");
	return close_stdout();
}

/*
 * Runs the command once and records how it ended.  Returns 0, with the
 * reason recorded, when no attempt may start (splay, circuit or budget
 * waits cut short by the deadline or a signal).
 */
static int
run_attempt(const struct policy *p, struct run *r)
{
	if (!may_start(p, r))
		return 0;
	r->attempt++;
	r->stopping = 0;
	r->timed_out = NOT_TIMED_OUT;
	r->termsig = 0;
	export_attempt(r->attempt);
	if (r->attempt > 1)
		clear_hint();	/* the first finds it as made: empty */
	r->began = monotonic_now();
	if (start_child(p->argv, r))
		watch_child(p, r);
	finish_output();
	r->ended = monotonic_now();
	take_terminal_back();
	take_late_signal(r);
	tell_circuit(p, r);
	return 1;
}

/* "attempt 2/5", or "attempt 2" when attempts are unlimited. */
static const char *
attempt_label(char *buf, size_t size, const struct policy *p,
    const struct run *r)
{
	if (p->attempts == 0)
		(void)snprintf(buf, size, "attempt %ld", r->attempt);
	else
		(void)snprintf(buf, size, "attempt %ld/%ld", r->attempt,
		    p->attempts);
	return buf;
}

/* How the last attempt ended: "failed with exit 1", "killed by SIGKILL". */
static const char *
attempt_end(char *buf, size_t size, const struct policy *p,
    const struct run *r)
{
	char name[32], d[32];

	if (r->timed_out == AT_DEADLINE)
		(void)snprintf(buf, size, "timed out at the deadline");
	else if (r->timed_out == TIMED_OUT)
		(void)snprintf(buf, size, "timed out after %s",
		    fmt_duration(d, sizeof(d), p->timeout));
	else if (r->termsig != 0)
		(void)snprintf(buf, size, "killed by %s",
		    signal_name(name, sizeof(name), r->termsig));
	else if (r->status == 0)
		(void)snprintf(buf, size, "succeeded");
	else
		(void)snprintf(buf, size, "failed with exit %d", r->status);
	return buf;
}

/* By its status or its output, the attempt failed in a way worth retrying. */
static int
retryable(const struct policy *p, const struct run *r)
{
	if (r->exec_errno != 0 || io.stop_hit)
		return 0;
	return io.on_hit || (codes_has(&p->on, r->status) &&
	    !codes_has(&p->stop_on, r->status));
}

/*
 * A signal that came as the attempt ended is still pending if the end was
 * seen first: deliver it now, or retry would carry on as if never told.
 */
static void
take_late_signal(struct run *r)
{
	struct timespec now = { 0, 0 };
	int sig;

	if (pselect(0, NULL, NULL, NULL, &now, &wait_mask) == -1 &&
	    errno != EINTR)
		fatal("pselect");
	if ((sig = take_caught_signal()) != 0 && r->interrupt == 0)
		r->interrupt = sig;
}

/* Decides whether another attempt may follow; if not, records why. */
static int
should_retry(const struct policy *p, struct run *r)
{
	int keyboard = !r->timed_out &&
	    (r->termsig == SIGINT || r->termsig == SIGQUIT);

	if (r->exec_errno != 0)
		r->why = CANNOT_RUN;
	else if (r->interrupt != 0 || keyboard)
		r->why = INTERRUPTED;
	else if (io.stop_hit)
		r->why = OUTPUT_STOP;
	else if (r->timed_out == AT_DEADLINE)
		r->why = DEADLINE;
	else if (!retryable(p, r))
		r->why = r->status == 0 ? SUCCEEDED : NOT_RETRYABLE;
	else if (p->attempts != 0 && r->attempt >= p->attempts)
		r->why = EXHAUSTED;
	else
		return 1;
	return 0;
}

/*
 * RETRY_AFTER_FILE: an empty file in a directory of retry's own (0700),
 * where an attempt may write how long to wait before the next.
 */
static void
make_hint_file(void)
{
	const char *dir;
	int fd;

	if (temp_template(hint_dir, sizeof(hint_dir), &dir) == -1 ||
	    mkdtemp(hint_dir) == NULL) {
		hint_dir[0] = '\0';
		fatal("cannot make a directory in %s", dir);
	}
	if (snprintf(hint_file, sizeof(hint_file), "%s/retry-after",
	    hint_dir) >= (int)sizeof(hint_file)) {
		errno = ENAMETOOLONG;
		fatal("%s", hint_dir);
	}
	if ((fd = open(hint_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1 || close(fd) == -1)
		fatal("%s", hint_file);
	export("RETRY_AFTER_FILE", hint_file);
}

/* Emptied before each attempt; made again if an attempt removed it. */
static void
clear_hint(void)
{
	int fd;

	if (hint_file[0] == '\0')
		return;
	if ((fd = open(hint_file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || close(fd) == -1)
		fatal("%s", hint_file);
}

/* Removes the hint file and its directory, on every way out but SIGKILL. */
static void
clean_up(void)
{
	if (hint_file[0] != '\0' && unlink(hint_file) == -1 && errno != ENOENT)
		warning("%s", hint_file);
	if (hint_dir[0] != '\0' && rmdir(hint_dir) == -1)
		warning("%s", hint_dir);
	hint_file[0] = hint_dir[0] = '\0';
	if (reporting)
		report_abandon(&report);
	reporting = 0;
}

/*
 * A delay that the attempt wrote to RETRY_AFTER_FILE replaces the backoff
 * in r->delay, with up to 10 % more so that clients told the same second
 * do not return together, and at most the cap; but a hint that passes the
 * deadline (room from now) stays whole, so that the run ends as it would
 * for a backoff that long.  Returns 1 if so; *note gets what the message
 * should add.
 */
static int
take_hint(const struct policy *p, struct run *r, int64_t room, char *note,
    size_t size)
{
	char text[128], hint[32], cap[32];
	const char *why;
	int64_t delay;
	ssize_t n;
	int fd;

	note[0] = '\0';
	if ((fd = open(hint_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		detail("no Retry-After hint: %s", strerror(errno));
		return 0;
	}
	n = read(fd, text, sizeof(text) - 1);
	if (close(fd) == -1 || n == -1) {
		warning("%s", hint_file);
		return 0;
	}
	text[n] = '\0';
	if (n == (ssize_t)sizeof(text) - 1)
		why = "too long";
	else
		why = parse_hint(text, clock_ns(CLOCK_REALTIME), &delay);
	if (why != NULL) {
		detail("Retry-After hint not used: %s", why);
		return 0;
	}
	fmt_duration(hint, sizeof(hint), delay);
	delay += (int64_t)(rng_uniform(&r->aside) * 0.1 * (double)delay);
	if (delay > p->cap && delay < room) {
		(void)snprintf(note, size, " (Retry-After %s, cut to the cap %s)",
		    hint, fmt_duration(cap, sizeof(cap), p->cap));
		delay = p->cap;
	} else
		(void)snprintf(note, size, " (Retry-After %s)", hint);
	r->delay = delay;
	return 1;
}

/* --report: one more attempt, with the delay that follows it (or -1). */
static void
record_attempt(struct run *r)
{
	struct attempt_record a;

	if (!reporting || r->recorded == r->attempt)
		return;
	r->recorded = r->attempt;
	a.number = r->attempt;
	a.start = r->began - r->start;
	a.duration = r->ended - r->began;
	a.status = r->status;
	a.termsig = r->termsig;
	a.timed_out = r->timed_out != NOT_TIMED_OUT;
	a.delay = r->why == RUNNING ? r->delay : -1;
	a.from_hint = r->from_hint;
	if (report_attempt(&report, &a) == -1)
		fatal("report");
}

/* Sleeps until the monotonic time wake; returns a signal that cut it short. */
static int
sleep_until(int64_t wake)
{
	int sig;

	while ((sig = take_caught_signal()) == 0 && monotonic_now() < wake)
		wait_for_event(wake);
	return sig;
}

static void
explain_delay(const struct policy *p, const struct step *st)
{
	char delay[32], lo[32], hi[32], step[32], cap[32];

	detail("drew %s from [%s, %s]: %s jitter, step %s%s%s",
	    fmt_duration(delay, sizeof(delay), st->delay),
	    fmt_duration(lo, sizeof(lo), st->lo),
	    fmt_duration(hi, sizeof(hi), st->hi), jitter_name(p->jitter),
	    fmt_duration(step, sizeof(step), st->step),
	    st->capped ? ", cut to the cap " : "",
	    st->capped ? fmt_duration(cap, sizeof(cap), p->cap) : "");
}

/*
 * Draws the next delay and sleeps it, unless it would end at or after the
 * deadline.  Returns 0, with the reason recorded, when no attempt follows.
 */
static int
sleep_before_retry(const struct policy *p, struct run *r)
{
	char label[64], end[96], d[32], hint[64];
	struct step st;
	int64_t now;

	now = monotonic_now();
	r->delay = backoff_next(&r->backoff, &r->rng, &st);
	r->from_hint = take_hint(p, r, r->deadline - now, hint, sizeof(hint));
	if (r->delay >= r->deadline - now) {
		r->why = DEADLINE;
		return 0;
	}
	/* Retried after all: its held output goes to the log, not stdout. */
	release_output(STDERR_FILENO);
	record_attempt(r);
	say("%s %s; next in %ss%s", attempt_label(label, sizeof(label), p, r),
	    attempt_end(end, sizeof(end), p, r),
	    fmt_seconds(d, sizeof(d), 0, r->delay), hint);
	if (!r->from_hint)
		explain_delay(p, &st);
	r->interrupt = sleep_until(now + r->delay);
	r->asleep += monotonic_now() - now;
	if (r->interrupt != 0) {
		r->why = INTERRUPTED;
		return 0;
	}
	return 1;
}

static void
describe_policy(const struct policy *p, const struct run *r)
{
	char on[1024], base[32], cap[32], timeout[32], deadline[32];
	struct codes retry_on;
	int i;

	if (verbosity < VERBOSE)
		return;		/* formatting it costs a run's start-up */
	memset(&retry_on, 0, sizeof(retry_on));
	for (i = 0; i < 256; i++)
		if (codes_has(&p->on, i) && !codes_has(&p->stop_on, i))
			codes_add(&retry_on, i);
	detail("policy: %ld attempts (0: no limit), delay %s x %g up to %s "
	    "with %s jitter, retry on %s, timeout %s, deadline %s, key %s",
	    p->attempts, fmt_duration(base, sizeof(base), p->base), p->factor,
	    fmt_duration(cap, sizeof(cap), p->cap), jitter_name(p->jitter),
	    fmt_codes(on, sizeof(on), &retry_on),
	    p->timeout ? fmt_duration(timeout, sizeof(timeout), p->timeout) :
	    "none",
	    r->deadline == NEVER ? "none" : fmt_duration(deadline,
	    sizeof(deadline), r->deadline - r->start),
	    getenv("RETRY_IDEMPOTENCY_KEY"));
}

/*
 * Starts the clock, settles the deadline and the environment, and sets up
 * the terminal and the signals before any child is forked.
 */
static void
begin_run(const struct policy *p, struct run *r)
{
	char err[MSGMAX];
	int outer;

	if (p->replay_stdin && isatty(STDIN_FILENO))
		usage_error("--replay-stdin: standard input is a terminal");
	if (p->report != NULL) {
		if (report_open(&report, p->report) == -1)
			usage_error("--report '%s': %s", p->report,
			    strerror(errno));
		reporting = 1;
	}
	if (atexit(clean_up) != 0)
		fatal("atexit");
	r->start = monotonic_now();
	r->deadline = find_deadline(p, r->start, &outer);
	export_environment(p, r, outer);
	make_hint_file();
	if (relay_init(&io, p->replay_stdin, p->buffer_stdout,
	    p->on_output.set ? &p->on_output.re : NULL,
	    p->stop_output.set ? &p->stop_output.re : NULL) == -1)
		fatal("%s", io.failed);
	if (p->circuit != NULL &&
	    circuit_open(&circuit, p->circuit, err, sizeof(err)) == -1)
		usage_error("%s", err);
	open_terminal();
	catch_signals();
	describe_policy(p, r);
	if (r->deadline <= r->start) {	/* an outer retry's, gone by */
		r->why = DEADLINE;
		r->status = EXIT_TIMEDOUT;
	}
}

static const char *const outcome_names[] = {
	"running", "success", "status not retryable", "attempts used up",
	"deadline", "interrupted", "cannot run the command",
	"output matched --stop-on-output", "circuit open", "retry budget spent",
};

/* The same outcomes as a report's "outcome". */
static const char *const outcome_keys[] = {
	"running", "success", "not_retryable", "attempts_exhausted",
	"deadline", "interrupted", "not_retryable", "not_retryable",
	"circuit_open", "budget_spent",
};

/* The one line that says why retry gives up, and with -v a summary. */
static void
report_end(const struct policy *p, struct run *r)
{
	char label[64], end[96], name[32], t[32], s[32];
	int status, sig;

	release_output(STDOUT_FILENO);
	if (reporting) {
		record_attempt(r);
		status = exit_status(r, &sig);
		if (report_finish(&report, p->argv, outcome_keys[r->why],
		    status, sig, monotonic_now() - r->start) == -1)
			warning("--report '%s'", p->report);
		reporting = 0;
	}
	attempt_label(label, sizeof(label), p, r);
	attempt_end(end, sizeof(end), p, r);
	switch (r->why) {
	case SUCCEEDED:
		break;
	case CANNOT_RUN:
		say("cannot run '%s': %s", p->argv[0], strerror(r->exec_errno));
		break;
	case NOT_RETRYABLE:
		say("%s %s; giving up: status %d is not retryable", label, end,
		    r->status);
		break;
	case EXHAUSTED:
		say("%s %s; giving up: no attempts left", label, end);
		break;
	case DEADLINE:
		if (r->attempt == 0 && r->deadline <= r->start)
			say("the deadline has passed; not running '%s'",
			    p->argv[0]);
		else if (r->attempt == 0 && r->splayed)
			say("the splay would pass the deadline; not running '%s'",
			    p->argv[0]);
		else if (r->attempt == 0)
			say("the deadline came before the first attempt; not "
			    "running '%s'", p->argv[0]);
		else if (r->timed_out == AT_DEADLINE)
			say("%s %s; giving up", label, end);
		else
			say("%s %s; giving up: a delay of %ss would pass the "
			    "deadline", label, end, fmt_seconds(t, sizeof(t),
			    0, r->delay));
		break;
	case INTERRUPTED:
		if (r->attempt == 0)
			say("interrupted by %s before the first attempt",
			    signal_name(name, sizeof(name), r->interrupt));
		else if (r->interrupt != 0)
			say("%s %s; giving up: interrupted by %s", label, end,
			    signal_name(name, sizeof(name), r->interrupt));
		else
			say("%s %s; giving up: interrupted", label, end);
		break;
	case OUTPUT_STOP:
		say("%s %s; giving up: its output matched --stop-on-output",
		    label, end);
		break;
	case CIRCUIT_OPEN:
		say("circuit %s stays open past the deadline; giving up",
		    p->circuit);
		break;
	case BUDGET_SPENT:
		say("%s %s; giving up: the retry budget of circuit %s is spent "
		    "past the deadline", label, end, p->circuit);
		break;
	case RUNNING:
		break;
	}
	detail("%ld attempt%s in %ss, %ss asleep; stopped: %s", r->attempt,
	    r->attempt == 1 ? "" : "s",
	    fmt_seconds(t, sizeof(t), 0, monotonic_now() - r->start),
	    fmt_seconds(s, sizeof(s), 0, r->asleep), outcome_names[r->why]);
}

/*
 * The exit status, and in *sig the signal that retry dies of instead
 * (128 + sig, as a shell would show it), or 0.
 */
static int
exit_status(const struct run *r, int *sig)
{
	*sig = 0;
	if (r->why == CIRCUIT_OPEN)
		return EXIT_TEMPFAIL;
	if (r->interrupt != 0)
		*sig = r->interrupt;
	else if (!r->timed_out &&
	    (r->termsig == SIGINT || r->termsig == SIGQUIT))
		*sig = r->termsig;
	return *sig != 0 ? 128 + *sig : r->status;
}

/*
 * Dies of sig the way the default action would, so that a calling shell
 * sees the interruption (Cracauer, "Proper handling of SIGINT/SIGQUIT"):
 * core dumps off, default action, unblocked, raised.
 */
static void
die_by_signal(int sig)
{
	struct rlimit nocore;
	struct sigaction sa;
	sigset_t set;

	clean_up();	/* atexit handlers do not run on the way out */
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

/* The status that retry(1) promises for the way the run ended. */
static void
exit_as_run_ended(const struct run *r)
{
	int sig, status = exit_status(r, &sig);

	if (sig != 0)
		die_by_signal(sig);
	exit(status);
}
