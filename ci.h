/* SPDX-License-Identifier: ISC */
/*
 * --ci: each attempt folded in a CI job's log (GitHub Actions, GitLab CI)
 * and, on GitHub, one annotation, a summary row and outputs per run; a
 * listener of the run's events.
 */
#ifndef CI_H
#define CI_H

#include "event.h"

struct policy;

int	 ci_start(const struct policy *);
void	 ci_event(const struct event *);
void	 ci_drop(void);

#endif
