/* SPDX-License-Identifier: ISC */
/*
 * grow: the helpers of the growth benchmark (issue 35): a command's wall
 * and CPU time, the floor of N attempts without retry, and lines of text.
 */
#define _DEFAULT_SOURCE		/* wait4(2), for the child's own rusage */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static int	 loop(long, char **);
static int	 lines(long);
static int	 timed(const char *, char **);
static void	 usage(void);

/*
 * usage: grow time [-i input] cmd [arg ...]
 *        grow loop N cmd [arg ...]
 *        grow lines N
 *
 * time runs cmd once, stdin from input (else /dev/null), stdout and
 * stderr on /dev/null, and prints "wall_ns cpu_ns maxrss_kb status":
 * CLOCK_MONOTONIC from before posix_spawnp(3) to after wait4(2), and
 * wait4's rusage, which holds the command and all it waited for (user
 * plus system time; the largest RSS among them).  loop runs cmd N times
 * one after the other with grow's own stdio, as retry runs N attempts
 * with no delay and nothing else: their floor.  lines writes N lines of
 * 64 bytes that none of the bench's patterns match.
 */
int
main(int argc, char *argv[])
{
	const char *input = NULL;
	long n;

	if (argc < 3)
		usage();
	if (strcmp(argv[1], "time") == 0) {
		argv += 2;
		if (strcmp(argv[0], "-i") == 0) {
			if (argv[1] == NULL || argv[2] == NULL)
				usage();
			input = argv[1];
			argv += 2;
		}
		return timed(input, argv);
	}
	if ((n = strtol(argv[2], NULL, 10)) < 0)
		usage();
	if (strcmp(argv[1], "loop") == 0 && argc > 3)
		return loop(n, argv + 3);
	if (strcmp(argv[1], "lines") == 0 && argc == 3)
		return lines(n);
	usage();
	return 2;
}

/* Runs argv once, quietly, and prints its times and peak RSS. */
static int
timed(const char *input, char **argv)
{
	struct rusage ru;
	long long t0, t1, cpu;
	pid_t pid;
	int status;

	t0 = now_ns();
	pid = start_quiet(argv, input);
	while (wait4(pid, &status, 0, &ru) == -1)
		if (errno != EINTR)
			die("wait4");
	t1 = now_ns();
	cpu = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	    1000000000LL + ((long long)ru.ru_utime.tv_usec +
	    ru.ru_stime.tv_usec) * 1000LL;
	if (WIFSIGNALED(status))
		status = 128 + WTERMSIG(status);
	else
		status = WEXITSTATUS(status);
	if (printf("%lld %lld %ld %d\n", t1 - t0, cpu, ru.ru_maxrss,
	    status) < 0 || fflush(stdout) == EOF)
		die("stdout");
	return 0;
}

/* Runs argv n times, one after the other; how each ended is no matter. */
static int
loop(long n, char **argv)
{
	pid_t pid;
	int status, e;

	while (n-- > 0) {
		if ((e = posix_spawnp(&pid, argv[0], NULL, NULL, argv,
		    environ)) != 0) {
			errno = e;
			die(argv[0]);
		}
		while (waitpid(pid, &status, 0) == -1)
			if (errno != EINTR)
				die("waitpid");
	}
	return 0;
}

/* Writes n log lines of 64 bytes to stdout, 1024 of them a write. */
static int
lines(long n)
{
	static const char line[] =
	    "2026-12-07T01:02:03.456789 host app[42]: GET /api/v1/items 200\n";
	static char buf[1024 * (sizeof(line) - 1)];
	size_t i, len = sizeof(line) - 1, k;
	ssize_t w;
	char *p;

	for (i = 0; i < sizeof(buf); i += len)
		memcpy(buf + i, line, len);
	while (n > 0) {
		k = (size_t)(n < 1024 ? n : 1024) * len;
		n -= (long)(k / len);
		for (p = buf; k > 0; p += w, k -= (size_t)w)
			if ((w = write(STDOUT_FILENO, p, k)) == -1) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				die("write");
			}
	}
	return 0;
}

static void
usage(void)
{
	(void)fprintf(stderr, "usage: grow time [-i input] cmd [arg ...]\n"
	    "       grow loop N cmd [arg ...]\n"
	    "       grow lines N\n");
	exit(2);
}
