/* SPDX-License-Identifier: ISC */
/*
 * linematch: the floor of --on-output.  The smallest loop that does what
 * retry does with the output it matches, with the same libc regexec(3).
 */
#include "../compat.h"	/* first: the feature macros */

#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINEMAX	4096

static char	 buf[65536 + 1];

/* Writes all of buf[0..n) to stdout; -1 on an error, said. */
static int
put(const char *b, ssize_t n)
{
	ssize_t off, w;

	for (off = 0; off < n; off += w)
		if ((w = write(STDOUT_FILENO, b + off, (size_t)(n - off))) == -1) {
			perror("write");
			return -1;
		}
	return 0;
}

/* Each line of buf[0..n), without its newline, against re: 1 on a match. */
static int
match_lines(const regex_t *re, char *s, char *end)
{
	char *nl, *cut, saved;
	int hit = 0;

	for (; (nl = memchr(s, '\n', (size_t)(end - s))) != NULL; s = nl + 1) {
		cut = nl - s >= LINEMAX ? s + LINEMAX - 1 : nl;
		saved = *cut;
		*cut = '\0';
		if (regexec(re, s, 0, NULL, 0) == 0)
			hit = 1;
		*cut = saved;
	}
	return hit;
}

/*
 * usage: linematch re <input >output
 *        linematch -F literal <input >output
 *
 * Copies stdin to stdout 64 KiB at a time and matches each line, without
 * its newline, against the extended regular expression re (REG_NOSUB),
 * as retry --on-output re does: split with memchr(3), matched in place.
 * Lines cut by a read are matched on their part in the later read only:
 * a floor, not a copy of retry.  -F: the floor of retry's prefilter for a
 * pattern that is one literal, libc's memmem(3) over each read and
 * nothing else.  Exits 0 if a line matched, 1 if none.
 */
int
main(int argc, char *argv[])
{
	regex_t re;
	ssize_t n;
	const char *lit = NULL;
	int hit = 0;

	if (argc == 3 && strcmp(argv[1], "-F") == 0)
		lit = argv[2];
	else if (argc != 2 ||
	    regcomp(&re, argv[1], REG_EXTENDED | REG_NOSUB) != 0) {
		(void)fprintf(stderr, "usage: linematch re | -F literal\n");
		return 2;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof(buf) - 1)) > 0) {
		if (lit != NULL ? memmem(buf, (size_t)n, lit, strlen(lit)) !=
		    NULL : match_lines(&re, buf, buf + n))
			hit = 1;
		if (put(buf, n) == -1)
			return 2;
	}
	return hit ? 0 : 1;
}
