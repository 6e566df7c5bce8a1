/* SPDX-License-Identifier: ISC */
/*
 * The command line of retry into a checked policy.  Every problem becomes
 * one line naming the option and the value; the caller prints it.
 */
#include "compat.h"	/* first: the feature macros */

#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "shared.h"	/* BUDGET_MAX */

#define ALERT_AFTER_MAX	1000	/* --alert-after: failed runs in a row */
/* What valid_circuit_name() takes, for a circuit's or a job's name. */
#define NAME_RULE	"letters, digits, '.', '_', '-', not beginning with '.'"

enum {
	OPT_DRY_RUN = 256, OPT_SEED, OPT_ON_OUTPUT, OPT_STOP_ON_OUTPUT,
	OPT_REPORT, OPT_SPLAY, OPT_CIRCUIT, OPT_TRIP, OPT_COOL, OPT_BUDGET,
	OPT_CIRCUIT_STATUS, OPT_CIRCUIT_LIST, OPT_CIRCUIT_RESET, OPT_STORE, OPT_STORE_TIMEOUT,
	OPT_STORE_FAIL, OPT_METRICS, OPT_ON_RETRY, OPT_ON_GIVEUP,
	OPT_ON_SUCCESS, OPT_HOOK_GRACE, OPT_RESET_AFTER, OPT_HINT_FROM_STDERR, OPT_SHARE_STDIN,
	OPT_CI, OPT_MIN_TIME, OPT_BUDGET_MIN, OPT_HTTP_4XX, OPT_ON_START,
	OPT_ON_TOLERATE, OPT_ON_RECOVER, OPT_ALERT_AFTER, OPT_JOB,
	OPT_JOB_STATUS, OPT_JOB_RESET, OPT_ENV_FROM_HOOKS, OPT_TRACE,
	OPT_TRACE_SERVICE, OPT_NOTIFY_PASS
};

/*
 * "+": stop at the first operand; ":": report a missing value apart.
 * d, m, t, u and w are other retry tools' letters, refused (foreign()).
 */
#define OPTSTRING	"+:b:c:D:d:f:hIj:K:k:m:n:Oo:Qqs:T:t:u:Vvw:x:"

const char help_text[] =
    "usage: retry [options] [--] command [arg ...]\n"
    "Run command until it succeeds, waiting longer after each failure.\n"
    "\n"
    "Attempts and time:\n"
    "  -n, --attempts N      attempts in all, 0 for no limit (5; 1 under\n"
    "                        another retry, which retries)\n"
    "  -D, --deadline DUR    give up DUR after the start (no deadline)\n"
    "      --min-time DUR    start no attempt with less than DUR left before\n"
    "                        the deadline\n"
    "  -T, --timeout DUR     stop an attempt that runs longer than DUR\n"
    "  -s, --signal SIG      signal that stops an attempt (TERM)\n"
    "  -k, --kill-after DUR  SIGKILL a stopped attempt still alive after DUR (10s)\n"
    "      --reset-after DUR  count attempts and delays afresh after an attempt\n"
    "                        that ran DUR or longer before it failed\n"
    "Backoff:\n"
    "  -b, --base DUR        first delay step (1s)\n"
    "  -f, --factor X        growth of the step per attempt, at least 1 (2)\n"
    "  -c, --cap DUR         largest delay, also --max-delay (30s)\n"
    "  -j, --jitter MODE     none, full, equal or decorrelated (equal)\n"
    "      --seed N          seed the generator for a reproducible schedule\n"
    "      --splay DUR       wait a random time up to DUR before attempt 1\n"
    "      --hint-from-stderr  also wait as a Retry-After header on stderr says\n"
    "Which failures:\n"
    "  -o, --on CODES        retry these exit statuses (1-124,128-255)\n"
    "  -x, --stop-on CODES   never retry these, even when listed by --on\n"
    "      --on-output RE    also retry when a line of output matches RE\n"
    "      --stop-on-output RE  never retry when a line of output matches RE\n"
    "      --http-4xx MODE   stop or retry on an HTTP 4xx in the hint (stop)\n"
    "  -K, --key TOKEN       idempotency key for every attempt (a new UUID)\n"
    "Breaker and retry budget shared by runs of NAME (retry-circuit(7)):\n"
    "      --circuit NAME --trip N|P%/M --cool DUR --budget N/DUR|P%/DUR\n"
    "      --budget-min N --circuit-list --circuit-status NAME\n"
    "      --circuit-reset NAME --store URL --store-timeout DUR --store-fail MODE\n"
    "Input and output:\n"
    "  -I, --replay-stdin    give every attempt the same standard input, any size\n"
    "      --share-stdin     let each attempt read on where the last one stopped\n"
    "  -O, --buffer-stdout   hold each attempt's output; only the last one's\n"
    "                        goes to stdout, the others' to stderr\n"
    "Messages:\n"
    "  -q, --quiet           print only usage errors and retry's own failures\n"
    "  -Q, --quiet-unless-failed  print nothing if the run succeeds; if it\n"
    "                        fails, each attempt's output and how it ended\n"
    "  -v, --verbose         also print the policy, each delay's origin, a summary\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and exit\n"
    "      --ci FORMAT       fold attempts in a CI log and annotate the run:\n"
    "                        none, github, gitlab or auto (auto)\n"
    "Dry run, files and systemd:\n"
    "      --dry-run         print the delay schedule and exit, running nothing\n"
    "      --report FILE     write a JSON report of the run to FILE (-: stderr)\n"
    "      --metrics FILE    write the run's Prometheus metrics to FILE at its end\n"
    "      --trace FILE      add the run's spans to FILE (OTLP/JSON)\n"
    "      --trace-service NAME  their service.name (retry)\n"
    "      --notify-pass     pass NOTIFY_SOCKET on to attempts and hooks\n"
    "Hooks, each a command for /bin/sh -c:\n"
    "      --on-start CMD    once, before the first attempt\n"
    "      --on-retry CMD    after a failed attempt, before the next\n"
    "      --on-giveup CMD   once, when the run ends without success\n"
    "      --on-success CMD  once, when the run ends with success\n"
    "      --hook-grace DUR  time the end hooks may run past the deadline (10s)\n"
    "      --env-from-hooks MODE  names RETRY_ENV_FILE may set: safe or all (safe)\n"
    "Runs of job NAME that alert at the Nth failure in a row (retry-circuit(7)):\n"
    "      --job NAME --alert-after N --on-tolerate CMD --on-recover CMD\n"
    "      --job-status NAME --job-reset NAME\n"

    "\n"
    "DUR is a number with a unit ms, s, m or h, or several (1m30s); no unit\n"
    "means seconds.  CODES lists exit statuses and ranges, such as 1,75-78.\n"
    "A command killed by signal S has status 128+S.  See retry(1), and\n"
    "retry-formats(5) for the files.\n";

