/* SPDX-License-Identifier: ISC */
/*
 * retry's JSON report, and the listener that fills it from the run's
 * events.  Strings are escaped for any bytes: valid UTF-8
 * passes through, any other byte becomes the code point of its value.
 * Output goes through stdio and is checked once, with ferror() and
 * fclose(), where the object is complete.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "shared.h"

/* str as a JSON string; a byte that is not UTF-8 as \u00XX. */
void
json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	putc('"', f);
	while (*s != '\0') {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s++);
		else if (*s == '\n')
			fputs("\\n", f), s++;
		else if (*s == '\t')
			fputs("\\t", f), s++;
		else if (*s < 0x20 || *s == 0x7f || (n = utf8_length(s)) == 0)
			fprintf(f, "\\u%04x", *s++);
		else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
	putc('"', f);
}

static void
put_seconds(FILE *f, int64_t ns)
{
	fprintf(f, "%lld.%06lld", (long long)(ns / 1000000000),
	    (long long)(ns % 1000000000 / 1000));
}

/* Real time ns as an RFC 3339 UTC time to the millisecond, quoted. */
static void
put_time(FILE *f, int64_t ns)
{
	char buf[32];
	time_t t = (time_t)(ns / NS_PER_SEC);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		fputs("null", f);	/* a time past what struct tm holds */
		return;
	}
	fprintf(f, "\"%s.%03dZ\"", buf, (int)(ns % NS_PER_SEC / 1000000));
}

/*
 * Says up front whether the report can be written (outfile_check()), so
 * that a path that cannot take it is a usage error before anything runs.
 * The attempts wait in memory: nothing is made now.
 */
int
report_open(struct report *rep, const char *path)
{
	memset(rep, 0, sizeof(*rep));
	rep->path = path;
	if ((rep->spool = open_memstream(&rep->attempts_text,
	    &rep->attempts_len)) == NULL ||
	    (rep->waits = open_memstream(&rep->waits_text,
	    &rep->waits_len)) == NULL ||
	    (rep->changes = open_memstream(&rep->changes_text,
	    &rep->changes_len)) == NULL)
		return -1;
	if (strcmp(path, "-") == 0)
		return 0;
	return outfile_check(&rep->out, path, DEVICES_IN_PLACE);
}

int
report_attempt(struct report *rep, const struct attempt_record *a)
{
	char name[32];
	FILE *f = rep->spool;

	fprintf(f, "%s\n    {\"attempt\": %ld, \"started_at\": ",
	    rep->attempts++ ? "," : "", a->number);
	put_time(f, a->started_at);
	fputs(", \"start\": ", f);
	put_seconds(f, a->start);
	fputs(", \"duration\": ", f);
	put_seconds(f, a->duration);
	fprintf(f, ", \"status\": %d, \"signal\": ", a->status);
	if (a->termsig != 0)
		json_string(f, signal_name(name, sizeof(name), a->termsig));
	else
		fputs("null", f);
	fprintf(f, ", \"timed_out\": %s, \"error\": ",
	    a->timed_out ? "true" : "false");
	if (a->error != 0)
		json_string(f, strerror(a->error));
	else
		fputs("null", f);
	fputs(", \"delay\": ", f);
	if (a->delay >= 0) {
		put_seconds(f, a->delay);
		fprintf(f, ", \"delay_from\": \"%s\"",
		    a->from_hint ? "hint" : "backoff");
	} else
		fputs("null, \"delay_from\": null", f);
	/* Only when it did, as "store": the form of 0.2 stays. */
	fputs(a->reset ? ", \"schedule_reset\": true}" : "}", f);
	return ferror(f) ? -1 : 0;
}

/* A wait that began start ns into the run, of length ns, for reason. */
int
report_wait(struct report *rep, int64_t start, int64_t length,
    const char *reason)
{
	FILE *f = rep->waits;

	fprintf(f, "%s\n    {\"start\": ", rep->nwaits++ ? "," : "");
	put_seconds(f, start);
	fputs(", \"length\": ", f);
	put_seconds(f, length);
	fprintf(f, ", \"reason\": \"%s\"}", reason);
	return ferror(f) ? -1 : 0;
}

