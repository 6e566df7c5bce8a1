/* SPDX-License-Identifier: ISC */
/*
 * hold-lock FILE READY: takes an fcntl(2) write lock on FILE, the kind retry
 * takes on a record, creates READY and holds the lock until killed.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct flock fl;
	int fd;

	if (argc != 3) {
		(void)fprintf(stderr, "usage: hold-lock file ready\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDWR)) == -1)
		goto fail;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;		/* l_start and l_len 0: all of it */
	while (fcntl(fd, F_SETLKW, &fl) == -1)
		if (errno != EINTR)
			goto fail;
	if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    close(fd) == -1)
		goto fail;
	for (;;)
		pause();
fail:
	(void)fprintf(stderr, "hold-lock: %s\n", strerror(errno));
	return 1;
}
