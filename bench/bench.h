/* SPDX-License-Identifier: ISC */
/*
 * What the benchmark helpers share: the monotonic clock, commands given
 * on one command line separated by "::", and starting one quietly.
 */
#ifndef BENCH_H
#define BENCH_H

#include <sys/types.h>

#define MAXCMDS	16

long long	 now_ns(void);
void		 sleep_ns(long long);
int		 split_commands(char **, char **[], int);
pid_t		 start_quiet(char **, const char *);
void		 die(const char *);

#endif