/* A change of the shared circuit, at ns into the run. */
int
report_change(struct report *rep, int64_t at, const char *change)
{
	FILE *f = rep->changes;

	fprintf(f, "%s{\"at\": ", rep->nchanges++ ? ", " : "");
	put_seconds(f, at);
	fprintf(f, ", \"change\": \"%s\"}", change);
	return ferror(f) ? -1 : 0;
}

/* A spool's text, as the stream left it: flushed, or NULL on its error. */
static int
spooled(FILE *spool)
{
	return fflush(spool) == EOF || ferror(spool) ? -1 : 0;
}

/* The "circuit" member: its name, the store's URL (password masked), its changes. */
static void
put_circuit(FILE *f, const struct report *rep, const struct report_end *e)
{
	fputs(",\n  \"circuit\": ", f);
	if (e->circuit == NULL) {
		fputs("null", f);
		return;
	}
	fputs("{\"name\": ", f);
	json_string(f, e->circuit);
	fputs(", \"store\": ", f);
	if (e->store_url != NULL)
		json_string(f, e->store_url);
	else
		fputs("null", f);
	fputs(", \"changes\": [", f);
	fwrite(rep->changes_text, 1, rep->changes_len, f);
	fputs("]}", f);
}

/*
 * The "job" member, only with --job: what the run made of its history;
 * a run that counted neither way, or whose history could not be kept,
 * has nulls.
 */
static void
put_job(FILE *f, const char *name, const struct job_end *j)
{
	int counted = j->counted && !j->unknown;

	fputs(",\n  \"job\": {\"name\": ", f);
	json_string(f, name);
	if (counted)
		fprintf(f, ", \"failed_in_row\": %ld, \"alerting\": %s",
		    j->failed_in_row, j->alerting ? "true" : "false");
	else
		fputs(", \"failed_in_row\": null, \"alerting\": null", f);
	fprintf(f, ", \"tolerated\": %s, \"alert\": %s, \"recovered\": %s}",
	    j->tolerated ? "true" : "false", j->alert ? "true" : "false",
	    j->recovered ? "true" : "false");
}

/*
 * Where the object is written: the file's new version, or for "-" memory,
 * so that it reaches stderr in one bounded write (close_target).
 */
static FILE *
open_target(struct report *rep)
{
	if (strcmp(rep->path, "-") != 0)
		return outfile_open(&rep->out, 0600);
	return open_memstream(&rep->text, &rep->text_len);
}

/*
 * The object is whole: the file renamed into place, or for "-" the text
 * on stderr, waiting for a stalled reader until until at most (a signal
 * ends it at once).  0, or -1 with errno.
 */
static int
close_target(struct report *rep, FILE *f, int64_t until)
{
	int e = 0;

	if (strcmp(rep->path, "-") != 0)
		return outfile_close(&rep->out, f);
	if (ferror(f) | (fclose(f) == EOF))	/* both, always */
		e = errno != 0 ? errno : EIO;
	else if (sp_write(STDERR_FILENO, rep->text, rep->text_len,
	    until) == -1)
		e = errno;
	free(rep->text);
	rep->text = NULL;
	errno = e;
	return e != 0 ? -1 : 0;
}

/*
 * Writes the whole object; on failure the temporary file is removed and
 * errno says why.
 */
