/* SPDX-License-Identifier: ISC */
/*
 * proc-state PID [FIELD ...]: prints the state of a process, in place of
 * procps' ps -o: each FIELD (state, ppid, pgid, sid, tpgid; by default all
 * five) on one line, space-separated; exit 1 if there is no such process.
 * proc-state -c PID: the children of PID, "pid state" a line.
 * Linux only, from /proc/PID/stat (proc(5)); elsewhere it says so and
 * exits 2.
 */
#include "../../compat.h"	/* first: the feature macros */

#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fields[] = { "state", "ppid", "pgid", "sid", "tpgid" };
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

/*
 * The fields of /proc/PID/stat after the command name, which may hold
 * spaces and parentheses: what follows its last ")".
 */
static int
probe(const char *pid, char *state, long v[4])
{
	char path[64], buf[1024], *p, *end;
	FILE *f;
	size_t n;
	long num[5];		/* ppid pgrp session tty_nr tpgid */
	int i;

	(void)snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	(void)fclose(f);
	buf[n] = '\0';
	/* ") S ppid pgrp session tty_nr tpgid ..." */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return -1;
	*state = p[2];
	p += 3;
	for (i = 0; i < 5; i++, p = end) {
		errno = 0;
		num[i] = strtol(p, &end, 10);
		if (end == p || errno != 0)
			return -1;
	}
	v[0] = num[0];
	v[1] = num[1];
	v[2] = num[2];
	v[3] = num[4];
	return 0;
}

static int
children(const char *parent)
{
	struct dirent *d;
	DIR *dir;
	char state;
	long v[4], want = strtol(parent, NULL, 10);

	if ((dir = opendir("/proc")) == NULL)
		return 2;
	while ((d = readdir(dir)) != NULL)
		if (strspn(d->d_name, "0123456789") == strlen(d->d_name) &&
		    probe(d->d_name, &state, v) == 0 && v[0] == want)
			printf("%s %c\n", d->d_name, state);
	(void)closedir(dir);
	return fflush(stdout) == EOF;
}

int
main(int argc, char *argv[])
{
	char state;
	long v[4];
	int i;
	size_t k;

#ifndef __linux__
	(void)fprintf(stderr, "proc-state: reads /proc/PID/stat: Linux only\n");
	return 2;
#endif
	if (argc == 3 && strcmp(argv[1], "-c") == 0)
		return children(argv[2]);
	if (argc < 2) {
		(void)fprintf(stderr, "usage: proc-state pid [field ...] | "
		    "proc-state -c pid\n");
		return 2;
	}
	if (probe(argv[1], &state, v) == -1)
		return 1;
	if (argc == 2) {
		printf("%c %ld %ld %ld %ld\n", state, v[0], v[1], v[2], v[3]);
		return fflush(stdout) == EOF;
	}
	for (i = 2; i < argc; i++) {
		for (k = 0; k < NFIELDS && strcmp(argv[i], fields[k]) != 0; k++)
			continue;
		if (k == NFIELDS) {
			(void)fprintf(stderr, "proc-state: %s: unknown field\n",
			    argv[i]);
			return 2;
		}
		if (k == 0)
			printf("%s%c", i > 2 ? " " : "", state);
		else
			printf("%s%ld", i > 2 ? " " : "", v[k - 1]);
	}
	printf("\n");
	return fflush(stdout) == EOF;
}
