/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: check_pattern() on any bytes, the gate in front of
 * regcomp() for --on-output and --stop-on-output; then, for a pattern it
 * lets through, relay's faster matching (literals found with memmem, runs
 * of lines with REG_NEWLINE) against regexec(3) on each line by itself,
 * on any text, fed whole and in chunks of any size.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common.h"
#include "../../relay.h"

#define TEXTMAX	(4 * LINEMAX + 64)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct relay	 r;	/* large: not on the stack */
static char		 text[TEXTMAX + 1], copy[TEXTMAX + 1];

/*
 * The text after the pattern's NUL; 0x01 k c stands for k x 24 bytes c,
 * so that short inputs make lines longer than LINEMAX.
 */
static size_t
make_text(const uint8_t *d, size_t n)
{
	size_t len = 0, k;

	while (n > 0 && len < TEXTMAX) {
		if (d[0] == 1 && n >= 3) {
			for (k = (size_t)d[1] * 24; k > 0 && len < TEXTMAX; k--)
				text[len++] = (char)d[2];
			d += 3;
			n -= 3;
		} else {
			text[len++] = (char)*d++;
			n--;
		}
	}
	return len;
}

/*
 * The promise: each line, its first LINEMAX - 1 bytes, by itself, NULs
 * and all where regexec(3) has REG_STARTEND, else up to its first NUL.
 */
static int
reference(const regex_t *re, const char *s, size_t n)
{
	char line[LINEMAX];
	const char *end = s + n, *nl;
	size_t len;
	regmatch_t whole;
	int flags = 0;

	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		len = (size_t)((nl != NULL ? nl : end) - s);
		if (len > LINEMAX - 1)
			len = LINEMAX - 1;
		memcpy(line, s, len);
		line[len] = '\0';
		whole.rm_so = 0;
		whole.rm_eo = (regoff_t)len;
#ifdef HAVE_REG_STARTEND
		flags = REG_STARTEND;
#endif
		if (regexec(re, line, 1, &whole, flags) == 0)
			return 1;
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	return 0;
}

/* relay's way, in chunks of step bytes (the last may be shorter). */
static int
relayed(const regex_t *re, const char *pat, size_t n, size_t step)
{
	size_t at, k;
	int hit;

	memset(&r, 0, sizeof(r));
	r.hold_all = -1;
	r.out.line = r.outline;
	r.on = re;
	if (matcher_init(&r.m_on, re, pat) == -1)
		abort();
	memcpy(copy, text, n);
	for (at = 0; at < n; at += k) {
		k = n - at < step ? n - at : step;
		relay_match_text(&r, copy + at, k, 0);
	}
	relay_match_text(&r, copy + n, 0, 1);
	hit = r.on_hit;
	matcher_free(&r.m_on);
	/* In place, but given back. */
	if (memcmp(copy, text, n) != 0)
		abort();
	return hit;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t plen = nul != NULL ? (size_t)(nul - data) : size, n;
	char *s = malloc(plen + 1);
	regex_t re;
	int want;

	if (s == NULL)
		return 0;
	memcpy(s, data, plen);
	s[plen] = '\0';
	/* An escaped digit outside a bracket expression is refused. */
	if (check_pattern(s) == NULL && s[0] == '\\' && s[1] >= '1' &&
	    s[1] <= '9')
		abort();
	if (nul != NULL && check_pattern(s) == NULL &&
	    regcomp(&re, s, REG_EXTENDED | REG_NOSUB) == 0) {
		n = make_text(nul + 1, size - plen - 1);
		want = reference(&re, text, n);
		if (relayed(&re, s, n, n + 1) != want ||
		    relayed(&re, s, n, 1 + (n > 0 ? (size_t)text[0] & 0x7f : 0)) != want ||
		    relayed(&re, s, n, 4093) != want)
			abort();
		regfree(&re);
	}
	free(s);
	return 0;
}
