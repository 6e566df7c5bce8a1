/* SPDX-License-Identifier: ISC */
/*
 * The hooks: each run like an attempt (its own process group, stopped at
 * the deadline, signals passed on) but with /dev/null for input and
 * retry's stderr for output, and the facts of the event that called it
 * in RETRY_STATUS, RETRY_SIGNAL, RETRY_OUTCOME, RETRY_NEXT_DELAY,
 * RETRY_ELAPSED and RETRY_REPORT.  Nothing a hook does changes the run.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "env.h"
#include "hooks.h"
#include "msg.h"
#include "outcome.h"
#include "parse.h"
#include "run.h"

static const char *const hook_option[NHOOKS] = {
	[HOOK_RETRY] = "--on-retry",
	[HOOK_GIVEUP] = "--on-giveup",
	[HOOK_SUCCESS] = "--on-success",
};

/*
 * The variables a hook finds, each a putenv(3) buffer of its own that is
 * rewritten in place: setenv(3) would keep every old value, and a run
 * with unlimited attempts would grow without end.
 */
static char status_var[] = "RETRY_STATUS=-2147483648";
static char signal_var[32] = "RETRY_SIGNAL=";
static char outcome_var[64] = "RETRY_OUTCOME=";
static char delay_var[48] = "RETRY_NEXT_DELAY=";
static char elapsed_var[48] = "RETRY_ELAPSED=";
static char report_var[4096 + 16] = "RETRY_REPORT=";
static char *const vars[] = {
	status_var, signal_var, outcome_var, delay_var, elapsed_var,
	report_var,
};
#define NVARS	(sizeof(vars) / sizeof(vars[0]))

/* NAME=VALUE into var, whose NAME= is already there. */
static void
set_var(char *var, size_t size, const char *value)
{
	size_t at = (size_t)(strchr(var, '=') - var) + 1;

	(void)snprintf(var + at, size - at, "%s", value);
}

/*
 * The facts of ev, in the hook's environment for as long as it runs, and
 * for an end hook given a grace past the deadline, the end of it
 * (grace_end, or NEVER) in RETRY_DEADLINE.
 */
static void
export_facts(const struct event *ev, enum hook which, int64_t grace_end)
{
	const struct policy *p = ev->policy;
	const struct run *r = ev->run;
	char buf[64];
	size_t i;

	(void)snprintf(buf, sizeof(buf), "%d", r->status);
	set_var(status_var, sizeof(status_var), buf);
	set_var(signal_var, sizeof(signal_var), r->end.termsig == 0 ? "" :
	    signal_name(buf, sizeof(buf), r->end.termsig));
	set_var(outcome_var, sizeof(outcome_var), which == HOOK_RETRY ?
	    "running" : outcome_table[r->why].key);
	set_var(delay_var, sizeof(delay_var), which != HOOK_RETRY ? "" :
	    fmt_seconds(buf, sizeof(buf), 0, ev->wait));
	set_var(elapsed_var, sizeof(elapsed_var),
	    fmt_seconds(buf, sizeof(buf), 0, monotonic_now() - r->start));
	set_var(report_var, sizeof(report_var), p->report == NULL ||
	    strcmp(p->report, "-") == 0 ? "" : p->report);
	for (i = 0; i < NVARS; i++) {
		if (which != HOOK_RETRY && vars[i] == delay_var)
			continue;	/* --on-retry's alone */
		if (vars[i] == report_var &&
		    report_var[strlen("RETRY_REPORT=")] == '\0')
			continue;	/* no file to name */
		if (putenv(vars[i]) != 0)
			fatal("putenv");
	}
	/* Only for the end hooks: no attempt follows them. */
	if (grace_end != NEVER)
		export("RETRY_DEADLINE", deadline_text(buf, sizeof(buf),
		    grace_end));
}

/* The attempts that follow find none of them. */
static void
forget_facts(void)
{
	char name[32];
	size_t i;

	for (i = 0; i < NVARS; i++) {
		(void)snprintf(name, sizeof(name), "%.*s",
		    (int)(strchr(vars[i], '=') - vars[i]), vars[i]);
		if (unsetenv(name) == -1)
			fatal("unsetenv %s", name);
	}
}

/*
 * When the hook which is stopped: --on-retry at the deadline, as an
 * attempt; --on-giveup and --on-success --hook-grace after it, since a
 * run that met its deadline (a hung job) is the very one that a
 * heartbeat's fail ping exists for.
 */
static int64_t
hook_limit(const struct event *ev, enum hook which)
{
	int64_t deadline = ev->run->deadline, grace = ev->policy->hook_grace;

	if (which == HOOK_RETRY || deadline == NEVER)
		return deadline;
	return grace < NEVER - deadline ? deadline + grace : NEVER;
}

/* One warning for a hook that failed; none for one that succeeded. */
static void
warn_failed(enum hook which, const struct ending *e, int graced)
{
	char name[32];

	if (e->error != 0)
		warningx("%s: cannot run /bin/sh: %s", hook_option[which],
		    strerror(e->error));
	else if (e->stopped)
		warningx("%s: stopped at the %s", hook_option[which],
		    graced ? "end of --hook-grace" : "deadline");
	else if (e->termsig != 0)
		warningx("%s: killed by %s", hook_option[which],
		    signal_name(name, sizeof(name), e->termsig));
	else if (e->status != 0)
		warningx("%s: failed with exit %d", hook_option[which],
		    e->status);
}

/*
 * Runs the hook which, if the policy has one, for the event ev, stopped
 * at its limit (hook_limit(); one that has passed runs none, and says
 * so).  Returns a signal that retry got meanwhile (the run loop judges
 * it), or 0.
 */
int
hook_run(const struct event *ev, enum hook which)
{
	const struct policy *p = ev->policy;
	int64_t until = hook_limit(ev, which);
	int graced = until != ev->run->deadline;
	char *argv[4];
	struct limit lim;
	struct ending e;

	if (p->hooks[which] == NULL)
		return 0;
	if (monotonic_now() >= until) {
		warningx("%s not run: the deadline %s passed",
		    hook_option[which], graced ? "and --hook-grace have" :
		    "has");
		return 0;
	}
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = (char *)p->hooks[which];
	argv[3] = NULL;
	memset(&lim, 0, sizeof(lim));
	lim.at = until;
	lim.signal = p->signal;
	lim.kill_after = p->kill_after;
	lim.tick_every = NEVER;
	export_facts(ev, which, graced ? until : NEVER);
	proc_run_hook(argv, msg_fd(), &lim, &e);
	forget_facts();
	if (e.signal == 0)
		warn_failed(which, &e, graced);
	return e.signal;
}
