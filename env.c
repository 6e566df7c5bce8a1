/* SPDX-License-Identifier: ISC */
/*
 * What each attempt finds in its environment (RETRY_IDEMPOTENCY_KEY,
 * RETRY_RUN_ID, RETRY_ATTEMPT, RETRY_MAX_ATTEMPTS, RETRY_DEADLINE,
 * RETRY_AFTER_FILE) and what retry reads from it (an outer retry's key
 * and deadline); the file of RETRY_ENV_FILE, whose variables it sets
 * for the next attempts; and the Retry-After hint file itself, a name in
 * a private directory that costs nothing until an attempt writes it.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* 16 bytes as a UUID of the version given, in its text form. */
static const char *
uuid(char *buf, size_t size, unsigned char u[16], int version)
{
	u[6] = (unsigned char)((u[6] & 0x0f) | version << 4);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);	/* RFC 9562 variant */
	(void)snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
	    u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
	    u[14], u[15]);
	return buf;
}

/*
 * The key of a nested run: a name-based UUID, version 8 with SHA-256
 * (RFC 9562, B.2), of retry's namespace, the inherited key and the
 * command line, each followed by a NUL byte.  Different inner commands
 * get different keys; the same one gets the same key in every attempt of
 * the outer run, so a server still tells a retry from a new request.
 */
static const char *
derived_key(char *buf, size_t size, const char *inherited,
    char *const argv[])
{
	/* 6f1c0a3e-8d2b-4f5e-9a77-3c1e2b4d5a60, retry's namespace. */
	static const unsigned char ns[16] = {
		0x6f, 0x1c, 0x0a, 0x3e, 0x8d, 0x2b, 0x4f, 0x5e, 0x9a, 0x77,
		0x3c, 0x1e, 0x2b, 0x4d, 0x5a, 0x60,
	};
	unsigned char h[32];
	struct sha256 s;
	int i;

	sha256_init(&s);
	sha256_add(&s, ns, sizeof(ns));
	sha256_add(&s, inherited, strlen(inherited) + 1);
	for (i = 0; argv[i] != NULL; i++)
		sha256_add(&s, argv[i], strlen(argv[i]) + 1);
	sha256_end(&s, h);
	return uuid(buf, size, h, 8);
}

/*
 * Whether this run is an attempt (or a hook) of an outer retry: that one
 * marks its attempts with RETRY_ATTEMPT, a number from 1.  A key that
 * came without it is a caller's own, which the caller meant to be used.
 */
int
under_outer_retry(void)
{
	const char *attempt = getenv("RETRY_ATTEMPT");
	long n;

	return attempt != NULL && parse_count(attempt, LONG_MAX, &n) == NULL &&
	    n >= 1;
}

/*
 * The attempts of the outer retry, as its RETRY_MAX_ATTEMPTS says them
 * (0: no limit), or -1 when it says nothing that is a count.
 */
long
outer_attempts(void)
{
	const char *max = getenv("RETRY_MAX_ATTEMPTS");
	long n;

	if (max == NULL || parse_count(max, INT_MAX, &n) != NULL)
		return -1;
	return n;
}

/* Whether a deadline comes from outside: RETRY_DEADLINE, not empty. */
int
deadline_inherited(void)
{
	const char *env = getenv("RETRY_DEADLINE");

	return env != NULL && *env != '\0';
}

/*
 * The key for every attempt: --key (given), else one derived from an
 * outer retry's key and this run's command, else a caller's key as it
 * came, else a new random UUID (version 4) written into buf.
 */
static const char *
idempotency_key(const char *given, char *const argv[], char *buf,
    size_t size)
{
	const char *inherited = getenv("RETRY_IDEMPOTENCY_KEY");
	unsigned char u[16];

	if (given != NULL)
		return given;
	if (inherited == NULL || *inherited == '\0')
		;	/* none: a new one below */
	else if (under_outer_retry())
		return derived_key(buf, size, inherited, argv);
	else
		return inherited;	/* the caller's own, such as a CI job's id */
	random_key_bytes(u);
	return uuid(buf, size, u, 4);
}

/*
 * The deadline on the monotonic clock: after (--deadline, 0: none) from
 * start, or an outer retry's RETRY_DEADLINE, whichever is earlier; NEVER
 * when neither.  *outer says whether RETRY_DEADLINE set it.
 */
