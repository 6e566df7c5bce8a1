# SPDX-License-Identifier: ISC
# stats.awk: order statistics for the other bench/*.awk scripts (POSIX awk,
# loaded first with -f).  Arrays are 1-based; sortn sorts numerically.

# Heapsort: no recursion (mawk's stack is small) and no quadratic case
# on data with many equal values.
function sortn(a, n,   i, t) {
	for (i = int(n / 2); i >= 1; i--)
		siftdown(a, i, n)
	for (i = n; i > 1; i--) {
		t = a[1]; a[1] = a[i]; a[i] = t
		siftdown(a, 1, i - 1)
	}
}

function siftdown(a, i, n,   c, t) {
	while ((c = 2 * i) <= n) {
		if (c < n && a[c + 1] + 0 > a[c] + 0)
			c++
		if (a[i] + 0 >= a[c] + 0)
			return
		t = a[i]; a[i] = a[c]; a[c] = t
		i = c
	}
}

# The p-th percentile of sorted a[1..n], nearest rank.
function pct(a, n, p,   r) {
	r = int(p / 100 * n)
	if (r < p / 100 * n)
		r++
	if (r < 1)
		r = 1
	if (r > n)
		r = n
	return a[r]
}

function median(a, n) {
	if (n == 0)
		return 0
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}

# Ranks of a distribution-free 95% confidence interval for the median of
# n samples (binomial, normal approximation): ci_lo and ci_hi.
function median_ci(n,   h) {
	h = 0.98 * sqrt(n)
	ci_lo = int(n / 2 - h)
	ci_hi = int(n / 2 + 1 + h + 0.999999)
	if (ci_lo < 1)
		ci_lo = 1
	if (ci_hi > n)
		ci_hi = n
}

function ms(ns) {
	return sprintf("%.2f ms", ns / 1e6)
}

function us(ns) {
	return sprintf("%.0f µs", ns / 1e3)
}

function yesno(ok) {
	return ok ? "**met**" : "**missed**"
}
