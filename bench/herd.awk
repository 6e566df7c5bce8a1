# SPDX-License-Identifier: ISC
# herd.awk: figure 5 for one jitter mode, from the stamp(1) file and the
# wrappers' reports (--report - , on stderr: files *.log.PID).  Needs stats.awk.  -v mode, row
# (its place in the picture), release (ns: when the first attempts were
# made to fail), lo and hi (ms: the band the delays are drawn from), seed;
# prints a table row, appends "key value" lines to sum and the histograms
# to data.  Times are in ms since release:
#   scheduled = the delay that each retry drew (the "delay" of attempt 1 in
#               its report, to the microsecond; messages show milliseconds): when the second attempts would start if
#               every client had a CPU of its own, as in a real herd;
#   observed  = start of the second attempt, seen by the child: what a
#               server would see from this one machine, where 200 wake-ups
#               and process starts queue for 2 cores.

BEGIN {
	BUCKET = 10	# ms
	SIMS = 2000
}

FILENAME ~ /\.log\.[0-9]+$/ {
	if ($0 ~ /"attempt": 1,/ && match($0, /"delay": [0-9.]+/)) {
		d = substr($0, RSTART + 9, RLENGTH - 9)
		pid = FILENAME
		sub(/.*\./, "", pid)
		delay[pid] = d * 1000
		draws++
		if (!(d in seen)) {
			seen[d] = 1
			distinct++
		}
	}
	next
}

$1 == "E" && $3 == 1 {
	fail[++nf] = ($4 - release) / 1e6
}

$1 == "S" && $3 == 2 {
	start2[$2] = ($4 - release) / 1e6
}

# Adds t to histogram h; returns the new count of its bucket.
function add(h, t,   b) {
	b = int(t / BUCKET)
	if (b > maxb)
		maxb = b
	return ++h[b]
}

function busiest(h,   b, m) {
	m = 0
	for (b = 0; b <= maxb; b++)
		if (h[b] > m) {
			m = h[b]
			busiest_at = b * BUCKET
		}
	return m
}

END {
	for (p in start2) {
		obs[++n] = start2[p]
		add(ho, start2[p])
	}
	for (p in delay) {
		ns++
		add(hs, delay[p])
	}
	sortn(fail, nf); sortn(obs, n)
	bs = busiest(hs); bs_at = busiest_at
	bo = busiest(ho); bo_at = busiest_at
	width = hi - lo
	expect = width > 0 ? ns * BUCKET / width : ns
	# The busiest bucket of as many ideal uniform draws over the band.
	srand(seed)
	for (s = 1; s <= SIMS; s++) {
		if (width == 0) {
			sim[s] = ns
			continue
		}
		split("", c)
		m = 0
		phase = rand() * BUCKET
		for (k = 1; k <= ns; k++) {
			b = int((phase + rand() * width) / BUCKET)
			if (++c[b] > m)
				m = c[b]
		}
		sim[s] = m
	}
	sortn(sim, SIMS)
	ideal50 = median(sim, SIMS)
	ideal95 = pct(sim, SIMS, 95)
	printf "| %s | [%g, %g] ms | %d of %d | %d at %d ms | %s | %d / %d | %d at %d ms | %.0f / %.0f ms | %.0f–%.0f ms |\n",
	    mode, lo, hi, distinct, draws, bs, bs_at,
	    (width > 0 ? sprintf("%.1f (%.1f×)", expect, bs / expect) : "–"),
	    ideal50, ideal95, bo, bo_at, median(fail, nf), fail[nf],
	    pct(obs, n, 1), pct(obs, n, 99)
	printf "herd_%s_n %d\nherd_%s_busiest %d\nherd_%s_observed %d\n",
	    mode, ns, mode, bs, mode, bo >> sum
	printf "herd_%s_expect %.2f\nherd_%s_ideal95 %d\nherd_%s_distinct %d\n",
	    mode, expect, mode, ideal95, mode, distinct >> sum
	printf "herd_%s_draws %d\nherd_%s_span %d\n", mode, draws, mode,
	    pct(obs, n, 99) - pct(obs, n, 1) >> sum
	printf "R %d %s %d %.3f %g %g %d %d %d\n", row, mode, ns, expect, lo,
	    hi, bs, bo, distinct >> data
	for (b = 0; b <= maxb; b++) {
		if (hs[b])
			printf "S %d %d %d\n", row, b, hs[b] >> data
		if (ho[b])
			printf "O %d %d %d\n", row, b, ho[b] >> data
	}
}
