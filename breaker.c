/* SPDX-License-Identifier: ISC */
/*
 * The rules of the circuit breaker and the retry budget, once, as data: a
 * few lines in a small language of their own (rule_text below), which
 * this file both runs, on the record of a name, and writes out as Lua, for
 * the Redis store to run on its server.  Pure: a state, the time and the
 * draws in, the new state and an answer out; no I/O, no clock.
 */
#include "compat.h"	/* first: the feature macros */

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared.h"

/*
 * The language: S-expressions of numbers and names, every value an IEEE
 * double as in Lua 5.1, so that the C below and the Lua written from it
 * compute the same numbers.  A condition must be a comparison, and, or,
 * not, a flag given by the caller (Lua takes 0 for true), or a program
 * whose body is a condition.
 *
 *   (seq S ...)  (if C S [S])  (set FIELD E)  (let NAME E)
 *   (return E [E])  (prune E)  (add E)  (append)
 *   (tally E)  (shed E)  (mark E)  (forget)
 *   E: a number, a field (s f o h b w q l tp tm), an input, a let's name,
 *      (+ - * / min max E E), (floor E), (pow2 E), (? C E E),
 *      (== ~= < <= > >= E E), (and C C), (or C C), (not C),
 *      (count), (nth E), (last), (since E), (firsts E), (seen),
 *      (failed E), or (NAME), the value of a program whose body is one E
 *
 * s is 0 closed, 1 open, 2 half-open; f, o the failures and openings in
 * a row; h when it half-opens; b, w the last --budget N/DUR (b 0 for a
 * --budget P%/DUR, whose P and --budget-min are q and l); tp, tm the P
 * and M of the last --trip P%/M.  Three lists, which each backend keeps
 * as it can:
 * - the retries, times oldest first: prune drops those at or before E,
 *   count, nth (from 0, oldest first), last (0 when none) and since (how
 *   many are after E) read it, add puts a time at its end;
 * - the first attempts, counts per part of the window, each part known
 *   by the time it begins (a whole number), oldest first: tally counts
 *   one in the part that begins at E, a new one after the last (the
 *   oldest of FIRSTS_MAX dropped), or the last when E is not after it (a
 *   window changed, a clock gone back), so they stay oldest first; shed
 *   drops the parts that begin at or before E, firsts adds up those that
 *   begin after E;
 * - the marks, 1 for a failed attempt and 0 for another, the last
 *   MARKS_MAX, oldest first: mark adds E, seen counts them, failed
 *   counts the 1s among the last E, forget drops them all.
 * append keeps the run's letter with the last RUNS_MAX.  Times and
 * durations are in the caller's unit (ns for the record, µs for the
 * store).  Answers: admit 0 go, 1 probe, 2 wait, 3 budget, with the
 * wait; result 0 nothing, 1 opened (with the failures that did it), 2
 * closed again; within the retries in the last window.
 */
