/* SPDX-License-Identifier: ISC */
/*
 * --trace FILE: the run as OpenTelemetry spans, one for the run and one
 * for each attempt, appended to FILE as the run ends in one line of
 * OTLP/JSON (a TracesData); and each attempt's TRACEPARENT, so that the
 * command's own spans nest under its attempt.  A listener of the run's
 * events; retry-formats(5) says the layout.
 */
#include "compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#ifndef VERSION
#define VERSION "unknown"
#endif

#define SPAN_INTERNAL	1	/* OTLP's SpanKind */
#define STATUS_ERROR	2	/* OTLP's StatusCode */
#define TP_LEN		55	/* "00-" trace "-" span "-" flags */

/*
 * A line stays a line that a collector takes (the otlpjsonfile receiver
 * reads lines of up to 1 MiB by default), however many attempts a run
 * makes: the first and the last attempts' spans are kept, and the first
 * events, as many as OpenTelemetry's SDKs keep by default; the rest are
 * counted.
 */
#define FIRST_SPANS	64
#define LAST_SPANS	64
#define MAX_EVENTS	128

/* A W3C trace context: the trace, the parent span, the flags. */
struct context {
	unsigned char	 trace[16];
	unsigned char	 parent[8];
	unsigned char	 flags;
};

/* What the spans are made of, kept from event to event. */
struct tracer {
	const char	*path;
	struct outfile	 out;
	const char	*service;
	unsigned char	 trace[16];	/* the trace's ID */
	unsigned char	 run[8];	/* the run's span */
	unsigned char	 parent[8];	/* the inherited span, if any */
	int		 has_parent;
	unsigned char	 flags;		/* passed on: the caller's sampling */
	const char	*state;		/* TRACESTATE passed on, or NULL */
	struct rng	 ids;		/* the attempts' span IDs */
	unsigned char	 attempt[8];	/* the attempt running or last ended */
	FILE		*spans;		/* the first attempts' spans */
	char		*spans_text;
	size_t		 spans_len;
	char		*last[LAST_SPANS];	/* the last ones', a ring */
	size_t		 last_len[LAST_SPANS];
	long		 nlater;	/* spans after the first ones */
	long		 dropped_events;
	int		 broken;	/* a span could not be kept whole */
	FILE		*events;	/* the run span's events so far */
	char		*events_text;
	size_t		 events_len;
	long		 nspans, nevents;
	int		 waiting;	/* a wait's event waits for its end: */
	enum wait_reason wait_reason;
	int64_t		 wait_at, wait_delay, asleep_before;
};

static struct tracer	 tr;
static int		 tracing;	/* --trace, and its line not written */

/*
 * TRACEPARENT, rewritten in place for each attempt and for the hooks
 * between them: setenv(3) would keep every old value allocated.
 */
static char		 traceparent[] = "TRACEPARENT="
    "00-00000000000000000000000000000000-0000000000000000-00";

