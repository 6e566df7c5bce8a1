/* SPDX-License-Identifier: ISC */
/*
 * retry's messages: one line each on stderr, "retry: ...", with the bytes
 * that came from elsewhere (argv, keys, file contents) escaped so that no
 * message can ever become two lines or reach the terminal as a control.
 */
#ifndef MSG_H
#define MSG_H

#include <stddef.h>

/* C99 has no _Noreturn; the analyzers and -Wextra want to know. */
#if defined(__GNUC__) || defined(__clang__)
#define NORETURN	__attribute__((__noreturn__))
#else
#define NORETURN
#endif

#define EXIT_OWN_FAILURE 125	/* retry itself failed; nothing more is run */
#define MSGMAX		1024

enum verbosity { QUIET, NORMAL, VERBOSE };

void	 msg_verbosity(enum verbosity);
void	 msg_hold(int);
int	 msg_fd(void);
int	 msg_verbose(void);
void	 say(const char *, ...);		/* hidden by -q */
void	 detail(const char *, ...);		/* shown by -v */
void	 warning(const char *, ...);		/* with errno's text; always */
void	 warningx(const char *, ...);		/* always */
void	 fatal(const char *, ...) NORETURN;	/* with errno's text; exit 125 */
void	 fatalx(const char *, ...) NORETURN;	/* exit 125 */
size_t	 escape(char *, size_t, const char *, size_t);
void	 msg_put(const char *, size_t);		/* as it is; always; never held */
long	 msg_warnings(void);
int	 close_stdout(void);			/* 0, or 125 said */

#endif
