/* SPDX-License-Identifier: ISC */
/*
 * The record of a circuit: a small text file per NAME in the state
 * directory.  The directory is reached from / one component at a time
 * (path.c), following no symbolic link, through directories that only root
 * or the user can change; a record is opened by its name relative to it,
 * replaced whole under a lock on a file of its own (in place by one write
 * when it fits in a page, else by rename(2)), and never written over when
 * it is not a record.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "circuit.h"
#include "common.h"

#define MAGIC		"retry-circuit 1\n"
#define GROUP_LINE_MAX	(12 + 3 * 21 + HOST_MAX + 1)	/* "probe-group ..." */
#define RECORD_MAX	(64 + 21 * BUDGET_MAX + 256 + RUNS_MAX + GROUP_LINE_MAX + \
	42 * FIRSTS_MAX + MARKS_MAX + 128)

/* The record as it is kept: the rules' state, and how the probe is held. */
struct record {
	struct breaker_state b;
	long		 probe;		/* the probing process, for people */
	struct group_mark group;	/* the probe's attempt, or pgid 0 */
	char		 host[HOST_MAX + 1];	/* group: where it runs */
};

static const char *const state_names[] = { "closed", "open", "half-open" };

/* Byte 0 of the lock file: changing the record; byte 1: the probe. */
/* Designated: the members of struct flock are in another order on macOS. */
static const struct flock update_lock = {
	.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1
};
static const struct flock probe_lock = {
	.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1
};

static int
failure(struct circuit *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(c->sh.err, sizeof(c->sh.err), fmt, ap);
	va_end(ap);
	return -1;
}

/* The record's or the lock file's error number E, as "DIR/NAME: why". */
static int
record_failed(struct circuit *c, int e)
{
	return failure(c, "%s/%s: %s", c->dir_path, c->sh.name, strerror(e));
}

static int
lock_failed(struct circuit *c, int e)
{
	return failure(c, "%s/.%s.lock: %s", c->dir_path, c->sh.name,
	    strerror(e));
}

/*
 * A step that answered STEP_BUSY, the record's lock held by another run,
 * is waited for by the caller, in proc.c's wait (proc_lock()), which
 * keeps an attempt's stdio moving and is not this file's: its descriptor
 * and lock.  The wait's answer then gives the step's: STEP_BUSY again,
 * for the caller to ask the step again and find the lock its own, or
 * STEP_SIGNAL, STEP_TIMEOUT or STEP_FAILED, said in c->sh.err.
 */
const struct flock *
circuit_lock_of(const struct circuit *c, int *fd)
{
	*fd = c->lock;
	return &update_lock;
}

enum circuit_step
circuit_lock_waited(struct circuit *c, enum lock_wait got)
{
	switch (got) {
	case LOCK_TAKEN:
		return STEP_BUSY;	/* the step, again */
	case LOCK_TIMEOUT:
		(void)failure(c, "%s/%s: its lock was held too long",
		    c->dir_path, c->sh.name);
		return STEP_TIMEOUT;
	case LOCK_SIGNAL:
		return STEP_SIGNAL;
	case LOCK_FAILED:
		break;
	}
	(void)lock_failed(c, errno);
	return STEP_FAILED;
}

/* ---- The state directory --------------------------------------------- */

/*
 * $RETRY_STATE_DIR, else $XDG_STATE_HOME/retry, else ~/.local/state/retry;
 * and in it sub, when not NULL (the jobs' records, job.c).
 */
static int
state_dir(struct circuit *c, const char *sub)
{
	const char *dir;
	int n;

	if ((dir = getenv("RETRY_STATE_DIR")) != NULL && *dir != '\0')
		n = snprintf(c->dir_path, sizeof(c->dir_path), "%s", dir);
	else if ((dir = getenv("XDG_STATE_HOME")) != NULL && *dir != '\0')
		n = snprintf(c->dir_path, sizeof(c->dir_path), "%s/retry", dir);
	else if ((dir = getenv("HOME")) != NULL && *dir != '\0')
		n = snprintf(c->dir_path, sizeof(c->dir_path),
		    "%s/.local/state/retry", dir);
	else
		return failure(c, "no state directory: set RETRY_STATE_DIR, "
		    "XDG_STATE_HOME or HOME");
	if (n >= 0 && (size_t)n < sizeof(c->dir_path) && sub != NULL)
		n += snprintf(c->dir_path + n, sizeof(c->dir_path) - (size_t)n,
		    "/%s", sub);
	if (n < 0 || (size_t)n >= sizeof(c->dir_path))
		return failure(c, "state directory: %s", strerror(ENAMETOOLONG));
	return 0;
}

/*
 * Why the walk to the state directory stopped (path.c), as one line in
 * c->sh.err, naming the path as given up to where it stopped; c->missing:
 * a directory on the way is not there.
 */
static int
walk_failed(struct circuit *c, const struct path_walk *w)
{
	const char *p = c->dir_path;
	int len = (int)w->len;

	switch (w->fault) {
	case WALK_LINK:
		return failure(c, w->last ? "state directory %.*s is a symbolic "
		    "link" : "%.*s, on the way to the state directory, is a "
		    "symbolic link", len, p);
	case WALK_NOT_OURS:
		return failure(c, w->last ? "state directory %.*s belongs to "
		    "another user" : "%.*s, on the way to the state directory, "
		    "belongs to another user", len, p);
	case WALK_WRITABLE:
		return failure(c, "%s%.*s is writable by other users; make it "
		    "go-w", w->last ? "state directory " : "", len, p);
	case WALK_DOTDOT:
		return failure(c, "state directory %s: no \"..\" in it, please",
		    p);
	case WALK_NO_NAME:
		return failure(c, "state directory %s: not a directory path", p);
	default:
		break;
	}
	if (w->err == ENOTDIR)
		return failure(c, "%.*s is not a directory", len, p);
	c->missing = w->err == ENOENT;
	return failure(c, "%.*s: %s", len, p, strerror(w->err));
}

