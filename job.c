/* SPDX-License-Identifier: ISC */
/*
 * --job NAME: the job's history across its runs (failed runs in a row,
 * since when, the last success and alert), kept in the state directory's
 * .jobs or on the --store, and the one rule that makes a run's end a
 * tolerated failure, an alert or a recovery (--alert-after N).
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "circuit.h"
#include "common.h"
#include "shared.h"
#include "store.h"

#define JOB_DIR		".jobs"	/* no circuit's name begins with '.' */
#define JOB_MAGIC	"retry-job 1\n"
/* A record read whole, with the newlines that pad one written in place
 * over a longer one (circuit.c), up to the page that it is written in. */
#define JOB_TEXT_MAX	PAGE_MIN
#define PUT_TRIES	32	/* a store's put that others' runs beat */

static struct circuit	 place;		/* the record, or the store's words */
static struct shared	*sh = &place.sh;
static int		 on_store;

/* The names of the history's fields, in the record and the store's hash. */
static const char *const field_names[JOB_FIELDS] = {
	"failed", "since", "success", "alert", "alerting", "alert-after"
};

/* ---- The rule ---------------------------------------------------------- */

/*
 * What a run's end makes of h, now: a success resets the count (a
 * recovery if the job was alerting); a failed run adds one, and alerts
 * when it is the alert_after-th in a row or later, else is tolerated.
 */
static struct job_end
job_rule(struct job_view *h, int passed, long alert_after, int64_t now)
{
	struct job_end e;

	memset(&e, 0, sizeof(e));
	h->alert_after = alert_after;
	if (passed) {
		e.recovered = h->alerting;
		h->failed = 0;
		h->since = 0;
		h->alerting = 0;
		h->success = now;
	} else {
		if (h->failed < COUNT_MAX)
			h->failed++;
		if (h->failed == 1)
			h->since = now;
		e.alert = h->failed >= alert_after;
		e.tolerated = !e.alert;
		if (e.alert) {
			h->alerting = 1;
			h->alert = now;
		}
	}
	e.failed_in_row = h->failed;
	e.since = h->since;
	e.alerting = h->alerting;
	return e;
}

/* ---- The history as text ----------------------------------------------- */

/* The fields of h as text, in field_names' order. */
static void
history_fields(const struct job_view *h, char f[JOB_FIELDS][24])
{
	(void)snprintf(f[0], 24, "%ld", h->failed);
	(void)snprintf(f[1], 24, "%lld", (long long)h->since);
	(void)snprintf(f[2], 24, "%lld", (long long)h->success);
	(void)snprintf(f[3], 24, "%lld", (long long)h->alert);
	(void)snprintf(f[4], 24, "%d", h->alerting);
	(void)snprintf(f[5], 24, "%ld", h->alert_after);
}

/* One field's text into *v, within [0, max]; "" is 0.  -1: corrupt. */
static int
field_value(const char *text, int64_t max, int64_t *v)
{
	char *p = (char *)text;

	*v = 0;
	if (*text == '\0')
		return 0;
	return scan_bounded(&p, max, v) == -1 || *p != '\0' ? -1 : 0;
}

/* The fields' text into *h, each within its range.  -1: corrupt. */
static int
history_of(char f[JOB_FIELDS][24], struct job_view *h)
{
	int64_t v[JOB_FIELDS], later = realtime_now() + DUR_MAX;
	static const int64_t max[JOB_FIELDS] = { COUNT_MAX, 0, 0, 0, 1, 1000 };
	size_t i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < JOB_FIELDS; i++)
		if (field_value(f[i], max[i] != 0 ? max[i] : later, &v[i]) == -1)
			return -1;
	h->failed = (long)v[0];
	h->since = v[1];
	h->success = v[2];
	h->alert = v[3];
	h->alerting = (int)v[4];
	h->alert_after = (long)v[5];
	return 0;
}

/*
 * The record's text, "retry-job 1" then a "NAME VALUE" line per field in
 * field_names' order, into *h.  -1: corrupt.
 */
static int
parse_history(const char *text, struct job_view *h)
{
	char f[JOB_FIELDS][24];
	const char *p = text + strlen(JOB_MAGIC), *end;
	size_t i, n, len;

	for (i = 0; i < JOB_FIELDS; i++) {
		n = strlen(field_names[i]);
		if (strncmp(p, field_names[i], n) != 0 || p[n] != ' ' ||
		    (end = strchr(p + n + 1, '\n')) == NULL)
			return -1;
		p += n + 1;
		if ((len = (size_t)(end - p)) == 0 || len >= sizeof(f[i]))
			return -1;
		memcpy(f[i], p, len);
		f[i][len] = '\0';
		p = end + 1;
	}
	while (*p == '\n')	/* a longer record's length, written in place */
		p++;
	return *p == '\0' ? history_of(f, h) : -1;
}

