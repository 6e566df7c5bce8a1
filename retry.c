/* SPDX-License-Identifier: ISC */
/*
 * retry: run a command again after a growing, jittered delay until it
 * succeeds, its attempts run out or a deadline passes.  See retry(1).
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backoff.h"
#include "circuit.h"
#include "files.h"
#include "env.h"
#include "msg.h"
#include "options.h"
#include "parse.h"
#include "proc.h"
#include "relay.h"
#include "report.h"
#include "url.h"

#ifndef VERSION
#define VERSION "unknown"
#endif

#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the circuit stays open */
#define EXIT_TIMEDOUT	124
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127
#define HINT_MAX	16384	/* a hint file read, at most */

enum timed_out { NOT_TIMED_OUT, TIMED_OUT, AT_DEADLINE };

/* Why the run ends; RUNNING while it does not. */
enum outcome {
	RUNNING, SUCCEEDED, NOT_RETRYABLE, EXHAUSTED, DEADLINE, INTERRUPTED,
	CANNOT_RUN, OUTPUT_STOP, CIRCUIT_OPEN, BUDGET_SPENT, READER_GONE,
	STORE_DOWN
};

/* How the run is going. */
struct run {
	int64_t		 start, deadline;	/* monotonic ns; NEVER: none */
	struct backoff	 backoff;
	struct rng	 rng;			/* the schedule's draws */
	struct rng	 aside;			/* all other draws */
	long		 attempt;
	struct ending	 end;			/* what came of the last one */
	enum timed_out	 timed_out;
	int		 status;		/* its status, as reported */
	int		 interrupt;		/* a signal retry itself got */
	int64_t		 began, ended;		/* the last attempt's */
	int64_t		 delay, asleep;
	int		 from_hint;		/* the delay came from a hint */
	long		 recorded;		/* attempts in the report */
	int		 store_down;		/* --store failed */
	int		 circuit_off;		/* so, --store-fail open: none */
	enum outcome	 why;
};

static void	 read_command_line(int, char *[], struct policy *);
static void	 store_from_environment(struct policy *);
static int	 circuit_command(const struct policy *);
static void	 seed_generator(const struct policy *, struct run *);
static int	 print_schedule(const struct policy *, struct run *);
static enum outcome begin_run(const struct policy *, struct run *);
static enum outcome may_start(const struct policy *, struct run *);
static void	 run_attempt(const struct policy *, struct run *);
static enum outcome judge_attempt(const struct policy *, const struct run *);
static enum outcome sleep_before_retry(const struct policy *, struct run *);
static void	 report_end(const struct policy *, struct run *);
static void	 exit_as_run_ended(const struct run *) NORETURN;
static int	 retryable(const struct policy *, const struct run *);

static struct relay	 io;		/* the attempts' stdio */
static struct report	 report;
static int		 reporting;
static struct circuit	 circuit;	/* --circuit: the shared record */

int
main(int argc, char *argv[])
{
	struct policy p;
	struct run r;

	proc_hold_stdio();
	read_command_line(argc, argv, &p);
	if (p.circuit_command != CIRCUIT_RUN)
		return circuit_command(&p);
	seed_generator(&p, &r);
	if (p.dry_run)
		return print_schedule(&p, &r);
	r.why = begin_run(&p, &r);
	while (r.why == RUNNING) {
		if ((r.why = may_start(&p, &r)) != RUNNING)
			break;
		run_attempt(&p, &r);
		if ((r.why = judge_attempt(&p, &r)) != RUNNING)
			break;
		r.why = sleep_before_retry(&p, &r);
	}
	report_end(&p, &r);
	exit_as_run_ended(&r);
}

/* stdout is checked once at the end, so that a full disk is an error. */
static int
close_stdout(void)
{
	if (ferror(stdout) | (fclose(stdout) == EOF)) {	/* both, always */
		warning("stdout");
		return EXIT_OWN_FAILURE;
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
		msg_verbosity(p->verbosity);
		store_from_environment(p);
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
		fatalx("%s", err);
	}
}

/*
 * RETRY_STORE, for a run with a circuit whose command line gives no
 * --store; empty is unset.  A bad one is a usage error, its password
 * masked.
 */
static void
store_from_environment(struct policy *p)
{
	const char *url = getenv("RETRY_STORE");
	char err[MSGMAX];

	if (p->store.given || p->circuit == NULL || url == NULL || *url == '\0')
		return;
	if (url_check("RETRY_STORE", url, &p->store, err, sizeof(err)) == -1)
		fatalx("%s", err);
}