static const char *const rule_text[] = {
	/* Open and due, or half-open: the one attempt that may start probes. */
	"(wants (return (or (== s 2) (and (== s 1) (>= now h)))))",
	/*
	 * --budget P%/DUR: the retries that the first attempts of the window
	 * that ends now allow, P% of them plus --budget-min, at most as many
	 * as a record counts.  A first attempt is counted in the part of
	 * the window it came in, a tenth; a part that began before the
	 * window is left out whole, so the share is of the first attempts
	 * of the last nine to ten tenths, never of more than the window's.
	 */
	"(arrived (firsts (- now w)))",
	"(allowed (min 1000 (+ l (floor (/ (* q (arrived)) 100)))))",
	/*
	 * Does a failure open the closed circuit?  --trip P%/M: at least P%
	 * of the last M attempts failed, once M were seen; --trip N: N in a
	 * row.
	 */
	"(failing (? (~= tm 0) (failed tm) 0))",
	"(tripped (or (and (~= tp 0) (and (>= (seen) tm)",
	"  (>= (* 100 (failing)) (* tp tm)))) (and (== tp 0) (>= f trip))))",
	/*
	 * May an attempt start now?  Open and cooling down: wait until it
	 * half-opens.  Due or half-open: the run that got the probe goes,
	 * and the circuit is half-open; the others wait for it.  A retry
	 * that may go takes its place in the budget, or waits while its
	 * allowance was taken within the window, until enough of the oldest
	 * leave it (a tenth of the window when first attempts allow none:
	 * more may come), without the probe: held through that wait, it
	 * would hold back first attempts too, which the budget never holds
	 * back.  A first attempt that goes is counted for --budget P%/DUR.
	 * Times stay oldest first, even should a clock go back.
	 */
	"(admit (seq",
	"  (if (and (~= n 0) (or (~= b n) (or (~= w window) (~= q 0))))",
	"    (seq (set b n) (set q 0) (set l 0) (set w window)))",
	"  (if (and (~= share 0) (or (~= q share) (or (~= l least)",
	"      (or (~= w window) (~= b 0)))))",
	"    (seq (set q share) (set l least) (set b 0) (set w window)))",
	"  (if (and (== s 1) (< now h)) (return 2 (- h now)))",
	"  (if (and (~= s 0) (not got)) (return 2 0))",
	"  (if (and retry (~= n 0)) (seq",
	"    (prune (- now window))",
	"    (if (>= (count) n)",
	"      (return 3 (- (+ (nth (- (count) n)) window) now)))",
	"    (add (max now (last)))))",
	"  (if (~= share 0) (shed (- now window)))",
	"  (if (and retry (~= share 0)) (seq",
	"    (prune (- now window))",
	"    (let a (allowed))",
	"    (if (>= (count) a)",
	"      (return 3 (? (> a 0) (- (+ (nth (- (count) a)) window) now)",
	"        (/ window 10))))",
	"    (add (max now (last)))))",
	"  (if (and (not retry) (~= share 0))",
	"    (tally (floor (* (floor (/ now (/ window 10))) (/ window 10)))))",
	"  (if (~= s 0) (seq (set s 2) (return 1 0)))",
	"  (return 0 0)))",
	/*
	 * How an attempt ended.  Any success closes the circuit and clears
	 * the counts in a row (and the marks, which start afresh once it
	 * closes again); a failure counts, and opens the circuit when it is
	 * the probe's, or while closed when the trip says so (tripped), for
	 * the k-th opening in a row c(k) = min(max(cap, cool), cool *
	 * 2^(k-1)), drawn with equal jitter between c/2 and c (u in [0, 1)).
	 * Under --trip P%/M each attempt's end is marked; a run of --trip N
	 * marks none, and drops what others marked.  Counts stop at 2^31 - 1.
	 */
	"(result (seq",
	"  (if (and (== ratio 0) (~= tp 0)) (forget))",
	"  (if (or (~= tp ratio) (~= tm span)) (seq (set tp ratio) (set tm span)))",
	"  (if (~= ratio 0) (mark (? success 0 1)))",
	"  (if success",
	"    (seq",
	"      (if (and (== s 0) (and (== f 0) (== o 0))) (return 0))",
	"      (let turn (? (~= s 0) 2 0))",
	"      (if (~= s 0) (forget))",
	"      (set s 0) (set f 0) (set o 0) (set h 0)",
	"      (return turn))",
	"    (seq",
	"      (set f (min (+ f 1) 2147483647))",
	"      (if (or probing (and (== s 0) (tripped)))",
	"        (seq",
	"          (set o (min (+ o 1) 2147483647))",
	"          (let c (min (max cap cool) (* cool (pow2 (- o 1)))))",
	"          (set h (+ now (floor (+ (/ c 2) (/ (* u c) 2)))))",
	"          (set s 1)",
	"          (return 1 (? (~= tp 0) (failing) f))))",
	"      (return 0)))))",
	/* How a run ended, kept with the last RUNS_MAX runs'. */
	"(ended (append))",
	/* The retries within the last window, for --circuit-status. */
	"(within (return (? (> w 0) (since (- now w)) 0)))",
};

/* ---- The names --------------------------------------------------------- */

enum name_kind { FIELD, INPUT, FLAG, LOCAL };

/* Fields first, in struct breaker_state's order of rules_state(). */
static const struct {
	const char	*name;
	enum name_kind	 kind;
} names[] = {
	{ "s", FIELD }, { "f", FIELD }, { "o", FIELD }, { "h", FIELD },
	{ "b", FIELD }, { "w", FIELD }, { "q", FIELD }, { "l", FIELD },
	{ "tp", FIELD }, { "tm", FIELD },
	{ "now", INPUT }, { "n", INPUT }, { "window", INPUT },
	{ "share", INPUT }, { "least", INPUT },
	{ "trip", INPUT }, { "ratio", INPUT }, { "span", INPUT },
	{ "cool", INPUT }, { "cap", INPUT }, { "u", INPUT },
	{ "got", FLAG }, { "retry", FLAG }, { "success", FLAG },
	{ "probing", FLAG },
	{ "turn", LOCAL }, { "c", LOCAL }, { "a", LOCAL },
};
#define NNAMES	(sizeof(names) / sizeof(names[0]))
#define NFIELDS	10

/* The words of the language that are statements: the rest are values. */
static const char *const statements[] = {
	"seq", "if", "set", "let", "return", "prune", "add", "append", "tally",
	"shed", "mark", "forget",
};
/* The values that read a list, each answered by the backend's own. */
static const char *const list_reads[] = {
	"count", "nth", "last", "since", "firsts", "seen", "failed",
};

