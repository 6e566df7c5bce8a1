/* SPDX-License-Identifier: ISC */
/*
 * Files written whole: a temporary file beside the file that the path
 * leads to, renamed over it once complete (or, where allowed, a device or
 * FIFO written as it is); the path walked by path.c, which follows a
 * symbolic link only as the kernel's protected_symlinks would; the
 * temporary files of killed runs swept.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define TEMP_MARK	".retry-"	/* NAME.retry-PID: temp_name() */

/* Closes of->dir, if open; errno kept unless that fails. */
static int
close_dir(struct outfile *of)
{
	int fd = of->dir;

	of->dir = -1;
	return fd == -1 ? 0 : close(fd);
}

/*
 * A link that the walk refused, in of->refused: the link (unless it is
 * the path itself), its owner, and the directory that holds it, as
 * may_follow() of path.c judges it.  -1, errno as the walk left it.
 */
static int
refused(struct outfile *of, const struct path_walk *w)
{
	char who[NAME_MAX + 64];
	const struct passwd *pw;
	int is_path = w->last && w->len > 0;

	if (w->fault == WALK_TOO_MANY_LINKS)
		(void)snprintf(of->refused, sizeof(of->refused), "more than "
		    "%d symbolic links on the way", WALK_LINKS_MAX);
	if (w->fault != WALK_LINK_REFUSED) {
		errno = w->err;
		return -1;
	}
	if ((pw = getpwuid(w->owner)) != NULL)
		(void)snprintf(who, sizeof(who), "user '%s' (uid %ld)",
		    pw->pw_name, (long)w->owner);
	else
		(void)snprintf(who, sizeof(who), "uid %ld", (long)w->owner);
	(void)snprintf(of->refused, sizeof(of->refused), "%s%s%sa symbolic "
	    "link owned by %s in a directory %s, not followed",
	    is_path ? "" : "on the way, '", is_path ? "" : w->at,
	    is_path ? "" : "' is ", who, w->where.st_uid == w->owner ?
	    "that user owns" : (w->where.st_mode & (S_ISVTX | S_IWOTH)) ==
	    (S_ISVTX | S_IWOTH) ? "that is sticky and world-writable" :
	    "that others may write");
	errno = w->err;
	return -1;
}

/*
 * Walks path (path_walk(): a symbolic link followed only as the kernel's
 * protected_symlinks would, wherever it is and wherever its text leads).
 * Leaves of->dir open on the directory that holds of->name, what the path
 * leads to, and its status in *st (st_mode 0: it does not exist yet).  A
 * descriptor's link of /proc is opened through (of->follow), but never
 * where the file would be replaced.  0, or -1 with errno (and, for a link
 * refused, of->refused) and nothing open.
 */
static int
walk(struct outfile *of, const char *path, struct stat *st)
{
	struct path_walk w;

	of->dir = -1;
	of->follow = 0;
	of->refused[0] = '\0';
	memset(st, 0, sizeof(*st));
	if (path_walk(&w, path, 0) == -1)
		return refused(of, &w);
	if (w.follow && of->how == NEVER_IN_PLACE) {
		(void)close(w.dir);	/* read only: nothing to lose */
		(void)snprintf(of->refused, sizeof(of->refused), "leads to a "
		    "file descriptor, which cannot be replaced");
		errno = EINVAL;
		return -1;
	}
	of->dir = w.dir;
	of->follow = w.follow;
	memcpy(of->name, w.name, sizeof(of->name));
	*st = w.st;
	return 0;
}

/*
 * of made afresh for path, written as how allows, and path walked as
 * walk() does.  0, or -1 with errno.
 */
static int
walk_afresh(struct outfile *of, const char *path, enum in_place how,
    struct stat *st)
{
	memset(of, 0, sizeof(*of));
	of->path = path;
	of->how = how;
	return walk(of, path, st);	/* which sets of->dir */
}

