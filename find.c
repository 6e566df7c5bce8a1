/* SPDX-License-Identifier: ISC */
/*
 * find: the first place of a fixed string in bytes, where memmem(3) would
 * find it, by a search planned once per string: a memchr(3) skip loop on
 * its rarest byte, or Horspool's.  Pure: match.c's prefilter; fuzzed.
 */
#include "compat.h"	/* first: the feature macros */

#include <stddef.h>
#include <string.h>

#include "find.h"

/*
 * From this length on, Horspool's on pairs of bytes: its shifts, near the
 * length on text where the string's pairs are rare, outrun stops on a byte
 * that is rare only by the table.  Not two-way: a literal is at most
 * LITMAX bytes, so Horspool's worst case (a compare of the length per
 * byte) is bounded by a constant, and two-way's guarantee buys nothing.
 */
#define LONGLIT		16

/*
 * A string of SKIPLEN bytes or more whose rarest byte ranks above COMMON,
 * among the 31 commonest (a word of lower-case letters), gets no skip
 * loop: memchr(3) would stop every few dozen bytes, where Horspool's
 * strides of 7 or more run on.  A shorter one keeps it: those strides
 * are short too (' ms': 1.6 times faster by the loop, 'timed out': 1.2
 * times slower, on bench 10's text).
 */
#define COMMON		224
#define SKIPLEN		8

/*
 * The skip loop gives way to Horspool's when its byte proves common in
 * this text: after SKIPTRIES stops that gained fewer than SKIPGAIN bytes
 * of the string's length each on average (a call of memchr(3) and a
 * memcmp(3) cost about what Horspool's takes to cross that many).
 */
#define SKIPTRIES	8
#define SKIPGAIN	8

/* Horspool's table is indexed by a hash of the window's last two bytes. */
#define PAIR(a, b)	((((unsigned)(a) << 3) ^ (unsigned)(b)) & 0xff)

/*
 * How common each byte is in text and logs, as a rank: 255 the most (the
 * space), 0 the least.  Counted, as grep and ripgrep rank bytes, over this
 * machine's logs (dpkg, apt, alternatives), Debian's copyright files and
 * C headers, each kind weighed alike; bytes never seen, the higher the rarer.
 */
static const unsigned char rank[256] = {
	 68,  67,  66,  65,  64,  63,  62,  61,	/* 00 */
	 60, 217, 243,  59, 132, 191,  58,  57,	/* 08 */
	 56,  55,  54,  53,  52,  51,  50,  49,	/* 10 */
	 48,  47,  46,  45,  44,  43,  42,  41,	/* 18 */
	255, 157, 174, 190, 146, 171, 164, 176,	/* 20 */
	206, 205, 221, 194, 214, 240, 242, 233,	/* 28 */
	237, 235, 241, 219, 227, 208, 226, 198,	/* 30 */
	196, 203, 229, 189, 186, 179, 184, 154,	/* 38 */
	177, 218, 192, 212, 204, 224, 200, 195,	/* 40 */
	193, 222, 165, 178, 211, 197, 215, 216,	/* 48 */
	209, 170, 220, 223, 225, 199, 188, 185,	/* 50 */
	182, 187, 175, 167, 168, 166, 161, 236,	/* 58 */
	162, 251, 232, 244, 245, 254, 230, 228,	/* 60 */
	231, 252, 183, 207, 246, 234, 249, 248,	/* 68 */
	238, 180, 247, 250, 253, 239, 210, 202,	/* 70 */
	201, 213, 181, 173, 163, 172, 169,  40,	/* 78 */
	156, 103, 124, 112, 122, 107, 149, 101,	/* 80 */
	102,  92,  78,  74,  86, 127,  99,  89,	/* 88 */
	 91, 105, 148, 104, 147,  95,  79,  39,	/* 90 */
	137, 152,  73, 100, 151, 150,  82, 106,	/* 98 */
	121, 141, 116, 108, 143, 113,  94, 133,	/* a0 */
	131, 159,  98, 125,  77, 139, 126,  90,	/* a8 */
	123, 144, 111, 134, 135, 130, 153,  76,	/* b0 */
	120,  75, 118, 128, 140, 129, 109, 119,	/* b8 */
	 38,  37, 155, 158, 136, 145,  88,  36,	/* c0 */
	 81,  87,  35,  80,  34,  33,  93,  85,	/* c8 */
	142, 115,  32,  31,  30,  29,  28, 114,	/* d0 */
	 97,  96,  27,  26,  25,  24,  23,  22,	/* d8 */
	138, 110, 160,  21,  72,  84,  71,  70,	/* e0 */
	 69,  83,  20,  19,  18,  17,  16, 117,	/* e8 */
	 15,  14,  13,  12,  11,  10,   9,   8,	/* f0 */
	  7,   6,   5,   4,   3,   2,   1,   0,	/* f8 */
};

