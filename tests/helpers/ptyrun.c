/* SPDX-License-Identifier: ISC */
/*
 * ptyrun: run a command as the foreground job of a new terminal, the way an
 * interactive shell would, and play a script against it.  For the tests.
 *
 * usage: ptyrun [-b] [-t ms] [step ...] -- command [arg ...]
 *   -b        start the job in the background (it never gets the terminal)
 *   -t ms     give up (SIGKILL the job, exit 99) after ms milliseconds (10000)
 * steps, in order:
 *   -o text   wait until the job's output (since the last -o) contains text
 *   -p ms     pause
 *   -i text   type text; \003 is Ctrl-C, \032 Ctrl-Z, \n a newline
 *   -z        wait until the job stops; report "ptyrun: stopped by SIGTSTP"
 *   -c        continue a stopped job in the foreground, like fg
 *   -k sig    send signal number sig to the job's process group
 * The job's output is copied to stdout; events go to stderr, last of them
 * how long after the last -i the job ended.  The exit
 * status is the job's, or 128+S when signal S killed it.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int	 master = -1;
static pid_t	 job;
static char	 seen[65536];	/* output since the last -o match */
static size_t	 nseen;
static long	 limit_ms = 10000;
static struct timespec	 start;
static long	 typed_at = -1;	/* ms of the last -i */

static void
die(const char *what)
{
	(void)fprintf(stderr, "ptyrun: %s: %s\n", what, strerror(errno));
	if (job > 0)
		(void)kill(-job, SIGKILL);
	exit(99);
}

static void
set_signal(int sig, void (*action)(int))
{
	if (signal(sig, action) == SIG_ERR)
		die("signal");
}

static long
elapsed_ms(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) == -1)
		die("clock_gettime");
	return (now.tv_sec - start.tv_sec) * 1000 +
	    (now.tv_nsec - start.tv_nsec) / 1000000;
}

/* Copies what the job printed to stdout and keeps it for -o; 0 at EOF. */
static int
pump(int timeout_ms)
{
	struct pollfd pfd;
	char buf[4096];
	ssize_t n;
	int r;

	if (elapsed_ms() > limit_ms) {
		(void)fprintf(stderr, "ptyrun: timed out\n");
		(void)kill(-job, SIGKILL);
		exit(99);
	}
	pfd.fd = master;
	pfd.events = POLLIN;
	if ((r = poll(&pfd, 1, timeout_ms)) == -1 && errno != EINTR)
		die("poll");
	if (r <= 0)
		return 1;
	n = read(master, buf, sizeof(buf));
	if (n <= 0)
		return 0;	/* EIO: no process has the terminal open */
	if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout))
		die("stdout");
	if (nseen + (size_t)n >= sizeof(seen))
		nseen = 0;
	memcpy(seen + nseen, buf, (size_t)n);
	nseen += (size_t)n;
	seen[nseen] = '\0';
	return 1;
}

static void
wait_output(const char *text)
{
	char *at;

	while ((at = strstr(seen, text)) == NULL)
		if (!pump(10)) {
			(void)fprintf(stderr, "ptyrun: never saw '%s'\n", text);
			exit(99);
		}
	/* Keep what follows the match for the next -o. */
	at += strlen(text);
	nseen = strlen(at);
	memmove(seen, at, nseen + 1);
}

static void
type(const char *text)
{
	char out[1024];
	size_t n = 0;

	for (; *text != '\0' && n < sizeof(out); text++) {
		if (text[0] == '\\' && text[1] == 'n') {
			out[n++] = '\n';
			text++;
		} else if (text[0] == '\\' && text[1] >= '0' && text[1] <= '7') {
			out[n++] = (char)strtol(text + 1, NULL, 8);
			text += strspn(text + 1, "01234567");
		} else
			out[n++] = *text;
	}
	if (write(master, out, n) != (ssize_t)n)
		die("write");
	typed_at = elapsed_ms();
}

static int
reap(int options)
{
	int status;
	pid_t r;

	while ((r = waitpid(job, &status, options)) == 0)
		if (!pump(10))
			options &= ~WNOHANG;	/* nothing left to read */
	if (r == -1)
		die("waitpid");
	return status;
}

static void
report(int status)
{
	if (WIFSTOPPED(status))
		(void)fprintf(stderr, "ptyrun: stopped by signal %d\n",
		    WSTOPSIG(status));
}

