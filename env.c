/* SPDX-License-Identifier: ISC */
/*
 * What each attempt finds in its environment (RETRY_IDEMPOTENCY_KEY,
 * RETRY_ATTEMPT, RETRY_MAX_ATTEMPTS, RETRY_DEADLINE) and what retry
 * reads from it (an outer retry's key and deadline).
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "msg.h"
#include "parse.h"
#include "clock.h"
#include "random.h"
#include "sha256.h"

/* 16 bytes as a UUID of the version given, in its text form. */
static const char *
uuid(char *buf, size_t size, unsigned char u[16], int version)
{
	u[6] = (unsigned char)((u[6] & 0x0f) | version << 4);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);	/* RFC 9562 variant */
	(void)snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
	    u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
	    u[14], u[15]);
	return buf;
}

/*
 * The key of a nested run: a name-based UUID, version 8 with SHA-256
 * (RFC 9562, B.2), of retry's namespace, the inherited key and the
 * command line, each followed by a NUL byte.  Different inner commands
 * get different keys; the same one gets the same key in every attempt of
 * the outer run, so a server still tells a retry from a new request.
 */
static const char *
derived_key(char *buf, size_t size, const char *inherited,
    char *const argv[])
{
	/* 6f1c0a3e-8d2b-4f5e-9a77-3c1e2b4d5a60, retry's namespace. */
	static const unsigned char ns[16] = {
		0x6f, 0x1c, 0x0a, 0x3e, 0x8d, 0x2b, 0x4f, 0x5e, 0x9a, 0x77,
		0x3c, 0x1e, 0x2b, 0x4d, 0x5a, 0x60,
	};
	unsigned char h[32];
	struct sha256 s;
	int i;

	sha256_init(&s);
	sha256_add(&s, ns, sizeof(ns));
	sha256_add(&s, inherited, strlen(inherited) + 1);
	for (i = 0; argv[i] != NULL; i++)
		sha256_add(&s, argv[i], strlen(argv[i]) + 1);
	sha256_end(&s, h);
	return uuid(buf, size, h, 8);
}

/*
 * Whether this run is an attempt (or a hook) of an outer retry: that one
 * marks its attempts with RETRY_ATTEMPT, a number from 1.  A key that
 * came without it is a caller's own, which the caller meant to be used.
 */
int
under_outer_retry(void)
{
	const char *attempt = getenv("RETRY_ATTEMPT");
	long n;

	return attempt != NULL && parse_count(attempt, LONG_MAX, &n) == NULL &&
	    n >= 1;
}

/*
 * The key for every attempt: --key (given), else one derived from an
 * outer retry's key and this run's command, else a caller's key as it
 * came, else a new random UUID (version 4) written into buf.
 */
static const char *
idempotency_key(const char *given, char *const argv[], char *buf,
    size_t size)
{
	const char *inherited = getenv("RETRY_IDEMPOTENCY_KEY");
	unsigned char u[16];

	if (given != NULL)
		return given;
	if (inherited == NULL || *inherited == '\0')
		;	/* none: a new one below */
	else if (under_outer_retry())
		return derived_key(buf, size, inherited, argv);
	else
		return inherited;	/* the caller's own, such as a CI job's id */
	random_key_bytes(u);
	return uuid(buf, size, u, 4);
}

/*
 * The deadline on the monotonic clock: after (--deadline, 0: none) from
 * start, or an outer retry's RETRY_DEADLINE, whichever is earlier; NEVER
 * when neither.  *outer says whether RETRY_DEADLINE set it.
 */
int64_t
find_deadline(int64_t after, int64_t start, int *outer)
{
	const char *env = getenv("RETRY_DEADLINE");
	int64_t deadline = NEVER, when, left;

	*outer = 0;
	if (after != 0)
		deadline = start + after;
	if (env == NULL || *env == '\0')
		return deadline;
	if (!parse_unix_time(env, &when))
		fatalx("RETRY_DEADLINE '%s': invalid time", env);
	left = when - realtime_now();
	if (start + left < deadline) {
		deadline = start + left;
		*outer = 1;
	}
	return deadline;
}

void
export(const char *name, const char *value)
{
	if (setenv(name, value, 1) == -1)
		fatal("setenv %s", name);
}

/*
 * RETRY_ATTEMPT, rewritten in place: setenv(3) would keep every old value
 * allocated, and a run with unlimited attempts would grow without end.
 */
void
export_attempt(long attempt)
{
	static char var[] = "RETRY_ATTEMPT=-9223372036854775808";
	static int in_environ;

	(void)snprintf(var + strlen("RETRY_ATTEMPT="),
	    sizeof(var) - strlen("RETRY_ATTEMPT="), "%ld", attempt);
	if (!in_environ && putenv(var) != 0)
		fatal("putenv RETRY_ATTEMPT");
	in_environ = 1;
}

/* A time on the monotonic clock as RETRY_DEADLINE gives it: Unix time. */
const char *
deadline_text(char *buf, size_t size, int64_t at)
{
	int64_t when = realtime_now() + (at - monotonic_now());

	(void)snprintf(buf, size, "%lld.%03lld", (long long)(when / NS_PER_SEC),
	    (long long)(when % NS_PER_SEC / 1000000));
	return buf;
}

/*
 * What every attempt finds in its environment, but its number: the key
 * (--key, or from the environment and argv), the attempts, and the
 * deadline (monotonic) as Unix time, unless an outer retry's
 * RETRY_DEADLINE set it (outer).
 */
void
export_environment(const char *key, char *const argv[], long attempts,
    int64_t deadline, int outer)
{
	char buf[64];

	export("RETRY_IDEMPOTENCY_KEY", idempotency_key(key, argv, buf,
	    sizeof(buf)));
	(void)snprintf(buf, sizeof(buf), "%ld", attempts);
	export("RETRY_MAX_ATTEMPTS", buf);
	if (deadline == NEVER || outer)
		return;		/* an outer retry's value stands as it is */
	export("RETRY_DEADLINE", deadline_text(buf, sizeof(buf), deadline));
}

