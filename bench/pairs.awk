# SPDX-License-Identifier: ISC
# pairs.awk: figure 6 (throughput) from the output of bench/spawn.  Needs
# stats.awk.  -v names="a|b|..." labels the commands by index; -v bytes
# is what each moves; -v pairs="key:i:j:label|..." asks for the median of
# the paired ratios time(j) / time(i) (i's throughput as a share of j's),
# written to sum as "key ratio lo hi"; with -v key, each command's median
# time too, as "key_tINDEX ns".

BEGIN {
	nc = split(names, name, "|")
	np = split(pairs, pair, "|")
}

NF == 6 {
	t[$1, $2] = $3
	if ($6 != 0)
		bad[$2]++
	if ($1 + 1 > rounds)
		rounds = $1 + 1
}

END {
	print "| command | median time | throughput |"
	print "|---|---:|---:|"
	for (i = 0; i < nc; i++) {
		n = 0
		for (r = 0; r < rounds; r++)
			if ((r, i) in t)
				all[++n] = t[r, i]
		sortn(all, n)
		m = median(all, n)
		printf "| %s | %s | %.0f MB/s |\n", name[i + 1], ms(m),
		    (m > 0 ? bytes / m * 1000 : 0)
		if (key != "")
			printf "%s_t%d %.0f\n", key, i, m >> sum
	}
	print ""
	print "| path | against | throughput ÷ theirs (median of paired ratios) [95% CI] |"
	print "|---|---|---:|"
	for (k = 1; k <= np; k++) {
		split(pair[k], f, ":")
		n = 0
		for (r = 0; r < rounds; r++)
			if (((r, f[2]) in t) && ((r, f[3]) in t))
				v[++n] = t[r, f[3]] / t[r, f[2]]
		sortn(v, n)
		median_ci(n)
		printf "| %s | %s | %.3f [%.3f, %.3f] |\n", name[f[2] + 1],
		    f[4], median(v, n), v[ci_lo], v[ci_hi]
		printf "%s %.3f %.3f %.3f\n", f[1], median(v, n), v[ci_lo],
		    v[ci_hi] >> sum
	}
	printf "\n%d rounds.", rounds
	for (i = 0; i < nc; i++)
		if (bad[i])
			printf " %d runs of %s did not exit 0.", bad[i], name[i + 1]
	print ""
}
