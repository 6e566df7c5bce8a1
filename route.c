/* SPDX-License-Identifier: ISC */
/*
 * The server of each call of the store: found, and found again, under
 * the one RESP connection of redis.c.  Cluster redirections and Sentinel
 * answers are server text: checked before use, masked before shown.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "redis.h"
#include "route.h"

#define TRYAGAIN_NS	10000000	/* a slot half moved: again in 10 ms */

static enum redis_io
route_failed(struct route *rt, enum redis_io io, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(rt->err, sizeof(rt->err), fmt, ap);
	va_end(ap);
	return io;
}

/* Server text for a message: one line, the password masked. */
static const char *
hidden(const struct route *rt, char *out, size_t size, const char *s,
    size_t len)
{
	size_t i;

	url_hide(out, size, s, len, rt->password, rt->auth);
	for (i = 0; out[i] != '\0'; i++)
		if ((unsigned char)out[i] < ' ' || out[i] == 0x7f)
			out[i] = '?';
	return out;
}

void
route_init(struct route *rt, const struct store_url *u, const char *password,
    const char *auth)
{
	memset(rt, 0, sizeof(*rt));
	redis_init(&rt->conn);
	rt->url = u;
	rt->password = password;
	rt->auth = auth;
}

void
route_close(struct route *rt)
{
	redis_close(&rt->conn);
	rt->at_node = 0;
}

/* ---- Whom to ask ------------------------------------------------------ */

/*
 * HOST:PORT at s[0..len) into *n, as a redirection or a Sentinel names a
 * server: an IPv6 address without brackets, the port after the last ':';
 * an empty host (or "?", an endpoint the node does not know) is from's.
 */
static int
node_at(struct url_node *n, const char *s, size_t len,
    const struct url_node *from)
{
	const char *colon = NULL;
	size_t i, h;
	long port = 0;

	for (i = 0; i < len; i++)
		if (s[i] == ':')
			colon = s + i;
	if (colon == NULL || (h = (size_t)(colon - s)) > URL_HOST_MAX ||
	    len - h - 1 == 0 || len - h - 1 > 5)
		return -1;
	for (i = h + 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		port = port * 10 + (s[i] - '0');
	}
	if (port < 1 || port > 65535)
		return -1;
	memset(n, 0, sizeof(*n));
	if (h == 0 || (h == 1 && s[0] == '?')) {
		if (from == NULL || from->host[0] == '\0')
			return -1;
		memcpy(n->host, from->host, sizeof(n->host));
	} else {
		for (i = 0; i < h; i++)
			if (strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:", s[i]) ==
			    NULL || s[i] == '\0')
				return -1;
		memcpy(n->host, s, h);
	}
	(void)snprintf(n->port, sizeof(n->port), "%ld", port);
	return 0;
}

/* A call on rt->conn, whose connection is left open for the next one. */
static enum redis_io
call(struct route *rt, int64_t until, int argc, const char *const argv[],
    const struct reply **rep)
{
	size_t len[4];
	int i;

	for (i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	return redis_call(&rt->conn, until, argc, argv, len, rep);
}

/*
 * Sentinel i's answer: the address of the primary into rt->node; else
 * why not in rt->err.
 */
static enum redis_io
ask_sentinel(struct route *rt, int i, int64_t until)
{
	const struct url_node *sn = &rt->url->node[i];
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name",
	    rt->url->service };
	const struct reply *rep;
	char where[URL_HOST_MAX + 8], text[161];
	enum redis_io io;

	io = redis_connect(&rt->conn, rt->url, sn, rt->password, until);
	if (io == REDIS_DONE)
		io = call(rt, until, 3, argv, &rep);
	if (io == REDIS_SIGNAL)
		return io;
	if (io == REDIS_DONE && rep->type == REPLY_ARRAY && rep->n == 2 &&
	    rep->elem[0].type == REPLY_BULK && rep->elem[1].type == REPLY_BULK &&
	    rep->elem[0].len + rep->elem[1].len < sizeof(where) - 1) {
		(void)snprintf(where, sizeof(where), "%.*s:%.*s",
		    (int)rep->elem[0].len, rep->elem[0].str,
		    (int)rep->elem[1].len, rep->elem[1].str);
		if (node_at(&rt->node, where, strlen(where), NULL) == 0) {
			redis_close(&rt->conn);
			return REDIS_DONE;
		}
	}
	redis_close(&rt->conn);
	if (io == REDIS_TIMEOUT)
		return route_failed(rt, io, "sentinel %s:%s: no answer",
		    sn->host, sn->port);
	if (io != REDIS_DONE)
		return route_failed(rt, io, "sentinel %s:%s: %s", sn->host,
		    sn->port, rt->conn.err);
	if (rep->type == REPLY_NIL)
		return route_failed(rt, REDIS_FAILED, "sentinel %s:%s does not "
		    "know primary %s", sn->host, sn->port, rt->url->service);
	if (rep->type == REPLY_ERROR)
		return route_failed(rt, REDIS_FAILED, "sentinel %s:%s: %s",
		    sn->host, sn->port, hidden(rt, text, sizeof(text), rep->str,
		    rep->len));
	return route_failed(rt, REDIS_FAILED, "sentinel %s:%s: an unexpected "
	    "reply", sn->host, sn->port);
}

