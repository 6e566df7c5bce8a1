/* SPDX-License-Identifier: ISC */
/*
 * The run's messages on stderr: a listener of the run's events.
 */
#ifndef SAY_H
#define SAY_H

#include "event.h"

void	 say_event(const struct event *);

#endif
