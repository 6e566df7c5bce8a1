# SPDX-License-Identifier: ISC
# overhead.awk: figure 1 from the output of bench/spawn.  Needs stats.awk.
# -v names="a|b|..." labels the commands by index; ret and bare are the
# indices of retry and of the bare command, alt (optional) one more whose
# ratios to each are written to sum too; sum receives "key value" lines.
# Ratios are taken within a round (paired runs), then their median.

BEGIN {
	nc = split(names, name, "|")
}

NF == 6 {
	t[$1, $2] = $3
	rss[$2, ++nr[$2]] = $4
	flt[$2, nr[$2]] = $5
	if ($6 != 0)
		bad[$2]++
	if ($1 + 1 > rounds)
		rounds = $1 + 1
}

END {
	print "| command | median wall time | ÷ bare `true` (median of paired ratios) | retry ÷ this [95% CI] | rounds where retry was faster | peak RSS (ru_maxrss, median) | page faults (median) |"
	print "|---|---:|---:|---:|---:|---:|---:|"
	for (i = 0; i < nc; i++) {
		n = 0; nb = 0; nr2 = 0; faster = 0
		for (r = 0; r < rounds; r++) {
			if (!((r, i) in t))
				continue
			all[++n] = t[r, i]
			if ((r, bare) in t)
				vb[++nb] = t[r, i] / t[r, bare]
			if ((r, ret) in t) {
				vr[++nr2] = t[r, ret] / t[r, i]
				if (t[r, ret] < t[r, i])
					faster++
			}
		}
		sortn(all, n); sortn(vb, nb); sortn(vr, nr2)
		m = nr[i]
		for (k = 1; k <= m; k++) {
			a1[k] = rss[i, k]
			a2[k] = flt[i, k]
		}
		sortn(a1, m); sortn(a2, m)
		median_ci(nr2)
		if (i == ret)
			rel = "1"
		else
			rel = sprintf("%.3f [%.3f, %.3f]", median(vr, nr2),
			    vr[ci_lo], vr[ci_hi])
		printf "| %s | %s | %.2f× | %s | %s | %d kB | %d |\n",
		    name[i + 1], ms(median(all, n)), median(vb, nb), rel,
		    i == ret ? "–" : sprintf("%.0f%%", 100 * faster / nr2),
		    median(a1, m), median(a2, m)
		printf "bare %d %.3f\n", i, median(vb, nb) >> sum
		printf "ratio %d %.3f %.3f %.3f\n", i, median(vr, nr2),
		    vr[ci_lo], vr[ci_hi] >> sum
		if (alt != "") {
			na = 0
			for (r = 0; r < rounds; r++)
				if (((r, i) in t) && ((r, alt) in t))
					va[++na] = t[r, alt] / t[r, i]
			sortn(va, na)
			printf "alt %d %.3f\n", i, median(va, na) >> sum
		}
		printf "rss %d %d\n", i, median(a1, m) >> sum
		printf "faults %d %d\n", i, median(a2, m) >> sum
	}
	printf "\n%d rounds.", rounds
	for (i = 0; i < nc; i++)
		if (bad[i])
			printf " %d runs of %s did not exit 0.", bad[i], name[i + 1]
	print ""
}
