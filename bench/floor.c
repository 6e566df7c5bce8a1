/* SPDX-License-Identifier: ISC */
/*
 * floor: the two-process floor of start-up (issue 11).  The smallest
 * program that starts a command and waits for it, as retry -n1 does.
 */
#include "../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <unistd.h>

/*
 * usage: floor cmd [arg ...]
 *
 * vfork(2) and execvp(3), as retry starts an attempt, then waitpid(2);
 * exits with the command's status.  Nothing else: no signal handling, no
 * terminal, no options.
 */
int
main(int argc, char *argv[])
{
	pid_t pid;
	int status;

	if (argc < 2) {
		(void)fprintf(stderr, "usage: floor cmd [arg ...]\n");
		return 2;
	}
	if ((pid = vfork()) == -1) {	/* NOLINT(clang-analyzer-security.insecureAPI.vfork) */
		perror("vfork");
		return 2;
	}
	if (pid == 0) {
		(void)execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == -1) {
		perror("waitpid");
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
