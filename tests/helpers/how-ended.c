/* SPDX-License-Identifier: ISC */
/*
 * how-ended FILE COMMAND [ARG ...]: runs COMMAND, writes its pid to FILE.pid,
 * then writes to FILE how it ended, "exit N" or "signal NAME", and exits
 * with the status a shell would report (128+N for signal N).  It tells a
 * command that died of a signal from one that called exit(128+N).
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "signal-names.h"

/* Writes text and a newline to path, or dies. */
static void
put(const char *path, const char *text)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL || fprintf(f, "%s\n", text) < 0 ||
	    fclose(f) == EOF) {
		(void)fprintf(stderr, "how-ended: %s: %s\n", path,
		    strerror(errno));
		_exit(125);
	}
}

int
main(int argc, char *argv[])
{
	char path[4096], text[64];
	const char *name;
	pid_t pid;
	int status, e;

	if (argc < 3) {
		(void)fprintf(stderr,
		    "usage: how-ended file command [arg ...]\n");
		return 125;
	}
	if ((pid = fork()) == -1) {
		perror("how-ended: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		e = errno;
		(void)fprintf(stderr, "how-ended: %s: %s\n", argv[2],
		    strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	(void)snprintf(path, sizeof(path), "%s.pid", argv[1]);
	(void)snprintf(text, sizeof(text), "%ld", (long)pid);
	put(path, text);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR) {
			perror("how-ended: waitpid");
			return 125;
		}
	if (WIFSIGNALED(status)) {
		if ((name = sig_name(WTERMSIG(status))) != NULL)
			(void)snprintf(text, sizeof(text), "signal %s", name);
		else
			(void)snprintf(text, sizeof(text), "signal %d",
			    WTERMSIG(status));
		put(argv[1], text);
		return 128 + WTERMSIG(status);
	}
	(void)snprintf(text, sizeof(text), "exit %d", WEXITSTATUS(status));
	put(argv[1], text);
	return WEXITSTATUS(status);
}
