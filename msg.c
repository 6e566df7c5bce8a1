/* SPDX-License-Identifier: ISC */
/*
 * retry's messages on stderr.  Each is one line written whole, with the
 * bytes that came from outside escaped, and its write never holds retry
 * back from a signal or the deadline (clock.c decides how long it may wait).
 *
 * Warnings, fatal errors and the CI log's lines (msg_put) go to stderr
 * itself, always, so that neither a full spool nor a run that passes can
 * swallow them.  The run's lines (say.c's say and detail) are formatted
 * here too, and held by -Q's spool or written here, as say.c decides.
 * When stderr is the journal, each line of ours written here starts
 * with its priority (msg_find_journal()).
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static int		 stderr_broken;
static long		 warnings;	/* said so far */
static int		 journal;	/* stderr is the journal's stream */

/*
 * "DEV:INODE" of JOURNAL_STREAM (systemd.exec(5)) as two decimal
 * numbers, each all digits; 0 if it is not that.
 */
static int
parse_dev_inode(const char *s, unsigned long long *dev,
    unsigned long long *ino)
{
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	*dev = strtoull(s, &end, 10);
	if (errno != 0 || *end != ':' || end[1] < '0' || end[1] > '9')
		return 0;
	*ino = strtoull(end + 1, &end, 10);
	return errno == 0 && *end == '\0';
}

/*
 * Whether stderr is the journal: systemd names the stream it gave in
 * JOURNAL_STREAM, which a child inherits even when its stderr goes
 * elsewhere, so only a match of fd 2 counts.  Then each line of ours
 * starts with "<N>", its priority, which journald reads and strips.
 * Once, at start-up; without JOURNAL_STREAM, one getenv.
 */
void
msg_find_journal(void)
{
	const char *s = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int saved = errno;

	if (s != NULL && parse_dev_inode(s, &dev, &ino) &&
	    fstat(STDERR_FILENO, &st) == 0)
		journal = (unsigned long long)st.st_dev == dev &&
		    (unsigned long long)st.st_ino == ino;
	errno = saved;
}

/*
 * A write to stderr that failed stops those that would follow it; when
 * the run's lines change where they go (say_hold), stderr is tried
 * afresh.
 */
void
msg_stderr_afresh(void)
{
	stderr_broken = 0;
}

/*
 * Copies in[0..len) to out as text that is one line and holds no terminal
 * control: \n, \t and \r by name, other control characters as \ooo, bytes
 * that are not UTF-8 (and the C1 controls) as \xNN.  Stops before an
 * escape that would not fit; returns the length written.
 */
size_t
escape(char *out, size_t size, const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	char unit[16];
	size_t at = 0, i = 0, n, k;

	while (i < len) {
		n = 1;
		if (s[i] == '\n' || s[i] == '\t' || s[i] == '\r')
			(void)snprintf(unit, sizeof(unit), "\\%c",
			    s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : 'r');
		else if (s[i] < 0x20 || s[i] == 0x7f)
			(void)snprintf(unit, sizeof(unit), "\\%03o", s[i]);
		else if (s[i] < 0x80) {
			unit[0] = (char)s[i];
			unit[1] = '\0';
		} else if ((n = utf8_length(s + i)) == 0 ||
		    (s[i] == 0xc2 && s[i + 1] < 0xa0)) {
			n = 1;	/* not UTF-8, or a C1 control: byte by byte */
			(void)snprintf(unit, sizeof(unit), "\\x%02x", s[i]);
		} else {
			memcpy(unit, s + i, n);
			unit[n] = '\0';
		}
		k = strlen(unit);
		if (at + k >= size)
			break;
		memcpy(out + at, unit, k);
		at += k;
		i += n;
	}
	out[at] = '\0';
	return at;
}

