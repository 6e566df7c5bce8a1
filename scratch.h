/* SPDX-License-Identifier: ISC */
/*
 * Scratch files in $TMPDIR, and the test for litter of a process gone.
 */
#ifndef SCRATCH_H
#define SCRATCH_H

const char	*temp_dir(void);
int		 scratch_file(void);
int		 owner_gone(long);

#endif
