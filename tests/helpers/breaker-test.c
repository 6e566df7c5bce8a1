/* SPDX-License-Identifier: ISC */
/*
 * breaker-test STATE... STEP ARG...: one step of the rules of breaker.c
 * on a state given in words, and what came of it on one line, so that
 * tests/breaker.bats can hold the rules as a table: no file, no store, no
 * clock.  Times are plain numbers (ns).
 *
 * STATE: closed | open | half-open, failures=N, openings=N,
 *   half-open-at=T, budget=N/W, retries=T,T,..., runs=LETTERS,
 *   share=P/LEAST, window=W, firsts=T:N,T:N,..., trip=P/M, marks=BITS
 * STEP: admit now=T [probe] [retry] [ask=N/W | ask=P%/W least=L]
 *       result now=T success|failure [probing] trip=N|P%/M cool=D cap=D
 *         u=X
 *       ended p|r|f
 *       count now=T (the retries within the window)
 *       view now=T (what --circuit-status counts)
 *       flakes
 * Prints "ANSWER changed|unchanged: STATE" (flakes: the counts).
 */
#include "../../compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shared.h"

/* The rules, compiled in whole: one source file, as every helper here. */
#include "../../breaker.c"	/* NOLINT(bugprone-suspicious-include) */

static const char *const state_names[] = { "closed", "open", "half-open" };

static void
usage(const char *what)
{
	fprintf(stderr, "breaker-test: %s\n", what);
	exit(2);
}

/* The number after "key=" in arg, or -1 when arg is not that key. */
static int
number(const char *arg, const char *key, int64_t *v)
{
	size_t len = strlen(key);
	char *end;

	if (strncmp(arg, key, len) != 0 || arg[len] != '=')
		return -1;
	*v = (int64_t)strtoll(arg + len + 1, &end, 10);
	if (*end != '\0' && *end != '/')
		usage(arg);
	return 0;
}

/* "N/W" after key=. */
static int
pair(const char *arg, const char *key, long *n, int64_t *w)
{
	int64_t v;

	if (number(arg, key, &v) == -1)
		return -1;
	*n = (long)v;
	if ((arg = strchr(arg, '/')) == NULL)
		usage("a budget is N/W");
	*w = (int64_t)strtoll(arg + 1, NULL, 10);
	return 0;
}

static void
state_word(struct breaker_state *s, const char *arg)
{
	int64_t v;
	size_t i;
	char *p;

	for (i = 0; i < 3; i++)
		if (strcmp(arg, state_names[i]) == 0) {
			s->state = (enum circuit_state)i;
			return;
		}
	if (number(arg, "failures", &v) == 0)
		s->failures = (long)v;
	else if (number(arg, "openings", &v) == 0)
		s->openings = (long)v;
	else if (number(arg, "half-open-at", &v) == 0)
		s->half_open_at = v;
	else if (pair(arg, "budget", &s->budget, &s->window) == 0)
		return;
	else if (number(arg, "window", &v) == 0)
		s->window = v;
	else if (number(arg, "share", &v) == 0) {
		s->share = (long)v;
		s->least = strtol(strchr(arg, '/') + 1, NULL, 10);
	} else if (number(arg, "trip", &v) == 0) {
		s->ratio = (long)v;
		s->span = strtol(strchr(arg, '/') + 1, NULL, 10);
	} else if (strncmp(arg, "firsts=", 7) == 0)
		for (p = (char *)arg + 7; *p != '\0' && s->nfirsts < FIRSTS_MAX;
		    p += *p == ',') {
			s->first_at[s->nfirsts] = (int64_t)strtoll(p, &p, 10);
			if (*p++ != ':')
				usage("firsts are TIME:COUNT,...");
			s->first_n[s->nfirsts++] = strtol(p, &p, 10);
		}
	else if (strncmp(arg, "marks=", 6) == 0) {
		s->nmarks = strlen(arg + 6);
		if (s->nmarks > MARKS_MAX)
			usage("too many marks");
		memcpy(s->marks, arg + 6, s->nmarks + 1);
	}
	else if (strncmp(arg, "retries=", 8) == 0)
		for (p = (char *)arg + 8; *p != '\0' && s->nretries < BUDGET_MAX;
		    p += *p == ',')
			s->retries[s->nretries++] = (int64_t)strtoll(p, &p, 10);
	else if (strncmp(arg, "runs=", 5) == 0) {
		s->nruns = strlen(arg + 5);
		if (s->nruns > RUNS_MAX)
			usage("too many runs");
		memcpy(s->runs, arg + 5, s->nruns + 1);
	} else
		usage(arg);
}

static void
print_state(const struct breaker_state *s)
{
	size_t i;

	printf("%s failures=%ld openings=%ld", state_names[s->state],
	    s->failures, s->openings);
	if (s->state == OPEN)
		printf(" half-open-at=%lld", (long long)s->half_open_at);
	if (s->budget != 0)
		printf(" budget=%ld/%lld", s->budget, (long long)s->window);
	if (s->share != 0)
		printf(" share=%ld/%ld window=%lld", s->share, s->least,
		    (long long)s->window);
	for (i = 0; i < s->nfirsts; i++)
		printf("%s%lld:%ld", i == 0 ? " firsts=" : ",",
		    (long long)s->first_at[i], s->first_n[i]);
	for (i = 0; i < s->nretries; i++)
		printf("%s%lld", i == 0 ? " retries=" : ",",
		    (long long)s->retries[i]);
	if (s->nruns > 0)
		printf(" runs=%s", s->runs);
	if (s->ratio != 0)
		printf(" trip=%ld/%ld", s->ratio, s->span);
	if (s->nmarks > 0)
		printf(" marks=%s", s->marks);
	printf("\n");
}