/* The got bytes read of a record into *h: -1, corrupt, when they are
 * not one, have a NUL, or may be cut. */
static int
history_read(const char *text, size_t got, struct job_view *h)
{
	if (got == JOB_TEXT_MAX || strlen(text) != got ||
	    parse_history(text, h) == -1) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	return 0;
}

static void
format_history(char *buf, size_t size, const struct job_view *h)
{
	char f[JOB_FIELDS][24];
	size_t i, len;

	history_fields(h, f);
	len = (size_t)snprintf(buf, size, "%s", JOB_MAGIC);
	for (i = 0; i < JOB_FIELDS && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s\n",
		    field_names[i], f[i]);
}

/* ---- The two places ---------------------------------------------------- */

/*
 * A step's answer s; for a busy lock, after proc.c's wait for it, as
 * gate.c waits for a circuit's (circuit_lock_of()).
 */
static enum circuit_step
lock_wait(enum circuit_step s, int64_t until)
{
	const struct flock *lk;
	int fd;

	if (s != STEP_BUSY)
		return s;
	lk = circuit_lock_of(&place, &fd);
	return circuit_lock_waited(&place, proc_lock(fd, lk, until,
	    &place.sh.signal));
}

/*
 * What a run's end makes of h: the rule's verdict when the run counts
 * (v), else the history as it is, no alert, nothing tolerated.
 */
static struct job_end
job_apply(struct job_view *h, const struct verdict *v, long alert_after)
{
	struct job_end e;

	if (v->counts_job) {
		e = job_rule(h, v->passed, alert_after, realtime_now());
		e.counted = 1;
		return e;
	}
	memset(&e, 0, sizeof(e));
	e.failed_in_row = h->failed;
	e.since = h->since;
	e.alerting = h->alerting;
	return e;
}

/*
 * The record read, changed by the rule and written back, under its lock,
 * so that two runs of the job that end together both count; a run that
 * does not count only reads it.  A corrupt record starts afresh, said
 * once.
 */
static enum circuit_step
file_change(int64_t until, const struct verdict *v, long alert_after,
    struct job_end *e)
{
	static char text[JOB_TEXT_MAX + 1];
	struct job_view h;
	enum circuit_step s;
	size_t got;
	int corrupt;

	while ((s = lock_wait(record_begin(&place, text, sizeof(text), &got),
	    until)) == STEP_BUSY)
		continue;
	if (s != STEP_DONE)
		return s;
	memset(&h, 0, sizeof(h));
	corrupt = got > 0 && history_read(text, got, &h) == -1;
	if (corrupt)
		warningx("job %s: the record %s/%s is corrupt; it starts afresh",
		    sh->name, place.dir_path, sh->name);
	*e = job_apply(&h, v, alert_after);
	format_history(text, sizeof(text), &h);
	return record_end(&place, v->counts_job || corrupt ? text : NULL);
}

static void
hash_of(struct job_hash *jh)
{
	size_t i;

	memset(jh, 0, sizeof(*jh));
	for (i = 0; i < JOB_FIELDS; i++)
		jh->names[i] = field_names[i];
}

/*
 * The same on the store: read, changed, and put back only if no other
 * run changed it meanwhile, else again from the read.  A corrupt hash
 * starts afresh, said once, as a corrupt record does.
 */
static enum circuit_step
store_change(int64_t until, const struct verdict *v, long alert_after,
    struct job_end *e)
{
	struct job_hash jh;
	struct job_view h;
	enum circuit_step s;
	int tries, corrupt, warned = 0, stored = 0;

	hash_of(&jh);
	for (tries = 0; tries < PUT_TRIES && !stored; tries++) {
		if ((s = store_job_get(sh, until, &jh)) != STEP_DONE)
			return s;
		corrupt = history_of(jh.field, &h) == -1;
		if (corrupt) {
			memset(&h, 0, sizeof(h));
			if (!warned++)
				warningx("job %s: the store's hash "
				    "retry:job:{%s} is corrupt; it starts "
				    "afresh", sh->name, sh->name);
		}
		*e = job_apply(&h, v, alert_after);
		if (!v->counts_job && !corrupt)
			return STEP_DONE;	/* read only */
		history_fields(&h, jh.field);
		if ((s = store_job_put(sh, until, &jh, &stored)) != STEP_DONE)
			return s;
	}
	if (!stored)
		(void)snprintf(sh->err, sizeof(sh->err), "store: the job's "
		    "hash changed under %d tries", PUT_TRIES);
	return stored ? STEP_DONE : STEP_FAILED;
}

/* ---- The run ----------------------------------------------------------- */