/* A reader of stderr that has gone must not kill retry: EPIPE is enough. */
static int
write_stderr(const char *line, size_t len)
{
	struct sigaction ign, old;
	size_t done = 0;
	ssize_t n;
	int ready, swapped = 0;

	while (!stderr_broken && done < len) {
		/* -1: no run yet, so no signal to wait for either. */
		if ((ready = sp_may_write(STDERR_FILENO)) == 0)
			return -1;	/* dropped for a signal or the deadline */
		if (ready == -1 && !swapped) {
			memset(&ign, 0, sizeof(ign));
			ign.sa_handler = SIG_IGN;
			sigemptyset(&ign.sa_mask);
			if (sigaction(SIGPIPE, &ign, &old) == -1)
				return -1;	/* cannot happen: a valid signal */
			swapped = 1;
		}
		n = write(STDERR_FILENO, line + done, len - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			stderr_broken = 1;	/* the exit status still tells */
		else
			done += (size_t)n;
	}
	if (swapped && sigaction(SIGPIPE, &old, NULL) == -1)
		stderr_broken = 1;
	return 0;
}

/*
 * "retry: " fmt ": suffix" (no suffix: NULL), escaped, cut to one line of
 * MSGMAX, into line; returns its length, the newline included.  errno is
 * left as it was.
 */
size_t
msg_format(char line[MSGMAX], const char *fmt, va_list ap, const char *suffix)
{
	char raw[MSGMAX];
	size_t len;
	int saved = errno;

	/* ap is started by every caller: clang 14's analyzer loses track
	 * of it (NOLINTNEXTLINE below says so). */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(raw, sizeof(raw), fmt, ap);
	len = strlen(raw);
	if (suffix != NULL)
		(void)snprintf(raw + len, sizeof(raw) - len, ": %s", suffix);
	(void)snprintf(line, MSGMAX, "retry: ");
	len = 7 + escape(line + 7, MSGMAX - 8, raw, strlen(raw));
	line[len++] = '\n';
	errno = saved;
	return len;
}

/*
 * A line of retry's own written whole on stderr itself, after its
 * priority when stderr is the journal.
 */
void
msg_line(enum priority pri, const char *line, size_t len)
{
	char buf[MSGMAX + 4];
	int saved = errno;

	if (journal && len < MSGMAX) {
		buf[0] = '<';
		buf[1] = (char)('0' + pri);
		buf[2] = '>';
		memcpy(buf + 3, line, len);
		line = buf;
		len += 3;
	}
	/* Dropped as any message would be. */
	(void)write_stderr(line, len);
	errno = saved;
}

/* A message of retry's own, on stderr itself. */
static void
vmessage(enum priority pri, const char *fmt, va_list ap, const char *suffix)
{
	char line[MSGMAX];
	size_t len;

	len = msg_format(line, fmt, ap, suffix);
	msg_line(pri, line, len);
}

/* Like warn(3): with errno's text; retry carries on.  -q does not hide it. */
void
warning(const char *fmt, ...)
{
	va_list ap;
	const char *why = strerror(errno);

	warnings++;
	va_start(ap, fmt);
	vmessage(PRI_WARNING, fmt, ap, why);
	va_end(ap);
}

void
warningx(const char *fmt, ...)
{
	va_list ap;

	warnings++;
	va_start(ap, fmt);
	vmessage(PRI_WARNING, fmt, ap, NULL);
	va_end(ap);
}

/* The warnings said so far, for -Q to tell whether one came after the end. */
long
msg_warnings(void)
{
	return warnings;
}

/* Like err(3): a failure of retry itself, exit 125 (atexit cleans up). */
void
fatal(const char *fmt, ...)
{
	va_list ap;
	const char *why = strerror(errno);

	va_start(ap, fmt);
	vmessage(PRI_ERROR, fmt, ap, why);
	va_end(ap);
	exit(EXIT_OWN_FAILURE);
}

/* Like errx(3); also every usage error: one line, exit 125. */
void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(PRI_ERROR, fmt, ap, NULL);
	va_end(ap);
	exit(EXIT_OWN_FAILURE);
}

/*
 * Text of retry's own written as it is, as a message is: whole, never
 * holding retry back, to stderr itself, never into -Q's spool: ci.c's
 * lines for a CI log, which has its groups and its annotation whether
 * the run passes or not, and -Q's report of a failed run (cron.c).  No
 * priority goes before it: a CI log's lines have a format of their own.
 * The caller has made its bytes safe; -q does not hide it.
 */
void
msg_put(const char *text, size_t len)
{
	int saved = errno;

	/* Dropped as a message would be. */
	(void)write_stderr(text, len);
	errno = saved;
}

/* stdout is checked once at the end, so that a full disk is an error. */
int
close_stdout(void)
{
	if (ferror(stdout) | (fclose(stdout) == EOF)) {	/* both, always */
		warning("stdout");
		return EXIT_OWN_FAILURE;
	}
	return 0;
}
