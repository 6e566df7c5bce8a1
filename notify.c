/* SPDX-License-Identifier: ISC */
/*
 * systemd's status line (NOTIFY_SOCKET), a listener of the run's events:
 * one STATUS= datagram per attempt, per wait and at the end, in the words
 * of retry's messages, so that "systemctl status" says what retry does.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL	0	/* macOS: a datagram raises no SIGPIPE */
#endif

static int			 sock = -1;
static struct sockaddr_un	 addr;
static socklen_t		 addr_len;

/*
 * The socket's address from NOTIFY_SOCKET: an absolute path, or "@name"
 * for Linux's abstract namespace (a NUL first).  Returns 0, or -1 with
 * the reason in *why.
 */
static int
notify_address(const char *name, const char **why)
{
	size_t len = strlen(name);

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (name[0] != '/' && name[0] != '@') {
		*why = len == 0 ? "empty" :
		    "neither an absolute path nor an abstract @name";
		return -1;
	}
	/* A path ends in a NUL within sun_path, as systemd's do; an
	 * abstract name's length is told, and may fill it. */
	if (len < 2 || len > sizeof(addr.sun_path) ||
	    (name[0] == '/' && len == sizeof(addr.sun_path))) {
		*why = len < 2 ? "no name" : "too long for a socket's address";
		return -1;
	}
	memcpy(addr.sun_path, name, len);
	if (name[0] == '@')
		addr.sun_path[0] = '\0';
	addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (name[0] == '/'));
	return 0;
}

/*
 * Reads name, NOTIFY_SOCKET's value, and, unless --notify-pass, removes
 * NOTIFY_SOCKET from the environment that attempts and hooks inherit:
 * the unit's status line is retry's, and a command that is a notify
 * service itself would send READY=1 for a unit it does not own.  Returns
 * 0 when no status will be sent: the value is not an address (said with
 * -v), or no socket could be had.
 */
int
notify_start(const struct policy *p, const char *name)
{
	const char *why;
	int ok;

	ok = notify_address(name, &why) == 0;
	if (!ok)
		detail("NOTIFY_SOCKET '%s' ignored: %s", name, why);
	if (!p->notify_pass && unsetenv("NOTIFY_SOCKET") == -1)
		fatal("unsetenv NOTIFY_SOCKET");
	if (!ok)
		return 0;
	/* Non-blocking: a stopped listener's full queue says EAGAIN. */
	if ((sock = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    fcntl(sock, F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(sock, F_SETFL, O_NONBLOCK) == -1) {
		detail("NOTIFY_SOCKET: no status sent: socket: %s",
		    strerror(errno));
		notify_drop();
		return 0;
	}
	return 1;
}

/*
 * Sends "STATUS=text", never anything else: READY=1 or STOPPING=1 are
 * the command's to send, if it is a notify service.  A full queue (a
 * stopped listener) loses this one line, which the next replaces
 * anyway; a listener that has gone ends the sending.  Each is said once
 * with -v, not as a warning: the status line is a view of the run, and
 * a unit's run that passed should not leave a warning in the journal
 * for a manager that stopped listening.
 */
static void
send_status(const char *text)
{
	static int full_told;
	char dgram[MSGMAX + 8];
	int n;

	if (sock == -1)
		return;
	n = snprintf(dgram, sizeof(dgram), "STATUS=%s", text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(dgram))
		n = (int)sizeof(dgram) - 1;
	while (sendto(sock, dgram, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (const struct sockaddr *)&addr, addr_len) == -1) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			if (!full_told)
				detail("NOTIFY_SOCKET: a status was dropped: "
				    "its listener takes none now (%s)",
				    strerror(errno));
			full_told = 1;
			return;
		}
		detail("NOTIFY_SOCKET: no more statuses: %s", strerror(errno));
		notify_drop();
		return;
	}
}

/* "attempt 3/5 failed with exit 1; next in 4.100s", as say.c says it. */
static void
status_retry(const struct event *ev, const char *d)
{
	char label[64], end[96], line[256];

	(void)snprintf(line, sizeof(line), "%s %s; next in %ss",
	    say_label(label, sizeof(label), ev->policy, ev->run),
	    say_ending(end, sizeof(end), ev->policy, ev->run), d);
	send_status(line);
}

/* Every wait as it begins: why, and how long. */
static void
status_wait(const struct event *ev)
{
	static long probe_told = -1;	/* the attempt it was sent for */
	const char *c = ev->policy->circuit;
	char d[32], line[256];

	fmt_seconds(d, sizeof(d), 0, ev->wait);
	switch (ev->reason) {
	case WAIT_BACKOFF:
	case WAIT_HINT:
		status_retry(ev, d);
		return;
	case WAIT_SPLAY:
		(void)snprintf(line, sizeof(line), "splay: waiting %ss before "
		    "the first attempt", d);
		break;
	case WAIT_CIRCUIT_OPEN:
		(void)snprintf(line, sizeof(line), "circuit %s open; waiting "
		    "%ss", c, d);
		break;
	case WAIT_PROBE_ELSEWHERE:
		/* Waited for in short looks: once per attempt, as say.c. */
		if (probe_told == ev->run->attempts)
			return;
		probe_told = ev->run->attempts;
		(void)snprintf(line, sizeof(line), "circuit %s half-open; "
		    "another run probes it; waiting", c);
		break;
	case WAIT_BUDGET:
		(void)snprintf(line, sizeof(line), "retry budget of circuit %s "
		    "spent; waiting %ss", c, d);
		break;
	}
	send_status(line);
}

/* The last status: how the last attempt ended and why the run ended. */
static void
status_end(const struct event *ev)
{
	const struct run *r = ev->run;
	char label[64], end[96], line[256];

	if (r->attempts == 0)
		(void)snprintf(line, sizeof(line), "no attempt ran; giving up: "
		    "%s", outcome_table[r->why].words);
	else if (ev->verdict->passed)
		(void)snprintf(line, sizeof(line), "%s %s",
		    say_label(label, sizeof(label), ev->policy, r),
		    say_ending(end, sizeof(end), ev->policy, r));
	else
		(void)snprintf(line, sizeof(line), "%s %s; giving up: %s",
		    say_label(label, sizeof(label), ev->policy, r),
		    say_ending(end, sizeof(end), ev->policy, r),
		    outcome_table[r->why].words);
	send_status(line);
}

/* The listener: at most one status per event. */
void
notify_event(const struct event *ev)
{
	char label[64], line[96];

	switch (ev->kind) {
	case ATTEMPT_STARTS:
		(void)snprintf(line, sizeof(line), "%s running",
		    say_label(label, sizeof(label), ev->policy, ev->run));
		send_status(line);
		break;
	case WAIT_BEGINS:
		status_wait(ev);
		break;
	case RUN_ENDS:
		status_end(ev);
		break;
	case RUN_BEGINS:
	case ATTEMPT_ENDS:
	case CIRCUIT_CHANGES:
		break;		/* said by the wait or the end that follows */
	}
}

/* The socket goes; nothing more is sent. */
void
notify_drop(void)
{
	if (sock != -1 && close(sock) == -1 && errno != EINTR)
		detail("NOTIFY_SOCKET: close: %s", strerror(errno));
	sock = -1;
}
