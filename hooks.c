/* SPDX-License-Identifier: ISC */
/*
 * The hooks: each run like an attempt (its own process group, stopped at
 * the deadline, signals passed on) but with /dev/null for input and
 * retry's stderr for output, and the facts of the event that called it
 * in RETRY_STATUS, RETRY_SIGNAL, RETRY_OUTCOME, RETRY_NEXT_DELAY,
 * RETRY_ELAPSED, RETRY_DURATION, RETRY_REPORT and RETRY_LOG (a file of
 * the attempt's last output, made for the hook and removed after it), in
 * place of the caller's own values, which come back after it.  Nothing a
 * hook does changes the run but what it writes to RETRY_ENV_FILE (env.c),
 * which the next attempt finds.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static const char *const hook_option[NHOOKS] = {
	[HOOK_RETRY] = "--on-retry",
	[HOOK_GIVEUP] = "--on-giveup",
	[HOOK_SUCCESS] = "--on-success",
	[HOOK_START] = "--on-start",
	[HOOK_TOLERATE] = "--on-tolerate",
	[HOOK_RECOVER] = "--on-recover",
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
static char deadline_var[48] = "RETRY_DEADLINE=";
static char duration_var[48] = "RETRY_DURATION=";
static char log_var[PATH_MAX + 16] = "RETRY_LOG=";
static char *const vars[] = {
	status_var, signal_var, outcome_var, delay_var, elapsed_var,
	report_var, deadline_var, duration_var, log_var,
};
#define NVARS	(sizeof(vars) / sizeof(vars[0]))

/*
 * What the environment held under the same names before the first hook,
 * as "NAME=VALUE" copies for putenv(3), or NULL for none: the caller's
 * own, or the run's RETRY_DEADLINE.  Nothing but a hook changes them, so
 * the copies taken once serve every hook.
 */
static char *before[NVARS];

/* The NAME of var, "NAME=VALUE", into name. */
static const char *
var_name(char *name, size_t size, const char *var)
{
	(void)snprintf(name, size, "%.*s", (int)(strchr(var, '=') - var), var);
	return name;
}

static void
save_before(void)
{
	static int saved;
	char name[32];
	const char *value;
	size_t i, size;

	if (saved)
		return;
	saved = 1;
	for (i = 0; i < NVARS; i++) {
		if ((value = getenv(var_name(name, sizeof(name), vars[i]))) ==
		    NULL)
			continue;
		size = strlen(name) + 1 + strlen(value) + 1;
		if ((before[i] = malloc(size)) == NULL)
			fatal("malloc");
		(void)snprintf(before[i], size, "%s=%s", name, value);
	}
}

/*
 * Puts var with value in the environment, or with NULL takes its name
 * out: a hook must not take a caller's value of a name for the run's.
 */
static void
put_var(char *var, size_t size, const char *value)
{
	char name[32];
	size_t at = (size_t)(strchr(var, '=') - var) + 1;

	if (value == NULL) {
		if (unsetenv(var_name(name, sizeof(name), var)) == -1)
			fatal("unsetenv %s", name);
		return;
	}
	(void)snprintf(var + at, size - at, "%s", value);
	if (putenv(var) != 0)
		fatal("putenv");
}

/* RETRY_OUTCOME: the run's outcome, but for a hook of a run going on. */
static const char *
outcome_word(const struct run *r, enum hook which)
{
	if (which == HOOK_START)
		return "starting";
	return which == HOOK_RETRY ? "running" : outcome_table[r->why].key;
}

/*
 * The facts of ev, in the hook's environment for as long as it runs, and
 * for an end hook given a grace past the deadline, the end of it
 * (grace_end, or NEVER: RETRY_DEADLINE stays the run's) in
 * RETRY_DEADLINE; log: RETRY_LOG, or NULL to leave it unset.  What they
 * replace is saved first.  --on-start has no attempt to tell of.
 */
static void
export_facts(const struct event *ev, enum hook which, int64_t grace_end,
    const char *log)
{
	const struct policy *p = ev->policy;
	const struct run *r = ev->run;
	char buf[64];

	save_before();
	(void)snprintf(buf, sizeof(buf), "%d", r->status);
	put_var(status_var, sizeof(status_var), which == HOOK_START ? NULL :
	    buf);
	put_var(signal_var, sizeof(signal_var), which == HOOK_START ? NULL :
	    r->end.termsig == 0 ? "" :
	    signal_name(buf, sizeof(buf), r->end.termsig));
	put_var(outcome_var, sizeof(outcome_var), outcome_word(r, which));
	put_var(delay_var, sizeof(delay_var), which != HOOK_RETRY ? NULL :
	    fmt_seconds(buf, sizeof(buf), 0, ev->wait));
	fmt_seconds(buf, sizeof(buf), 0, monotonic_now() - r->start);
	put_var(elapsed_var, sizeof(elapsed_var), buf);
	/* An end hook's is the run's, as the report tells it, however long
	 * the hooks before it took; the others', the time so far. */
	if (ev->kind == RUN_ENDS)
		fmt_seconds(buf, sizeof(buf), 0, r->took);
	put_var(duration_var, sizeof(duration_var), buf);
	put_var(log_var, sizeof(log_var), log);
	put_var(report_var, sizeof(report_var), p->report == NULL ||
	    strcmp(p->report, "-") == 0 ? NULL : p->report);
	if (grace_end != NEVER)
		put_var(deadline_var, sizeof(deadline_var),
		    deadline_text(buf, sizeof(buf), grace_end));
}

