/* SPDX-License-Identifier: ISC */
/*
 * signal-names.h: turns signal numbers into names and back for how-ended
 * and with-signals.  Names without "SIG", as perl's and the shells' kill -l
 * spell them; the ones POSIX does not require only where the platform has
 * them.
 */
#ifndef SIGNAL_NAMES_H
#define SIGNAL_NAMES_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char	*name;
	int		 number;
} signames[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "SYS", SIGSYS },
#ifdef SIGWINCH
	{ "WINCH", SIGWINCH },
#endif
#ifdef SIGIO
	{ "IO", SIGIO },
#elif defined(SIGPOLL)
	{ "POLL", SIGPOLL },
#endif
#ifdef SIGPWR
	{ "PWR", SIGPWR },
#endif
};
#define NSIGNAMES	(sizeof(signames) / sizeof(signames[0]))

/* The name of sig, or NULL. */
static inline const char *
sig_name(int sig)
{
	size_t i;

	for (i = 0; i < NSIGNAMES; i++)
		if (signames[i].number == sig)
			return signames[i].name;
	return NULL;
}

/* A name, with or without SIG, or a number; 0 if neither. */
static inline int
sig_number(const char *s)
{
	char *end;
	long n;
	size_t i;

	n = strtol(s, &end, 10);
	if (end != s && *end == '\0')
		return n > 0 && n < 256 ? (int)n : 0;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < NSIGNAMES; i++)
		if (strcasecmp(s, signames[i].name) == 0)
			return signames[i].number;
	return 0;
}

#endif
