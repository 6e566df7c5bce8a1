/*
 * retry's JSON report.  Strings are escaped for any bytes: valid UTF-8
 * passes through, any other byte becomes the code point of its value.
 * Output goes through stdio and is checked once, with ferror() and
 * fclose(), where the object is complete.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "relay.h"
#include "report.h"

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t
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

static void
put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	putc('"', f);
	while (*s != '\0') {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s++);
		else if (*s == '\n')
			fputs("\\n", f), s++;
		else if (*s == '\t')
			fputs("\\t", f), s++;
		else if (*s < 0x20 || *s == 0x7f || (n = utf8_length(s)) == 0)
			fprintf(f, "\\u%04x", *s++);
		else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
	putc('"', f);
}

static void
put_seconds(FILE *f, int64_t ns)
{
	fprintf(f, "%lld.%06lld", (long long)(ns / 1000000000),
	    (long long)(ns % 1000000000 / 1000));
}

/*
 * Makes the temporary file beside path at the start, so that a directory
 * that cannot take the report is a usage error before anything runs.
 */
int
report_open(struct report *rep, const char *path)
{
	int fd;

	memset(rep, 0, sizeof(*rep));
	rep->path = path;
	if ((fd = scratch_file()) == -1 || (rep->spool = fdopen(fd, "w+")) == NULL)
		return -1;
	if (strcmp(path, "-") == 0) {
		rep->out = stderr;
		return 0;
	}
	if (snprintf(rep->temp, sizeof(rep->temp), "%s.XXXXXX", path) >=
	    (int)sizeof(rep->temp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(rep->temp)) == -1) {
		rep->temp[0] = '\0';
		return -1;
	}
	/* The attempts must not inherit it. */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ||
	    (rep->out = fdopen(fd, "w")) == NULL)
		return -1;
	return 0;
}

int
report_attempt(struct report *rep, const struct attempt_record *a)
{
	char name[32];
	FILE *f = rep->spool;

	fprintf(f, "%s\n    {\"attempt\": %ld, \"start\": ", rep->attempts++ ?
	    "," : "", a->number);
	put_seconds(f, a->start);
	fputs(", \"duration\": ", f);
	put_seconds(f, a->duration);
	fprintf(f, ", \"status\": %d, \"signal\": ", a->status);
	if (a->termsig != 0)
		put_string(f, signal_name(name, sizeof(name), a->termsig));
	else
		fputs("null", f);
	fprintf(f, ", \"timed_out\": %s, \"delay\": ",
	    a->timed_out ? "true" : "false");
	if (a->delay >= 0) {
		put_seconds(f, a->delay);
		fprintf(f, ", \"delay_from\": \"%s\"}",
		    a->from_hint ? "hint" : "backoff");
	} else
		fputs("null, \"delay_from\": null}", f);
	return ferror(f) ? -1 : 0;
}

/*
 * Writes the whole object and puts it in place; on failure the temporary
 * file is removed and errno says why.
 */
int
report_finish(struct report *rep, char *const argv[], const char *outcome,
    int status, int signal, int64_t total)
{
	char name[32], buf[4096];
	FILE *f = rep->out;
	size_t n;
	int i;

	fputs("{\n  \"command\": [", f);
	for (i = 0; argv[i] != NULL; i++) {
		fputs(i ? ", " : "", f);
		put_string(f, argv[i]);
	}
	fputs("],\n  \"attempts\": [", f);
	rewind(rep->spool);
	while ((n = fread(buf, 1, sizeof(buf), rep->spool)) > 0)
		fwrite(buf, 1, n, f);
	fprintf(f, "%s],\n  \"outcome\": \"%s\",\n  \"exit_status\": %d,\n"
	    "  \"signal\": ", rep->attempts ? "\n  " : "", outcome, status);
	if (signal != 0)
		put_string(f, signal_name(name, sizeof(name), signal));
	else
		fputs("null", f);
	fputs(",\n  \"total_time\": ", f);
	put_seconds(f, total);
	fputs("\n}\n", f);
	if (ferror(rep->spool) || fclose(rep->spool) == EOF) {
		rep->spool = NULL;
		report_abandon(rep);
		return -1;
	}
	rep->spool = NULL;
	if (f == stderr)
		return fflush(f) == EOF || ferror(f) ? -1 : 0;
	rep->out = NULL;
	if (ferror(f) | (fclose(f) == EOF) || rename(rep->temp, rep->path) == -1) {
		report_abandon(rep);
		return -1;
	}
	rep->temp[0] = '\0';
	return 0;
}

/* No report after all: the temporary file goes. */
void
report_abandon(struct report *rep)
{
	int e = errno;

	if (rep->temp[0] != '\0' && unlink(rep->temp) == -1 && errno != ENOENT)
		e = errno;
	rep->temp[0] = '\0';
	errno = e;
}
