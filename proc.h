/* SPDX-License-Identifier: ISC */
/*
 * Process control: each attempt in a process group of its own, lent the
 * terminal while retry has it, watched until it ends; the signals retry
 * catches; and the one wait in which every part of retry sleeps.
 */
#ifndef PROC_H
#define PROC_H

#include <fcntl.h>
#include <stdint.h>

#include "clock.h"
#include "msg.h"

struct relay;

/* When retry stops an attempt, and how; and what it does meanwhile. */
struct limit {
	int64_t		 at;		/* monotonic ns, or NEVER */
	int		 signal;	/* sent at that time */
	int64_t		 kill_after;	/* then SIGKILL, this much later */
	void		(*tick)(int64_t);	/* or NULL; done by the time given */
	int64_t		 tick_every;	/* ns */
	/* Or NULL: told the attempt's group as it starts, done by the time
	 * given; returns a signal that came meanwhile, or 0. */
	int		(*started)(long, int64_t);
};

/* What came of an attempt: facts only; retry.c decides what they mean. */
struct ending {
	int		 error;		/* it never ran: errno, else 0 */
	int		 status;	/* as the shell's $?: exit or 128 + signal */
	int		 termsig;	/* it died of this signal, or 0 */
	int		 stopped;	/* retry stopped it at the limit */
	int		 keyboard;	/* SIGINT or SIGQUIT, not retry's */
	int		 forwarded_int_quit;	/* retry passed one on */
	int		 signal;	/* a signal retry caught meanwhile, or 0 */
};

/*
 * A process group known by more than its number, which the system gives
 * again once the group is gone: its session, and when its leader started
 * (clock ticks since boot).
 */
struct group_mark {
	long		 pgid;
	long		 sid;
	unsigned long long start;
};

/* What proc_end_group() did. */
struct group_end {
	long		 ended;		/* processes sent SIGKILL */
	long		 left;		/* of them, not gone when it returned */
};

/* How a wait for a lock ended. */
enum lock_wait { LOCK_TAKEN, LOCK_FAILED, LOCK_TIMEOUT, LOCK_SIGNAL };

void		 proc_hold_stdio(void);
void		 proc_init(struct relay *, int64_t);
void		 proc_run(char *const [], const struct limit *, struct ending *);
void		 proc_run_hook(char *const [], int, const struct limit *,
		    struct ending *);
int		 proc_sleep(int64_t);
int		 proc_wait_fd(int, short, int64_t);
enum lock_wait	 proc_lock(int, const struct flock *, int64_t, int *);
void		 proc_drain(void);
int		 proc_mark_group(long, struct group_mark *);
int		 proc_end_group(const struct group_mark *, int64_t,
		    struct group_end *);
void		 proc_die(int) NORETURN;

#endif
