/* SPDX-License-Identifier: ISC */
/*
 * -Q's spool: the attempts' output and retry's lines held in a file in
 * $TMPDIR, with an index of where each attempt's part lies, shown on
 * stderr when the run fails.  A spool that fails (a full disk) shows what
 * it held and lets the rest pass through.  Below the messages and the
 * relay, which both write into it; cron.c says what to index and when to
 * show.
 */
#ifndef SPOOL_H
#define SPOOL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

int	 spool_open(int64_t);
int	 spool_holding(void);
int	 spool_fd(void);
void	 spool_begin(const char *, size_t);
void	 spool_end_attempt(void);
void	 spool_index(const char *, size_t);
int	 spool_put(const char *, size_t);
void	 spool_failed(int);
void	 spool_mark(void);
void	 spool_show(int);
int	 spool_drop(void);

#endif
