/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: find.c's search for a fixed string against memmem(3)
 * on any bytes: the same first place, or none, from any start, reading
 * nothing outside the haystack.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../find.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * Byte 0: the string's length, 1 to LITMAX; byte 1: bit 0 set, the
 * haystack is spelt from the string's own bytes (near misses, a byte that
 * is rare by the table but common here); then the string, then the rest.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct finder f;
	size_t len, n, i, from;
	char *hay;
	const char *want, *got;

	if (size < 2)
		return 0;
	len = 1 + data[0] % LITMAX;
	if (size - 2 < len)
		return 0;
	finder_init(&f, (const char *)data + 2, len);
	n = size - 2 - len;
	/* Exactly n bytes: ASan sees a read past them. */
	if ((hay = malloc(n > 0 ? n : 1)) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		hay[i] = (char)(data[1] & 1 ? data[2 + data[2 + len + i] % len] :
		    data[2 + len + i]);
	for (from = 0; from <= n; from += 1 + from / 2) {
		want = memmem(hay + from, n - from, data + 2, len);
		got = finder_find(&f, hay + from, n - from);
		if (got != want)
			abort();
	}
	free(hay);
	return 0;
}
