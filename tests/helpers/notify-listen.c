/* SPDX-License-Identifier: ISC */
/*
 * notify-listen ADDRESS FILE: binds a Unix datagram socket at ADDRESS (a
 * path, or @name in the abstract namespace), as systemd's NOTIFY_SOCKET
 * is, creates FILE once bound, and appends each datagram to it as one
 * line, until a signal ends it.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int
fail(const char *what)
{
	(void)fprintf(stderr, "notify-listen: %s: %s\n", what, strerror(errno));
	return 125;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_un addr;
	char buf[4096];
	size_t len;
	ssize_t n;
	int s, out;

	if (argc != 3) {
		(void)fprintf(stderr, "usage: notify-listen address file\n");
		return 125;
	}
	len = strlen(argv[1]);
	if (len < 2 || len >= sizeof(addr.sun_path)) {
		(void)fprintf(stderr, "notify-listen: bad address\n");
		return 125;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, argv[1], len);
	if (argv[1][0] == '@')
		addr.sun_path[0] = '\0';
	else
		len++;
	if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		return fail("socket");
	if (bind(s, (struct sockaddr *)&addr,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) == -1)
		return fail("bind");
	if ((out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_TRUNC,
	    0644)) == -1)
		return fail(argv[2]);
	for (;;) {
		if ((n = recv(s, buf, sizeof(buf) - 1, 0)) == -1) {
			if (errno == EINTR)
				continue;
			return fail("recv");
		}
		buf[n++] = '\n';
		if (write(out, buf, (size_t)n) != n)
			return fail("write");
	}
}