/* ---- Reading the text ---------------------------------------------------- */

/*
 * The readers below recurse, one level per parenthesis: the text is this
 * file's own, a few levels deep, so no input can make the stack grow.
 */

#define NODES_MAX	1024

enum node_type { NUMBER, NAME, LIST };

struct node {
	enum node_type	 type;
	double		 number;
	size_t		 name;		/* NAME: its index in names[] */
	char		 word[8];	/* LIST: its head */
	size_t		 first, n;	/* LIST: its other elements */
};

static struct node	 nodes[NODES_MAX];
static size_t		 nnodes;
static size_t		 kids[NODES_MAX];	/* LIST elements, by index */
static size_t		 nkids;
#define PROGRAMS_MAX	16
static size_t		 programs[PROGRAMS_MAX];	/* each one's body */
static char		 program_names[PROGRAMS_MAX][12];
static size_t		 nprograms;
static char		 text[4096];	/* rule_text, joined */

static int parse(const char **, size_t *);
static const struct node *program(const char *);

static void
skip_space(const char **p)
{
	while (**p == ' ' || **p == '\n')
		(*p)++;
}

/* A word at *p into w (at most size - 1 bytes); -1 when there is none. */
static int
read_word(const char **p, char *w, size_t size)
{
	size_t n = 0;

	while (**p != '\0' && strchr(" \n()", **p) == NULL) {
		if (n + 1 >= size)
			return -1;
		w[n++] = *(*p)++;
	}
	w[n] = '\0';
	return n > 0 ? 0 : -1;
}

static int
atom(const char *w, struct node *nd)
{
	double v = 0;
	size_t i;

	if (w[0] >= '0' && w[0] <= '9') {
		for (i = 0; w[i] != '\0'; i++) {
			if (w[i] < '0' || w[i] > '9')
				return -1;
			v = v * 10 + (w[i] - '0');
		}
		nd->type = NUMBER;
		nd->number = v;
		return 0;
	}
	for (i = 0; i < NNAMES; i++)
		if (strcmp(w, names[i].name) == 0) {
			nd->type = NAME;
			nd->name = i;
			return 0;
		}
	return -1;
}

/* "(HEAD X ...)" at *p into a node; its elements go to kids[]. */
static int
parse_list(const char **p, struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	size_t at[16], n = 0, k;

	(*p)++;
	skip_space(p);
	nd->type = LIST;
	if (read_word(p, nd->word, sizeof(nd->word)) == -1)
		return -1;
	for (skip_space(p); **p != ')'; skip_space(p))
		if (**p == '\0' || n == 16 || parse(p, &at[n++]) == -1)
			return -1;
	(*p)++;
	if (nkids + n > NODES_MAX)
		return -1;
	nd->first = nkids;
	nd->n = n;
	for (k = 0; k < n; k++)
		kids[nkids++] = at[k];
	return 0;
}

/* One node at *p, its index into *at. */
static int
parse(const char **p, size_t *at)	/* NOLINT(misc-no-recursion) */
{
	char w[16];

	skip_space(p);
	if (nnodes == NODES_MAX)
		return -1;
	*at = nnodes++;
	if (**p == '(')
		return parse_list(p, &nodes[*at]);
	if (read_word(p, w, sizeof(w)) == -1)
		return -1;
	return atom(w, &nodes[*at]);
}

static const struct node *
kid(const struct node *nd, size_t i)
{
	return &nodes[kids[nd->first + i]];
}

/* Whether word is one of the n words of list. */
static int
one_of(const char *word, const char *const list[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(word, list[i]) == 0)
			return 1;
	return 0;
}

#define ONE_OF(word, list)	one_of((word), (list), sizeof(list) / \
	sizeof((list)[0]))

/*
 * Whether nd is a condition, the same in Lua as here (see above): a
 * program's value is one when its body is (a program is read before
 * those that use it).
 */
static int
is_condition(const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	static const char *const ops[] = { "==", "~=", "<", "<=", ">", ">=",
	    "and", "or", "not" };
	const struct node *p;

	if (nd->type == NAME)
		return names[nd->name].kind == FLAG;
	if (nd->type != LIST)
		return 0;
	if ((p = program(nd->word)) != NULL)
		return is_condition(p);
	return ONE_OF(nd->word, ops);
}

/* Whether the body of a program is a statement, or a value it gives. */
static int
is_statement(const struct node *nd)
{
	return nd->type == LIST && ONE_OF(nd->word, statements);
}

