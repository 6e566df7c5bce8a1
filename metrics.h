/* SPDX-License-Identifier: ISC */
/*
 * --metrics FILE: the run in Prometheus's text format, for
 * node_exporter's textfile collector; a listener of the run's events.
 */
#ifndef METRICS_H
#define METRICS_H

#include "event.h"

void	 metrics_start(const char *);
void	 metrics_event(const struct event *);
void	 metrics_drop(void);

#endif
