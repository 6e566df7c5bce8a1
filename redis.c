/* SPDX-License-Identifier: ISC */
/*
 * A client of the Redis protocol (RESP2), written with libc's sockets:
 * the transport (a plain socket: the one place where TLS would go), host
 * names resolved in a child that the same timeout and signals bound, and
 * the protocol, every reply parsed whole within fixed bounds.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "redis.h"

#define NADDRS		4		/* addresses of a name tried, at most */
#define DEPTH_MAX	8		/* arrays within arrays */
#define BUSY_NS		1000000		/* a full listen queue: again in 1 ms */

#ifdef MSG_NOSIGNAL
#define SEND_FLAGS	MSG_NOSIGNAL	/* no SIGPIPE: --circuit-status keeps */
#else					/* the default action for it */
#define SEND_FLAGS	0
#endif

/* An address of the server, as the resolver's child passes it on. */
struct address {
	int		 error;		/* getaddrinfo()'s EAI_..., or 0 */
	int		 errnum;	/* errno, for EAI_SYSTEM */
	socklen_t	 len;
	struct sockaddr_storage sa;
};

/* How a parse of the bytes read so far went. */
enum parsed_reply { P_MORE, P_DONE, P_BAD, P_BIG };

struct parser {
	struct redis	*r;
	const char	*s;
	size_t		 len, at;
};

static char		 send_buf[REDIS_SEND_MAX];

static enum redis_io
failed(struct redis *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return REDIS_FAILED;
}

void
redis_init(struct redis *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* Closed: nothing was written that a close could lose. */
void
redis_close(struct redis *r)
{
	if (r->fd != -1)
		(void)close(r->fd);
	r->fd = -1;
	r->len = r->used = 0;
}

/* ---- The transport: a plain socket ------------------------------------ */

/*
 * Waits for fd (-1: for until alone) on the self-pipe: until, or a
 * signal, ends it.  A poll(2) that fails (no memory) fails the call, as
 * any fault of its I/O does: the store fails, and --store-fail says what
 * the run makes of it.
 */
static enum redis_io
wait_fd(struct redis *r, int fd, short events, int64_t until)
{
	switch (sp_wait_fd(fd, events, until)) {
	case 0:
		return REDIS_TIMEOUT;
	case -1:
		if (errno != EINTR)
			return failed(r, "poll: %s", strerror(errno));
		return REDIS_SIGNAL;
	}
	return REDIS_DONE;
}

/*
 * A new socket above stdio (so that a closed stdout cannot become it),
 * close-on-exec (attempts do not inherit it) and non-blocking (every wait
 * is a poll); -1 with errno.  retry has one thread: no exec can come
 * between socket() and the fcntl().
 */
static int
new_socket(int family)
{
	int fd, e, one = 1;

	if ((fd = socket(family, SOCK_STREAM, 0)) == -1 ||
	    (fd = fd_keep(fd)) == -1)
		return -1;
	if (nonblocking(fd) == -1)
		goto fail;
	/* Requests are small and wait for their replies: no Nagle delay. */
	if (family != AF_UNIX && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one)) == -1)
		goto fail;
#ifdef SO_NOSIGPIPE
	if (setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) == -1)
		goto fail;
#endif
	return fd;
fail:
	e = errno;
	(void)close(fd);	/* unused: nothing to lose */
	errno = e;
	return -1;
}

/*
 * Connects to sa, waiting in poll(2) for a connection in progress.  A
 * Unix socket whose listen queue is full says EAGAIN at once (Linux): it
 * is tried again every millisecond, within until.
 */
static enum redis_io
dial(struct redis *r, const struct sockaddr *sa, socklen_t len,
    int64_t until)
{
	enum redis_io io;
	socklen_t elen;
	int fd, e;

	for (;;) {
		if ((fd = new_socket(sa->sa_family)) == -1)
			return failed(r, "socket: %s", strerror(errno));
		if (connect(fd, sa, len) == 0)
			break;
		e = errno;
		if (e == EAGAIN && sa->sa_family == AF_UNIX) {
			(void)close(fd);	/* unconnected */
			if ((io = wait_fd(r, -1, 0, monotonic_now() + BUSY_NS <
			    until ? monotonic_now() + BUSY_NS : until)) ==
			    REDIS_SIGNAL || io == REDIS_FAILED)
				return io;
			if (monotonic_now() >= until)
				return REDIS_TIMEOUT;
			continue;
		}
		/* EINTR: the connection goes on without us, as EINPROGRESS. */
		if (e != EINPROGRESS && e != EINTR) {
			(void)close(fd);	/* unconnected */
			return failed(r, "%s", strerror(e));
		}
		if ((io = wait_fd(r, fd, POLLOUT, until)) != REDIS_DONE) {
			(void)close(fd);	/* unconnected */
			return io;
		}
		elen = sizeof(e);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1)
			e = errno;
		if (e != 0) {
			(void)close(fd);	/* unconnected */
			return failed(r, "%s", strerror(e));
		}
		break;
	}
	r->fd = fd;
	r->len = r->used = 0;
	return REDIS_DONE;
}