/* Every condition of the tree at nd is one (and, or, not, if, ?). */
static int
conditions_hold(const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	size_t i, conds = 0;

	if (nd->type != LIST)
		return 1;
	if (strcmp(nd->word, "and") == 0 || strcmp(nd->word, "or") == 0 ||
	    strcmp(nd->word, "not") == 0)
		conds = nd->n;
	else if (strcmp(nd->word, "if") == 0 || strcmp(nd->word, "?") == 0)
		conds = 1;
	for (i = 0; i < nd->n; i++)
		if ((i < conds && !is_condition(kid(nd, i))) ||
		    !conditions_hold(kid(nd, i)))
			return 0;
	return 1;
}

/* rule_text into programs[], once; -1 when it is not the language. */
static int
read_rules(void)
{
	static int done = 0;
	const char *p = text;
	size_t i, len = 0, at;

	if (done)
		return done;
	for (i = 0; i < sizeof(rule_text) / sizeof(rule_text[0]) &&
	    len < sizeof(text); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n",
		    rule_text[i]);
	done = -1;
	for (skip_space(&p); *p != '\0'; skip_space(&p)) {
		if (len >= sizeof(text) || nprograms == PROGRAMS_MAX ||
		    parse(&p, &at) == -1 || nodes[at].type != LIST ||
		    nodes[at].n != 1 || !conditions_hold(&nodes[at]))
			return -1;
		(void)snprintf(program_names[nprograms],
		    sizeof(program_names[nprograms]), "%s",
		    nodes[at].word);
		programs[nprograms++] = kids[nodes[at].first];
	}
	done = 1;
	return done;
}

static const struct node *
program(const char *name)
{
	size_t i;

	for (i = 0; i < nprograms; i++)
		if (strcmp(program_names[i], name) == 0)
			return &nodes[programs[i]];
	return NULL;
}

/* ---- Running it here ----------------------------------------------------- */

/* A program's run: the values of every name, the state's lists. */
struct run {
	double		 v[NNAMES];
	const struct breaker_state *seen;	/* what the program reads */
	struct breaker_state *s;	/* what it changes; NULL: a question */
	char		 kind;		/* ended: the run's letter */
	int		 listed;	/* the retries or runs changed */
	int		 returned;
	double		 answer[2];
};

static double eval(struct run *, const struct node *);

/* floor(3) without libm: the values here are within 2^62. */
static double
floor_of(double x)
{
	double t;

	if (x >= 9.2e18 || x <= -9.2e18)
		return x;
	t = (double)(long long)x;
	return t > x ? t - 1 : t;
}

/* 2^x, doubled until it reaches x or infinity, as Lua's 2 ^ x does. */
static double
pow2(double x)
{
	double p = 1;
	long k;

	for (k = 0; (double)k < x && p <= DBL_MAX; k++)
		p *= 2;
	return p;
}

/* The 1s among the last k marks (all of them when there are fewer). */
static double
marks_failed(const struct breaker_state *s, double k)
{
	size_t i = 0;
	double n = 0;

	if (k < (double)s->nmarks)
		i = s->nmarks - (k > 0 ? (size_t)k : 0);
	for (; i < s->nmarks; i++)
		n += s->marks[i] == '1';
	return n;
}

static double
list_op(struct run *r, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	const struct breaker_state *s = r->seen;
	double x = nd->n > 0 ? eval(r, kid(nd, 0)) : 0, n = 0;
	size_t i;

	if (strcmp(nd->word, "count") == 0)
		return (double)s->nretries;
	if (strcmp(nd->word, "nth") == 0)
		return x >= 0 && x < (double)s->nretries ?
		    (double)s->retries[(size_t)x] : 0;
	if (strcmp(nd->word, "since") == 0) {
		for (i = 0; i < s->nretries; i++)
			n += (double)s->retries[i] > x;
		return n;
	}
	if (strcmp(nd->word, "firsts") == 0) {
		for (i = 0; i < s->nfirsts; i++)
			n += (double)s->first_at[i] > x ? (double)s->first_n[i] : 0;
		return n;
	}
	if (strcmp(nd->word, "seen") == 0)
		return (double)s->nmarks;
	if (strcmp(nd->word, "failed") == 0)
		return marks_failed(s, x);
	/* last */
	return s->nretries > 0 ? (double)s->retries[s->nretries - 1] : 0;
}

static double
arith(const char *op, double a, double b)
{
	switch (op[0]) {
	case '+':
		return a + b;
	case '-':
		return a - b;
	case '*':
		return a * b;
	case '/':
		return a / b;
	}
	if (strcmp(op, "min") == 0)
		return a < b ? a : b;
	return a > b ? a : b;	/* max */
}

