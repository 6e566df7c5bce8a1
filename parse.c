/* SPDX-License-Identifier: ISC */
/*
 * The values on retry's command line and in its environment, read and
 * written back: durations, exit status lists, counts, signals, times and
 * Retry-After hints.  Pure functions of their arguments, so that tests and
 * fuzzers can drive them directly.
 */
#include "compat.h"	/* first: the feature macros */

#include <limits.h>
#include <math.h>	/* isfinite(), a macro */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common.h"

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

#define DUR_SYNTAX	"invalid duration (a number and a unit, ms, s, m or h, " \
			"or several, as in 1m30s)"
#define CODES_SYNTAX	"invalid exit status list (statuses 0 to 255 and " \
			"ranges such as 75-78, joined by commas without spaces)"

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
			return DUR_SYNTAX;
		u = scan_unit(&p);
		if (u == -1) {
			if (last != -1 || *p != '\0')
				return DUR_SYNTAX;
			u = 2;	/* a bare number is seconds */
		} else if (u <= last)
			return DUR_SYNTAX;
		last = u;
		if (whole > DUR_MAX / units[u].ns)
			return "duration too large (at most about 31 years)";
		part = whole * units[u].ns +
		    (int64_t)(frac * (double)units[u].ns + 0.5);
		if (part > DUR_MAX - total)
			return "duration too large (at most about 31 years)";
		total += part;
	} while (*p != '\0');
	*ns = total;
	return NULL;
}

/*
 * Reads the digits at *p into *v and moves *p past them: 0; -1 when there
 * are none; -2 when the number passes max, which it never computes past.
 */
static int
scan_digits(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t d;

	if (!is_digit(*s))
		return -1;
	for (*v = 0; is_digit(*s); s++) {
		d = (uint64_t)(*s - '0');
		if (d > max || *v > (max - d) / 10)
			return -2;
		*v = *v * 10 + d;
	}
	*p = s;
	return 0;
}

/* Reads a status 0-255 at *p. */
static int
scan_status(const char **p, int *status)
{
	uint64_t v;

	if (scan_digits(p, 255, &v) != 0)
		return 0;
	*status = (int)v;
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
			return CODES_SYNTAX;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!scan_status(&p, &hi) || hi < lo)
				return CODES_SYNTAX;
		}
		for (i = lo; i <= hi; i++)
			codes_add(&add, i);
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return CODES_SYNTAX;
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
	uint64_t v;

	switch (scan_digits(&s, (uint64_t)max, &v)) {
	case -2:
		return "number too large";
	case -1:
		return "invalid number";
	}
	if (*s != '\0')
		return "invalid number";
	*n = (long)v;
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
	uint64_t v;

	switch (scan_digits(&s, UINT64_MAX, &v)) {
	case -2:
		return "seed too large";
	case -1:
		return "invalid seed";
	}
	if (*s != '\0')
		return "invalid seed";
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

static const struct signame {
	const char	*name;
	int		 number;
} signames[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "SYS", SIGSYS },
#ifdef SIGWINCH
	{ "WINCH", SIGWINCH },
#endif
#ifdef SIGIO
	{ "IO", SIGIO },
#endif
#ifdef SIGPWR
	{ "PWR", SIGPWR },
#endif
};
#define NSIGNAMES	(sizeof(signames) / sizeof(signames[0]))

/* "SIGKILL", or "signal 34" for one without a name here. */
const char *
signal_name(char *buf, size_t size, int sig)
{
	size_t i;

	for (i = 0; i < NSIGNAMES; i++)
		if (signames[i].number == sig) {
			(void)snprintf(buf, size, "SIG%s", signames[i].name);
			return buf;
		}
	(void)snprintf(buf, size, "signal %d", sig);
	return buf;
}

