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

#include "common.h"
#include "gate.h"
#include "relay.h"

#ifndef VERSION
#define VERSION "unknown"
#endif

#define HINT_MAX	16384	/* a hint file read, at most: its last bytes */

static void	 read_command_line(int, char *[], struct policy *);
static void	 seed_generator(const struct policy *, struct run *);
static int	 print_schedule(const struct policy *, struct run *);
static enum outcome begin_run(const struct policy *, struct run *);
static enum outcome may_start(const struct policy *, struct run *);
static enum outcome start_hook(const struct policy *, struct run *);
static void	 run_attempt(const struct policy *, struct run *);
static enum outcome judge_attempt(const struct policy *, const struct run *);
static enum outcome sleep_before_retry(const struct policy *, struct run *);
static void	 end_run(const struct policy *, struct run *) NORETURN;

static struct relay	 io;		/* the attempts' stdio, when relaying */
static int		 relaying;	/* if relay.c has a part in it */

/*
 * Who hears the story of the run (common.h): those the policy turns on
 * (listen_to()), so that a plain run calls no code of a feature it does
 * not use, and the messages.
 */
static void	(*listeners[7])(const struct event *);
static void	(*drops[6])(void);	/* what clean_up() drops of theirs */
static size_t	 nlisteners, ndrops;

int
main(int argc, char *argv[])
{
	struct policy p;
	struct run r;

	proc_hold_stdio();
	msg_find_journal();
	read_command_line(argc, argv, &p);
	if (p.circuit_command != CIRCUIT_RUN)
		return gate_command(&p);
	if (p.job_command != JOB_RUN)
		return job_command(&p);
	seed_generator(&p, &r);
	if (p.dry_run)
		return print_schedule(&p, &r);
	r.why = begin_run(&p, &r);
	while (r.why == RUNNING) {
		if ((r.why = may_start(&p, &r)) != RUNNING)
			break;
		if (r.attempts == 0 && (r.why = start_hook(&p, &r)) != RUNNING)
			break;
		run_attempt(&p, &r);
		if ((r.why = judge_attempt(&p, &r)) != RUNNING)
			break;
		r.why = sleep_before_retry(&p, &r);
	}
	end_run(&p, &r);
}

/* An event of the run, with nothing but its kind filled in. */
static struct event
event_of(enum event_kind kind, const struct policy *p, const struct run *r)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.policy = p;
	ev.run = r;
	return ev;
}

/* Tells every listener what happened. */
static void
tell(const struct event *ev)
{
	size_t i;

	for (i = 0; i < nlisteners; i++)
		listeners[i](ev);
}

static void
tell_kind(enum event_kind kind, const struct policy *p, const struct run *r)
{
	struct event ev = event_of(kind, p, r);

	tell(&ev);
}

/* A wait of wait ns that begins, for reason (a backoff's draw, a hint's note). */
static struct event
wait_of(const struct policy *p, const struct run *r, enum wait_reason reason,
    int64_t wait, const struct step *st, const char *note)
{
	struct event ev = event_of(WAIT_BEGINS, p, r);

	ev.reason = reason;
	ev.wait = wait;
	ev.step = st;
	ev.note = note;
	return ev;
}

static void
tell_wait(const struct policy *p, const struct run *r, enum wait_reason reason,
    int64_t wait)
{
	struct event ev = wait_of(p, r, reason, wait, NULL, NULL);

	tell(&ev);
}