static double
compare(const char *op, double a, double b)
{
	if (strcmp(op, "==") == 0)
		return a == b;
	if (strcmp(op, "~=") == 0)
		return a != b;
	if (strcmp(op, "<") == 0)
		return a < b;
	if (strcmp(op, "<=") == 0)
		return a <= b;
	if (strcmp(op, ">") == 0)
		return a > b;
	return a >= b;
}

static double
eval(struct run *r, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	const char *w = nd->word;
	const struct node *p;

	if (nd->type == NUMBER)
		return nd->number;
	if (nd->type == NAME)
		return r->v[nd->name];
	if (strcmp(w, "and") == 0)
		return eval(r, kid(nd, 0)) != 0 && eval(r, kid(nd, 1)) != 0;
	if (strcmp(w, "or") == 0)
		return eval(r, kid(nd, 0)) != 0 || eval(r, kid(nd, 1)) != 0;
	if (strcmp(w, "not") == 0)
		return eval(r, kid(nd, 0)) == 0;
	if (strcmp(w, "?") == 0)
		return eval(r, kid(nd, eval(r, kid(nd, 0)) != 0 ? 1 : 2));
	if (strcmp(w, "floor") == 0)
		return floor_of(eval(r, kid(nd, 0)));
	if (strcmp(w, "pow2") == 0)
		return pow2(eval(r, kid(nd, 0)));
	if (ONE_OF(w, list_reads))
		return list_op(r, nd);
	if ((p = program(w)) != NULL)
		return eval(r, p);
	if (strchr("=~<>", w[0]) != NULL)
		return compare(w, eval(r, kid(nd, 0)), eval(r, kid(nd, 1)));
	return arith(w, eval(r, kid(nd, 0)), eval(r, kid(nd, 1)));
}

/*
 * The state a program changes.  A question (ask()) whose program would
 * change it: the rules are wrong, and no answer of theirs is made up.
 */
static struct breaker_state *
changing(struct run *r)
{
	if (r->s == NULL)
		abort();
	return r->s;
}

/* The retries at or before x leave the list. */
static void
prune(struct run *r, double x)
{
	struct breaker_state *s = changing(r);
	size_t old = 0, i;

	while (old < s->nretries && (double)s->retries[old] <= x)
		old++;
	for (i = old; i < s->nretries; i++)
		s->retries[i - old] = s->retries[i];
	s->nretries -= old;
	r->listed |= old > 0;
}

/*
 * t at the end of the list.  A time in ns is not one double: the last
 * time, exact, stays the floor, so that the list stays oldest first.
 */
static void
add(struct run *r, double t)
{
	struct breaker_state *s = changing(r);
	int64_t v = (int64_t)t;

	if (s->nretries == BUDGET_MAX)	/* n is at most BUDGET_MAX */
		return;
	if (s->nretries > 0 && v < s->retries[s->nretries - 1])
		v = s->retries[s->nretries - 1];
	s->retries[s->nretries++] = v;
	r->listed = 1;
}

static void
append(struct run *r)
{
	struct breaker_state *s = changing(r);

	if (s->nruns == RUNS_MAX) {
		memmove(s->runs, s->runs + 1, RUNS_MAX - 1);
		s->nruns--;
	}
	s->runs[s->nruns++] = r->kind;
	s->runs[s->nruns] = '\0';
	r->listed = 1;
}

/*
 * A first attempt in the part of the window that begins at t: counted in
 * the last part when t is not after it (the same part, or a window that
 * changed or a clock that went back: the parts stay oldest first), else
 * in a new one after it, the oldest dropped when FIRSTS_MAX are kept.
 */
static void
tally(struct run *r, double t)
{
	struct breaker_state *s = changing(r);
	int64_t at = (int64_t)t;

	r->listed = 1;
	if (s->nfirsts > 0 && s->first_at[s->nfirsts - 1] >= at) {
		if (s->first_n[s->nfirsts - 1] < COUNT_MAX)
			s->first_n[s->nfirsts - 1]++;
		return;
	}
	if (s->nfirsts == FIRSTS_MAX) {
		memmove(s->first_at, s->first_at + 1, (FIRSTS_MAX - 1) *
		    sizeof(s->first_at[0]));
		memmove(s->first_n, s->first_n + 1, (FIRSTS_MAX - 1) *
		    sizeof(s->first_n[0]));
		s->nfirsts--;
	}
	s->first_at[s->nfirsts] = at;
	s->first_n[s->nfirsts++] = 1;
}

/* The parts of the window that begin at or before x leave the list. */
static void
shed(struct run *r, double x)
{
	struct breaker_state *s = changing(r);
	size_t old = 0, i;

	while (old < s->nfirsts && (double)s->first_at[old] <= x)
		old++;
	for (i = old; i < s->nfirsts; i++) {
		s->first_at[i - old] = s->first_at[i];
		s->first_n[i - old] = s->first_n[i];
	}
	s->nfirsts -= old;
	r->listed |= old > 0;
}

