/* SPDX-License-Identifier: ISC */
/*
 * The clocks: monotonic nanoseconds for every wait and limit, real time
 * for hints and reports; and the caught signals with the self-pipe, that
 * every wait of retry's ends on.  Asks no other part of retry but fd.c.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define NS_PER_SEC	INT64_C(1000000000)
#define NEVER		INT64_MAX	/* a time that never comes */

int		 clock_check(void);
int64_t		 monotonic_now(void);
int64_t		 realtime_now(void);

/* The caught signals and the self-pipe. */
int	 sp_open(const int *, int, int64_t);
int	 sp_is_open(void);
int	 sp_fd(void);
void	 sp_on_signal(int, siginfo_t *, void *);
int	 sp_caught(void);
int	 sp_any_caught(void);
int	 sp_signalled(void);
int	 sp_take_child_changed(void);
int	 sp_continued(void);
void	 sp_forget_continued(void);
int	 sp_pending(void);
void	 sp_take_wake(void);
void	 sp_ticking(int);
int	 sp_poll_one(int, short, int64_t);
int	 sp_may_write(int);
int	 sp_write(int, const char *, size_t, int64_t);

#endif