static const struct option longopts[] = {
	{ "alert-after", required_argument,	NULL, OPT_ALERT_AFTER },
	{ "attempts",	required_argument,	NULL, 'n' },
	{ "base",	required_argument,	NULL, 'b' },
	{ "budget",	required_argument,	NULL, OPT_BUDGET },
	{ "budget-min",	required_argument,	NULL, OPT_BUDGET_MIN },
	{ "buffer-stdout", no_argument,		NULL, 'O' },
	{ "cap",	required_argument,	NULL, 'c' },
	{ "ci",		required_argument,	NULL, OPT_CI },
	{ "circuit",	required_argument,	NULL, OPT_CIRCUIT },
	{ "circuit-list", no_argument,		NULL, OPT_CIRCUIT_LIST },
	{ "circuit-reset", required_argument,	NULL, OPT_CIRCUIT_RESET },
	{ "circuit-status", required_argument,	NULL, OPT_CIRCUIT_STATUS },
	{ "cool",	required_argument,	NULL, OPT_COOL },
	{ "deadline",	required_argument,	NULL, 'D' },
	{ "delay",	required_argument,	NULL, 'd' },	/* foreign */
	{ "dry-run",	no_argument,		NULL, OPT_DRY_RUN },
	{ "env-from-hooks", required_argument,	NULL, OPT_ENV_FROM_HOOKS },
	{ "factor",	required_argument,	NULL, 'f' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "hint-from-stderr", no_argument,	NULL, OPT_HINT_FROM_STDERR },
	{ "hook-grace",	required_argument,	NULL, OPT_HOOK_GRACE },
	{ "http-4xx",	required_argument,	NULL, OPT_HTTP_4XX },
	{ "jitter",	required_argument,	NULL, 'j' },
	{ "job",	required_argument,	NULL, OPT_JOB },
	{ "job-reset",	required_argument,	NULL, OPT_JOB_RESET },
	{ "job-status",	required_argument,	NULL, OPT_JOB_STATUS },
	{ "key",	required_argument,	NULL, 'K' },
	{ "kill-after",	required_argument,	NULL, 'k' },
	{ "max-delay",	required_argument,	NULL, 'c' },
	{ "metrics",	required_argument,	NULL, OPT_METRICS },
	{ "min-time",	required_argument,	NULL, OPT_MIN_TIME },
	{ "message",	required_argument,	NULL, 'm' },	/* foreign */
	{ "notify-pass", no_argument,		NULL, OPT_NOTIFY_PASS },
	{ "on",		required_argument,	NULL, 'o' },
	{ "on-giveup",	required_argument,	NULL, OPT_ON_GIVEUP },
	{ "on-output",	required_argument,	NULL, OPT_ON_OUTPUT },
	{ "on-recover",	required_argument,	NULL, OPT_ON_RECOVER },
	{ "on-retry",	required_argument,	NULL, OPT_ON_RETRY },
	{ "on-start",	required_argument,	NULL, OPT_ON_START },
	{ "on-success",	required_argument,	NULL, OPT_ON_SUCCESS },
	{ "on-tolerate", required_argument,	NULL, OPT_ON_TOLERATE },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "quiet-unless-failed", no_argument,	NULL, 'Q' },
	{ "replay-stdin", no_argument,		NULL, 'I' },
	{ "report",	required_argument,	NULL, OPT_REPORT },
	{ "reset-after", required_argument,	NULL, OPT_RESET_AFTER },
	{ "seed",	required_argument,	NULL, OPT_SEED },
	{ "share-stdin", no_argument,		NULL, OPT_SHARE_STDIN },
	{ "signal",	required_argument,	NULL, 's' },
	{ "splay",	required_argument,	NULL, OPT_SPLAY },
	{ "stop-on",	required_argument,	NULL, 'x' },
	{ "stop-on-output", required_argument,	NULL, OPT_STOP_ON_OUTPUT },
	{ "store",	required_argument,	NULL, OPT_STORE },
	{ "store-fail",	required_argument,	NULL, OPT_STORE_FAIL },
	{ "store-timeout", required_argument,	NULL, OPT_STORE_TIMEOUT },
	{ "timeout",	required_argument,	NULL, 'T' },
	{ "times",	required_argument,	NULL, 't' },	/* foreign */
	{ "trace",	required_argument,	NULL, OPT_TRACE },
	{ "trace-service", required_argument,	NULL, OPT_TRACE_SERVICE },
	{ "trip",	required_argument,	NULL, OPT_TRIP },
	{ "until",	required_argument,	NULL, 'u' },	/* foreign */
	{ "verbose",	no_argument,		NULL, 'v' },
	{ "version",	no_argument,		NULL, 'V' },
	{ "while",	required_argument,	NULL, 'w' },	/* foreign */
	{ NULL,		0,			NULL, 0 }
};