/* An attempt's mark, 1 failed or 0, with the last MARKS_MAX. */
static void
mark(struct run *r, double x)
{
	struct breaker_state *s = changing(r);

	if (s->nmarks == MARKS_MAX) {
		memmove(s->marks, s->marks + 1, MARKS_MAX - 1);
		s->nmarks--;
	}
	s->marks[s->nmarks++] = x != 0 ? '1' : '0';
	s->marks[s->nmarks] = '\0';
	r->listed = 1;
}

static void
forget(struct run *r)
{
	struct breaker_state *s = changing(r);

	r->listed |= s->nmarks > 0;
	s->nmarks = 0;
	s->marks[0] = '\0';
}

static void
exec(struct run *r, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	const char *w = nd->word;
	size_t i;

	if (r->returned)
		return;
	if (strcmp(w, "seq") == 0) {
		for (i = 0; i < nd->n && !r->returned; i++)
			exec(r, kid(nd, i));
	} else if (strcmp(w, "if") == 0) {
		if (eval(r, kid(nd, 0)) != 0)
			exec(r, kid(nd, 1));
		else if (nd->n > 2)
			exec(r, kid(nd, 2));
	} else if (strcmp(w, "set") == 0 || strcmp(w, "let") == 0) {
		r->v[kid(nd, 0)->name] = eval(r, kid(nd, 1));
	} else if (strcmp(w, "return") == 0) {
		for (i = 0; i < nd->n && i < 2; i++)
			r->answer[i] = eval(r, kid(nd, i));
		r->returned = 1;
	} else if (strcmp(w, "prune") == 0) {
		prune(r, eval(r, kid(nd, 0)));
	} else if (strcmp(w, "add") == 0) {
		add(r, eval(r, kid(nd, 0)));
	} else if (strcmp(w, "append") == 0) {
		append(r);
	} else if (strcmp(w, "tally") == 0) {
		tally(r, eval(r, kid(nd, 0)));
	} else if (strcmp(w, "shed") == 0) {
		shed(r, eval(r, kid(nd, 0)));
	} else if (strcmp(w, "mark") == 0) {
		mark(r, eval(r, kid(nd, 0)));
	} else if (strcmp(w, "forget") == 0)
		forget(r);
}

/* The state's fields into the run's names, and back. */
static void
load_fields(struct run *r, const struct breaker_state *s)
{
	memset(r, 0, sizeof(*r));
	r->seen = s;
	r->v[0] = (double)s->state;
	r->v[1] = (double)s->failures;
	r->v[2] = (double)s->openings;
	r->v[3] = (double)s->half_open_at;
	r->v[4] = (double)s->budget;
	r->v[5] = (double)s->window;
	r->v[6] = (double)s->share;
	r->v[7] = (double)s->least;
	r->v[8] = (double)s->ratio;
	r->v[9] = (double)s->span;
}

/*
 * A field the program left as it was keeps its exact value: a time in ns
 * is not one double (they are exact to 2^53), and a value made from its
 * nearest would be a change that none made.
 */
static int
store_fields(const struct run *r, struct breaker_state *s)
{
	int64_t *const times[NFIELDS] = { NULL, NULL, NULL, &s->half_open_at,
	    NULL, &s->window, NULL, NULL, NULL, NULL };
	long *const counts[NFIELDS] = { NULL, &s->failures, &s->openings, NULL,
	    &s->budget, NULL, &s->share, &s->least, &s->ratio, &s->span };
	struct run was;
	int changed = r->listed;
	size_t k;

	load_fields(&was, s);
	for (k = 0; k < NFIELDS; k++) {
		if (r->v[k] == was.v[k])
			continue;
		changed = 1;
		if (k == 0)
			s->state = (enum circuit_state)(int)r->v[k];
		else if (times[k] != NULL)
			*times[k] = (int64_t)r->v[k];
		else
			*counts[k] = (long)r->v[k];
	}
	return changed;
}

static size_t
slot(const char *name)
{
	size_t i;

	for (i = 0; i < NNAMES && strcmp(names[i].name, name) != 0; i++)
		continue;
	return i;
}

/*
 * Runs the program name on r.  The rules are this file's own text, which
 * every test reads: should they not read, no answer could be trusted, and
 * none is made up.
 */
static void
run_program(struct run *r, const char *name)
{
	const struct node *p;

	if (read_rules() == -1 || (p = program(name)) == NULL)
		abort();
	if (is_statement(p))
		exec(r, p);
	else
		r->answer[0] = eval(r, p);
}

/* ---- Writing it as Lua ------------------------------------------------- */

