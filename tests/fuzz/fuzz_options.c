/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the whole option parser on an argv made of the input's
 * lines, and for an accepted policy the schedule a dry run would print:
 * every delay in [0, cap], never NaN.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common.h"

#define MAXARGS		64
#define MAXDELAYS	2000

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_schedule(const struct policy *p)
{
	struct backoff b;
	struct rng r;
	struct step st;
	int64_t d;
	long i;

	rng_seed(&r, p->seed);
	backoff_init(&b, p->base, p->factor, p->cap, p->jitter);
	for (i = 0; i < MAXDELAYS && (p->attempts == 0 || i < p->attempts);
	    i++) {
		d = backoff_next(&b, &r, &st);
		if (d < 0 || d > p->cap || st.lo > st.hi || isnan(b.prev))
			abort();
	}
}

/*
 * Patterns for --on-output and --stop-on-output go to the C library's
 * regcomp(), whose memory for runs of repetition operators grows without
 * bound (glibc: 2 GB for 150 '+' in a row).  That is libc's, not ours to
 * fuzz: such an option becomes --dry-run, a flag that changes nothing.
 */
static int
names_pattern_option(const char *arg)
{
	size_t len = strcspn(arg, "=");

	if (strncmp(arg, "--", 2) != 0)
		return 0;
	return (len > strlen("--on") && strncmp(arg, "--on-output", len) == 0) ||
	    (len > strlen("--stop-on") &&
	    strncmp(arg, "--stop-on-output", len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAXARGS + 2], *s = malloc(size + 1), *line, err[1024];
	struct policy p;
	int argc = 0, i;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	argv[argc++] = "retry";
	for (line = s; argc <= MAXARGS; line++) {
		argv[argc++] = line;
		if ((line = strchr(line, '\n')) == NULL)
			break;
		*line = '\0';
	}
	argv[argc] = NULL;
	for (i = 1; i < argc; i++)
		if (names_pattern_option(argv[i]))
			argv[i] = "--dry-run";
	err[0] = '\0';
	switch (parse_options(argc, argv, &p, err, sizeof(err))) {
	case PARSED_RUN:
		if (p.base <= 0 || p.cap < p.base || !(p.factor >= 1))
			abort();
		check_schedule(&p);
		break;
	case PARSED_ERROR:
		/* One line, naming the problem. */
		if (err[0] == '\0' || strchr(err, '\n') != NULL)
			abort();
		break;
	default:
		break;
	}
	free_policy(&p);
	free(s);
	return 0;
}
