/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: parse_codes() on any bytes.  It must not crash, an
 * accepted list is never empty, and a rejected one leaves the set as it was.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct codes set, empty;
	char *s = malloc(size + 1);
	int i, n = 0;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	memset(&set, 0, sizeof(set));
	memset(&empty, 0, sizeof(empty));
	if (parse_codes(s, &set) == NULL) {
		for (i = 0; i < 256; i++)
			n += codes_has(&set, i);
		if (n == 0)
			abort();
	} else if (memcmp(&set, &empty, sizeof(set)) != 0)
		abort();
	free(s);
	return 0;
}
