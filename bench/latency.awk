# SPDX-License-Identifier: ISC
# latency.awk: figure 3 (and the RSS of figure 4) from bench/latency's
# output.  Needs stats.awk.  -v names="a|b" labels the commands, -v tag
# names the case in the "key value" lines written to sum.

BEGIN {
	nc = split(names, name, "|")
}

NF == 7 {
	i = $2
	if ($3 == -1) {
		lost[i]++
		why[i] = why[i] " " $4
		next
	}
	n = ++cnt[i]
	t[i, n] = $3
	st[i, $4]++
	hwm[i, n] = $5
	left[i] += $7
}

END {
	print "| wrapper | median | p90 | max | exit ($?) | attempt outlived it | peak RSS (VmHWM) |"
	print "|---|---:|---:|---:|---|---:|---:|"
	for (i = 0; i < nc; i++) {
		n = cnt[i]
		for (k = 1; k <= n; k++) {
			a[k] = t[i, k]
			h[k] = hwm[i, k]
		}
		sortn(a, n); sortn(h, n)
		codes = ""
		for (key in st) {
			split(key, parts, SUBSEP)
			if (parts[1] == i)
				codes = codes sprintf("%s%s×%d",
				    codes == "" ? "" : ", ", parts[2], st[key])
		}
		printf "| %s | %s | %s | %s | %s | %d of %d | %d kB |\n",
		    name[i + 1], ms(median(a, n)), ms(pct(a, n, 90)), ms(a[n]),
		    codes, left[i], n, median(h, n)
		printf "%s_median %d %d\n%s_hwm %d %d\n", tag, i, median(a, n),
		    tag, i, median(h, n) >> sum
		if (lost[i])
			printf "%s_lost %d %d\n", tag, i, lost[i] >> sum
	}
	for (i = 0; i < nc; i++)
		if (lost[i])
			printf "\n%s was never ready in %d trials; exit statuses:%s (137: killed after 20 s).\n",
			    name[i + 1], lost[i], why[i]
}
