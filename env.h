/* SPDX-License-Identifier: ISC */
/*
 * The environment: what each attempt finds there, what retry takes from an
 * outer retry; the Retry-After hint file that RETRY_AFTER_FILE names.
 */
#ifndef ENV_H
#define ENV_H

#include <stddef.h>
#include <stdint.h>

int		 under_outer_retry(void);
int64_t		 find_deadline(int64_t, int64_t, int *);
void		 export(const char *, const char *);
void		 export_environment(const char *, char *const [], long, int64_t,
		    int);
void		 export_attempt(long);
const char	*deadline_text(char *, size_t, int64_t);

void		 export_hint_file(void);
const char	*hint_read(char *, size_t, const char **);
void		 hint_close(void);

#endif
