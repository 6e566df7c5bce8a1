/* SPDX-License-Identifier: ISC */
/*
 * The Retry-After hint file: opened once a run, read after each attempt.
 */
#ifndef HINT_H
#define HINT_H

#include <stddef.h>
#include <stdint.h>

const char	*hint_open(uint64_t, const char **);
const char	*hint_read(char *, size_t, const char **);
void		 hint_close(void);

#endif
