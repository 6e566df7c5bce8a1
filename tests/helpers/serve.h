/* SPDX-License-Identifier: ISC */
/*
 * serve.h: what the test servers (http-answer, ping-server, slow-proxy)
 * share: a socket on 127.0.0.1 at a port the system picks, that port in
 * a file for the test to read, and whole writes.  Each returns -1 with
 * errno set, for its caller to say which program failed.
 */
#ifndef SERVE_H
#define SERVE_H

#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A socket listening on 127.0.0.1 at a port the system picks: *port. */
static inline int
listen_here(unsigned *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int s, e;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(s, 16) == -1 ||
	    getsockname(s, (struct sockaddr *)&a, &len) == -1) {
		e = errno;
		(void)close(s);
		errno = e;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return s;
}

/* The port into path, whole: written beside it, then renamed over it. */
static inline int
write_port(const char *path, unsigned port)
{
	char temp[PATH_MAX];
	FILE *f;

	if (snprintf(temp, sizeof(temp), "%s.new", path) >= (int)sizeof(temp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((f = fopen(temp, "w")) == NULL)
		return -1;
	if (fprintf(f, "%u\n", port) < 0) {
		(void)fclose(f);
		return -1;
	}
	return fclose(f) == EOF ? -1 : rename(temp, path);
}

/* Everything of buf to fd, through EINTR; -1 for a reader gone. */
static inline int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
