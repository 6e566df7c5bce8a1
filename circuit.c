/*
 * The record of a circuit: a small text file per NAME in the state
 * directory, owned by the user and reached without symbolic links, changed
 * only under an fcntl(2) lock, which the kernel drops if its holder dies.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "circuit.h"

#define RECORD_MAX	(64 + 21 * BUDGET_MAX + 256)

static const char *const state_names[] = { "closed", "open", "half-open" };

static int
failure(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* Letters, digits, '.', '_' and '-', and not a name of a directory. */
int
circuit_valid_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 200 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* $RETRY_STATE_DIR, else $XDG_STATE_HOME/retry, else ~/.local/state/retry. */
static int
state_dir(char *buf, size_t size, char *err, size_t errsize)
{
	const char *dir;
	int n;

	if ((dir = getenv("RETRY_STATE_DIR")) != NULL && *dir != '\0')
		n = snprintf(buf, size, "%s", dir);
	else if ((dir = getenv("XDG_STATE_HOME")) != NULL && *dir != '\0')
		n = snprintf(buf, size, "%s/retry", dir);
	else if ((dir = getenv("HOME")) != NULL && *dir != '\0')
		n = snprintf(buf, size, "%s/.local/state/retry", dir);
	else
		return failure(err, errsize, "no state directory: set "
		    "RETRY_STATE_DIR, XDG_STATE_HOME or HOME");
	if (n < 0 || (size_t)n >= size)
		return failure(err, errsize, "state directory: %s",
		    strerror(ENAMETOOLONG));
	return 0;
}