/* SIG: a name with or without SIG, in any case, or a number. */
int
parse_signal(const char *s, int *sig)
{
	sigset_t probe;
	long n;
	size_t i;

	if (parse_count(s, INT_MAX, &n) == NULL) {
		/* sigaddset knows which numbers are signals here. */
		sigemptyset(&probe);
		if (n == 0 || sigaddset(&probe, (int)n) == -1)
			return 0;
		*sig = (int)n;
		return 1;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < NSIGNAMES; i++)
		if (strcasecmp(s, signames[i].name) == 0) {
			*sig = signames[i].number;
			return 1;
		}
	return 0;
}

/* Unix time "1767225600.123" in ns; 0 when malformed or past year 2255. */
int
parse_unix_time(const char *s, int64_t *ns)
{
	int64_t frac = 0, scale = NS_PER_SEC;
	uint64_t sec;

	if (scan_digits(&s, UINT64_C(9000000000), &sec) != 0)
		return 0;
	if (*s == '.')		/* "5." is 5, as in durations */
		for (s++; is_digit(*s); s++)
			if (scale > 1)
				frac += (*s - '0') * (scale /= 10);
	if (*s != '\0')
		return 0;
	*ns = (int64_t)sec * NS_PER_SEC + frac;
	return 1;
}

/*
 * A duration as every message shows one: seconds with three decimals and
 * the unit, cut to the millisecond, "2.000s", "0.050s", "90.000s".
 */
const char *
fmt_duration(char *buf, size_t size, int64_t ns)
{
	int64_t ms = ns / 1000000;

	(void)snprintf(buf, size, "%lld.%03llds", (long long)(ms / 1000),
	    (long long)(ms % 1000));
	return buf;
}

/*
 * sec + ns as seconds with exactly three decimals, cut (not rounded) to
 * the millisecond, so that a total short of the deadline never shows it.
 */
const char *
fmt_seconds(char *buf, size_t size, int64_t sec, int64_t ns)
{
	int64_t ms = ns / 1000000;

	(void)snprintf(buf, size, "%lld.%03lld", (long long)sec + ms / 1000,
	    (long long)ms % 1000);
	return buf;
}

/*
 * A real time in ns as UTC, "2026-12-07T08:00:00Z": whole seconds, as a
 * mail read later, on another host, wants it; "@SECONDS" if it cannot.
 */
const char *
fmt_utc(char *buf, size_t size, int64_t t)
{
	time_t s = (time_t)(t / NS_PER_SEC);
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)snprintf(buf, size, "@%lld", (long long)s);
	return buf;
}

/* "1-125,128-255": a set as the shortest list of statuses and ranges. */
const char *
fmt_codes(char *buf, size_t size, const struct codes *set)
{
	size_t len = 0;
	int lo, hi;

	buf[0] = '\0';
	for (lo = 0; lo < 256; lo = hi + 1) {
		hi = lo;
		if (!codes_has(set, lo))
			continue;
		while (hi < 255 && codes_has(set, hi + 1))
			hi++;
		len += (size_t)snprintf(buf + len, size - len,
		    lo == hi ? "%s%d" : "%s%d-%d", len ? "," : "", lo, hi);
		if (len >= size)
			break;
	}
	return buf[0] ? buf : "none";
}

