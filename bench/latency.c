/* SPDX-License-Identifier: ISC */
/*
 * latency: the signal benchmark.  Starts a wrapper, waits until its
 * attempt runs or it sleeps between attempts, sends SIGTERM and times
 * how long the wrapper takes to be reaped.
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define SETTLE_NS	5000000LL	/* after ready, so it is in its wait */
#define READY_NS	20000000000LL	/* give up on a trial after this */

static int	 ready(pid_t, const char *, int, long *);
static long	 proc_kb(pid_t, const char *);
static void	 usage(void);

/*
 * usage: latency [-e] [-n trials] -m marker cmd ... [:: cmd ...]
 *
 * Each command runs stamp(1) of this directory with the file marker.  A
 * trial empties marker, starts the command and waits until the attempt
 * has started (a line "S"), or with -e until it has ended (a line "E")
 * and the wrapper has no child left, that is, it sleeps before the next
 * attempt; then 5 ms more.  Then it reads the wrapper's VmHWM and VmRSS,
 * sends SIGTERM and waits.  The commands take turns, trial by trial.
 * Prints "trial index ns status hwm_kb rss_kb child_left" per trial: ns
 * from kill(2) to waitpid(2)'s return (-1: never ready, the wrapper
 * exited by itself or was killed after 20 s), status as $?, and
 * child_left 1 when the attempt outlived the wrapper (it is then killed).
 */
int
main(int argc, char *argv[])
{
	char **cmds[MAXCMDS];
	const char *marker = NULL;
	long trials = 100, t, hwm, rss, child;
	long long t0, t1, since;
	int ch, n, i, fd, status, asleep = 0, left, code;
	pid_t pid, early;

	while ((ch = getopt(argc, argv, "+en:m:")) != -1) {
		switch (ch) {
		case 'e':
			asleep = 1;
			break;
		case 'n':
			trials = strtol(optarg, NULL, 10);
			break;
		case 'm':
			marker = optarg;
			break;
		default:
			usage();
		}
	}
	if (marker == NULL ||
	    (n = split_commands(argv + optind, cmds, MAXCMDS)) == 0)
		usage();
	for (t = 0; t < trials; t++) {
		for (i = 0; i < n; i++) {
			if ((fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC,
			    0644)) == -1 || close(fd) == -1)
				die(marker);
			pid = start_quiet(cmds[i], NULL);
			since = now_ns();
			child = 0;
			early = 0;
			while (!ready(pid, marker, asleep, &child) &&
			    now_ns() - since < READY_NS)
				if ((early = waitpid(pid, &status, WNOHANG)) != 0)
					break;
				else
					sleep_ns(1000000);
			if (early != 0 || now_ns() - since >= READY_NS) {
				/* Never ready: gone by itself, or killed. */
				if (early == 0) {
					(void)kill(pid, SIGKILL);
					(void)waitpid(pid, &status, 0);
				}
				(void)printf("%ld %d -1 %d 0 0 0\n", t, i,
				    WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				    WEXITSTATUS(status));
				continue;
			}
			sleep_ns(SETTLE_NS);
			hwm = proc_kb(pid, "VmHWM:");
			rss = proc_kb(pid, "VmRSS:");
			t0 = now_ns();
			if (kill(pid, SIGTERM) == -1)
				die("kill");
			if (waitpid(pid, &status, 0) == -1)
				die("waitpid");
			t1 = now_ns();
			/* The attempt must not outlive the wrapper. */
			left = child > 0 && kill((pid_t)child, 0) == 0;
			if (left)
				(void)kill((pid_t)child, SIGKILL);
			code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
			    WEXITSTATUS(status);
			(void)printf("%ld %d %lld %d %ld %ld %d\n", t, i,
			    t1 - t0, code, hwm, rss, left);
		}
	}
	if (fflush(stdout) == EOF)
		die("stdout");
	return 0;
}

/*
 * Whether the wrapper pid is where the trial wants it: its attempt
 * started (and *child is set), or with asleep, ended and reaped.
 */
static int
ready(pid_t pid, const char *marker, int asleep, long *child)
{
	char buf[4096], path[64];
	long ppid, attempt, pidc;
	long long ns;
	ssize_t len;
	int fd, seen = 0;
	char *line;

	if ((fd = open(marker, O_RDONLY)) == -1)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (line = buf; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (sscanf(line, "S %ld %ld %lld %ld", &ppid, &attempt, &ns,
		    &pidc) == 4)
			*child = pidc;
		if (*line == (asleep ? 'E' : 'S'))
			seen = 1;
	}
	if (!seen || !asleep)
		return seen;
	/* Asleep: the attempt has been reaped, so no child is left. */
	(void)snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children",
	    (long)pid, (long)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return 1;	/* no such file in this kernel: trust "E" */
	len = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	return len == 0;
}

/* A "Vm...:" figure of /proc/pid/status in kB, or 0. */
static long
proc_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	long kb = 0;
	FILE *fp;

	(void)snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, field, strlen(field)) == 0)
			kb = strtol(line + strlen(field), NULL, 10);
	(void)fclose(fp);
	return kb;
}

static void
usage(void)
{
	(void)fprintf(stderr, "usage: latency [-e] [-n trials] -m marker "
	    "cmd ... [:: cmd ...]\n");
	exit(2);
}