/* The Lua being written, and whether it still fits. */
struct lua {
	char		*buf;
	size_t		 size, len;
};

static void
put(struct lua *l, const char *str)
{
	int n = snprintf(l->buf + l->len, l->size - l->len, "%s", str);

	l->len += (size_t)n < l->size - l->len ? (size_t)n : l->size - l->len;
}

static void lua_expr(struct lua *, const struct node *);

static void
lua_name(struct lua *l, size_t name)
{
	static const char *const prefix[] = { "st.", "i.", "i.", "l_" };

	put(l, prefix[names[name].kind]);
	put(l, names[name].name);
}

/* The arguments of nd, and the ")" that ends a call. */
static void
lua_args(struct lua *l, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	size_t k;

	for (k = 0; k < nd->n; k++) {
		put(l, k > 0 ? ", " : "");
		lua_expr(l, kid(nd, k));
	}
	put(l, ")");
}

/*
 * (OP A B) as (A OP B), or f(A, B) for the ops that Lua calls: its
 * math, the store's lists (L), the programs that give a value (rule).
 */
static void
lua_call(struct lua *l, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	static const struct {
		const char *op, *lua;
	} calls[] = {
		{ "min", "math.min(" }, { "max", "math.max(" },
		{ "floor", "math.floor(" }, { "pow2", "math.pow(2, " },
	};
	size_t i;

	if (program(nd->word) != NULL) {
		put(l, "rule.");
		put(l, nd->word);
		put(l, "(st, i, L)");
		return;
	}
	if (ONE_OF(nd->word, list_reads)) {
		put(l, "L.");
		put(l, nd->word);
		put(l, "(");
		lua_args(l, nd);
		return;
	}
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(nd->word, calls[i].op) == 0) {
			put(l, calls[i].lua);
			lua_args(l, nd);
			return;
		}
	put(l, "(");
	if (strcmp(nd->word, "not") == 0) {
		put(l, "not ");
		lua_expr(l, kid(nd, 0));
	} else if (strcmp(nd->word, "?") == 0) {
		/* A number is never false in Lua: "and ... or" is exact. */
		lua_expr(l, kid(nd, 0));
		put(l, " and ");
		lua_expr(l, kid(nd, 1));
		put(l, " or ");
		lua_expr(l, kid(nd, 2));
	} else {
		lua_expr(l, kid(nd, 0));
		put(l, " ");
		put(l, nd->word);
		put(l, " ");
		lua_expr(l, kid(nd, 1));
	}
	put(l, ")");
}

static void
lua_expr(struct lua *l, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	char num[32];

	if (nd->type == NUMBER) {
		(void)snprintf(num, sizeof(num), "%.17g", nd->number);
		put(l, num);
	} else if (nd->type == NAME)
		lua_name(l, nd->name);
	else
		lua_call(l, nd);
}

static void
lua_stmt(struct lua *l, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	const char *w = nd->word;
	size_t i;

	if (strcmp(w, "seq") == 0) {
		for (i = 0; i < nd->n; i++)
			lua_stmt(l, kid(nd, i));
		return;
	}
	if (strcmp(w, "if") == 0) {
		put(l, "if ");
		lua_expr(l, kid(nd, 0));
		put(l, " then\n");
		lua_stmt(l, kid(nd, 1));
		if (nd->n > 2) {
			put(l, "else\n");
			lua_stmt(l, kid(nd, 2));
		}
		put(l, "end\n");
		return;
	}
	if (strcmp(w, "set") == 0 || strcmp(w, "let") == 0) {
		put(l, w[0] == 'l' ? "local " : "");
		lua_name(l, kid(nd, 0)->name);
		put(l, " = ");
		lua_expr(l, kid(nd, 1));
	} else if (strcmp(w, "return") == 0) {
		/* do ... end: a return may stand only last in a block. */
		put(l, "do return ");
		for (i = 0; i < nd->n; i++) {
			put(l, i > 0 ? ", " : "");
			lua_expr(l, kid(nd, i));
		}
		put(l, " end");
	} else {
		put(l, "L.");
		put(l, w);
		put(l, "(");
		if (nd->n > 0)
			lua_expr(l, kid(nd, 0));
		put(l, ")");
	}
	put(l, "\n");
}

/*
 * The rules as Lua, into buf: a table "rule" of functions, one per
 * program, each called as rule.NAME(st, i, L) with st the fields, i the
 * inputs and L the store's list operations; a program that gives a value
 * returns it.  Returns the length, or 0
 * when the rules cannot be read or do not fit.
 */