/*
 * "ask=N/W", a budget of N retries a window of W, or "ask=P%/W", a share
 * of the first attempts; the other is set to 0.
 */
static int
ask_of(const char *arg, struct admit_ask *a)
{
	char *end;
	long n;

	if (strncmp(arg, "ask=", 4) != 0)
		return -1;
	n = strtol(arg + 4, &end, 10);
	a->budget = *end == '%' ? 0 : n;
	a->share = *end == '%' ? n : 0;
	end += *end == '%';
	if (*end != '/')
		usage("ask=N/W or ask=P%/W");
	a->window = (int64_t)strtoll(end + 1, NULL, 10);
	return 0;
}

static void
admit(struct breaker_state *s, char **argv, int *changed)
{
	struct admit_ask a = { 0, 0, 0, 0, 0 };
	int64_t now = 0, wait, least;
	int probe = 0;
	enum admission v;

	for (; *argv != NULL; argv++)
		if (strcmp(*argv, "probe") == 0)
			probe = 1;
		else if (strcmp(*argv, "retry") == 0)
			a.retry = 1;
		else if (number(*argv, "least", &least) == 0)
			a.least = (long)least;
		else if (number(*argv, "now", &now) == -1 &&
		    ask_of(*argv, &a) == -1)
			usage(*argv);
	/* A backend asks for the probe only when the rules want one. */
	if (probe && !breaker_wants_probe(s, now))
		usage("probe given, but the rules want none");
	v = breaker_admit(s, &a, probe, now, &wait, changed);
	if (v == ADMIT_GO)
		printf("go ");
	else if (v == ADMIT_PROBE)
		printf("probe ");
	else
		printf("%s %lld ", v == ADMIT_WAIT ? "wait" : "budget",
		    (long long)wait);
}

/* "trip=N", or "trip=P%/M". */
static int
trip_of(const char *arg, struct breaker *b)
{
	char *end;
	long n;

	if (strncmp(arg, "trip=", 5) != 0)
		return -1;
	n = strtol(arg + 5, &end, 10);
	if (*end == '\0') {
		b->trip = n;
		return 0;
	}
	if (end[0] != '%' || end[1] != '/')
		usage("trip=N or trip=P%/M");
	b->ratio = n;
	b->span = strtol(end + 2, NULL, 10);
	return 0;
}

static void
result(struct breaker_state *s, char **argv, int *changed)
{
	struct breaker b = { 5, 0, 0, 0, 0 };
	int64_t now = 0;
	long failures;
	int success = -1, probing = 0;
	double u = 0;
	enum turn t;

	for (; *argv != NULL; argv++)
		if (strcmp(*argv, "success") == 0 || strcmp(*argv, "failure") == 0)
			success = **argv == 's';
		else if (strcmp(*argv, "probing") == 0)
			probing = 1;
		else if (strncmp(*argv, "u=", 2) == 0)
			u = strtod(*argv + 2, NULL);
		else if (trip_of(*argv, &b) == 0)
			continue;
		else if (number(*argv, "cool", &b.cool) == -1 &&
		    number(*argv, "cap", &b.cap) == -1 &&
		    number(*argv, "now", &now) == -1)
			usage(*argv);
	if (success == -1)
		usage("result needs success or failure");
	t = breaker_result(s, &b, success, probing, u, now, &failures, changed);
	if (t == TURN_OPENED)
		printf("opened(%ld) ", failures);
	else
		printf("%s ", t == TURN_CLOSED ? "closed" : "none");
}

int
main(int argc, char **argv)
{
	static struct breaker_state s;	/* 8 kB: not on the stack */
	struct circuit_view v;
	int64_t now;
	int i, changed = 0;

	for (i = 1; i < argc && strcmp(argv[i], "admit") != 0 &&
	    strcmp(argv[i], "result") != 0 && strcmp(argv[i], "ended") != 0 &&
	    strcmp(argv[i], "count") != 0 && strcmp(argv[i], "view") != 0 &&
	    strcmp(argv[i], "flakes") != 0;
	    i++)
		state_word(&s, argv[i]);
	if (i == argc)
		usage("no step: admit, result, ended, count, view or flakes");
	if (strcmp(argv[i], "admit") == 0)
		admit(&s, argv + i + 1, &changed);
	else if (strcmp(argv[i], "result") == 0)
		result(&s, argv + i + 1, &changed);
	else if (strcmp(argv[i], "ended") == 0 && i + 1 < argc) {
		breaker_run_ended(&s, (enum run_kind)argv[i + 1][0]);
		changed = 1;
		printf("ended ");
	} else if (strcmp(argv[i], "count") == 0 && i + 1 < argc &&
	    number(argv[i + 1], "now", &now) == 0) {
		memset(&v, 0, sizeof(v));
		breaker_view(&s, now, &v);
		printf("%ld\n", v.retries);
		return 0;
	} else if (strcmp(argv[i], "view") == 0 && i + 1 < argc &&
	    number(argv[i + 1], "now", &now) == 0) {
		memset(&v, 0, sizeof(v));
		breaker_view(&s, now, &v);
		printf("retries=%ld allowed=%ld arrived=%ld seen=%ld failing=%ld\n",
		    v.retries, v.allowed, v.arrived, v.seen, v.failing);
		return 0;
	} else if (strcmp(argv[i], "flakes") == 0) {
		memset(&v, 0, sizeof(v));
		memcpy(v.runs, s.runs, sizeof(v.runs));
		breaker_count_runs(&v);
		printf("at-once=%ld retried=%ld failed=%ld rate=%.3f\n",
		    v.at_once, v.retried, v.failed, v.flake_rate);
		return 0;
	} else
		usage(argv[i]);
	printf("%s: ", changed ? "changed" : "unchanged");
	print_state(&s);
	return 0;
}
