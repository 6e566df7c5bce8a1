/* SPDX-License-Identifier: ISC */
/*
 * herd: the thundering-herd benchmark.  Starts many wrappers at the same
 * instant and makes all their first attempts fail at the same instant.
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define BOUND_NS	120000000000LL	/* a herd that takes longer is killed */

static long	 count_first_attempts(const char *);
static void	 usage(void);

/*
 * usage: herd [-n procs] [-b fd] -m marker -l log cmd [arg ...]
 *
 * Forks procs children that block reading a pipe, then closes its write
 * end: all of them see end of file at once and execute cmd, with stderr
 * in a file log.PID of its own and the read end of a second pipe, the
 * barrier, on descriptor fd (3).  cmd is a wrapper that runs
 * "stamp -f 1 -w fd marker": each first attempt writes its start line
 * to marker and blocks on the barrier.  Once procs first attempts have
 * started, and 100 ms more, herd closes the barrier, so that every first
 * attempt fails in the same instant, and waits for the wrappers.
 * Prints "start ns", "release ns" and "done ns" (CLOCK_MONOTONIC).
 */
int
main(int argc, char *argv[])
{
	const char *marker = NULL, *log = NULL;
	long procs = 200, i, reaped = 0;
	long long start, release, since;
	int ch, fd, bfd = 3, go[2], barrier[2], status;
	pid_t *pids, pid;
	char c, path[PATH_MAX];

	while ((ch = getopt(argc, argv, "+b:l:m:n:")) != -1) {
		switch (ch) {
		case 'b':
			bfd = (int)strtol(optarg, NULL, 10);
			break;
		case 'l':
			log = optarg;
			break;
		case 'm':
			marker = optarg;
			break;
		case 'n':
			procs = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (marker == NULL || log == NULL || optind == argc || procs < 1 ||
	    bfd <= STDERR_FILENO)
		usage();
	if ((fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    close(fd) == -1)
		die(marker);
	if ((pids = calloc((size_t)procs, sizeof(*pids))) == NULL)
		die("calloc");
	if (pipe(go) == -1 || pipe(barrier) == -1)
		die("pipe");
	/* Far above stdio and bfd, so that the dup2()s below cannot clash. */
	if (go[0] < 10 && ((go[0] = fcntl(go[0], F_DUPFD, 10)) == -1))
		die("fcntl");
	if (barrier[0] < 10 &&
	    ((barrier[0] = fcntl(barrier[0], F_DUPFD, 10)) == -1))
		die("fcntl");
	for (i = 0; i < procs; i++) {
		if ((pid = fork()) == -1)
			die("fork");
		if (pid == 0) {
			(void)close(go[1]);
			(void)close(barrier[1]);
			(void)snprintf(path, sizeof(path), "%s.%ld", log,
			    (long)getpid());
			if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC,
			    0644)) == -1 || dup2(fd, STDERR_FILENO) == -1)
				_exit(126);
			if (fd != STDERR_FILENO)
				(void)close(fd);
			if (dup2(barrier[0], bfd) == -1)
				_exit(126);
			while (read(go[0], &c, 1) == -1 && errno == EINTR)
				;
			(void)close(go[0]);
			execvp(argv[optind], argv + optind);
			_exit(127);
		}
		pids[i] = pid;
	}
	(void)close(go[0]);
	(void)close(barrier[0]);
	start = now_ns();
	if (close(go[1]) == -1)
		die("close");
	while (count_first_attempts(marker) < procs &&
	    now_ns() - start < BOUND_NS)
		sleep_ns(5000000);
	sleep_ns(100000000);
	release = now_ns();
	if (close(barrier[1]) == -1)
		die("close");
	since = now_ns();
	while (reaped < procs) {
		if ((pid = waitpid(-1, &status, WNOHANG)) == -1)
			die("waitpid");
		if (pid > 0) {
			reaped++;
			continue;
		}
		if (now_ns() - since > BOUND_NS) {
			(void)fprintf(stderr, "herd: %ld wrappers left after "
			    "the bound; killed\n", procs - reaped);
			for (i = 0; i < procs; i++)
				(void)kill(pids[i], SIGKILL);
			since = now_ns();
		}
		sleep_ns(2000000);
	}
	(void)printf("start %lld\nrelease %lld\ndone %lld\n", start, release,
	    now_ns());
	if (fflush(stdout) == EOF)
		die("stdout");
	return 0;
}

/* How many lines "S ppid 1 ..." marker has: first attempts started. */
static long
count_first_attempts(const char *marker)
{
	char line[256];
	long n = 0, ppid, attempt;
	FILE *fp;

	if ((fp = fopen(marker, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "S %ld %ld", &ppid, &attempt) == 2 &&
		    attempt == 1)
			n++;
	(void)fclose(fp);
	return n;
}

static void
usage(void)
{
	(void)fprintf(stderr, "usage: herd [-n procs] [-b fd] -m marker "
	    "-l log cmd [arg ...]\n");
	exit(2);
}
