/* SPDX-License-Identifier: ISC */
/*
 * Files written whole: a temporary file beside the file that the path
 * leads to, renamed over it once complete (or, where allowed, a device or
 * FIFO written as it is); symbolic links on the way followed only as the
 * kernel's protected_symlinks would; the temporary files of killed runs
 * swept.
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

#define LINKS_MAX	40	/* followed for one path, as Linux allows */
#define TEMP_MARK	".retry-"	/* NAME.retry-PID: temp_name() */

/*
 * A directory opened only to walk from and to make names in: O_SEARCH
 * (POSIX) or Linux's O_PATH, like a path, need no right to list it.
 */
#if defined(O_SEARCH)
#define WALK_DIR	O_SEARCH
#elif defined(O_PATH)
#define WALK_DIR	O_PATH
#else
#define WALK_DIR	O_RDONLY
#endif

/* dir's path as walked, for messages: shown, then "/" and name. */
static void
join(char *shown, size_t size, const char *name)
{
	size_t len = strlen(shown);

	(void)snprintf(shown + len, size - len, "%s%s",
	    len == 0 || shown[len - 1] == '/' ? "" : "/", name);
}

/*
 * The kernel's rule for protected_symlinks (may_follow_link() in Linux's
 * fs/namei.c), kept whether the system turns it on or not: the link at
 * name in of->dir is followed when it is ours, or its directory is not
 * both sticky and writable by all (then no one else could have put it
 * there), or the link's owner owns that directory.  Else -1, and
 * of->refused names the link (shown, unless it is the path itself) and
 * its owner.
 */