/*
 * The plan for lit[0, len), 1 <= len <= LITMAX: its rarest byte; for each
 * pair's hash, where the last pair of the string with that hash ends in
 * it (shift; 0: none, so no window can end in that pair), and how far to
 * move a window whose last pair has the hash of the string's last pair,
 * once that window proves no match (shift1).
 */
void
finder_init(struct finder *f, const char *lit, size_t len)
{
	const unsigned char *u = (const unsigned char *)lit;
	size_t i, last;

	memcpy(f->lit, lit, len);
	f->len = len;
	f->rare = 0;
	for (i = 1; i < len; i++)
		if (rank[u[i]] < rank[u[f->rare]])
			f->rare = i;
	f->skip = len < SKIPLEN ||
	    (len < LONGLIT && rank[u[f->rare]] <= COMMON);
	memset(f->shift, 0, sizeof(f->shift));
	for (i = 1; i + 1 < len; i++)
		f->shift[PAIR(u[i - 1], u[i])] = (unsigned char)i;
	last = len > 1 ? PAIR(u[len - 2], u[len - 1]) : 0;
	f->shift1 = (unsigned char)(len > 1 ? len - 1 - f->shift[last] : 1);
	if (len > 1)
		f->shift[last] = (unsigned char)(len - 1);
}

/*
 * Horspool's search of s[at, n) by the window's last pair, for a string
 * of 2 bytes or more: its first place, or NULL.  e is the window's end;
 * a pair that the string does not hold moves it a whole stride, and that
 * loop waits on no load, so the processor runs ahead through it.
 */
static const char *
horspool(const struct finder *f, const char *s, size_t n, size_t at)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t m1 = f->len - 1, e = at + m1, i;

	while (e < n) {
		while ((i = f->shift[PAIR(u[e - 1], u[e])]) == 0)
			if ((e += m1) >= n)
				return NULL;
		if (i < m1)
			e += m1 - i;	/* to end where that pair ends */
		else if (memcmp(s + e - m1, f->lit, m1 + 1) == 0)
			return s + e - m1;
		else
			e += f->shift1;
	}
	return NULL;
}

/*
 * memchr(3) for the rarest byte where it would stand in each place left,
 * memcmp(3) there; the places it passes cannot hold the string, so the
 * first it confirms is the first.
 */
static const char *
skip_loop(const struct finder *f, const char *s, size_t n)
{
	const char *hit;
	size_t at = 0, tries = 0;
	int b = (unsigned char)f->lit[f->rare];

	while (n - at >= f->len) {
		hit = memchr(s + at + f->rare, b, n - f->len + 1 - at);
		if (hit == NULL)
			return NULL;
		at = (size_t)(hit - s) - f->rare;
		if (memcmp(s + at, f->lit, f->len) == 0)
			return s + at;
		at++;
		if (++tries >= SKIPTRIES && f->len > 1 &&
		    at < tries * SKIPGAIN * f->len)
			return horspool(f, s, n, at);
	}
	return NULL;
}

/* The first place of f's string in s[0, n), or NULL: memmem(3)'s answer. */
const char *
finder_find(const struct finder *f, const char *s, size_t n)
{
	if (n < f->len)
		return NULL;
	return f->skip ? skip_loop(f, s, n) : horspool(f, s, n, 0);
}
