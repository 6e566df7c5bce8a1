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
 * not, or a flag given by the caller (Lua takes 0 for true).
 *
 *   (seq S ...)  (if C S [S])  (set FIELD E)  (let NAME E)
 *   (return E [E])  (prune E)  (add E)  (append)
 *   E: a number, a field (s f o h b w), an input, a let's name,
 *      (+ - * / min max E E), (floor E), (pow2 E), (? C E E),
 *      (== ~= < <= > >= E E), (and C C), (or C C), (not C),
 *      (count), (nth E), (last), (since E)
 *
 * s is 0 closed, 1 open, 2 half-open; f, o the failures and openings in
 * a row; h when it half-opens; b, w the last --budget.  The retries are a
 * list, oldest first: prune drops those at or before E, count, nth (from
 * 0, oldest first), last (0 when none) and since (how many are after E)
 * read it, add puts a time at its end.  append keeps the run's letter
 * with the last RUNS_MAX.  Times and durations are in the caller's unit
 * (ns for the record, µs for the store).  Answers: admit 0 go, 1 probe,
 * 2 wait, 3 budget, with the wait; result 0 nothing, 1 opened, 2 closed
 * again; within the retries in the last window.
 */
static const char *const rule_text[] = {
	/* Open and due, or half-open: the one attempt that may start probes. */
	"(wants (return (or (== s 2) (and (== s 1) (>= now h)))))",
	/*
	 * May an attempt start now?  Open and cooling down: wait until it
	 * half-opens.  Due or half-open: the run that got the probe goes,
	 * and the circuit is half-open; the others wait for it.  A retry
	 * that may go takes its place in the budget, or waits while n were
	 * taken within the window, until enough of the oldest leave it,
	 * without the probe: held through that wait, it would hold back
	 * first attempts too, which the budget never holds back.  Times stay
	 * oldest first, even should a clock go back.
	 */
	"(admit (seq",
	"  (if (and (~= n 0) (or (~= b n) (~= w window)))",
	"    (seq (set b n) (set w window)))",
	"  (if (and (== s 1) (< now h)) (return 2 (- h now)))",
	"  (if (and (~= s 0) (not got)) (return 2 0))",
	"  (if (and retry (~= n 0)) (seq",
	"    (prune (- now window))",
	"    (if (>= (count) n)",
	"      (return 3 (- (+ (nth (- (count) n)) window) now)))",
	"    (add (max now (last)))))",
	"  (if (~= s 0) (seq (set s 2) (return 1 0)))",
	"  (return 0 0)))",
	/*
	 * How an attempt ended.  Any success closes the circuit and clears
	 * the counts in a row; a failure counts, and opens the circuit when
	 * it is the probe's, or the trip-th in a row while closed, for the
	 * k-th opening in a row c(k) = min(max(cap, cool), cool * 2^(k-1)),
	 * drawn with equal jitter between c/2 and c (u in [0, 1)).  Counts
	 * stop at 2^31 - 1.
	 */
	"(result (if success",
	"  (seq",
	"    (if (and (== s 0) (and (== f 0) (== o 0))) (return 0))",
	"    (let turn (? (~= s 0) 2 0))",
	"    (set s 0) (set f 0) (set o 0) (set h 0)",
	"    (return turn))",
	"  (seq",
	"    (set f (min (+ f 1) 2147483647))",
	"    (if (or probing (and (== s 0) (>= f trip)))",
	"      (seq",
	"        (set o (min (+ o 1) 2147483647))",
	"        (let c (min (max cap cool) (* cool (pow2 (- o 1)))))",
	"        (set h (+ now (floor (+ (/ c 2) (/ (* u c) 2)))))",
	"        (set s 1)",
	"        (return 1)))",
	"    (return 0))))",
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
	{ "b", FIELD }, { "w", FIELD },
	{ "now", INPUT }, { "n", INPUT }, { "window", INPUT },
	{ "trip", INPUT }, { "cool", INPUT }, { "cap", INPUT }, { "u", INPUT },
	{ "got", FLAG }, { "retry", FLAG }, { "success", FLAG },
	{ "probing", FLAG },
	{ "turn", LOCAL }, { "c", LOCAL },
};
#define NNAMES	(sizeof(names) / sizeof(names[0]))
#define NFIELDS	6

