/* SPDX-License-Identifier: ISC */
/*
 * The kernel's randomness: one read per run, parted among its uses.
 */
#ifndef RANDOM_H
#define RANDOM_H

#include <stdint.h>

uint64_t	 random_seed(void);
uint64_t	 random_nonce(void);
void		 random_key_bytes(unsigned char [16]);
void		 random_secret_bytes(unsigned char [16]);

#endif