/* The shared state of --circuit: on the store, else in the state directory. */
static int
open_circuit(const struct policy *p, int reading_only)
{
	char d[32];

	if (!p->store.given)
		return circuit_open(&circuit, p->circuit, reading_only);
	circuit_open_store(&circuit, p->circuit, &p->store, p->store_timeout);
	detail("circuit %s: store %s, %s a step at most, --store-fail %s",
	    p->circuit, p->store.shown, fmt_duration(d, sizeof(d),
	    p->store_timeout), p->store_closed ? "closed" : "open");
	return 0;
}

/*
 * Seeds from --seed, else from the kernel, never from the clock or the
 * pid: processes started in the same instant must draw different delays.
 */
static void
seed_generator(const struct policy *p, struct run *r)
{
	uint64_t seed = p->seeded ? p->seed : random_seed();

	memset(r, 0, sizeof(*r));
	rng_seed(&r->rng, seed);
	/* Hints and shared waits draw apart: the schedule stays --dry-run's. */
	rng_seed(&r->aside, seed ^ UINT64_C(0x9e3779b97f4a7c15));
	backoff_init(&r->backoff, p->base, p->factor, p->cap, p->jitter);
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

	budget = find_deadline(p->deadline, 0, &outer);
	if (p->attempts == 0 && budget == NEVER)
		fatalx("--dry-run with unlimited attempts needs a --deadline");
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

/* The temporary files go on every way out but SIGKILL. */
static void
clean_up(void)
{
	hint_close();
	if (reporting)
		report_abandon(&report);
	reporting = 0;
}

static void
describe_policy(const struct policy *p, const struct run *r)
{
	char on[1024], base[32], cap[32], timeout[32], deadline[32];
	struct codes retry_on;
	int i;

	if (!msg_verbose())
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
 * RETRY_AFTER_FILE, where an attempt may say how long to wait before the
 * next: a path that costs nothing until an attempt writes it.  Where no
 * private directory can be had, hints are off, and -v says why once.
 */
static void
open_hint_channel(void)
{
	const char *path, *why;

	if ((path = hint_open(random_nonce(), &why)) != NULL)
		export("RETRY_AFTER_FILE", path);
	else {
		if (unsetenv("RETRY_AFTER_FILE") == -1)
			fatal("unsetenv RETRY_AFTER_FILE");
		detail("Retry-After hints are off: %s", why);
	}
}

/*
 * Starts the clock, settles the deadline and the environment, and sets up
 * the files, the terminal and the signals before any attempt starts.
 */
static enum outcome
begin_run(const struct policy *p, struct run *r)
{
	int outer;

	if (p->replay_stdin && isatty(STDIN_FILENO))
		fatalx("--replay-stdin: standard input is a terminal");
	if (p->report != NULL) {
		if (report_open(&report, p->report) == -1)
			fatalx("--report '%s': %s", p->report, strerror(errno));
		reporting = 1;
	}
	if (atexit(clean_up) != 0)
		fatal("atexit");
	r->start = monotonic_now();
	r->deadline = find_deadline(p->deadline, r->start, &outer);
	export_environment(p->key, p->argv, p->attempts, r->deadline, outer);
	describe_policy(p, r);
	open_hint_channel();
	if (relay_init(&io, p->replay_stdin, p->buffer_stdout,
	    p->on_output.set ? &p->on_output.re : NULL,
	    p->stop_output.set ? &p->stop_output.re : NULL) == -1)
		fatal("%s needs a temporary file in %s", io.failed, temp_dir());
	if (p->circuit != NULL && open_circuit(p, 0) == -1)
		fatalx("%s", circuit.err);
	proc_init(&io, r->deadline);
	return r->deadline <= r->start ? DEADLINE : RUNNING;
}

/*
 * Sleeps until wake, unless that is at or past the deadline (then why).
 * A signal cuts it short: INTERRUPTED, with the signal in r->interrupt.
 */
static enum outcome
pause_until(struct run *r, int64_t wake, enum outcome why)
{
	int64_t now = monotonic_now();

	if (wake >= r->deadline)
		return why;
	r->interrupt = proc_sleep(wake);
	r->asleep += monotonic_now() - now;
	return r->interrupt != 0 ? INTERRUPTED : RUNNING;
}

/*
 * The store failed.  Credentials or rights refused at its first step are
 * a mistake that no waiting mends: one line, 125, nothing run.  Else,
 * with --store-fail closed the run ends (75) before its next attempt;
 * open, it goes on as if it had no circuit, said once.
 */
static enum outcome
store_failed(const struct policy *p, struct run *r)
{
	if (circuit.denied)
		fatalx("%s", circuit.err);
	r->store_down = 1;
	if (p->store_closed)
		return STORE_DOWN;
	if (!r->circuit_off)
		warningx("%s; going on without circuit %s", circuit.err,
		    p->circuit);
	r->circuit_off = 1;
	return RUNNING;
}

/*
 * What a step of the shared record came to, for the run: a wait for it cut
 * short by the deadline or a signal, or a failure of retry's own (125),
 * or of the store.  A corrupt record that the step replaced is said once.
 */
static enum outcome
step_outcome(const struct policy *p, struct run *r, enum circuit_step s)
{
	if (circuit.corrupt) {
		circuit.corrupt = 0;
		say("circuit %s: the record was corrupt; it starts afresh",
		    p->circuit);
	}
	switch (s) {
	case STEP_DONE:
		break;
	case STEP_TIMEOUT:
		return DEADLINE;
	case STEP_SIGNAL:
		r->interrupt = circuit.signal;
		return INTERRUPTED;
	case STEP_FAILED:
		fatalx("%s", circuit.err);
	case STEP_STORE:
		return store_failed(p, r);
	}
	return RUNNING;
}

/* The wait for another run's probe: 50-150 ms, apart from the others'. */
static int64_t
probe_wait(struct run *r)
{
	return (int64_t)((0.05 + 0.1 * rng_uniform(&r->aside)) *
	    (double)NS_PER_SEC);
}

/*
 * With --circuit, before an attempt: wait while the circuit is open or
 * another run probes it, and for a retry, wait for the shared budget.
 */
static enum outcome
wait_for_circuit(const struct policy *p, struct run *r)
{
	char d[32];
	enum verdict v;
	enum outcome o;
	int64_t wait;
	int told = 0;

	for (;;) {
		if ((o = step_outcome(p, r, circuit_admit(&circuit, r->deadline,
		    p->budget, p->budget_window, &v, &wait))) != RUNNING ||
		    r->circuit_off)
			return o;
		if (v == ADMIT_WAIT) {
			if (wait == 0 && !told++)
				detail("circuit %s is half-open; another run "
				    "probes it", p->circuit);
			else if (wait != 0)
				detail("circuit %s is open; waiting %ss",
				    p->circuit, fmt_seconds(d, sizeof(d), 0,
				    wait));
			if (wait == 0)
				wait = probe_wait(r);
			if ((o = pause_until(r, monotonic_now() + wait,
			    CIRCUIT_OPEN)) != RUNNING)
				return o;
			continue;
		}
		if (r->attempt == 0 || p->budget == 0)
			return RUNNING;
		if ((o = step_outcome(p, r, circuit_take_retry(&circuit,
		    r->deadline, p->budget, p->budget_window, &wait))) !=
		    RUNNING || r->circuit_off || wait == 0)
			return o;
		/* Jittered, so that the waiting runs do not all come back at once. */
		wait += (int64_t)(rng_uniform(&r->aside) * 0.1 *
		    (double)p->budget_window);
		detail("retry budget of circuit %s spent; waiting %ss",
		    p->circuit, fmt_seconds(d, sizeof(d), 0, wait));
		if ((o = pause_until(r, monotonic_now() + wait, BUDGET_SPENT)) !=
		    RUNNING)
			return o;
	}
}

/*
 * Before an attempt: the splay before the first, then the circuit and the
 * budget.  A signal that came meanwhile means no attempt.
 */
static enum outcome
may_start(const struct policy *p, struct run *r)
{
	char d[32];
	enum outcome o;
	int64_t wake;

	if (r->attempt == 0 && p->splay > 0) {
		wake = monotonic_now() + splay_delay(p, r);
		detail("splay: %ss before the first attempt",
		    fmt_seconds(d, sizeof(d), 0, wake - monotonic_now()));
		if ((o = pause_until(r, wake, DEADLINE)) != RUNNING)
			return o;
	}
	if (p->circuit != NULL && !r->circuit_off &&
	    (o = wait_for_circuit(p, r)) != RUNNING)
		return o;
	if ((r->interrupt = proc_caught()) != 0)
		return INTERRUPTED;
	return RUNNING;
}

/* No room for the command to start (EAGAIN, ENOMEM): a failed attempt. */
static int
shortage(int error)
{
	return error == EAGAIN || error == ENOMEM;
}

/* With --circuit: the attempt's end counts for every run of the name. */
static void
tell_circuit(const struct policy *p, struct run *r)
{
	struct breaker b;
	int success;

	if (p->circuit == NULL || r->circuit_off)
		return;
	success = r->end.error == 0 && r->status == 0 && !io.on_hit &&
	    !io.stop_hit;
	if (!success && !retryable(p, r))
		return;		/* not the downstream's failure */
	b.trip = p->trip;
	b.cool = p->cool;
	b.cap = p->cap;
	/* Interrupted: the run ends now, not after a wait for the lock. */
	if (step_outcome(p, r, circuit_result(&circuit, r->interrupt != 0 ?
	    0 : r->deadline, success, &b, rng_uniform(&r->aside))) != RUNNING)
		detail("circuit %s: the end of attempt %ld was not recorded",
		    p->circuit, r->attempt);
}

/*
 * While the probe's attempt runs on a store: its lease, renewed.  What
 * goes wrong is kept in the circuit, for the next step to tell.
 */
static void
renew_lease(void)
{
	if (circuit_lease(&circuit) == 0)
		return;		/* lost before, or the store failed */
	if (circuit_renew(&circuit) == STEP_DONE && circuit_lease(&circuit) == 0)
		detail("circuit %s: another run has taken the probe over",
		    circuit.name);
}

/* The attempt's status as retry reports it: 124 when stopped at a limit. */
static int
attempt_status(const struct ending *e)
{
	if (e->error != 0)
		return shortage(e->error) ? EXIT_OWN_FAILURE :
		    e->error == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	return e->stopped ? EXIT_TIMEDOUT : e->status;
}

/*
 * Runs the command once, stopped at its timeout or the deadline, and
 * records what came of it.
 */
static void
run_attempt(const struct policy *p, struct run *r)
{
	struct limit lim;
	int64_t now = monotonic_now();

	r->attempt++;
	export_attempt(r->attempt);
	lim.at = r->deadline;
	lim.signal = p->signal;
	lim.kill_after = p->kill_after;
	lim.tick = NULL;
	lim.tick_every = NEVER;
	if (p->circuit != NULL && !r->circuit_off &&
	    circuit_lease(&circuit) != 0) {
		lim.tick = renew_lease;
		lim.tick_every = circuit_lease(&circuit);
	}
	if (p->timeout != 0 && p->timeout < r->deadline - now)
		lim.at = now + p->timeout;
	r->began = now;
	proc_run(p->argv, &lim, &r->end);
	r->ended = monotonic_now();
	r->timed_out = !r->end.stopped ? NOT_TIMED_OUT :
	    lim.at == r->deadline ? AT_DEADLINE : TIMED_OUT;
	r->status = attempt_status(&r->end);
	if (r->end.signal != 0 && r->interrupt == 0)
		r->interrupt = r->end.signal;
	tell_circuit(p, r);
}

/* By its status or its output, the attempt failed in a way worth retrying. */
static int
retryable(const struct policy *p, const struct run *r)
{
	if (r->end.error != 0)
		return shortage(r->end.error);
	if (io.stop_hit)
		return 0;
	return io.on_hit || (codes_has(&p->on, r->status) &&
	    !codes_has(&p->stop_on, r->status));
}

/* After an attempt: may another follow, or why not. */
static enum outcome
judge_attempt(const struct policy *p, const struct run *r)
{
	int keyboard = !r->end.stopped &&
	    (r->end.termsig == SIGINT || r->end.termsig == SIGQUIT);

	if (r->end.error != 0 && !shortage(r->end.error))
		return CANNOT_RUN;
	if (r->interrupt != 0 || keyboard)
		return INTERRUPTED;
	if (io.stop_hit)
		return OUTPUT_STOP;
	if (r->timed_out == AT_DEADLINE)
		return DEADLINE;
	/* No one to retry for: the output's reader has gone. */
	if (!r->end.stopped && (r->end.termsig == SIGPIPE ||
	    r->status == 128 + SIGPIPE) && relay_reader_gone(STDOUT_FILENO))
		return READER_GONE;
	if (!retryable(p, r))
		return r->status == 0 ? SUCCEEDED : NOT_RETRYABLE;
	if (p->attempts != 0 && r->attempt >= p->attempts)
		return EXHAUSTED;
	return RUNNING;
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
	static char text[HINT_MAX + 1];	/* headers of a few responses */
	char hint[32], cap[32];
	const char *why;
	int64_t delay;

	note[0] = '\0';
	if (hint_read(text, sizeof(text), &why) == NULL) {
		if (why != NULL)	/* else none: the usual case */
			detail("Retry-After hint not used: %s", why);
		return 0;
	}
	if (strlen(text) == sizeof(text) - 1)
		why = "too long";
	else
		why = parse_hint(text, realtime_now(), &delay);
	if (why != NULL) {
		/* An empty file says nothing (curl -D without the header). */
		if (strcmp(why, "empty") != 0)
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

/* --buffer-stdout: the held output of the attempt to fd. */
static void
release_output(int fd)
{
	if (relay_release(&io, fd) == -1)
		fatal("%s", io.failed);
	proc_drain();
}

/* --report: one more attempt, with the delay that follows it (or -1). */
static void
record_attempt(struct run *r, int64_t delay)
{
	struct attempt_record a;

	if (!reporting || r->recorded == r->attempt)
		return;
	r->recorded = r->attempt;
	a.number = r->attempt;
	a.start = r->began - r->start;
	a.duration = r->ended - r->began;
	a.status = r->status;
	a.termsig = r->end.termsig;
	a.timed_out = r->timed_out != NOT_TIMED_OUT;
	a.error = r->end.error;
	a.delay = delay;
	a.from_hint = r->from_hint;
	if (report_attempt(&report, &a) == -1)
		fatal("report");
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

	if (r->end.error != 0)
		(void)snprintf(buf, size, "could not start: %s",
		    strerror(r->end.error));
	else if (r->timed_out == AT_DEADLINE)
		(void)snprintf(buf, size, "timed out at the deadline");
	else if (r->timed_out == TIMED_OUT)
		(void)snprintf(buf, size, "timed out after %s",
		    fmt_duration(d, sizeof(d), p->timeout));
	else if (r->end.termsig != 0)
		(void)snprintf(buf, size, "killed by %s",
		    signal_name(name, sizeof(name), r->end.termsig));
	else if (r->status == 0)
		(void)snprintf(buf, size, "succeeded");
	else
		(void)snprintf(buf, size, "failed with exit %d", r->status);
	return buf;
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
 * Draws the next delay (or takes the attempt's hint) and sleeps it,
 * unless it would end at or after the deadline.
 */
static enum outcome
sleep_before_retry(const struct policy *p, struct run *r)
{
	char label[64], end[96], d[32], hint[64];
	struct step st;
	int64_t now = monotonic_now();

	r->delay = backoff_next(&r->backoff, &r->rng, &st);
	r->from_hint = take_hint(p, r, r->deadline - now, hint, sizeof(hint));
	if (r->delay >= r->deadline - now)
		return DEADLINE;
	/* Retried after all: its held output goes to the log, not stdout. */
	release_output(STDERR_FILENO);
	record_attempt(r, r->delay);
	say("%s %s; next in %ss%s", attempt_label(label, sizeof(label), p, r),
	    attempt_end(end, sizeof(end), p, r),
	    fmt_seconds(d, sizeof(d), 0, r->delay), hint);
	if (!r->from_hint)
		explain_delay(p, &st);
	return pause_until(r, now + r->delay, DEADLINE);
}

static const char *const outcome_names[] = {
	"running", "success", "status not retryable", "attempts used up",
	"deadline", "interrupted", "cannot run the command",
	"output matched --stop-on-output", "circuit open", "retry budget spent",
	"the reader of the output has gone", "store unavailable",
};

/* The same outcomes as a report's "outcome". */
static const char *const outcome_keys[] = {
	"running", "success", "not_retryable", "attempts_exhausted",
	"deadline", "interrupted", "not_retryable", "not_retryable",
	"circuit_open", "budget_spent", "not_retryable", "store_unavailable",
};

/*
 * The exit status, and in *sig the signal that retry dies of instead
 * (128 + sig, as a shell would show it), or 0.
 */
static int
exit_status(const struct run *r, int *sig)
{
	*sig = 0;
	if (r->why == CIRCUIT_OPEN || r->why == STORE_DOWN)
		return EXIT_TEMPFAIL;
	if (r->interrupt != 0)
		*sig = r->interrupt;
	else if (!r->end.stopped &&
	    (r->end.termsig == SIGINT || r->end.termsig == SIGQUIT))
		*sig = r->end.termsig;
	if (*sig != 0)
		return 128 + *sig;
	return r->attempt == 0 && r->why == DEADLINE ? EXIT_TIMEDOUT :
	    r->status;
}

/*
 * A "--" after the command that was not found: the command is likely a
 * word of a value, as in "-D 5 mins -- cmd", where options ended at "mins".
 */
static int
later_separator(char *const argv[])
{
	int i;

	for (i = 1; argv[i] != NULL; i++)
		if (strcmp(argv[i], "--") == 0)
			return 1;
	return 0;
}

/* The one line that says why the run ended. */
static void
say_why(const struct policy *p, const struct run *r)
{
	char label[64], end[96], name[32], t[32];

	attempt_label(label, sizeof(label), p, r);
	attempt_end(end, sizeof(end), p, r);
	switch (r->why) {
	case SUCCEEDED:
	case RUNNING:
		break;
	case CANNOT_RUN:
		say("cannot run '%s': %s%s", p->argv[0], strerror(r->end.error),
		    r->end.error == ENOENT && later_separator(p->argv) ?
		    " (options end at the first operand: a value has no "
		    "spaces)" : "");
		break;
	case NOT_RETRYABLE:
		say("%s %s; giving up: status %d is not retryable", label, end,
		    r->status);
		break;
	case EXHAUSTED:	/* -o 0 retries a success: nothing to give up */
		say("%s %s; %sno attempts left", label, end,
		    r->status == 0 && !io.on_hit ? "" : "giving up: ");
		break;
	case READER_GONE:
		say("%s %s; giving up: the reader of the output has gone",
		    label, end);
		break;
	case DEADLINE:
		if (r->attempt == 0 && r->deadline <= r->start)
			say("the deadline has passed; not running '%s'",
			    p->argv[0]);
		else if (r->attempt == 0 && p->splay > 0)
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
	case STORE_DOWN:
		say("%s; giving up (--store-fail closed)", circuit.err);
		break;
	}
}

/* The last attempt's output, the report, the last words and, with -v, a summary. */
static void
report_end(const struct policy *p, struct run *r)
{
	char t[32], s[32];
	int status, sig;

	release_output(STDOUT_FILENO);
	if (reporting) {
		record_attempt(r, -1);
		status = exit_status(r, &sig);
		if (p->circuit != NULL && p->store.given)
			report.store = r->store_down ? "unavailable" : "ok";
		if (report_finish(&report, p->argv, outcome_keys[r->why],
		    status, sig, monotonic_now() - r->start) == -1)
			warning("--report '%s'", p->report);
		reporting = 0;
	}
	say_why(p, r);
	detail("%ld attempt%s in %ss, %ss asleep; stopped: %s", r->attempt,
	    r->attempt == 1 ? "" : "s",
	    fmt_seconds(t, sizeof(t), 0, monotonic_now() - r->start),
	    fmt_seconds(s, sizeof(s), 0, r->asleep), outcome_names[r->why]);
}

/* The status that retry(1) promises for the way the run ended. */
static void
exit_as_run_ended(const struct run *r)
{
	int sig, status = exit_status(r, &sig);

	if (sig != 0) {
		clean_up();	/* atexit handlers do not run on the way out */
		proc_die(sig);
	}
	exit(status);
}

/* --circuit-status and --circuit-reset. */
static int
circuit_command(const struct policy *p)
{
	struct circuit_view v;

	if (open_circuit(p, p->circuit_command == CIRCUIT_STATUS) == -1)
		fatalx("%s", circuit.err);
	if (p->circuit_command == CIRCUIT_RESET) {
		if (circuit_reset(&circuit) != STEP_DONE)
			fatalx("%s", circuit.err);
		return 0;
	}
	if (circuit_view(&circuit, &v) != STEP_DONE)
		fatalx("%s", circuit.err);
	if (v.corrupt)
		warningx("circuit %s: the record is corrupt; the next run starts "
		    "it afresh", p->circuit);
	(void)circuit_print(stdout, p->circuit, &v);	/* close_stdout() checks */
	return close_stdout();
}
