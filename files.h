/* SPDX-License-Identifier: ISC */
/*
 * The files retry makes for itself: scratch files without a name, and the
 * Retry-After hint file, which costs nothing until an attempt writes it.
 */
#ifndef FILES_H
#define FILES_H

#include <stddef.h>
#include <stdint.h>

int		 fd_keep(int);
int		 new_pipe(int [2]);
int		 nonblocking(int);
int		 owner_gone(long);
int		 open_dir(int, const char *, int, int *);
const char	*temp_dir(void);
int		 scratch_file(void);
const char	*hint_open(uint64_t, const char **);
const char	*hint_read(char *, size_t, const char **);
void		 hint_close(void);

#endif
