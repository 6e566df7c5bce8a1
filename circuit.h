/*
 * Shared state of the runs that name one downstream (--circuit NAME): a
 * small record per NAME, read, changed and written back under a lock that
 * is held only for that.  The record is per machine; another store could
 * stand behind circuit_update() without the callers noticing.
 */
#ifndef CIRCUIT_H
#define CIRCUIT_H

#include <sys/types.h>

#include <limits.h>
#include <stdint.h>

#define BUDGET_MAX	1000	/* retries a window can count */

enum circuit_state { CLOSED, OPEN, HALF_OPEN };

struct record {
	enum circuit_state state;
	long		 failures;	/* consecutive failed attempts */
	long		 openings;	/* consecutive openings */
	int64_t		 half_open_at;	/* Unix ns, while OPEN */
	pid_t		 probe;		/* the one attempt while HALF_OPEN */
	int64_t		 window;	/* ns, of the last --budget */
	long		 budget;	/* N of the last --budget */
	size_t		 nretries;
	int64_t		 retries[BUDGET_MAX];	/* Unix ns, oldest first */
};

struct circuit {
	char		 path[PATH_MAX];
	int		 fd;
	int		 reported;	/* a corrupt record was reported */
};

enum { ADMIT_GO, ADMIT_PROBE, ADMIT_WAIT };
#define CIRCUIT_BUSY	2	/* the record is locked by another process */

/* May this process start an attempt now? */
struct admission {
	int64_t		 now;		/* Unix ns */
	pid_t		 self;
	int		 verdict;
	int64_t		 wake;		/* ADMIT_WAIT: until then; 0: soon */
};

/* How an attempt ended, and the breaker's settings. */
struct result {
	int64_t		 now;
	pid_t		 self;
	int		 success;
	long		 trip;
	int64_t		 cool, cap;
	double		 u;		/* uniform in [0, 1), for jitter */
};

/* --budget N/window: may this process retry now? */
struct budget {
	int64_t		 now, window;
	long		 n;
	int		 granted;
	int64_t		 free_at;	/* when not granted */
};

/*
 * Each returns -1 with the reason in err, 1 when it found a corrupt
 * record (replaced by a fresh one; said once), CIRCUIT_BUSY when the
 * record is locked (nothing done), 0 otherwise.
 */
int	circuit_valid_name(const char *);
int	circuit_open(struct circuit *, const char *, char *, size_t);
int	circuit_update(struct circuit *, int (*)(struct record *, void *),
	    void *, char *, size_t);
/* The changes, each given to circuit_update() with its argument. */
int	circuit_admit(struct record *, void *);		/* struct admission */
int	circuit_result(struct record *, void *);	/* struct result */
int	circuit_take_retry(struct record *, void *);	/* struct budget */
int	circuit_read(struct record *, void *);		/* struct record */
int	circuit_reset(struct record *, void *);		/* NULL */
const char *circuit_state_name(enum circuit_state);

#endif
