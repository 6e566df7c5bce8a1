/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: check_pattern() on any bytes, the gate in front of
 * regcomp() for --on-output and --stop-on-output.  It must end, touch no
 * memory it should not, and refuse every back-reference it lets through
 * the scan of its own.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../parse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	/* An escaped digit outside a bracket expression is refused. */
	if (check_pattern(s) == NULL && s[0] == '\\' && s[1] >= '1' &&
	    s[1] <= '9')
		abort();
	free(s);
	return 0;
}
