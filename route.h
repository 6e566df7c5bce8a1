/* SPDX-License-Identifier: ISC */
/*
 * Where a call of the store goes: the URL's server; in a Redis Cluster
 * the node that owns the circuit's slot (-MOVED kept, -ASK followed
 * once); behind Sentinel the primary that the sentinels name, asked again
 * when it turns out a replica, refuses, or is silent.
 */
#ifndef ROUTE_H
#define ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "redis.h"

#define ROUTE_REDIRECTS	5	/* -MOVED and -ASK followed in one call */

struct route {
	struct redis	 conn;
	const struct store_url *url;
	const char	*password;	/* sent, or NULL */
	const char	*auth;		/* REDISCLI_AUTH's: masked too */
	struct url_node	 node;		/* the slot's node, or the primary */
	struct url_node	 peer;		/* conn's: a redirection's "" host */
	int		 known;		/* node holds one: no seeds asked */
	int		 at_node;	/* conn is to it, not to an -ASK's */
	int		 first;		/* the seed or sentinel tried first */
	int		 unwanted_password;	/* see struct redis */
	char		 err[256];	/* why REDIS_FAILED or REDIS_DENIED */
};

void		 route_init(struct route *, const struct store_url *,
		    const char *, const char *);
enum redis_io	 route_call(struct route *, int64_t, int, const char *const [],
		    const size_t [], const struct reply **);
void		 route_close(struct route *);

#endif