/* Writes one line for the caller to print; returns PARSED_ERROR. */
static enum parsed
failure(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* A long value may be cut.  va_start is just above: clang 14's
	 * analyzer misses it here (NOLINTNEXTLINE below says so). */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return PARSED_ERROR;
}

/* "--s": the start of more than one long option; *first, *second: two. */
static int
ambiguous(const char *typed, const char **first, const char **second)
{
	size_t len = strcspn(typed + 2, "="), i, n = 0;

	for (i = 0; longopts[i].name != NULL; i++)
		if (strncmp(longopts[i].name, typed + 2, len) == 0) {
			if (n == 0)
				*first = longopts[i].name;
			else if (n == 1)
				*second = longopts[i].name;
			n++;
		}
	return n > 1;
}

/*
 * How many letters to add, remove, change or swap to make a of length la
 * into b (Damerau-Levenshtein, restricted): for near misses of a long
 * option, such as --atempts.  Names are short: a few rows on the stack.
 */
static size_t
distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), d[3][40], i, j, best, cost;

	if (la >= 39 || lb >= 39)
		return 99;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		d[i % 3][0] = i;
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] != b[j - 1];
			best = d[(i - 1) % 3][j - 1] + cost;
			if (d[(i - 1) % 3][j] + 1 < best)
				best = d[(i - 1) % 3][j] + 1;
			if (d[i % 3][j - 1] + 1 < best)
				best = d[i % 3][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[(i - 2) % 3][j - 2] + 1 < best)
				best = d[(i - 2) % 3][j - 2] + 1;
			d[i % 3][j] = best;
		}
	}
	return d[la % 3][lb];
}

/* The long option nearest to the one typed, when it is a near miss. */
static const char *
near_miss(const char *typed)
{
	size_t len = strcspn(typed + 2, "="), i, d, best = 3;
	const char *name = NULL;

	for (i = 0; longopts[i].name != NULL; i++)
		if ((d = distance(typed + 2, len, longopts[i].name)) < best &&
		    d * 3 <= len) {
			best = d;
			name = longopts[i].name;
		}
	return name;
}

/*
 * curl's words for its own retries, which people bring to retry: what
 * each means here, or NULL for a word that is not one of them.
 */
static const char *
curl_word(const char *name, size_t len)
{
	static const struct {
		const char	*name;
		const char	*here;
	} words[] = {
		{ "retry", "a count of retries in curl: write -n N for "
		    "attempts in all (curl's --retry 3 is -n 4)" },
		{ "retry-delay", "a fixed delay in curl: write -b DUR -f 1 "
		    "-j none" },
		{ "retry-max-time", "curl's limit on its retrying: write -D DUR "
		    "(--deadline)" },
		{ "max-time", "curl's limit on each transfer: write -T DUR "
		    "(--timeout) for each attempt, -D DUR for the whole run" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].name) == len &&
		    strncmp(name, words[i].name, len) == 0)
			return words[i].here;
	return NULL;
}

/*
 * getopt_long found no option or no value; says which, as typed.  A value
 * is missing only at the end, so the last word read is the option; an
 * unknown letter can be inside a bundle, so it is named alone.
 */
static enum parsed
bad_option(int c, const char *typed, char *err, size_t size)
{
	int known = optopt > UCHAR_MAX ||
	    (optopt != 0 && strchr(&OPTSTRING[2], optopt) != NULL);
	int len = (int)strcspn(typed, "=");	/* without its value */
	const char *one = NULL, *two = NULL, *near;

	/* A user who asks for the status of every name. */
	if (c == ':' && strcmp(typed, "--circuit-status") == 0)
		return failure(err, size, "option '%s' needs a value: a NAME "
		    "(--circuit-list lists them)", typed);
	if (c == ':' && strncmp(typed, "--", 2) == 0)
		return failure(err, size, "option '%s' needs a value", typed);
	if (c == ':')
		return failure(err, size, "option '-%c' needs a value", optopt);
	if (optopt == 0 && ambiguous(typed, &one, &two))
		return failure(err, size, "ambiguous option '%.*s': --%s or "
		    "--%s?", len, typed, one, two);
	if (optopt == 0 && (near = curl_word(typed + 2, (size_t)len - 2)) !=
	    NULL)
		return failure(err, size, "unknown option '%.*s': it is %s",
		    len, typed, near);
	if (optopt == 0 && (near = near_miss(typed)) != NULL)
		return failure(err, size, "unknown option '%.*s': did you mean "
		    "--%s?", len, typed, near);
	if (optopt == 0)
		return failure(err, size, "unknown option '%.*s'", len, typed);
	if (known)	/* a long option without value was given one */
		return failure(err, size, "option '%s' takes no value", typed);
	return failure(err, size, "unknown option '-%c'", optopt);
}

