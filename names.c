/* SPDX-License-Identifier: ISC */
/*
 * The names that --circuit-list prints: gathered in any order, some twice
 * (a store's SCAN may return a key again), and printed sorted, each once.
 */
#include "compat.h"	/* first: the feature macros */

#include <stdlib.h>
#include <string.h>

#include "common.h"

/* One more name, of len bytes; -1 (errno ENOMEM) when memory runs out. */
int
names_add(struct names *l, const char *name, size_t len)
{
	char **v, *copy;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap == 0 ? 16 : 2 * l->cap;
		if ((v = realloc(l->v, cap * sizeof(*v))) == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if ((copy = malloc(len + 1)) == NULL)
		return -1;
	memcpy(copy, name, len);
	copy[len] = '\0';
	l->v[l->n++] = copy;
	return 0;
}

/* As strcmp(3): in the C locale's byte order, as ls(1) sorts there. */
static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each name once. */
void
names_sort(struct names *l)
{
	size_t i, kept = 0;

	if (l->n == 0)
		return;
	qsort(l->v, l->n, sizeof(*l->v), by_name);
	for (i = 0; i < l->n; i++) {
		if (kept > 0 && strcmp(l->v[kept - 1], l->v[i]) == 0)
			free(l->v[i]);
		else
			l->v[kept++] = l->v[i];
	}
	l->n = kept;
}

void
names_free(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
