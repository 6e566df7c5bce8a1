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
	char *end;
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
		fl.l_start = (off_t)strtol(argv[3], &end, 10);
		fl.l_len = 1;
		if (*argv[3] == '\0' || *end != '\0' || fl.l_start < 0) {
			(void)fprintf(stderr, "hold-lock: %s: not a byte\n",
			    argv[3]);
			return 2;
		}
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