/* Whether what *st says is there is written as it is. */
static int
in_place(struct outfile *of, const struct stat *st)
{
	of->in_place = of->how == DEVICES_IN_PLACE && st->st_mode != 0 &&
	    (of->follow || !S_ISREG(st->st_mode));
	return of->in_place;
}

/*
 * The digits of the longest PID that a temporary name may carry: the
 * longest that the system can ever give (Linux's PID_MAX_LIMIT, 4194304;
 * the BSDs' and macOS's are 99999), not this run's own, so that a name
 * that passes today does not fail tomorrow for a longer PID; or this
 * run's own where it is longer, since that is the name that is made.
 */
#define PID_DIGITS	7

static size_t
pid_digits(void)
{
	char own[32];
	int n = snprintf(own, sizeof(own), "%ld", (long)getpid());

	return n > PID_DIGITS ? (size_t)n : PID_DIGITS;
}

/*
 * Whether the longest temporary name that the run may use beside of->name
 * (temp_name()) fits what of->dir's file system takes: one that does not
 * would fail only at the end, the run done and its file lost.  What
 * pathconf() does not say (no limit, or an error: then the end says what
 * is wrong) is NAME_MAX, all that of->temp holds anyway.  0, or -1 with
 * errno and of->refused, which names the length that would do.
 */
static int
temp_fits(struct outfile *of, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(of->name), more = strlen(TEMP_MARK) + pid_digits();
	long max;
	int same;

	if ((max = fpathconf(of->dir, _PC_NAME_MAX)) <= 0 || max > NAME_MAX)
		max = NAME_MAX;
	if (len + more <= (size_t)max)
		return 0;
	base = base == NULL ? path : base + 1;
	same = strcmp(base, of->name) == 0;
	(void)snprintf(of->refused, sizeof(of->refused), "name%s%s%s too "
	    "long: %zu bytes, and %zu more for the temporary file's "
	    TEMP_MARK "PID, pass the %ld that its directory takes; use a "
	    "name of at most %zu bytes", same ? "" : " '",
	    same ? "" : of->name, same ? "" : "' (where it leads)", len, more,
	    max, (size_t)max > more ? (size_t)max - more : 0);
	errno = ENAMETOOLONG;
	return -1;
}

/*
 * Says up front whether path can be written, so that one that cannot is
 * a usage error before anything runs: a symbolic link on the way that
 * may_follow() refuses, or a directory, is refused; a regular file, or a
 * path that does not exist yet, needs a directory that retry may write
 * and a name short enough (temp_fits()) for the temporary file made
 * there at the end; a device or FIFO is written in place where how
 * allows it, and else refused.  Nothing is made now.  0, or -1 with
 * errno (outfile_why()).
 */
int
outfile_check(struct outfile *of, const char *path, enum in_place how)
{
	struct stat st;
	int ok;

	if (walk_afresh(of, path, how, &st) == -1)
		return -1;
	/*
	 * What is never written in place is replaced: a device or a FIFO
	 * there is refused, or --metrics /dev/null as root would put a
	 * regular file in the place of /dev/null.
	 */
	if (how == NEVER_IN_PLACE && st.st_mode != 0 && !S_ISREG(st.st_mode)) {
		(void)snprintf(of->refused, sizeof(of->refused), "not a "
		    "regular file, which it would replace");
		(void)close_dir(of);
		errno = EINVAL;
		return -1;
	}
	ok = in_place(of, &st) || (temp_fits(of, path) == 0 &&
	    faccessat(of->dir, ".", W_OK | X_OK, AT_EACCESS) == 0);
	if (close_dir(of) == -1)
		return -1;
	return ok ? 0 : -1;
}

/*
 * "NAME.retry-PID", the temporary file of the process pid for name: a
 * name that node_exporter's *.prom and a reader of NAME both pass over.
 */