int64_t
find_deadline(int64_t after, int64_t start, int *outer)
{
	const char *env = getenv("RETRY_DEADLINE");
	int64_t deadline = NEVER, when, left;

	*outer = 0;
	if (after != 0)
		deadline = start + after;
	if (env == NULL || *env == '\0')
		return deadline;
	if (!parse_unix_time(env, &when))
		fatalx("RETRY_DEADLINE '%s': invalid time", env);
	left = when - realtime_now();
	if (start + left < deadline) {
		deadline = start + left;
		*outer = 1;
	}
	return deadline;
}

void
export(const char *name, const char *value)
{
	if (setenv(name, value, 1) == -1)
		fatal("setenv %s", name);
}

/*
 * RETRY_ATTEMPT, rewritten in place: setenv(3) would keep every old value
 * allocated, and a run with unlimited attempts would grow without end.
 */
void
export_attempt(long attempt)
{
	static char var[] = "RETRY_ATTEMPT=-9223372036854775808";
	static int in_environ;

	(void)snprintf(var + strlen("RETRY_ATTEMPT="),
	    sizeof(var) - strlen("RETRY_ATTEMPT="), "%ld", attempt);
	if (!in_environ && putenv(var) != 0)
		fatal("putenv RETRY_ATTEMPT");
	in_environ = 1;
}

/*
 * RETRY_RUN_ID, a new random UUID (version 4) for this run, into buf:
 * a run's own, where the key may be a job's that many runs share; an
 * attempt may tag its logs with it, as the hooks their pings.
 */
const char *
export_run_id(char *buf, size_t size)
{
	unsigned char u[16];

	random_run_id_bytes(u);
	export("RETRY_RUN_ID", uuid(buf, size, u, 4));
	return buf;
}

/* A time on the monotonic clock as RETRY_DEADLINE gives it: Unix time. */
const char *
deadline_text(char *buf, size_t size, int64_t at)
{
	int64_t when = realtime_now() + (at - monotonic_now());

	(void)snprintf(buf, size, "%lld.%03lld", (long long)(when / NS_PER_SEC),
	    (long long)(when % NS_PER_SEC / 1000000));
	return buf;
}

/*
 * What every attempt finds in its environment, but its number: the key
 * (--key, or from the environment and argv), the attempts, and the
 * deadline (monotonic) as Unix time, unless an outer retry's
 * RETRY_DEADLINE set it (outer).
 */
void
export_environment(const char *key, char *const argv[], long attempts,
    int64_t deadline, int outer)
{
	char buf[64];

	export("RETRY_IDEMPOTENCY_KEY", idempotency_key(key, argv, buf,
	    sizeof(buf)));
	(void)snprintf(buf, sizeof(buf), "%ld", attempts);
	export("RETRY_MAX_ATTEMPTS", buf);
	if (deadline == NEVER || outer)
		return;		/* an outer retry's value stands as it is */
	export("RETRY_DEADLINE", deadline_text(buf, sizeof(buf), deadline));
}

/* ---- The Retry-After hint file --------------------------------------- */

static int	 hint_dir = -1;		/* the private directory, open */
static char	 hint_name[64];		/* this run's file in it */
static char	 hint_path[PATH_MAX];	/* the two, for RETRY_AFTER_FILE */
static const char *hint_off;		/* why there is no directory */

/*
 * The private directory of the hint files: $XDG_RUNTIME_DIR/retry, else
 * $TMPDIR/retry-UID, else /tmp/retry-UID, made 0700 the first time, and
 * after that only checked, as tmux checks its socket directory: a
 * directory and not a symbolic link, ours, closed to everyone else.
 * That already keeps outfile.c's rule for links (another user's link is
 * never followed where retry writes): retry itself writes nothing there,
 * its last name is never followed, and no other user can put an entry in
 * it; an entry is opened with O_NOFOLLOW all the same.
 * Returns its descriptor, or -1 with why in *why.
 */
static int
open_private_dir(char *path, size_t size, const char **why)
{
	static char said[PATH_MAX + 64];
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int fd, n, link;

	if (runtime != NULL && *runtime == '/')
		n = snprintf(path, size, "%s/retry", runtime);
	else
		n = snprintf(path, size, "%s/retry-%ld", temp_dir(),
		    (long)geteuid());
	if (n < 0 || (size_t)n >= size) {
		*why = strerror(ENAMETOOLONG);
		return -1;
	}
	if ((fd = open_dir(AT_FDCWD, path, 1, &link)) == -1) {
		*why = link || errno == ENOTDIR ? "not a directory" :
		    strerror(errno);
		(void)snprintf(said, sizeof(said), "%s: %s", path, *why);
		*why = said;
		return -1;
	}
	if (fstat(fd, &st) == -1)
		*why = strerror(errno);
	else if (st.st_uid != geteuid())
		*why = "belongs to another user";
	else if ((st.st_mode & 077) != 0)
		*why = "open to other users (not mode 0700)";
	else
		return fd_keep_cloexec(fd);	/* open_dir() opened it so */
	if (close(fd) == -1)
		*why = strerror(errno);
	(void)snprintf(said, sizeof(said), "%s: %s", path, *why);
	*why = said;
	return -1;
}

