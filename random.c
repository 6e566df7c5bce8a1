/* SPDX-License-Identifier: ISC */
/*
 * The kernel's randomness, read once for the whole run: the generator's
 * seed, a new idempotency key, the hint file's nonce, the CI logs'
 * secret, the run's ID and its trace's IDs.
 */
#include "compat.h"	/* first: the feature macros */

#if defined(HAVE_GETENTROPY) && defined(__APPLE__)
#include <sys/random.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/*
 * What a run draws, in one call: the seed, the key, the nonce, the
 * secret, the run's ID, the trace's ID, the run's span ID and the seed
 * of its attempts' span IDs.
 */
#define SEED_AT		0	/* 8 bytes */
#define KEY_AT		8	/* 16 bytes */
#define NONCE_AT	24	/* 8 bytes */
#define SECRET_AT	32	/* 16 bytes */
#define RUN_ID_AT	48	/* 16 bytes */
#define TRACE_AT	64	/* 16 bytes */
#define SPAN_AT		80	/* 8 bytes */
#define SPANS_SEED_AT	88	/* 8 bytes */
static unsigned char	 entropy[96];
static int		 have_entropy;

/*
 * One call for all that the run draws: getentropy(3), the getrandom(2)
 * system call under it, or /dev/urandom where the kernel lacks it.
 */
static void
kernel_random(void)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	if (have_entropy)
		return;
	have_entropy = 1;
#ifdef HAVE_GETENTROPY
	if (getentropy(entropy, sizeof(entropy)) == 0)
		return;
	if (errno != ENOSYS)	/* a kernel without getrandom(2) */
		fatal("getentropy");
#endif
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/urandom");
	while (done < sizeof(entropy)) {
		n = read(fd, entropy + done, sizeof(entropy) - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			fatal("/dev/urandom");
		}
		done += (size_t)n;
	}
	if (close(fd) == -1)
		fatal("/dev/urandom");
}

/* Whether any of the n bytes at b is not zero. */
static int
nonzero(const unsigned char *b, size_t n)
{
	while (n-- > 0)
		if (b[n] != 0)
			return 1;
	return 0;
}

/* The 16 bytes of a new random key (a UUID version 4). */
void
random_key_bytes(unsigned char u[16])
{
	kernel_random();
	memcpy(u, entropy + KEY_AT, 16);
}

/*
 * The 16 bytes of the run's ID (a UUID version 4): apart from the key's,
 * since two runs of one job may share a key but never an ID.
 */
void
random_run_id_bytes(unsigned char u[16])
{
	kernel_random();
	memcpy(u, entropy + RUN_ID_AT, 16);
}

/*
 * 16 bytes that nothing else is made from and that retry never shows:
 * what the CI logs' tokens are derived from (ci.c).
 */
void
random_secret_bytes(unsigned char s[16])
{
	kernel_random();
	memcpy(s, entropy + SECRET_AT, 16);
}

/*
 * --trace: the 16 bytes of a new trace's ID and the 8 of the run's span
 * ID, apart from all else; a W3C ID of zeros is invalid, so a draw of
 * zeros (one in 2^64) becomes 1.
 */
void
random_trace_bytes(unsigned char trace[16], unsigned char span[8])
{
	kernel_random();
	memcpy(trace, entropy + TRACE_AT, 16);
	memcpy(span, entropy + SPAN_AT, 8);
	if (!nonzero(span, 8))
		span[7] = 1;
	if (!nonzero(trace, 16))
		trace[15] = 1;
}

/* The 8 bytes of the draw from AT on, as a number. */
static uint64_t
random_word(int at)
{
	uint64_t word = 0;
	int i;

	kernel_random();
	for (i = at; i < at + 8; i++)
		word = word << 8 | entropy[i];
	return word;
}

/*
 * A seed from the kernel, never from the clock or the pid: processes
 * started in the same instant must draw different delays.
 */
uint64_t
random_seed(void)
{
	return random_word(SEED_AT);
}

/* The seed of the generator that draws the attempts' span IDs. */
uint64_t
random_spans_seed(void)
{
	return random_word(SPANS_SEED_AT);
}

/* 64 random bits apart from the seed and the key (the hint file's name). */
uint64_t
random_nonce(void)
{
	return random_word(NONCE_AT);
}
