/*
 * Parsers, random generator and delay schedule of retry.  Pure functions of
 * their arguments: everything here can be tested and fuzzed in isolation.
 */
#include "compat.h"	/* first: the feature macros */

#include <math.h>	/* isfinite(), a macro */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"

static const struct unit {
	const char	*name;
	int64_t		 ns;
} units[] = {			/* in the order they may follow one another */
	{ "h", 3600 * NS_PER_SEC },
	{ "m", 60 * NS_PER_SEC },
	{ "s", NS_PER_SEC },
	{ "ms", NS_PER_SEC / 1000 },
};
#define NUNITS	(sizeof(units) / sizeof(units[0]))

static const char *const jitter_names[] = {
	"none", "full", "equal", "decorrelated",
};

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Reads the longest unit name at *p, "ms" before "m".  Returns its index
 * in units[], or -1 when there is none.
 */
static int
scan_unit(const char **p)
{
	int best = -1;
	size_t best_len = 0, i, len;

	for (i = 0; i < NUNITS; i++) {
		len = strlen(units[i].name);
		if (strncmp(*p, units[i].name, len) == 0 && len > best_len) {
			best = (int)i;
			best_len = len;
		}
	}
	*p += best_len;
	return best;
}

/*
 * Reads a decimal number "12", "12.5" or ".5" at *p into its whole part
 * (held at DUR_MAX + 1 once it is larger) and fraction.  Returns 0 if
 * there is none.
 */
static int
scan_decimal(const char **p, int64_t *whole, double *frac)
{
	const char *s = *p;
	double scale = 0.1;
	int digits = 0;

	*whole = 0;
	*frac = 0;
	for (; is_digit(*s); s++, digits++)
		if (*whole > DUR_MAX / 10)
			*whole = DUR_MAX + 1;	/* too large, whatever follows */
		else
			*whole = *whole * 10 + (*s - '0');
	if (*s == '.') {
		s++;
		for (; is_digit(*s); s++, digits++) {
			*frac += (*s - '0') * scale;
			scale /= 10;
		}
	}
	if (digits == 0)
		return 0;
	*p = s;
	return 1;
}

/*
 * DUR: a number with a unit h, m, s or ms, or several in that order
 * ("1m30s"); a lone number without unit means seconds.
 */
const char *
parse_duration(const char *s, int64_t *ns)
{
	const char *p = s;
	double frac;
	int64_t total = 0, whole, part;
	int u, last = -1;

	do {
		if (!scan_decimal(&p, &whole, &frac))
			return "invalid duration";
		u = scan_unit(&p);
		if (u == -1) {
			if (last != -1 || *p != '\0')
				return "invalid duration";
			u = 2;	/* a bare number is seconds */
		} else if (u <= last)
			return "invalid duration";
		last = u;
		if (whole > DUR_MAX / units[u].ns)
			return "duration too large";
		part = whole * units[u].ns +
		    (int64_t)(frac * (double)units[u].ns + 0.5);
		if (part > DUR_MAX - total)
			return "duration too large";
		total += part;
	} while (*p != '\0');
	*ns = total;
	return NULL;
}

/* Reads a status 0-255 at *p. */
static int
scan_status(const char **p, int *status)
{
	const char *s = *p;

	*status = 0;
	if (!is_digit(*s))
		return 0;
	for (; is_digit(*s); s++) {
		*status = *status * 10 + (*s - '0');
		if (*status > 255)
			return 0;
	}
	*p = s;
	return 1;
}

/* CODES: statuses and ranges a-b, separated by commas; added to *set. */
const char *
parse_codes(const char *s, struct codes *set)
{
	struct codes add;
	const char *p = s;
	int lo, hi, i;

	memset(&add, 0, sizeof(add));
	for (;;) {
		if (!scan_status(&p, &lo))
			return "invalid exit status list";
		hi = lo;
		if (*p == '-') {
			p++;
			if (!scan_status(&p, &hi) || hi < lo)
				return "invalid exit status list";
		}
		for (i = lo; i <= hi; i++)
			codes_add(&add, i);
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return "invalid exit status list";
	}
	for (i = 0; i < 256; i++)
		if (codes_has(&add, i))
			codes_add(set, i);
	return NULL;
}

int
codes_has(const struct codes *set, int status)
{
	return status >= 0 && status <= 255 &&
	    (set->bits[status / 8] >> (status % 8)) & 1;
}

void
codes_add(struct codes *set, int status)
{
	set->bits[status / 8] |= (unsigned char)(1u << (status % 8));
}

/* A whole number 0..max, digits only. */
const char *
parse_count(const char *s, long max, long *n)
{
	long v = 0;

	if (*s == '\0')
		return "invalid number";
	for (; *s != '\0'; s++) {
		if (!is_digit(*s))
			return "invalid number";
		if (v > (max - (*s - '0')) / 10)
			return "number too large";
		v = v * 10 + (*s - '0');
	}
	*n = v;
	return NULL;
}

/* A decimal number >= 1, written as digits with at most one point. */
const char *
parse_factor(const char *s, double *x)
{
	const char *p = s;
	int64_t whole;
	double frac;

	if (!scan_decimal(&p, &whole, &frac) || *p != '\0')
		return "invalid number";
	/* strtod in the C locale (retry never calls setlocale) is exact to 1 ulp. */
	*x = strtod(s, NULL);
	if (!isfinite(*x))
		return "number too large";
	if (*x < 1)
		return "factor must be at least 1";
	return NULL;
}