/*
 * The environment as it was before the hook: what follows (attempts,
 * hooks) finds the caller's own values, and none of the hook's.
 */
static void
restore_before(void)
{
	char name[32];
	size_t i;

	for (i = 0; i < NVARS; i++)
		if (before[i] != NULL) {
			if (putenv(before[i]) != 0)
				fatal("putenv");
		} else if (unsetenv(var_name(name, sizeof(name), vars[i])) ==
		    -1)
			fatal("unsetenv %s", name);
}

/*
 * When the hook which is stopped: --on-start and --on-retry at the
 * deadline, as an attempt; the end hooks --hook-grace after it, since a
 * run that met its deadline (a hung job) is the very one that a
 * heartbeat's fail ping exists for.
 */
static int64_t
hook_limit(const struct event *ev, enum hook which)
{
	int64_t deadline = ev->run->deadline, grace = ev->policy->hook_grace;

	if (which == HOOK_RETRY || which == HOOK_START || deadline == NEVER)
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

/* Whether hook which finds an attempt's last output: all but --on-start. */
static int
finds_log(enum hook which)
{
	return which != HOOK_START;
}

/*
 * Whether the policy gives a hook that finds RETRY_LOG: the attempts'
 * output is then relayed so that its tail is kept.
 */
int
hooks_want_log(const struct policy *p)
{
	int h;

	for (h = 0; h < NHOOKS; h++)
		if (p->hooks[h] != NULL && finds_log((enum hook)h))
			return 1;
	return 0;
}

/*
 * RETRY_LOG: the attempt's last output (ev->log) in a new file in
 * TMPDIR, made by mkstemp(3) (mode 0600) with a name, so that any program
 * the hook runs can open it (curl --data-binary @"$RETRY_LOG"); its path
 * into path, which the hook's end removes.  --on-start gets "".  Returns
 * NULL when TMPDIR cannot have it, said once in the run, as -Q says it;
 * not at all when -Q has said that its own file could not be made there:
 * one cause, one warning.
 */
static const char *
write_log(const struct event *ev, enum hook which, char *path, size_t size)
{
	static int warned;
	int fd, e;

	path[0] = '\0';
	if (!finds_log(which))
		return path;
	if (snprintf(path, size, "%s/retry-log.XXXXXX", temp_dir()) >=
	    (int)size)
		errno = ENAMETOOLONG;
	else if ((fd = mkstemp(path)) != -1) {
		e = write_all(fd, ev->log, ev->log_len) == -1 ? errno : 0;
		if (close(fd) == -1 && e == 0)
			e = errno;
		if (e == 0)
			return path;
		if (unlink(path) == -1)
			warning("%s", path);
		errno = e;
	}
	path[0] = '\0';
	if (ev->policy->quiet_unless_failed && !ev->run->holding)
		warned = 1;	/* -Q said it of its file, the same cause */
	if (!warned)
		warning("%s: no file in %s, so RETRY_LOG is unset",
		    hook_option[which], temp_dir());
	warned = 1;
	return NULL;
}

/* The hook's RETRY_LOG goes as it ends (one that removed it is no fault). */
static void
remove_log(const char *path)
{
	if (path[0] != '\0' && unlink(path) == -1 && errno != ENOENT)
		warning("%s", path);
}

/*
 * Runs the hook which, that the policy has, for the event ev, stopped at
 * its limit (hook_limit(); one that has passed runs none, and says so).
 * Returns a signal that retry got meanwhile (the run loop judges it), or
 * 0.
 */
int
hook_run(const struct event *ev, enum hook which)
{
	const struct policy *p = ev->policy;
	int64_t until = hook_limit(ev, which);
	int graced = until != ev->run->deadline;
	char *argv[4], path[PATH_MAX];
	const char *log;
	struct limit lim;
	struct ending e;

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
	log = write_log(ev, which, path, sizeof(path));
	export_facts(ev, which, graced ? until : NEVER, log);
	proc_run_hook(argv, say_fd(), &lim, &e);
	restore_before();
	remove_log(path);
	if (e.signal == 0)
		warn_failed(which, &e, graced);
	return e.signal;
}
