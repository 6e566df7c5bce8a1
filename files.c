/*
 * Where retry writes for itself: scratch files that are unlinked as soon
 * as they are made, so they go with retry however it ends, and the
 * Retry-After hint file that each attempt finds in RETRY_AFTER_FILE.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "msg.h"

static char	 hint_dir[PATH_MAX], hint_file[PATH_MAX];

/*
 * fd moved above stdio and closed on exec: a stdin, stdout or stderr that
 * retry was started without stays closed for the child and for messages.
 */
int
fd_keep(int fd)
{
	int moved, e;

	if (fd > STDERR_FILENO)
		return fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ? -1 : fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	e = errno;
	if (close(fd) == -1)
		return -1;
	errno = e;
	return moved;
}

/*
 * "$TMPDIR/retry.XXXXXX" (TMPDIR empty or unset: /tmp) in buf, for
 * mkstemp() or mkdtemp(); *dir says which directory.  -1 if too long.
 */
static int
temp_template(char *buf, size_t size, const char **dir)
{
	*dir = getenv("TMPDIR");
	if (*dir == NULL || **dir == '\0')
		*dir = "/tmp";
	if (snprintf(buf, size, "%s/retry.XXXXXX", *dir) >= (int)size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* An unlinked file in $TMPDIR: gone with retry, however retry ends. */
int
scratch_file(void)
{
	char path[PATH_MAX];
	const char *dir;
	int fd;

	if (temp_template(path, sizeof(path), &dir) == -1 ||
	    (fd = mkstemp(path)) == -1)
		return -1;
	if (unlink(path) == -1)
		return -1;	/* retry exits 125, which closes fd */
	return fd_keep(fd);
}

/*
 * RETRY_AFTER_FILE: an empty file in a directory of retry's own (0700),
 * where an attempt may write how long to wait before the next.  Returns
 * its path.
 */
const char *
hint_make(void)
{
	const char *dir;
	int fd;

	if (temp_template(hint_dir, sizeof(hint_dir), &dir) == -1 ||
	    mkdtemp(hint_dir) == NULL) {
		hint_dir[0] = '\0';
		fatal("cannot make a directory in %s", dir);
	}
	if (snprintf(hint_file, sizeof(hint_file), "%s/retry-after",
	    hint_dir) >= (int)sizeof(hint_file)) {
		errno = ENAMETOOLONG;
		fatal("%s", hint_dir);
	}
	if ((fd = open(hint_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1 || close(fd) == -1)
		fatal("%s", hint_file);
	return hint_file;
}

/*
 * Emptied before each attempt: whatever the last one left at the path
 * (a file, a FIFO, a symbolic link) is removed and an empty file made.
 */
void
hint_clear(void)
{
	int fd;

	if (hint_file[0] == '\0')
		return;
	if (unlink(hint_file) == -1 && errno != ENOENT)
		fatal("%s", hint_file);
	if ((fd = open(hint_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1 || close(fd) == -1)
		fatal("%s", hint_file);
}

/*
 * What the last attempt wrote, in buf (NUL-terminated, at most size - 1
 * bytes), or NULL with the reason in *why.  Only a regular file is read,
 * and opening a FIFO with O_NONBLOCK does not wait for a writer: nothing
 * an attempt leaves there can hold retry.
 */
const char *
hint_read(char *buf, size_t size, const char **why)
{
	struct stat st;
	ssize_t n = -1;
	int fd, e;

	if ((fd = open(hint_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		*why = strerror(errno);
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
	if (n == -1)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* The hint file and its directory go, on every way out but SIGKILL. */
void
hint_remove(void)
{
	if (hint_file[0] != '\0' && unlink(hint_file) == -1 && errno != ENOENT)
		warning("%s", hint_file);
	if (hint_dir[0] != '\0' && rmdir(hint_dir) == -1)
		warning("%s", hint_dir);
	hint_file[0] = hint_dir[0] = '\0';
}
