/* SPDX-License-Identifier: ISC */
/*
 * ping-server [-f N] PORTFILE LOG: a fake of the heartbeat monitors'
 * ping endpoints on 127.0.0.1 for the recipes' tests (recipes.bats,
 * jobsim.bats).  It listens on a port that the system picks and writes it
 * to PORTFILE (whole, by a rename), then takes one request a connection,
 * one connection at a time, and answers "200 OK" with "OK" (as
 * healthchecks.io does), or "503" to the first N requests (-f), so that
 * a test sees curl's --retry at work.
 *
 * Each request's body goes to LOG.K, K its number from 1, and then one
 * line "METHOD TARGET LENGTH" to LOG: a reader that sees line K finds
 * LOG.K whole.  A request it cannot take (no request line, a body of
 * unknown or too great a length) is answered 400, 411 or 413 and logged
 * as "- FIRSTLINE 0" (its first 200 bytes).  It runs until it is killed (SIGTERM).
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "serve.h"

#define HEAD_MAX	8192		/* request line and headers */
#define BODY_MAX	1048576UL	/* healthchecks keeps 100 kB */

struct request {
	char head[HEAD_MAX + 1];
	size_t head_len;	/* up to and with the blank line */
	size_t got;		/* bytes read, the body's first ones too */
	char *body;
	size_t body_len;
};

static void
die(const char *what)
{
	fprintf(stderr, "ping-server: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
usage(const char *why)
{
	fprintf(stderr, "ping-server: %s\n"
	    "usage: ping-server [-f N] PORTFILE LOG\n", why);
	exit(2);
}

/* Reads until the blank line after the headers: 0, or -1 without one. */
static int
read_head(int c, struct request *r)
{
	char *end;
	ssize_t n;

	r->got = 0;
	r->head[0] = '\0';
	while ((end = strstr(r->head, "\r\n\r\n")) == NULL) {
		if (r->got == HEAD_MAX)
			return -1;
		n = read(c, r->head + r->got, HEAD_MAX - r->got);
		if (n <= 0)
			return -1;
		r->got += (size_t)n;
		r->head[r->got] = '\0';
		/* A NUL in the head hides what follows it from strstr. */
		if (strlen(r->head) != r->got)
			return -1;
	}
	r->head_len = (size_t)(end - r->head) + 4;
	return 0;
}

/*
 * The value of header name (case aside) in the head, or NULL: only at
 * the start of a line after the first.
 */
static const char *
header(const struct request *r, const char *name)
{
	size_t len = strlen(name);
	const char *p = strstr(r->head, "\r\n");

	while (p != NULL && p < r->head + r->head_len - 4) {
		p += 2;
		if (strncasecmp(p, name, len) == 0 && p[len] == ':') {
			p += len + 1;
			return p + strspn(p, " \t");
		}
		p = strstr(p, "\r\n");
	}
	return NULL;
}

/*
 * The body, of Content-Length bytes, after what read_head() read of it:
 * 0, or the status that refuses the request.
 */
static int
read_body(int c, struct request *r)
{
	const char *v;
	char *end;
	unsigned long len;
	size_t have = r->got - r->head_len;
	ssize_t n;

	r->body_len = 0;
	if (header(r, "Transfer-Encoding") != NULL)
		return 411;	/* curl sends a file with its length */
	if ((v = header(r, "Content-Length")) == NULL)
		return have == 0 ? 0 : 400;
	errno = 0;
	len = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || errno != 0 ||
	    (*end != '\r' && *end != ' '))
		return 400;
	if (have > len)
		return 400;	/* one request a connection */
	if (len > BODY_MAX)
		return 413;
	if ((r->body = malloc(len + 1)) == NULL)
		die("malloc");
	memcpy(r->body, r->head + r->head_len, have);
	if ((v = header(r, "Expect")) != NULL &&
	    strncasecmp(v, "100-continue", 12) == 0 && have < len)
		(void)write_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	while (have < len) {
		if ((n = read(c, r->body + have, len - have)) <= 0)
			return 400;
		have += (size_t)n;
	}
	r->body_len = len;
	return 0;
}

/* The request's first line, every byte outside ' '..'~' as '?'. */
static size_t
first_line(const struct request *r, char *out, size_t room)
{
	size_t i, len = strcspn(r->head, "\r\n");

	if (len > room - 1)
		len = room - 1;
	for (i = 0; i < len; i++) {
		out[i] = r->head[i];
		if (out[i] < ' ' || out[i] > '~')
			out[i] = '?';
	}
	out[len] = '\0';
	return len;
}

/*
 * The request's record, the Kth: its body into LOG.K, then its line into
 * log.  A request line is "METHOD TARGET VERSION"; without its two spaces
 * or when refused, the line is "- LINE 0" and LOG.K empty.  Returns the
 * status that refuses it, or 0.
 */
static int
record(const char *logname, int log, unsigned long k, struct request *r,
    int refused)
{
	char line[HEAD_MAX], out[HEAD_MAX + 64], path[PATH_MAX];
	char *target, *version;
	int fd, n, len;

	(void)first_line(r, line, sizeof(line));
	target = strchr(line, ' ');
	version = target == NULL ? NULL : strchr(target + 1, ' ');
	if (refused == 0 && version == NULL)
		refused = 400;
	if (refused != 0) {
		r->body_len = 0;
		len = snprintf(out, sizeof(out), "- %.200s 0\n", line);
	} else {
		*target++ = '\0';
		*version = '\0';
		len = snprintf(out, sizeof(out), "%s %s %zu\n", line, target,
		    r->body_len);
	}
	if (len < 0 || (size_t)len >= sizeof(out))
		usage("a record too long");
	n = snprintf(path, sizeof(path), "%s.%lu", logname, k);
	if (n < 0 || (size_t)n >= sizeof(path))
		usage("LOG too long");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		die(path);
	if (write_all(fd, r->body, r->body_len) == -1 || close(fd) == -1)
		die(path);
	if (write_all(log, out, (size_t)len) == -1)
		die(logname);
	return refused;
}

static void
answer(int c, int status)
{
	char buf[256];
	const char *why = status == 200 ? "OK" : status == 400 ?
	    "Bad Request" : status == 411 ? "Length Required" :
	    status == 413 ? "Payload Too Large" : "Service Unavailable";
	int n;

	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Length: "
	    "%zu\r\nConnection: close\r\n\r\n%s", status, why, strlen(why),
	    why);
	if (n < 0 || (size_t)n >= sizeof(buf))
		usage("answer too long");
	(void)write_all(c, buf, (size_t)n);	/* a client gone is no error */
}