/*
 * The place of p->job's history: the store (nothing sent yet), or its
 * record, opened and checked (one that is not a record, a link, another
 * user's: refused, 125); reading_only, nothing is made.
 */
static void
open_history(const struct policy *p, int reading_only)
{
	memset(&place, 0, sizeof(place));
	place.dir = place.lock = place.record = -1;
	if (p->store.given) {
		on_store = 1;
		sh->name = p->job;
		store_job_open(sh, &p->store, p->store_timeout);
	} else if (record_open(&place, JOB_DIR, JOB_MAGIC, p->job,
	    reading_only) == -1)
		fatalx("job %s: %s", p->job, sh->err);
}

/*
 * Before the first attempt of a run with --job: the record opened and
 * checked (one that is not a record, a link, another user's: refused,
 * 125, nothing run); on a store nothing is sent yet.
 */
void
job_open(const struct policy *p)
{
	open_history(p, 0);
}

/* What -v says the rule made of the run. */
static void
say_decision(const struct policy *p, const struct job_end *e)
{
	if (e->recovered)
		detail("job %s: recovered after an alert; failed runs in a "
		    "row reset", p->job);
	else if (e->failed_in_row == 0)
		detail("job %s: passed; no failed run in a row", p->job);
	else if (e->tolerated)
		detail("job %s: failed run %ld in a row, tolerated (alerts at "
		    "%ld)", p->job, e->failed_in_row, p->alert_after);
	else
		detail("job %s: failed run %ld in a row, an alert (--alert-after "
		    "%ld)", p->job, e->failed_in_row, p->alert_after);
}

/*
 * Why the history could not be kept (or read): sh->err, else the store's
 * state.
 */
static const char *
why_not_kept(enum circuit_step s)
{
	if (sh->err[0] != '\0')
		return sh->err;
	return s == STEP_TIMEOUT ? "the store did not answer by the deadline" :
	    "the store failed earlier in the run";
}

/*
 * The end of a run of the job: the rule applied to its history, kept
 * under the record's lock (or the store's check) by until, or a little
 * past it, as a circuit's run end is.  The verdict v says whether it
 * passed and whether it counts at all (outcome.c's table); its job member
 * gets what the rule made of it.  A run that counts neither way reads the
 * history for --metrics alone, so that its gauges stay as the history
 * says.  Where the history cannot be kept, a failed run alerts (better a
 * mail too many than a failure unheard), said in one warning; the run's
 * status stands.  Returns a signal that came meanwhile, or 0.
 */
int
job_run_ended(const struct policy *p, struct verdict *v, int64_t until)
{
	int64_t grace = monotonic_now() + RESULT_GRACE_NS;
	struct job_end e;
	enum circuit_step s;

	memset(&v->job, 0, sizeof(v->job));
	if (!v->counts_job)
		detail("job %s: the run counts neither way", p->job);
	if (!v->counts_job && p->metrics == NULL)
		return 0;
	if (until < grace)
		until = grace;
	memset(&e, 0, sizeof(e));
	s = on_store ? store_change(until, v, p->alert_after, &e) :
	    file_change(until, v, p->alert_after, &e);
	if (s == STEP_SIGNAL)
		return sh->signal;
	if (s != STEP_DONE && !v->counts_job) {
		warningx("job %s: %s; its history is not read, so --metrics "
		    "has no job gauges", p->job, why_not_kept(s));
		return 0;
	}
	if (s != STEP_DONE) {
		warningx("job %s: %s; its history is not kept%s", p->job,
		    why_not_kept(s), v->passed ? "" :
		    ", so this failed run alerts");
		v->job.name = p->job;
		v->job.alert = !v->passed;
		v->job.counted = 1;
		v->job.unknown = 1;
		return 0;
	}
	e.name = p->job;
	v->job = e;
	if (!e.counted)
		return 0;
	/* Its annotation in CI: a warning, not the run's error. */
	if (e.tolerated)
		v->notice = NOTICE_WARNING;
	say_decision(p, &e);
	return 0;
}

/* ---- --job-status and --job-reset -------------------------------------- */

/* The history of p->job, for a status; *found: there is one. */
static void
read_history(const struct policy *p, struct job_view *h, int *found)
{
	static char text[JOB_TEXT_MAX + 1];
	struct job_hash jh;
	size_t got;

	memset(h, 0, sizeof(*h));
	if (on_store) {
		hash_of(&jh);
		if (store_job_get(sh, NEVER, &jh) != STEP_DONE)
			fatalx("job %s: %s", p->job, sh->err);
		*found = strcmp(jh.version, "0") != 0;
		if (*found && history_of(jh.field, h) == -1) {
			warningx("job %s: the store's hash is corrupt; the next "
			    "run starts it afresh", p->job);
			memset(h, 0, sizeof(*h));
		}
		return;
	}
	if (record_read(&place, text, sizeof(text), &got) == -1)
		fatalx("job %s: %s", p->job, sh->err);
	*found = got > 0;
	if (*found && history_read(text, got, h) == -1)
		warningx("job %s: the record is corrupt; the next run starts it "
		    "afresh", p->job);
}

