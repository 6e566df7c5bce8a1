/* SPDX-License-Identifier: ISC */
/*
 * The values of retry's command line and environment: parsed into numbers
 * and sets, and written back for messages.  No I/O, no global state.
 */
#ifndef PARSE_H
#define PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "backoff.h"

/* A set of exit statuses 0-255, one bit each. */
struct codes {
	unsigned char bits[32];
};

/*
 * Parsers return NULL on success and otherwise a short reason such as
 * "invalid duration", to be completed with the option and the value.
 */
const char	*parse_duration(const char *, int64_t *);
const char	*parse_codes(const char *, struct codes *);
const char	*parse_count(const char *, long, long *);
const char	*parse_factor(const char *, double *);
const char	*parse_seed(const char *, uint64_t *);
const char	*parse_jitter(const char *, enum jitter *);
const char	*parse_hint(const char *, int64_t, int64_t *);
int		 parse_signal(const char *, int *);
int		 parse_unix_time(const char *, int64_t *);
size_t		 utf8_length(const unsigned char *);
int		 scan_bounded(char **, int64_t, int64_t *);
int		 valid_circuit_name(const char *);
const char	*check_pattern(const char *);
const char	*bracket_end(const char *);

int		 codes_has(const struct codes *, int);
void		 codes_add(struct codes *, int);

/* Writers: each fills buf and returns it. */
const char	*jitter_name(enum jitter);
const char	*signal_name(char *, size_t, int);
const char	*fmt_duration(char *, size_t, int64_t);
const char	*fmt_seconds(char *, size_t, int64_t, int64_t);
const char	*fmt_codes(char *, size_t, const struct codes *);

#endif
