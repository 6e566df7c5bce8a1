/* SPDX-License-Identifier: ISC */
/*
 * A list of circuit names, as --circuit-list gathers them from the state
 * directory or a store's keys: any order and repeats in, sorted and each
 * once out.
 */
#ifndef NAMES_H
#define NAMES_H

#include <stddef.h>

struct names {
	char		**v;
	size_t		 n, cap;
};

int		 names_add(struct names *, const char *, size_t);
void		 names_sort(struct names *);
void		 names_free(struct names *);

#endif
