/*
 * Helpers shared by the benchmark drivers (see bench.h).
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

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
 * Forks and executes argv with stdin from input (NULL: /dev/null) and
 * stdout and stderr on /dev/null.  A failed exec exits 127 in the child.
 */
pid_t
start_quiet(char **argv, const char *input)
{
	pid_t pid;
	int null, in;

	if ((pid = fork()) == -1)
		die("fork");
	if (pid != 0)
		return pid;
	if ((null = open("/dev/null", O_RDWR)) == -1 ||
	    (in = input == NULL ? null : open(input, O_RDONLY)) == -1 ||
	    dup2(in, STDIN_FILENO) == -1 || dup2(null, STDOUT_FILENO) == -1 ||
	    dup2(null, STDERR_FILENO) == -1)
		_exit(126);
	if (in > STDERR_FILENO && in != null)
		(void)close(in);
	if (null > STDERR_FILENO)
		(void)close(null);
	execvp(argv[0], argv);
	_exit(127);
}

void
die(const char *what)
{
	perror(what);
	exit(2);
}