/* Like mkdir -p, 0700 for what it makes; the last one must be ours. */
static int
make_dir(char *path, char *err, size_t errsize)
{
	struct stat st;
	char *slash;

	for (slash = strchr(path + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST) {
			*slash = '/';
			return failure(err, errsize, "%s: %s", path,
			    strerror(errno));
		}
		*slash = '/';
	}
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return failure(err, errsize, "%s: %s", path, strerror(errno));
	if (lstat(path, &st) == -1)
		return failure(err, errsize, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return failure(err, errsize, "state directory %s is a symbolic "
		    "link", path);
	if (!S_ISDIR(st.st_mode))
		return failure(err, errsize, "%s is not a directory", path);
	if (st.st_uid != geteuid())
		return failure(err, errsize, "state directory %s belongs to "
		    "another user", path);
	return 0;
}

/*
 * Opens (making it if need be) the record of NAME.  Returns -1 with the
 * one line that says why in err.
 */
int
circuit_open(struct circuit *c, const char *name, char *err, size_t errsize)
{
	char dir[PATH_MAX];
	struct stat st;
	int n;

	c->fd = -1;
	c->reported = 0;
	if (state_dir(dir, sizeof(dir), err, errsize) == -1 ||
	    make_dir(dir, err, errsize) == -1)
		return -1;
	n = snprintf(c->path, sizeof(c->path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(c->path))
		return failure(err, errsize, "%s: %s", dir,
		    strerror(ENAMETOOLONG));
	c->fd = open(c->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* O_NOFOLLOW on a symbolic link: ELOOP, but EMLINK on FreeBSD. */
	if (c->fd == -1 && (errno == ELOOP || errno == EMLINK))
		return failure(err, errsize, "record %s is a symbolic link",
		    c->path);
	if (c->fd == -1)
		return failure(err, errsize, "%s: %s", c->path, strerror(errno));
	if (fstat(c->fd, &st) == -1)
		return failure(err, errsize, "%s: %s", c->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return failure(err, errsize, "record %s is not a regular file",
		    c->path);
	if (st.st_uid != geteuid())
		return failure(err, errsize, "record %s belongs to another user",
		    c->path);
	return 0;
}

/* Reads "key number\n" at *p. */
static int
field(char **p, const char *key, long long *v)
{
	size_t len = strlen(key);
	char *end;

	if (strncmp(*p, key, len) != 0 || (*p)[len] != ' ' ||
	    (*p)[len + 1] < '0' || (*p)[len + 1] > '9')
		return -1;
	errno = 0;
	*v = strtoll(*p + len + 1, &end, 10);
	if (errno != 0 || (*end != '\n' && *end != ' '))
		return -1;
	*p = end;
	return 0;
}

static int
parse_record(char *text, struct record *r)
{
	long long v[8];
	char *p = text, *end;
	size_t i, s;

	memset(r, 0, sizeof(*r));
	if (strncmp(p, "retry-circuit 1\nstate ", 22) != 0)
		return -1;
	p += 22;
	for (s = 0; s < 3; s++)
		if (strncmp(p, state_names[s], strlen(state_names[s])) == 0 &&
		    p[strlen(state_names[s])] == '\n')
			break;
	if (s == 3)
		return -1;
	r->state = (enum circuit_state)s;
	p += strlen(state_names[s]) + 1;
	if (field(&p, "failures", &v[0]) || *p++ != '\n' ||
	    field(&p, "openings", &v[1]) || *p++ != '\n' ||
	    field(&p, "half-open-at", &v[2]) || *p++ != '\n' ||
	    field(&p, "probe", &v[3]) || *p++ != '\n' ||
	    field(&p, "budget", &v[4]) || *p++ != ' ' ||
	    (v[5] = strtoll(p, &end, 10), end == p) || *end != '\n' ||
	    (p = end + 1, field(&p, "retries", &v[6])) ||
	    v[6] > BUDGET_MAX || v[3] > INT_MAX)
		return -1;
	r->failures = (long)v[0];
	r->openings = (long)v[1];
	r->half_open_at = v[2];
	r->probe = (pid_t)v[3];
	r->budget = (long)v[4];
	r->window = v[5];
	r->nretries = (size_t)v[6];
	for (i = 0; i < r->nretries; i++) {
		if (*p++ != ' ')
			return -1;
		errno = 0;
		r->retries[i] = strtoll(p, &end, 10);
		if (errno != 0 || end == p)
			return -1;
		p = end;
	}
	return *p == '\n' && p[1] == '\0' ? 0 : -1;
}

static size_t
format_record(char *buf, size_t size, const struct record *r)
{
	size_t len, i;

	len = (size_t)snprintf(buf, size, "retry-circuit 1\nstate %s\n"
	    "failures %ld\nopenings %ld\nhalf-open-at %lld\nprobe %ld\n"
	    "budget %ld %lld\nretries %zu", state_names[r->state], r->failures,
	    r->openings, (long long)r->half_open_at, (long)r->probe,
	    r->budget, (long long)r->window, r->nretries);
	for (i = 0; i < r->nretries && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, " %lld",
		    (long long)r->retries[i]);
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, "\n");
	return len;
}

/* Never waits: the caller waits, so that signals and deadlines still count. */
static int
lock(int fd, short type)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	return fcntl(fd, F_SETLK, &fl);
}

/*
 * Read, change, write back, under the lock; CIRCUIT_BUSY when another
 * process holds it (try again soon).  change() returns 1 when it changed
 * the record.  An empty record is a fresh one; a corrupt one is
 * replaced by a fresh one, and circuit_update returns 1 the first time.
 */
int
circuit_update(struct circuit *c, int (*change)(struct record *, void *),
    void *arg, char *err, size_t errsize)
{
	static char buf[RECORD_MAX];
	static struct record rec;
	ssize_t n;
	size_t len;
	int corrupt = 0, changed;

	if (lock(c->fd, F_WRLCK) == -1)
		return errno == EAGAIN || errno == EACCES ? CIRCUIT_BUSY :
		    failure(err, errsize, "%s: %s", c->path, strerror(errno));
	if ((n = pread(c->fd, buf, sizeof(buf) - 1, 0)) == -1) {
		(void)failure(err, errsize, "%s: %s", c->path, strerror(errno));
		goto unlock;
	}
	buf[n] = '\0';
	if (n == 0 || parse_record(buf, &rec) == -1) {
		corrupt = n > 0;
		memset(&rec, 0, sizeof(rec));
	}
	changed = change(&rec, arg) || corrupt;
	if (changed) {
		len = format_record(buf, sizeof(buf), &rec);
		if (pwrite(c->fd, buf, len, 0) != (ssize_t)len ||
		    ftruncate(c->fd, (off_t)len) == -1) {
			(void)failure(err, errsize, "%s: %s", c->path,
			    strerror(errno));
			n = -1;
		}
	}
unlock:
	if (lock(c->fd, F_UNLCK) == -1 && n != -1) {
		(void)failure(err, errsize, "%s: %s", c->path, strerror(errno));
		n = -1;
	}
	if (n == -1)
		return -1;
	if (corrupt && !c->reported) {
		c->reported = 1;
		return 1;
	}
	return 0;
}

/* The pid holds the probe if it still runs (EPERM: it runs as another user). */
static int
alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int
circuit_admit(struct record *r, void *arg)
{
	struct admission *a = arg;

	a->verdict = ADMIT_GO;
	if (r->state == CLOSED)
		return 0;
	if (r->state == OPEN && a->now < r->half_open_at) {
		a->verdict = ADMIT_WAIT;
		a->wake = r->half_open_at;
		return 0;
	}
	if (r->state == HALF_OPEN && r->probe != a->self && alive(r->probe)) {
		a->verdict = ADMIT_WAIT;
		a->wake = 0;	/* unknown: look again soon */
		return 0;
	}
	/* Open and cooled down, or a probe whose process is gone: ours now. */
	a->verdict = ADMIT_PROBE;
	if (r->state == HALF_OPEN && r->probe == a->self)
		return 0;
	r->state = HALF_OPEN;
	r->probe = a->self;
	return 1;
}

int
circuit_result(struct record *r, void *arg)
{
	const struct result *res = arg;	/* not changed */
	double cool, limit;
	long k;

	if (res->success) {
		if (r->state == CLOSED && r->failures == 0 && r->openings == 0)
			return 0;
		r->state = CLOSED;
		r->failures = r->openings = 0;
		r->probe = 0;
		r->half_open_at = 0;
		return 1;
	}
	r->failures++;
	if (!(r->state == HALF_OPEN && r->probe == res->self) &&
	    !(r->state == CLOSED && r->failures >= res->trip))
		return 1;
	/* Open, for a cool-down that doubles with each opening in a row. */
	r->openings++;
	limit = (double)(res->cap > res->cool ? res->cap : res->cool);
	cool = (double)res->cool;
	for (k = 1; k < r->openings && cool < limit; k++)
		cool *= 2;
	if (cool > limit)
		cool = limit;
	cool = cool / 2 + res->u * cool / 2;	/* equal jitter */
	r->state = OPEN;
	r->probe = 0;
	r->half_open_at = res->now + (int64_t)cool;
	return 1;
}

int
circuit_take_retry(struct record *r, void *arg)
{
	struct budget *b = arg;
	size_t old = 0, i;

	while (old < r->nretries && r->retries[old] <= b->now - b->window)
		old++;
	for (i = old; i < r->nretries; i++)
		r->retries[i - old] = r->retries[i];
	r->nretries -= old;
	r->budget = b->n;
	r->window = b->window;
	b->granted = (long)r->nretries < b->n;
	if (b->granted)
		r->retries[r->nretries++] = b->now;
	else	/* free when enough of the oldest leave the window */
		b->free_at = r->retries[r->nretries - (size_t)b->n] + b->window;
	return 1;
}

int
circuit_read(struct record *r, void *arg)
{
	memcpy(arg, r, sizeof(*r));
	return 0;
}

int
circuit_reset(struct record *r, void *arg)
{
	(void)arg;
	memset(r, 0, sizeof(*r));
	return 1;
}

const char *
circuit_state_name(enum circuit_state s)
{
	return state_names[s];
}
