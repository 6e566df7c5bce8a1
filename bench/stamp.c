/* SPDX-License-Identifier: ISC */
/*
 * stamp: the command that the benchmarks retry.  It appends a line with
 * its CLOCK_MONOTONIC start time and one with its end time to a file.
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long	 now_ns(void);
static void		 append(int, const char *);
static void		 usage(void);

/*
 * usage: stamp [-f fails] [-s seconds] [-w fd] file
 *
 * Writes "S ppid attempt ns pid" first thing, then "E ppid attempt ns
 * status" just before it exits, each line in one write(2) to a file opened with
 * O_APPEND, so that many processes can share the file.  attempt is
 * $RETRY_ATTEMPT (0 when unset).  Attempts up to fails fail with status 1
 * and, with -w, first wait until fd reads end of file (a barrier that the
 * herd lifts for all at once); -s keeps the attempt running.
 */
int
main(int argc, char *argv[])
{
	char line[128];
	long long start = now_ns(), end;
	const char *env;
	long fails = 0, attempt = 0, hold = 0;
	int ch, fd, barrier = -1, status;
	struct timespec ts;
	ssize_t n;

	while ((ch = getopt(argc, argv, "f:s:w:")) != -1) {
		switch (ch) {
		case 'f':
			fails = strtol(optarg, NULL, 10);
			break;
		case 's':
			hold = strtol(optarg, NULL, 10);
			break;
		case 'w':
			barrier = (int)strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1)
		usage();
	if ((env = getenv("RETRY_ATTEMPT")) != NULL)
		attempt = strtol(env, NULL, 10);
	status = attempt <= fails && fails > 0 ? 1 : 0;
	if ((fd = open(argv[optind], O_WRONLY | O_APPEND | O_CREAT, 0644)) == -1) {
		perror(argv[optind]);
		return 99;
	}
	(void)snprintf(line, sizeof(line), "S %ld %ld %lld %ld\n",
	    (long)getppid(), attempt, start, (long)getpid());
	append(fd, line);
	if (status != 0 && barrier != -1) {
		char c;

		do
			n = read(barrier, &c, 1);
		while (n > 0 || (n == -1 && errno == EINTR));
	}
	/* A bounded hold: a stray attempt never outlives its benchmark long. */
	ts.tv_sec = hold;
	ts.tv_nsec = 0;
	while (hold > 0 && nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	end = now_ns();
	(void)snprintf(line, sizeof(line), "E %ld %ld %lld %d\n",
	    (long)getppid(), attempt, end, status);
	append(fd, line);
	return status;
}

static long long
now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1) {
		perror("clock_gettime");
		exit(99);
	}
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
append(int fd, const char *line)
{
	size_t len = strlen(line);

	if (write(fd, line, len) != (ssize_t)len) {
		perror("stamp: write");
		exit(99);
	}
}

static void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: stamp [-f fails] [-s seconds] [-w fd] file\n");
	exit(99);
}