/*
 * An extended regular expression, compiled once; a second one for the same
 * option replaces the first.  regerror() gives the reason in its words.
 */
static const char *
compile_pattern(const char *arg, struct pattern *pat)
{
	static char reason[128];
	const char *why;
	int e;

	if (pat->set) {
		regfree(&pat->re);
		pat->set = 0;
	}
	if ((why = check_pattern(arg)) != NULL)
		return why;
	if ((e = regcomp(&pat->re, arg, REG_EXTENDED | REG_NOSUB)) != 0) {
		(void)regerror(e, &pat->re, reason, sizeof(reason));
		return reason;
	}
	pat->text = arg;
	pat->set = 1;
	return NULL;
}

static const char *
positive_duration(const char *arg, int64_t *ns)
{
	const char *why = parse_duration(arg, ns);

	if (why == NULL && *ns == 0)
		why = "must be greater than 0";
	return why;
}

/*
 * "N/M": the whole numbers before and after the slash into n[] and the
 * rest after it into *after; "P%/M" likewise, with *percent set.
 * Returns -1 when there is no slash or the part before is too long.
 */
static int
split_slash(const char *arg, char n[32], const char **after, int *percent)
{
	const char *slash = strchr(arg, '/');
	size_t len;

	if (slash == NULL || (size_t)(slash - arg) >= 32)
		return -1;
	len = (size_t)(slash - arg);
	*percent = len > 0 && arg[len - 1] == '%';
	memcpy(n, arg, len - (size_t)*percent);
	n[len - (size_t)*percent] = '\0';
	*after = slash + 1;
	return 0;
}

/*
 * N/DUR: at most N (1..BUDGET_MAX) retries per window of DUR; P%/DUR: at
 * most P% (1..SHARE_MAX) as many as first attempts in it, plus
 * --budget-min.  The other form's number is set to 0.
 */
static const char *
parse_budget(const char *arg, struct policy *p)
{
	char n[32];
	const char *after;
	long *count = &p->budget, max = BUDGET_MAX;
	int percent;

	p->budget = p->budget_share = 0;
	if (split_slash(arg, n, &after, &percent) == -1)
		return "invalid budget (N/DUR or P%/DUR)";
	if (percent) {
		count = &p->budget_share;
		max = SHARE_MAX;
	}
	if (parse_count(n, max, count) != NULL || *count == 0)
		return percent ? "invalid budget (P%/DUR, P from 1 to 1000)" :
		    "invalid budget (N/DUR, N from 1 to 1000)";
	return positive_duration(after, &p->budget_window) ? percent ?
	    "invalid budget (P%/DUR)" : "invalid budget (N/DUR)" : NULL;
}

/*
 * N: N failures in a row open the circuit; P%/M: at least P% (1..100) of
 * the last M (SPAN_MIN..MARKS_MAX) attempts failed.
 */
static const char *
parse_trip(const char *arg, struct policy *p)
{
	const char *why, *after;
	char n[32];
	int percent;

	p->trip_ratio = p->trip_span = 0;
	if (strpbrk(arg, "%/") == NULL) {
		if ((why = parse_count(arg, INT_MAX, &p->trip)) == NULL &&
		    p->trip == 0)
			why = "must be greater than 0";
		return why;
	}
	if (split_slash(arg, n, &after, &percent) == -1 || !percent ||
	    parse_count(n, 100, &p->trip_ratio) != NULL || p->trip_ratio == 0 ||
	    parse_count(after, MARKS_MAX, &p->trip_span) != NULL ||
	    p->trip_span < SPAN_MIN)
		return "invalid trip (N, or P%/M with P from 1 to 100 and M from "
		    "5 to 100)";
	p->trip = 0;
	return NULL;
}

/* --ci: none, github, gitlab or auto. */
static const char *
parse_ci(const char *arg, enum ci_format *ci)
{
	static const char *const names[] = {
		[CI_AUTO] = "auto", [CI_NONE] = "none", [CI_GITHUB] = "github",
		[CI_GITLAB] = "gitlab",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(arg, names[i]) == 0) {
			*ci = (enum ci_format)i;
			return NULL;
		}
	return "must be none, github, gitlab or auto";
}

/*
 * --ci auto, settled with the policy: the runner's own variable,
 * GITHUB_ACTIONS or GITLAB_CI set to "true", so that a run outside CI
 * never calls ci.c.
 */
