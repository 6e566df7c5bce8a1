# SPDX-License-Identifier: ISC
# crowd.awk: figure 7 (one circuit, many runs) from the output of
# bench/crowd.  Needs stats.awk.  Index 0 ran with --circuit, 1 without;
# -v attempts is the number of attempts that all the copies of one crowd
# make.  Writes "crowd ratio lo hi" and "crowd_per with without" (ns) to
# sum.

NF == 4 {
	t[$1, $2] = $3
	failed[$2] += $4
	if ($1 + 1 > rounds)
		rounds = $1 + 1
}

END {
	for (r = 0; r < rounds; r++) {
		a[r + 1] = t[r, 0] / attempts
		b[r + 1] = t[r, 1] / attempts
		v[r + 1] = t[r, 0] / t[r, 1]
	}
	n = rounds
	sortn(a, n); sortn(b, n); sortn(v, n)
	median_ci(n)
	print "| | time per attempt (median of crowds) |"
	print "|---|---:|"
	printf "| with `--circuit` | %s |\n", us(median(a, n))
	printf "| without | %s |\n", us(median(b, n))
	printf "| with ÷ without (median of paired ratios) [95%% CI] | %.3f [%.3f, %.3f] |\n",
	    median(v, n), v[ci_lo], v[ci_hi]
	printf "\n%d rounds; runs that did not exit 0 (all do, every attempt fails): %d with, %d without.\n",
	    rounds, failed[0], failed[1]
	printf "crowd %.3f %.3f %.3f\n", median(v, n), v[ci_lo], v[ci_hi] >> sum
	printf "crowd_per %.0f %.0f\n", median(a, n), median(b, n) >> sum
}
