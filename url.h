/* SPDX-License-Identifier: ISC */
/*
 * The URL of --store (and RETRY_STORE): redis://[user:password@]host[:port]
 * [,host[:port]...][/db] (one server, or the seeds of a Redis Cluster),
 * redis+unix://[user:password@]/path[?db=N], or redis+sentinel://
 * [user:password@]host[:port][,host[:port]...]/service[/db]; checked and
 * split without I/O, and shown with its password as "***"; and server
 * text with the password masked.
 */
#ifndef URL_H
#define URL_H

#include <stddef.h>

#define URL_HOST_MAX	253	/* a DNS name */
#define URL_PATH_MAX	103	/* a socket path: sun_path is 104 on BSD */
#define URL_SECRET_MAX	512	/* a user or a password */
#define URL_NODES	8	/* seeds, or sentinels, in one URL */
#define URL_SERVICE_MAX	64	/* a Sentinel's name of a primary */
#define URL_SHOWN_MAX	(URL_NODES * (URL_HOST_MAX + 9) + URL_PATH_MAX + \
	URL_SECRET_MAX + URL_SERVICE_MAX + 64)

/* A server: given in the URL, or named by a redirection or a Sentinel. */
struct url_node {
	char		 host[URL_HOST_MAX + 1];	/* IPv6 without brackets */
	char		 port[6];
	int		 sentinel;	/* asked for the primary; no SELECT */
};

struct store_url {
	int		 given;		/* there is a store */
	int		 unix_socket;	/* redis+unix: path; else node[] */
	int		 sentinel;	/* redis+sentinel: node[] are sentinels */
	struct url_node	 node[URL_NODES];	/* tried in this order */
	int		 nodes;
	char		 service[URL_SERVICE_MAX + 1];	/* redis+sentinel */
	char		 path[URL_PATH_MAX + 1];
	char		 user[URL_SECRET_MAX + 1];	/* "": none */
	char		 password[URL_SECRET_MAX + 1];
	int		 has_password;	/* given in the URL, maybe empty */
	long		 db;
	char		 shown[URL_SHOWN_MAX];	/* for messages */
};

int		 url_check(const char *, const char *, struct store_url *,
		    char *, size_t);
void		 url_hide(char *, size_t, const char *, size_t, const char *,
		    const char *);

#endif