static enum redis_io
send_all(struct redis *r, const char *buf, size_t len, int64_t until)
{
	enum redis_io io;
	ssize_t n;

	while (len > 0) {
		if ((n = send(r->fd, buf, len, SEND_FLAGS)) > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((io = wait_fd(r, r->fd, POLLOUT, until)) !=
			    REDIS_DONE)
				return io;
		} else if (n == -1 && errno != EINTR)
			return failed(r, "%s", strerror(errno));
	}
	return REDIS_DONE;
}

/* More of the reply into r->buf. */
static enum redis_io
receive(struct redis *r, int64_t until)
{
	enum redis_io io;
	ssize_t n;

	if (r->len == sizeof(r->buf))
		return failed(r, "a reply longer than %d bytes", REDIS_REPLY_MAX);
	for (;;) {
		if ((n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len)) >
		    0) {
			r->len += (size_t)n;
			return REDIS_DONE;
		}
		if (n == 0)
			return failed(r, "the server closed the connection");
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((io = wait_fd(r, r->fd, POLLIN, until)) !=
			    REDIS_DONE)
				return io;
		} else if (errno != EINTR)
			return failed(r, "%s", strerror(errno));
	}
}

/*
 * A connection that the server closed while it lay idle (its timeout, a
 * restart) reads as ready though nothing is owed: it is dropped here, and
 * a new one made, rather than found out in the middle of a step.
 */
int
redis_connected(struct redis *r)
{
	struct pollfd p;

	if (r->fd == -1)
		return 0;
	p.fd = r->fd;
	p.events = POLLIN;
	p.revents = 0;
	if (poll(&p, 1, 0) != 0)
		redis_close(r);
	return r->fd != -1;
}

/* ---- Host names ------------------------------------------------------- */

/*
 * In the resolver's child: the addresses of the host (NADDRS at most), or
 * getaddrinfo()'s error, written to fd.  It shares nothing with retry but
 * the pipe and ends with _exit(), so no stdio buffer and no atexit handler
 * of retry's runs in it: retry need not flush before the fork.
 */
static void NORETURN
resolver(int fd, const struct url_node *u)
{
	struct addrinfo hints, *res, *ai;
	struct address a;
	int n = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	memset(&a, 0, sizeof(a));
	if ((a.error = getaddrinfo(u->host, u->port, &hints, &res)) != 0) {
		a.errnum = errno;
		_exit(write(fd, &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 1);
	}
	for (ai = res; ai != NULL && n < NADDRS; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(a.sa))
			continue;
		memset(&a, 0, sizeof(a));
		memcpy(&a.sa, ai->ai_addr, ai->ai_addrlen);
		a.len = ai->ai_addrlen;
		/* A record is below PIPE_BUF: written whole, or not at all. */
		if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(1);
		n++;
	}
	_exit(0);
}

/* The resolver's child is reaped by its pid: an attempt's is not touched. */
static void
reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
}

/*
 * Reads the child's records until it closes the pipe, or until, or a
 * signal: then the child is killed.  Either way it is reaped.
 */
static enum redis_io
read_addresses(struct redis *r, int fd, pid_t pid, int64_t until,
    struct address *a, int *n)
{
	size_t got = 0, want = NADDRS * sizeof(*a);
	enum redis_io io = REDIS_DONE;
	ssize_t k;

	while (got < want) {
		if ((k = read(fd, (char *)a + got, want - got)) > 0)
			got += (size_t)k;
		else if (k == 0)
			break;
		else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((io = wait_fd(r, fd, POLLIN, until)) != REDIS_DONE)
				break;
		} else if (errno != EINTR) {
			io = failed(r, "resolver: %s", strerror(errno));
			break;
		}
	}
	(void)close(fd);	/* read only: nothing to lose */
	if (io != REDIS_DONE && kill(pid, SIGKILL) == -1 && errno != ESRCH)
		io = failed(r, "resolver: %s", strerror(errno));
	reap(pid);
	*n = (int)(got / sizeof(*a));
	return io;
}

