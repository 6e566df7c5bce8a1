/* SPDX-License-Identifier: ISC */
/*
 * The signals retry has caught, and the self-pipe that wakes every wait
 * when one comes.  A leaf below the messages and process control, so that
 * both may ask it without asking each other.
 */
#ifndef SELFPIPE_H
#define SELFPIPE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

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