int
report_finish(struct report *rep, const struct report_end *end)
{
	char name[32];
	FILE *f;
	int i, e;

	if (spooled(rep->spool) == -1 || spooled(rep->waits) == -1 ||
	    spooled(rep->changes) == -1) {
		report_abandon(rep);
		return -1;
	}
	if ((f = open_target(rep)) == NULL) {
		report_abandon(rep);
		return -1;
	}
	fputs("{\n  \"command\": [", f);
	for (i = 0; end->argv[i] != NULL; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, end->argv[i]);
	}
	fputs("],\n  \"started_at\": ", f);
	put_time(f, end->started_at);
	fputs(",\n  \"key\": ", f);
	if (end->key != NULL)
		json_string(f, end->key);
	else
		fputs("null", f);
	fputs(",\n  \"run_id\": ", f);
	json_string(f, end->run_id);
	fputs(",\n  \"attempts\": [", f);
	fwrite(rep->attempts_text, 1, rep->attempts_len, f);
	fprintf(f, "%s],\n  \"waits\": [", rep->attempts ? "\n  " : "");
	fwrite(rep->waits_text, 1, rep->waits_len, f);
	fputs(rep->nwaits ? "\n  ]" : "]", f);
	put_circuit(f, rep, end);
	if (end->job_name != NULL)
		put_job(f, end->job_name, end->job);
	fprintf(f, ",\n  \"outcome\": \"%s\",\n  \"passed_after_retries\": %s,"
	    "\n  \"exit_status\": %d,\n  \"signal\": ", end->outcome,
	    end->passed_after_retries ? "true" : "false", end->status);
	if (end->signal != 0)
		json_string(f, signal_name(name, sizeof(name), end->signal));
	else
		fputs("null", f);
	if (rep->store != NULL)	/* only with --store: see retry-formats(5) */
		fprintf(f, ",\n  \"store\": \"%s\"", rep->store);
	fputs(",\n  \"total_time\": ", f);
	put_seconds(f, end->total);
	fputs("\n}\n", f);
	e = close_target(rep, f, end->until);
	report_abandon(rep);
	return e;
}

/* No report after all (or it is written): the spool and any temporary file go. */
void
report_abandon(struct report *rep)
{
	int e = errno;

	if (rep->path != NULL && strcmp(rep->path, "-") != 0) {
		outfile_abandon(&rep->out);
		e = errno;
	}
	if (rep->spool != NULL && fclose(rep->spool) == EOF)
		e = errno;
	if (rep->waits != NULL && fclose(rep->waits) == EOF)
		e = errno;
	if (rep->changes != NULL && fclose(rep->changes) == EOF)
		e = errno;
	rep->spool = rep->waits = rep->changes = NULL;
	free(rep->attempts_text);
	free(rep->waits_text);
	free(rep->changes_text);
	free(rep->text);
	rep->attempts_text = rep->waits_text = rep->changes_text = NULL;
	rep->text = NULL;
	errno = e;
}

/* ---- --circuit-status --report ------------------------------------ */

static const char *const state_keys[] = {
	[CLOSED] = "closed", [OPEN] = "open", [HALF_OPEN] = "half-open"
};

/* "key": "text", or null for NULL (or "" where empty means none). */
static void
put_member(FILE *f, const char *key, const char *text)
{
	fprintf(f, ",\n  \"%s\": ", key);
	if (text != NULL && *text != '\0')
		json_string(f, text);
	else
		fputs("null", f);
}

/* The state's members: the cool-down left while open, the probe. */
static void
put_state(FILE *f, const struct circuit_view *v)
{
	fprintf(f, ",\n  \"state\": \"%s\",\n  \"half_opens_in\": ",
	    state_keys[v->state]);
	if (v->state == OPEN)
		put_seconds(f, v->half_opens_in > 0 ? v->half_opens_in : 0);
	else
		fputs("null", f);
	fputs(",\n  \"probe\": ", f);
	if (v->state == HALF_OPEN && v->probe != 0) {
		fprintf(f, "{\"pid\": %ld, \"host\": ", v->probe);
		if (v->probe_host[0] != '\0')
			json_string(f, v->probe_host);
		else
			fputs("null", f);
		putc('}', f);
	} else
		fputs("null", f);
}

