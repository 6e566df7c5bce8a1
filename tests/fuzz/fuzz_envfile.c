/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: envfile_parse() on any bytes, which an attempt or a
 * hook writes to RETRY_ENV_FILE.  It may not crash or read past what it
 * is given (no NUL after it); every assignment it keeps is a span of the
 * text with a name of [A-Za-z_][A-Za-z0-9_]* that is not RETRY_* (nor,
 * unless all names are let through, PATH, IFS or LD_*) and a value
 * without a NUL; a text refused whole keeps none and says one line.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether the assignment a keeps a name that the rules let through. */
static int
allowed(const struct env_assign *a, enum env_names names)
{
	size_t i;

	if (a->name_len == 0 || (a->name[0] >= '0' && a->name[0] <= '9'))
		return 0;
	for (i = 0; i < a->name_len; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_", a->name[i]) == NULL || a->name[i] == '\0')
			return 0;
	if (a->name_len >= 6 && memcmp(a->name, "RETRY_", 6) == 0)
		return 0;
	return names == ENV_NAMES_ALL || !((a->name_len == 4 &&
	    memcmp(a->name, "PATH", 4) == 0) || (a->name_len == 3 &&
	    memcmp(a->name, "IFS", 3) == 0) || (a->name_len >= 3 &&
	    memcmp(a->name, "LD_", 3) == 0));
}

static void
check(const char *text, size_t size, enum env_names names)
{
	struct envfile ef;
	const struct env_assign *a;
	size_t i;

	if (envfile_parse(text, size, names, &ef) == -1) {
		envfile_free(&ef);
		return;		/* out of memory: nothing to judge */
	}
	if (ef.refused && (ef.nset != 0 || ef.nwarn != 1))
		abort();
	if (ef.nwarn > ENVFILE_WARNMAX)
		abort();
	for (i = 0; i < ef.nwarn; i++)
		if (memchr(ef.warn[i], '\0', sizeof(ef.warn[i])) == NULL)
			abort();
	for (i = 0; i < ef.nset; i++) {
		a = &ef.set[i];
		if (a->name < text || a->name + a->name_len > text + size ||
		    a->value < text || a->value + a->value_len > text + size ||
		    !allowed(a, names) ||
		    memchr(a->value, '\0', a->value_len) != NULL)
			abort();
	}
	envfile_free(&ef);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes: ASan sees a read past them. */
	char *text = malloc(size > 0 ? size : 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	check(text, size, ENV_NAMES_SAFE);
	check(text, size, ENV_NAMES_ALL);
	free(text);
	return 0;
}
