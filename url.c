/* SPDX-License-Identifier: ISC */
/*
 * The URL of the shared store, split by hand with one reason per fault,
 * and never shown with its password.  No I/O: the option parser and the
 * fuzzer call it.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define DEFAULT_PORT	"6379"
#define SENTINEL_PORT	"26379"
#define TCP_SCHEME	"redis://"
#define UNIX_SCHEME	"redis+unix://"
#define SENTINEL_SCHEME	"redis+sentinel://"

/* n digits at s, a number within [min, max]; -1 if not. */
static long
number(const char *s, size_t n, long min, long max)
{
	long v = 0;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (max - (s[i] - '0')) / 10)
			return -1;	/* never computed past max */
		v = v * 10 + (s[i] - '0');
	}
	return v < min ? -1 : v;
}

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* in[0..len) into out, %XX decoded; NULL, or why not. */
static const char *
decode(char *out, const char *in, size_t len)
{
	size_t i, n = 0;
	int hi, lo;

	for (i = 0; i < len; i++) {
		if (n == URL_SECRET_MAX)
			return "a user or password longer than 512 bytes";
		if (in[i] != '%') {
			out[n++] = in[i];
			continue;
		}
		if (i + 2 >= len)
			return "a '%' that is not %XX: write '%' as %25";
		hi = hex((unsigned char)in[i + 1]);
		lo = hex((unsigned char)in[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return "a '%' that is not %XX (nor %00): write '%' as %25";
		out[n++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[n] = '\0';
	return NULL;
}

/*
 * [USER:]PASSWORD, before the '@', as redis-cli reads it: without a ':'
 * it is all password (a token given alone, as in redis://s3cret@host),
 * and an empty one is none, so that USER:@ leaves it to REDISCLI_AUTH.
 */
static const char *
userinfo(struct store_url *u, const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	const char *why;

	if (colon == NULL) {
		why = decode(u->password, s, len);
		u->has_password = u->password[0] != '\0';
		return why;
	}
	if ((why = decode(u->user, s, (size_t)(colon - s))) != NULL)
		return why;
	if ((why = decode(u->password, colon + 1, len - (size_t)(colon - s) -
	    1)) != NULL)
		return why;
	u->has_password = u->password[0] != '\0';	/* ":@": none */
	return NULL;
}

/* A host name, or a numeric IPv4 address. */
static const char *
host_name(struct url_node *u, const char *s, size_t len)
{
	struct in_addr a4;

	if (len == 0)
		return "no host: write redis://HOST, as redis://127.0.0.1";
	if (len > URL_HOST_MAX)
		return "a host name longer than 253 bytes";
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-_") < len)
		return "invalid host: letters, digits, '.', '-', '_', or an "
		    "IPv6 address in brackets";
	memcpy(u->host, s, len);
	u->host[len] = '\0';
	if (strspn(u->host, "0123456789.") == len &&
	    inet_pton(AF_INET, u->host, &a4) != 1)
		return "invalid IPv4 address";
	return NULL;
}

/* HOST[:PORT], HOST being a name, an IPv4 address or [IPv6]. */
static const char *
host_port(struct url_node *u, const char *s, size_t len,
    const char *default_port)
{
	struct in6_addr a6;
	const char *end = s + len, *p;
	const char *why;
	long port;
	size_t n;

	if (len > 0 && s[0] == '[') {
		if ((p = memchr(s, ']', len)) == NULL)
			return "an IPv6 address without its ']'";
		n = (size_t)(p - s - 1);
		if (n == 0 || n > URL_HOST_MAX)
			return "invalid IPv6 address";
		memcpy(u->host, s + 1, n);
		u->host[n] = '\0';
		if (inet_pton(AF_INET6, u->host, &a6) != 1)
			return "invalid IPv6 address";
		p++;
	} else {
		if ((p = memchr(s, ':', len)) == NULL)
			p = end;
		if (p < end && memchr(p + 1, ':', (size_t)(end - p - 1)) != NULL)
			return "an IPv6 address goes in brackets, as "
			    "redis://[::1]:6379";
		if ((why = host_name(u, s, (size_t)(p - s))) != NULL)
			return why;
	}
	if (p == end) {
		(void)snprintf(u->port, sizeof(u->port), "%s", default_port);
		return NULL;
	}
	if (*p != ':' ||
	    (port = number(p + 1, (size_t)(end - p - 1), 1, 65535)) == -1)
		return "invalid port: a number from 1 to 65535";
	/* As a number: "00080" is 80, and fits u->port whatever its zeros. */
	(void)snprintf(u->port, sizeof(u->port), "%ld", port);
	return NULL;
}

/*
 * HOST[:PORT][,HOST[:PORT]...] at s[0..len), into u->node[]: the seeds of
 * a cluster (or one server), or the sentinels.
 */
static const char *
host_list(struct store_url *u, const char *s, size_t len,
    const char *default_port)
{
	const char *end = s + len, *comma, *why;

	for (;;) {
		if (u->nodes == URL_NODES)
			return "more than 8 hosts";
		if ((comma = memchr(s, ',', (size_t)(end - s))) == NULL)
			comma = end;
		if ((why = host_port(&u->node[u->nodes], s, (size_t)(comma - s),
		    default_port)) != NULL)
			return why;
		u->node[u->nodes++].sentinel = u->sentinel;
		if (comma == end)
			return NULL;
		s = comma + 1;
	}
}

/* The name of a Sentinel's primary, and [/DB], at s (after its '/'). */
static const char *
service(struct store_url *u, const char *s)
{
	size_t n = strcspn(s, "/");

	if (strchr(s, '?') != NULL)
		return "no parameters: the database goes in the path, as "
		    "redis+sentinel://HOST/SERVICE/2";
	if (n == 0)
		return "no service: write redis+sentinel://HOST[:PORT]/SERVICE, "
		    "as redis+sentinel://127.0.0.1:26379/mymaster";
	if (n > URL_SERVICE_MAX || strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") < n)
		return "invalid service: up to 64 letters, digits, '.', '-', '_'";
	memcpy(u->service, s, n);
	u->service[n] = '\0';
	if (s[n] == '/' && s[n + 1] != '\0' &&
	    (u->db = number(s + n + 1, strlen(s + n + 1), 0, INT_MAX)) == -1)
		return "invalid database: a number from 0 to 2147483647";
	return NULL;
}

/*
 * redis://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/DB], or with
 * u->sentinel redis+sentinel://...HOST[:PORT].../SERVICE[/DB], after the
 * scheme.
 */
static const char *
tcp_url(struct store_url *u, const char *s)
{
	size_t auth = strcspn(s, "/?");
	const char *at = NULL, *p, *why;

	for (p = s; p < s + auth; p++)
		if (*p == '@')
			at = p;
	/* An '@' past a '/' or '?': that one is in the user or password. */
	if (s[auth] != '\0' && strchr(s + auth, '@') != NULL)
		return s[auth] == '/' ? "a '/' in the user or password: write "
		    "it as %2F" : "a '?' in the user or password: write it as "
		    "%3F";
	if (at != NULL && (why = userinfo(u, s, (size_t)(at - s))) != NULL)
		return why;
	p = at != NULL ? at + 1 : s;
	if ((why = host_list(u, p, (size_t)(s + auth - p), u->sentinel ?
	    SENTINEL_PORT : DEFAULT_PORT)) != NULL)
		return why;
	p = s + auth;
	if (u->sentinel && *p != '?')
		return service(u, *p == '/' ? p + 1 : p);
	if (*p == '?')
		return "no parameters: the database goes in the path, as "
		    "redis://HOST/2";
	if (*p == '/' && p[1] != '\0' &&
	    (u->db = number(p + 1, strlen(p + 1), 0, INT_MAX)) == -1)
		return "invalid database: a number from 0 to 2147483647";
	return NULL;
}

/* redis+unix://[USER[:PASSWORD]@]/PATH[?db=N], after the scheme. */
static const char *
unix_url(struct store_url *u, const char *s)
{
	const char *slash = strchr(s, '/'), *q, *why;
	size_t n;

	if (slash == NULL)
		return "no socket path: write redis+unix:///PATH";
	if (slash > s && slash[-1] != '@' && strstr(slash, "@/") != NULL)
		return "a '/' in the user or password: write it as %2F";
	if (slash > s && slash[-1] != '@')
		return "a host in a redis+unix URL: write redis+unix:///PATH";
	if (slash > s && (why = userinfo(u, s, (size_t)(slash - s - 1))) !=
	    NULL)
		return why;
	n = strcspn(slash, "?");
	if (n < 2)
		return "no socket path: write redis+unix:///PATH";
	if (n > URL_PATH_MAX)
		return "a socket path longer than 103 bytes";
	memcpy(u->path, slash, n);
	u->path[n] = '\0';
	q = slash + n;
	if (*q == '\0')
		return NULL;
	if (strncmp(q, "?db=", 4) != 0)
		return "an unknown parameter: only ?db=N";
	if ((u->db = number(q + 4, strlen(q + 4), 0, INT_MAX)) == -1)
		return "invalid database: a number from 0 to 2147483647";
	return NULL;
}

/*
 * The URL as messages show it: from its parts, the password as "***", a
 * user without one as "USER:@" (read back, "USER@" would be a password).
 */
static void
show(struct store_url *u)
{
	char who[URL_SECRET_MAX + 8];
	size_t n;
	int i;

	who[0] = '\0';
	if (u->user[0] != '\0' || u->has_password)
		(void)snprintf(who, sizeof(who), "%s:%s@", u->user,
		    u->has_password ? "***" : "");
	if (u->unix_socket) {
		(void)snprintf(u->shown, sizeof(u->shown), UNIX_SCHEME "%s%s",
		    who, u->path);
		if (u->db != 0)
			(void)snprintf(u->shown + strlen(u->shown),
			    sizeof(u->shown) - strlen(u->shown), "?db=%ld",
			    u->db);
		return;
	}
	(void)snprintf(u->shown, sizeof(u->shown), "%s%s", u->sentinel ?
	    SENTINEL_SCHEME : TCP_SCHEME, who);
	for (i = 0; i < u->nodes; i++) {
		n = strlen(u->shown);
		(void)snprintf(u->shown + n, sizeof(u->shown) - n,
		    strchr(u->node[i].host, ':') != NULL ? "%s[%s]:%s" :
		    "%s%s:%s", i > 0 ? "," : "", u->node[i].host,
		    u->node[i].port);
	}
	n = strlen(u->shown);
	if (u->sentinel)
		(void)snprintf(u->shown + n, sizeof(u->shown) - n, "/%s",
		    u->service);
	n = strlen(u->shown);
	if (u->db != 0)
		(void)snprintf(u->shown + n, sizeof(u->shown) - n, "/%ld",
		    u->db);
}

static const char *
parse(const char *text, struct store_url *u)
{
	memset(u, 0, sizeof(*u));
	if (strchr(text, '#') != NULL)
		return "a '#' in the URL: write it as %23 in a password";
	if (strncmp(text, TCP_SCHEME, strlen(TCP_SCHEME)) == 0)
		return tcp_url(u, text + strlen(TCP_SCHEME));
	if (strncmp(text, UNIX_SCHEME, strlen(UNIX_SCHEME)) == 0) {
		u->unix_socket = 1;
		return unix_url(u, text + strlen(UNIX_SCHEME));
	}
	if (strncmp(text, SENTINEL_SCHEME, strlen(SENTINEL_SCHEME)) == 0) {
		u->sentinel = 1;
		return tcp_url(u, text + strlen(SENTINEL_SCHEME));
	}
	if (strncmp(text, "rediss://", 9) == 0)
		return "TLS is not supported: reach the server through a Unix "
		    "socket or a local TLS proxy (see retry-circuit(7))";
	return "not a store URL: use redis://[USER:PASSWORD@]HOST[:PORT][/DB], "
	    "redis+unix:///PATH[?db=N] or redis+sentinel://HOST[:PORT]/SERVICE";
}

/*
 * A URL as typed, with what may be a password as "***": from the first
 * ':' after the scheme (or the start) to the last '@', or all before that
 * '@' when it has no ':' (a password alone).  For messages about URLs
 * that could not be parsed.
 */
static const char *
url_mask(char *out, size_t size, const char *text)
{
	const char *start = strstr(text, "://"), *at, *colon;

	start = start == NULL ? text : start + 3;
	if ((at = strrchr(start, '@')) == NULL)
		(void)snprintf(out, size, "%s", text);
	else if ((colon = memchr(start, ':', (size_t)(at - start))) == NULL)
		(void)snprintf(out, size, "%.*s***%s", (int)(start - text),
		    text, at);
	else
		(void)snprintf(out, size, "%.*s***%s", (int)(colon + 1 - text),
		    text, at);
	return out;
}

/*
 * text[0..len) into out, as much as fits in size, with each occurrence
 * of a secret (NULL or empty: none) as "***": the words of a server, or
 * of a proxy, that may echo the password.  Masked before it is cut, so
 * that no part of a password shows at the cut either.
 */
void
url_hide(char *out, size_t size, const char *text, size_t len,
    const char *secret, const char *other)
{
	const char *const secrets[] = { secret, other };
	size_t i = 0, n = 0, k, slen;

	if (size == 0)
		return;
	while (i < len && n + 1 < size) {
		for (k = 0; k < 2; k++) {
			if (secrets[k] == NULL || (slen = strlen(secrets[k])) ==
			    0 || slen > len - i ||
			    memcmp(text + i, secrets[k], slen) != 0)
				continue;
			n += (size_t)snprintf(out + n, size - n, "***");
			n = n < size ? n : size - 1;
			i += slen;
			break;
		}
		if (k == 2)
			out[n++] = text[i++];
	}
	out[n] = '\0';
}

/*
 * Checks text, the value of opt, into *u.  Returns 0, or -1 with the one
 * line that says why in err: opt, the value with its password masked,
 * and the fix.
 */
int
url_check(const char *opt, const char *text, struct store_url *u,
    char *err, size_t size)
{
	char masked[URL_SHOWN_MAX];
	const char *why;

	if ((why = parse(text, u)) != NULL) {
		(void)snprintf(err, size, "%s '%s': %s", opt, url_mask(masked,
		    sizeof(masked), text), why);
		memset(u, 0, sizeof(*u));
		return -1;
	}
	u->given = 1;
	show(u);
	return 0;
}
