/* SPDX-License-Identifier: ISC */
/*
 * The URL of --store (and RETRY_STORE): redis://[user:password@]host[:port]
 * [/db] or redis+unix://[user:password@]/path[?db=N], checked and split
 * without I/O, and shown with its password as "***"; and server text
 * with the password masked.
 */
#ifndef URL_H
#define URL_H

#include <stddef.h>

#define URL_HOST_MAX	253	/* a DNS name */
#define URL_PATH_MAX	103	/* a socket path: sun_path is 104 on BSD */
#define URL_SECRET_MAX	512	/* a user or a password */
#define URL_SHOWN_MAX	(URL_HOST_MAX + URL_PATH_MAX + URL_SECRET_MAX + 64)

struct store_url {
	int		 given;		/* there is a store */
	int		 unix_socket;	/* redis+unix: path; else host, port */
	char		 host[URL_HOST_MAX + 1];	/* IPv6 without brackets */
	char		 port[6];
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
