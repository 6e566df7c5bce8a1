/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: parse_hint() and hint_line() on any bytes, which an
 * attempt's server writes.  Neither may crash or read past what it is
 * given (hint_line() gets the bytes without a NUL, as relay.c lends it a
 * line); a status is 0 or 100-599; a hint gives either a delay in
 * (0, DUR_MAX] and the header it came from, or why not.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common.h"

#define NOW	(INT64_C(1800000000) * NS_PER_SEC)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes: ASan sees a read past them. */
	char *line = malloc(size > 0 ? size : 1), *text = malloc(size + 1);
	struct hint h;

	if (line == NULL || text == NULL) {
		free(line);
		free(text);
		return 0;
	}
	memcpy(line, data, size);
	(void)hint_line(line, size);
	memcpy(text, data, size);
	text[size] = '\0';
	parse_hint(text, NOW, &h);
	if (h.status != 0 && (h.status < 100 || h.status > 599))
		abort();
	if (h.why == NULL && (h.from == NULL || h.delay <= 0 ||
	    h.delay > DUR_MAX))
		abort();
	free(line);
	free(text);
	return 0;
}
