/* SPDX-License-Identifier: ISC */
/*
 * Line matching for relay.c: a pattern's literals, found by reading the
 * ERE, let find.c's search skip the lines that cannot match; a pattern without
 * them is tried on runs of lines at once (REG_NEWLINE) and each line of a
 * run that matched is then matched by itself.  A line longer than LINEMAX
 * is matched on its start, one with a NUL whole where the libc allows.
 */
#include "compat.h"	/* first: the feature macros */

#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "match.h"

/*
 * A set of fixed strings one of which every match of a pattern holds.
 * Found by reading the ERE conservatively: a run of plain characters that
 * no quantifier follows, or a group without a quantifier whose every
 * branch has such a set; anything doubtful (an escape of GNU's, a
 * bracket, an interval) ends a run and adds nothing.  Any part of a
 * string that every match holds is held by every match too, so cutting a
 * run short is always safe.
 */
struct litset {
	int	 n;
	size_t	 len[NLIT];
	char	 s[NLIT][LITMAX];
};

static int	 alternatives(const char **, int, struct litset *);

static size_t
shortest(const struct litset *l)
{
	size_t m = SIZE_MAX;
	int i;

	for (i = 0; i < l->n; i++)
		if (l->len[i] < m)
			m = l->len[i];
	return l->n > 0 ? m : 0;
}

/* Keeps in best the set with the longest shortest string, then the smaller. */
static void
offer(struct litset *best, const struct litset *c)
{
	size_t a = shortest(c), b = shortest(best);

	if (a > 0 && (a > b || (a == b && c->n < best->n)))
		*best = *c;
}

static void
offer_run(struct litset *best, const char *run, size_t len)
{
	struct litset c;

	if (len == 0)
		return;
	c.n = 1;
	c.len[0] = len;
	memcpy(c.s[0], run, len);
	offer(best, &c);
}

/* Past a quantifier at *pp, if any: 1 if there was one, -1 if unclosed. */
static int
quantifier(const char **pp)
{
	const char *p = *pp;
	int any = 0;

	for (;;) {
		if (*p == '*' || *p == '+' || *p == '?')
			p++;
		else if (*p == '{') {
			if ((p = strchr(p, '}')) == NULL)
				return -1;
			p++;
		} else
			break;
		any = 1;
	}
	*pp = p;
	return any;
}

/*
 * One branch, up to '|', ')' or the end: in best the best set that one of
 * its parts gives (n 0: none).  -1: a pattern this reading gives up on.
 */
/* Recursive through alternatives() for a group, 64 groups deep at most. */
static int
branch(const char **pp, int depth, struct litset *best)	/* NOLINT(misc-no-recursion) */
{
	const char *p = *pp;
	char run[LITMAX];
	size_t len = 0;
	struct litset g;
	int q;

	best->n = 0;
	while (*p != '\0' && *p != '|' && *p != ')') {
		if (*p == '*' || *p == '+' || *p == '?' || *p == '{') {
			/* It repeats what came last: the run's last character? */
			if (len > 0)
				len--;
			offer_run(best, run, len);
			len = 0;
			if (quantifier(&p) == -1)
				return -1;
			continue;
		}
		if (*p == '\\' && p[1] != '\0' &&
		    strchr(".[]\\()*+?{}|^$", p[1]) != NULL) {
			if (len == LITMAX) {
				offer_run(best, run, len);
				len = 0;
			}
			run[len++] = p[1];
			p += 2;
			continue;
		}
		if (strchr("\\.[(^$", *p) == NULL) {
			if (len == LITMAX) {
				offer_run(best, run, len);
				len = 0;
			}
			run[len++] = *p++;
			continue;
		}
		/* Not a plain character: the run ends. */
		offer_run(best, run, len);
		len = 0;
		if (*p == '\\') {
			if (p[1] == '\0')
				return -1;
			p += 2;		/* an escape of GNU's, or other */
		} else if (*p == '[') {
			if ((p = bracket_end(p)) == NULL)
				return -1;
		} else if (*p == '(') {
			p++;
			if (depth >= 64 || alternatives(&p, depth + 1, &g) == -1 ||
			    *p != ')')
				return -1;
			p++;
			if ((q = quantifier(&p)) == -1)
				return -1;
			if (q == 0)
				offer(best, &g);
			continue;
		} else
			p++;		/* '.', '^', '$' */
		if (quantifier(&p) == -1)
			return -1;
	}
	offer_run(best, run, len);
	*pp = p;
	return 0;
}

/* Branches up to ')' or the end: the union of their sets, or none. */
static int
alternatives(const char **pp, int depth, struct litset *out)	/* NOLINT(misc-no-recursion) */
{
	struct litset b;
	int i, none = 0;

	out->n = 0;
	for (;;) {
		if (branch(pp, depth, &b) == -1)
			return -1;
		if (b.n == 0 || out->n + b.n > NLIT)
			none = 1;
		for (i = 0; !none && i < b.n; i++) {
			out->len[out->n] = b.len[i];
			memcpy(out->s[out->n++], b.s[i], b.len[i]);
		}
		if (**pp != '|')
			break;
		(*pp)++;
	}
	if (none)
		out->n = 0;
	return 0;
}

/*
 * How to match re, compiled from text: its literals, else (when nothing in
 * it is told apart by a newline: GNU's \` and \' anchor the whole string)
 * a REG_NEWLINE twin for runs of lines.  Per line if neither.
 */
