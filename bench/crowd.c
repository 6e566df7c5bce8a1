/* SPDX-License-Identifier: ISC */
/*
 * crowd: many copies of a command started in the same instant, as a
 * crowd of cron jobs would be; timed until the last has ended.
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

static int		 quiet(void);
static long long	 run_crowd(char **, long);
static void		 usage(void);

static long	 failed;	/* copies that did not exit 0, this crowd */

/*
 * usage: crowd [-n copies] [-r rounds] cmd [arg ...] [:: cmd [arg ...]]
 *
 * Each round starts copies of every command in turn, the first one moving
 * by one place each round: copies children block reading a pipe, then
 * its write end closes and all of them execute the command at once, with
 * stdio on /dev/null.  A crowd is timed from that instant to the last
 * waitpid(2) (CLOCK_MONOTONIC).  Prints one line per crowd:
 * "round index ns failed", failed the copies that did not exit 0.
 */
int
main(int argc, char *argv[])
{
	char **cmds[MAXCMDS];
	long copies = 200, rounds = 5, r;
	int ch, n, i, k;
	long long ns;

	while ((ch = getopt(argc, argv, "+n:r:")) != -1) {
		switch (ch) {
		case 'n':
			copies = strtol(optarg, NULL, 10);
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if ((n = split_commands(argv + optind, cmds, MAXCMDS)) == 0 ||
	    copies < 1)
		usage();
	for (r = 0; r < rounds; r++)
		for (k = 0; k < n; k++) {
			i = (int)((r + k) % n);
			ns = run_crowd(cmds[i], copies);
			(void)printf("%ld %d %lld %ld\n", r, i, ns, failed);
		}
	if (fflush(stdout) == EOF)
		die("stdout");
	return 0;
}

/* stdin, stdout and stderr on /dev/null. */
static int
quiet(void)
{
	int fd, i;

	if ((fd = open("/dev/null", O_RDWR)) == -1)
		return -1;
	for (i = 0; i < 3; i++)
		if (fd != i && dup2(fd, i) == -1)
			return -1;
	return fd > 2 ? close(fd) : 0;
}

/* Starts copies of argv at once; returns the ns until the last ended. */
static long long
run_crowd(char **argv, long copies)
{
	int go[2], status;
	long i;
	long long t0;
	char c;
	pid_t pid;

	if (pipe(go) == -1)
		die("pipe");
	for (i = 0; i < copies; i++) {
		if ((pid = fork()) == -1)
			die("fork");
		if (pid > 0)
			continue;
		if (close(go[1]) == -1 || read(go[0], &c, 1) == -1 ||
		    close(go[0]) == -1 || quiet() == -1)
			_exit(125);
		(void)execvp(argv[0], argv);
		_exit(127);
	}
	if (close(go[0]) == -1)
		die("close");
	t0 = now_ns();
	if (close(go[1]) == -1)
		die("close");
	failed = 0;
	for (i = 0; i < copies; i++) {
		if (wait(&status) == -1)
			die("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	return now_ns() - t0;
}

static void
usage(void)
{
	(void)fprintf(stderr, "usage: crowd [-n copies] [-r rounds] cmd "
	    "[arg ...] [:: cmd [arg ...]] ...\n");
	exit(2);
}