/* The policy, or --help, --version or a usage error and exit. */
static void
read_command_line(int argc, char *argv[], struct policy *p)
{
	char err[MSGMAX];

	switch (parse_options(argc, argv, p, err, sizeof(err))) {
	case PARSED_RUN:
		say_verbosity(p->verbosity);
		if (clock_check() == -1)
			fatal("clock_gettime");
		if (p->circuit != NULL || p->circuit_command != CIRCUIT_RUN ||
		    p->job != NULL)
			gate_store_from_environment(p);
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
	/* --min-time: no attempt starts in the deadline's last DUR. */
	if (budget != NEVER)
		budget -= p->min_time;
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

/*
 * The temporary files go on every way out but SIGKILL.  Registered with
 * atexit() before proc_init() registers the attempt's end, so it runs
 * after it (atexit runs last first): the attempt is killed and the
 * terminal taken back before the files it might still write go.
 */
static void
clean_up(void)
{
	size_t i;

	env_file_close();	/* before hint_close() closes its directory */
	hint_close();
	for (i = ndrops; i > 0; i--)	/* the last started first */
		drops[i - 1]();
}

/* One more listener, and what clean_up() drops of it (or NULL). */
static void
add_listener(void (*hears)(const struct event *), void (*drop)(void))
{
	listeners[nlisteners++] = hears;
	if (drop != NULL)
		drops[ndrops++] = drop;
}

/*
 * The listeners that the policy turns on, in this order: the CI lines
 * first, so that what the others say follows an attempt's group; the
 * files before the messages, so that they are whole when the last line
 * is said; systemd's status line; -Q's held output just before that
 * line; the messages.
 */
static void
listen_to(const struct policy *p)
{
	const char *notify;

	if (p->ci != CI_NONE && ci_start(p))
		add_listener(ci_event, ci_drop);
	if (p->report != NULL) {
		report_start(p->report);
		add_listener(report_event, report_drop);
	}
	if (p->metrics != NULL) {
		metrics_start(p->metrics);
		add_listener(metrics_event, metrics_drop);
	}
	if (p->trace != NULL) {
		trace_start(p);
		add_listener(trace_event, NULL);
	}
	if ((notify = getenv("NOTIFY_SOCKET")) != NULL &&
	    notify_start(p, notify))
		add_listener(notify_event, notify_drop);
	if (p->quiet_unless_failed)
		add_listener(cron_event, cron_drop);
	add_listener(say_event, NULL);
}

/*
 * A hook that finds RETRY_LOG is given, as hooks.c says; hooks.c is not
 * called at all by a run without hooks.
 */
static int
log_wanted(const struct policy *p)
{
	int h;

	for (h = 0; h < NHOOKS; h++)
		if (p->hooks[h] != NULL)
			return hooks_want_log(p);
	return 0;
}

/*
 * Whether the attempts' stdio goes through relay.c: for a feature that
 * works on the output, for a stdin or stdout that holds data a retry
 * must replay, rewind or count (fd_holds_data(), which relay.c asks as
 * well), or for RETRY_LOG, of a stream that is no terminal (relay.c
 * says).  Else the attempts get retry's own, and relay.c has no part in
 * the run.
 */
static int
stdio_relayed(const struct policy *p)
{
	return p->on_output.set || p->stop_output.set || p->buffer_stdout ||
	    p->quiet_unless_failed || p->hint_from_stderr || p->replay_stdin ||
	    (!p->share_stdin && fd_holds_data(STDIN_FILENO)) ||
	    (p->attempts != 1 && fd_holds_data(STDOUT_FILENO)) ||
	    (log_wanted(p) && (relay_can_keep(STDOUT_FILENO) ||
	    relay_can_keep(STDERR_FILENO)));
}

/* relay.c's part: the input, the output's sinks, the patterns. */
static void
start_relay(const struct policy *p, int hold_all)
{
	if (relay_init(&io, p->share_stdin ? INPUT_SHARED : p->replay_stdin ?
	    INPUT_REPLAYED : INPUT_BOUNDED, p->buffer_stdout, hold_all,
	    p->hint_from_stderr, p->attempts != 1,
	    p->on_output.set ? &p->on_output.re : NULL,
	    p->stop_output.set ? &p->stop_output.re : NULL) == -1)
		fatal("%s needs a temporary file in %s", io.failed, temp_dir());
	if (relay_patterns(&io, p->on_output.set ? p->on_output.text : NULL,
	    p->stop_output.set ? p->stop_output.text : NULL) == -1)
		fatal("%s", io.failed);
	if (log_wanted(p))
		relay_keep_tail(&io);
}

/*
 * Starts the clock, settles the deadline and the environment, and sets up
 * the files, the terminal and the signals before any attempt starts.
 */
static enum outcome
begin_run(const struct policy *p, struct run *r)
{
	int outer, hold_all = -1;

	if (p->replay_stdin && isatty(STDIN_FILENO))
		fatalx("--replay-stdin: standard input is a terminal");
	temp_dir_keep();	/* before any attempt may change TMPDIR */
	listen_to(p);
	if (atexit(clean_up) != 0)
		fatal("atexit");
	r->start = monotonic_now();
	r->start_real = realtime_now();
	r->deadline = find_deadline(p->deadline, r->start, &outer);
	r->start_by = r->deadline == NEVER ? NEVER : r->deadline - p->min_time;
	/* As long as an attempt may run: its -k after the deadline. */
	r->writes_until = r->deadline >= NEVER - p->kill_after ? NEVER :
	    r->deadline + p->kill_after;
	export_environment(p->key, p->argv, p->attempts, r->deadline, outer);
	r->key = getenv("RETRY_IDEMPOTENCY_KEY");
	(void)export_run_id(r->run_id, sizeof(r->run_id));
	/* -Q: retry's lines are held with the output, from the first on. */
	if (p->quiet_unless_failed &&
	    (hold_all = cron_start(r->writes_until)) != -1) {
		say_hold(1);
		r->holding = 1;
	}
	tell_kind(RUN_BEGINS, p, r);
	export_hint_file();
	if ((relaying = stdio_relayed(p)))
		start_relay(p, hold_all);
	if (p->circuit != NULL)
		gate_open(p);
	export_env_file(p->attempts != 1 || p->reset_after != 0);
	if (p->job != NULL)
		job_open(p);
	proc_init(relaying ? &io : NULL, r->deadline);
	if (r->deadline <= r->start)
		return DEADLINE;
	return r->start_by <= r->start ? TOO_LATE : RUNNING;
}

/*
 * Sleeps until wake, unless no attempt could start then (the deadline, or
 * --min-time before it: then why).  A signal cuts it short: INTERRUPTED,
 * with the signal in r->interrupt.  The wait began at since, before its
 * lines and hook, which it includes: the time asleep is the whole wait,
 * so it adds up to the delays drawn.
 */
static enum outcome
pause_until(struct run *r, int64_t since, int64_t wake, enum outcome why)
{
	if (wake >= r->start_by)
		return why;
	r->interrupt = proc_sleep(wake);
	r->asleep += monotonic_now() - since;
	return r->interrupt != 0 ? INTERRUPTED : RUNNING;
}

/* What the gate said of the store, kept for the report and the last line. */
static void
note_store(struct run *r, const struct gate *g)
{
	if (g->store_failed == NULL)
		return;
	r->store_down = 1;
	r->store_err = g->store_failed;
}

/*
 * With --circuit: waits for as long as the gate says (the circuit open,
 * another run's probe, the shared budget), each wait told as it begins.
 */
static enum outcome
pass_gate(const struct policy *p, struct run *r)
{
	struct gate g;
	enum outcome o;
	struct event ev;
	int64_t since;

	for (;;) {
		g = gate_admit(p, r->attempts > 0, r->deadline, &r->aside);
		note_store(r, &g);
		if (g.kind == GATE_END) {
			if (g.signal != 0)
				r->interrupt = g.signal;
			return g.end;
		}
		if (g.kind == GATE_GO) {
			if (g.probing) {
				ev = event_of(CIRCUIT_CHANGES, p, r);
				ev.change = CIRCUIT_PROBING;
				tell(&ev);
			}
			return RUNNING;
		}
		/* One that would end where no attempt may start is no wait:
		 * the run ends. */
		if (g.wait >= r->start_by - (since = monotonic_now()))
			return g.end;
		tell_wait(p, r, g.reason, g.wait);
		if ((o = pause_until(r, since, since + g.wait, g.end)) !=
		    RUNNING)
			return o;
	}
}

/*
 * The run, which would start something at at, meets its deadline or,
 * with --min-time, the time before it when no attempt may start: DEADLINE
 * after an attempt, with which one in r->short_of; before any, TOO_LATE
 * for --min-time, since the run's time ran out and nothing ran.
 */
static enum outcome
out_of_time(struct run *r, int64_t at)
{
	r->short_of = at >= r->deadline ? SHORT_OF_DEADLINE : SHORT_OF_MIN_TIME;
	if (r->attempts == 0 && r->short_of == SHORT_OF_MIN_TIME)
		return TOO_LATE;
	return DEADLINE;
}

/*
 * Before an attempt: the splay before the first, then the circuit and the
 * budget.  A signal that came meanwhile means no attempt, and so does a
 * clock past the deadline or into its last --min-time, read before the
 * circuit is asked (which would count a first attempt) and after: a gate
 * whose step took the time left has counted an attempt that does not
 * start (which errs on the side of fewer retries), or given this run a
 * probe, which goes as the run ends (a lock) or within its lease (a store).
 */
static enum outcome
may_start(const struct policy *p, struct run *r)
{
	enum outcome o = RUNNING;
	int64_t splay, since, wake;

	if (r->attempts == 0 && p->splay > 0) {
		splay = splay_delay(p, r);
		wake = (since = monotonic_now()) + splay;
		if (wake >= r->start_by)	/* no wait is promised past it */
			return out_of_time(r, wake);
		tell_wait(p, r, WAIT_SPLAY, splay);
		if ((o = pause_until(r, since, wake, DEADLINE)) != RUNNING)
			return o;
	}
	/* A fresh reading: a slow reader of the output, or the waits of the
	 * gate, may have taken the time left. */
	if ((since = monotonic_now()) >= r->start_by)
		o = out_of_time(r, since);
	else if (p->circuit != NULL)
		o = pass_gate(p, r);
	if (o == RUNNING && (r->interrupt = sp_caught()) != 0)
		return INTERRUPTED;
	if (o == RUNNING && (since = monotonic_now()) >= r->start_by)
		o = out_of_time(r, since);
	if (o == DEADLINE)	/* so no delay drawn is blamed for it */
		r->late = LATE_BEFORE_ATTEMPT;
	return o;
}

/*
 * --on-start: once, when the first attempt may start (may_start() said
 * so), just before it.  A signal meanwhile ends the run, as in
 * --on-retry; so does the deadline, or --min-time before it, if the hook
 * took the time left.
 */
static enum outcome
start_hook(const struct policy *p, struct run *r)
{
	struct event ev = event_of(ATTEMPT_STARTS, p, r);
	enum outcome o;
	int64_t later;

	if (p->hooks[HOOK_START] == NULL)
		return RUNNING;
	/* No attempt yet: not an outer run's number, which it may inherit. */
	export_attempt(0);
	if ((r->interrupt = hook_run(&ev, HOOK_START)) != 0)
		return INTERRUPTED;
	if ((later = monotonic_now()) < r->start_by)
		return RUNNING;
	if ((o = out_of_time(r, later)) == DEADLINE)
		r->late = LATE_BEFORE_ATTEMPT;
	return o;
}

static int	 failed_to_retry(const struct policy *, const struct run *);
static int	 retryable(const struct policy *, const struct run *);

/* No room for the command to start (EAGAIN, ENOMEM): a failed attempt. */
static int
shortage(int error)
{
	return error == EAGAIN || error == ENOMEM;
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

/* The circuit opened or closed again by the attempt's end, told. */
static void
tell_turn(const struct policy *p, const struct run *r, const struct gate *g)
{
	struct event ev = event_of(CIRCUIT_CHANGES, p, r);

	if (g->turned == TURN_NONE)
		return;
	ev.change = g->turned == TURN_OPENED ? CIRCUIT_OPENED : CIRCUIT_CLOSED;
	ev.failures = g->failures;
	tell(&ev);
}

/*
 * With --circuit: the attempt's end counts for every run of the name, a
 * success or a failure of the downstream; one that is not its failure
 * (not retryable: a refused HTTP 4xx is the downstream's answer) counts
 * for nothing.  Interrupted, the run ends now, not after a wait for the
 * record's lock.
 */
static void
count_for_circuit(const struct policy *p, struct run *r)
{
	struct gate g;
	enum counts c;

	if (r->end.error == 0 && r->status == 0 && !r->on_hit && !r->stop_hit)
		c = COUNTS_SUCCESS;
	else
		c = retryable(p, r) ? COUNTS_FAILURE : COUNTS_NOTHING;
	g = gate_record(p, r->attempts, c, r->interrupt != 0 ? 0 : r->deadline,
	    &r->aside);
	note_store(r, &g);
	if (g.signal != 0)
		r->interrupt = g.signal;
	tell_turn(p, r, &g);
}

/*
 * Can no attempt follow the one starting, whatever it does?  Its number
 * reaches -n, as judge_attempt() will find (unless --reset-after may count again from 1), or even the
 * shortest delay the schedule could draw after it passes the deadline
 * from now, and no Retry-After hint, which may be shorter, can come.
 * -O sends the output of such an attempt to stdout as it comes.
 */
static int
known_last(const struct policy *p, const struct run *r, int64_t now)
{
	struct backoff b = r->backoff;
	struct rng g = r->rng;	/* copies: the real draw is not spent */
	struct step st;

	if (p->reset_after != 0)
		return 0;
	if (p->attempts != 0 && r->attempt >= p->attempts)
		return 1;
	if (r->deadline == NEVER || p->hint_from_stderr ||
	    getenv("RETRY_AFTER_FILE") != NULL)
		return 0;
	(void)backoff_next(&b, &g, &st);	/* only its band is wanted */
	return st.lo >= r->start_by - now;
}

/*
 * What the attempt said of a retry, into r->hint as it ends, before it is
 * judged or counted: what it wrote to RETRY_AFTER_FILE (read once, and
 * removed), else, with --hint-from-stderr, the lines of its last HTTP
 * response on its stderr.  Read only when its status or output would
 * retry it, but whatever follows: so a 4xx on the last attempt is still
 * named, and a refused one counts for nothing in --circuit.  A date or a
 * reset time counts from here: the circuit's step before the wait may
 * lengthen the wait by its own time, never shorten it.
 */
static void
read_hint(const struct policy *p, struct run *r)
{
	static char buf[HINT_MAX + 1];	/* headers of a few responses */
	const char *text;

	memset(&r->hint, 0, sizeof(r->hint));
	r->hint.why = "empty";
	r->hint_unread = NULL;
	if (!failed_to_retry(p, r))
		return;		/* the run ends: clean_up() removes the file */
	text = hint_read(buf, sizeof(buf), &r->hint_unread);
	if (text == NULL && relaying)
		text = relay_hint(&io);
	if (text != NULL)	/* else nothing said: the usual case */
		parse_hint(text, realtime_now(), &r->hint);
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

	/* After --reset-after, the schedule counts from 1 again. */
	r->attempt = r->reset ? 1 : r->attempt + 1;
	r->attempts++;
	r->reset = 0;
	set_env_file_variables(p->env_names);
	export_attempt(r->attempt);
	tell_kind(ATTEMPT_STARTS, p, r);
	memset(&lim, 0, sizeof(lim));	/* no group to tell, no tick */
	lim.tick_every = NEVER;
	lim.at = r->deadline;
	lim.signal = p->signal;
	lim.kill_after = p->kill_after;
	if (p->circuit != NULL)
		gate_lease_ticks(p, &lim);
	if (p->timeout != 0 && p->timeout < r->deadline - now)
		lim.at = now + p->timeout;
	r->began = now;
	if (relaying)
		relay_last(&io, p->buffer_stdout && known_last(p, r, now));
	proc_run(p->argv, &lim, &r->end);
	r->ended = monotonic_now();
	r->timed_out = !r->end.stopped ? NOT_TIMED_OUT :
	    lim.at == r->deadline ? AT_DEADLINE : TIMED_OUT;
	r->status = attempt_status(&r->end);
	r->on_hit = io.on_hit;
	r->stop_hit = io.stop_hit;
	r->out_bytes = io.out_bytes;
	r->input_cut = io.cut;
	r->input_kept = io.bound;
	r->input_error = io.spill_error;
	r->input_unkept = io.unkept;
	r->output_unheld = io.unheld;
	r->input_unread = relaying ? relay_unread(&io) : 0;
	if (r->end.signal != 0 && r->interrupt == 0)
		r->interrupt = r->end.signal;
	/* --reset-after: a long healthy run is no part of a crash loop. */
	r->reset = p->reset_after != 0 && r->ended - r->began >= p->reset_after;
	tell_kind(ATTEMPT_ENDS, p, r);
	read_hint(p, r);
	if (p->circuit != NULL)
		count_for_circuit(p, r);
}

/* By its status or its output alone, the attempt failed so as to retry. */
static int
failed_to_retry(const struct policy *p, const struct run *r)
{
	if (r->end.error != 0)
		return shortage(r->end.error);
	if (r->stop_hit)
		return 0;
	return r->on_hit || (codes_has(&p->on, r->status) &&
	    !codes_has(&p->stop_on, r->status));
}

/*
 * The attempt's hint is an HTTP answer that the same request would get
 * again (--http-4xx stop): a 4xx, the request refused as it is; but not
 * 408 (Request Timeout), 425 (Too Early), 429 (Too Many Requests) or a
 * rate limit (a Retry-After, or a remaining count of 0: GitHub answers a
 * spent limit with 403), which ask to be called again later.
 */
static int
http_refused(const struct policy *p, const struct run *r)
{
	int s = r->hint.status;

	return !p->http_4xx_retry && s >= 400 && s <= 499 && s != 408 &&
	    s != 425 && s != 429 && !r->hint.rate_limited;
}

/* By its status, output and hint, the attempt failed in a way worth
 * retrying: the one place that says so. */
static int
retryable(const struct policy *p, const struct run *r)
{
	return failed_to_retry(p, r) && !http_refused(p, r);
}

/* After an attempt: may another follow, or why not. */
static enum outcome
judge_attempt(const struct policy *p, const struct run *r)
{
	if (r->end.error != 0 && !shortage(r->end.error))
		return CANNOT_RUN;
	if (r->interrupt != 0 || r->end.keyboard)
		return INTERRUPTED;
	if (r->stop_hit)
		return OUTPUT_STOP;
	if (r->timed_out == AT_DEADLINE)
		return DEADLINE;
	/* No one to retry for: the output's reader has gone. */
	if (!r->end.stopped && (r->end.termsig == SIGPIPE ||
	    r->status == 128 + SIGPIPE) && relay_reader_gone(STDOUT_FILENO))
		return READER_GONE;
	if (!retryable(p, r))
		return http_refused(p, r) ? HTTP_REFUSED : r->status == 0 ?
		    SUCCEEDED : NOT_RETRYABLE;
	if (p->attempts != 0 && r->attempt >= p->attempts && !r->reset)
		return EXHAUSTED;
	/* The next would run on less input than this one had, unasked. */
	if (r->input_cut)
		return r->input_unkept != 0 ? INPUT_UNKEPT : INPUT_CUT;
	/* Its output is on stdout already: no other may follow it there. */
	return r->output_unheld != 0 ? OUTPUT_UNHELD : RUNNING;
}

/*
 * A delay that the attempt gave (read_hint) replaces the backoff
 * in r->delay, with up to 10 % more so that clients told the same second
 * do not return together, and at most the cap; but a hint that passes the
 * last time an attempt may start (room from now) stays whole, so that the
 * run ends as it would for a backoff that long.  Returns 1 if so; *note
 * gets what the message should add.  -v says why a hint was not used,
 * said as a wait follows.
 */
static int
take_hint(const struct policy *p, struct run *r, int64_t room, char *note,
    size_t size)
{
	char hint[32], cap[32];
	int64_t delay = r->hint.delay;

	note[0] = '\0';
	if (r->hint_unread != NULL)
		detail("Retry-After hint not used: %s", r->hint_unread);
	if (r->hint.why != NULL) {
		/* An empty file says nothing (curl -D without the header). */
		if (strcmp(r->hint.why, "empty") != 0)
			detail("Retry-After hint not used: %s", r->hint.why);
		return 0;
	}
	fmt_duration(hint, sizeof(hint), delay);
	delay += (int64_t)(rng_uniform(&r->aside) * 0.1 * (double)delay);
	if (delay > p->cap && delay < room) {
		(void)snprintf(note, size, " (%s %s, cut to the cap %s)",
		    r->hint.from, hint, fmt_duration(cap, sizeof(cap), p->cap));
		delay = p->cap;
	} else
		(void)snprintf(note, size, " (%s %s)", r->hint.from, hint);
	r->delay = delay;
	return 1;
}

/* --buffer-stdout: the held output of the attempt to fd. */
static void
release_output(int fd)
{
	if (relaying && relay_release(&io, fd) == -1)
		fatal("%s", io.failed);
	proc_drain();
}

/*
 * The policy's hook which, if it has one (hooks.c runs it), told the
 * ended attempt's last output for RETRY_LOG: a signal, or 0.
 */
static int
run_hook(const struct event *ev, enum hook which)
{
	struct event with_log = *ev;

	if (ev->policy->hooks[which] == NULL)
		return 0;
	if (relaying)
		with_log.log = relay_tail(&io, &with_log.log_len);
	return hook_run(&with_log, which);
}

/*
 * Draws the next delay (or takes the attempt's hint) and sleeps it,
 * unless it would end at or after the deadline.
 */
static enum outcome
sleep_before_retry(const struct policy *p, struct run *r)
{
	char hint[128];
	struct step st;
	struct event ev;
	int64_t now = monotonic_now(), later;
	int sig;

	/*
	 * After --reset-after, the first step's delay, and the attempt that
	 * follows (1 again) draws the first step's again, as in a new run.
	 */
	if (r->reset)
		backoff_init(&r->backoff, p->base, p->factor, p->cap, p->jitter);
	r->delay = backoff_next(&r->backoff, &r->rng, &st);
	if (r->reset)
		backoff_init(&r->backoff, p->base, p->factor, p->cap, p->jitter);
	r->from_hint = take_hint(p, r, r->start_by - now, hint, sizeof(hint));
	if (r->delay >= r->start_by - now)
		return out_of_time(r, now + r->delay);
	/* Retried after all: its held output goes to the log, not stdout. */
	release_output(STDERR_FILENO);
	/* A slow reader of the log may have taken time, up to the deadline. */
	if (r->delay >= r->start_by - (now = monotonic_now()))
		return out_of_time(r, now + r->delay);
	ev = wait_of(p, r, r->from_hint ? WAIT_HINT : WAIT_BACKOFF, r->delay,
	    &st, hint);
	tell(&ev);
	/* Inside the wait, which it lengthens only if it outlasts it. */
	if ((sig = run_hook(&ev, HOOK_RETRY)) != 0) {
		r->interrupt = sig;
		return INTERRUPTED;
	}
	/* It (or the lines) took the time left, not the delay. */
	if ((later = monotonic_now()) >= r->start_by) {
		r->late = p->hooks[HOOK_RETRY] != NULL ? LATE_IN_HOOK :
		    LATE_BEFORE_ATTEMPT;
		return out_of_time(r, later);
	}
	return pause_until(r, now, now + r->delay, DEADLINE);
}

/*
 * What outcome.c's table makes of the way the run ended: the exit status,
 * or the signal that retry dies of (one that retry got, or the keyboard's
 * that killed the attempt), whether it passed, and all that follows.
 */
static struct verdict
verdict_of(const struct run *r)
{
	struct last_attempt a;

	a.attempts = r->attempts;
	a.status = r->status;
	a.matched = r->on_hit;
	a.signal = r->interrupt != 0 ? r->interrupt :
	    r->end.keyboard ? r->end.termsig : 0;
	return outcome_verdict(r->why, &a);
}

/*
 * With --circuit, a run that ran its command is kept for the flake count:
 * passed at once, after retries, or failed, as its verdict says, and as
 * outcome.c's table says whether it is kept at all.
 */
static void
count_run(const struct policy *p, struct run *r, const struct verdict *v)
{
	struct gate g;
	enum run_kind kind = v->after_retries ? RUN_RETRIED :
	    v->passed ? RUN_AT_ONCE : RUN_FAILED;

	/* A store that failed once in the run is asked no more. */
	if (p->circuit == NULL || !v->flakes || r->store_down)
		return;
	g = gate_run_ended(p, kind, r->interrupt != 0 ? 0 : r->deadline);
	note_store(r, &g);
	if (g.signal != 0 && r->interrupt == 0)
		r->interrupt = g.signal;
}

/*
 * With --job, the run's end in the job's history: job.c says what it
 * made of it in v->job, for every listener.
 */
static void
count_job(const struct policy *p, struct run *r, struct verdict *v)
{
	int sig;

	if (p->job == NULL)
		return;
	if ((sig = job_run_ended(p, v, r->interrupt != 0 ? 0 :
	    r->deadline)) != 0 && r->interrupt == 0) {
		r->interrupt = sig;
		*v = verdict_of(r);
	}
}

/* The end hook: --on-tolerate for a tolerated failure (job.c's word). */
static enum hook
end_hook(const struct verdict *v)
{
	if (v->passed)
		return HOOK_SUCCESS;
	return v->job.tolerated ? HOOK_TOLERATE : HOOK_GIVEUP;
}

/*
 * The last attempt's output goes to stdout, the run's end is told (the
 * report, the last words, with -v a summary), and retry exits with the
 * status that retry(1) promises.
 */
static void
end_run(const struct policy *p, struct run *r)
{
	struct event ev = event_of(RUN_ENDS, p, r);
	struct verdict v = verdict_of(r);
	int sig;

	release_output(STDOUT_FILENO);
	count_run(p, r, &v);
	v = verdict_of(r);	/* a signal may have come meanwhile */
	r->took = monotonic_now() - r->start;
	count_job(p, r, &v);
	ev.verdict = &v;
	tell(&ev);
	/*
	 * After the files are written, which the hook may read, whatever
	 * ended the run, the deadline too (hooks.c gives a grace), but a
	 * signal: that is the caller asking retry to stop now.  A hook cut
	 * short by a signal ends the run with it.
	 */
	if (v.signal == 0 && v.job.recovered &&
	    (sig = run_hook(&ev, HOOK_RECOVER)) != 0)
		v.signal = sig;
	if (v.signal == 0 && (sig = run_hook(&ev, end_hook(&v))) != 0)
		v.signal = sig;
	if (r->holding)
		cron_end(v.signal != 0);	/* -Q held the hook's output */
	if (v.signal != 0) {
		clean_up();	/* atexit handlers do not run on the way out */
		proc_die(v.signal);
	}
	exit(v.status);
}
