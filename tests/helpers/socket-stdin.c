/* SPDX-License-Identifier: ISC */
/*
 * socket-stdin FILE COMMAND [ARG ...]: runs COMMAND with stdin one end of a
 * Unix socket pair, writes FILE to the other end and shuts it down, and
 * exits with the command's status (128+N if signal N killed it).
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int
fail(const char *what)
{
	(void)fprintf(stderr, "socket-stdin: %s: %s\n", what, strerror(errno));
	return 125;
}

int
main(int argc, char *argv[])
{
	char buf[65536];
	ssize_t n, w, off;
	pid_t pid;
	int sv[2], fd, status, e;

	if (argc < 3) {
		(void)fprintf(stderr,
		    "usage: socket-stdin file command [arg ...]\n");
		return 125;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return fail("socketpair");
	if ((pid = fork()) == -1)
		return fail("fork");
	if (pid == 0) {
		if (dup2(sv[1], STDIN_FILENO) == -1)
			_exit(fail("stdin"));
		(void)close(sv[0]);
		(void)close(sv[1]);
		execvp(argv[2], argv + 2);
		e = errno;
		(void)fprintf(stderr, "socket-stdin: %s: %s\n", argv[2],
		    strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	(void)close(sv[1]);
	/* The command may stop reading: its status says what happened. */
	(void)signal(SIGPIPE, SIG_IGN);
	if ((fd = open(argv[1], O_RDONLY)) == -1)
		return fail(argv[1]);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return fail(argv[1]);
		for (off = 0; off < n; off += w)
			if ((w = write(sv[0], buf + off, (size_t)(n - off))) == -1 &&
			    errno != EINTR)
				return fail("write");
			else if (w == -1)
				w = 0;
	}
	if (shutdown(sv[0], SHUT_WR) == -1)
		return fail("shutdown");
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return fail("waitpid");
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
	    WEXITSTATUS(status);
}
