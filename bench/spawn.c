/* SPDX-License-Identifier: ISC */
/*
 * spawn: the overhead benchmark.  Runs several commands in interleaved
 * rounds and prints, for each run, its wall time and peak RSS.
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
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static void	 usage(void);

/*
 * usage: spawn [-T] [-d delay] [-i input] [-r rounds] [-w warmup] cmd
 *     [arg ...] [:: cmd [arg ...]] ...
 *
 * Each round runs every command once, the first one moving by one place
 * each round, so that none is always first after the machine was idle.
 * A run is timed from before posix_spawnp(3) to after wait4(2) returned,
 * on CLOCK_MONOTONIC, with stdio on /dev/null but stdin read from input
 * when given; with -T, with spawn's own stdio (a terminal, under ptyrun).  With -d, it sleeps delay ns after each run, until an
 * absolute deadline: the smallest loop that does what retry does.  Prints
 * one line per run:
 * "round index ns maxrss_kb minflt status" (warm-up rounds are not
 * printed): maxrss and minflt are wait4's ru_maxrss (the peak of the
 * process and of what it waited for) and ru_minflt (the page faults of
 * both), and status is the shell's $?.
 */
int
main(int argc, char *argv[])
{
	char **cmds[MAXCMDS];
	struct rusage ru;
	const char *input = NULL;
	struct timespec until;
	long rounds = 100, warmup = 5, r;
	long long t0, t1, delay = 0;
	int ch, n, i, k, status, keep = 0, e;
	pid_t pid;

	while ((ch = getopt(argc, argv, "+Td:i:r:w:")) != -1) {
		switch (ch) {
		case 'T':
			keep = 1;
			break;
		case 'd':
			delay = strtoll(optarg, NULL, 10);
			break;
		case 'i':
			input = optarg;
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 'w':
			warmup = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if ((n = split_commands(argv + optind, cmds, MAXCMDS)) == 0)
		usage();
	for (r = -warmup; r < rounds; r++) {
		for (k = 0; k < n; k++) {
			i = (int)((r + warmup + k) % n);
			t0 = now_ns();
			if (!keep)
				pid = start_quiet(cmds[i], input);
			else if ((e = posix_spawnp(&pid, cmds[i][0], NULL, NULL,
			    cmds[i], environ)) != 0) {
				errno = e;
				die(cmds[i][0]);
			}
			if (wait4(pid, &status, 0, &ru) == -1)
				die("wait4");
			t1 = now_ns();
			if (delay > 0) {
				until.tv_sec = (time_t)((t1 + delay) / 1000000000LL);
				until.tv_nsec = (long)((t1 + delay) % 1000000000LL);
				while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
				    &until, NULL) == EINTR)
					;
			}
			if (r < 0)
				continue;
			(void)printf("%ld %d %lld %ld %ld %d\n", r, i, t1 - t0,
			    ru.ru_maxrss, ru.ru_minflt, WIFSIGNALED(status) ?
			    128 + WTERMSIG(status) : WEXITSTATUS(status));
		}
	}
	if (fflush(stdout) == EOF)
		die("stdout");
	return 0;
}

static void
usage(void)
{
	(void)fprintf(stderr, "usage: spawn [-T] [-d delay] [-i input] "
	    "[-r rounds] [-w warmup] cmd [arg ...] [:: cmd [arg ...]] ...\n");
	exit(2);
}
