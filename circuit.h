/* SPDX-License-Identifier: ISC */
/*
 * The shared state's backend on this machine: a record per NAME in the
 * state directory, changed one step at a time under a lock, each step a
 * function of its own that answers in shared.h's words.
 */
#ifndef CIRCUIT_H
#define CIRCUIT_H

#include <sys/types.h>

#include <fcntl.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "shared.h"

#define HOST_MAX	64	/* bytes of a host's name that a record keeps */
#define PAGE_MIN	4096	/* no system retry runs on has smaller pages */

/* The record of NAME in the state directory, open. */
struct circuit {
	struct shared	 sh;		/* first: what each step says */
	char		 dir_path[PATH_MAX];	/* the state directory */
	int		 dir;		/* it, open */
	int		 lock;		/* .NAME.lock, open; -1: reading only */
	int		 record;	/* the record, open during a step, or -1 */
	off_t		 size;		/* its length when the step read it */
	int		 rewrite;	/* the record read was corrupt */
	int		 missing;	/* reading only: no state directory yet */
	int		 found;		/* the last read found a record */
	char		 host[HOST_MAX + 1];	/* this host's name, or "" */
	const char	*magic;		/* the first line of a record */
	struct group_mark left;		/* an admit step took the probe over:
					 * the group its attempt left here */
	long		 left_by;	/* and the gone process that held it */
};

int		 circuit_open(struct circuit *, const char *, int);
enum circuit_step	 circuit_admit(struct circuit *, const struct admit_ask *,
		    enum admission *, int64_t *);
enum circuit_step	 circuit_probe_group(struct circuit *,
		    const struct group_mark *);
enum circuit_step	 circuit_result(struct circuit *, int,
		    const struct breaker *, double);
enum circuit_step	 circuit_run_ended(struct circuit *, enum run_kind);
const struct flock	*circuit_lock_of(const struct circuit *, int *);
enum circuit_step	 circuit_lock_waited(struct circuit *, enum lock_wait);
enum circuit_step	 circuit_reset(struct circuit *);
enum circuit_step	 circuit_view(struct circuit *, struct circuit_view *);
int		 circuit_print(FILE *, const char *, const struct circuit_view *);
int		 circuit_list(struct circuit *, struct names *);

/* Records of another kind, kept by the same rules (job.c). */
int		 record_open(struct circuit *, const char *, const char *,
		    const char *, int);
enum circuit_step	 record_begin(struct circuit *, char *, size_t, size_t *);
enum circuit_step	 record_end(struct circuit *, const char *);
int		 record_read(struct circuit *, char *, size_t, size_t *);

#endif
