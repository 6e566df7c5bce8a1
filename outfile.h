/* SPDX-License-Identifier: ISC */
/*
 * The files retry writes for the user (--report, --metrics): checked when
 * the run starts, written whole when it ends, so that no reader ever
 * sees half of one.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <sys/types.h>

#include <limits.h>
#include <stdio.h>

struct outfile {
	const char	*path;
	int		 in_place;	/* a device, FIFO or link: written as is */
	char		 dir[PATH_MAX];	/* else the temporary file goes here */
	char		 temp[PATH_MAX];/* at the end, renamed over path */
};

/* What may stand at the path and be written there as it is. */
enum in_place { NEVER_IN_PLACE, DEVICES_IN_PLACE };

int	 outfile_check(struct outfile *, const char *, enum in_place);
FILE	*outfile_open(struct outfile *, mode_t);
int	 outfile_close(struct outfile *, FILE *);
void	 outfile_abandon(struct outfile *);

#endif