static int
temp_name(char *buf, size_t size, const char *name, long pid)
{
	if (snprintf(buf, size, "%s" TEMP_MARK "%ld", name, pid) < (int)size)
		return 0;
	errno = ENAMETOOLONG;
	return -1;
}

/*
 * Removes the temporary files that killed runs left beside the file:
 * those named for a process that is gone.
 */
static void
sweep(const struct outfile *of)
{
	char prefix[NAME_MAX + 16];
	struct dirent *de;
	size_t plen;
	char *end;
	long pid;
	DIR *d;
	int fd;

	(void)snprintf(prefix, sizeof(prefix), "%s" TEMP_MARK, of->name);
	plen = strlen(prefix);
	if ((fd = openat(of->dir, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return;		/* the rename will say what is wrong */
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);	/* read only: nothing to lose */
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		pid = strtol(de->d_name + plen, &end, 10);
		if (*end != '\0' || !owner_gone(pid))
			continue;
		/* Another run may be first: its ENOENT is no matter. */
		(void)unlinkat(of->dir, de->d_name, 0);
	}
	(void)closedir(d);	/* read only: nothing to lose */
}

/*
 * The device or FIFO itself, for writing (O_NONBLOCK to open it, so that
 * a FIFO without a reader fails instead of waiting); of->dir closed.  A
 * descriptor, or -1 with errno.
 */
static int
open_in_place(struct outfile *of)
{
	int fd, flags, e;

	fd = openat(of->dir, of->name, O_WRONLY | O_NONBLOCK | O_TRUNC |
	    O_CLOEXEC | (of->follow ? 0 : O_NOFOLLOW));
	e = errno;
	if (close_dir(of) == -1 || (fd != -1 &&
	    ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1))) {
		e = errno;
		if (fd != -1)
			(void)close(fd);	/* nothing written */
		fd = -1;
	}
	errno = e;
	return fd;
}

/*
 * Where the contents go, the path walked again as outfile_check() did
 * (what stands there may have changed since): a device or FIFO that may
 * be written in place, opened as it is; else a new temporary file beside
 * what the path leads to, of mode (less the umask), renamed over it by
 * outfile_close().  NULL with errno (outfile_why()) and nothing left.
 */
FILE *
outfile_open(struct outfile *of, mode_t mode)
{
	struct stat st;
	FILE *f;
	int fd, e;

	of->temp[0] = '\0';
	if (walk(of, of->path, &st) == -1)
		return NULL;
	if (of->how == NEVER_IN_PLACE && st.st_mode != 0 &&
	    !S_ISREG(st.st_mode)) {
		(void)snprintf(of->refused, sizeof(of->refused), "not a "
		    "regular file, which it would replace");
		outfile_abandon(of);
		errno = EINVAL;
		return NULL;
	}
	if (in_place(of, &st)) {
		if ((fd = open_in_place(of)) == -1)
			return NULL;
	} else {
		sweep(of);
		if (temp_name(of->temp, sizeof(of->temp), of->name,
		    (long)getpid()) == -1 ||
		    (fd = openat(of->dir, of->temp, O_WRONLY | O_CREAT |
		    O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)) == -1) {
			of->temp[0] = '\0';
			outfile_abandon(of);
			return NULL;
		}
	}
	if ((f = fdopen(fd, "w")) != NULL)
		return f;
	e = errno;
	(void)close(fd);	/* nothing written */
	outfile_abandon(of);
	errno = e;
	return NULL;
}

/*
 * After outfile_open() of a file that is replaced: the file that is
 * there now, to read, when it is a regular file of the user's
 * (path_own_file(); another's is not retry's to believe); else -1.
 * Nothing there can hold retry: O_NONBLOCK, O_NOFOLLOW.
 */