/*
 * Opens the state directory by path_walk() from / (a relative path from
 * the current directory, as getcwd() names it), following no symbolic
 * link, through directories that only root or the user can change, to
 * one of the user's own that no one else may write.  With make, what is
 * missing is made, 0700.  Returns the descriptor, or -1 with why in
 * c->sh.err (c->missing: it does not exist, and not make).
 */
static int
open_state_dir(struct circuit *c, int make)
{
	char path[PATH_MAX], cwd[PATH_MAX];
	struct path_walk w;

	if (c->dir_path[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return failure(c, "getcwd: %s", strerror(errno));
		if (snprintf(path, sizeof(path), "%s/%s", cwd, c->dir_path) >=
		    (int)sizeof(path))
			return failure(c, "state directory: %s",
			    strerror(ENAMETOOLONG));
		(void)snprintf(c->dir_path, sizeof(c->dir_path), "%s", path);
	}
	if (path_walk(&w, c->dir_path, WALK_TO_DIR | WALK_NO_LINKS |
	    WALK_TRUSTED | WALK_OWN | (make ? WALK_MAKE : 0)) == -1)
		return walk_failed(c, &w);
	return w.dir;
}

/* ---- The record ------------------------------------------------------ */

/* "record DIR/NAME is ...": one line about the record in c->sh.err. */
static int
record_failure(struct circuit *c, const char *why)
{
	return failure(c, "record %s/%s %s", c->dir_path, c->sh.name, why);
}

/*
 * Checks a file of the state directory that retry opened as its own:
 * path_own_file()'s rule, a regular file of the user's with no other name.
 * A record replaced since it was opened, by a run that held the lock (this
 * one reads without it), is a whole record all the same.
 */
static int
check_own_file(struct circuit *c, int fd, const char *name, off_t *size)
{
	const char *what = strcmp(name, c->sh.name) == 0 ? "record " : "";
	struct stat st;

	switch (path_own_file(fd, 1, &st)) {
	case WALK_OK:
		break;
	case WALK_NOT_REGULAR:
		return failure(c, "%s%s/%s is not a regular file", what,
		    c->dir_path, name);
	case WALK_NOT_OURS:
		return failure(c, "%s%s/%s belongs to another user", what,
		    c->dir_path, name);
	case WALK_OTHER_NAME:
		return failure(c, "%s%s/%s has another name (a hard link); "
		    "not used", what, c->dir_path, name);
	default:
		return failure(c, "%s/%s: %s", c->dir_path, name,
		    strerror(errno));
	}
	if (size != NULL)
		*size = st.st_size;
	return 0;
}

/* Steps over w at *p; -1 if it is not there. */
static int
word(char **p, const char *w)
{
	size_t len = strlen(w);

	if (strncmp(*p, w, len) != 0)
		return -1;
	*p += len;
	return 0;
}

/* Reads "key value\n" at *p: a number within [0, max]. */
static int
field(char **p, const char *key, int64_t max, int64_t *v)
{
	size_t len = strlen(key);
	char *s = *p;

	if (strncmp(s, key, len) != 0 || s[len] != ' ')
		return -1;
	s += len + 1;
	if (scan_bounded(&s, max, v) == -1 || *s != '\n')
		return -1;
	*p = s + 1;
	return 0;
}

/*
 * "\nruns N LETTERS" at *p, each letter p, r or f: the last line since
 * 0.3.  A record of 0.2 has none: no runs yet, and the line is added when
 * a step next writes it.
 */
static int
parse_runs(char **p, struct record *r)
{
	int64_t n;
	size_t i;

	if (word(p, "\nruns ") == -1)
		return 0;
	if (scan_bounded(p, RUNS_MAX, &n) == -1)
		return -1;
	r->b.nruns = (size_t)n;
	if (n > 0 && word(p, " ") == -1)
		return -1;
	for (i = 0; i < r->b.nruns; i++)
		if ((*p)[i] == '\0' || strchr("prf", (*p)[i]) == NULL)
			return -1;
	memcpy(r->b.runs, *p, r->b.nruns);
	r->b.runs[r->b.nruns] = '\0';
	*p += r->b.nruns;
	return **p == '\n' ? 0 : -1;
}

/*
 * "\nshare P LEAST" at *p: the last --budget P%/DUR and its
 * --budget-min, since 0.4 (after "runs"); none: no such budget.
 */
static int
parse_share(char **p, struct record *r)
{
	int64_t share, least;

	if (word(p, "\nshare ") == -1)
		return 0;
	if (scan_bounded(p, SHARE_MAX, &share) == -1 || share < 1 ||
	    word(p, " ") == -1 || scan_bounded(p, BUDGET_MAX, &least) == -1)
		return -1;
	r->b.share = (long)share;
	r->b.least = (long)least;
	return 0;
}

/*
 * "\nfirsts N TIME COUNT ..." at *p: the first attempts of --budget
 * P%/DUR, N parts of the window, each where it begins and how many came
 * in it, oldest first, since 0.4; none: no part counted.
 */
static int
parse_firsts(char **p, struct record *r, int64_t later)
{
	int64_t n, at, count;
	size_t i;

	if (word(p, "\nfirsts ") == -1)
		return 0;
	if (scan_bounded(p, FIRSTS_MAX, &n) == -1 || n < 1)
		return -1;
	for (i = 0; i < (size_t)n; i++) {
		if (word(p, " ") == -1 || scan_bounded(p, later, &at) == -1 ||
		    (i > 0 && at <= r->b.first_at[i - 1]) || word(p, " ") == -1 ||
		    scan_bounded(p, COUNT_MAX, &count) == -1 || count < 1)
			return -1;
		r->b.first_at[i] = at;
		r->b.first_n[i] = (long)count;
	}
	r->b.nfirsts = (size_t)n;
	return 0;
}

/* "\ntrip P M" at *p: the last --trip P%/M, since 0.4; none: --trip N. */
static int
parse_trip(char **p, struct record *r)
{
	int64_t ratio, span;

	if (word(p, "\ntrip ") == -1)
		return 0;
	if (scan_bounded(p, 100, &ratio) == -1 || ratio < 1 ||
	    word(p, " ") == -1 || scan_bounded(p, MARKS_MAX, &span) == -1 ||
	    span < SPAN_MIN)
		return -1;
	r->b.ratio = (long)ratio;
	r->b.span = (long)span;
	return 0;
}

/*
 * "\nmarks N BITS" at *p: how the last N attempts under --trip P%/M
 * ended, 1 failed and 0 not, oldest first, since 0.4; none: none marked.
 */
static int
parse_marks(char **p, struct record *r)
{
	int64_t n;

	if (word(p, "\nmarks ") == -1)
		return 0;
	if (scan_bounded(p, MARKS_MAX, &n) == -1 || n < 1 ||
	    word(p, " ") == -1 || strspn(*p, "01") != (size_t)n)
		return -1;
	memcpy(r->b.marks, *p, (size_t)n);
	r->b.marks[n] = '\0';
	r->b.nmarks = (size_t)n;
	*p += n;
	return 0;
}

/* Whether c is a byte of a host's name as the record keeps it. */
static int
host_byte(char c)
{
	return c > ' ' && c <= '~';
}

/*
 * "\nprobe-group PGID SID START HOST" at *p: the process group of the
 * probe's attempt while it runs, since 0.4 (after "runs"), so that a run
 * that takes the probe over from a killed one on the same host can end
 * what is left of it.  None: no group (a record of 0.3, or no probe).
 */
static int
parse_group(char **p, struct record *r)
{
	int64_t v[3];
	size_t n;

	if (word(p, "\nprobe-group ") == -1)
		return 0;
	if (scan_bounded(p, INT_MAX, &v[0]) == -1 || v[0] < 2 ||
	    word(p, " ") == -1 || scan_bounded(p, INT_MAX, &v[1]) == -1 ||
	    word(p, " ") == -1 || scan_bounded(p, INT64_MAX, &v[2]) == -1 ||
	    word(p, " ") == -1)
		return -1;
	for (n = 0; n <= HOST_MAX && host_byte((*p)[n]); n++)
		continue;
	if (n == 0 || n > HOST_MAX || (*p)[n] != '\n')
		return -1;
	r->group.pgid = (long)v[0];
	r->group.sid = (long)v[1];
	r->group.start = (unsigned long long)v[2];
	memcpy(r->host, *p, n);
	r->host[n] = '\0';
	*p += n;
	return 0;
}

/*
 * The text of a record into *r, every field within its range, so that no
 * arithmetic on it can overflow and no wait can be longer than a duration
 * can be: times no later than now + DUR_MAX.  -1: corrupt.
 */
static int
parse_record(char *text, int64_t now, struct record *r)
{
	int64_t v[8], later = now + DUR_MAX;
	char *p = text + strlen(MAGIC);
	size_t s, i;

	memset(r, 0, sizeof(*r));
	if (strncmp(p, "state ", 6) != 0)
		return -1;
	p += 6;
	for (s = 0; s < 3; s++)
		if (strncmp(p, state_names[s], strlen(state_names[s])) == 0 &&
		    p[strlen(state_names[s])] == '\n')
			break;
	if (s == 3)
		return -1;
	r->b.state = (enum circuit_state)s;
	p += strlen(state_names[s]) + 1;
	if (field(&p, "failures", COUNT_MAX, &v[0]) ||
	    field(&p, "openings", COUNT_MAX, &v[1]) ||
	    field(&p, "half-open-at", later, &v[2]) ||
	    field(&p, "probe", INT_MAX, &v[3]) || word(&p, "budget ") ||
	    scan_bounded(&p, BUDGET_MAX, &v[4]) == -1 || word(&p, " ") ||
	    scan_bounded(&p, DUR_MAX, &v[5]) == -1 || word(&p, "\nretries ") ||
	    scan_bounded(&p, BUDGET_MAX, &v[6]) == -1)
		return -1;
	r->b.failures = (long)v[0];
	r->b.openings = (long)v[1];
	r->b.half_open_at = v[2];
	r->probe = (long)v[3];
	r->b.budget = (long)v[4];
	r->b.window = v[5];
	r->b.nretries = (size_t)v[6];
	for (i = 0; i < r->b.nretries; i++) {
		if (*p++ != ' ' || scan_bounded(&p, later, &r->b.retries[i]) ==
		    -1 || (i > 0 && r->b.retries[i] < r->b.retries[i - 1]))
			return -1;
	}
	if (*p != '\n' || parse_runs(&p, r) == -1 || parse_share(&p, r) == -1 ||
	    parse_firsts(&p, r, later) == -1 || parse_trip(&p, r) == -1 ||
	    parse_marks(&p, r) == -1 || parse_group(&p, r) == -1)
		return -1;
	while (*p == '\n')	/* a longer record's length, written in place */
		p++;
	return *p == '\0' ? 0 : -1;
}

static size_t
format_record(char *buf, size_t size, const struct record *r)
{
	size_t len, i;

	len = (size_t)snprintf(buf, size, MAGIC "state %s\nfailures %ld\n"
	    "openings %ld\nhalf-open-at %lld\nprobe %ld\nbudget %ld %lld\n"
	    "retries %zu", state_names[r->b.state], r->b.failures, r->b.openings,
	    (long long)r->b.half_open_at, r->probe, r->b.budget,
	    (long long)r->b.window, r->b.nretries);
	for (i = 0; i < r->b.nretries && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, " %lld",
		    (long long)r->b.retries[i]);
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, "\nruns %zu%s%s\n",
		    r->b.nruns, r->b.nruns > 0 ? " " : "", r->b.runs);
	if (len < size && r->b.share != 0)
		len += (size_t)snprintf(buf + len, size - len, "share %ld %ld\n",
		    r->b.share, r->b.least);
	if (len < size && r->b.nfirsts > 0)
		len += (size_t)snprintf(buf + len, size - len, "firsts %zu",
		    r->b.nfirsts);
	for (i = 0; i < r->b.nfirsts && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, " %lld %ld%s",
		    (long long)r->b.first_at[i], r->b.first_n[i],
		    i + 1 == r->b.nfirsts ? "\n" : "");
	if (len < size && r->b.ratio != 0)
		len += (size_t)snprintf(buf + len, size - len, "trip %ld %ld\n",
		    r->b.ratio, r->b.span);
	if (len < size && r->b.nmarks > 0)
		len += (size_t)snprintf(buf + len, size - len, "marks %zu %s\n",
		    r->b.nmarks, r->b.marks);
	if (len < size && r->group.pgid != 0)
		len += (size_t)snprintf(buf + len, size - len, "probe-group %ld "
		    "%ld %llu %s\n", r->group.pgid, r->group.sid,
		    r->group.start, r->host);
	return len;
}

