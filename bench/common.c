/* SPDX-License-Identifier: ISC */
/*
 * Helpers shared by the benchmark drivers (see bench.h).
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

long long
now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		die("clock_gettime");
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeps ns nanoseconds, the whole of them even when interrupted. */
void
sleep_ns(long long ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * Splits argv (NULL-terminated) at each "::" into up to max commands,
 * overwriting the separators with NULL.  Returns how many there are.
 */
int
split_commands(char **argv, char **cmds[], int max)
{
	int n = 0;

	if (argv[0] == NULL)
		return 0;
	cmds[n++] = argv;
	for (; *argv != NULL; argv++)
		if (strcmp(*argv, "::") == 0) {
			*argv = NULL;
			if (n == max || argv[1] == NULL) {
				(void)fprintf(stderr, "too many or empty commands\n");
				exit(2);
			}
			cmds[n++] = argv + 1;
		}
	return n;
}

/*
 * Starts argv with stdin from input (NULL: /dev/null) and stdout and
 * stderr on /dev/null, by posix_spawnp(): the cheapest start there is,
 * so that the harness adds as little as it can to what it times, and
 * what retry itself uses when there is no terminal.
 */
pid_t
start_quiet(char **argv, const char *input)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;	/* die() does not return, which clang cannot see */
	int e;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0 ||
	    (e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO,
	    input == NULL ? "/dev/null" : input, O_RDONLY, 0)) != 0 ||
	    (e = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO,
	    "/dev/null", O_WRONLY, 0)) != 0 ||
	    (e = posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO,
	    STDERR_FILENO)) != 0 ||
	    (e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)) != 0 ||
	    (e = posix_spawn_file_actions_destroy(&fa)) != 0) {
		errno = e;
		die(argv[0]);
	}
	return pid;
}

void
die(const char *what)
{
	perror(what);
	exit(2);
}
