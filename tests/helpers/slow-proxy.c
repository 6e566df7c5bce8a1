/* SPDX-License-Identifier: ISC */
/*
 * slow-proxy PORTFILE SOCKET DELAY_MS: makes a Redis server on the Unix
 * socket SOCKET a store that answers slowly, for --store.  Listens on
 * 127.0.0.1 at a port the kernel picks, written to PORTFILE once it
 * listens, and relays each connection to SOCKET, holding what the server
 * sends for DELAY_MS before passing it on.
 * slow-proxy -p: prints a TCP port of 127.0.0.1 that is free, and exits.
 * slow-proxy -a PORTFILE REPLY [AUTH_REPLY]: no proxy but a fake server,
 * listening as above, that answers every command with the bytes REPLY,
 * whatever it is, and AUTH with AUTH_REPLY (by default REPLY).
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

#define PAIRS	64
#define HELD	65536

struct pair {
	int		 client, server;	/* -1: unused */
	long long	 due;		/* ms: when the held bytes go */
	size_t		 held;
	char		 buf[HELD];
};

static struct pair	 pairs[PAIRS];

static int
fail(const char *what)
{
	(void)fprintf(stderr, "slow-proxy: %s: %s\n", what, strerror(errno));
	return 2;
}

static long long
now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A socket of 127.0.0.1 at a port the kernel picks; its port in *port. */
static int
listener(int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		return -1;
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
to_server(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	(void)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

static void
drop(struct pair *p)
{
	(void)close(p->client);
	(void)close(p->server);
	p->client = p->server = -1;
	p->held = 0;
}

/* What the server sent, held until it is due. */
static void
from_server(struct pair *p, long long delay)
{
	ssize_t n = read(p->server, p->buf + p->held, HELD - p->held);

	if (n <= 0) {
		drop(p);
		return;
	}
	if (p->held == 0)
		p->due = now_ms() + delay;
	p->held += (size_t)n;
}

static void
from_client(struct pair *p)
{
	char buf[16384];
	ssize_t n = read(p->client, buf, sizeof(buf));

	if (n <= 0 || write_all(p->server, buf, (size_t)n) == -1)
		drop(p);
}

static int
serve(int lfd, const char *path, long long delay)
{
	struct pollfd fds[1 + 2 * PAIRS];
	long long next, t;
	int i, n, fd, timeout;

	for (;;) {
		fds[0].fd = lfd;
		fds[0].events = POLLIN;
		next = -1;
		for (i = 0, n = 1; i < PAIRS; i++) {
			fds[n].fd = pairs[i].client;
			fds[n++].events = POLLIN;
			fds[n].fd = pairs[i].server;
			fds[n++].events = pairs[i].held < HELD ? POLLIN : 0;
			if (pairs[i].held > 0 && (next == -1 || pairs[i].due < next))
				next = pairs[i].due;
		}
		t = now_ms();
		timeout = next == -1 ? -1 : next <= t ? 0 : (int)(next - t);
		if (poll(fds, (nfds_t)n, timeout) == -1 && errno != EINTR)
			return fail("poll");
		if ((fds[0].revents & POLLIN) &&
		    (fd = accept(lfd, NULL, NULL)) != -1) {
			for (i = 0; i < PAIRS && pairs[i].client != -1; i++)
				continue;
			if (i == PAIRS || (pairs[i].server = to_server(path)) ==
			    -1)
				(void)close(fd);
			else
				pairs[i].client = fd;
		}
		for (i = 0; i < PAIRS; i++) {
			if (pairs[i].client == -1)
				continue;
			if (fds[1 + 2 * i].revents != 0)
				from_client(&pairs[i]);
			if (pairs[i].client != -1 && fds[2 + 2 * i].revents != 0)
				from_server(&pairs[i], delay);
			if (pairs[i].client != -1 && pairs[i].held > 0 &&
			    pairs[i].due <= now_ms()) {
				if (write_all(pairs[i].client, pairs[i].buf,
				    pairs[i].held) == -1)
					drop(&pairs[i]);
				pairs[i].held = 0;
			}
		}
	}
}

/*
 * The length of the first command (a RESP array of bulk strings) in buf
 * when it is whole, else 0; -1 if it is not RESP.  *auth: it is AUTH.
 */
static long
command(const char *buf, size_t len, int *auth)
{
	const char *p = buf, *end = buf + len, *nl;
	long items, size, i;

	*auth = 0;
	if (p == end || (nl = memchr(p, '\n', len)) == NULL)
		return 0;
	if (*p != '*')
		return -1;
	items = strtol(p + 1, NULL, 10);
	for (i = 0, p = nl + 1; i < items; i++) {
		if (p == end || (nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return 0;
		if (*p != '$')
			return -1;
		size = strtol(p + 1, NULL, 10);
		if (size < 0 || end - (nl + 1) < size + 2)
			return 0;
		if (i == 0 && size == 4 && strncasecmp(nl + 1, "AUTH", 4) == 0)
			*auth = 1;
		p = nl + 1 + size + 2;
	}
	return p - buf;
}

/*
 * The fake server: one client at a time, each command answered with
 * reply, AUTH with auth_reply.
 */
static int
answer(int lfd, const char *reply, const char *auth_reply)
{
	char buf[HELD];
	const char *r;
	size_t len;
	ssize_t got;
	long used;
	int fd, auth;

	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			return fail("accept");
		len = 0;
		while ((got = read(fd, buf + len, sizeof(buf) - len)) > 0) {
			len += (size_t)got;
			while ((used = command(buf, len, &auth)) > 0) {
				r = auth ? auth_reply : reply;
				if (write_all(fd, r, strlen(r)) == -1)
					break;
				memmove(buf, buf + used, len - (size_t)used);
				len -= (size_t)used;
			}
			if (used == -1 || len == sizeof(buf))
				break;
		}
		(void)close(fd);
	}
}

int
main(int argc, char *argv[])
{
	char tmp[4096];
	const char *portfile;
	FILE *f;
	int lfd, port, i, fake;

	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return fail("signal");
	if (argc == 2 && strcmp(argv[1], "-p") == 0) {
		if ((lfd = listener(&port)) == -1)
			return fail("socket");
		(void)close(lfd);
		return printf("%d\n", port) < 0 ? 2 : 0;
	}
	if (argc != 4 && (argc != 5 || strcmp(argv[1], "-a") != 0)) {
		(void)fprintf(stderr,
		    "usage: slow-proxy portfile socket delay-ms\n"
		    "       slow-proxy -a portfile reply [auth-reply]\n"
		    "       slow-proxy -p\n");
		return 2;
	}
	fake = strcmp(argv[1], "-a") == 0;
	for (i = 0; i < PAIRS; i++)
		pairs[i].client = pairs[i].server = -1;
	if ((lfd = listener(&port)) == -1 || listen(lfd, 64) == -1)
		return fail("socket");
	portfile = fake ? argv[2] : argv[1];
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	if ((f = fopen(tmp, "w")) == NULL || fprintf(f, "%d\n", port) < 0 ||
	    fclose(f) == EOF || rename(tmp, portfile) == -1)
		return fail(portfile);
	if (fake)
		return answer(lfd, argv[3], argc == 5 ? argv[4] : argv[3]);
	return serve(lfd, argv[2], strtoll(argv[3], NULL, 10));
}
