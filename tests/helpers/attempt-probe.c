/* SPDX-License-Identifier: ISC */
/*
 * attempt-probe BYTES FILE MARKS: an attempt that writes BYTES bytes to
 * stdout and fails; when RETRY_ATTEMPT is one of MARKS (a comma list), it
 * first appends "attempt ns hwm_kb rss_kb" to FILE: the monotonic clock
 * and its parent's (retry's) VmHWM and VmRSS from /proc, to see how the
 * costs of a run grow with its attempts.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The value in kB of the line "key:" of a /proc status file, or -1. */
static long
status_kb(FILE *f, const char *key)
{
	char line[256];
	size_t n = strlen(key);

	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			return strtol(line + n + 1, NULL, 10);
	return -1;
}

/* Whether attempt is one of the comma list marks. */
static int
marked(const char *marks, long attempt)
{
	const char *p = marks;
	char *end;

	while (*p != '\0') {
		if (strtol(p, &end, 10) == attempt && end != p)
			return 1;
		if (end == p || *end != ',')
			return 0;
		p = end + 1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	static char buf[8192];
	struct timespec ts;
	const char *a;
	char path[64];
	FILE *st, *out;
	long bytes, attempt, hwm = -1, rss = -1;
	size_t n;
	int i;

	if (argc != 4 || (bytes = strtol(argv[1], NULL, 10)) < 0) {
		(void)fprintf(stderr, "usage: attempt-probe BYTES FILE MARKS\n");
		return 125;
	}
	a = getenv("RETRY_ATTEMPT");
	attempt = a != NULL ? strtol(a, NULL, 10) : 0;
	if (marked(argv[3], attempt)) {
		(void)clock_gettime(CLOCK_MONOTONIC, &ts);
		(void)snprintf(path, sizeof(path), "/proc/%ld/status",
		    (long)getppid());
		if ((st = fopen(path, "r")) != NULL) {
			hwm = status_kb(st, "VmHWM");
			rss = status_kb(st, "VmRSS");
			(void)fclose(st);
		}
		if ((out = fopen(argv[2], "a")) == NULL ||
		    fprintf(out, "%ld %lld %ld %ld\n", attempt,
		    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, hwm,
		    rss) < 0 || fclose(out) == EOF) {
			(void)fprintf(stderr, "attempt-probe: %s: %s\n",
			    argv[2], strerror(errno));
			return 125;
		}
	}
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (i % 64 == 63) ? '\n' : 'x';
	while (bytes > 0) {
		n = (size_t)bytes < sizeof(buf) ? (size_t)bytes : sizeof(buf);
		if (write(STDOUT_FILENO, buf, n) != (ssize_t)n)
			return 125;
		bytes -= (long)n;
	}
	return 1;
}