/* ---- Reading the text ---------------------------------------------------- */

/*
 * The readers below recurse, one level per parenthesis: the text is this
 * file's own, a few levels deep, so no input can make the stack grow.
 */

#define NODES_MAX	512

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
static size_t		 programs[8];	/* the node of each program's body */
static char		 program_names[8][8];
static size_t		 nprograms;
static char		 text[2048];	/* rule_text, joined */

static int parse(const char **, size_t *);

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

/* Whether nd is a condition, the same in Lua as here (see above). */
static int
is_condition(const struct node *nd)
{
	static const char *const ops[] = { "==", "~=", "<", "<=", ">", ">=",
	    "and", "or", "not" };
	size_t i;

	if (nd->type == NAME)
		return names[nd->name].kind == FLAG;
	if (nd->type != LIST)
		return 0;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(nd->word, ops[i]) == 0)
			return 1;
	return 0;
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
		if (len >= sizeof(text) || nprograms == 8 ||
		    parse(&p, &at) == -1 || nodes[at].type != LIST ||
		    nodes[at].n != 1 || !conditions_hold(&nodes[at]))
			return -1;
		(void)snprintf(program_names[nprograms], 8, "%s",
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
	if (strcmp(w, "count") == 0 || strcmp(w, "nth") == 0 ||
	    strcmp(w, "last") == 0 || strcmp(w, "since") == 0)
		return list_op(r, nd);
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
	} else if (strcmp(w, "append") == 0)
		append(r);
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
}

/*
 * A field the program left as it was keeps its exact value: a time in ns
 * is not one double (they are exact to 2^53), and a value made from its
 * nearest would be a change that none made.
 */
static int
store_fields(const struct run *r, struct breaker_state *s)
{
	int64_t *const times[] = { NULL, NULL, NULL, &s->half_open_at, NULL,
	    &s->window };
	long *const counts[] = { NULL, &s->failures, &s->openings, NULL,
	    &s->budget, NULL };
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
	exec(r, p);
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

/* (OP A B) as (A OP B), or f(A, B) for the ops that Lua calls. */
static void
lua_call(struct lua *l, const struct node *nd)	/* NOLINT(misc-no-recursion) */
{
	static const struct {
		const char *op, *lua;
	} calls[] = {
		{ "min", "math.min(" }, { "max", "math.max(" },
		{ "floor", "math.floor(" }, { "pow2", "math.pow(2, " },
		{ "count", "L.count(" }, { "nth", "L.nth(" }, { "last", "L.last(" },
		{ "since", "L.since(" },
	};
	size_t i, k;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(nd->word, calls[i].op) == 0) {
			put(l, calls[i].lua);
			for (k = 0; k < nd->n; k++) {
				put(l, k > 0 ? ", " : "");
				lua_expr(l, kid(nd, k));
			}
			put(l, ")");
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
 * inputs and L the store's list operations.  Returns the length, or 0
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
		lua_stmt(&l, &nodes[programs[i]]);
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
	r.v[slot("window")] = (double)a->window;
	r.v[slot("got")] = got_probe;
	r.v[slot("retry")] = a->retry;
	run_program(&r, "admit");
	*changed |= store_fields(&r, s);
	*wait = (int64_t)r.answer[1];
	return (enum admission)(int)r.answer[0];
}

/* How an attempt ended: see "result" above. */
enum turn
breaker_result(struct breaker_state *s, const struct breaker *b,
    int success, int probing, double u, int64_t now, int *changed)
{
	struct run r;

	load_fields(&r, s);
	r.s = s;
	r.v[slot("now")] = (double)now;
	r.v[slot("success")] = success;
	r.v[slot("probing")] = probing;
	r.v[slot("trip")] = (double)b->trip;
	r.v[slot("cool")] = (double)b->cool;
	r.v[slot("cap")] = (double)b->cap;
	r.v[slot("u")] = u;
	run_program(&r, "result");
	*changed |= store_fields(&r, s);
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

/* The retries of the budget within the window that ends now: "within". */
long
breaker_retries_within(const struct breaker_state *s, int64_t now)
{
	return (long)ask(s, "within", now);
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