/* The budget and the runs counted, with the flake rate. */
static void
put_counts(FILE *f, const struct circuit_view *v)
{
	fprintf(f, ",\n  \"failures\": %ld,\n  \"trip\": ", v->failures);
	if (v->ratio > 0)
		fprintf(f, "{\"percent\": %ld, \"of_last\": %ld, \"seen\": %ld, "
		    "\"failed\": %ld}", v->ratio, v->span, v->seen, v->failing);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"openings\": %ld,\n  \"budget\": ", v->openings);
	if (v->window > 0) {
		fprintf(f, "{\"retries\": %ld, \"limit\": %ld, \"window\": ",
		    v->retries, v->share > 0 ? v->allowed : v->budget);
		put_seconds(f, v->window);
		if (v->share > 0)
			fprintf(f, ", \"percent\": %ld, \"first_attempts\": %ld, "
			    "\"min\": %ld", v->share, v->arrived, v->least);
		putc('}', f);
	} else
		fputs("null", f);
	fprintf(f, ",\n  \"runs\": {\"counted\": %ld, \"passed_at_once\": %ld, "
	    "\"passed_after_retries\": %ld, \"failed\": %ld},\n"
	    "  \"flake_rate\": ", v->at_once + v->retried + v->failed,
	    v->at_once, v->retried, v->failed);
	if (v->flake_rate >= 0)
		fprintf(f, "%.4f", v->flake_rate);
	else
		fputs("null", f);
}

/*
 * --circuit-status with --report: what the status prints, as one JSON
 * object written whole (see report_finish()), rep opened by report_open().
 */
int
report_status(struct report *rep, const char *name,
    const struct circuit_view *v, int status)
{
	FILE *f;
	int e;

	if ((f = open_target(rep)) == NULL) {
		report_abandon(rep);
		return -1;
	}
	fputs("{\n  \"circuit\": ", f);
	json_string(f, name);
	put_member(f, "store", v->on_store ? v->place : NULL);
	put_member(f, "state_directory", v->on_store ? NULL : v->place);
	fprintf(f, ",\n  \"record\": %s,\n  \"corrupt\": %s",
	    v->found ? "true" : "false", v->corrupt ? "true" : "false");
	put_state(f, v);
	put_counts(f, v);
	fprintf(f, ",\n  \"exit_status\": %d\n}\n", status);
	e = close_target(rep, f, NEVER);
	report_abandon(rep);
	return e;
}

/* A time of a job's history, or null for 0: never. */
static void
put_when(FILE *f, const char *key, int64_t t)
{
	fprintf(f, ",\n  \"%s\": ", key);
	if (t == 0)
		fputs("null", f);
	else
		put_time(f, t);
}

/*
 * --job-status with --report FILE: the history of the job name as one
 * object, written as report_status() writes a circuit's; its state and
 * status are job.c's.
 */
int
report_job_status(struct report *rep, const char *name,
    const struct job_view *v, int status)
{
	FILE *f;
	int e;

	if ((f = open_target(rep)) == NULL) {
		report_abandon(rep);
		return -1;
	}
	fputs("{\n  \"job\": ", f);
	json_string(f, name);
	put_member(f, "store", v->on_store ? v->place : NULL);
	put_member(f, "state_directory", v->on_store ? NULL : v->place);
	fprintf(f, ",\n  \"record\": %s,\n  \"state\": \"%s\",\n"
	    "  \"failed_in_row\": %ld", v->found ? "true" : "false",
	    v->state, v->failed);
	put_when(f, "since", v->since);
	put_when(f, "last_success", v->success);
	put_when(f, "last_alert", v->alert);
	fprintf(f, ",\n  \"alerting\": %s,\n  \"alert_after\": %ld,\n"
	    "  \"exit_status\": %d\n}\n", v->alerting ? "true" : "false",
	    v->alert_after, status);
	e = close_target(rep, f, NEVER);
	report_abandon(rep);
	return e;
}

/* ---- The listener ------------------------------------------------- */

static struct report	 run_report;
static int		 reporting;	/* --report, not yet written */
static long		 recorded;	/* attempts in it */

/*
 * --report FILE: checked now (a usage error before anything runs), kept
 * in memory, written when the run ends.
 */
