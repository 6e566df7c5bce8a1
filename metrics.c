/* SPDX-License-Identifier: ISC */
/*
 * --metrics FILE: at the end of the run, its gauges in the Prometheus
 * text exposition format, written whole (outfile.c) for node_exporter's
 * textfile collector; the last success is carried over from the FILE
 * that the job's previous run wrote.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define OLD_MAX		65536	/* of the previous FILE, read at most */

static struct outfile	 out;
static int		 writing;	/* --metrics, not yet written */
static char		 job[2 * NAME_MAX + 1];	/* the job label, escaped */

/*
 * The job label: FILE's name less ".prom".  Every job writes its own
 * FILE into the collector's directory, so the name tells the jobs apart
 * there, where node_exporter refuses two files with the same series.
 * Escaped as the format wants a label value: \\, \" and \n; never cut,
 * since two names cut to one label would be that refusal: job holds a
 * name of NAME_MAX bytes (outfile_check() allows no more) escaped whole.
 * A name that is not UTF-8 is refused (-1): the format's label values are
 * UTF-8, with no escape for other bytes, and a label rewritten to be
 * UTF-8 would match no name that a query or an alert for the job uses,
 * and might be another job's.
 */
static int
name_job(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len, i, n, at = 0;

	base = base == NULL ? path : base + 1;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".prom") == 0)
		len -= 5;
	for (i = 0; i < len; i += n) {
		if ((n = utf8_length((const unsigned char *)base + i)) == 0)
			return -1;	/* ".prom", ASCII, ends no sequence */
		if (at + 2 * n >= sizeof(job))
			break;	/* past NAME_MAX: outfile_check() refused it */
		if (base[i] == '\\' || base[i] == '"' || base[i] == '\n')
			job[at++] = '\\';
		if (base[i] == '\n')
			job[at++] = 'n';
		else {
			memcpy(job + at, base + i, n);
			at += n;
		}
	}
	job[at] = '\0';
	return 0;
}

/*
 * --metrics FILE: checked now, so that a directory that cannot take it,
 * a link that outfile.c does not follow, or a name that cannot be the
 * job label, is a usage error before anything runs; written when the run
 * ends.  What FILE leads to is replaced, a FIFO too, never written
 * through.
 */
void
metrics_start(const char *path)
{
	if (outfile_check(&out, path, NEVER_IN_PLACE) == -1)
		fatalx("--metrics '%s': %s", path, outfile_why(&out));
	if (name_job(path) == -1)
		fatalx("--metrics '%s': the name is not UTF-8, which its job "
		    "label must be; rename it", path);
	writing = 1;
}

