/* SPDX-License-Identifier: ISC */
/*
 * The Retry-After hint file (RETRY_AFTER_FILE): a name in a private
 * directory that costs nothing until an attempt writes it.
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

#include "fd.h"
#include "hint.h"
#include "msg.h"
#include "scratch.h"

static int	 hint_dir = -1;		/* the private directory, open */
static char	 hint_name[64];		/* this run's file in it */
static char	 hint_path[PATH_MAX];	/* the two, for RETRY_AFTER_FILE */

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
		return fd_keep(fd);
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
const char *
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

/* "PID-NONCE": the PID of a hint file's name, or 0. */
static long
hint_owner(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (pid <= 0 || *end != '-' || strlen(end + 1) != 16 ||
	    strspn(end + 1, "0123456789abcdef") != 16)
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
 * What the last attempt wrote, in buf (NUL-terminated, at most size - 1
 * bytes), or NULL with the reason in *why, NULL when it wrote nothing.
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
	    (S_ISREG(st.st_mode) && (n = read(fd, buf, size - 1)) == -1))
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
