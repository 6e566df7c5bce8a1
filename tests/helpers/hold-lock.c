/* SPDX-License-Identifier: ISC */
/*
 * hold-lock FILE READY [BYTE]: takes an fcntl(2) write lock on FILE (on
 * its byte BYTE alone, as retry locks a record's lock file byte by byte),
 * creates READY and holds the lock until killed.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct flock fl;
	int fd;

	if (argc != 3 && argc != 4) {
		(void)fprintf(stderr, "usage: hold-lock file ready [byte]\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDWR)) == -1)
		goto fail;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;		/* l_start and l_len 0: all of it */
	if (argc == 4) {
		fl.l_start = (off_t)atoi(argv[3]);
		fl.l_len = 1;
	}
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