/* Lower-case hex of n bytes at b into out (2n + 1 bytes). */
static void
hex_of(char *out, const unsigned char *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* n bytes from 2n lower-case hex digits at s.  0, or -1 if not that. */
static int
hex_in(unsigned char *b, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const char *hi, *lo;
	size_t i;

	for (i = 0; i < n; i++) {
		/* strchr() finds the string's end too: not a digit. */
		if (s[2 * i] == '\0' || s[2 * i + 1] == '\0' ||
		    (hi = strchr(digits, s[2 * i])) == NULL ||
		    (lo = strchr(digits, s[2 * i + 1])) == NULL)
			return -1;
		b[i] = (unsigned char)((hi - digits) << 4 | (lo - digits));
	}
	return 0;
}

/* An ID of n bytes in hex at s; all zeros is no ID.  0, or -1. */
static int
id_in(unsigned char *b, const char *s, size_t n)
{
	size_t i;

	if (hex_in(b, s, n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return -1;
}

/*
 * An inherited TRACEPARENT read as W3C Trace Context level 1 says into
 * the trace's ID, the parent's and the flags: version 00 is exactly 55
 * characters; a later version (not ff) is read as 00 where a dash or
 * nothing follows its first 55.  0, or -1 if it is invalid.
 */
static int
read_traceparent(const char *v, struct context *c)
{
	unsigned char version;
	size_t len = strlen(v);

	if (len < TP_LEN || v[2] != '-' || v[35] != '-' || v[52] != '-' ||
	    hex_in(&version, v, 1) == -1 || version == 0xff)
		return -1;
	if (version == 0 ? len != TP_LEN : len > TP_LEN && v[TP_LEN] != '-')
		return -1;
	if (id_in(c->trace, v + 3, 16) == -1 ||
	    id_in(c->parent, v + 36, 8) == -1 ||
	    hex_in(&c->flags, v + 53, 1) == -1)
		return -1;
	c->flags &= 1;	/* level 1 knows the sampled flag only */
	return 0;
}

/*
 * The context the run is a child of: the inherited TRACEPARENT's, or
 * none (a new trace, flagged sampled: its spans are written).  One that
 * is invalid is said with -v, and the TRACESTATE that goes with it is
 * dropped, as the W3C says.
 */
static void
take_context(void)
{
	const char *v = getenv("TRACEPARENT");
	struct context c;

	random_trace_bytes(tr.trace, tr.run);
	tr.flags = 1;
	if (v != NULL && read_traceparent(v, &c) == 0) {
		memcpy(tr.trace, c.trace, sizeof(tr.trace));
		memcpy(tr.parent, c.parent, sizeof(tr.parent));
		tr.flags = c.flags;
		tr.has_parent = 1;
		if ((tr.state = getenv("TRACESTATE")) != NULL &&
		    *tr.state == '\0')
			tr.state = NULL;
		return;
	}
	if (v != NULL)	/* msg.c escapes it */
		detail("TRACEPARENT '%s' is no W3C trace context: the run "
		    "starts a new trace", v);
	if (unsetenv("TRACESTATE") == -1)
		fatal("unsetenv TRACESTATE");
}

/* TRACEPARENT for what runs next: a child of span. */
static void
export_context(const unsigned char span[8])
{
	static int in_environ;
	char *at = traceparent + strlen("TRACEPARENT=00-");

	hex_of(at, tr.trace, 16);
	at[32] = '-';
	hex_of(at + 33, span, 8);
	at[49] = '-';
	hex_of(at + 50, &tr.flags, 1);
	if (!in_environ && putenv(traceparent) != 0)
		fatal("putenv TRACEPARENT");
	in_environ = 1;
}

/*
 * Says now whether FILE can take the line (a usage error otherwise),
 * and settles the trace's IDs.
 */
void
trace_start(const struct policy *p)
{
	if (outfile_check_append(&tr.out, p->trace) == -1)
		fatalx("--trace '%s': %s", p->trace, outfile_why(&tr.out));
	tr.path = p->trace;
	tr.service = p->trace_service != NULL ? p->trace_service : "retry";
	take_context();
	rng_seed(&tr.ids, random_spans_seed());
	if ((tr.spans = open_memstream(&tr.spans_text, &tr.spans_len)) ==
	    NULL)
		fatal("--trace");
	if ((tr.events = open_memstream(&tr.events_text, &tr.events_len)) ==
	    NULL)
		fatal("--trace");
	tracing = 1;
}

/* A new span ID, never all zeros. */
static void
new_span(unsigned char span[8])
{
	uint64_t x;
	int i;

	while ((x = rng_next(&tr.ids)) == 0)
		;
	for (i = 7; i >= 0; i--, x >>= 8)
		span[i] = (unsigned char)(x & 0xff);
}

/* Real time, in ns since the epoch, of mono, a monotonic reading. */
static int64_t
real_of(const struct run *r, int64_t mono)
{
	return r->start_real + (mono - r->start);
}

static void
put_id(FILE *f, const char *key, const unsigned char *b, size_t n)
{
	char hex[33];

	hex_of(hex, b, n);
	fprintf(f, "\"%s\":\"%s\",", key, hex);
}

/* An attribute's key and the opening of its value, after a comma if *n. */
static void
put_key(FILE *f, int *n, const char *key)
{
	fputs(*n > 0 ? ",{\"key\":" : "{\"key\":", f);
	json_string(f, key);
	fputs(",\"value\":{", f);
	(*n)++;
}

static void
attr_string(FILE *f, int *n, const char *key, const char *value)
{
	put_key(f, n, key);
	fputs("\"stringValue\":", f);
	json_string(f, value);
	fputs("}}", f);
}

static void
attr_int(FILE *f, int *n, const char *key, long long value)
{
	put_key(f, n, key);
	fprintf(f, "\"intValue\":\"%lld\"}}", value);
}

/* Seconds, from ns, as OpenTelemetry gives durations. */
static void
attr_seconds(FILE *f, int *n, const char *key, int64_t ns)
{
	put_key(f, n, key);
	fprintf(f, "\"doubleValue\":%.9f}}", (double)ns / 1e9);
}

/* A span's IDs, name, kind and times, up to its attributes. */
static void
open_span(FILE *f, const unsigned char span[8], const unsigned char *parent,
    const char *name, int64_t start, int64_t end)
{
	fputc('{', f);
	put_id(f, "traceId", tr.trace, 16);
	put_id(f, "spanId", span, 8);
	if (parent != NULL)
		put_id(f, "parentSpanId", parent, 8);
	if (tr.state != NULL) {
		fputs("\"traceState\":", f);
		json_string(f, tr.state);
		fputc(',', f);
	}
	fputs("\"name\":", f);
	json_string(f, name);
	fprintf(f, ",\"kind\":%d,\"startTimeUnixNano\":\"%lld\","
	    "\"endTimeUnixNano\":\"%lld\",\"attributes\":[", SPAN_INTERNAL,
	    (long long)start, (long long)end);
}

/* A span's status: ERROR with why, or none (unset) without. */
static void
put_status(FILE *f, const char *error)
{
	if (error == NULL)
		return;
	fprintf(f, ",\"status\":{\"code\":%d,\"message\":", STATUS_ERROR);
	json_string(f, error);
	fputc('}', f);
}

/* The attributes' end, the span's status (ERROR with why, or unset). */
static void
close_span(FILE *f, const char *error)
{
	fputc(']', f);
	put_status(f, error);
	fputc('}', f);
}

/*
 * How the attempt failed, as OpenTelemetry's error.type names a class of
 * errors, or NULL when it did not.
 */
static const char *
error_type(const struct run *r)
{
	if (r->end.error != 0)
		return "cannot_run";
	if (r->timed_out != NOT_TIMED_OUT)
		return "timeout";
	if (r->end.termsig != 0)
		return "signal";
	if (r->status != 0)
		return "exit_status";
	return r->on_hit ? "output" : NULL;
}

/* The ended attempt's span, a child of the run's, written to f. */
static void
put_attempt(FILE *f, const struct policy *p, const struct run *r)
{
	const char *type = error_type(r);
	char name[48], why[256], sig[32];
	int n = 0;

	(void)snprintf(name, sizeof(name), "attempt %ld", r->attempts);
	open_span(f, tr.attempt, tr.run, name, real_of(r, r->began),
	    real_of(r, r->ended));
	attr_int(f, &n, "retry.attempt", r->attempts);
	if (r->attempts > 1)
		attr_int(f, &n, "http.request.resend_count", r->attempts - 1);
	if (r->end.error == 0)
		attr_int(f, &n, "process.exit.code", r->status);
	if (r->end.termsig != 0)
		attr_string(f, &n, "retry.signal",
		    signal_name(sig, sizeof(sig), r->end.termsig));
	if (type != NULL)
		attr_string(f, &n, "error.type", type);
	if (type != NULL && r->end.error == 0 && r->status == 0)
		(void)snprintf(why, sizeof(why), "a line matched --on-output");
	else if (type != NULL)
		(void)say_ending(why, sizeof(why), p, r);
	close_span(f, type != NULL ? why : NULL);
}

/*
 * The ended attempt's span among the first ones, or in the ring of the
 * last ones, where it takes the place of the oldest.
 */
static void
add_attempt(const struct policy *p, const struct run *r)
{
	long at = tr.nlater % LAST_SPANS;
	FILE *f;
	int bad;

	if (tr.nspans < FIRST_SPANS) {
		if (tr.nspans++ > 0)
			fputc(',', tr.spans);
		put_attempt(tr.spans, p, r);
		return;
	}
	tr.nlater++;
	free(tr.last[at]);
	tr.last[at] = NULL;
	if ((f = open_memstream(&tr.last[at], &tr.last_len[at])) == NULL) {
		tr.broken = 1;
		return;
	}
	put_attempt(f, p, r);
	bad = ferror(f);	/* before fclose(): | does not order them */
	if (bad | (fclose(f) == EOF))
		tr.broken = 1;
}

/* Where the next event of the run's span goes, or NULL: none has room. */
static FILE *
next_event(void)
{
	if (tr.nevents >= MAX_EVENTS) {
		tr.dropped_events++;
		return NULL;
	}
	if (tr.nevents++ > 0)
		fputc(',', tr.events);
	return tr.events;
}

/*
 * The wait that began, as an event of the run's span, once its time
 * asleep is known: at the next event of the run.
 */
static void
end_wait(const struct run *r)
{
	FILE *f;
	int n = 0;

	if (!tr.waiting)
		return;
	tr.waiting = 0;
	if ((f = next_event()) == NULL)
		return;
	fprintf(f, "{\"timeUnixNano\":\"%lld\",\"name\":\"retry.wait\","
	    "\"attributes\":[", (long long)tr.wait_at);
	attr_string(f, &n, "retry.wait.reason",
	    report_wait_keys[tr.wait_reason]);
	attr_seconds(f, &n, "retry.wait.delay", tr.wait_delay);
	attr_seconds(f, &n, "retry.wait.slept", r->asleep - tr.asleep_before);
	fputs("]}", f);
}

static void
begin_wait(const struct event *ev)
{
	const struct run *r = ev->run;

	tr.waiting = 1;
	tr.wait_reason = ev->reason;
	tr.wait_at = real_of(r, monotonic_now());
	tr.wait_delay = ev->wait;
	tr.asleep_before = r->asleep;
}

/* The circuit as this run met or made it, an event of the run's span. */
static void
add_change(const struct event *ev)
{
	FILE *f;
	int n = 0;

	if ((f = next_event()) == NULL)
		return;
	fprintf(f, "{\"timeUnixNano\":\"%lld\",\"name\":\"retry.circuit\","
	    "\"attributes\":[", (long long)real_of(ev->run, monotonic_now()));
	attr_string(f, &n, "retry.circuit.name", ev->policy->circuit);
	attr_string(f, &n, "retry.circuit.change",
	    report_change_keys[ev->change]);
	if (ev->change == CIRCUIT_OPENED)
		attr_int(f, &n, "retry.circuit.failures", ev->failures);
	fputs("]}", f);
}

/*
 * An argument of retry's own as the trace shows it: --store's URL (in
 * any spelling of the option) with its password masked, as messages do.
 */
static void
put_arg(FILE *f, const struct policy *p, const char *arg)
{
	char buf[PATH_MAX + URL_SHOWN_MAX];
	size_t n, len;

	if (p->store_text == NULL || (n = strlen(p->store_text)) == 0 ||
	    (len = strlen(arg)) < n || strcmp(arg + len - n,
	    p->store_text) != 0) {
		json_string(f, arg);
		return;
	}
	(void)snprintf(buf, sizeof(buf), "%.*s%s", (int)(len - n), arg,
	    p->store.shown);
	json_string(f, buf);
}

/* The process that made the spans: OpenTelemetry's resource. */
static void
put_resource(FILE *f, const struct policy *p)
{
	char host[256];
	char *const *a;
	int n = 0;

	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';	/* POSIX leaves a cut name unended */
	fputs("{\"resourceSpans\":[{\"resource\":{\"attributes\":[", f);
	attr_string(f, &n, "service.name", tr.service);
	attr_string(f, &n, "host.name", host);
	attr_int(f, &n, "process.pid", (long long)getpid());
	attr_string(f, &n, "process.executable.name", "retry");
	put_key(f, &n, "process.command_args");
	fputs("\"arrayValue\":{\"values\":[", f);
	for (a = p->own_argv; *a != NULL; a++) {
		fputs(a == p->own_argv ? "{\"stringValue\":" :
		    ",{\"stringValue\":", f);
		put_arg(f, p, *a);
		fputc('}', f);
	}
	fputs("]}}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"retry\","
	    "\"version\":\"" VERSION "\"},\"spans\":[", f);
}

/* The run's span, with its events; the attempts' spans follow it. */
static void
put_run(FILE *f, const struct event *ev)
{
	const struct policy *p = ev->policy;
	const struct run *r = ev->run;
	const struct verdict *v = ev->verdict;
	char name[256], sig[32];
	int n = 0;

	(void)snprintf(name, sizeof(name), "retry %s", p->argv[0]);
	open_span(f, tr.run, tr.has_parent ? tr.parent : NULL, name,
	    r->start_real, r->start_real + r->took);
	attr_int(f, &n, "retry.attempts", r->attempts);
	attr_string(f, &n, "retry.outcome", outcome_table[r->why].key);
	if (v->signal != 0)
		attr_string(f, &n, "retry.signal",
		    signal_name(sig, sizeof(sig), v->signal));
	else
		attr_int(f, &n, "process.exit.code", v->status);
	if (r->key != NULL)
		attr_string(f, &n, "retry.idempotency_key", r->key);
	attr_string(f, &n, "retry.run_id", r->run_id);
	if (p->circuit != NULL)
		attr_string(f, &n, "retry.circuit.name", p->circuit);
	if (p->job != NULL)
		attr_string(f, &n, "retry.job", p->job);
	if (tr.nlater > LAST_SPANS)
		attr_int(f, &n, "retry.attempt_spans_dropped",
		    tr.nlater - LAST_SPANS);
	fputc(']', f);
	if (tr.nevents > 0) {	/* fwrite: %.*s would cut 2 GiB short */
		fputs(",\"events\":[", f);
		(void)fwrite(tr.events_text, 1, tr.events_len, f);
		fputc(']', f);
	}
	if (tr.dropped_events > 0)
		fprintf(f, ",\"droppedEventsCount\":%ld", tr.dropped_events);
	put_status(f, v->passed ? NULL : outcome_table[r->why].words);
	fputc('}', f);
}

/* The attempts' spans after the run's: the first ones, then the last. */
static void
put_attempts(FILE *f)
{
	long k, kept = tr.nlater < LAST_SPANS ? tr.nlater : LAST_SPANS;
	long at;

	if (tr.nspans > 0) {	/* fwrite: %.*s would cut 2 GiB short */
		fputc(',', f);
		(void)fwrite(tr.spans_text, 1, tr.spans_len, f);
	}
	for (k = tr.nlater - kept; k < tr.nlater; k++) {
		at = k % LAST_SPANS;
		fputc(',', f);
		(void)fwrite(tr.last[at], 1, tr.last_len[at], f);
		free(tr.last[at]);
		tr.last[at] = NULL;
	}
}

/* The whole line, appended to FILE in one write(2) (outfile.c). */
static void
write_line(const struct event *ev)
{
	FILE *f;
	char *line = NULL;
	size_t len = 0;
	int bad, fd;

	/* A failed fputs() (no memory) would leave a span cut short. */
	bad = tr.broken || ferror(tr.spans) || ferror(tr.events);
	bad |= fclose(tr.spans) == EOF;
	bad |= fclose(tr.events) == EOF;
	if (bad || (f = open_memstream(&line, &len)) == NULL) {
		warning("--trace '%s'", tr.path);	/* the run is over */
		return;
	}
	put_resource(f, ev->policy);
	put_run(f, ev);
	put_attempts(f);
	fputs("]}]}]}\n", f);
	bad = ferror(f);	/* before fclose(): | does not order them */
	if (bad | (fclose(f) == EOF))
		warning("--trace '%s'", tr.path);
	else if ((fd = outfile_append(&tr.out, tr.path, 0600)) == -1)
		warningx("--trace '%s': %s", tr.path, outfile_why(&tr.out));
	else
		outfile_put_whole("--trace", tr.path, fd, line, len);
	free(line);
	free(tr.spans_text);
	free(tr.events_text);
}

/*
 * The listener: the run's context for its hooks, each attempt's for the
 * attempt, spans and events as they end, the line at the end.
 */
void
trace_event(const struct event *ev)
{
	if (!tracing)
		return;
	end_wait(ev->run);
	switch (ev->kind) {
	case RUN_BEGINS:
		export_context(tr.run);
		break;
	case ATTEMPT_STARTS:
		new_span(tr.attempt);
		export_context(tr.attempt);
		break;
	case ATTEMPT_ENDS:
		add_attempt(ev->policy, ev->run);
		export_context(tr.run);
		break;
	case WAIT_BEGINS:
		begin_wait(ev);
		break;
	case CIRCUIT_CHANGES:
		add_change(ev);
		break;
	case RUN_ENDS:
		write_line(ev);
		tracing = 0;
		break;
	}
}
