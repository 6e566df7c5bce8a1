/* SPDX-License-Identifier: ISC */
/*
 * Files written whole: a temporary file beside the path, renamed over it
 * once complete (or, where allowed, a device, FIFO or symbolic link
 * written as it is); the temporary files of killed runs are swept.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"
#include "scratch.h"

/*
 * Says up front whether path can be written, so that one that cannot is
 * a usage error before anything runs: a directory is refused; a regular
 * file, or a path that does not exist yet, needs a directory that retry
 * may write (its temporary file is made there at the end); a device, a
 * FIFO or a symbolic link is written in place where how allows it, and
 * else replaced like a regular file.  Nothing is made now.  0, or -1 with
 * errno.
 */
int
outfile_check(struct outfile *of, const char *path, enum in_place how)
{
	struct stat st;
	const char *slash;
	size_t len;

	memset(of, 0, sizeof(*of));
	of->path = path;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;	/* also through a symbolic link */
		return -1;
	}
	if (lstat(path, &st) == -1) {
		if (errno != ENOENT)
			return -1;
	} else if (!S_ISREG(st.st_mode) && how == DEVICES_IN_PLACE) {
		of->in_place = 1;
		return 0;
	}
	/* The directory of path, where the temporary file will be. */
	if ((slash = strrchr(path, '/')) == NULL)
		(void)snprintf(of->dir, sizeof(of->dir), ".");
	else if ((len = (size_t)(slash - path)) >= sizeof(of->dir)) {
		errno = ENAMETOOLONG;
		return -1;
	} else
		(void)snprintf(of->dir, sizeof(of->dir), "%.*s",
		    (int)(len == 0 ? 1 : len), path);
	if (stat(of->dir, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return faccessat(AT_FDCWD, of->dir, W_OK | X_OK, AT_EACCESS);
}

/*
 * "PATH.retry-PID", the temporary file of the process pid for path: a
 * name that node_exporter's *.prom and a reader of PATH both pass over.
 */
static int
temp_name(char *buf, size_t size, const char *path, long pid)
{
	if (snprintf(buf, size, "%s.retry-%ld", path, pid) < (int)size)
		return 0;
	errno = ENAMETOOLONG;
	return -1;
}

/*
 * Removes the temporary files that killed runs left beside the path:
 * those named for a process that is gone.
 */
static void
sweep(const struct outfile *of)
{
	char prefix[PATH_MAX], name[PATH_MAX];
	const char *base = strrchr(of->path, '/');
	struct dirent *de;
	size_t plen;
	char *end;
	long pid;
	DIR *d;

	base = base == NULL ? of->path : base + 1;
	(void)snprintf(prefix, sizeof(prefix), "%s.retry-", base);
	plen = strlen(prefix);
	if ((d = opendir(of->dir)) == NULL)
		return;		/* the rename will say what is wrong */
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		pid = strtol(de->d_name + plen, &end, 10);
		if (*end != '\0' || !owner_gone(pid))
			continue;
		if (snprintf(name, sizeof(name), "%s/%s", of->dir,
		    de->d_name) < (int)sizeof(name))
			(void)unlink(name);	/* another run may be first */
	}
	(void)closedir(d);	/* read only: nothing to lose */
}

/*
 * Where the contents go: a device, FIFO or symbolic link checked to be
 * written in place, opened as it is (O_NONBLOCK first, so that a FIFO
 * without a reader fails instead of waiting); else a new temporary file
 * beside the path, of mode (less the umask), renamed over it by
 * outfile_close().  NULL with errno.
 */
FILE *
outfile_open(struct outfile *of, mode_t mode)
{
	int fd, flags;

	if (of->in_place) {
		if ((fd = open(of->path, O_WRONLY | O_NONBLOCK | O_TRUNC |
		    O_CLOEXEC)) == -1 || (flags = fcntl(fd, F_GETFL)) == -1 ||
		    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
			return NULL;
		return fdopen(fd, "w");
	}
	sweep(of);
	if (temp_name(of->temp, sizeof(of->temp), of->path,
	    (long)getpid()) == -1)
		return NULL;
	if ((fd = open(of->temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) == -1) {
		of->temp[0] = '\0';
		return NULL;
	}
	return fdopen(fd, "w");
}

/*
 * Closes f, whose contents are whole, and puts the temporary file in the
 * path's place.  0, or -1 with errno and the temporary file removed.
 */
int
outfile_close(struct outfile *of, FILE *f)
{
	if ((ferror(f) | (fclose(f) == EOF)) ||
	    (of->temp[0] != '\0' && rename(of->temp, of->path) == -1)) {
		outfile_abandon(of);
		return -1;
	}
	of->temp[0] = '\0';
	return 0;
}

/* No file after all: the temporary file goes, errno kept. */
void
outfile_abandon(struct outfile *of)
{
	int e = errno;

	if (of->temp[0] != '\0' && unlink(of->temp) == -1 && errno != ENOENT)
		e = errno;
	of->temp[0] = '\0';
	errno = e;
}
