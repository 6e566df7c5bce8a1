/* SPDX-License-Identifier: ISC */
/*
 * with-signals [-D] [-d SIG] [-i SIG] [-b SIG] [-U] [-s] [--] COMMAND
 * [ARG ...]: sets signal dispositions and the signal mask, then executes
 * COMMAND, in place of GNU env's --default-signal, --ignore-signal and
 * --block-signal and of setsid(1).  In order of the options: -D every
 * signal to its default action, -d SIG one to its default, -i SIG ignored,
 * -b SIG blocked, -U the mask emptied, -s a new session.  Exits 125 on a
 * bad option, 126 or 127 when COMMAND cannot be run.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "signal-names.h"

static void
usage(void)
{
	(void)fprintf(stderr, "usage: with-signals [-DUs] [-d sig] [-i sig] "
	    "[-b sig] [--] command [arg ...]\n");
	_exit(125);
}

static int
parse(const char *s)
{
	int sig = sig_number(s);

	if (sig == 0) {
		(void)fprintf(stderr, "with-signals: %s: unknown signal\n", s);
		_exit(125);
	}
	return sig;
}

static void
set(int sig, void (*action)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = action;
	sigemptyset(&sa.sa_mask);
	/* SIGKILL, SIGSTOP and numbers that are no signal fail: fine for -D. */
	if (sigaction(sig, &sa, NULL) == -1 && action != SIG_DFL) {
		perror("with-signals: sigaction");
		_exit(125);
	}
}

static void
mask(int how, int sig)
{
	sigset_t ss;

	sigemptyset(&ss);
	if (sig != 0)
		sigaddset(&ss, sig);
	if (sigprocmask(how, &ss, NULL) == -1) {
		perror("with-signals: sigprocmask");
		_exit(125);
	}
}

/* Options by hand: getopt() would permute COMMAND's options on glibc. */
int
main(int argc, char *argv[])
{
	const char *arg;
	int c, i, sig;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		c = (unsigned char)argv[i][1];
		if (argv[i][2] != '\0')
			usage();
		arg = strchr("bdi", c) != NULL && i + 1 < argc ? argv[++i] :
		    NULL;
		switch (c) {
		case 'D':
			/* Up to 64 numbers: the real-time signals too. */
			for (sig = 1; sig <= 64; sig++)
				set(sig, SIG_DFL);
			break;
		case 'U':
			mask(SIG_SETMASK, 0);
			break;
		case 's':
			if (setsid() == -1) {
				perror("with-signals: setsid");
				return 125;
			}
			break;
		case 'd':
		case 'i':
		case 'b':
			if (arg == NULL) {
				usage();
				return 125;
			}
			sig = parse(arg);
			if (c == 'b')
				mask(SIG_BLOCK, sig);
			else
				set(sig, c == 'd' ? SIG_DFL : SIG_IGN);
			break;
		default:
			usage();
		}
	}
	if (i >= argc)
		usage();
	execvp(argv[i], argv + i);
	c = errno;
	(void)fprintf(stderr, "with-signals: %s: %s\n", argv[i], strerror(c));
	return c == ENOENT ? 127 : 126;
}
