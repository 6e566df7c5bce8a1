/* SPDX-License-Identifier: ISC */
/*
 * What RETRY_ENV_FILE's text asks to set, in GITHUB_ENV's syntax: the
 * assignments it makes and a line for each name refused.  Pure (text in,
 * lists out, no I/O, no globals), so that a fuzzer drives it; env.c owns
 * the file and sets what this finds.
 */
#include "compat.h"	/* first: the feature macros */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* The line at text[at], up to its newline or the text's end: its length. */
static size_t
line_length(const char *text, size_t len, size_t at)
{
	const char *nl = memchr(text + at, '\n', len - at);

	return nl != NULL ? (size_t)(nl - (text + at)) : len - at;
}

/* One more line in ef->warn, or only counted once there are too many. */
static void
warn(struct envfile *ef, const char *name, size_t len, const char *why)
{
	if (ef->nwarn == ENVFILE_WARNMAX) {
		ef->unsaid++;
		return;
	}
	/* A name shown at most 64 bytes long: a line, not a page. */
	(void)snprintf(ef->warn[ef->nwarn++], sizeof(ef->warn[0]),
	    "'%.*s%s' not set: %s", (int)(len > 64 ? 64 : len), name,
	    len > 64 ? "..." : "", why);
}

/*
 * Why name may not be set, or NULL: not a shell name, retry's own, or
 * one that changes which programs run and how (unless --env-from-hooks
 * all).
 */
static const char *
refusal(const char *name, size_t len, enum env_names names)
{
	size_t i;

	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return "not a name ([A-Za-z_][A-Za-z0-9_]*)";
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return "not a name ([A-Za-z_][A-Za-z0-9_]*)";
	if (len >= 6 && memcmp(name, "RETRY_", 6) == 0)
		return "a name of retry's own (RETRY_*)";
	if (names == ENV_NAMES_ALL)
		return NULL;
	if ((len == 4 && memcmp(name, "PATH", 4) == 0) ||
	    (len == 3 && memcmp(name, "IFS", 3) == 0) ||
	    (len >= 3 && memcmp(name, "LD_", 3) == 0))
		return "needs --env-from-hooks all";
	return NULL;
}

/* The whole file refused: no assignment, one line that says why. */
static int
refuse_all(struct envfile *ef, size_t line, const char *why)
{
	ef->nset = 0;
	ef->nwarn = 0;
	ef->unsaid = 0;
	ef->refused = 1;
	(void)snprintf(ef->warn[0], sizeof(ef->warn[0]),
	    "line %zu %s: nothing set", line, why);
	ef->nwarn = 1;
	return 0;
}

/* An assignment kept, or -1 when memory ran out. */
static int
keep(struct envfile *ef, const char *name, size_t name_len,
    const char *value, size_t value_len)
{
	struct env_assign *a;

	if (ef->nset == ef->cap) {
		ef->cap = ef->cap == 0 ? 16 : ef->cap * 2;
		if ((a = realloc(ef->set, ef->cap * sizeof(*a))) == NULL)
			return -1;
		ef->set = a;
	}
	a = &ef->set[ef->nset++];
	a->name = name;
	a->name_len = name_len;
	a->value = value;
	a->value_len = value_len;
	return 0;
}

/*
 * The heredoc whose header ends at text[at]: finds the line that is
 * delim alone and puts the value (the lines between, without the last
 * newline) in *value and *value_len.  Returns where the line after the
 * delimiter starts, or 0 when no line ends it.
 */
static size_t
heredoc(const char *text, size_t len, size_t at, const char *delim,
    size_t delim_len, const char **value, size_t *value_len, size_t *lineno)
{
	size_t from = at, n;

	*value = text + at;
	while (at < len) {
		n = line_length(text, len, at);
		++*lineno;
		if (n == delim_len && memcmp(text + at, delim, n) == 0) {
			*value_len = at > from ? at - from - 1 : 0;
			return at + n + (at + n < len);
		}
		at += n + 1;
	}
	return 0;
}

/*
 * Reads text (len bytes, not NUL-terminated) into ef: NAME=VALUE lines
 * and NAME<<DELIM heredocs, as GitHub's runner reads GITHUB_ENV, empty
 * lines skipped; each refused name is a line in ef->warn, its value
 * skipped.  A line that is neither, a heredoc that no delimiter ends or a
 * NUL byte refuses the whole text (ef->refused): all or nothing, so that
 * no attempt runs with half a change.  The spans point into text.
 * Returns 0, or -1 when memory ran out (ef holds what it can).
 */
int
envfile_parse(const char *text, size_t len, enum env_names names,
    struct envfile *ef)
{
	const char *line, *eq, *hd, *value, *why;
	size_t at = 0, n, lineno = 0, start, value_len;

	memset(ef, 0, sizeof(*ef));
	/* No value holds a NUL: its line, for the message. */
	if ((value = memchr(text, '\0', len)) != NULL) {
		for (line = text; (line = memchr(line, '\n',
		    (size_t)(value - line))) != NULL; line++)
			lineno++;
		return refuse_all(ef, lineno + 1, "has a NUL byte");
	}
	while (at < len) {
		line = text + at;
		n = line_length(text, len, at);
		start = ++lineno;
		at += n + 1;
		if (n == 0)
			continue;
		eq = memchr(line, '=', n);
		hd = memmem(line, n, "<<", 2);
		if (eq != NULL && (hd == NULL || eq < hd)) {
			value = eq + 1;
			value_len = n - (size_t)(value - line);
		} else if (hd != NULL && hd + 2 < line + n) {
			eq = hd;
			if (at >= len || (at = heredoc(text, len, at, hd + 2,
			    n - (size_t)(hd + 2 - line), &value, &value_len,
			    &lineno)) == 0)
				return refuse_all(ef, start,
				    "starts a value that no delimiter ends");
		} else
			return refuse_all(ef, start,
			    "is neither NAME=VALUE nor NAME<<DELIMITER");
		if ((why = refusal(line, (size_t)(eq - line), names)) != NULL)
			warn(ef, line, (size_t)(eq - line), why);
		else if (keep(ef, line, (size_t)(eq - line), value,
		    value_len) == -1)
			return -1;
	}
	return 0;
}

void
envfile_free(struct envfile *ef)
{
	free(ef->set);
	ef->set = NULL;
	ef->nset = ef->cap = 0;
}