const char *
parse_seed(const char *s, uint64_t *seed)
{
	uint64_t v = 0;

	if (*s == '\0')
		return "invalid seed";
	for (; *s != '\0'; s++) {
		if (!is_digit(*s))
			return "invalid seed";
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return "seed too large";
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*seed = v;
	return NULL;
}

const char *
parse_jitter(const char *s, enum jitter *j)
{
	size_t i;

	for (i = 0; i < sizeof(jitter_names) / sizeof(jitter_names[0]); i++)
		if (strcmp(s, jitter_names[i]) == 0) {
			*j = (enum jitter)i;
			return NULL;
		}
	return "unknown jitter mode";
}

const char *
jitter_name(enum jitter j)
{
	return jitter_names[j];
}

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Spreads one 64-bit seed over the whole state, as xoshiro's authors advise. */
void
rng_seed(struct rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** by Blackman and Vigna. */
uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1), from the top 53 bits: every double equally spaced. */
double
rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

void
backoff_init(struct backoff *b, int64_t base, double factor, int64_t cap,
    enum jitter jitter)
{
	b->base = base;
	b->factor = factor;
	b->cap = cap;
	b->jitter = jitter;
	b->prev = (double)base;
	b->grown = (double)base;
	b->failures = 0;
}

/*
 * min(cap, base x factor^(k-1)), kept as a running product: once it
 * passes the cap it stops growing, so no k or factor, however large, can
 * overflow it, and no pow() (nor libm, which costs start-up) is needed.
 */
static double
exponential_step(struct backoff *b, int *capped)
{
	double cap = (double)b->cap;

	if (b->failures > 1 && b->grown <= cap)
		b->grown *= b->factor;
	*capped = b->grown > cap;
	return *capped ? cap : b->grown;
}

/*
 * The delay after one more failed attempt, in nanoseconds, never above the
 * cap; *st (if not NULL) says how it was drawn.
 */
int64_t
backoff_next(struct backoff *b, struct rng *r, struct step *st)
{
	double lo, hi, step, d, cap = (double)b->cap;
	int capped;

	b->failures++;
	if (b->jitter == JITTER_DECORRELATED) {
		lo = (double)b->base;
		step = hi = 3 * b->prev;
		d = lo + rng_uniform(r) * (hi - lo);
		capped = d > cap;
		if (capped)
			d = cap;
		b->prev = d;
	} else {
		step = hi = exponential_step(b, &capped);
		if (b->jitter == JITTER_NONE)
			lo = hi;
		else if (b->jitter == JITTER_FULL)
			lo = 0;
		else
			lo = hi / 2;
		d = lo + rng_uniform(r) * (hi - lo);
	}
	if (d > cap)
		d = cap;
	if (st != NULL) {
		st->step = (int64_t)step;	/* at most 3 x cap: it fits */
		st->lo = (int64_t)lo;
		st->hi = (int64_t)hi;
		st->delay = (int64_t)d;
		st->capped = capped;
	}
	return (int64_t)d;
}

static const char *const month_names[] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
	"Nov", "Dec",
};

/* Days from 1970-01-01 to a date of the Gregorian calendar (H. Hinnant). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* An HTTP-date in its preferred form, "Sun, 06 Nov 1994 08:49:37 GMT". */
static int
parse_http_date(const char *s, int64_t *unix_sec)
{
	char day[4], mon[4];
	int d, m, y, hh, mm, ss, end = -1;

	/* Every number is range-checked below. */
	/* NOLINTNEXTLINE(cert-err34-c) */
	if (sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", day,
	    &d, mon, &y, &hh, &mm, &ss, &end) != 7 || end < 0 || s[end] != '\0')
		return 0;
	for (m = 0; m < 12 && strcmp(mon, month_names[m]) != 0; m++)
		continue;
	if (m == 12 || d < 1 || d > 31 || y < 1970 || hh < 0 || hh > 23 ||
	    mm < 0 || mm > 59 || ss < 0 || ss > 60)
		return 0;
	*unix_sec = days_from_civil(y, m + 1, d) * 86400 + (int64_t)hh * 3600 +
	    (int64_t)mm * 60 + ss;
	return 1;
}

/*
 * A Retry-After hint: seconds, a DUR or an HTTP-date, white space around it
 * ignored.  Returns NULL with the delay from now_ns (Unix time in ns), or
 * why it is no hint.
 */
const char *
parse_hint(const char *text, int64_t now_ns, int64_t *delay)
{
	char buf[128];
	size_t len;
	int64_t when;

	while (*text == ' ' || (*text >= '\t' && *text <= '\r'))
		text++;
	len = strlen(text);
	while (len > 0 && (text[len - 1] == ' ' ||
	    (text[len - 1] >= '\t' && text[len - 1] <= '\r')))
		len--;
	if (len == 0)
		return "empty";
	if (len >= sizeof(buf))
		return "too long";
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (buf[0] == '-')
		return "negative";
	if (parse_duration(buf, delay) == NULL)
		return *delay == 0 ? "zero" : NULL;
	if (!parse_http_date(buf, &when))
		return "neither a delay nor an HTTP-date";
	if (when <= now_ns / NS_PER_SEC)
		return "a date that has passed";
	if (when - now_ns / NS_PER_SEC > DUR_MAX / NS_PER_SEC)
		*delay = DUR_MAX;
	else
		*delay = when * NS_PER_SEC - now_ns;
	return NULL;
}
