/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: parse_duration() on any bytes.  It must not crash, and
 * what it accepts must lie in [0, DUR_MAX].
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
	char *s = malloc(size + 1);
	int64_t ns = -1;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_duration(s, &ns) == NULL && (ns < 0 || ns > DUR_MAX))
		abort();
	free(s);
	return 0;
}