/* The length of the valid UTF-8 sequence at s (NUL-terminated), or 0. */
size_t
utf8_length(const unsigned char *s)
{
	size_t n, i;
	unsigned long c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past Unicode are not valid. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* ---- Hints: Retry-After values and HTTP answers ------------------------ */

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

/* A day, in ns: how far back a RateLimit-Reset may lie and be a time. */
#define RESET_TIME_SLACK	(86400 * NS_PER_SEC)

/* The headers that a hint reads, and what each tells. */
enum hint_kind { RETRY_AFTER, RESET, REMAINING };

static const struct hint_header {
	const char	*name;		/* as the note of a delay shows it */
	enum hint_kind	 kind;
} hint_headers[] = {
	{ "Retry-After", RETRY_AFTER },
	{ "RateLimit-Reset", RESET },		/* the IETF draft's, GitLab's */
	{ "X-RateLimit-Reset", RESET },		/* GitHub's, GitLab's */
	{ "RateLimit-Remaining", REMAINING },
	{ "X-RateLimit-Remaining", REMAINING },
};
#define NHINT_HEADERS	(sizeof(hint_headers) / sizeof(hint_headers[0]))

/* A value's bytes text[0, *len) without the white space (and CR) around. */
static const char *
trim(const char *text, size_t *len)
{
	while (*len > 0 && (*text == ' ' || *text == '\t')) {
		text++;
		(*len)--;
	}
	while (*len > 0 && (text[*len - 1] == ' ' ||
	    (text[*len - 1] >= '\t' && text[*len - 1] <= '\r')))
		(*len)--;
	return text;
}

/*
 * A header's value, white space around it left out, into buf as a string
 * of at most size - 1 bytes; NULL, with why it is no hint in *why, when
 * it is empty, too long or negative.
 */
static const char *
value_text(const char *text, size_t len, char *buf, size_t size,
    const char **why)
{
	text = trim(text, &len);
	*why = len == 0 ? "empty" : len >= size ? "too long" :
	    text[0] == '-' ? "negative" : NULL;
	if (*why != NULL)
		return NULL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return buf;
}

/*
 * One Retry-After value: seconds, a DUR or an HTTP-date, white space
 * around it ignored.  Returns NULL with the delay from now_ns (Unix time
 * in ns), or why it is no hint.
 */
static const char *
parse_hint_value(const char *text, size_t len, int64_t now_ns,
    int64_t *delay)
{
	char buf[128];
	const char *why;
	int64_t when;

	if (value_text(text, len, buf, sizeof(buf), &why) == NULL)
		return why;
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

/*
 * One RateLimit-Reset or X-RateLimit-Reset value: seconds from now, as
 * the IETF draft sends it, or a Unix time, as GitHub and GitLab do.  A
 * number larger than now less a day is a time: no server asks for a wait
 * of decades, and a reset just past, or from a server whose clock is
 * behind ours, still reads as a time (past, so no hint), not as decades
 * of seconds.  Returns NULL with the delay from now_ns, or why it is no
 * hint.
 */
static const char *
parse_reset_value(const char *text, size_t len, int64_t now_ns,
    int64_t *delay)
{
	char buf[32];
	const char *why;
	int64_t v;

	if (value_text(text, len, buf, sizeof(buf), &why) == NULL)
		return why;
	if (!parse_unix_time(buf, &v))
		return "neither seconds nor a Unix time";
	if (v > now_ns - RESET_TIME_SLACK) {
		if (v <= now_ns)
			return "a Unix time that has passed";
		v -= now_ns;
	} else if (v == 0)
		return "zero";
	*delay = v > DUR_MAX ? DUR_MAX : v;
	return NULL;
}

/* A RateLimit-Remaining value of 0: the limit is spent. */
static int
spent(const char *text, size_t len)
{
	size_t i;

	text = trim(text, &len);
	for (i = 0; i < len; i++)
		if (text[i] != '0')
			return 0;
	return len > 0;
}

/*
 * The status of an HTTP status line, "HTTP/1.1 404 Not Found" or
 * "HTTP/2 429" (HTTP/2 and 3 have no reason phrase), 100 to 599; 0 when
 * line[0, len) is none.
 */
static int
status_of(const char *line, size_t len)
{
	const char *s, *end = line + len;
	int status = 0, i;

	if (len < 6 || strncmp(line, "HTTP/", 5) != 0 || !is_digit(line[5]))
		return 0;
	s = line + 6;
	if (end - s >= 2 && s[0] == '.' && is_digit(s[1]))
		s += 2;
	if (s == end || *s++ != ' ')
		return 0;
	for (i = 0; i < 3; i++, s++) {
		if (s == end || !is_digit(*s))
			return 0;
		status = status * 10 + (*s - '0');
	}
	if (s < end && *s != ' ' && *s != '\r')
		return 0;
	return status >= 100 && status <= 599 ? status : 0;
}

/* A character of an HTTP token, as a header's name is (RFC 9110, 5.6.2). */
static int
is_tchar(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * A header "Name: value" in line[0, len), which need not end there: 1,
 * with its value in *value and, in *h, the entry of hint_headers that it
 * is (the name in any case), or NULL for another header; else 0.
 */
static int
header(const char *line, size_t len, const struct hint_header **h,
    const char **value)
{
	size_t n, i;

	*h = NULL;
	for (n = 0; n < len && is_tchar(line[n]); n++)
		continue;
	if (n == 0 || n == len || line[n] != ':')
		return 0;
	*value = line + n + 1;
	for (i = 0; i < NHINT_HEADERS; i++)
		if (strlen(hint_headers[i].name) == n &&
		    strncasecmp(line, hint_headers[i].name, n) == 0)
			*h = &hint_headers[i];
	return 1;
}

/*
 * What a line of an attempt's stderr is to a hint: a status line, one of
 * the headers that a hint reads, or neither; line[0, len) need not end
 * there.  relay.c keeps what matters for --hint-from-stderr by it, so
 * that the names are known here alone.
 */
enum hint_line
hint_line(const char *line, size_t len)
{
	const struct hint_header *h;
	const char *value;

	if (status_of(line, len) != 0)
		return HINT_LINE_STATUS;
	return header(line, len, &h, &value) && h != NULL ? HINT_LINE_HEADER :
	    HINT_LINE_OTHER;
}

/*
 * Where the last response in text begins: at its status line, whose
 * status *status gets; at text, with 0, when there is no status line.
 * curl -D writes every response it gets (a 100 Continue, the redirects,
 * the last), and only the last is the answer to the request.
 */
static const char *
last_response(const char *text, int *status)
{
	const char *line, *end, *start = text;
	int s;

	*status = 0;
	for (line = text; *line != '\0'; line = *end != '\0' ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if ((s = status_of(line, (size_t)(end - line))) != 0) {
			start = line;
			*status = s;
		}
	}
	return start;
}

/* The good values of one kind so far, the last of them kept. */
struct found {
	int64_t		 delay;
	const char	*from;		/* the header that gave it, or NULL */
	const char	*why;		/* why the last bad one is no hint */
};

/* What the lines of the last response, or of a text without one, tell. */
struct reading {
	int64_t		 now_ns;
	int		 in_response;	/* after a status line: no value alone */
	struct found	 after;		/* Retry-After, or values alone */
	struct found	 reset;		/* RateLimit-Reset, X-RateLimit-Reset */
	int		 spent;		/* a remaining count of 0 */
	int		 asked;		/* a Retry-After header, good or bad */
	int		 headers;	/* a status line or a header */
};

static void
keep(struct found *f, const char *why, int64_t delay, const char *from)
{
	if (why != NULL) {
		f->why = why;
		return;
	}
	f->delay = delay;
	f->from = from;
}

/* A value alone on its line: a hint, as a Retry-After's value is. */
static void
read_value(struct reading *rd, const char *line, size_t len)
{
	const char *why;
	int64_t d = 0;

	/* In a response, a line that is no header is no value either. */
	if (rd->in_response)
		return;
	why = parse_hint_value(line, len, rd->now_ns, &d);
	/* A blank line between others says nothing. */
	if (why == NULL || strcmp(why, "empty") != 0)
		keep(&rd->after, why, d, "Retry-After");
}

/* One line of the last response, or of a text without one. */
static void
read_line(struct reading *rd, const char *line, size_t len)
{
	const struct hint_header *h;
	const char *value, *why;
	int64_t d = 0;

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		rd->headers = 1;	/* its status line, or one unknown */
		return;
	}
	if (!header(line, len, &h, &value)) {
		read_value(rd, line, len);
		return;
	}
	rd->headers = 1;
	len -= (size_t)(value - line);
	if (h == NULL)
		return;
	switch (h->kind) {
	case RETRY_AFTER:
		rd->asked = 1;
		why = parse_hint_value(value, len, rd->now_ns, &d);
		keep(&rd->after, why, d, h->name);
		break;
	case RESET:
		why = parse_reset_value(value, len, rd->now_ns, &d);
		keep(&rd->reset, why, d, h->name);
		break;
	case REMAINING:
		rd->spent |= spent(value, len);
		break;
	}
}

/*
 * What an attempt wrote to RETRY_AFTER_FILE (or --hint-from-stderr
 * kept): a value alone, values a line each (a wrapper's sed of the
 * headers through a redirect), or HTTP responses as curl -D writes them,
 * of which the last counts.  Into *h: that response's status; whether it
 * asks to be called again later (429, a Retry-After, or a remaining count
 * of 0, as GitHub's 403 for a spent rate limit has); and the delay, from
 * the last good Retry-After or value alone, else, in a rate limit (429,
 * or a limit spent), from the last good reset, which GitHub sends with
 * every response; or why there is none: that of the last bad value, or
 * "empty" (nothing said), or "no Retry-After header".
 */
void
parse_hint(const char *text, int64_t now_ns, struct hint *h)
{
	struct reading rd;
	const char *line, *end;
	int limited;

	memset(h, 0, sizeof(*h));
	memset(&rd, 0, sizeof(rd));
	rd.now_ns = now_ns;
	line = last_response(text, &h->status);
	rd.in_response = h->status != 0;
	for (; *line != '\0'; line = *end != '\0' ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		read_line(&rd, line, (size_t)(end - line));
	}
	limited = h->status == 429 || rd.spent;
	h->rate_limited = limited || rd.asked;
	/* Retry-After wins; a reset of a response that is no rate limit
	 * is no hint (GitHub's 500 with the hour's reset gets the backoff). */
	if (rd.after.from == NULL && limited && rd.reset.from != NULL)
		rd.after = rd.reset;
	else if (rd.after.from == NULL && limited && rd.after.why == NULL)
		rd.after.why = rd.reset.why;
	if ((h->from = rd.after.from) != NULL)
		h->delay = rd.after.delay;
	else
		h->why = rd.after.why != NULL ? rd.after.why : rd.headers ?
		    "no Retry-After header" : "empty";
}

/* ---- The circuit's records and names ---------------------------------- */

/*
 * Reads a decimal number at *p, digits only, into *v: -1 when there is
 * none or it passes max (which it never computes past).
 */
int
scan_bounded(char **p, int64_t max, int64_t *v)
{
	const char *s = *p;
	uint64_t u;

	if (scan_digits(&s, (uint64_t)max, &u) != 0)
		return -1;
	*v = (int64_t)u;
	*p += s - *p;
	return 0;
}

/*
 * A circuit NAME: letters, digits, '.', '_' and '-', not beginning with
 * a dot (retry's own files beside the records do: .NAME.lock, .NAME.new).
 */
int
valid_circuit_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 200 || s[0] == '.')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* ---- Patterns for --on-output and --stop-on-output --------------------- */

#define PATTERN_WEIGHT_MAX	1000
#define PATTERN_DEPTH_MAX	64

/*
 * A bracket expression of an ERE, from its '[' to past its ']' (a ']'
 * first, and the insides of [: :], [= =] and [. .], are its own); NULL
 * when it is not closed.
 */
const char *
bracket_end(const char *p)
{
	const char *end;

	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p != '\0' && *p != ']') {
		if (p[0] == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			end = strchr(p + 2, p[1]);
			while (end != NULL && end[1] != ']')
				end = strchr(end + 1, p[1]);
			if (end == NULL)
				return NULL;
			p = end + 2;
		} else
			p++;
	}
	return *p == ']' ? p + 1 : NULL;
}