/*
 * Opens the record, for a step to read and write (making it with make),
 * else to read; -1 with c->sh.err empty when there is none.  O_NONBLOCK: a
 * FIFO there cannot hold retry.
 */
static int
open_record(struct circuit *c, int writing, int make)
{
	int fd, flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

	c->size = 0;
	fd = openat(c->dir, c->sh.name, !writing ? flags | O_RDONLY : make ?
	    flags | O_RDWR | O_CREAT : flags | O_RDWR, 0600);
	if (fd == -1 && errno == ENOENT && !make)
		return -1;
	if (fd == -1 && (errno == ELOOP || errno == EMLINK))
		return record_failure(c, "is a symbolic link");
	if (fd == -1)
		return record_failed(c, errno);
	if (check_own_file(c, fd, c->sh.name, &c->size) == -1) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Up to max bytes of the record into text, NUL-terminated. */
static int
read_text(struct circuit *c, int fd, char *text, size_t max, size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < max && (n = read(fd, text + *got, max - *got)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return record_failed(c, errno);
		*got += (size_t)n;
	}
	text[*got] = '\0';
	return 0;
}

/*
 * Reads the text of the record, up to size - 1 bytes, into text,
 * NUL-terminated, its length in *got (0: none, or empty).  A file that
 * does not begin with c->magic is not a record: -1, and it is never
 * written over.  Writing (a step): the record stays open.
 */
static int
read_raw(struct circuit *c, char *text, size_t size, size_t *got,
    int writing)
{
	size_t magic = strlen(c->magic);
	int fd, e;

	*got = 0;
	c->sh.err[0] = '\0';
	if ((fd = open_record(c, writing, 0)) == -1)
		return c->sh.err[0] != '\0' ? -1 : 0;	/* else none yet */
	e = read_text(c, fd, text, size - 1, got);
	if (writing && e == 0)
		c->record = fd;
	else if (close(fd) == -1 && e == 0)
		e = record_failed(c, errno);
	c->found = e == 0 && *got > 0;
	if (e == -1 || *got == 0)
		return e;
	if (*got < magic || memcmp(text, c->magic, magic) != 0)
		return record_failure(c, "is not a record of retry; it is left "
		    "as it is");
	return 0;
}

/*
 * Reads the record into *r: a fresh one when there is none or it is empty;
 * *corrupt set, and a fresh one, when it is a record whose fields are not
 * right.
 */
static int
read_record(struct circuit *c, struct record *r, int *corrupt, int writing)
{
	static char text[RECORD_MAX + 1];
	size_t got;

	memset(r, 0, sizeof(*r));
	*corrupt = 0;
	if (read_raw(c, text, sizeof(text), &got, writing) == -1)
		return -1;
	if (got == 0)
		return 0;
	if (got == RECORD_MAX || strlen(text) != got ||
	    parse_record(text, realtime_now(), r) == -1) {
		memset(r, 0, sizeof(*r));
		*corrupt = 1;
	}
	return 0;
}

/*
 * A record of a page at most, over the old one in place: one write from
 * its start, padded with newlines to the old length.  The kernel copies a
 * page whole or not at all, so a run killed at any moment leaves the old
 * record or the new one; and the file's block is there already, so a full
 * disk cannot fail it halfway.  A rename(2) would cost more than all the
 * rest of a step on ext4, which writes the new file out first.
 */
static int
write_in_place(struct circuit *c, char *buf, size_t len)
{
	ssize_t n;

	if ((off_t)len < c->size) {
		memset(buf + len, '\n', (size_t)c->size - len);
		len = (size_t)c->size;
	}
	while ((n = pwrite(c->record, buf, len, 0)) == -1 && errno == EINTR)
		;
	if (n == -1 || (size_t)n != len)	/* short: a full disk */
		return record_failed(c, n == -1 ? errno : ENOSPC);
	return 0;
}

/*
 * A longer record (the retries of a large --budget) is written to
 * .NAME.new beside it, then renamed over it, with the same promise.
 * Called under the lock, so no one else writes .NAME.new meanwhile.
 */
static int
write_renamed(struct circuit *c, const char *buf, size_t len)
{
	char temp[NAME_MAX + 1];
	int fd, e = 0;

	(void)snprintf(temp, sizeof(temp), ".%s.new", c->sh.name);
	if (unlinkat(c->dir, temp, 0) == -1 && errno != ENOENT)
		return failure(c, "%s/%s: %s", c->dir_path, temp,
		    strerror(errno));
	if ((fd = openat(c->dir, temp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		return failure(c, "%s/%s: %s", c->dir_path, temp,
		    strerror(errno));
	if (write_all(fd, buf, len) == -1)
		e = errno;
	if (close(fd) == -1 && e == 0)
		e = errno;
	if (e == 0 && renameat(c->dir, temp, c->dir, c->sh.name) == -1)
		e = errno;
	if (e == 0)
		return 0;
	if (unlinkat(c->dir, temp, 0) == -1 && errno != ENOENT)
		e = errno;
	return record_failed(c, e);
}

/*
 * Replaces the record whole with the len bytes of buf (whose size is
 * PAGE_MIN at least, for the padding), so that no reader ever sees half
 * of it.
 */
static int
write_text(struct circuit *c, char *buf, size_t len)
{
	/* Made at its first change (a run that ends counts: any run that ran). */
	if (c->record == -1 && (c->record = open_record(c, 1, 1)) == -1)
		return -1;
	if (len <= PAGE_MIN && c->size <= PAGE_MIN)
		return write_in_place(c, buf, len);
	return write_renamed(c, buf, len);
}

/* Replaces the record whole, so that no reader ever sees half of it. */
static int
write_record(struct circuit *c, const struct record *r)
{
	static char buf[RECORD_MAX];	/* PAGE_MIN and more, for the padding */

	return write_text(c, buf, format_record(buf, sizeof(buf), r));
}

/* ---- Steps, under the lock --------------------------------------------- */

static struct record rec;	/* the one being changed (8 kB: not on the stack) */

static enum circuit_step finish_step(struct circuit *, enum circuit_step);

/*
 * The record's lock, at once: STEP_DONE, STEP_BUSY when another run holds
 * it, or STEP_FAILED (said in c->sh.err, emptied first).  A lock this
 * process holds is taken again at once.
 */
static enum circuit_step
take_lock(struct circuit *c)
{
	c->sh.err[0] = '\0';
	if (fcntl(c->lock, F_SETLK, &update_lock) == 0)
		return STEP_DONE;
	if (errno == EAGAIN || errno == EACCES)
		return STEP_BUSY;
	(void)lock_failed(c, errno);
	return STEP_FAILED;
}

/*
 * The lock, then the record; a corrupt one is noted for the caller.  A
 * lock that another run holds is STEP_BUSY: the caller waits for it
 * (circuit_lock_of()) and asks again; a lock this process holds is taken
 * again at once.
 */
static enum circuit_step
begin_step(struct circuit *c)
{
	enum circuit_step s;
	int corrupt;

	if ((s = take_lock(c)) != STEP_DONE)
		return s;
	if (read_record(c, &rec, &corrupt, 1) == -1)
		return finish_step(c, STEP_FAILED);
	if (corrupt)
		c->sh.corrupt = 1;
	c->rewrite = corrupt;
	return STEP_DONE;
}

/*
 * The end of any step, s its answer so far: the record closed and the
 * lock given back; the first failure is the answer.
 */
static enum circuit_step
finish_step(struct circuit *c, enum circuit_step s)
{
	struct flock unlock = update_lock;

	if (c->record != -1 && close(c->record) == -1 && s == STEP_DONE) {
		(void)record_failed(c, errno);
		s = STEP_FAILED;
	}
	c->record = -1;
	unlock.l_type = F_UNLCK;
	if (fcntl(c->lock, F_SETLK, &unlock) == -1 && s == STEP_DONE) {
		(void)lock_failed(c, errno);
		s = STEP_FAILED;
	}
	return s;
}

/* Writes the record back if changed (or it was corrupt), and unlocks. */
static enum circuit_step
end_step(struct circuit *c, int changed)
{
	enum circuit_step s = STEP_DONE;

	if ((changed || c->rewrite) && write_record(c, &rec) == -1)
		s = STEP_FAILED;
	c->rewrite = 0;
	return finish_step(c, s);
}

/* ---- The probe -------------------------------------------------------- */

/*
 * The probe of a half-open circuit is a lock on byte 1 of the lock file,
 * held for as long as the probing attempt runs: the kernel drops it when
 * its holder dies, whatever became of the process ID.  1: ours now; 0:
 * another run holds it; -1: failed.
 */
static int
take_probe(struct circuit *c)
{
	struct flock probe = probe_lock;

	if (fcntl(c->lock, F_SETLK, &probe) == 0)
		return 1;
	if (errno == EAGAIN || errno == EACCES)
		return 0;
	return lock_failed(c, errno);
}

static int
drop_probe(struct circuit *c)
{
	struct flock probe = probe_lock;

	c->sh.probing = 0;
	probe.l_type = F_UNLCK;
	if (fcntl(c->lock, F_SETLK, &probe) == 0)
		return 0;
	return lock_failed(c, errno);
}

/* The pid of the run that holds the probe, or 0 when none does. */
static long
probe_holder(struct circuit *c)
{
	struct flock probe = probe_lock;

	if (c->lock == -1 || fcntl(c->lock, F_GETLK, &probe) == -1 ||
	    probe.l_type == F_UNLCK)
		return 0;
	return (long)probe.l_pid;
}

/* ---- The steps ---------------------------------------------------------- */

/* The record names a probe's group on this host that is not this run's. */
static int
group_left_here(const struct circuit *c)
{
	return rec.group.pgid != 0 && c->host[0] != '\0' &&
	    strcmp(rec.host, c->host) == 0 && rec.probe != (long)getpid();
}

/*
 * May an attempt start now?  breaker_admit() says; the probe it asks for
 * is byte 1 of the lock file, taken here when the rules want one, and
 * given back when the budget makes the retry wait.  A probe taken over
 * from a run that is gone: the group its attempt left on this host, and
 * the process that held it, go into c->left and c->left_by, for the
 * caller to end before this run's attempt starts (the probe keeps the
 * others out meanwhile).
 */
enum circuit_step
circuit_admit(struct circuit *c, const struct admit_ask *a,
    enum admission *v, int64_t *wait)
{
	struct group_mark left = { 0, 0, 0 };
	long holder = 0;
	int64_t now;
	enum circuit_step s;
	int changed = 0, got = 0;

	if ((s = begin_step(c)) != STEP_DONE)
		return s;
	now = realtime_now();
	/* The probe is taken, or found this run's, only when wanted. */
	if (breaker_wants_probe(&rec.b, now)) {
		if ((got = c->sh.probing ? 1 : take_probe(c)) == -1) {
			(void)end_step(c, 0);
			return STEP_FAILED;
		}
		if (got && !c->sh.probing && group_left_here(c)) {
			left = rec.group;
			holder = rec.probe;
		}
		c->sh.probing = got;
	}
	*v = breaker_admit(&rec.b, a, got, now, wait, &changed);
	if (*v == ADMIT_BUDGET && c->sh.probing && drop_probe(c) == -1) {
		(void)end_step(c, changed);
		return STEP_FAILED;
	}
	if (*v == ADMIT_PROBE && rec.probe != (long)getpid()) {
		rec.probe = (long)getpid();
		changed = 1;
	}
	/* The group stays named until this run's replaces it: a run
	 * killed meanwhile leaves it for the next. */
	s = end_step(c, changed);
	c->left = left;
	c->left_by = holder;
	if (s != STEP_DONE || *v != ADMIT_PROBE)
		memset(&c->left, 0, sizeof(c->left));
	return s;
}

/*
 * The probe's attempt has started, its process group marked m (the
 * caller's, from proc_mark_group()): named in the record with this host,
 * for a run that takes the probe over should this one be killed.  Nothing
 * without a host's name to match.
 */
enum circuit_step
circuit_probe_group(struct circuit *c, const struct group_mark *m)
{
	enum circuit_step s;

	if (!c->sh.probing || c->host[0] == '\0' || m->start > INT64_MAX)
		return STEP_DONE;
	if ((s = begin_step(c)) != STEP_DONE)
		return s;
	rec.group = *m;
	(void)snprintf(rec.host, sizeof(rec.host), "%s", c->host);
	return end_step(c, 1);
}

/*
 * How an attempt ended, by breaker_result(); an end that opens or closes
 * the circuit clears the probe's name.  The probe is given up after the
 * record says so, so that the runs it frees see it.  c->sh.turned says
 * whether this end opened the circuit or closed it again.
 */
enum circuit_step
circuit_result(struct circuit *c, int success, const struct breaker *b,
    double u)
{
	enum circuit_step s;
	int changed = 0;

	c->sh.turned = TURN_NONE;
	/* Busy: the caller asks again, the probe still this run's. */
	if ((s = begin_step(c)) == STEP_BUSY)
		return s;
	if (s == STEP_DONE) {
		c->sh.turned = breaker_result(&rec.b, b, success,
		    c->sh.probing, u, realtime_now(), &c->sh.failures,
		    &changed);
		if (success || c->sh.turned == TURN_OPENED)
			rec.probe = 0;
		/* The probe's attempt has ended: its group is no one's to end. */
		if (c->sh.probing && rec.group.pgid != 0) {
			memset(&rec.group, 0, sizeof(rec.group));
			rec.host[0] = '\0';
			changed = 1;
		}
		s = end_step(c, changed);
		if (s != STEP_DONE)
			c->sh.turned = TURN_NONE;
	}
	if (c->sh.probing && drop_probe(c) == -1)
		s = STEP_FAILED;
	return s;
}

/*
 * How the run ended (kind), kept with the last RUNS_MAX runs' for the
 * flake count of --circuit-status.
 */
enum circuit_step
circuit_run_ended(struct circuit *c, enum run_kind kind)
{
	enum circuit_step s;

	if ((s = begin_step(c)) != STEP_DONE)
		return s;
	breaker_run_ended(&rec.b, kind);
	return end_step(c, 1);
}

/* --circuit-reset: a fresh record, as if no run had been. */
enum circuit_step
circuit_reset(struct circuit *c)
{
	enum circuit_step s;

	if ((s = begin_step(c)) != STEP_DONE)
		return s;
	memset(&rec, 0, sizeof(rec));
	return end_step(c, 1);
}

/*
 * The record into rec under a shared lock, as no step holds it: a record
 * written in place may be half-copied while a step writes it.  A lock file
 * opened for reading takes a read lock, so a read-only state directory can
 * be read.  No lock file: no run has written a record.
 */
static int
read_locked(struct circuit *c, int *corrupt)
{
	struct flock lock = update_lock;
	int e;

	lock.l_type = F_RDLCK;
	while (c->lock != -1 && fcntl(c->lock, F_SETLKW, &lock) == -1)
		if (errno != EINTR)
			return lock_failed(c, errno);
	e = read_record(c, &rec, corrupt, 0);
	lock.l_type = F_UNLCK;
	if (c->lock != -1 && fcntl(c->lock, F_SETLK, &lock) == -1 && e == 0)
		e = lock_failed(c, errno);
	return e;
}

/*
 * --circuit-status: what the record says, read under a shared lock and
 * without changing anything, so that a read-only state directory can be
 * read.
 */
enum circuit_step
circuit_view(struct circuit *c, struct circuit_view *view)
{
	int64_t now = realtime_now();
	int corrupt = 0;

	memset(view, 0, sizeof(*view));
	if (c->dir != -1 && read_locked(c, &corrupt) == -1)
		return STEP_FAILED;
	if (c->dir == -1)
		memset(&rec, 0, sizeof(rec));
	view->corrupt = c->dir != -1 && corrupt;
	view->state = rec.b.state;
	view->failures = rec.b.failures;
	view->openings = rec.b.openings;
	view->half_opens_in = rec.b.half_open_at - now;
	view->probe = rec.b.state == HALF_OPEN ? probe_holder(c) : 0;
	breaker_view(&rec.b, now, view);
	view->found = c->dir != -1 && c->found;
	view->place = c->dir_path;
	memcpy(view->runs, rec.b.runs, sizeof(view->runs));
	return STEP_DONE;
}

/* A host name that another host wrote to the store, fit to print. */
static const char *
escaped_host(char *buf, size_t size, const char *host)
{
	(void)escape(buf, size, host, strlen(host));
	return buf;
}

/* The last runs counted, and the flake rate (see gate.c). */
static void
print_runs(FILE *f, const struct circuit_view *v)
{
	long n = v->at_once + v->retried + v->failed;

	if (n == 0)
		(void)fprintf(f, "runs:      none counted yet\n");
	else
		(void)fprintf(f, "runs:      %ld of the last %d: %ld passed at "
		    "once, %ld after retries, %ld failed\n", n, RUNS_MAX,
		    v->at_once, v->retried, v->failed);
	if (v->flake_rate < 0)
		(void)fprintf(f, "flakes:    not known: no run has passed yet\n");
	else
		(void)fprintf(f, "flakes:    %.1f%% (%ld of the %ld that passed "
		    "needed retries)\n", 100 * v->flake_rate, v->retried,
		    v->at_once + v->retried);
}

/*
 * Where the record was read, or looked for: a status of a name that no
 * run has recorded there (a typo, another HOME, a store left out) says so.
 */
static void
print_place(FILE *f, const char *name, const struct circuit_view *v)
{
	static char place[4 * PATH_MAX];

	(void)escape(place, sizeof(place), v->place, strlen(v->place));
	if (v->on_store && v->found)
		(void)fprintf(f, "record:    retry:{%s}:state on %s\n", name,
		    place);
	else if (v->on_store)
		(void)fprintf(f, "record:    none: no key retry:{%s}:state on "
		    "%s\n", name, place);
	else if (v->found)
		(void)fprintf(f, "record:    %s/%s\n", place, name);
	else
		(void)fprintf(f, "record:    none: no file %s in %s\n", name,
		    place);
}

/*
 * The failures: in a row, or under --trip P%/M those of the last M
 * attempts, and, until M were seen, of those seen.
 */
static void
print_failures(FILE *f, const struct circuit_view *v)
{
	if (v->ratio == 0)
		(void)fprintf(f, "failures:  %ld in a row\n", v->failures);
	else if (v->seen == 0)
		(void)fprintf(f, "failures:  none seen yet (trips at %ld%% of the "
		    "last %ld)\n", v->ratio, v->span);
	else if (v->seen >= v->span)
		(void)fprintf(f, "failures:  %ld of the last %ld (trips at %ld%%)\n",
		    v->failing, v->span, v->ratio);
	else
		(void)fprintf(f, "failures:  %ld of the last %ld (trips at %ld%% "
		    "once %ld are seen)\n", v->failing, v->seen, v->ratio,
		    v->span);
}

/* What --circuit-status prints. */
int
circuit_print(FILE *f, const char *name, const struct circuit_view *v)
{
	char d[32], host[4 * sizeof(v->probe_host)];

	(void)fprintf(f, "circuit:   %s\nstate:     %s", name,
	    state_names[v->state]);
	if (v->state == OPEN && v->half_opens_in > 0)
		(void)fprintf(f, ", half-opens in %ss", fmt_seconds(d,
		    sizeof(d), 0, v->half_opens_in));
	else if (v->state == OPEN)
		(void)fprintf(f, ", half-opens at the next attempt");
	else if (v->state == HALF_OPEN && v->probe != 0 &&
	    v->probe_host[0] != '\0')
		(void)fprintf(f, ", probed by process %ld on %s", v->probe,
		    escaped_host(host, sizeof(host), v->probe_host));
	else if (v->state == HALF_OPEN && v->probe != 0)
		(void)fprintf(f, ", probed by process %ld", v->probe);
	else if (v->state == HALF_OPEN)
		(void)fprintf(f, ", its probe is gone: the next attempt probes");
	(void)fprintf(f, "\n");
	print_failures(f, v);
	(void)fprintf(f, "openings:  %ld in a row\n", v->openings);
	if (v->share > 0)
		(void)fprintf(f, "retries:   %ld of %ld allowed (%ld%% of %ld first "
		    "attempt%s + %ld)\n", v->retries, v->allowed, v->share,
		    v->arrived, v->arrived == 1 ? "" : "s", v->least);
	else if (v->window > 0)
		(void)fprintf(f, "retries:   %ld in the last %s (budget %ld)\n",
		    v->retries, fmt_duration(d, sizeof(d), v->window), v->budget);
	else
		(void)fprintf(f, "retries:   not counted: no run with --budget "
		    "yet\n");
	print_runs(f, v);
	print_place(f, name, v);
	return ferror(f) ? -1 : 0;
}

/* Whether the file NAME of the state directory begins as a record. */
static int
is_record(struct circuit *c, const char *name)
{
	char head[sizeof(MAGIC) - 1];
	ssize_t n;
	int fd;

	if (!valid_circuit_name(name) || (fd = openat(c->dir, name, O_RDONLY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return 0;
	while ((n = read(fd, head, sizeof(head))) == -1 && errno == EINTR)
		;
	(void)close(fd);	/* read only: nothing to lose */
	return n == (ssize_t)sizeof(head) && memcmp(head, MAGIC,
	    sizeof(head)) == 0;
}

/*
 * --circuit-list: the names that have a record in the state directory
 * into *names, in no order; none when it does not exist yet.  -1 with
 * why in c->sh.err.
 */
int
circuit_list(struct circuit *c, struct names *names)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	if (c->dir == -1)
		return 0;
	if ((fd = dup(c->dir)) == -1 || (dir = fdopendir(fd)) == NULL) {
		if (fd != -1)
			(void)close(fd);
		return failure(c, "%s: %s", c->dir_path, strerror(errno));
	}
	errno = 0;
	while ((d = readdir(dir)) != NULL) {
		if (is_record(c, d->d_name) && names_add(names, d->d_name,
		    strlen(d->d_name)) == -1)
			break;
		errno = 0;
	}
	if (errno != 0)
		(void)failure(c, "%s: %s", c->dir_path, strerror(errno));
	if (closedir(dir) == -1 && c->sh.err[0] == '\0')
		(void)failure(c, "%s: %s", c->dir_path, strerror(errno));
	return c->sh.err[0] != '\0' ? -1 : 0;
}

/* ---- Opening ------------------------------------------------------------ */

/*
 * This host's name as the record keeps it: a word of printable bytes, any
 * other one as '?', at most HOST_MAX of them; "" when the system has none.
 */
static void
host_name(char *buf, size_t size)
{
	size_t i;

	if (gethostname(buf, size) == -1)
		buf[0] = '\0';
	buf[size - 1] = '\0';	/* POSIX leaves a cut name unended */
	for (i = 0; buf[i] != '\0'; i++)
		if (!host_byte(buf[i]))
			buf[i] = '?';
}

/*
 * Opens the state directory (and in it sub, when not NULL) and the lock
 * file of NAME there (making them if need be, but for reading only), and
 * checks that the record, if any, begins with magic.  Returns -1 with the
 * one line that says why in c->sh.err.  Reading only (a status), a
 * directory that does not exist yet is an empty one.
 */
int
record_open(struct circuit *c, const char *sub, const char *magic,
    const char *name, int reading_only)
{
	static char text[RECORD_MAX + 1];
	char lockname[NAME_MAX + 1];
	size_t got;

	memset(c, 0, sizeof(*c));
	c->sh.name = name;
	c->magic = magic;
	c->dir = c->lock = c->record = -1;
	if (state_dir(c, sub) == -1)
		return -1;
	if ((c->dir = open_state_dir(c, !reading_only)) == -1) {
		if (!reading_only || !c->missing)
			return -1;
		c->sh.err[0] = '\0';	/* none yet: an empty record */
		return 0;
	}
	if (name == NULL)
		return 0;	/* --circuit-list: the directory only */
	host_name(c->host, sizeof(c->host));
	/* Refused now, not after a --splay: a record that is not one. */
	if (read_raw(c, text, sizeof(text), &got, 0) == -1)
		return -1;
	(void)snprintf(lockname, sizeof(lockname), ".%s.lock", name);
	c->lock = openat(c->dir, lockname, reading_only ? O_RDONLY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC : O_RDWR | O_CREAT |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (c->lock == -1 && reading_only)
		return 0;	/* no lock file: no probe to name */
	if (c->lock == -1)
		return lock_failed(c, errno);
	return check_own_file(c, c->lock, lockname, NULL);
}

/* The circuit's record of NAME; NULL: the directory only. */
int
circuit_open(struct circuit *c, const char *name, int reading_only)
{
	return record_open(c, NULL, MAGIC, name, reading_only);
}

/* ---- Records of other kinds -------------------------------------------- */

/*
 * A record of another kind (job.c's), opened by record_open(), read and
 * written as text under the same lock and by the same rules as a
 * circuit's.  record_begin() takes the lock (STEP_BUSY: another run holds
 * it: wait for it as circuit_lock_of() says, and ask again) and reads the
 * text, at most size - 1 bytes, NUL-terminated, 0 bytes when there is none
 * yet.
 */
enum circuit_step
record_begin(struct circuit *c, char *text, size_t size, size_t *got)
{
	enum circuit_step s;

	if ((s = take_lock(c)) != STEP_DONE)
		return s;
	if (read_raw(c, text, size, got, 1) == -1)
		return finish_step(c, STEP_FAILED);
	return STEP_DONE;
}

/* Writes text (unless NULL) in place of the record, and unlocks. */
enum circuit_step
record_end(struct circuit *c, const char *text)
{
	static char buf[PAGE_MIN + 1];	/* room for the padding */
	enum circuit_step s = STEP_DONE;
	size_t len;

	if (text != NULL && (len = strlen(text)) >= sizeof(buf))
		s = record_failure(c, "would be too long") == -1 ? STEP_FAILED :
		    STEP_DONE;
	else if (text != NULL) {
		memcpy(buf, text, len);
		if (write_text(c, buf, len) == -1)
			s = STEP_FAILED;
	}
	return finish_step(c, s);
}

/*
 * The text of the record under a shared lock (see read_locked()), for a
 * status; 0 bytes when there is none, or no directory yet.
 */
int
record_read(struct circuit *c, char *text, size_t size, size_t *got)
{
	struct flock lock = update_lock;
	int e;

	*got = 0;
	text[0] = '\0';
	if (c->dir == -1)
		return 0;
	lock.l_type = F_RDLCK;
	while (c->lock != -1 && fcntl(c->lock, F_SETLKW, &lock) == -1)
		if (errno != EINTR)
			return lock_failed(c, errno);
	e = read_raw(c, text, size, got, 0);
	lock.l_type = F_UNLCK;
	if (c->lock != -1 && fcntl(c->lock, F_SETLK, &lock) == -1 && e == 0)
		e = lock_failed(c, errno);
	return e;
}