int
main(int argc, char *argv[])
{
	struct timeval limit = { 5, 0 };	/* a client that sends nothing */
	static struct request r;
	unsigned long failing = 0, k = 0;
	unsigned port;
	char *end;
	int s, c, log, opt, status;

	while ((opt = getopt(argc, argv, "f:")) != -1) {
		if (opt != 'f')
			usage("unknown option");
		errno = 0;
		failing = strtoul(optarg, &end, 10);
		if (*optarg == '\0' || *end != '\0' || errno != 0)
			usage("-f: not a number");
	}
	if (argc - optind != 2)
		usage("two arguments");
	/* A client that has gone is no reason to stop. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		die("signal");
	log = open(argv[optind + 1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (log == -1)
		die(argv[optind + 1]);
	if ((s = listen_here(&port)) == -1)
		die("127.0.0.1");
	if (write_port(argv[optind], port) == -1)
		die(argv[optind]);
	for (;;) {
		if ((c = accept(s, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		if (setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit,
		    sizeof(limit)) == -1)
			die("setsockopt");
		r.body = NULL;
		status = read_head(c, &r) == -1 ? 400 : read_body(c, &r);
		status = record(argv[optind + 1], log, ++k, &r, status);
		free(r.body);
		answer(c, status != 0 ? status : k <= failing ? 503 : 200);
		if (close(c) == -1)
			die("close");
	}
}
