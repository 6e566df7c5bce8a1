# SPDX-License-Identifier: ISC
# svg.awk: draws bench/herd.svg from the histograms that herd.awk wrote,
# one row per jitter mode: second attempts per 10 ms since the instant all
# first attempts were made to fail, as drawn by each retry (bars) and as
# they started on this machine (line).  -v title heads the picture.

BEGIN {
	BUCKET = 10; W = 900; LEFT = 170; RIGHT = 20; ROWH = 90; TOP = 78
	GAP = 30; XMAX = 1100
}

$1 == "R" {
	r = $2
	if (r + 1 > rows)
		rows = r + 1
	mode[r] = $3; n[r] = $4; expect[r] = $5; lo[r] = $6; hi[r] = $7
	bs[r] = $8; bo[r] = $9; distinct[r] = $10
}

$1 == "S" || $1 == "O" {
	cnt[$1, $2, $3] = $4
	if (($3 + 1) * BUCKET > XMAX)
		XMAX = ($3 + 1) * BUCKET
}

function x(ms) {
	return LEFT + ms / XMAX * (W - LEFT - RIGHT)
}

function y(c) {
	return base - c / top * ROWH
}

END {
	XMAX = int((XMAX + 99) / 100) * 100
	step = XMAX > 1500 ? 250 : 100
	H = TOP + rows * (ROWH + GAP) + 16
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H
	printf "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", title
	printf "<rect x=\"10\" y=\"34\" width=\"12\" height=\"10\" fill=\"#2a62b8\"/><text x=\"28\" y=\"43\">scheduled: the delay each retry drew, per 10 ms (a herd of clients on machines of their own)</text>\n"
	printf "<path d=\"M10 60 h12\" stroke=\"#e07b00\" stroke-width=\"2\"/><text x=\"28\" y=\"64\">observed: start of the second attempt, per 10 ms (this machine starts processes only so fast)</text>\n"
	printf "<rect x=\"600\" y=\"34\" width=\"12\" height=\"10\" fill=\"#e8eef7\"/><text x=\"618\" y=\"43\">band of the delays</text>\n"
	printf "<path d=\"M600 60 h12\" stroke=\"#c33\" stroke-dasharray=\"4 3\"/><text x=\"618\" y=\"64\">uniform level</text>\n"
	for (r = 0; r < rows; r++) {
		y0 = TOP + r * (ROWH + GAP)
		base = y0 + ROWH
		# A scale per row, never below twice the uniform level.
		top = bs[r] > bo[r] ? bs[r] : bo[r]
		if (hi[r] > lo[r] && top < 2 * expect[r])
			top = 2 * expect[r]
		if (top < 1)
			top = 1
		printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#e8eef7\"/>\n", x(lo[r]), y0, (hi[r] > lo[r] ? x(hi[r]) - x(lo[r]) : 1.5), ROWH
		for (b = 0; b * BUCKET < XMAX; b++)
			if (("S", r, b) in cnt)
				printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#2a62b8\"/>\n", x(b * BUCKET), y(cnt["S", r, b]), x(BUCKET) - x(0) - 0.3, ROWH - (y(cnt["S", r, b]) - y0)
		path = sprintf("M%.1f %.1f", x(0), base)
		for (b = 0; b * BUCKET < XMAX; b++) {
			c = (("O", r, b) in cnt) ? cnt["O", r, b] : 0
			path = path sprintf(" V%.1f H%.1f", y(c), x((b + 1) * BUCKET))
		}
		printf "<path d=\"%s\" fill=\"none\" stroke=\"#e07b00\" stroke-width=\"1.2\"/>\n", path
		if (hi[r] > lo[r])
			printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c33\" stroke-dasharray=\"4 3\"/>\n", x(lo[r]), y(expect[r]), x(hi[r]), y(expect[r])
		printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", LEFT, base, W - RIGHT, base
		printf "<text x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"end\">%d</text>\n", LEFT - 4, y0 + 10, top
		printf "<text x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"end\">0</text>\n", LEFT - 4, base
		printf "<text x=\"10\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", y0 + 14, mode[r]
		printf "<text x=\"10\" y=\"%d\" fill=\"#2a62b8\">busiest: %d of %d</text>\n", y0 + 32, bs[r], n[r]
		printf "<text x=\"10\" y=\"%d\" fill=\"#e07b00\">busiest: %d</text>\n", y0 + 48, bo[r]
		if (hi[r] > lo[r])
			printf "<text x=\"10\" y=\"%d\" fill=\"#c33\">uniform: %.1f</text>\n", y0 + 64, expect[r]
		printf "<text x=\"10\" y=\"%d\" fill=\"#333\">%d distinct delay%s</text>\n", y0 + 80, distinct[r], (distinct[r] == 1 ? "" : "s")
		for (t = 0; t <= XMAX; t += step)
			printf "<text x=\"%.1f\" y=\"%d\" fill=\"#555\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n", x(t), base + 12, (t == 0 ? "0" : t " ms")
	}
	print "</svg>"
}