int
matcher_init(struct matcher *m, const regex_t *re, const char *text)
{
	struct litset l;
	const char *p = text;
	int i;

	m->line = re;
	m->chunked = 0;
	m->nlit = 0;
	if (re == NULL || text == NULL)
		return 0;
	if (alternatives(&p, 0, &l) == 0 && *p == '\0' && l.n > 0) {
		m->nlit = l.n;
		for (i = 0; i < l.n; i++)
			finder_init(&m->lit[i], l.s[i], l.len[i]);
		return 0;
	}
	if (strstr(text, "\\`") != NULL || strstr(text, "\\'") != NULL)
		return 0;
	if (regcomp(&m->chunk, text, REG_EXTENDED | REG_NOSUB | REG_NEWLINE) != 0)
		return -1;
	m->chunked = 1;
	return 0;
}

void
matcher_free(struct matcher *m)
{
	if (m->chunked)
		regfree(&m->chunk);
	m->chunked = 0;
}

/*
 * Matches s[0, n), its first LINEMAX - 1 bytes, as a line, NULs and all
 * where regexec(3) takes the string's end (REG_STARTEND); elsewhere up to
 * a NUL, in place, the byte after them lent for the NUL that regexec(3)
 * wants, and given back.
 */
int
line_matches(const regex_t *re, char *s, size_t n)
{
#ifdef HAVE_REG_STARTEND
	regmatch_t whole;

	whole.rm_so = 0;
	whole.rm_eo = (regoff_t)(n > LINEMAX - 1 ? LINEMAX - 1 : n);
	return regexec(re, s, 1, &whole, REG_STARTEND) == 0;
#else
	char saved;
	int hit;

	if (n > LINEMAX - 1)
		n = LINEMAX - 1;
	saved = s[n];
	s[n] = '\0';
	hit = regexec(re, s, 0, NULL, 0) == 0;
	s[n] = saved;
	return hit;
#endif
}

/* Each line of s[0, n) (its byte n lent, as by line_matches) by itself. */
static int
each_line(const regex_t *re, char *s, size_t n)
{
	char *end = s + n, *nl;

	for (;; s = nl + 1) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			return line_matches(re, s, (size_t)(end - s));
		if (line_matches(re, s, (size_t)(nl - s)))
			return 1;
	}
}

/* Where a line that has s[at] begins, in s. */
static size_t
line_start(const char *s, size_t at)
{
	while (at > 0 && s[at - 1] != '\n')
		at--;
	return at;
}

/* Where the line from s[at] ends (its newline), or n. */
static size_t
line_end(const char *s, size_t at, size_t n)
{
	const char *nl = memchr(s + at, '\n', n - at);

	return nl != NULL ? (size_t)(nl - s) : n;
}

/* The first of m's literals in s[from, n), or n. */
static size_t
first_literal(const struct matcher *m, const char *s, size_t from, size_t n,
    size_t next[])
{
	const char *f;
	size_t best = n;
	int i;

	for (i = 0; i < m->nlit; i++) {
		if (next[i] == SIZE_MAX || next[i] < from) {
			f = finder_find(&m->lit[i], s + from, n - from);
			next[i] = f != NULL ? (size_t)(f - s) : n;
		}
		if (next[i] < best)
			best = next[i];
	}
	return best;
}

/* Only the lines where a literal is are matched. */
static int
by_literal(const struct matcher *m, char *s, size_t n)
{
	size_t next[NLIT], at = 0, b, e;
	int i;

	for (i = 0; i < m->nlit; i++)
		next[i] = SIZE_MAX;	/* not looked for yet */
	while ((at = first_literal(m, s, at, n, next)) < n) {
		b = line_start(s, at);
		e = line_end(s, at, n);
		if (line_matches(m->line, s + b, e - b))
			return 1;
		at = e + 1;
		if (at >= n)
			break;
	}
	return 0;
}

/*
 * A line that one regexec(3) of a run cannot stand for: longer than
 * LINEMAX - 1 (its start is matched) or with a NUL, where the run's
 * regexec(3) would stop (line_matches() matches it by itself).
 * Returns where the first one in s[0, n) begins, or n.
 */
static size_t
first_odd_line(const char *s, size_t n)
{
	const char *z = memchr(s, '\0', n);
	size_t limit = z != NULL ? line_start(s, (size_t)(z - s)) : n, x = 0, l;

	/* Every LINEMAX bytes from a line's start hold a newline. */
	while (limit - x >= LINEMAX) {
		for (l = x + LINEMAX; l > x && s[l - 1] != '\n'; l--)
			continue;
		if (l == x)
			return x;
		x = l;
	}
	return limit;
}

/*
 * Runs of plain lines at once with REG_NEWLINE, which finds a match where
 * one line has it (it can also find one across lines: then each line is
 * matched by itself to be sure); odd lines by themselves.
 */
static int
by_chunk(const struct matcher *m, char *s, size_t n)
{
	size_t odd, e;
	char saved;
	int hit;

	for (;;) {
		/* The plain lines first; s[0, 0) is one, an empty line. */
		if ((odd = first_odd_line(s, n)) > 0 || n == 0) {
			e = odd < n ? odd - 1 : n;	/* its newline, or n */
			saved = s[e];
			s[e] = '\0';
			hit = regexec(&m->chunk, s, 0, NULL, 0) == 0;
			s[e] = saved;
			if (hit && each_line(m->line, s, e))
				return 1;
		}
		if (odd == n)
			return 0;
		e = line_end(s, odd, n);
		if (line_matches(m->line, s + odd, e - odd))
			return 1;
		if (e == n)
			return 0;
		s += e + 1;
		n -= e + 1;
	}
}

/*
 * Does a line of s[0, n), whole lines split by newlines (the byte at n is
 * lent, as by line_matches), match m as each would by itself?
 */
int
matcher_lines(const struct matcher *m, char *s, size_t n)
{
	if (m->nlit > 0)
		return by_literal(m, s, n);
	if (m->chunked)
		return by_chunk(m, s, n);
	return each_line(m->line, s, n);
}
