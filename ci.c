/* SPDX-License-Identifier: ISC */
/*
 * --ci: each attempt folded in a CI job's log, a GitHub Actions group or a
 * GitLab CI section, and on GitHub one annotation, a step summary row and
 * the step's outputs per run.  A listener of the run's events (common.h).
 *
 * The choices, which retry(1)'s "CI logs" tells the user:
 * - Only the outermost retry writes: an outer retry marks its attempts and
 *   hooks with RETRY_ATTEMPT, and a run that inherits it writes nothing
 *   for CI, whatever --ci says (GitHub does not nest groups).
 * - Everything goes to retry's stderr, with its messages: stdout is often
 *   the command's data (retry curl | jq), and the runners read both.
 * - A group opens when an attempt starts and closes at the first wait or
 *   end of the run that follows, not when the attempt ends: with -O a
 *   retried attempt's output is released after its end, just before the
 *   wait.  This listener hears each event first, so retry's "attempt
 *   1/5 failed ...; next in" (and a report to stderr) comes after the
 *   group, in sight when the group is folded.
 * - On GitHub, workflow commands are off (::stop-commands::) from the
 *   first attempt to the end of the run, and on only for retry's own
 *   lines, each time in the one write(2) that turns them off again with
 *   a fresh token that no attempt can know: SHA-256 of a secret from the
 *   kernel that retry never shows, and a count.  Ending each group would
 *   not do: a process that an attempt leaves behind writes when it likes,
 *   in the wait, in a hook or in the next attempt's group.  So nothing an
 *   attempt, what it left or a hook prints can annotate, set an output or
 *   end a group, until retry exits.
 * - Every line of these goes to stderr itself (msg_put()), never into the
 *   file that -Q holds and drops when the run passes: under -Q the groups
 *   are there, empty, and the annotation is there whatever the run did.
 * - What retry puts in them is escaped as GitHub's toolkit does, and a
 *   message's ":" too, so no "::" is left; the command, in the title, is
 *   first made one line as retry's messages make it (msg.c's escape()).
 * - Under --ci github each attempt writes its GITHUB_OUTPUT and GITHUB_ENV
 *   lines to files of its own, and only the last attempt's reach the
 *   step's files: a failed attempt's version= would otherwise stay there
 *   for the later steps.  This holds in a nested run too, whose "step's
 *   files" are its outer attempt's.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define KEPT		8	/* failed attempts whose statuses are named */
#define COMMAND_MAX	256	/* bytes of the command line shown */
/* One write of ours: a pipe takes up to PIPE_BUF (4096 on Linux) whole,
 * with no other writer's bytes inside. */
#define CI_LINE_MAX	4096
#define STOP_LEN	50	/* "::stop-commands::", a token, "\n" */

static enum ci_format	 format = CI_NONE;	/* resolved: none, github, gitlab */
static unsigned char	 secret[16];
static char		 token[33];	/* that turns commands on, or "" */
static long		 tokens;	/* made so far */
static long		 group;		/* the open group's attempt, or 0 */
static int		 statuses[KEPT];	/* of the first attempts */
static long		 ended;		/* attempts that ended */
static const char	*summary;	/* GitHub's step summary, or NULL */
static char		 summary_path[PATH_MAX];

/*
 * A file of the step that the attempts write lines to, the caller's, and
 * the attempts' own: named, since the attempt must open it by its name
 * (a /dev/fd/N dies with programs that close what they did not open, and
 * BSD's shares one offset); "NAME=path" strings for putenv(3), so that
 * switching between them allocates nothing.
 */
