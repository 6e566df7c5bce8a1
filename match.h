/* SPDX-License-Identifier: ISC */
/*
 * Matching --on-output's and --stop-on-output's patterns against lines,
 * fast: by the fixed strings every match holds, or by runs of lines at
 * once, always with the verdicts of regexec(3) on each line by itself.
 */
#ifndef MATCH_H
#define MATCH_H

#include <regex.h>
#include <stddef.h>

#include "find.h"

#define LINEMAX		4096	/* longer lines are matched on their start */
#define NLIT		8	/* literals of one pattern, at most */
/* LITMAX, the bytes of one, is find.h's. */

/*
 * How one pattern is matched: per line (line), or, when every match
 * holds one of lit (a fixed string, or each alternative's), where find.c
 * finds one; else runs of whole lines at once (chunk, REG_NEWLINE).
 */
struct matcher {
	const regex_t	*line;		/* NULL: no pattern */
	regex_t		 chunk;
	int		 chunked;	/* chunk is compiled */
	int		 nlit;		/* 0: none found */
	struct finder	 lit[NLIT];
};

int	line_matches(const regex_t *, char *, size_t);
int	matcher_init(struct matcher *, const regex_t *, const char *);
int	matcher_lines(const struct matcher *, char *, size_t);
void	matcher_free(struct matcher *);

#endif