size_t
breaker_lua(char *buf, size_t size)
{
	struct lua l = { buf, size, 0 };
	size_t i;

	if (size == 0 || read_rules() == -1)
		return 0;
	buf[0] = '\0';
	put(&l, "local rule = {}\n");
	for (i = 0; i < nprograms; i++) {
		put(&l, "function rule.");
		put(&l, program_names[i]);
		put(&l, "(st, i, L)\n");
		if (is_statement(&nodes[programs[i]]))
			lua_stmt(&l, &nodes[programs[i]]);
		else {
			put(&l, "return ");
			lua_expr(&l, &nodes[programs[i]]);
			put(&l, "\n");
		}
		put(&l, "end\n");
	}
	return l.len + 1 < size ? l.len : 0;
}

/* ---- What the backends ask --------------------------------------------- */

/* A question to the rules, which changes nothing: the program's answer. */
static double
ask(const struct breaker_state *s, const char *name, int64_t now)
{
	struct run r;

	load_fields(&r, s);
	r.v[slot("now")] = (double)now;
	run_program(&r, name);
	return r.answer[0];
}

int
breaker_wants_probe(const struct breaker_state *s, int64_t now)
{
	return ask(s, "wants", now) != 0;
}

/*
 * May an attempt start now?  See "admit" above.  got_probe: the backend
 * took the probe for this run, asked only when breaker_wants_probe().
 */
enum admission
breaker_admit(struct breaker_state *s, const struct admit_ask *a,
    int got_probe, int64_t now, int64_t *wait, int *changed)
{
	struct run r;

	load_fields(&r, s);
	r.s = s;
	r.v[slot("now")] = (double)now;
	r.v[slot("n")] = (double)a->budget;
	r.v[slot("share")] = (double)a->share;
	r.v[slot("least")] = (double)a->least;
	r.v[slot("window")] = (double)a->window;
	r.v[slot("got")] = got_probe;
	r.v[slot("retry")] = a->retry;
	run_program(&r, "admit");
	*changed |= store_fields(&r, s);
	*wait = (int64_t)r.answer[1];
	return (enum admission)(int)r.answer[0];
}

/*
 * How an attempt ended: see "result" above.  An end that opened the
 * circuit gives in *failures the failures that did it: in a row, or of
 * the last M of --trip P%/M.
 */
enum turn
breaker_result(struct breaker_state *s, const struct breaker *b,
    int success, int probing, double u, int64_t now, long *failures,
    int *changed)
{
	struct run r;

	load_fields(&r, s);
	r.s = s;
	r.v[slot("now")] = (double)now;
	r.v[slot("success")] = success;
	r.v[slot("probing")] = probing;
	r.v[slot("trip")] = (double)b->trip;
	r.v[slot("ratio")] = (double)b->ratio;
	r.v[slot("span")] = (double)b->span;
	r.v[slot("cool")] = (double)b->cool;
	r.v[slot("cap")] = (double)b->cap;
	r.v[slot("u")] = u;
	run_program(&r, "result");
	*changed |= store_fields(&r, s);
	*failures = (long)r.answer[1];
	return (enum turn)(int)r.answer[0];
}

/* How a run ended (kind), kept with the last RUNS_MAX. */
void
breaker_run_ended(struct breaker_state *s, enum run_kind kind)
{
	struct run r;

	load_fields(&r, s);
	r.s = s;
	r.kind = (char)kind;
	run_program(&r, "ended");
}

/*
 * What --circuit-status shows of the budget and the trip, as the rules
 * count it now: the retries in the window and, for --budget P%/DUR, the
 * first attempts and the retries they allow; for --trip P%/M, the
 * attempts marked and the failures among the last M.
 */
void
breaker_view(const struct breaker_state *s, int64_t now,
    struct circuit_view *v)
{
	v->budget = s->budget;
	v->window = s->window;
	v->retries = (long)ask(s, "within", now);
	v->share = s->share;
	v->least = s->least;
	v->arrived = (long)ask(s, "arrived", now);
	v->allowed = (long)ask(s, "allowed", now);
	v->ratio = s->ratio;
	v->span = s->span;
	v->seen = (long)s->nmarks;
	v->failing = (long)ask(s, "failing", now);
}

/*
 * The runs that the state keeps, counted into the view, and the flake
 * rate: of the runs that passed, the share that needed a retry (-1 when
 * none passed).
 */
void
breaker_count_runs(struct circuit_view *v)
{
	const char *r;

	v->at_once = v->retried = v->failed = 0;
	for (r = v->runs; *r != '\0'; r++) {
		v->at_once += *r == RUN_AT_ONCE;
		v->retried += *r == RUN_RETRIED;
		v->failed += *r == RUN_FAILED;
	}
	v->flake_rate = v->at_once + v->retried == 0 ? -1 :
	    (double)v->retried / (double)(v->at_once + v->retried);
}
