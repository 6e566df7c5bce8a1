/* SPDX-License-Identifier: ISC */
/*
 * The files retry writes for the user (--report, --metrics, the CI
 * files): reached through symbolic links only as the kernel's
 * protected_symlinks would allow, checked when the run starts, written
 * whole when it ends, so that no reader ever sees half of one.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <sys/types.h>

#include <limits.h>
#include <stdio.h>

/* What may stand at the path and be written there as it is. */
enum in_place { NEVER_IN_PLACE, DEVICES_IN_PLACE };

struct outfile {
	const char	*path;
	enum in_place	 how;
	int		 in_place;	/* a device or FIFO: written as is */
	int		 follow;	/* name is a link of /proc's, opened
					   through (outfile.c's walk) */
	int		 dir;		/* where name is, or -1 */
	char		 name[NAME_MAX + 1];	/* what the path leads to */
	char		 temp[NAME_MAX + 1];	/* in dir, renamed over name */
	char		 refused[PATH_MAX + 512];	/* why, when errno is not */
};

int	 outfile_check(struct outfile *, const char *, enum in_place);
FILE	*outfile_open(struct outfile *, mode_t);
int	 outfile_close(struct outfile *, FILE *);
void	 outfile_abandon(struct outfile *);
int	 outfile_append(struct outfile *, const char *);
int	 outfile_previous(const struct outfile *);
const char *outfile_why(const struct outfile *);

#endif
