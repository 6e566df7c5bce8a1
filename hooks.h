/* SPDX-License-Identifier: ISC */
/*
 * The hooks (--on-retry, --on-giveup, --on-success): a command for
 * /bin/sh -c run at a point of the run's story, with that point's facts
 * in its environment.
 */
#ifndef HOOKS_H
#define HOOKS_H

#include "event.h"
#include "options.h"
#include "proc.h"

int	 hook_run(const struct event *, enum hook);

#endif