/*
 * The primary, from the first sentinel that names it, each given an even
 * share of the time left, so that one that hangs leaves time for the
 * others; the one that answered is asked first next time.
 */
static enum redis_io
ask_sentinels(struct route *rt, int64_t until)
{
	enum redis_io io = REDIS_FAILED;
	int64_t now, share;
	int k, i, n = rt->url->nodes;

	for (k = 0; k < n; k++) {
		i = (rt->first + k) % n;
		now = monotonic_now();
		share = until == NEVER ? NEVER : now + (until - now) / (n - k);
		io = ask_sentinel(rt, i, share);
		if (io == REDIS_DONE)
			rt->first = i;
		if (io == REDIS_DONE || io == REDIS_SIGNAL)
			return io;
	}
	/* Said per sentinel; a step that timed out says so as its own. */
	return io == REDIS_TIMEOUT && monotonic_now() < until ? REDIS_FAILED :
	    io;
}

/* A connection to n, which was named to us (a redirection, a Sentinel). */
static enum redis_io
connect_named(struct route *rt, const struct url_node *n, const char *what,
    int64_t until)
{
	enum redis_io io;

	rt->peer = *n;
	io = redis_connect(&rt->conn, rt->url, n, rt->password, until);
	if (io == REDIS_FAILED || io == REDIS_DENIED)
		return route_failed(rt, io, "%s %s:%s: %s", what, n->host,
		    n->port, rt->conn.err);
	return io;
}

/* The URL's servers in turn, the next when one refuses outright. */
static enum redis_io
connect_seeds(struct route *rt, int64_t until)
{
	enum redis_io io = REDIS_FAILED;
	int k, i;

	memset(&rt->peer, 0, sizeof(rt->peer));
	if (rt->url->unix_socket)
		io = redis_connect(&rt->conn, rt->url, NULL, rt->password, until);
	for (k = 0; k < rt->url->nodes; k++) {
		i = (rt->first + k) % rt->url->nodes;
		rt->peer = rt->url->node[i];
		io = redis_connect(&rt->conn, rt->url, &rt->url->node[i],
		    rt->password, until);
		if (io != REDIS_FAILED) {
			rt->first = i;
			break;
		}
	}
	if (io == REDIS_FAILED || io == REDIS_DENIED)
		(void)snprintf(rt->err, sizeof(rt->err), "%s", rt->conn.err);
	return io;
}

/*
 * A connection to the server of the slot (or the primary), kept from the
 * call before while it lasts.  Behind Sentinel a new one asks the
 * sentinels first: a primary may have changed while it was away.
 */
static enum redis_io
reach(struct route *rt, int64_t until)
{
	enum redis_io io;

	if (rt->at_node && redis_connected(&rt->conn))
		return REDIS_DONE;
	rt->at_node = 0;
	if (rt->url->sentinel) {
		if ((io = ask_sentinels(rt, until)) != REDIS_DONE)
			return io;
		io = connect_named(rt, &rt->node, "primary", until);
	} else if (rt->known) {
		/* Gone (a failover in the cluster): the seeds know more. */
		if ((io = connect_named(rt, &rt->node, "node", until)) ==
		    REDIS_FAILED) {
			rt->known = 0;
			io = connect_seeds(rt, until);
		}
	} else
		io = connect_seeds(rt, until);
	rt->at_node = io == REDIS_DONE;
	rt->unwanted_password = rt->conn.unwanted_password;
	return io;
}

/* ---- Calls ------------------------------------------------------------ */

/*
 * The call, on the node that an -ASK named: ASKING first, for this one
 * call, after which the connection goes back to the slot's node.
 */
static enum redis_io
call_asked(struct route *rt, const struct url_node *n, int64_t until,
    int argc, const char *const argv[], const size_t len[],
    const struct reply **rep)
{
	const char *asking[] = { "ASKING" };
	enum redis_io io;

	rt->at_node = 0;
	if ((io = connect_named(rt, n, "node", until)) == REDIS_DONE &&
	    (io = call(rt, until, 1, asking, rep)) == REDIS_DONE &&
	    (*rep)->type != REPLY_ERROR)
		io = redis_call(&rt->conn, until, argc, argv, len, rep);
	return io;
}