static enum ci_format
ci_of_environment(void)
{
	const char *github = getenv("GITHUB_ACTIONS");
	const char *gitlab = getenv("GITLAB_CI");

	if (github != NULL && strcmp(github, "true") == 0)
		return CI_GITHUB;
	if (gitlab != NULL && strcmp(gitlab, "true") == 0)
		return CI_GITLAB;
	return CI_NONE;
}

/* The hook that option c names. */
static enum hook
hook_of(int c)
{
	switch (c) {
	case OPT_ON_RETRY:
		return HOOK_RETRY;
	case OPT_ON_GIVEUP:
		return HOOK_GIVEUP;
	case OPT_ON_START:
		return HOOK_START;
	case OPT_ON_TOLERATE:
		return HOOK_TOLERATE;
	case OPT_ON_RECOVER:
		return HOOK_RECOVER;
	default:
		return HOOK_SUCCESS;
	}
}

/*
 * Stores the value of option c in *p; returns NULL, or why the value is
 * not good.  Repeated --on and --stop-on add up; other options replace.
 */
static const char *
take_value(int c, const char *arg, struct policy *p, struct codes *on)
{
	switch (c) {
	case 'b':
		return positive_duration(arg, &p->base);
	case 'c':
		return parse_duration(arg, &p->cap);
	case 'D':
		return positive_duration(arg, &p->deadline);
	case 'f':
		return parse_factor(arg, &p->factor);
	case 'j':
		return parse_jitter(arg, &p->jitter);
	case 'K':
		p->key = arg;
		return *arg == '\0' ? "must not be empty" : NULL;
	case 'k':
		return parse_duration(arg, &p->kill_after);
	case 'n':
		return parse_count(arg, INT_MAX, &p->attempts) == NULL ? NULL :
		    "invalid number (0 for no limit, or 1 to 2147483647)";
	case 'o':
		return parse_codes(arg, on);
	case 's':
		return parse_signal(arg, &p->signal) ? NULL : "unknown signal";
	case 'T':
		return positive_duration(arg, &p->timeout);
	case 'x':
		return parse_codes(arg, &p->stop_on);
	case OPT_SEED:
		p->seeded = 1;
		return parse_seed(arg, &p->seed);
	case OPT_ON_OUTPUT:
		return compile_pattern(arg, &p->on_output);
	case OPT_STOP_ON_OUTPUT:
		return compile_pattern(arg, &p->stop_output);
	case OPT_REPORT:
		p->report = arg;
		return *arg == '\0' ? "must not be empty" : NULL;
	case OPT_SPLAY:
		return parse_duration(arg, &p->splay);
	case OPT_TRACE:
		p->trace = arg;
		return *arg == '\0' ? "must not be empty" : strcmp(arg, "-") ==
		    0 ? "spans are data, not messages: give a file" : NULL;
	case OPT_TRACE_SERVICE:
		p->trace_service = arg;
		return *arg == '\0' ? "must not be empty" : NULL;
	case OPT_METRICS:
		p->metrics = arg;
		return *arg == '\0' ? "must not be empty" : NULL;
	case OPT_ON_RETRY:
	case OPT_ON_GIVEUP:
	case OPT_ON_SUCCESS:
	case OPT_ON_START:
	case OPT_ON_TOLERATE:
	case OPT_ON_RECOVER:
		p->hooks[hook_of(c)] = arg;
		return arg[strspn(arg, " \t\n")] == '\0' ?
		    "must not be empty (a command for /bin/sh -c)" : NULL;
	case OPT_ENV_FROM_HOOKS:
		p->env_names = strcmp(arg, "all") == 0 ? ENV_NAMES_ALL :
		    ENV_NAMES_SAFE;
		return strcmp(arg, "all") == 0 || strcmp(arg, "safe") == 0 ?
		    NULL : "must be safe or all";
	case OPT_ALERT_AFTER:
		p->alert_given = 1;
		return parse_count(arg, ALERT_AFTER_MAX, &p->alert_after) !=
		    NULL || p->alert_after == 0 ? "invalid number (1 to 1000)" :
		    NULL;
	case OPT_JOB:
	case OPT_JOB_STATUS:
	case OPT_JOB_RESET:
		p->job = arg;
		p->job_command = c == OPT_JOB_STATUS ? JOB_STATUS :
		    c == OPT_JOB_RESET ? JOB_RESET : p->job_command;
		return valid_circuit_name(arg) ? NULL : "invalid name (" NAME_RULE
		    ")";
	case OPT_HOOK_GRACE:
		return parse_duration(arg, &p->hook_grace);
	case OPT_RESET_AFTER:
		return positive_duration(arg, &p->reset_after);
	case OPT_CI:
		return parse_ci(arg, &p->ci);
	case OPT_MIN_TIME:
		return positive_duration(arg, &p->min_time);
	case OPT_HTTP_4XX:
		p->http_4xx_retry = strcmp(arg, "retry") == 0;
		return p->http_4xx_retry || strcmp(arg, "stop") == 0 ? NULL :
		    "must be stop or retry";
	case OPT_CIRCUIT:
	case OPT_CIRCUIT_STATUS:
	case OPT_CIRCUIT_RESET:
		p->circuit = arg;
		p->circuit_command = c == OPT_CIRCUIT_STATUS ? CIRCUIT_STATUS :
		    c == OPT_CIRCUIT_RESET ? CIRCUIT_RESET : p->circuit_command;
		return valid_circuit_name(arg) ? NULL : "invalid name (" NAME_RULE
		    ")";
	case OPT_TRIP:
		p->tunes_circuit = 1;
		return parse_trip(arg, p);
	case OPT_COOL:
		p->tunes_circuit = 1;
		return positive_duration(arg, &p->cool);
	case OPT_BUDGET:
		p->tunes_circuit = 1;
		return parse_budget(arg, p);
	case OPT_BUDGET_MIN:
		p->tunes_circuit = 1;
		p->budget_min_given = 1;
		return parse_count(arg, BUDGET_MAX, &p->budget_min) == NULL ? NULL :
		    "invalid number (0 to 1000)";
	case OPT_STORE:		/* checked at the end: see url_check() */
		p->tunes_store = 1;
		p->store_text = arg;
		return NULL;
	case OPT_STORE_TIMEOUT:
		p->tunes_store = 1;
		return positive_duration(arg, &p->store_timeout);
	case OPT_STORE_FAIL:
		p->tunes_store = 1;
		p->store_closed = strcmp(arg, "closed") == 0;
		return p->store_closed || strcmp(arg, "open") == 0 ? NULL :
		    "must be open or closed";
	}
	return "unexpected option";	/* not reached: getopt knows them all */
}

