# SPDX-License-Identifier: ISC
# accuracy.awk: figure 2 from stamp(1) files.  Needs stats.awk.  Files
# named *acc.R hold retry's attempts of round R, *floor.R the same child
# run by bench/spawn -d: wait4, sleep the same delay to an absolute
# deadline, fork, exec.  -v delay (ns) is the scheduled delay; sum
# receives "key value" lines.
#
# gap      = start of attempt k+1 - end of attempt k, both seen by the child
# raw      = gap - delay
# floor    = the same for the floor run: what exiting, reaping, waking up
#            and starting the child cost on this machine
# error    = raw - the median floor of the same round: what retry adds
# drift    = least-squares slope of error over k, times the number of gaps:
#            how much later the last delay ended than the first one did

FNR == 1 {
	kind = FILENAME ~ /floor\.[0-9]+$/ ? "floor" : "acc"
	round = FILENAME
	sub(/.*\./, "", round)
	rounds[round] = 1
	prev = ""
}

$1 == "E" {
	prev = $4
}

$1 == "S" && prev != "" {
	n = ++cnt[kind, round]
	g[kind, round, n] = $4 - prev
}

END {
	for (r in rounds) {
		m = cnt["floor", r]
		for (k = 1; k <= m; k++)
			f[k] = g["floor", r, k] - delay
		sortn(f, m)
		fm[r] = median(f, m)
		for (k = 1; k <= m; k++)
			allf[++nf] = f[k]
		m = cnt["acc", r]
		sx = sy = sxx = sxy = 0
		for (k = 1; k <= m; k++) {
			raw[++nraw] = g["acc", r, k] - delay
			e = g["acc", r, k] - delay - fm[r]
			err[++nerr] = e
			sx += k; sy += e; sxx += k * k; sxy += k * e
		}
		d = m > 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) * (m - 1) : 0
		drift[++nd] = d
		drifts = drifts sprintf("%s%s", drifts == "" ? "" : ", ",
		    us(d))
	}
	sortn(allf, nf); sortn(raw, nraw); sortn(err, nerr); sortn(drift, nd)
	print "| quantity | median | p99 | max |"
	print "|---|---:|---:|---:|"
	printf "| raw: gap − %s | %s | %s | %s |\n", ms(delay),
	    ms(median(raw, nraw)), ms(pct(raw, nraw, 99)), ms(raw[nraw])
	printf "| floor: the same child, delay and sleep in a minimal C loop (`spawn -d`) | %s | %s | %s |\n",
	    ms(median(allf, nf)), ms(pct(allf, nf, 99)), ms(allf[nf])
	printf "| raw − floor, quantile by quantile | %s | %s | %s |\n",
	    ms(median(raw, nraw) - median(allf, nf)),
	    ms(pct(raw, nraw, 99) - pct(allf, nf, 99)), ms(raw[nraw] - allf[nf])
	printf "| **gap error: raw − floor of the round** | %s | %s | %s |\n",
	    ms(median(err, nerr)), ms(pct(err, nerr, 99)), ms(err[nerr])
	printf "\n%d gaps in %d rounds.  Drift of the gap error from the first to the last gap, per round: %s (median %s).\n",
	    nerr, nd, drifts, us(median(drift, nd))
	printf "acc_median %d\nacc_p99 %d\nacc_drift %d\nacc_raw_median %d\nacc_raw_p99 %d\nacc_floor %d\nacc_gaps %d\n",
	    median(err, nerr), pct(err, nerr, 99), median(drift, nd),
	    median(raw, nraw), pct(raw, nraw, 99), median(allf, nf), nerr >> sum
	printf "acc_qq99 %d\nacc_floor99 %d\n", pct(raw, nraw, 99) - pct(allf, nf, 99),
	    pct(allf, nf, 99) >> sum
}