struct step_file {
	const char	*name;		/* the runner's variable */
	const char	*real;		/* the caller's file, or NULL */
	char		 real_path[PATH_MAX];
	char		 real_var[PATH_MAX + 16];	/* NAME=the caller's */
	char		 attempt_var[PATH_MAX + 16];	/* NAME=the attempts' */
	int		 fd;		/* the attempts' file, open, or -1 */
};
enum { STEP_OUTPUT, STEP_ENV, NSTEP };
/*
 * Zero until ci_start() names them: an initializer would put these 24 KB
 * in .data, and its pointers would have the dynamic linker write (and so
 * fault in) two of their pages at every start, --ci or not.
 */
static struct step_file	 step[NSTEP];
static int		 separating;	/* the attempts have files of their own */

/*
 * A copy of the file that the runner gave in name (setenv(3) may move
 * what getenv(3) returned), or NULL when unset or empty.  One too long to
 * be a path could never be opened: its warning comes now.
 */
static const char *
file_variable(const char *name, char *buf, size_t size)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0')
		return NULL;
	if (strlen(v) >= size) {
		errno = ENAMETOOLONG;
		warning("%s", name);
		return NULL;
	}
	memcpy(buf, v, strlen(v) + 1);
	return buf;
}

/*
 * The attempts' file of s, empty, in $TMPDIR: made by mkstemp(3), mode
 * 0600 and new, so no one else's; its path in s->attempt_var.  0, or -1
 * with errno.
 */
static int
make_attempt_file(struct step_file *s)
{
	char *path = s->attempt_var + strlen(s->name) + 1;
	int n, fd, e;

	n = snprintf(s->attempt_var, sizeof(s->attempt_var),
	    "%s=%s/retry-%s.XXXXXX", s->name, temp_dir(), s->name);
	if (n < 0 || (size_t)n >= sizeof(s->attempt_var)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) == -1)
		return -1;
	if ((s->fd = fd_keep(fd)) != -1)	/* the attempts open it by name */
		return 0;
	e = errno;
	(void)unlink(path);	/* made just now: nothing lost */
	errno = e;
	return -1;
}

/* The attempts' file of s goes, and its name; a failure is a warning. */
static void
drop_attempt_file(struct step_file *s)
{
	const char *path = s->attempt_var + strlen(s->name) + 1;

	if (s->fd == -1)
		return;
	if (unlink(path) == -1 && errno != ENOENT)
		warning("%s", path);
	if (close(s->fd) == -1)
		warning("%s", path);
	s->fd = -1;
}

/*
 * --ci github: the caller's GITHUB_OUTPUT and GITHUB_ENV, those that are
 * set, and a file for the attempts beside each.  Where $TMPDIR cannot
 * have them, the attempts write to the caller's, as before: one warning.
 */
static void
separate_step_files(void)
{
	struct step_file *s;
	int e;

	for (s = step; s < step + NSTEP; s++) {
		if ((s->real = file_variable(s->name, s->real_path,
		    sizeof(s->real_path))) == NULL)
			continue;
		(void)snprintf(s->real_var, sizeof(s->real_var), "%s=%s",
		    s->name, s->real);
		if (make_attempt_file(s) == -1) {
			e = errno;
			drop_attempt_file(&step[STEP_OUTPUT]);
			separating = 0;
			warningx("--ci: no file in %s (%s), so every attempt "
			    "writes to GITHUB_OUTPUT and GITHUB_ENV themselves",
			    temp_dir(), strerror(e));
			return;
		}
		separating = 1;
	}
}

/*
 * Settles the format before anything runs: the policy's (options.c has
 * settled --ci auto by the runner's own variable), but none under an
 * outer retry.  Returns whether ci.c has anything to do: a format, or
 * the attempts' files of --ci github, which a nested run keeps too.
 */
int
ci_start(const struct policy *p)
{
	step[STEP_OUTPUT].name = "GITHUB_OUTPUT";
	step[STEP_OUTPUT].fd = -1;
	step[STEP_ENV].name = "GITHUB_ENV";
	step[STEP_ENV].fd = -1;
	if (p->ci == CI_GITHUB)
		separate_step_files();
	if (p->ci == CI_NONE || under_outer_retry())
		return separating;
	format = p->ci;
	if (format != CI_GITHUB)
		return 1;
	random_secret_bytes(secret);
	summary = file_variable("GITHUB_STEP_SUMMARY", summary_path,
	    sizeof(summary_path));
	return 1;
}