/* A gauge's HELP and TYPE lines. */
static void
gauge(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* ns as seconds with up to 9 decimals, as the format reads a float. */
static void
put_seconds(FILE *f, int64_t ns)
{
	fprintf(f, "%lld.%09lld\n", (long long)(ns / NS_PER_SEC),
	    (long long)(ns % NS_PER_SEC));
}

/*
 * The last success that the job's previous FILE says, as it wrote it
 * (digits and a point), into buf; "0" when there is none, or when the
 * FILE is not a regular file of this user's (outfile_previous(): then it
 * is not ours to believe).  Read after outfile_open(), from what FILE
 * leads to.
 */
static void
last_success_before(char *buf, size_t size)
{
	static char old[OLD_MAX + 1];
	char key[sizeof(job) + 64];
	const char *at;
	ssize_t n;
	size_t len;
	int fd;

	(void)snprintf(buf, size, "0");
	if ((fd = outfile_previous(&out)) == -1)
		return;
	n = read(fd, old, OLD_MAX);
	if (close(fd) == -1 || n <= 0)
		return;
	old[n] = '\0';
	(void)snprintf(key, sizeof(key),
	    "\nretry_last_success_timestamp_seconds{job=\"%s\"} ", job);
	if ((at = strstr(old, key)) == NULL)
		return;
	at += strlen(key);
	len = strspn(at, "0123456789.");
	if (len == 0 || len >= size || (at[len] != '\n' && at[len] != '\0'))
		return;
	memcpy(buf, at, len);
	buf[len] = '\0';
}

/* --job's history after the run, as --job-status shows it. */
static void
put_job(FILE *f, const struct job_end *e)
{
	gauge(f, "retry_job_failed_runs_in_row",
	    "Failed runs of the job in a row after its last run (--job).");
	fprintf(f, "retry_job_failed_runs_in_row{job=\"%s\"} %ld\n", job,
	    e->failed_in_row);
	gauge(f, "retry_job_alerting", "1 when the job has alerted since its "
	    "last success (--alert-after).");
	fprintf(f, "retry_job_alerting{job=\"%s\"} %d\n", job, e->alerting);
}

/* The gauges, each with its HELP and TYPE. */
static void
put_metrics(FILE *f, const struct event *ev, int64_t end_real,
    const char *last_success)
{
	const struct run *r = ev->run;
	int passed = ev->verdict->passed;

	gauge(f, "retry_run_start_timestamp_seconds",
	    "When the job's last run began, as Unix time.");
	fprintf(f, "retry_run_start_timestamp_seconds{job=\"%s\"} ", job);
	put_seconds(f, r->start_real);
	gauge(f, "retry_run_end_timestamp_seconds",
	    "When the job's last run ended, as Unix time.");
	fprintf(f, "retry_run_end_timestamp_seconds{job=\"%s\"} ", job);
	put_seconds(f, end_real);
	gauge(f, "retry_last_success_timestamp_seconds",
	    "When a run of the job last ended with exit status 0, as Unix "
	    "time; 0: never.");
	fprintf(f, "retry_last_success_timestamp_seconds{job=\"%s\"} ", job);
	if (passed)
		put_seconds(f, end_real);
	else
		fprintf(f, "%s\n", last_success);
	gauge(f, "retry_exit_status", "The exit status of the job's last run.");
	fprintf(f, "retry_exit_status{job=\"%s\"} %d\n", job, ev->verdict->status);
	gauge(f, "retry_outcome", "How the job's last run ended: 1 for its "
	    "outcome, the key of retry's report.");
	fprintf(f, "retry_outcome{job=\"%s\",outcome=\"%s\"} 1\n", job,
	    outcome_table[r->why].key);
	gauge(f, "retry_attempts", "Attempts that the job's last run made.");
	fprintf(f, "retry_attempts{job=\"%s\"} %ld\n", job, r->attempts);
	gauge(f, "retry_sleep_seconds",
	    "Time the job's last run slept between attempts.");
	fprintf(f, "retry_sleep_seconds{job=\"%s\"} ", job);
	put_seconds(f, r->asleep);
	gauge(f, "retry_duration_seconds", "How long the job's last run took.");
	fprintf(f, "retry_duration_seconds{job=\"%s\"} ", job);
	put_seconds(f, r->took);
	gauge(f, "retry_passed_after_retries",
	    "1 when the job's last run succeeded after failed attempts.");
	fprintf(f, "retry_passed_after_retries{job=\"%s\"} %d\n", job,
	    ev->verdict->after_retries);
	/* A history not kept: no gauge, rather than one that lies. */
	if (ev->verdict->job.name != NULL && !ev->verdict->job.unknown)
		put_job(f, &ev->verdict->job);
}

/* The listener: the file, written whole when the run ends. */
void
metrics_event(const struct event *ev)
{
	char last[64];
	int64_t end_real;
	FILE *f;

	if (!writing || ev->kind != RUN_ENDS)
		return;
	writing = 0;
	end_real = realtime_now();
	if ((f = outfile_open(&out, 0644)) == NULL) {
		warningx("--metrics '%s': %s", out.path, outfile_why(&out));
		return;
	}
	last_success_before(last, sizeof(last));
	put_metrics(f, ev, end_real, last);
	if (outfile_close(&out, f) == -1)
		warningx("--metrics '%s': %s", out.path, outfile_why(&out));
}

/* On a way out that never came to RUN_ENDS: no temporary file is left. */
void
metrics_drop(void)
{
	if (writing)
		outfile_abandon(&out);
	writing = 0;
}