int
outfile_previous(const struct outfile *of)
{
	struct stat st;
	int fd;

	if (of->dir == -1) {
		errno = EBADF;
		return -1;
	}
	if ((fd = openat(of->dir, of->name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	if (path_own_file(fd, 0, &st) == WALK_OK)
		return fd;
	(void)close(fd);	/* read only: nothing to lose */
	errno = EPERM;
	return -1;
}

/*
 * Closes f, whose contents are whole, and puts the temporary file in the
 * place of what the path leads to.  0, or -1 with errno and the temporary
 * file removed.
 */
int
outfile_close(struct outfile *of, FILE *f)
{
	if ((ferror(f) | (fclose(f) == EOF)) || (of->temp[0] != '\0' &&
	    renameat(of->dir, of->temp, of->dir, of->name) == -1)) {
		outfile_abandon(of);
		return -1;
	}
	of->temp[0] = '\0';
	return close_dir(of);
}

/* No file after all: the temporary file goes, errno kept. */
void
outfile_abandon(struct outfile *of)
{
	int e = errno;

	if (of->temp[0] != '\0' && unlinkat(of->dir, of->temp, 0) == -1 &&
	    errno != ENOENT)
		e = errno;
	of->temp[0] = '\0';
	if (close_dir(of) == -1)
		e = errno;
	errno = e;
}

/*
 * The file that path leads to, by the same walk, opened to append to it
 * (O_NONBLOCK: a FIFO there cannot hold retry); a file that is not there
 * is made of mode create (less the umask), or with create 0 not made.
 * The descriptor, or -1 with errno (outfile_why()).
 */
int
outfile_append(struct outfile *of, const char *path, mode_t create)
{
	struct stat st;
	int fd = -1, e;

	/* Appended to, never replaced: a device or FIFO as it is. */
	if (walk_afresh(of, path, DEVICES_IN_PLACE, &st) == -1)
		return -1;
	if (st.st_mode == 0 && create == 0)
		errno = ENOENT;
	else
		fd = openat(of->dir, of->name, O_WRONLY | O_APPEND |
		    O_NONBLOCK | O_CLOEXEC | (of->follow ? 0 : O_NOFOLLOW) |
		    (st.st_mode == 0 ? O_CREAT : 0), create);
	e = errno;
	if (close_dir(of) == -1 && fd != -1) {
		e = errno;
		(void)close(fd);	/* nothing written */
		fd = -1;
	}
	errno = e;
	return fd;
}

/*
 * Says up front whether lines can be appended at path (outfile_append()
 * with create): a file there that retry may write, or a directory where
 * retry may make it.  Nothing is made now.  0, or -1 with errno
 * (outfile_why()).
 */
int
outfile_check_append(struct outfile *of, const char *path)
{
	struct stat st;
	int ok;

	if (walk_afresh(of, path, DEVICES_IN_PLACE, &st) == -1)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		(void)close_dir(of);
		errno = EISDIR;
		return -1;
	}
	ok = faccessat(of->dir, st.st_mode == 0 ? "." : of->name,
	    st.st_mode == 0 ? W_OK | X_OK : W_OK, AT_EACCESS) == 0;
	if (close_dir(of) == -1)
		return -1;
	return ok ? 0 : -1;
}

/*
 * text in one write(2) to fd, opened to append to the file that name
 * gave at path, then fd closed; one warning if either fails.  One write
 * under O_APPEND: writers that share the file never interleave within it.
 */
void
outfile_put_whole(const char *name, const char *path, int fd,
    const char *text, size_t len)
{
	ssize_t n;

	while ((n = write(fd, text, len)) == -1 && errno == EINTR)
		;
	if (n == -1)
		warning("%s '%s'", name, path);
	else if ((size_t)n != len)
		warningx("%s '%s': written in part", name, path);
	if (close(fd) == -1 && n == (ssize_t)len)
		warning("%s '%s'", name, path);
}

/* Why the last call on of failed: the link it refused, or errno's text. */
const char *
outfile_why(const struct outfile *of)
{
	return of->refused[0] != '\0' ? of->refused : strerror(errno);
}