/* Text of ours, made whole in a buffer and written in one write(2). */
static void
put(const char *fmt, ...)
{
	char line[CI_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(line))
		msg_put(line, (size_t)n);
}

/*
 * in as a workflow command's message, or (property) a property's value,
 * escaped as GitHub's toolkit does: %, CR and LF as %25, %0D and %0A,
 * and in a property : and , as %3A and %2C.  A message has its : escaped
 * too, so that no "::" is left anywhere; retry's own words have none.
 */
static const char *
escape_command(char *out, size_t size, const char *in, int property)
{
	const char *rep;
	char one[2] = "";
	size_t at = 0, len;

	for (; *in != '\0'; in++) {
		switch (*in) {
		case '%':
			rep = "%25";
			break;
		case '\r':
			rep = "%0D";
			break;
		case '\n':
			rep = "%0A";
			break;
		case ':':
			rep = "%3A";
			break;
		case ',':
			rep = property ? "%2C" : ",";
			break;
		default:
			one[0] = *in;
			rep = one;
		}
		if (at + (len = strlen(rep)) >= size)
			break;
		memcpy(out + at, rep, len);
		at += len;
	}
	out[at] = '\0';
	return out;
}

/*
 * A new token, for the next stop: 32 hex digits of SHA-256(secret, n) for
 * the run's nth.  Each stop has its own, so that one read in the log
 * (a leftover process can read it there) turns nothing back on.
 */
