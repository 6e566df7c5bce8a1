/* SPDX-License-Identifier: ISC */
/*
 * -Q, --quiet-unless-failed, the cron mode: each attempt's output and
 * retry's lines held in a file, shown only if the run fails; a listener
 * of the run's events.
 */
#ifndef CRON_H
#define CRON_H

#include "event.h"

#include <stdint.h>

int	 cron_start(int64_t);
void	 cron_event(const struct event *);
void	 cron_end(int);
void	 cron_drop(void);

#endif