/*
 * A redirection of a cluster followed: -MOVED kept in rt->node for the
 * rest of the run (every key of a run is in one slot), -ASK into *ask for
 * the next call alone.  -1 if it cannot be, with rt->err saying why.
 */
static int
redirect(struct route *rt, const struct reply *rep, int *asking,
    struct url_node *ask)
{
	const char *s = rep->str, *end = rep->str + rep->len, *target;
	char text[161];
	int moved = reply_is(rep, "MOVED");

	/* MOVED|ASK SLOT HOST:PORT */
	target = memchr(s, ' ', rep->len);
	target = target == NULL ? NULL : memchr(target + 1, ' ',
	    (size_t)(end - target - 1));
	if (target == NULL || node_at(moved ? &rt->node : ask, target + 1,
	    (size_t)(end - target - 1), &rt->peer) == -1) {
		(void)route_failed(rt, REDIS_FAILED, "a redirection that retry "
		    "cannot follow: %s", hidden(rt, text, sizeof(text), s,
		    rep->len));
		return -1;
	}
	route_close(rt);
	rt->known |= moved;
	*asking = !moved;
	return 0;
}

/* A pause before TRYAGAIN, within until; REDIS_DONE when it ran out. */
static enum redis_io
pause_briefly(struct route *rt, int64_t until)
{
	int64_t now = monotonic_now();

	if (sp_wait_fd(-1, 0, until != NEVER && until - now < TRYAGAIN_NS ?
	    until : now + TRYAGAIN_NS) == -1) {
		if (errno != EINTR)
			return route_failed(rt, REDIS_FAILED, "poll: %s",
			    strerror(errno));
		return REDIS_SIGNAL;
	}
	return monotonic_now() >= until ? REDIS_TIMEOUT : REDIS_DONE;
}

/*
 * Behind Sentinel: the primary refuses, is silent, or is one no more (a
 * script's write on a replica fails inside the script: the words say it).
 */
static int
primary_lost(enum redis_io io, const struct reply *rep)
{
	return io == REDIS_FAILED || io == REDIS_TIMEOUT ||
	    (io == REDIS_DONE && rep->type == REPLY_ERROR &&
	    (reply_is(rep, "READONLY") || reply_is(rep, "MASTERDOWN") ||
	    reply_says(rep, "READONLY")));
}

/*
 * Sends the command to the server of its keys and reads its reply, as
 * redis_call() does, before until: following at most ROUTE_REDIRECTS
 * redirections of a cluster, and a slot half moved (-TRYAGAIN, from the
 * node asked last) until it is whole; behind Sentinel, asking the sentinels again once, when the
 * primary fails, with the half of the time left that was kept for it.
 */
enum redis_io
route_call(struct route *rt, int64_t until, int argc, const char *const argv[],
    const size_t len[], const struct reply **rep)
{
	struct url_node ask;
	enum redis_io io;
	int redirects = 0, asking = 0, again = rt->url->sentinel;
	int64_t end, now;

	for (;;) {
		rt->err[0] = '\0';
		now = monotonic_now();
		end = again && until != NEVER ? now + (until - now) / 2 : until;
		if (asking)
			io = call_asked(rt, &ask, end, argc, argv, len, rep);
		else if ((io = reach(rt, end)) == REDIS_DONE)
			io = redis_call(&rt->conn, end, argc, argv, len, rep);
		if ((io == REDIS_FAILED || io == REDIS_DENIED) &&
		    rt->err[0] == '\0')
			(void)snprintf(rt->err, sizeof(rt->err), "%s",
			    rt->conn.err);
		if (asking)
			route_close(rt);
		if (io != REDIS_DONE || !reply_is(*rep, "TRYAGAIN"))
			asking = 0;	/* TRYAGAIN: the same node, asked again */
		if (io == REDIS_DONE && (reply_is(*rep, "MOVED") ||
		    reply_is(*rep, "ASK"))) {
			if (++redirects > ROUTE_REDIRECTS)
				return route_failed(rt, REDIS_FAILED, "more than "
				    "%d redirections in one step",
				    ROUTE_REDIRECTS);
			if (redirect(rt, *rep, &asking, &ask) == -1)
				return REDIS_FAILED;
			continue;
		}
		if (io == REDIS_DONE && reply_is(*rep, "TRYAGAIN")) {
			if ((io = pause_briefly(rt, until)) != REDIS_DONE)
				return io;
			continue;
		}
		if (again && primary_lost(io, *rep)) {
			again = 0;
			route_close(rt);
			continue;
		}
		return io;
	}
}