/*
 * The addresses of u's host: a numeric one as it is; a name through
 * getaddrinfo(), which may take as long as the system's resolver likes,
 * so in a short-lived child whose answer is read in the one wait.
 */
static enum redis_io
resolve(struct redis *r, const struct url_node *u, int64_t until,
    struct address *a, int *n)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&a[0].sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a[0].sa;
	unsigned short port = (unsigned short)strtol(u->port, NULL, 10);
	enum redis_io io;
	int fds[2];
	pid_t pid;

	*n = 1;
	if (inet_pton(AF_INET, u->host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		a[0].len = sizeof(*in4);
		return REDIS_DONE;
	}
	if (inet_pton(AF_INET6, u->host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		a[0].len = sizeof(*in6);
		return REDIS_DONE;
	}
	if (new_pipe(fds) == -1)
		return failed(r, "pipe: %s", strerror(errno));
	if (nonblocking(fds[0]) == -1 || (pid = fork()) == -1) {
		io = failed(r, "resolver: %s", strerror(errno));
		(void)close(fds[0]);	/* unused: nothing to lose */
		(void)close(fds[1]);
		return io;
	}
	if (pid == 0) {
		(void)close(fds[0]);
		resolver(fds[1], u);
	}
	(void)close(fds[1]);	/* the child's */
	if ((io = read_addresses(r, fds[0], pid, until, a, n)) != REDIS_DONE)
		return io;
	if (*n == 0)
		return failed(r, "cannot resolve %s", u->host);
	if (a[0].error != 0)
		return failed(r, "cannot resolve %s: %s", u->host,
		    a[0].error == EAI_SYSTEM ? strerror(a[0].errnum) :
		    gai_strerror(a[0].error));
	return REDIS_DONE;
}

/* ---- The protocol ----------------------------------------------------- */

/* Appends a command, an array of bulk strings, to send_buf at *at. */
static int
encode(size_t *at, int argc, const char *const argv[], const size_t len[])
{
	size_t room;
	int i, n;

	room = sizeof(send_buf) - *at;
	if ((n = snprintf(send_buf + *at, room, "*%d\r\n", argc)) < 0 ||
	    (size_t)n >= room)
		return -1;
	*at += (size_t)n;
	for (i = 0; i < argc; i++) {
		room = sizeof(send_buf) - *at;
		if ((n = snprintf(send_buf + *at, room, "$%zu\r\n", len[i])) <
		    0 || (size_t)n >= room || len[i] + 2 > room - (size_t)n)
			return -1;
		*at += (size_t)n;
		memcpy(send_buf + *at, argv[i], len[i]);
		memcpy(send_buf + *at + len[i], "\r\n", 2);
		*at += len[i] + 2;
	}
	return 0;
}

/* A line up to its CRLF, which is stepped over; P_MORE while incomplete. */
static enum parsed_reply
line(struct parser *p, const char **start, size_t *len)
{
	const char *s = p->s + p->at, *cr;

	if ((cr = memchr(s, '\r', p->len - p->at)) == NULL ||
	    cr + 1 == p->s + p->len)
		return P_MORE;
	if (cr[1] != '\n')
		return P_BAD;
	*start = s;
	*len = (size_t)(cr - s);
	p->at += *len + 2;
	return P_DONE;
}

/* A decimal integer, as RESP writes them: "-" and 1 to 18 digits. */
static int
integer(const char *s, size_t len, long long *v)
{
	size_t i = len > 0 && s[0] == '-';
	int neg = (int)i;

	if (len == i || len - i > 18)
		return -1;
	for (*v = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	if (neg)
		*v = -*v;
	return 0;
}

/*
 * One element of a reply, from p->at, into *out: for an array, its
 * count, and as many free nodes taken for its elements, all together.
 */
static enum parsed_reply
parse_element(struct parser *p, struct reply *out)
{
	enum parsed_reply k;
	const char *s;
	long long v;
	size_t n;
	char type;

	if (p->at >= p->len)
		return P_MORE;
	type = p->s[p->at++];
	if ((k = line(p, &s, &n)) != P_DONE)
		return k;
	memset(out, 0, sizeof(*out));
	out->str = s;
	out->len = n;
	switch (type) {
	case '+':
		out->type = REPLY_STATUS;
		return P_DONE;
	case '-':
		out->type = REPLY_ERROR;
		return P_DONE;
	case ':':
		out->type = REPLY_INTEGER;
		return integer(s, n, &out->integer) == 0 ? P_DONE : P_BAD;
	case '$':
		if (integer(s, n, &v) == -1 || v < -1)
			return P_BAD;
		out->type = v == -1 ? REPLY_NIL : REPLY_BULK;
		if (v == -1)
			return P_DONE;
		if (v > REDIS_REPLY_MAX)
			return P_BIG;
		if (p->len - p->at < (size_t)v + 2)
			return P_MORE;
		if (memcmp(p->s + p->at + v, "\r\n", 2) != 0)
			return P_BAD;
		out->str = p->s + p->at;
		out->len = (size_t)v;
		p->at += (size_t)v + 2;
		return P_DONE;
	case '*':
		if (integer(s, n, &v) == -1 || v < -1)
			return P_BAD;
		out->type = v == -1 ? REPLY_NIL : REPLY_ARRAY;
		if (v == -1)
			return P_DONE;
		if (v > REDIS_NODES || (size_t)v > REDIS_NODES - p->r->nodes)
			return P_BIG;
		out->n = (size_t)v;
		out->elem = &p->r->node[p->r->nodes];
		p->r->nodes += (size_t)v;
		return P_DONE;
	}
	return P_BAD;
}

/*
 * A whole reply into p->r->node[0] and on: each element in turn, those
 * of an array after it, its nested arrays kept on a stack of DEPTH_MAX.
 */
static enum parsed_reply
parse(struct parser *p)
{
	struct {
		size_t	 base, n, next;
	} stack[DEPTH_MAX];
	struct reply *node = p->r->node;
	enum parsed_reply k;
	size_t at = 0;
	int depth = 0;

	p->r->nodes = 1;
	for (;;) {
		if ((k = parse_element(p, &node[at])) != P_DONE)
			return k;
		if (node[at].type == REPLY_ARRAY && node[at].n > 0) {
			if (depth == DEPTH_MAX)
				return P_BIG;
			stack[depth].base = (size_t)(node[at].elem - node);
			stack[depth].n = node[at].n;
			stack[depth++].next = 0;
		}
		while (depth > 0 && stack[depth - 1].next == stack[depth - 1].n)
			depth--;
		if (depth == 0)
			return P_DONE;
		at = stack[depth - 1].base + stack[depth - 1].next++;
	}
}

/* The next reply, read whole; parsed afresh as more of it comes. */
static enum redis_io
read_reply(struct redis *r, int64_t until, const struct reply **out)
{
	struct parser p;
	enum redis_io io;

	*out = &r->node[0];	/* whole once REDIS_DONE */
	for (;;) {
		p.r = r;
		p.s = r->buf + r->used;
		p.len = r->len - r->used;
		p.at = 0;
		switch (parse(&p)) {
		case P_DONE:
			r->used += p.at;
			return REDIS_DONE;
		case P_BAD:
			return failed(r, "not a Redis reply");
		case P_BIG:
			return failed(r, "a reply larger than retry takes");
		case P_MORE:
			break;
		}
		if ((io = receive(r, until)) != REDIS_DONE)
			return io;
	}
}

/* The first word of an error or status reply is w. */
/* Does the error reply say words (its first 200 bytes)? */
int
reply_says(const struct reply *rep, const char *words)
{
	char text[201];

	(void)snprintf(text, sizeof(text), "%.*s", (int)(rep->len > 200 ?
	    200 : rep->len), rep->str);
	return strstr(text, words) != NULL;
}

int
reply_is(const struct reply *rep, const char *w)
{
	size_t n = strlen(w);

	return (rep->type == REPLY_ERROR || rep->type == REPLY_STATUS) &&
	    rep->len >= n && memcmp(rep->str, w, n) == 0 &&
	    (rep->len == n || rep->str[n] == ' ');
}

/*
 * Sends the command and reads its reply into *reply, which stays good
 * until the next call.  Anything but a reply closes the connection: what
 * is left of a request or a reply in it cannot be told apart.
 */
enum redis_io
redis_call(struct redis *r, int64_t until, int argc, const char *const argv[],
    const size_t len[], const struct reply **reply)
{
	enum redis_io io;
	size_t n = 0;

	if (r->fd == -1)
		return failed(r, "not connected");
	if (encode(&n, argc, argv, len) == -1)
		return failed(r, "a command longer than %d bytes", REDIS_SEND_MAX);
	r->len = r->used = 0;
	if ((io = send_all(r, send_buf, n, until)) == REDIS_DONE)
		io = read_reply(r, until, reply);
	if (io != REDIS_DONE)
		redis_close(r);
	return io;
}

/*
 * Redis's answer to AUTH PASSWORD when it has no password: 7 and 6, then
 * those before.  redis-cli says so and goes on; so does retry.
 */
static int
no_password_set(const struct reply *rep)
{
	static const char *const words[] = {
		"without any password configured", "no password is set"
	};
	char text[201];
	size_t i;

	(void)snprintf(text, sizeof(text), "%.*s", (int)(rep->len > 200 ?
	    200 : rep->len), rep->str);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(text, words[i]) != NULL)
			return 1;
	return 0;
}

/*
 * AUTH (with the user, when there is one) and SELECT (not on a sentinel,
 * which has no databases), sent together; an
 * error reply to either is REDIS_DENIED, with the server's words, the
 * password masked in them; but a server without a password that says so
 * to an AUTH without a user is used without one (r->unwanted_password).
 */
static enum redis_io
set_up(struct redis *r, const struct store_url *u, int sentinel,
    const char *password, int64_t until)
{
	char db[24];
	const char *argv[3], *what[2];
	size_t len[3], n = 0, at;
	const struct reply *rep;
	enum redis_io io;
	int i, k = 0, argc = 0;

	if (password != NULL || u->user[0] != '\0') {
		argv[argc++] = "AUTH";
		if (u->user[0] != '\0')
			argv[argc++] = u->user;
		argv[argc++] = password != NULL ? password : "";
		for (i = 0; i < argc; i++)
			len[i] = strlen(argv[i]);
		what[k++] = "AUTH";
		if (encode(&n, argc, argv, len) == -1)
			return failed(r, "a password too long");
	}
	if (u->db != 0 && !sentinel) {
		(void)snprintf(db, sizeof(db), "%ld", u->db);
		argv[0] = "SELECT";
		argv[1] = db;
		len[0] = 6;
		len[1] = strlen(db);
		what[k++] = "SELECT";
		if (encode(&n, 2, argv, len) == -1)
			return failed(r, "a command too long");
	}
	if (k == 0)
		return REDIS_DONE;
	if ((io = send_all(r, send_buf, n, until)) != REDIS_DONE)
		return io;
	for (i = 0; i < k; i++) {
		if ((io = read_reply(r, until, &rep)) != REDIS_DONE)
			return io;
		if (rep->type == REPLY_ERROR && strcmp(what[i], "AUTH") == 0 &&
		    u->user[0] == '\0' && no_password_set(rep)) {
			r->unwanted_password = 1;
			continue;
		}
		if (rep->type == REPLY_ERROR) {
			(void)snprintf(r->err, sizeof(r->err), "%s: ", what[i]);
			at = strlen(r->err);
			url_hide(r->err + at, sizeof(r->err) - at > 161 ? 161 :
			    sizeof(r->err) - at, rep->str, rep->len, password,
			    NULL);
			return REDIS_DENIED;
		}
	}
	return REDIS_DONE;
}

/*
 * Connects to the server at (u's socket when NULL), authenticates with
 * u's user and password (NULL: none) and selects u's database, all
 * before until.
 */
enum redis_io
redis_connect(struct redis *r, const struct store_url *u,
    const struct url_node *at, const char *password, int64_t until)
{
	struct address a[NADDRS];
	struct sockaddr_un local;
	enum redis_io io = REDIS_FAILED;
	int i, n;

	redis_close(r);
	r->unwanted_password = 0;
	if (at == NULL) {
		memset(&local, 0, sizeof(local));
		local.sun_family = AF_UNIX;
		(void)snprintf(local.sun_path, sizeof(local.sun_path), "%s",
		    u->path);
		io = dial(r, (struct sockaddr *)&local, sizeof(local), until);
	} else {
		memset(a, 0, sizeof(a));
		if ((io = resolve(r, at, until, a, &n)) != REDIS_DONE)
			return io;
		/* The next address only when this one refused outright. */
		for (i = 0; i < n; i++)
			if ((io = dial(r, (struct sockaddr *)&a[i].sa, a[i].len,
			    until)) != REDIS_FAILED)
				break;
	}
	if (io == REDIS_DONE && (io = set_up(r, u, at != NULL && at->sentinel,
	    password, until)) != REDIS_DONE)
		redis_close(r);
	return io;
}