static void
make_token(long n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char h[32], num[8];
	struct sha256 s;
	size_t i;

	for (i = 0; i < 8; i++)
		num[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	sha256_init(&s);
	sha256_add(&s, secret, sizeof(secret));
	sha256_add(&s, num, sizeof(num));
	sha256_end(&s, h);
	for (i = 0; i < 16; i++) {
		token[2 * i] = hex[h[i] >> 4];
		token[2 * i + 1] = hex[h[i] & 15];
	}
	token[32] = '\0';
}

/* retry's own lines on GitHub, gathered to go out in one write(2). */
struct lines {
	char	 text[CI_LINE_MAX];
	size_t	 len;
};

/* A line added, unless it would leave no room for the stop that ends them. */
static void
add(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	n = vsnprintf(l->text + l->len, sizeof(l->text) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0 && l->len + (size_t)n + STOP_LEN < sizeof(l->text))
		l->len += (size_t)n;
	else
		l->text[l->len] = '\0';	/* cannot happen: bounded */
}

/*
 * The byte at of the regular file open as fd, or -1: read through
 * /proc/self/fd where fd is open for writing only.
 */
static int
byte_at(int fd, int flags, const struct stat *st, off_t at)
{
	char path[32];
	struct stat again;
	unsigned char c;
	ssize_t n = -1;
	int rfd = fd;

	if ((flags & O_ACCMODE) == O_WRONLY) {
		(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if ((rfd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK |
		    O_CLOEXEC)) == -1)
			return -1;
	}
	/* Another file by then, and its byte would say nothing. */
	if (fstat(rfd, &again) == 0 && again.st_dev == st->st_dev &&
	    again.st_ino == st->st_ino)
		while ((n = pread(rfd, &c, 1, at)) == -1 && errno == EINTR)
			;
	if (rfd != fd)
		(void)close(rfd);	/* only read: its close loses nothing */
	return n == 1 ? c : -1;
}

/*
 * Whether a line written to fd now starts a line of the log: it is a
 * regular file with nothing before where the write goes, or a newline.
 * A pipe or a terminal keeps nothing to read back (only a relay of every
 * byte would know): there, and in doubt, no.
 */
static int
starts_line(int fd)
{
	struct stat st;
	off_t at;
	int flags;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (flags = fcntl(fd, F_GETFL)) == -1)
		return 0;
	at = (flags & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
	if (at <= 0)
		return at == 0;
	return byte_at(fd, flags, &st, at - 1) == '\n';
}

/*
 * retry's lines begin: commands back on, if off.  The token's line must
 * start a line: one that an attempt left unfinished would swallow it,
 * and commands would stay off for the whole step; so where that may be,
 * an empty line comes first.  Not under -Q while it holds the attempts'
 * output: then nothing but retry's own lines reaches stderr.
 */
static void
begin_own(struct lines *l)
{
	l->len = 0;
	l->text[0] = '\0';
	if (token[0] != '\0')
		add(l, "%s::%s::\n", say_fd() != STDERR_FILENO ||
		    starts_line(STDERR_FILENO) ? "" : "\n",
		    token);
	token[0] = '\0';
}

/*
 * They end, with commands off again under a new token unless on, and go
 * out in one write(2), so that no other writer's line can come between.
 */
static void
end_own(struct lines *l, int on)
{
	if (!on) {
		make_token(++tokens);
		(void)snprintf(l->text + l->len, sizeof(l->text) - l->len,
		    "::stop-commands::%s\n", token);
		l->len += strlen(l->text + l->len);
	}
	if (l->len > 0)
		msg_put(l->text, l->len);
}

/* The group or section of the attempt that starts, folded. */
static void
open_group(const struct policy *p, const struct run *r)
{
	char label[64], esc[256];
	struct lines l;

	say_label(label, sizeof(label), p, r);
	group = r->attempts;
	if (format == CI_GITLAB) {
		put("\033[0Ksection_start:%lld:retry_attempt_%ld"
		    "[collapsed=true]\r\033[0K%s\n",
		    (long long)(realtime_now() / NS_PER_SEC), group, label);
		return;
	}
	begin_own(&l);
	add(&l, "::group::%s\n", escape_command(esc, sizeof(esc), label, 0));
	end_own(&l, 0);
}

/* The open GitLab section ends: GitLab needs no stop around it. */
static void
end_section(void)
{
	put("\033[0Ksection_end:%lld:retry_attempt_%ld\r\033[0K\n",
	    (long long)(realtime_now() / NS_PER_SEC), group);
	group = 0;
}

/* The open group ends; on GitHub, among lines of l. */
static void
end_group(struct lines *l)
{
	if (group == 0)
		return;
	if (format == CI_GITLAB) {
		end_section();
		return;
	}
	add(l, "::endgroup::\n");
	group = 0;
}

/* The open group ends; on GitHub, commands stay off with a new token. */
static void
close_group(void)
{
	struct lines l;

	if (group == 0)
		return;
	if (format == CI_GITLAB) {
		end_section();
		return;
	}
	begin_own(&l);
	end_group(&l);
	end_own(&l, 0);
}

/* The statuses of the first KEPT attempts; the rest are only counted. */
static void
keep_status(const struct run *r)
{
	if (ended < KEPT)
		statuses[ended] = r->status;
	ended++;
}

/* " (exit statuses 1, 1, ...)" for the first n attempts, "" for none. */
static const char *
status_list(char *buf, size_t size, long n)
{
	size_t at;
	long i;

	buf[0] = '\0';
	if (n <= 0)
		return buf;
	(void)snprintf(buf, size, " (exit status%s", n == 1 ? "" : "es");
	for (i = 0; i < n && i < KEPT; i++) {
		at = strlen(buf);
		(void)snprintf(buf + at, size - at, "%s %d", i == 0 ? "" : ",",
		    statuses[i]);
	}
	at = strlen(buf);
	(void)snprintf(buf + at, size - at, "%s)", n > KEPT ? ", ..." : "");
	return buf;
}

/* ns as seconds with one decimal: "12.4". */
static const char *
tenths(char *buf, size_t size, int64_t ns)
{
	(void)snprintf(buf, size, "%lld.%lld", (long long)(ns / NS_PER_SEC),
	    (long long)(ns % NS_PER_SEC / (NS_PER_SEC / 10)));
	return buf;
}

/*
 * The command line, its words joined by spaces, at most COMMAND_MAX bytes
 * of it and "..." for the rest, escaped as retry's messages are: one line,
 * no terminal controls.
 */
static const char *
command_line(char *buf, size_t size, char *const argv[])
{
	char raw[COMMAND_MAX] = "";
	size_t at = 0, len;
	int i, n, cut = 0;

	for (i = 0; argv[i] != NULL && !cut; i++) {
		n = snprintf(raw + at, sizeof(raw) - at, "%s%s",
		    i == 0 ? "" : " ", argv[i]);
		cut = n < 0 || (size_t)n >= sizeof(raw) - at;
		at = cut ? sizeof(raw) - 1 : at + (size_t)n;
	}
	len = escape(buf, size - 4, raw, at);
	if (cut)
		memcpy(buf + len, "...", 4);
	return buf;
}

/*
 * "; tolerated as ..." for a failed run that --alert-after tolerates (a
 * warning, not an error: job.c's verdict), else "".  No colon: in a
 * message GitHub would show escape_command()'s %3A.
 */
static const char *
tolerated(const struct event *ev, char *buf, size_t size)
{
	const struct job_end *j = &ev->verdict->job;

	if (!j->tolerated)
		return "";
	(void)snprintf(buf, size, "; tolerated as failed run %ld in a row of "
	    "job %s (--alert-after %ld)", j->failed_in_row, j->name,
	    ev->policy->alert_after);
	return buf;
}

/*
 * The run's one annotation, titled with the command: a warning when it
 * passed after failed attempts, an error with its outcome when it did not
 * pass, nothing for a pass at the first attempt.  The title is cut to
 * leave l room for the rest.
 */
static void
annotate(struct lines *l, const struct event *ev)
{
	const struct run *r = ev->run;
	char cmd[COMMAND_MAX * 4 + 4], title[2048], text[1024];
	char esc[sizeof(text) * 3], label[64], t[32], list[128], tol[320];
	int passed = ev->verdict->passed;

	if (ev->verdict->notice == NOTICE_NONE)
		return;
	tenths(t, sizeof(t), r->took);
	status_list(list, sizeof(list), passed ? ended - 1 : ended);
	if (passed)
		(void)snprintf(text, sizeof(text), "passed on %s after %s s%s",
		    say_label(label, sizeof(label), ev->policy, r), t, list);
	else
		(void)snprintf(text, sizeof(text), "gave up after %ld attempt%s "
		    "in %s s, outcome %s%s%s", r->attempts,
		    r->attempts == 1 ? "" : "s", t, outcome_table[r->why].key,
		    list, tolerated(ev, tol, sizeof(tol)));
	command_line(cmd, sizeof(cmd), ev->policy->argv);
	add(l, "::%s title=%s::%s\n",
	    ev->verdict->notice == NOTICE_WARNING ? "warning" : "error",
	    escape_command(title, sizeof(title), cmd, 1),
	    escape_command(esc, sizeof(esc), text, 0));
}

/*
 * Opens the file that variable name gave, to append to it; -1 and one
 * warning when it cannot.  Through a symbolic link only as outfile.c
 * follows one for every file retry writes; a FIFO there cannot hold
 * retry.
 */
static int
open_append(const char *name, const char *path)
{
	struct outfile of;
	int fd;

	if ((fd = outfile_append(&of, path, 0)) == -1)
		warningx("%s '%s': %s", name, path, outfile_why(&of));
	return fd;
}

/*
 * in as a Markdown table cell: the punctuation that Markdown or a table
 * reads (|, `, *, _, [, ], <, >, ~, &, #, $, \) behind a backslash.
 */
static const char *
markdown_cell(char *out, size_t size, const char *in)
{
	size_t at = 0;

	for (; *in != '\0' && at + 2 < size; in++) {
		if (strchr("\\|`*_[]<>~&#$", *in) != NULL)
			out[at++] = '\\';
		out[at++] = *in;
	}
	out[at] = '\0';
	return out;
}

/*
 * A row of the step summary's table: command, attempts, outcome, time;
 * with the table's header when the file is empty.
 */
static void
add_summary_row(const struct event *ev)
{
	const struct run *r = ev->run;
	char cmd[COMMAND_MAX * 4 + 4], cell[sizeof(cmd) * 2], t[32];
	char text[sizeof(cell) + 256];
	struct stat st;
	int fd;

	if (summary == NULL ||
	    (fd = open_append("GITHUB_STEP_SUMMARY", summary)) == -1)
		return;
	command_line(cmd, sizeof(cmd), ev->policy->argv);
	(void)snprintf(text, sizeof(text), "%s| %s | %ld | %s | %s s |\n",
	    fstat(fd, &st) == 0 && st.st_size == 0 ?
	    "| command | attempts | outcome | time |\n"
	    "| --- | --- | --- | --- |\n" : "",
	    markdown_cell(cell, sizeof(cell), cmd), r->attempts,
	    outcome_table[r->why].key,
	    tenths(t, sizeof(t), r->took));
	outfile_put_whole("GITHUB_STEP_SUMMARY", summary, fd, text, strlen(text));
}

/*
 * An attempt starts: the step's files as it finds them are its own,
 * emptied of the attempt before's lines.  A file that cannot be emptied
 * goes, with one warning, and the attempts write to the caller's.
 */
static void
point_to_attempt_files(void)
{
	struct step_file *s;

	for (s = step; s < step + NSTEP; s++) {
		if (s->fd == -1)
			continue;
		if (ftruncate(s->fd, 0) == -1) {
			warning("%s: the attempts' file, so they write to '%s'",
			    s->name, s->real);
			drop_attempt_file(s);
			continue;
		}
		if (putenv(s->attempt_var) != 0)
			fatal("putenv %s", s->name);
	}
}

/*
 * The attempt has ended: what runs until the next (hooks, a nested run
 * in one) finds the caller's files, so that a hook's line stays.
 */
static void
point_to_real_files(void)
{
	struct step_file *s;

	for (s = step; s < step + NSTEP; s++)
		if (s->fd != -1 && putenv(s->real_var) != 0)
			fatal("putenv %s", s->name);
}

/*
 * The bytes that the last attempt wrote to its file of s, appended to fd
 * as they are (a NAME<<DELIM value too: nothing is parsed), and a newline
 * after an unfinished last line, so that what follows starts a line.
 * 0, or -1 with errno.
 */
static int
copy_attempt_lines(const struct step_file *s, int fd)
{
	char buf[65536];
	struct stat st;
	off_t at = 0;
	ssize_t n;
	char last = '\n';

	if (s->fd == -1)
		return 0;
	if (fstat(s->fd, &st) == -1)
		return -1;
	/* Up to its size now: what it left running may write on. */
	while (at < st.st_size) {
		n = pread(s->fd, buf, (size_t)(st.st_size - at) < sizeof(buf) ?
		    (size_t)(st.st_size - at) : sizeof(buf), at);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;	/* cut meanwhile: what is left was all */
		if (write_all(fd, buf, (size_t)n) == -1)
			return -1;
		last = buf[n - 1];
		at += n;
	}
	return last == '\n' ? 0 : write_all(fd, "\n", 1);
}

/*
 * To the caller's file of s: the last attempt's lines, then own (retry's
 * lines, or NULL); one warning if that fails.
 */
static void
pass_on(const struct step_file *s, const char *own)
{
	int fd, failed;

	if (s->real == NULL || (s->fd == -1 && own == NULL) ||
	    (fd = open_append(s->name, s->real)) == -1)
		return;
	failed = copy_attempt_lines(s, fd) == -1 ||
	    (own != NULL && write_all(fd, own, strlen(own)) == -1);
	if (failed)
		warning("%s '%s'", s->name, s->real);
	if (close(fd) == -1 && !failed)
		warning("%s '%s'", s->name, s->real);
}

/*
 * The step's outputs, for a later step: the last attempt's, then
 * attempts, exit-status, outcome (ev NULL: a nested run's, which writes
 * none of its own).  A value with a line break would forge another
 * output: none can have one (numbers, a key of outcome.c's table), and
 * that is checked.
 */
static void
set_outputs(const struct event *ev)
{
	const char *key;
	char text[256];

	text[0] = '\0';
	if (ev != NULL && strpbrk((key = outcome_table[ev->run->why].key),
	    "\r\n") == NULL)
		(void)snprintf(text, sizeof(text), "attempts=%ld\n"
		    "exit-status=%d\noutcome=%s\n", ev->run->attempts,
		    ev->verdict->status, key);
	pass_on(&step[STEP_OUTPUT], text[0] != '\0' ? text : NULL);
	pass_on(&step[STEP_ENV], NULL);
}

/*
 * The run's end on GitHub: its group ended and its annotation.  Commands
 * stay off until retry exits, for what the last attempt left behind.
 * But lines that -Q holds end with them on, as a stream shown whole or
 * not at all, and the annotation goes to stderr itself, at once: it is
 * for the run's page in the CI, also of a run that passed.
 */
static void
end_on_github(const struct event *ev)
{
	struct lines l;

	begin_own(&l);
	end_group(&l);
	annotate(&l, ev);
	end_own(&l, 0);
	add_summary_row(ev);
	set_outputs(ev);
}

/*
 * The attempts' files of --ci github around each attempt, and at the
 * end of a nested run, which has no format, the last one's lines.
 */
static void
follow_attempts(const struct event *ev)
{
	if (ev->kind == ATTEMPT_STARTS)
		point_to_attempt_files();
	else if (ev->kind == ATTEMPT_ENDS)
		point_to_real_files();
	else if (ev->kind == RUN_ENDS && format == CI_NONE)
		set_outputs(NULL);
}

/*
 * The listener: groups around attempts; on GitHub, the run's end told,
 * and the attempts' own files.
 */
void
ci_event(const struct event *ev)
{
	char text[512];

	if (separating)
		follow_attempts(ev);
	if (format == CI_NONE)
		return;
	switch (ev->kind) {
	case ATTEMPT_STARTS:
		close_group();
		open_group(ev->policy, ev->run);
		break;
	case ATTEMPT_ENDS:
		keep_status(ev->run);
		break;
	case WAIT_BEGINS:
		close_group();
		break;
	case RUN_ENDS:
		if (format == CI_GITHUB)
			end_on_github(ev);
		else
			close_group();
		/* GitLab has no annotation: a plain line says it. */
		if (format == CI_GITLAB && ev->verdict->job.tolerated)
			say("%s", tolerated(ev, text, sizeof(text)) + 2);
		break;
	case RUN_BEGINS:
	case CIRCUIT_CHANGES:
		break;
	}
}

/*
 * As retry exits, whatever the way but SIGKILL: the attempts' files
 * gone, the group ended, commands back on.
 */
void
ci_drop(void)
{
	struct lines l;

	drop_attempt_file(&step[STEP_OUTPUT]);
	drop_attempt_file(&step[STEP_ENV]);
	if (format == CI_GITLAB)
		close_group();
	if (format != CI_GITHUB)
		return;
	begin_own(&l);
	end_group(&l);
	end_own(&l, 1);
}