/* The shell's part: the job in its own group, in the foreground or not. */
static void
start_job(char **argv, int background, const char *slave_name)
{
	int slave;

	if (setsid() == -1)
		die("setsid");
	/* The first terminal a session leader opens becomes its own. */
	if ((slave = open(slave_name, O_RDWR)) == -1)
		die(slave_name);
	if ((job = fork()) == -1)
		die("fork");
	if (job == 0) {
		if (setpgid(0, 0) == -1 ||
		    (!background && tcsetpgrp(slave, getpid()) == -1))
			die("setpgid");
		if (dup2(slave, 0) == -1 || dup2(slave, 1) == -1 ||
		    dup2(slave, 2) == -1)
			die("dup2");
		if (slave > 2)
			close(slave);
		set_signal(SIGTTOU, SIG_DFL);
		set_signal(SIGTTIN, SIG_DFL);
		set_signal(SIGTSTP, SIG_DFL);
		execvp(argv[0], argv);
		die(argv[0]);
	}
	(void)setpgid(job, job);	/* races the child's; either wins */
	if (!background && tcsetpgrp(slave, job) == -1 && errno != EPERM)
		die("tcsetpgrp");
	/* Only the job holds the terminal open: its end is our EOF. */
	if (close(slave) == -1)
		die("close");
}

int
main(int argc, char *argv[])
{
	char **cmd;
	int background = 0, ended = 0, i, status = 0, slave;
	pid_t shell;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-b") == 0)
			background = 1;
		else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			limit_ms = strtol(argv[++i], NULL, 10);
	if (i >= argc - 1) {
		(void)fprintf(stderr, "usage: ptyrun [-b] [-t ms] [step ...] -- "
		    "command [arg ...]\n");
		return 99;
	}
	cmd = argv + i + 1;
	if ((master = posix_openpt(O_RDWR | O_NOCTTY)) == -1 ||
	    grantpt(master) == -1 || unlockpt(master) == -1)
		die("posix_openpt");
	/* A shell ignores the job-control signals; so does ours. */
	set_signal(SIGTTOU, SIG_IGN);
	set_signal(SIGTTIN, SIG_IGN);
	set_signal(SIGTSTP, SIG_IGN);
	/* setsid() needs a process that is not a group leader. */
	if ((shell = fork()) == -1)
		die("fork");
	if (shell != 0) {
		if (waitpid(shell, &status, 0) == -1)
			die("waitpid");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &start) == -1)
		die("clock_gettime");
	start_job(cmd, background, ptsname(master));
	for (i = 1; cmd - 1 > argv + i; i++) {
		if (strcmp(argv[i], "-o") == 0)
			wait_output(argv[++i]);
		else if (strcmp(argv[i], "-p") == 0) {
			long until = elapsed_ms() + strtol(argv[++i], NULL, 10);
			while (elapsed_ms() < until)
				pump(5);
		} else if (strcmp(argv[i], "-i") == 0)
			type(argv[++i]);
		else if (strcmp(argv[i], "-z") == 0) {
			status = reap(WUNTRACED | WNOHANG);
			report(status);
			if (!WIFSTOPPED(status)) {
				ended = 1;
				break;
			}
		} else if (strcmp(argv[i], "-c") == 0) {
			/* fg: the terminal to the job, then SIGCONT. */
			if ((slave = open(ptsname(master), O_RDWR)) == -1 ||
			    tcsetpgrp(slave, job) == -1 || close(slave) == -1 ||
			    kill(-job, SIGCONT) == -1)
				die("fg");
		} else if (strcmp(argv[i], "-k") == 0) {
			if (kill(-job, (int)strtol(argv[++i], NULL, 10)) == -1)
				die("kill");
		} else if (strcmp(argv[i], "-t") == 0)
			i++;
	}
	if (!ended)
		status = reap(WNOHANG);
	if (typed_at >= 0)
		(void)fprintf(stderr, "ptyrun: ended %ld ms after the last input\n",
		    elapsed_ms() - typed_at);
	while (pump(10))
		if (elapsed_ms() > limit_ms)
			break;
	if (WIFSIGNALED(status)) {
		(void)fprintf(stderr, "ptyrun: killed by signal %d\n",
		    WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
