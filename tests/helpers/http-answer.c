/* SPDX-License-Identifier: ISC */
/*
 * http-answer PORTFILE LOG ANSWER...: a web server on 127.0.0.1 for the
 * tests of HTTP answers in hints (http.bats).  It listens on a port that
 * the system picks and writes it to PORTFILE (whole, by a rename), then
 * answers the Nth connection with the Nth ANSWER (the last one again once
 * they are used up) and "ok\n" as the body, and closes it.  Each
 * request's first line goes to LOG, so that a test counts the attempts.
 * It runs until it is killed.
 *
 * ANSWER: a status, then headers each after a '|', as "404",
 * "429|Retry-After: 1" or "301|Location: /next".
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

static void
die(const char *what)
{
	fprintf(stderr, "http-answer: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
usage(const char *why)
{
	fprintf(stderr, "http-answer: %s\nusage: http-answer PORTFILE LOG "
	    "STATUS[|Header: value...]...\n", why);
	exit(2);
}

/*
 * Reads the request's head, up to its blank line or 4 KiB (a GET has no
 * body, so nothing is left unread to make the close a reset), and adds
 * its first line to log.
 */
static void
take_request(int c, int log)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;

	buf[0] = '\0';
	while (len < sizeof(buf) - 1 && strstr(buf, "\r\n\r\n") == NULL &&
	    (n = read(c, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
	}
	len = strcspn(buf, "\r\n");
	buf[len++] = '\n';
	if (write(log, buf, len) != (ssize_t)len)
		die("log");
}

static const char *
reason(long status)
{
	switch (status) {
	case 200: return "OK";
	case 301: return "Moved Permanently";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	}
	return "Status";
}

/* The status of an ANSWER, its headers after it at *headers. */
static long
status_of(const char *spec, const char **headers)
{
	char *end;
	long status = strtol(spec, &end, 10);

	if (end == spec || (*end != '\0' && *end != '|') || status < 100 ||
	    status > 999)
		usage(spec);
	*headers = end;
	return status;
}

/* The response that spec says, as one write; a client gone is no error. */
static void
answer(int c, const char *spec)
{
	char head[4096];
	const char *h, *end;
	long status = status_of(spec, &end);
	size_t len, room;
	int n;

	n = snprintf(head, sizeof(head), "HTTP/1.1 %ld %s\r\n", status,
	    reason(status));
	for (h = end; n > 0 && (size_t)n < sizeof(head) && *h == '|';
	    h += 1 + strcspn(h + 1, "|")) {
		len = (size_t)n;
		room = sizeof(head) - len;
		n += snprintf(head + len, room, "%.*s\r\n",
		    (int)strcspn(h + 1, "|"), h + 1);
	}
	if (n > 0 && (size_t)n < sizeof(head))
		n += snprintf(head + n, sizeof(head) - (size_t)n,
		    "Content-Length: 3\r\nConnection: close\r\n\r\nok\n");
	if (n < 0 || (size_t)n >= sizeof(head))
		usage("ANSWER too long");
	if (write(c, head, (size_t)n) == -1 && errno != EPIPE &&
	    errno != ECONNRESET)
		die("write");
}

int
main(int argc, char *argv[])
{
	struct timeval limit = { 5, 0 };	/* a client that sends nothing */
	const char *headers;
	unsigned port;
	int s, c, log, i, next = 3;

	if (argc < 4)
		usage("too few arguments");
	for (i = 3; i < argc; i++)
		(void)status_of(argv[i], &headers);	/* or exits */
	/* A client that has gone is no reason to stop. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		die("signal");
	if ((log = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1)
		die(argv[2]);
	if ((s = listen_here(&port)) == -1)
		die("127.0.0.1");
	if (write_port(argv[1], port) == -1)
		die(argv[1]);
	for (;;) {
		if ((c = accept(s, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		if (setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit,
		    sizeof(limit)) == -1)
			die("setsockopt");
		take_request(c, log);
		answer(c, argv[next]);
		if (next < argc - 1)
			next++;
		if (close(c) == -1)
			die("close");
	}
}