/*
 * Sets up RETRY_AFTER_FILE for this run: a name of its own in the private
 * directory, "PID-NONCE", that nothing makes; an attempt that has a hint
 * creates the file.  Returns the path, or NULL when hints are off (why in
 * *why).  The nonce keeps a file that a killed run left behind from being
 * taken for a hint by a later run with the same process ID.
 */
static const char *
hint_open(uint64_t nonce, const char **why)
{
	char dir[PATH_MAX];

	if ((hint_dir = open_private_dir(dir, sizeof(dir), why)) == -1)
		return NULL;
	(void)snprintf(hint_name, sizeof(hint_name), "%ld-%016llx",
	    (long)getpid(), (unsigned long long)nonce);
	if (snprintf(hint_path, sizeof(hint_path), "%s/%s", dir, hint_name) >=
	    (int)sizeof(hint_path)) {
		*why = strerror(ENAMETOOLONG);
		if (close(hint_dir) == -1)
			warning("close");
		hint_dir = -1;	/* off: hint_read has nothing to look at */
		return NULL;
	}
	return hint_path;
}

/* "PID-NONCE", or RETRY_ENV_FILE's "PID-NONCE.env": the PID, or 0. */
static long
hint_owner(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (pid <= 0 || *end != '-' || strspn(end + 1, "0123456789abcdef") !=
	    16 || (end[17] != '\0' && strcmp(end + 17, ".env") != 0))
		return 0;
	return pid;
}

/*
 * Removes the hint files of runs that are gone (killed before they could
 * remove their own).  Run at the first hint used, so that a run without
 * one never reads the directory, and a run with many reads it once.
 */