void
report_start(const char *path)
{
	if (report_open(&run_report, path) == -1)
		fatalx("--report '%s': %s", path, outfile_why(&run_report.out));
	reporting = 1;
}

/* One more attempt, with the delay that follows it (or -1). */
static void
record_attempt(const struct run *r, int64_t delay)
{
	struct attempt_record a;

	if (recorded == r->attempts)
		return;
	recorded = r->attempts;
	a.number = r->attempts;	/* through the run, resets or not */
	a.started_at = r->start_real + (r->began - r->start);
	a.reset = r->reset;
	a.start = r->began - r->start;
	a.duration = r->ended - r->began;
	a.status = r->status;
	a.termsig = r->end.termsig;
	a.timed_out = r->timed_out != NOT_TIMED_OUT;
	a.error = r->end.error;
	a.delay = delay;
	a.from_hint = r->from_hint;
	if (report_attempt(&run_report, &a) == -1)
		fatal("report");
}

/* The run's end: the last attempt, the outcome, and the file written. */
static void
finish(const struct event *ev)
{
	const struct policy *p = ev->policy;
	const struct run *r = ev->run;
	struct report_end e;

	record_attempt(r, -1);
	if (p->circuit != NULL && p->store.given)
		run_report.store = r->store_down ? "unavailable" : "ok";
	e.argv = p->argv;
	e.started_at = r->start_real;
	e.key = r->key;
	e.run_id = r->run_id;
	e.circuit = p->circuit;
	e.job_name = p->job;
	e.job = &ev->verdict->job;
	e.store_url = p->circuit != NULL && p->store.given ? p->store.shown :
	    NULL;
	e.outcome = outcome_table[r->why].key;
	e.passed_after_retries = ev->verdict->after_retries;
	e.status = ev->verdict->status;
	e.signal = ev->verdict->signal;
	e.total = r->took;
	e.until = r->writes_until;
	if (report_finish(&run_report, &e) == -1)
		warningx("--report '%s': %s", p->report,
		    outfile_why(&run_report.out));
	reporting = 0;
}

/* The words of the report for a wait's reason and a circuit's change. */
const char *const report_wait_keys[NWAIT_REASONS] = {
	[WAIT_BACKOFF] = "backoff",
	[WAIT_HINT] = "hint",
	[WAIT_SPLAY] = "splay",
	[WAIT_CIRCUIT_OPEN] = "circuit_open",
	[WAIT_PROBE_ELSEWHERE] = "probe_elsewhere",
	[WAIT_BUDGET] = "budget_spent",
};
const char *const report_change_keys[NCIRCUIT_CHANGES] = {
	[CIRCUIT_PROBING] = "probing",
	[CIRCUIT_OPENED] = "opened",
	[CIRCUIT_CLOSED] = "closed",
};

/*
 * The listener: an attempt once its delay is known, each wait and each
 * change of the circuit as it comes, the whole at the end.
 */
void
report_event(const struct event *ev)
{
	int64_t at;

	if (!reporting)
		return;
	at = monotonic_now() - ev->run->start;
	switch (ev->kind) {
	case WAIT_BEGINS:
		if (ev->reason == WAIT_BACKOFF || ev->reason == WAIT_HINT)
			record_attempt(ev->run, ev->wait);
		if (report_wait(&run_report, at, ev->wait,
		    report_wait_keys[ev->reason]) == -1)
			fatal("report");
		break;
	case CIRCUIT_CHANGES:
		if (report_change(&run_report, at,
		    report_change_keys[ev->change]) == -1)
			fatal("report");
		break;
	case RUN_ENDS:
		finish(ev);
		break;
	case RUN_BEGINS:
	case ATTEMPT_STARTS:
	case ATTEMPT_ENDS:
		break;		/* an attempt is kept when its delay is known */
	}
}

/* On a way out that never came to RUN_ENDS: no temporary file is left. */
void
report_drop(void)
{
	if (reporting)
		report_abandon(&run_report);
	reporting = 0;
}
