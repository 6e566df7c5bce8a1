/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 (FIPS 180-4), for the name-based idempotency key of a nested
 * run: written here, as the card allows libc alone.
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t	 h[8];
	uint64_t	 len;		/* bytes so far */
	unsigned char	 block[64];
	size_t		 used;		/* bytes in block */
};

void	sha256_init(struct sha256 *);
void	sha256_add(struct sha256 *, const void *, size_t);
void	sha256_end(struct sha256 *, unsigned char [32]);

#endif