static void
sweep(void)
{
	static int swept;
	struct dirent *de;
	DIR *d;
	int fd;

	if (swept)
		return;
	swept = 1;
	if ((fd = dup(hint_dir)) == -1 || (d = fdopendir(fd)) == NULL) {
		warning("reading the hint directory");
		if (fd != -1 && close(fd) == -1)
			warning("close");
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (owner_gone(hint_owner(de->d_name)) &&
		    unlinkat(hint_dir, de->d_name, 0) == -1 && errno != ENOENT)
			warning("removing a stale hint %s", de->d_name);
	if (closedir(d) == -1)
		warning("closedir");
}

/* Whatever the attempt left at the path goes, so that the next starts clean. */
static void
hint_remove(void)
{
	if (unlinkat(hint_dir, hint_name, 0) == 0 || errno == ENOENT)
		return;
	if (errno == EISDIR || errno == EPERM) {
		if (unlinkat(hint_dir, hint_name, AT_REMOVEDIR) == 0)
			return;
	}
	warning("%s", hint_path);
}

/*
 * The end of the file fd of status st into buf, at most size - 1 bytes:
 * of a longer file, the lines that begin in its last size - 1 bytes,
 * since the last response of the headers counts (curl -D writes every
 * redirect's first, and a long one could hide the last).  The bytes read,
 * or -1 with errno.
 */
static ssize_t
read_tail(int fd, const struct stat *st, char *buf, size_t size)
{
	off_t from = st->st_size > (off_t)(size - 1) ?
	    st->st_size - (off_t)(size - 1) : 0;
	ssize_t n;
	char *line;

	while ((n = pread(fd, buf, size - 1, from)) == -1 && errno == EINTR)
		;
	if (n <= 0 || from == 0)
		return n;
	if ((line = memchr(buf, '\n', (size_t)n)) == NULL)
		return 0;	/* one line longer than all: no hint in it */
	n -= line + 1 - buf;
	memmove(buf, line + 1, (size_t)n);
	return n;
}

/*
 * What the last attempt wrote, in buf (NUL-terminated, at most size - 1
 * bytes: of a longer file, its last lines), or NULL with the reason in
 * *why, NULL when it wrote nothing.
 * The file is removed after.  Only a regular file is read, and opening a
 * FIFO with O_NONBLOCK does not wait for a writer: nothing an attempt
 * leaves there can hold retry.
 */
const char *
hint_read(char *buf, size_t size, const char **why)
{
	struct stat st;
	ssize_t n = -1;
	int fd, e;

	*why = NULL;
	if (hint_dir == -1)
		return NULL;
	if ((fd = openat(hint_dir, hint_name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)	/* ENOENT: no hint, the usual case */
			*why = errno == ELOOP || errno == EMLINK ?
			    "a symbolic link" : strerror(errno);
		if (errno != ENOENT)
			hint_remove();
		return NULL;
	}
	if (fstat(fd, &st) == -1 ||
	    (S_ISREG(st.st_mode) && (n = read_tail(fd, &st, buf, size)) == -1))
		*why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		*why = "not a regular file";
	e = errno;
	if (close(fd) == -1) {
		*why = strerror(errno);
		n = -1;
	}
	errno = e;
	hint_remove();
	sweep();
	if (n == -1)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/*
 * On every way out but SIGKILL, a hint that no one read goes too (one
 * fstatat() finds whether there is one, so that a run that had none
 * removes nothing).
 */
void
hint_close(void)
{
	struct stat st;

	if (hint_dir == -1)
		return;
	if (fstatat(hint_dir, hint_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		hint_remove();
	else if (errno != ENOENT)
		warning("%s", hint_path);
	if (close(hint_dir) == -1)
		warning("close");
	hint_dir = -1;
}

/*
 * RETRY_AFTER_FILE, where an attempt may say how long to wait before the
 * next: a path that costs nothing until an attempt writes it.  Where no
 * private directory can be had, hints are off, and -v says why once.
 */
void
export_hint_file(void)
{
	const char *path, *why = "no private directory";

	if ((path = hint_open(random_nonce(), &why)) != NULL)
		export("RETRY_AFTER_FILE", path);
	else {
		hint_off = why;
		if (unsetenv("RETRY_AFTER_FILE") == -1)
			fatal("unsetenv RETRY_AFTER_FILE");
		detail("Retry-After hints are off: %s", why);
	}
}

/* ---- RETRY_ENV_FILE --------------------------------------------------- */

static char	 env_name[sizeof(hint_name) + 4];	/* hint_name + ".env" */
static char	 env_path[PATH_MAX];	/* the two, or "" when none */
static char	**env_set;		/* the putenv(3) strings set from it */
static size_t	 env_nset, env_cap;

/*
 * RETRY_ENV_FILE, where an attempt or an --on-retry hook may write the
 * variables of the attempts that follow: a name of the run's own beside
 * its hint file, in the private directory, that nothing makes until an
 * attempt writes it (so a run that never uses it touches no file, and a
 * SIGKILL leaves nothing that sweep() does not find).  Only when the run
 * may retry (wanted): a run of one attempt has no next attempt to set
 * anything for.  Without a private directory, one warning and the run
 * goes on.  Else the variable is unset: an inherited one is not passed
 * on as if it were this run's.
 */
void
export_env_file(int wanted)
{
	env_path[0] = '\0';
	if (wanted && hint_dir != -1) {
		(void)snprintf(env_name, sizeof(env_name), "%s.env", hint_name);
		if (snprintf(env_path, sizeof(env_path), "%s.env", hint_path) <
		    (int)sizeof(env_path)) {
			export("RETRY_ENV_FILE", env_path);
			return;
		}
		env_path[0] = '\0';
		errno = ENAMETOOLONG;
	}
	/* As for hints, -v says it: a run that writes no variable, most
	 * runs, must not warn of a file it never needed (cron mails it). */
	if (wanted)
		detail("RETRY_ENV_FILE is unset: no private directory: %s",
		    hint_dir == -1 ? hint_off : strerror(errno));
	if (unsetenv("RETRY_ENV_FILE") == -1)
		fatal("unsetenv RETRY_ENV_FILE");
}

/* Whatever is at the name goes: the file, or what an attempt put there. */
static void
env_file_remove(void)
{
	if (unlinkat(hint_dir, env_name, 0) == 0 || errno == ENOENT)
		return;
	if ((errno == EISDIR || errno == EPERM) &&
	    unlinkat(hint_dir, env_name, AT_REMOVEDIR) == 0)
		return;
	warning("RETRY_ENV_FILE %s", env_path);
}

/*
 * What the file holds, up to size bytes, into buf; then it goes, so that
 * what the next attempt writes is its own.  0 when there is none, -1
 * when it could not be read (said).  Only a regular file is read, and
 * opened with O_NONBLOCK: a FIFO or a link that an attempt leaves at the
 * name cannot hold retry.
 */
static ssize_t
take_env_file(char *buf, size_t size)
{
	struct stat st;
	ssize_t n = 0, got;
	int fd;

	if ((fd = openat(hint_dir, env_name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;	/* nothing written: the usual case */
		warningx("RETRY_ENV_FILE %s not read: %s", env_path,
		    errno == ELOOP || errno == EMLINK ? "a symbolic link" :
		    strerror(errno));
		env_file_remove();
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		warning("RETRY_ENV_FILE %s not read", env_path);
		n = -1;
	} else if (!S_ISREG(st.st_mode)) {
		warningx("RETRY_ENV_FILE %s not read: not a regular file",
		    env_path);
		n = -1;
	}
	while (n != -1 && (size_t)n < size &&
	    (got = read(fd, buf + n, size - (size_t)n)) != 0)
		if (got > 0)
			n += got;
		else if (errno != EINTR) {
			warning("RETRY_ENV_FILE %s not read", env_path);
			n = -1;
		}
	if (close(fd) == -1)
		warning("close");
	env_file_remove();
	sweep();
	return n;
}

/*
 * NAME=VALUE in the environment, as a putenv(3) string of retry's own
 * that frees the one it replaces: setenv(3) would keep every old value,
 * and a run that sets a token before each of unlimited attempts would
 * grow without end.
 */
static void
set_variable(const struct env_assign *a)
{
	size_t i, size = a->name_len + 1 + a->value_len + 1;
	char **grown, *var = malloc(size);

	if (var == NULL)
		fatal("malloc");
	else
		(void)snprintf(var, size, "%.*s=%.*s", (int)a->name_len,
		    a->name, (int)a->value_len, a->value);
	if (putenv(var) != 0)
		fatal("putenv %.*s", (int)a->name_len, a->name);
	detail("RETRY_ENV_FILE sets %.*s", (int)a->name_len, a->name);
	for (i = 0; i < env_nset; i++)
		if (strncmp(env_set[i], var, a->name_len + 1) == 0) {
			free(env_set[i]);  /* out of environ: var took its place */
			env_set[i] = var;
			return;
		}
	if (env_nset == env_cap) {
		env_cap = env_cap == 0 ? 16 : env_cap * 2;
		if ((grown = realloc(env_set, env_cap * sizeof(*grown))) ==
		    NULL)
			fatal("malloc");
		env_set = grown;
	}
	/* cppcheck-suppress nullPointerRedundantCheck ; fatal() ends retry */
	env_set[env_nset++] = var;
}

/*
 * Before an attempt: the variables that the attempts and hooks before it
 * wrote to RETRY_ENV_FILE, set in retry's environment, so that this one
 * and all that follow find them (and so do later hooks).  A file over
 * ENVFILE_MAX, or one that envfile.c refuses whole, sets nothing: no
 * attempt runs with half a change.
 */
void
set_env_file_variables(enum env_names names)
{
	static char buf[ENVFILE_MAX + 1];
	struct envfile ef;
	ssize_t n;
	size_t i;

	if (env_path[0] == '\0' || (n = take_env_file(buf, sizeof(buf))) <= 0)
		return;
	if ((size_t)n > ENVFILE_MAX) {
		warningx("RETRY_ENV_FILE: over 64 KiB, refused whole: nothing "
		    "set");
		return;
	}
	if (envfile_parse(buf, (size_t)n, names, &ef) == -1)
		fatal("RETRY_ENV_FILE");
	for (i = 0; i < ef.nwarn; i++)
		warningx("RETRY_ENV_FILE: %s", ef.warn[i]);
	if (ef.unsaid > 0)
		warningx("RETRY_ENV_FILE: %zu more names not set", ef.unsaid);
	for (i = 0; i < ef.nset; i++)
		set_variable(&ef.set[i]);
	envfile_free(&ef);
}

/*
 * On every way out but SIGKILL, what an attempt wrote and no attempt
 * read goes too (one fstatat() finds whether there is any).  Before
 * hint_close(), which closes the directory.
 */
void
env_file_close(void)
{
	struct stat st;

	if (env_path[0] == '\0')
		return;
	if (fstatat(hint_dir, env_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		env_file_remove();
	else if (errno != ENOENT)
		warning("RETRY_ENV_FILE %s", env_path);
	env_path[0] = '\0';
}