void
free_policy(struct policy *p)
{
	if (p->on_output.set)
		regfree(&p->on_output.re);
	if (p->stop_output.set)
		regfree(&p->stop_output.re);
	p->on_output.set = p->stop_output.set = 0;
}

static void
set_defaults(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->attempts = 5;
	p->signal = SIGTERM;
	p->kill_after = 10 * NS_PER_SEC;
	p->hook_grace = 10 * NS_PER_SEC;
	p->base = NS_PER_SEC;
	p->factor = 2;
	p->cap = 30 * NS_PER_SEC;
	p->jitter = JITTER_EQUAL;
	p->verbosity = NORMAL;
	p->trip = 5;
	p->budget_min = 3;
	p->cool = 30 * NS_PER_SEC;
	p->store_timeout = NS_PER_SEC / 4;
	p->alert_after = 1;
}

/*
 * Letters and names that other retry tools give other meanings: refused,
 * with what to write here.  Debian's retry 1.0.5: -t and --times, the
 * number of tries; -d and --delay, a fixed delay (a list of them, with
 * commas); -m a message; -u and -w conditions.  recur: -t a timeout, -d a
 * delay.  opt is the option as typed (without its value), arg the value.
 */
static enum parsed
foreign(int c, const char *opt, const char *arg, char *err, size_t size)
{
	char n[32];

	/* "3" as "3s", and of a list "1,2" the first. */
	(void)snprintf(n, sizeof(n), "%.*s%s", (int)strcspn(arg, ","), arg,
	    arg[strspn(arg, "0123456789")] == '\0' ||
	    arg[strspn(arg, "0123456789")] == ',' ? "s" : "");
	switch (c) {
	case 't':
		if (arg[strspn(arg, "0123456789")] != '\0' || *arg == '\0')
			return failure(err, size, "%s is a tries count in other "
			    "retry tools: write --timeout %s for a limit on each "
			    "attempt, or -n N for attempts", opt, arg);
		return failure(err, size, "%s is a tries count in other retry "
		    "tools: write -n %s for attempts or --timeout %s", opt, arg,
		    n);
	case 'd':
		/* No delay at all is refused here: the least is -b 1ms. */
		if (strspn(n, "0.") > 0 && (n[strspn(n, "0.")] == '\0' ||
		    strchr("123456789", n[strspn(n, "0.")]) == NULL))
			return failure(err, size, "%s is a fixed delay in other "
			    "retry tools: write -b 1ms -f 1 -j none for the "
			    "least there is", opt);
		return failure(err, size, "%s is a fixed delay in other retry "
		    "tools: write -b %s -f 1 -j none for one, or --deadline %s "
		    "for a limit on the whole run", opt, n, n);
	case 'm':
		return failure(err, size, "%s is a message in other retry "
		    "tools: retry words its own (-q for less, -v for more)",
		    opt);
	case 'u':
		return failure(err, size, "%s is a condition in other retry "
		    "tools: write -o CODES for the statuses to retry (-o 0: "
		    "until it fails) and -x for those never to retry", opt);
	default:
		return failure(err, size, "%s is a condition in other retry "
		    "tools: write -o CODES for the statuses to retry, as in "
		    "-o 1-255", opt);
	}
}

/*
 * Retries happen in one layer: an attempt of an outer retry, which
 * retries it, makes one attempt, unless -n on its command line says how
 * many (have_n); each layer that retries multiplies the calls downstream.
 * A hook of an outer retry counts as one of its attempts here, as it does
 * for the key: --on-retry runs once per retry of the outer run, and a
 * hook's retry that is meant to retry says so with -n.
 */
static void
settle_nesting(struct policy *p, int have_n)
{
	p->attempts_given = have_n;
	p->outer_attempts = -1;
	if (!(p->nested = under_outer_retry()))
		return;
	p->outer_attempts = outer_attempts();
	if (!have_n)
		p->attempts = 1;
}

