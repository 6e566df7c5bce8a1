/* SPDX-License-Identifier: ISC */
/*
 * Descriptor helpers: kept above stdio and closed on exec, pipes that
 * never block, directories opened without following a link; and scratch
 * files, in $TMPDIR with no name (or losing it at once), so that they go
 * with retry however it ends, with how to tell that a file left behind
 * belongs to a process that has gone.  A leaf.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

/*
 * fd moved above stdio and closed on exec: a stdin, stdout or stderr that
 * retry was started without stays closed for the child and for messages.
 * Returns the descriptor kept, or -1 with fd closed.
 */
int
fd_keep(int fd)
{
	int kept, e;

	if (fd > STDERR_FILENO)
		kept = fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ? -1 : fd;
	else
		kept = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (kept == fd)
		return fd;
	e = errno;
	if (close(fd) == -1)
		return -1;
	errno = e;
	return kept;
}

/*
 * fd_keep() of an fd opened close-on-exec already: only one in stdio's
 * place moves, and no fcntl(2) is made for the others.
 */
int
fd_keep_cloexec(int fd)
{
	return fd > STDERR_FILENO ? fd : fd_keep(fd);
}

/*
 * A pipe whose two ends are kept as fd_keep() keeps one, and never block
 * with nonblock.  pipe2(2) does it in one call where there is one; it
 * saves a plain run six fcntl(2) calls for the self-pipe.
 */
static int
pipe_kept(int fds[2], int nonblock)
{
#ifdef HAVE_PIPE2
	if (pipe2(fds, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0)) == -1)
		return -1;
	fds[0] = fd_keep_cloexec(fds[0]);
	fds[1] = fd_keep_cloexec(fds[1]);
	return fds[0] == -1 || fds[1] == -1 ? -1 : 0;
#else
	if (pipe(fds) == -1)
		return -1;
	fds[0] = fd_keep(fds[0]);
	fds[1] = fd_keep(fds[1]);
	if (fds[0] == -1 || fds[1] == -1)
		return -1;
	return nonblock && (nonblocking(fds[0]) == -1 ||
	    nonblocking(fds[1]) == -1) ? -1 : 0;
#endif
}

/* A pipe whose two ends are kept as fd_keep() keeps one. */
int
new_pipe(int fds[2])
{
	return pipe_kept(fds, 0);
}

/* new_pipe(), and neither end ever blocks: the self-pipe. */
int
new_pipe_nonblocking(int fds[2])
{
	return pipe_kept(fds, 1);
}

/* Reads and writes of fd never wait: every wait is a poll(2). */
int
nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	return flags == -1 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/*
 * openat(parent, name) of a directory, made (0700) when missing and make.
 * *link says whether it failed on a symbolic link, whatever the system
 * says for O_NOFOLLOW with O_DIRECTORY there (Linux ENOTDIR, FreeBSD
 * EMLINK, others ELOOP).
 */
int
open_dir(int parent, const char *name, int make, int *link)
{
	struct stat st;
	int fd, e;

	*link = 0;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == ENOENT && make &&
	    (mkdirat(parent, name, 0700) == 0 || errno == EEXIST))
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd == -1 && errno != ENOENT) {
		e = errno;
		*link = fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode);
		errno = e;
	}
	return fd;
}

/* write(2) all of buf; a short write goes on, and says why it stopped. */
int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Whether fd is a regular file, a pipe or a socket: data that a retry
 * must rewind, replay or count.  A terminal, a device such as /dev/null
 * or a closed descriptor holds none.
 */
int
fd_holds_data(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) ||
	    S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/* ---- Scratch files ---------------------------------------------------- */

static char	 kept_dir[PATH_MAX];	/* $TMPDIR as the run began */
static int	 dir_kept;

/*
 * Keeps $TMPDIR as it is now, before any attempt: an attempt may set
 * another for the next ones through RETRY_ENV_FILE, but retry's own
 * files stay where the run began.
 */
void
temp_dir_keep(void)
{
	const char *dir = getenv("TMPDIR");

	/* One too long for a path is kept nowhere: no file is made there. */
	if (!dir_kept)
		dir_kept = snprintf(kept_dir, sizeof(kept_dir), "%s",
		    dir == NULL || *dir == '\0' ? "/tmp" : dir) <
		    (int)sizeof(kept_dir);
}

/* $TMPDIR (as kept, once it is), or /tmp when it is unset or empty. */
const char *
temp_dir(void)
{
	const char *dir = dir_kept ? kept_dir : getenv("TMPDIR");

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
		return fd_keep_cloexec(fd);
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
