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

/*
 * usage: linematch re <input >output
 *
 * Copies stdin to stdout 64 KiB at a time and matches each line, without
 * its newline, against the extended regular expression re (REG_NOSUB),
 * as retry --on-output re does: split with memchr(3), matched in place.
 * Lines cut by a read are matched on their part in the later read only:
 * a floor, not a copy of retry.  Exits 0 if a line matched, 1 if none.
 */
int
main(int argc, char *argv[])
{
	regex_t re;
	ssize_t n, w, off;
	char *s, *end, *nl, *cut, saved;
	int hit = 0;

	if (argc != 2 || regcomp(&re, argv[1], REG_EXTENDED | REG_NOSUB) != 0) {
		(void)fprintf(stderr, "usage: linematch re\n");
		return 2;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof(buf) - 1)) > 0) {
		for (s = buf, end = buf + n;
		    (nl = memchr(s, '\n', (size_t)(end - s))) != NULL;
		    s = nl + 1) {
			cut = nl - s >= LINEMAX ? s + LINEMAX - 1 : nl;
			saved = *cut;
			*cut = '\0';
			if (regexec(&re, s, 0, NULL, 0) == 0)
				hit = 1;
			*cut = saved;
		}
		for (off = 0; off < n; off += w)
			if ((w = write(STDOUT_FILENO, buf + off,
			    (size_t)(n - off))) == -1) {
				perror("write");
				return 2;
			}
	}
	return hit ? 0 : 1;
}
