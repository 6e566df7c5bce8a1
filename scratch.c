/* SPDX-License-Identifier: ISC */
/*
 * Scratch files: files in $TMPDIR that have no name, or lose it at once,
 * so that they go with retry however it ends; and how to tell that a
 * file left behind belongs to a process that has gone.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd.h"
#include "scratch.h"

/* $TMPDIR, or /tmp when it is unset or empty. */
const char *
temp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir == NULL || *dir == '\0' ? "/tmp" : dir;
}

/*
 * A file without a name in $TMPDIR: gone with retry, however retry ends,
 * even by SIGKILL.  Linux's O_TMPFILE never gives it one; elsewhere it is
 * unlinked as soon as mkstemp() has made it.
 */
int
scratch_file(void)
{
	char path[PATH_MAX];
	const char *dir = temp_dir();
	int fd;

#ifdef O_TMPFILE
	if ((fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) != -1)
		return fd_keep(fd);
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -1;	/* the directory's own trouble */
#endif
	if (snprintf(path, sizeof(path), "%s/retry.XXXXXX", dir) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) == -1)
		return -1;
	if (unlink(path) == -1)
		return -1;	/* retry exits 125, which closes fd */
	return fd_keep(fd);
}

/*
 * Whether the process that named a file left behind has gone (and so the
 * file is litter): not this one, and kill(2) finds no such process.
 */
int
owner_gone(long pid)
{
	return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) == -1 &&
	    errno == ESRCH;
}