/*
 * The job's name, when something keeps its history (--alert-after,
 * --on-tolerate, --on-recover): --job's, else the base name of --metrics
 * less ".prom", as a metrics file is commonly named after its job.  Says
 * what is missing, or NULL.
 */
static const char *
settle_job(struct policy *p)
{
	static char name[256], why[512];
	const char *base = "", *needs;
	size_t len = 0;		/* both set where --metrics is given */

	if (p->hooks[HOOK_TOLERATE] != NULL && !p->alert_given)
		return "--on-tolerate needs --alert-after N: without it, every "
		    "failed run alerts and none is tolerated";
	if (p->job != NULL || (!p->alert_given &&
	    p->hooks[HOOK_RECOVER] == NULL))
		return NULL;
	if (p->metrics != NULL) {
		base = strrchr(p->metrics, '/');
		base = base == NULL ? p->metrics : base + 1;
		len = strlen(base);
		if (len > 5 && strcmp(base + len - 5, ".prom") == 0)
			len -= 5;
		(void)snprintf(name, sizeof(name), "%.*s", (int)len, base);
		if (len < sizeof(name) && valid_circuit_name(name)) {
			p->job = name;
			return NULL;
		}
	}
	needs = p->alert_given ? "--alert-after" : "--on-recover";
	if (p->metrics == NULL)
		(void)snprintf(why, sizeof(why), "%s needs a job name: give "
		    "--job NAME (or --metrics NAME.prom)", needs);
	else
		(void)snprintf(why, sizeof(why), "%s needs a job name, and "
		    "--metrics '%s' names none ('%.*s' is not a name: "
		    NAME_RULE "): give --job NAME", needs, p->metrics, (int)len,
		    base);
	return why;
}

/* The command that replaces a run (--circuit-status, ...), or NULL. */
static const char *
command_of(const struct policy *p)
{
	switch (p->circuit_command) {
	case CIRCUIT_STATUS:
		return "--circuit-status";
	case CIRCUIT_LIST:
		return "--circuit-list";
	case CIRCUIT_RESET:
		return "--circuit-reset";
	case CIRCUIT_RUN:
		break;
	}
	return p->job_command == JOB_STATUS ? "--job-status" :
	    p->job_command == JOB_RESET ? "--job-reset" : NULL;
}

/*
 * A command of a circuit or a job goes alone: no command to run, no run's
 * --circuit or --job (named says one was given), nothing that tunes a
 * job's run.  Says what is wrong, or NULL.
 */
static const char *
command_alone(const struct policy *p, int named, char *buf, size_t size)
{
	const char *cmd = command_of(p);

	if (cmd == NULL)
		return NULL;
	if (*p->argv != NULL)
		(void)snprintf(buf, size, "%s takes no command: give it alone",
		    cmd);
	else if (named)
		(void)snprintf(buf, size, "%s is not a run: give it without "
		    "--circuit and --job", cmd);
	else if (p->alert_given || p->hooks[HOOK_TOLERATE] != NULL ||
	    p->hooks[HOOK_RECOVER] != NULL)
		(void)snprintf(buf, size, "--alert-after, --on-tolerate and "
		    "--on-recover tune a run of a job, not %s", cmd);
	else
		return NULL;
	return buf;
}

/*
 * Fills *p from the command line, or writes into err the one line that
 * names the first bad option and its value.  Options stop at the first
 * operand, so the command's own options are never taken for retry's.
 */
