/* SPDX-License-Identifier: ISC */
/*
 * hint-parse NOW TEXT: what parse.c makes of TEXT as an attempt's hint at
 * Unix time NOW, on one line: "STATUS LIMIT DELAY FROM" for a hint that
 * gives a delay ("429 limit 1.000s X-RateLimit-Reset"), "STATUS LIMIT
 * why: WHY" for one that gives none; LIMIT is "limit" for a response that
 * asks to be called again later, else "-".
 * hint-parse -l LINE: what hint_line() calls LINE: status, header, other.
 * So that tests/http.bats can hold the parser's rules as a table: no
 * file, no clock, no retry.
 */
#include "../../compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parser, compiled in whole: one source file, as every helper here. */
#include "../../parse.c"	/* NOLINT(bugprone-suspicious-include) */

static void
usage(void)
{
	fprintf(stderr, "usage: hint-parse NOW TEXT | -l LINE\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const char *const kinds[] = {
		[HINT_LINE_OTHER] = "other", [HINT_LINE_STATUS] = "status",
		[HINT_LINE_HEADER] = "header",
	};
	struct hint h;
	int64_t now;
	char d[32];

	if (argc != 3)
		usage();
	if (strcmp(argv[1], "-l") == 0)
		return puts(kinds[hint_line(argv[2], strlen(argv[2]))]) == EOF;
	if (!parse_unix_time(argv[1], &now))
		usage();
	parse_hint(argv[2], now, &h);
	if (h.why != NULL)
		return printf("%d %s why: %s\n", h.status, h.rate_limited ?
		    "limit" : "-", h.why) < 0;
	return printf("%d %s %s %s\n", h.status, h.rate_limited ? "limit" : "-",
	    fmt_duration(d, sizeof(d), h.delay), h.from) < 0;
}
