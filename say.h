/* SPDX-License-Identifier: ISC */
/*
 * The run's messages on stderr: a listener of the run's events.
 */
#ifndef SAY_H
#define SAY_H

#include <stddef.h>

#include "event.h"

struct policy;
struct run;

void		 say_event(const struct event *);
const char	*say_label(char *, size_t, const struct policy *,
		    const struct run *);
const char	*say_ending(char *, size_t, const struct policy *,
		    const struct run *);

#endif
