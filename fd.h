/* SPDX-License-Identifier: ISC */
/*
 * Descriptor helpers that every part of retry which opens something uses,
 * and scratch files in $TMPDIR.
 */
#ifndef FD_H
#define FD_H

#include <stddef.h>

int		 fd_keep(int);
int		 new_pipe(int [2]);
int		 nonblocking(int);
int		 open_dir(int, const char *, int, int *);
int		 write_all(int, const char *, size_t);

const char	*temp_dir(void);
int		 scratch_file(void);
int		 owner_gone(long);

#endif