/* A time of the history, or never. */
static const char *
when(char *buf, size_t size, int64_t t)
{
	return t == 0 ? "never" : fmt_utc(buf, size, t);
}

/*
 * The state of h in one word, into h->state, and the exit status of
 * --job-status: healthy 0, failing short of an alert 1, alerting 75.
 */
static int
job_state(struct job_view *h)
{
	if (h->alerting) {
		h->state = "alerting";
		return EXIT_TEMPFAIL;
	}
	h->state = h->failed > 0 ? "failing" : "healthy";
	return h->failed > 0 ? 1 : 0;
}

/*
 * --job-status: like --circuit-status's lines.  A write that fails is
 * found by close_stdout() at the end, as for the circuit's.
 */
static void
print_history(const struct policy *p, const struct job_view *h, int found)
{
	char t[32], place_text[4 * PATH_MAX];
	const char *where = h->place;

	(void)escape(place_text, sizeof(place_text), where, strlen(where));
	(void)printf("job:       %s\nstate:     %s\n", p->job, h->state);
	if (h->failed > 0)
		(void)printf("failed:    %ld run%s in a row (since %s)\n",
		    h->failed, h->failed == 1 ? "" : "s",
		    fmt_utc(t, sizeof(t), h->since));
	else
		(void)printf("failed:    none in a row\n");
	if (h->alert_after > 0)
		(void)printf("alerts:    at %ld failed run%s in a row\n",
		    h->alert_after, h->alert_after == 1 ? "" : "s");
	(void)printf("success:   %s\n", when(t, sizeof(t), h->success));
	(void)printf("alert:     %s\n", when(t, sizeof(t), h->alert));
	if (on_store)
		(void)printf("record:    %sretry:job:{%s} on %s\n", found ? "" :
		    "none: no key ", p->job, place_text);
	else if (found)
		(void)printf("record:    %s/%s/%s\n", place_text, JOB_DIR,
		    p->job);
	else
		(void)printf("record:    none: no file %s in %s/%s\n", p->job,
		    place_text, JOB_DIR);
}

/* --job-reset: the history forgotten; one without a history says so. */
static int
reset_history(const struct policy *p)
{
	enum circuit_step s;
	int existed = 0;
	size_t got;
	static char text[JOB_TEXT_MAX + 1];

	if (on_store)
		s = store_job_del(sh, &existed);
	else {
		while ((s = lock_wait(record_begin(&place, text, sizeof(text),
		    &got), NEVER)) == STEP_BUSY)
			continue;
		existed = s == STEP_DONE && got > 0;
		if (s == STEP_DONE && existed && unlinkat(place.dir, p->job,
		    0) == -1 && errno != ENOENT) {
			(void)snprintf(sh->err, sizeof(sh->err), "%s/%s: %s",
			    place.dir_path, p->job, strerror(errno));
			(void)record_end(&place, NULL);
			s = STEP_FAILED;
		} else if (s == STEP_DONE)
			s = record_end(&place, NULL);
	}
	if (s != STEP_DONE)
		fatalx("job %s: %s", p->job, sh->err);
	if (!existed)
		say("job %s: no history to forget", p->job);
	return 0;
}

/*
 * The state directory itself, as --circuit-status names it: the records'
 * directory less its last component, JOB_DIR.
 */
static const char *
state_dir(void)
{
	static char dir[PATH_MAX];
	size_t len = strlen(place.dir_path) - strlen("/" JOB_DIR);

	(void)snprintf(dir, sizeof(dir), "%.*s", (int)len, place.dir_path);
	return dir;
}

/* --job-status NAME and --job-reset NAME. */
int
job_command(const struct policy *p)
{
	struct report rep;
	struct job_view h;
	int found, status;

	/* As for a run: a path that cannot take it is refused first. */
	if (p->job_command == JOB_STATUS && p->report != NULL &&
	    report_open(&rep, p->report) == -1)
		fatalx("--report '%s': %s", p->report, strerror(errno));
	open_history(p, p->job_command == JOB_STATUS);
	if (p->job_command == JOB_RESET)
		return reset_history(p);
	read_history(p, &h, &found);
	h.found = found;
	h.on_store = on_store;
	h.place = on_store ? p->store.shown : state_dir();
	status = job_state(&h);
	print_history(p, &h, found);
	if (p->report != NULL && report_job_status(&rep, p->job, &h,
	    status) == -1)
		fatal("--report '%s'", p->report);
	return close_stdout() != 0 ? EXIT_OWN_FAILURE : status;
}