/* The largest count of {m}, {m,} or {m,n} at *p (past its '{'). */
static long
interval(const char **p)
{
	const char *s = *p;
	long m = 0, n = -1;

	for (; is_digit(*s); s++)	/* held at 100000: too many anyway */
		m = m < 100000 ? m * 10 + (*s - '0') : m;
	if (*s == ',') {
		s++;
		if (is_digit(*s))
			for (n = 0; is_digit(*s); s++)
				n = n < 100000 ? n * 10 + (*s - '0') : n;
		else
			n = m + 1;	/* {m,}: m copies and a star */
	}
	if (*s == '}')
		s++;
	*p = s;
	return n > m ? n : m > 0 ? m : 1;
}

/*
 * The repetitions after an atom of weight w: each copy is one more in the
 * compiled pattern (a+ is aa*).  *why gets a reason to refuse two in a row.
 */
static long
repeat(const char **p, long w, const char **why)
{
	int n = 0;

	long times;

	while (**p == '*' || **p == '+' || **p == '?' || **p == '{') {
		if (n++ > 0 && *why == NULL)
			*why = "a repetition of a repetition (such as a**) is "
			    "not allowed";
		times = *(*p)++ == '{' ? interval(p) : 2;
		if (w <= PATTERN_WEIGHT_MAX)
			w *= times;
	}
	return w > PATTERN_WEIGHT_MAX ? PATTERN_WEIGHT_MAX + 1 : w;
}