enum parsed
parse_options(int argc, char *argv[], struct policy *p, char *err,
    size_t errsize)
{
	const char *why, *base_arg = NULL, *cap_arg = NULL;
	const char *base_opt = "--base", *cap_opt = "--cap";
	char typed[32];
	struct codes on;
	char why_buf[160];
	int c, longindex, have_on = 0, verbose_letter = 0, have_n = 0;
	int named = 0;

	set_defaults(p);
	memset(&on, 0, sizeof(on));
	opterr = 0;
	optind = 0;	/* glibc: start afresh, also on a second call */
	while (longindex = -1, (c = getopt_long(argc, argv, OPTSTRING,
	    longopts, &longindex)) != -1) {
		switch (c) {
		case 'h':
			return PARSED_HELP;
		case 'V':
			return PARSED_VERSION;
		case 'q':
			p->verbosity = QUIET;
			continue;
		case 'Q':
			p->quiet_unless_failed = 1;
			continue;
		case 'v':
			p->verbosity = VERBOSE;
			verbose_letter |= longindex < 0;
			continue;
		case OPT_DRY_RUN:
			p->dry_run = 1;
			continue;
		case 'I':
			p->replay_stdin = 1;
			continue;
		case OPT_HINT_FROM_STDERR:
			p->hint_from_stderr = 1;
			continue;
		case OPT_SHARE_STDIN:
			p->share_stdin = 1;
			continue;
		case OPT_NOTIFY_PASS:
			p->notify_pass = 1;
			continue;
		case 'O':
			p->buffer_stdout = 1;
			continue;
		case OPT_CIRCUIT_LIST:
			p->circuit = NULL;
			p->circuit_command = CIRCUIT_LIST;
			continue;
		case 'd':
		case 'm':
		case 't':
		case 'u':
		case 'w':
			if (longindex >= 0)
				(void)snprintf(typed, sizeof(typed), "--%s",
				    longopts[longindex].name);
			else
				(void)snprintf(typed, sizeof(typed), "-%c", c);
			return foreign(c, typed, optarg, err, errsize);
		case ':':
		case '?':
			/*
			 * After a value missing at the end, musl leaves optind
			 * at argc + 1 (POSIX allows it): the word read last is
			 * then argv[argc - 1], not argv[argc], a null pointer.
			 */
			return bad_option(c, argv[optind > argc ? argc - 1 :
			    optind - 1], err, errsize);
		}
		if ((why = take_value(c, optarg, p, &on)) != NULL) {
			if (longindex >= 0)
				return failure(err, errsize, "--%s '%s': %s",
				    longopts[longindex].name, optarg, why);
			return failure(err, errsize, "-%c '%s': %s", c, optarg,
			    why);
		}
		named |= c == OPT_CIRCUIT || c == OPT_JOB;
		if (c == 'b') {
			base_arg = optarg;
			base_opt = longindex < 0 ? "-b" : "--base";
		}
		else if (c == 'c') {
			cap_arg = optarg;
			cap_opt = longindex < 0 ? "-c" :
			    longopts[longindex].name[0] == 'm' ? "--max-delay" :
			    "--cap";
		}
		else if (c == 'o')
			have_on = 1;
		else if (c == 'n')
			have_n = 1;
	}
	p->argv = argv + optind;
	p->own_argv = argv;
	if (p->quiet_unless_failed && p->buffer_stdout)
		return failure(err, errsize, "-Q and -O both hold the output: "
		    "choose one (-Q shows it only when the run fails)");
	if (p->cap < p->base && cap_arg == NULL)
		return failure(err, errsize, "%s '%s' is above the default "
		    "--cap '30s'", base_opt, base_arg);
	if (p->cap < p->base)
		return failure(err, errsize, "%s '%s' is below %s '%s'",
		    cap_opt, cap_arg, base_opt, base_arg ? base_arg : "1s");
	/* 125 is retry's own failure: an inner retry's usage error is not
	 * to be run again; 126 and 127, nothing ran. */
	if (!have_on)
		(void)parse_codes("1-124,128-255", &on);
	p->on = on;
	if (p->replay_stdin && p->share_stdin)
		return failure(err, errsize, "--replay-stdin and --share-stdin "
		    "exclude each other: replay the input, or let attempts read "
		    "on");
	if (p->tunes_circuit &&
	    (p->circuit == NULL || p->circuit_command != CIRCUIT_RUN))
		return failure(err, errsize, "--trip, --cool, --budget and "
		    "--budget-min need --circuit");
	if (p->budget_min_given && p->budget_share == 0)
		return failure(err, errsize, "--budget-min needs --budget "
		    "P%%/DUR: a floor of retries for a budget in proportion to "
		    "the first attempts");
	/* Its message shows the URL with its password masked. */
	if (p->store_text != NULL && url_check("--store", p->store_text,
	    &p->store, err, errsize) == -1)
		return PARSED_ERROR;
	if (p->circuit_command != CIRCUIT_RUN && p->job_command != JOB_RUN)
		return failure(err, errsize, "--job-status and --job-reset go "
		    "alone, not with --circuit-status, --circuit-list or "
		    "--circuit-reset: give one");
	if ((why = command_alone(p, named, why_buf, sizeof(why_buf))) != NULL ||
	    (why = settle_job(p)) != NULL)
		return failure(err, errsize, "%s", why);
	if (p->tunes_store && p->circuit == NULL && p->job == NULL &&
	    p->circuit_command != CIRCUIT_LIST)
		return failure(err, errsize, "--store, --store-timeout and "
		    "--store-fail need --circuit, --job or one of their "
		    "commands");
	if ((p->trace != NULL || p->trace_service != NULL) &&
	    command_of(p) != NULL)
		return failure(err, errsize, "--trace and --trace-service go "
		    "with a run, not %s", command_of(p));
	if (p->trace_service != NULL && p->trace == NULL)
		return failure(err, errsize, "--trace-service needs --trace "
		    "FILE");
	if (p->report != NULL && p->circuit_command == CIRCUIT_LIST)
		return failure(err, errsize, "--report goes with a run or "
		    "--circuit-status, not --circuit-list");
	if (p->report != NULL && p->job_command == JOB_RESET)
		return failure(err, errsize, "--report goes with a run or "
		    "--job-status, not --job-reset");
	if (*p->argv == NULL && !p->dry_run &&
	    p->circuit_command == CIRCUIT_RUN && p->job_command == JOB_RUN &&
	    verbose_letter)
		return failure(err, errsize, "no command given (-v is --verbose "
		    "here: the version is -V)");
	if (*p->argv == NULL && !p->dry_run &&
	    p->circuit_command == CIRCUIT_RUN && p->job_command == JOB_RUN)
		return failure(err, errsize, "no command given: write retry "
		    "[options] -- command [arg ...]");
	if (p->ci == CI_AUTO)
		p->ci = ci_of_environment();
	settle_nesting(p, have_n);
	if (p->min_time != 0 && p->deadline == 0 && !p->nested &&
	    !deadline_inherited())
		return failure(err, errsize, "--min-time needs a deadline: give "
		    "-D DUR (or run under a retry that has one)");
	return PARSED_RUN;
}
