/*
 * The files retry makes for itself: unlinked scratch files in $TMPDIR, and
 * the file where an attempt may leave a Retry-After hint.
 */
#ifndef FILES_H
#define FILES_H

#include <stddef.h>

int		 fd_keep(int);
int		 scratch_file(void);
const char	*hint_make(void);
void		 hint_clear(void);
const char	*hint_read(char *, size_t, const char **);
void		 hint_remove(void);

#endif
