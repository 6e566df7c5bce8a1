/* SPDX-License-Identifier: ISC */
/*
 * The circuit and the retry budget of a NAME shared by many hosts through
 * Redis (--store): each step of shared.h is one Lua script run atomically
 * on the server, timed by the server's clock.
 */
#ifndef STORE_H
#define STORE_H

#include <stdint.h>

#include "common.h"
#include "shared.h"

#define STORE_LEASE_MS	3000	/* the probe's lease on the store */
#define STORE_RENEW_NS	INT64_C(1000000000)	/* renewed this often */

void		 store_open(struct shared *, const struct store_url *,
		    int64_t);
enum circuit_step	 store_admit(struct shared *, int64_t,
		    const struct admit_ask *, enum admission *, int64_t *);
enum circuit_step	 store_result(struct shared *, int64_t, int,
		    const struct breaker *, double);
enum circuit_step	 store_run_ended(struct shared *, int64_t,
		    enum run_kind);
enum circuit_step	 store_renew(struct shared *, int64_t);
enum circuit_step	 store_reset(struct shared *);
enum circuit_step	 store_view(struct shared *, struct circuit_view *);
enum circuit_step	 store_list(struct shared *, struct names *);

/* A job's history as the store keeps it: fields of text (job.c's). */
#define JOB_FIELDS	6
struct job_hash {
	const char	*names[JOB_FIELDS];
	char		 field[JOB_FIELDS][24];
	char		 version[24];
};

void		 store_job_open(struct shared *, const struct store_url *,
		    int64_t);
enum circuit_step	 store_job_get(struct shared *, int64_t,
		    struct job_hash *);
enum circuit_step	 store_job_put(struct shared *, int64_t,
		    const struct job_hash *, int *);
enum circuit_step	 store_job_del(struct shared *, int *);

#endif