static int
may_follow(struct outfile *of, const char *shown, const char *name,
    const struct stat *link, int is_path)
{
	char who[NAME_MAX + 64], where[PATH_MAX];
	const struct passwd *pw;
	struct stat dir;

	if (fstat(of->dir, &dir) == -1)
		return -1;
	if (link->st_uid == geteuid() || link->st_uid == 0)
		return 0;
	/*
	 * Stricter than the kernel, which also follows a link in its owner's
	 * own directory: there its owner could point it anywhere, and a
	 * root run would write where that user cannot.  So another user's
	 * link is followed only where that user could not have put it: a
	 * directory not theirs and open to no one but its owner.
	 */
	if (dir.st_uid != link->st_uid &&
	    (dir.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	if ((pw = getpwuid(link->st_uid)) != NULL)
		(void)snprintf(who, sizeof(who), "user '%s' (uid %ld)",
		    pw->pw_name, (long)link->st_uid);
	else
		(void)snprintf(who, sizeof(who), "uid %ld",
		    (long)link->st_uid);
	(void)snprintf(where, sizeof(where), "%s", shown);
	join(where, sizeof(where), name);
	(void)snprintf(of->refused, sizeof(of->refused), "%s%s%sa symbolic "
	    "link owned by %s in a directory %s, not followed",
	    is_path ? "" : "on the way, '", is_path ? "" : where,
	    is_path ? "" : "' is ", who, dir.st_uid == link->st_uid ? "that "
	    "user owns" : (dir.st_mode & (S_ISVTX | S_IWOTH)) ==
	    (S_ISVTX | S_IWOTH) ? "that is sticky and world-writable" :
	    "that others may write");
	errno = EPERM;
	return -1;
}

/* Closes of->dir, if open; errno kept unless that fails. */
static int
close_dir(struct outfile *of)
{
	int fd = of->dir;

	of->dir = -1;
	return fd == -1 ? 0 : close(fd);
}

/* of->dir open on the directory where the walk of path starts. */
static int
start_at(struct outfile *of, const char *path, char *shown, size_t size)
{
	if (close_dir(of) == -1 || (of->dir = open(*path == '/' ? "/" : ".",
	    WALK_DIR | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	(void)snprintf(shown, size, "%s", *path == '/' ? "/" : "");
	return 0;
}

/*
 * Whether shown, a directory as walked, is one of /proc/PID/fd, where
 * /dev/stdout and /dev/fd/N lead on Linux: its links name a descriptor's
 * file, whose text ("pipe:[N]", or a path that another file may have
 * taken since) is not where it is.
 */
static int
descriptors(const char *shown)
{
	size_t len = strlen(shown);

	return strncmp(shown, "/proc/", 6) == 0 && len > 9 &&
	    strcmp(shown + len - 3, "/fd") == 0;
}

/* The walk's end: a directory is refused; on failure nothing is open. */
static int
arrive(struct outfile *of, const struct stat *st, int walked)
{
	int e = errno;

	if (walked == 0 && S_ISDIR(st->st_mode))
		walked = -1, e = EISDIR;	/* also through a link */
	if (walked == -1) {
		if (close_dir(of) == -1 && e == 0)
			e = errno;
		errno = e;
	}
	return walked;
}

/*
 * Walks path one name at a time, as the kernel does, but from directory
 * descriptors, so that what is checked is what is used, and following a
 * symbolic link only where may_follow() allows, wherever it is in the
 * path and wherever a link's text leads.  Leaves of->dir open on the
 * directory that holds of->name, what the path leads to, and its status
 * in *st (st_mode 0: it does not exist yet).  0, or -1 with errno (and,
 * for a link refused, of->refused) and nothing open.
 */
static int
walk(struct outfile *of, const char *path, struct stat *st)
{
	char rest[PATH_MAX], next[PATH_MAX], text[PATH_MAX], shown[PATH_MAX];
	int links = 0, last, walked = -1;
	char *name = rest, *more;
	ssize_t n;

	of->dir = -1;
	of->follow = 0;
	of->refused[0] = '\0';
	memset(st, 0, sizeof(*st));
	if (*path == '\0') {
		errno = ENOENT;
		return -1;
	}
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (start_at(of, rest, shown, sizeof(shown)) == -1)
		return -1;
	for (;;) {
		name += strspn(name, "/");
		if (*name == '\0') {	/* "/", or a link to it */
			errno = EISDIR;
			break;
		}
		more = name + strcspn(name, "/");
		if (*more != '\0')
			*more++ = '\0';
		last = more[strspn(more, "/")] == '\0';
		if (strlen(name) > NAME_MAX) {
			errno = ENAMETOOLONG;
			break;
		}
		if (fstatat(of->dir, name, st, AT_SYMLINK_NOFOLLOW) == -1) {
			memset(st, 0, sizeof(*st));
			if (errno == ENOENT && last) {
				(void)snprintf(of->name, sizeof(of->name),
				    "%s", name);
				walked = 0;	/* made at the end */
			}
			break;
		}
		if (!S_ISLNK(st->st_mode) && last) {
			(void)snprintf(of->name, sizeof(of->name), "%s", name);
			walked = 0;
			break;
		}
		if (S_ISDIR(st->st_mode)) {
			int fd = openat(of->dir, name, WALK_DIR | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);

			if (fd == -1)
				break;
			if (close_dir(of) == -1) {
				of->dir = fd;	/* closed with the rest */
				break;
			}
			of->dir = fd;
			join(shown, sizeof(shown), name);
			name = more;
			continue;
		}
		if (!S_ISLNK(st->st_mode)) {
			errno = ENOTDIR;
			break;
		}
		if (++links > LINKS_MAX) {
			(void)snprintf(of->refused, sizeof(of->refused),
			    "more than %d symbolic links on the way",
			    LINKS_MAX);
			break;
		}
		if (may_follow(of, shown, name, st,
		    links == 1 && last) == -1 ||
		    (n = readlinkat(of->dir, name, text,
		    sizeof(text) - 1)) == -1)
			break;
		text[n] = '\0';
		if (last && descriptors(shown)) {
			/* Opened through, as the descriptor it names. */
			if (of->how == NEVER_IN_PLACE)
				(void)snprintf(of->refused,
				    sizeof(of->refused), "leads to a file "
				    "descriptor, which cannot be replaced");
			else if (fstatat(of->dir, name, st, 0) == 0) {
				(void)snprintf(of->name, sizeof(of->name),
				    "%s", name);
				of->follow = 1;
				walked = 0;
			}
			break;
		}
		/* The link's text takes its place in what is left. */
		if (snprintf(next, sizeof(next), "%s%s%s", text,
		    last ? "" : "/", last ? "" : more) >= (int)sizeof(next)) {
			errno = ENAMETOOLONG;
			break;
		}
		memcpy(rest, next, strlen(next) + 1);
		name = rest;
		if (*rest == '/' && start_at(of, rest, shown,
		    sizeof(shown)) == -1)
			break;
		if (*rest == '\0') {
			errno = ENOENT;
			break;
		}
	}
	if (walked == -1)
		memset(st, 0, sizeof(*st));
	return arrive(of, st, walked);
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

	memset(of, 0, sizeof(*of));
	of->path = path;
	of->how = how;
	of->dir = -1;
	if (walk(of, path, &st) == -1)
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
 * there now, to read (its owner and kind are the caller's to check), or
 * -1.  Nothing there can hold retry: O_NONBLOCK, O_NOFOLLOW.
 */
int
outfile_previous(const struct outfile *of)
{
	if (of->dir == -1) {
		errno = EBADF;
		return -1;
	}
	return openat(of->dir, of->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
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
 * is not made.  The descriptor, or -1 with errno (outfile_why()).
 */
int
outfile_append(struct outfile *of, const char *path)
{
	struct stat st;
	int fd = -1, e;

	memset(of, 0, sizeof(*of));
	of->path = path;
	of->how = DEVICES_IN_PLACE;	/* appended to, never replaced */
	of->dir = -1;
	if (walk(of, path, &st) == -1)
		return -1;
	if (st.st_mode == 0)
		errno = ENOENT;
	else
		fd = openat(of->dir, of->name, O_WRONLY | O_APPEND |
		    O_NONBLOCK | O_CLOEXEC | (of->follow ? 0 : O_NOFOLLOW));
	e = errno;
	if (close_dir(of) == -1 && fd != -1) {
		e = errno;
		(void)close(fd);	/* nothing written */
		fd = -1;
	}
	errno = e;
	return fd;
}

/* Why the last call on of failed: the link it refused, or errno's text. */
const char *
outfile_why(const struct outfile *of)
{
	return of->refused[0] != '\0' ? of->refused : strerror(errno);
}