/*
 * NULL, or why an extended regular expression is refused before the C
 * library's regcomp() sees it: what can take more than linear time or a
 * great deal of memory there.  Back-references (glibc accepts them in
 * EREs and matches them by backtracking), a repetition of a repetition
 * (undefined in POSIX; glibc spends gigabytes on a run of them), groups
 * nested deeper than PATTERN_DEPTH_MAX, and a pattern of more than
 * PATTERN_WEIGHT_MAX atoms once its repetitions are expanded, as
 * regcomp() expands them.  What is left is matched in time linear in the
 * line, whose length relay.c bounds.  The weight of each open group is
 * kept on a stack, so that no nesting can run retry out of its own.
 */
const char *
check_pattern(const char *re)
{
	long sum[PATTERN_DEPTH_MAX + 1], w;
	const char *p = re, *q, *why = NULL;
	int depth = 0;

	sum[0] = 0;
	while (*p != '\0') {
		if (*p == '(') {
			if (depth == PATTERN_DEPTH_MAX)
				return "groups nested too deep (more than 64)";
			sum[++depth] = 0;
			p++;
			continue;
		}
		if (*p == '|') {	/* branches add up */
			p++;
			continue;
		}
		if (*p == ')' && depth > 0) {
			w = sum[depth--];
			p++;
		} else if (*p == '[') {
			w = 1;
			/* Unclosed: regcomp says so. */
			p = (q = bracket_end(p)) != NULL ? q : p + strlen(p);
		} else if (*p == '\\') {
			if (p[1] >= '1' && p[1] <= '9' && why == NULL)
				why = "back-references are not allowed: they can "
				    "take exponential time";
			w = 1;
			p += p[1] != '\0' ? 2 : 1;
		} else {
			w = 1;
			p++;
		}
		w = repeat(&p, w, &why);
		sum[depth] += w;
		if (sum[depth] > PATTERN_WEIGHT_MAX)
			sum[depth] = PATTERN_WEIGHT_MAX + 1;
	}
	while (depth > 0)	/* unclosed: regcomp says so */
		sum[depth - 1] += sum[depth], depth--;
	if (why == NULL && sum[0] > PATTERN_WEIGHT_MAX)
		why = "too large once its repetitions are expanded (more than "
		    "1000 atoms)";
	return why;
}
