/* SPDX-License-Identifier: ISC */
/*
 * A small client of the Redis protocol (RESP2) over TCP or a Unix socket:
 * one connection, commands as arrays of bulk strings, each reply parsed
 * whole within fixed bounds.  Every wait is a poll on the self-pipe
 * (clock.c), until a time the caller gives, and a signal ends it.
 */
#ifndef REDIS_H
#define REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define REDIS_REPLY_MAX	65536	/* bytes of one reply, at most */
#define REDIS_NODES	256	/* its elements, nested ones included */
#define REDIS_SEND_MAX	16384	/* bytes of one command, at most */

/* How a call went. */
enum redis_io {
	REDIS_DONE,		/* a reply came (it may be an error reply) */
	REDIS_TIMEOUT,		/* until came first */
	REDIS_SIGNAL,		/* a signal came first: sp_caught() has it */
	REDIS_FAILED,		/* no reply to be had: r->err says why */
	REDIS_DENIED		/* AUTH or SELECT refused: r->err says why */
};

enum reply_type {
	REPLY_STATUS, REPLY_ERROR, REPLY_INTEGER, REPLY_BULK, REPLY_NIL,
	REPLY_ARRAY
};

struct reply {
	enum reply_type	 type;
	long long	 integer;
	const char	*str;		/* status, error, bulk: not terminated */
	size_t		 len;
	size_t		 n;		/* array: its elements, */
	const struct reply *elem;	/* the first of them */
};

struct redis {
	int		 fd;		/* -1: not connected */
	size_t		 len;		/* bytes in buf */
	size_t		 used;		/* of which replies already read */
	size_t		 nodes;
	char		 buf[REDIS_REPLY_MAX];
	struct reply	 node[REDIS_NODES];
	char		 err[256];
	int		 unwanted_password;	/* the server has none: AUTH refused */
};

void		 redis_init(struct redis *);
int		 redis_connected(struct redis *);
enum redis_io	 redis_connect(struct redis *, const struct store_url *,
		    const struct url_node *, const char *, int64_t);
enum redis_io	 redis_call(struct redis *, int64_t, int, const char *const [],
		    const size_t [], const struct reply **);
void		 redis_close(struct redis *);
int		 reply_is(const struct reply *, const char *);
int		 reply_says(const struct reply *, const char *);

#endif
