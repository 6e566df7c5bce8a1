/* SPDX-License-Identifier: ISC */
/*
 * The shared circuit on a Redis (or Valkey) server: each step one run of
 * the Lua script below, atomic on the server and timed by its clock, so
 * that the hosts' clocks do not matter; waits come back as durations.  A
 * store that fails is said once in c->err and used no more in the run:
 * what that means for the run, retry.c decides.
 */
#include "compat.h"	/* first: the feature macros */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "redis.h"
#include "route.h"
#include "shared.h"
#include "store.h"

#define NKEYS		3	/* state, probe, retries */
#define ARGS_MAX	10	/* a step's arguments, its name included */
#define US_MAX		(DUR_MAX / 1000)
/* A number of shared.h as the script's text writes it. */
#define TEXT_OF(x)	#x
#define NUMBER_TEXT(x)	TEXT_OF(x)
#define FIRSTS_MAX_TEXT	NUMBER_TEXT(FIRSTS_MAX)
#define MARKS_MAX_TEXT	NUMBER_TEXT(MARKS_MAX)

/*
 * The keys of NAME: retry:{NAME}:state (a hash: s the state, 0 closed, 1
 * open, 2 half-open; f failures and o openings in a row; h when it
 * half-opens; b and w the last budget; p, n and t the probe's process,
 * host and token; r the last runs' letters, oldest first, since 0.3;
 * since 0.4, q and l the last --budget P%/DUR and its --budget-min, c its
 * first attempts as "TIME:COUNT" per part of the window, oldest first
 * and comma-separated, tp and tm the last --trip P%/M, a its marks),
 * retry:{NAME}:probe (the probe's lease: its token, with a PX expiry) and
 * retry:{NAME}:retries (a sorted set of retry times).  One hash tag: a
 * Redis Cluster keeps them in one slot.  Times are the server's, in
 * microseconds; ARGV[1] names the step.
 *
 * The script knows no rule of the breaker or the budget: the rules are
 * breaker.c's, written out as Lua (breaker_lua()) between the two halves
 * below.  These only load the hash into the rules' fields, hand the
 * rules the retries as a list (the sorted set), store what changed, and
 * keep the probe's lease.  Lines of their own, as one string literal may
 * not be longer than 4095 bytes in C99.
 */
static const char *const script_head[] = {
	"if redis.replicate_commands then redis.replicate_commands() end",
	"local t = redis.call('TIME')",
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])",
	"local S, P, R, MAX = KEYS[1], KEYS[2], KEYS[3], 2147483647",
	/* One line: shared.h's numbers written into it, not two lines. */
	"local FIRSTS, MARKS = " FIRSTS_MAX_TEXT ", " MARKS_MAX_TEXT,	/* NOLINT(bugprone-suspicious-missing-comma) */
	"local function int(x, hi)",
	"  x = math.floor(tonumber(x) or 0)",
	"  if x < 0 then return 0 elseif x > hi then return hi end",
	"  return x",
	"end",
	"local function fmt(x) return string.format('%.0f', x) end",
	"local function get()",
	"  local v = redis.call('HMGET', S, 's', 'f', 'o', 'h', 'b', 'w', 't',",
	"    'q', 'l', 'tp', 'tm')",
	"  return {s = int(v[1], 2), f = int(v[2], MAX), o = int(v[3], MAX),",
	"    h = tonumber(v[4]) or 0, b = int(v[5], 1000),",
	"    w = tonumber(v[6]) or 0, q = int(v[8], 1000), l = int(v[9], 1000),",
	"    tp = int(v[10], 100), tm = int(v[11], MARKS)}, v[7]",
	"end",
	"local function copy(st)",
	"  local c = {}",
	"  for k, v in pairs(st) do c[k] = v end",
	"  return c",
	"end",
	"local function put(st, was)",
	"  local a = {}",
	"  for _, k in ipairs({'s', 'f', 'o', 'h', 'b', 'w', 'q', 'l', 'tp', 'tm'}) do",
	"    if st[k] ~= was[k] then a[#a + 1] = k; a[#a + 1] = fmt(st[k]) end",
	"  end",
	"  if #a > 0 then redis.call('HSET', S, unpack(a)) end",
	"  return #a > 0",
	"end",
	"local L, member, window = {}, '', 0",
	"function L.prune(x) redis.call('ZREMRANGEBYSCORE', R, '-inf', fmt(x)) end",
	"function L.count() return redis.call('ZCARD', R) end",
	"local function at(k)",
	"  return tonumber(redis.call('ZRANGE', R, k, k, 'WITHSCORES')[2]) or 0",
	"end",
	"function L.nth(k) return at(k) end",
	"function L.last() return at(-1) end",
	"function L.since(x)",
	"  return redis.call('ZCOUNT', R, '(' .. fmt(x), '+inf')",
	"end",
	"function L.add(x)",
	"  redis.call('ZADD', R, fmt(x), member)",
	"  redis.call('PEXPIRE', R, fmt(math.ceil(window / 1000) + 1000))",
	"end",
	"function L.append()",
	"  local runs = (redis.call('HGET', S, 'r') or '') .. ARGV[2]",
	"  redis.call('HSET', S, 'r', string.sub(runs, -tonumber(ARGV[3])))",
	"end",
	"local function parts()",
	"  local p = {}",
	"  for t, n in string.gmatch(redis.call('HGET', S, 'c') or '',",
	"      '(%d+):(%d+)') do",
	"    p[#p + 1] = {tonumber(t), tonumber(n)}",
	"  end",
	"  return p",
	"end",
	"local function keep(p)",
	"  local a = {}",
	"  for k, v in ipairs(p) do a[k] = fmt(v[1]) .. ':' .. fmt(v[2]) end",
	"  if #a == 0 then redis.call('HDEL', S, 'c')",
	"  else redis.call('HSET', S, 'c', table.concat(a, ',')) end",
	"end",
	"function L.tally(t)",
	"  local p = parts()",
	"  if #p > 0 and p[#p][1] >= t then",
	"    p[#p][2] = math.min(p[#p][2] + 1, MAX)",
	"  else",
	"    p[#p + 1] = {t, 1}",
	"    if #p > FIRSTS then table.remove(p, 1) end",
	"  end",
	"  keep(p)",
	"end",
	"function L.shed(x)",
	"  local p, kept = parts(), {}",
	"  for _, v in ipairs(p) do if v[1] > x then kept[#kept + 1] = v end end",
	"  if #kept < #p then keep(kept) end",
	"end",
	"function L.firsts(x)",
	"  local n = 0",
	"  for _, v in ipairs(parts()) do if v[1] > x then n = n + v[2] end end",
	"  return n",
	"end",
	"local function marks() return redis.call('HGET', S, 'a') or '' end",
	"function L.mark(x)",
	"  redis.call('HSET', S, 'a', string.sub(marks() .. fmt(x), -MARKS))",
	"end",
	"function L.seen() return string.len(marks()) end",
	"function L.failed(k)",
	"  if k < 1 then return 0 end",
	"  local _, n = string.gsub(string.sub(marks(), -k), '1', '')",
	"  return n",
	"end",
	"function L.forget() redis.call('HDEL', S, 'a') end",
};

static const char *const script_tail[] = {
	"local step = {}",
	"function step.admit()",
	"  local st, token = get()",
	"  local was, me = copy(st), ARGV[4]",
	"  local i = {now = now, n = tonumber(ARGV[2]), window = tonumber(ARGV[3]),",
	"    retry = ARGV[8] ~= '', share = tonumber(ARGV[9]),",
	"    least = tonumber(ARGV[10])}",
	"  member, window = ARGV[8], i.window",
	"  local wants = rule.wants(st, i, L)",
	"  local holder = wants and redis.call('GET', P)",
	"  i.got = wants and (not holder or holder == me)",
	"  local v, wait = rule.admit(st, i, L)",
	"  put(st, was)",
	"  if v == 1 then",
	"    redis.call('SET', P, me, 'PX', ARGV[5])",
	"    if was.s ~= 2 or token ~= me then",
	"      redis.call('HSET', S, 'p', ARGV[6], 'n', ARGV[7], 't', me)",
	"    end",
	"  elseif v == 3 and holder == me then",
	"    redis.call('DEL', P)",
	"  end",
	"  return {v, wait}",
	"end",
	"function step.result()",
	"  local st, token = get()",
	"  local was, me = copy(st), ARGV[7]",
	"  local holder = redis.call('GET', P)",
	"  local i = {now = now, success = ARGV[2] == '1',",
	"    probing = holder == me or (not holder and st.s == 2 and token == me),",
	"    trip = tonumber(ARGV[3]), cool = tonumber(ARGV[4]),",
	"    cap = tonumber(ARGV[5]), u = tonumber(ARGV[6]),",
	"    ratio = tonumber(ARGV[8]), span = tonumber(ARGV[9])}",
	"  local turn, failures = rule.result(st, i, L)",
	"  if put(st, was) and (i.success or turn == 1) then",
	"    redis.call('HDEL', S, 'p', 'n', 't')",
	"  end",
	"  if holder == me then redis.call('DEL', P) end",
	"  return {turn, failures or 0}",
	"end",
	"function step.ended()",
	"  rule.ended(get(), {}, L)",
	"  return 1",
	"end",
	"function step.renew()",
	"  local holder, me = redis.call('GET', P), ARGV[2]",
	"  if holder == me then",
	"    redis.call('PEXPIRE', P, ARGV[3])",
	"    return 1",
	"  end",
	"  local st, token = get()",
	"  if holder or st.s ~= 2 or token ~= me then return 0 end",
	"  redis.call('SET', P, me, 'PX', ARGV[3])",
	"  return 1",
	"end",
	"function step.reset()",
	"  redis.call('DEL', S, P, R)",
	"  return 1",
	"end",
	"function step.view()",
	"  local r, pid, host, count = get(), 0, '', 0",
	"  if r.s == 2 and redis.call('GET', P) then",
	"    local who = redis.call('HMGET', S, 'p', 'n')",
	"    pid, host = tonumber(who[1]) or 0, who[2] or ''",
	"  end",
	"  local i = {now = now}",
	"  count = rule.within(r, i, L)",
	"  local runs = redis.call('HGET', S, 'r') or ''",
	"  return {r.s, r.f, r.o, r.h - now, pid, host, r.b, r.w, count, runs,",
	"    redis.call('EXISTS', S), r.q, r.l, rule.allowed(r, i, L),",
	"    rule.arrived(r, i, L), r.tp, r.tm, L.seen(), rule.failing(r, i, L)}",
	"end",
	"return step[ARGV[1]]()",
};

/* The connection and what every step sends. */
struct store {
	struct route	 route;		/* the connection, to the right server */
	const struct store_url *url;
	const char	*password;	/* the URL's, else REDISCLI_AUTH's */
	const char	*auth;		/* REDISCLI_AUTH's, or NULL */
	int64_t		 timeout;	/* --store-timeout */
	char		 keys[NKEYS][256];
	char		 token[17];	/* this run's: its lease, its retries */
	unsigned long	 retries;	/* taken by this run */
	char		 pid[24];
	char		 host[65];
	char		 script[16384];
	char		 sha[41];
	int		 failed;	/* no more calls in this run */
	int		 answered;	/* a step has succeeded */
};

static struct store	 the_store;

/* ---- The script's name: its SHA-1 (FIPS 180-4) ----------------------- */

static uint32_t
rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], v[5], f, k, t;
	size_t i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	memcpy(v, h, sizeof(v));
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (v[1] & v[2]) | (~v[1] & v[3]), k = 0x5a827999;
		else if (i < 40)
			f = v[1] ^ v[2] ^ v[3], k = 0x6ed9eba1;
		else if (i < 60)
			f = (v[1] & v[2]) | (v[1] & v[3]) | (v[2] & v[3]),
			    k = 0x8f1bbcdc;
		else
			f = v[1] ^ v[2] ^ v[3], k = 0xca62c1d6;
		t = rol(v[0], 5) + f + v[4] + k + w[i];
		v[4] = v[3];
		v[3] = v[2];
		v[2] = rol(v[1], 30);
		v[1] = v[0];
		v[0] = t;
	}
	for (i = 0; i < 5; i++)
		h[i] += v[i];
}

/* EVALSHA names a script by the SHA-1 of its text, in hexadecimal. */
static void
sha1_hex(const char *s, size_t len, char out[41])
{
	uint32_t h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
	    0xc3d2e1f0 };
	uint64_t bits = (uint64_t)len * 8;
	unsigned char block[64];
	size_t i, n;

	for (i = 0; i + 64 <= len; i += 64)
		sha1_block(h, (const unsigned char *)s + i);
	n = len - i;
	memcpy(block, s + i, n);
	block[n++] = 0x80;
	if (n > 56) {
		memset(block + n, 0, 64 - n);
		sha1_block(h, block);
		n = 0;
	}
	memset(block + n, 0, 56 - n);
	for (i = 0; i < 8; i++)
		block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_block(h, block);
	for (i = 0; i < 5; i++)
		(void)snprintf(out + 8 * i, 9, "%08" PRIx32, h[i]);
}

/* ---- Steps ------------------------------------------------------------ */

/*
 * The store failed: said once in c->err, and not used again in the run.
 * denied: it refused retry's credentials or rights, which c->denied keeps
 * when no step had been answered yet.  No store, no probe.
 */
static enum circuit_step
store_failed(struct shared *c, int denied, const char *fmt, ...)
{
	struct store *s = &the_store;
	va_list ap;
	size_t n;

	s->failed = 1;
	route_close(&s->route);
	c->denied = denied && !s->answered;
	c->probing = 0;
	n = (size_t)snprintf(c->err, sizeof(c->err), "store %s: ",
	    s->url->shown);
	if (n < sizeof(c->err)) {
		va_start(ap, fmt);
		/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
		(void)vsnprintf(c->err + n, sizeof(c->err) - n, fmt, ap);
		va_end(ap);
	}
	return STEP_STORE;
}

/*
 * An error reply that says retry lacks a password (Redis 7 refuses a
 * long command before AUTH as a "Protocol error: unauthenticated"), or
 * the rights to run the script: the ACL checks each command it runs.
 */
static int
no_password(const struct reply *rep)
{
	return reply_is(rep, "NOAUTH") || reply_says(rep, "unauthenticated");
}

static int
no_rights(const struct reply *rep)
{
	return reply_is(rep, "NOPERM") || reply_is(rep, "WRONGPASS") ||
	    reply_says(rep, "can't run this command") ||
	    reply_says(rep, "no permissions");
}

/* What came of a call, as a step says it. */
static enum circuit_step
judge(struct shared *c, enum redis_io io, const struct reply *rep,
    int by_deadline)
{
	struct store *s = &the_store;
	char d[32], text[201];

	switch (io) {
	case REDIS_DONE:
		break;
	case REDIS_TIMEOUT:
		if (by_deadline)
			return STEP_TIMEOUT;
		return store_failed(c, 0, "no answer within %s",
		    fmt_duration(d, sizeof(d), s->timeout));
	case REDIS_SIGNAL:
		return STEP_SIGNAL;
	case REDIS_FAILED:
		return store_failed(c, 0, "%s", s->route.err);
	case REDIS_DENIED:
		return store_failed(c, 1, "%s", s->route.err);
	}
	if (rep->type == REPLY_ERROR && no_password(rep))
		return store_failed(c, 1, "the server wants a password: give "
		    "it in the URL or REDISCLI_AUTH");
	if (rep->type == REPLY_ERROR) {
		/* A server, or a proxy, may echo what it was sent. */
		url_hide(text, sizeof(text), rep->str, rep->len,
		    s->url->has_password ? s->url->password : NULL, s->auth);
		return store_failed(c, no_rights(rep), "%s", text);
	}
	s->answered = 1;
	return STEP_DONE;
}

/*
 * Runs a step of the script: EVALSHA, or EVAL when the server does not
 * have it yet (NOSCRIPT), on the server that route.c finds for its keys
 * (declared, so that a cluster can tell their slot); all before until,
 * or the store's timeout from now when that comes first.  A signal that
 * ends it is taken into c->signal when take_signal, else left for the
 * caller's caller (an attempt's watch).
 */
static enum circuit_step
step(struct shared *c, int64_t until, int take_signal, int nargs,
    const char *const args[], const struct reply **rep)
{
	struct store *s = &the_store;
	const char *argv[3 + NKEYS + ARGS_MAX];
	size_t len[3 + NKEYS + ARGS_MAX];
	int64_t start = monotonic_now(), end = until;
	enum circuit_step st;
	enum redis_io io;
	int i, argc = 0, by_deadline = 1;

	*rep = NULL;
	if (s->failed)
		return STEP_STORE;	/* c->err still says why */
	c->err[0] = '\0';
	if (s->timeout < until - start) {
		end = start + s->timeout;
		by_deadline = 0;
	}
	argv[argc++] = "EVALSHA";
	argv[argc++] = s->sha;
	argv[argc++] = "3";
	for (i = 0; i < NKEYS; i++)
		argv[argc++] = s->keys[i];
	for (i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	for (i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	io = route_call(&s->route, end, argc, argv, len, rep);
	if (io == REDIS_DONE && reply_is(*rep, "NOSCRIPT")) {
		argv[0] = "EVAL";
		argv[1] = s->script;
		len[0] = 4;
		len[1] = strlen(s->script);
		io = route_call(&s->route, end, argc, argv, len, rep);
	}
	c->unwanted_password = s->route.unwanted_password;
	/* A signal (REDIS_SIGNAL) has closed the connection already. */
	st = judge(c, io, *rep, by_deadline);
	if (st == STEP_SIGNAL && take_signal)
		c->signal = sp_caught();
	return st;
}

/* A reply that is not what the script returns: the store is not ours. */
static enum circuit_step
unexpected(struct shared *c)
{
	return store_failed(c, 0, "an unexpected reply");
}

/* Microseconds of the server's into nanoseconds, within a duration. */
static int64_t
ns(long long us)
{
	if (us > US_MAX)
		us = US_MAX;
	if (us < -US_MAX)
		us = -US_MAX;
	return (int64_t)us * 1000;
}

/* An array of n elements, each checked by its reader (int_at). */
static int
array_of(const struct reply *rep, size_t n)
{
	return rep->type == REPLY_ARRAY && rep->n == n;
}

static int
int_at(const struct reply *rep, size_t i, long long *v)
{
	if (rep->elem[i].type != REPLY_INTEGER)
		return -1;
	*v = rep->elem[i].integer;
	return 0;
}

/*
 * See circuit_admit().  A retry is a member of the budget's set of its
 * own ("" for none).  The reply is the rules' answer and the wait, in
 * µs.  The rules never ask a first attempt to wait for the budget, which
 * holds back retries only: a reply that does is not the script's, and a
 * run that followed it would end with no attempt run, as if it had
 * succeeded.
 */
enum circuit_step
store_admit(struct shared *c, int64_t until, const struct admit_ask *a,
    enum admission *v, int64_t *wait)
{
	struct store *s = &the_store;
	char n[24], w[24], lease[24], member[48] = "", share[24], least[24];
	const char *args[] = { "admit", n, w, s->token, lease, s->pid, s->host,
	    member, share, least };
	const struct reply *rep;
	enum circuit_step st;
	long long verdict, us;

	(void)snprintf(n, sizeof(n), "%ld", a->budget);
	(void)snprintf(share, sizeof(share), "%ld", a->share);
	(void)snprintf(least, sizeof(least), "%ld", a->least);
	(void)snprintf(w, sizeof(w), "%lld", (long long)(a->window / 1000));
	(void)snprintf(lease, sizeof(lease), "%d", STORE_LEASE_MS);
	if (a->retry)
		(void)snprintf(member, sizeof(member), "%.16s:%lu", s->token,
		    ++s->retries);
	if ((st = step(c, until, 1, 10, args, &rep)) != STEP_DONE)
		return st;
	if (!array_of(rep, 2) || int_at(rep, 0, &verdict) == -1 ||
	    int_at(rep, 1, &us) == -1 || verdict < 0 || verdict > 3 ||
	    us < 0 || (verdict == 3 && (!a->retry || us == 0)))
		return unexpected(c);
	/* The rules answer in enum admission's order (breaker.c). */
	*v = (enum admission)verdict;
	*wait = *v == ADMIT_WAIT || *v == ADMIT_BUDGET ? ns(us) : 0;
	c->probing = *v == ADMIT_PROBE;
	return STEP_DONE;
}

/*
 * See circuit_result().  The end of an attempt is a fact to record, also
 * when the deadline or a signal stopped it: the caller gives an until
 * past them (gate_record()), so that an attempt stopped at the deadline
 * still counts, and a probe interrupted gives its lease back.  The
 * script answers what the end did: {0 nothing, 1 opened or 2 closed again,
 * the failures in a row}.
 */
enum circuit_step
store_result(struct shared *c, int64_t until, int success,
    const struct breaker *b, double u)
{
	struct store *s = &the_store;
	char trip[24], cool[24], cap[24], draw[32], ratio[24], span[24];
	const char *args[] = { "result", success ? "1" : "0", trip, cool, cap,
	    draw, s->token, ratio, span };
	const struct reply *rep;
	enum circuit_step st;
	long long turn, f;

	(void)snprintf(trip, sizeof(trip), "%ld", b->trip);
	(void)snprintf(ratio, sizeof(ratio), "%ld", b->ratio);
	(void)snprintf(span, sizeof(span), "%ld", b->span);
	(void)snprintf(cool, sizeof(cool), "%lld", (long long)(b->cool / 1000));
	(void)snprintf(cap, sizeof(cap), "%lld", (long long)(b->cap / 1000));
	(void)snprintf(draw, sizeof(draw), "%.17g", u);
	c->turned = TURN_NONE;
	st = step(c, until, 1, 9, args, &rep);
	c->probing = 0;
	if (st != STEP_DONE)
		return st;
	if (!array_of(rep, 2) || int_at(rep, 0, &turn) == -1 ||
	    int_at(rep, 1, &f) == -1 || turn < 0 || turn > 2 || f < 0 ||
	    f > INT32_MAX)
		return unexpected(c);
	c->turned = turn == 1 ? TURN_OPENED : turn == 2 ? TURN_CLOSED :
	    TURN_NONE;
	c->failures = (long)f;
	return STEP_DONE;
}

/* See circuit_run_ended(): the hash's r keeps the last RUNS_MAX. */
enum circuit_step
store_run_ended(struct shared *c, int64_t until, enum run_kind kind)
{
	char letter[2] = { (char)kind, '\0' }, max[24];
	const char *args[] = { "ended", letter, max };
	const struct reply *rep;
	enum circuit_step st;

	(void)snprintf(max, sizeof(max), "%d", RUNS_MAX);
	if ((st = step(c, until, 1, 3, args, &rep)) != STEP_DONE)
		return st;
	return rep->type == REPLY_INTEGER ? STEP_DONE : unexpected(c);
}

/*
 * While the probe's attempt runs: its lease renewed, by until (the
 * attempt's limit) at the latest.  Another run that took it over (this
 * one's renewals failed for longer than the lease) ends this run's probe:
 * c->probing is 0 then.  A signal is left for the attempt's watch.
 */
enum circuit_step
store_renew(struct shared *c, int64_t until)
{
	struct store *s = &the_store;
	char lease[24];
	const char *args[] = { "renew", s->token, lease };
	const struct reply *rep;
	enum circuit_step st;

	if (!c->probing)
		return STEP_DONE;
	(void)snprintf(lease, sizeof(lease), "%d", STORE_LEASE_MS);
	if ((st = step(c, until, 0, 3, args, &rep)) != STEP_DONE)
		return st;
	if (rep->type != REPLY_INTEGER)
		return unexpected(c);
	c->probing = rep->integer == 1;
	return STEP_DONE;
}

/* See circuit_reset(): every key of the name goes. */
enum circuit_step
store_reset(struct shared *c)
{
	const char *args[] = { "reset" };
	const struct reply *rep;

	return step(c, NEVER, 1, 1, args, &rep);
}

/* The hash's r, letters p, r and f only, into view->runs. */
static int
store_runs(struct circuit_view *view, const struct reply *runs)
{
	size_t i;

	if (runs->len > RUNS_MAX)
		return -1;
	for (i = 0; i < runs->len; i++)
		if (runs->str[i] != 'p' && runs->str[i] != 'r' &&
		    runs->str[i] != 'f')
			return -1;
	memcpy(view->runs, runs->str, runs->len);
	view->runs[runs->len] = '\0';
	return 0;
}

/* v when it is within [0, max], else 0: a count from the store. */
static long
count_of(long long v, long long max)
{
	return v < 0 || v > max ? 0 : (long)v;
}

#define VIEW_N	19	/* the elements of the view's reply */

/* See circuit_view(). */
enum circuit_step
store_view(struct shared *c, struct circuit_view *view)
{
	const char *args[] = { "view" };
	const struct reply *rep;
	enum circuit_step st;
	long long v[VIEW_N];
	const struct reply *host;
	size_t i;

	memset(view, 0, sizeof(*view));
	view->place = the_store.url->shown;
	if ((st = step(c, NEVER, 1, 1, args, &rep)) != STEP_DONE)
		return st;
	if (!array_of(rep, VIEW_N) || rep->elem[5].type != REPLY_BULK ||
	    rep->elem[9].type != REPLY_BULK)
		return unexpected(c);
	for (i = 0; i < VIEW_N; i++)
		if (i != 5 && i != 9 && int_at(rep, i, &v[i]) == -1)
			return unexpected(c);
	if (store_runs(view, &rep->elem[9]) == -1)
		return unexpected(c);
	view->found = v[10] == 1;
	host = &rep->elem[5];
	view->state = v[0] == 1 ? OPEN : v[0] == 2 ? HALF_OPEN : CLOSED;
	view->failures = count_of(v[1], INT32_MAX);
	view->openings = count_of(v[2], INT32_MAX);
	view->half_opens_in = ns(v[3]);
	view->probe = count_of(v[4], INT32_MAX);
	(void)snprintf(view->probe_host, sizeof(view->probe_host), "%.*s",
	    (int)(host->len < 64 ? host->len : 64), host->str);
	view->budget = count_of(v[6], BUDGET_MAX);
	view->window = v[7] > 0 ? ns(v[7]) : 0;
	view->retries = count_of(v[8], BUDGET_MAX);
	view->share = count_of(v[11], SHARE_MAX);
	view->least = count_of(v[12], BUDGET_MAX);
	view->allowed = count_of(v[13], BUDGET_MAX);
	view->arrived = count_of(v[14], INT32_MAX);
	view->ratio = count_of(v[15], 100);
	view->span = count_of(v[16], MARKS_MAX);
	view->seen = count_of(v[17], MARKS_MAX);
	view->failing = count_of(v[18], MARKS_MAX);
	return STEP_DONE;
}

/*
 * The name in a key of SCAN's reply, retry:{NAME}:state, added to names
 * when it is one that --circuit would take.  -1: no memory.
 */
static int
add_name(struct names *names, const struct reply *key)
{
	char name[256];
	size_t len;

	if (key->type != REPLY_BULK || key->len < 14 ||
	    key->len - 13 >= sizeof(name) ||
	    memcmp(key->str, "retry:{", 7) != 0 ||
	    memcmp(key->str + key->len - 7, "}:state", 7) != 0)
		return 0;
	len = key->len - 14;
	memcpy(name, key->str + 7, len);
	name[len] = '\0';
	if (strlen(name) != len || !valid_circuit_name(name))
		return 0;
	return names_add(names, name, len);
}

/*
 * --circuit-list: the names that have a state key on the store, into
 * *names, by SCAN's cursor from 0 until it comes back to 0, the whole
 * within one --store-timeout.  A key may come twice: names_sort() drops
 * the second.  On a Redis Cluster, the node of the URL only.
 */
enum circuit_step
store_list(struct shared *c, struct names *names)
{
	struct store *s = &the_store;
	char cursor[32] = "0";
	const char *argv[] = { "SCAN", cursor, "MATCH", "retry:{*}:state",
	    "COUNT", "100" };
	size_t len[6], i;
	const struct reply *rep = NULL;
	int64_t end = monotonic_now() + s->timeout;
	enum circuit_step st;
	enum redis_io io;

	do {
		for (i = 0; i < 6; i++)
			len[i] = strlen(argv[i]);
		/* A cluster's node answers for its own keys: the URL's. */
		io = route_call(&s->route, end, 6, argv, len, &rep);
		c->unwanted_password = s->route.unwanted_password;
		if ((st = judge(c, io, rep, 0)) != STEP_DONE) {
			if (st == STEP_SIGNAL)
				c->signal = sp_caught();
			return st;
		}
		/* A 64-bit cursor, as a bulk string of its digits. */
		if (!array_of(rep, 2) || rep->elem[0].type != REPLY_BULK ||
		    rep->elem[0].len == 0 || rep->elem[0].len >= sizeof(cursor) ||
		    rep->elem[1].type != REPLY_ARRAY)
			return unexpected(c);
		for (i = 0; i < rep->elem[1].n; i++)
			if (add_name(names, &rep->elem[1].elem[i]) == -1)
				return store_failed(c, 0, "%s", strerror(errno));
		(void)snprintf(cursor, sizeof(cursor), "%.*s",
		    (int)rep->elem[0].len, rep->elem[0].str);
	} while (strcmp(cursor, "0") != 0);
	return STEP_DONE;
}

/* ---- A job's history (job.c) -------------------------------------- */

/*
 * The hash retry:job:{NAME}: v its version, and the fields of
 * JOB_FIELDS as job.c writes them.  The script only stores: "get" reads
 * them, "put" writes them only if the version is still the one read (and
 * adds one to it), "del" forgets the job.  What a run makes of them is
 * job.c's, in C, once for both places a history is kept.
 */
static const char job_script[] =
	"local k = KEYS[1]\n"
	"if ARGV[1] == 'get' then\n"
	"  return redis.call('HMGET', k, 'v', unpack(ARGV, 2))\n"
	"elseif ARGV[1] == 'del' then\n"
	"  return redis.call('DEL', k)\n"
	"end\n"
	"if (redis.call('HGET', k, 'v') or '0') ~= ARGV[2] then return 0 end\n"
	"redis.call('HSET', k, unpack(ARGV, 3))\n"
	"redis.call('HINCRBY', k, 'v', 1)\n"
	"return 1\n";

/*
 * The store at u for job.c, unless the circuit's steps have opened it
 * already (one URL, one connection).
 */
void
store_job_open(struct shared *c, const struct store_url *u, int64_t timeout)
{
	if (the_store.url == NULL)
		store_open(c, u, timeout);
}

/* One call of job_script on NAME's hash, args after the key. */
static enum circuit_step
job_call(struct shared *c, int64_t until, int nargs, const char *const args[],
    const struct reply **rep)
{
	struct store *s = &the_store;
	const char *argv[4 + 2 * JOB_FIELDS + 2];
	size_t len[4 + 2 * JOB_FIELDS + 2];
	char key[256];
	int64_t end = monotonic_now() + s->timeout;
	enum circuit_step st;
	enum redis_io io;
	int i, argc = 0;

	*rep = NULL;
	if (s->failed)
		return STEP_STORE;
	c->err[0] = '\0';
	if (until < end)
		end = until;
	(void)snprintf(key, sizeof(key), "retry:job:{%s}", c->name);
	argv[argc++] = "EVAL";
	argv[argc++] = job_script;
	argv[argc++] = "1";
	argv[argc++] = key;
	for (i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	for (i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	io = route_call(&s->route, end, argc, argv, len, rep);
	st = judge(c, io, *rep, until < monotonic_now() + s->timeout);
	c->unwanted_password = s->route.unwanted_password;
	if (st == STEP_SIGNAL)
		c->signal = sp_caught();
	return st;
}

/*
 * The fields named in names into h->field (each "" when not set) and the
 * version into h->version ("0": no hash).
 */
enum circuit_step
store_job_get(struct shared *c, int64_t until, struct job_hash *h)
{
	const char *args[1 + JOB_FIELDS];
	const struct reply *rep, *e;
	enum circuit_step st;
	size_t i;

	args[0] = "get";
	for (i = 0; i < JOB_FIELDS; i++)
		args[1 + i] = h->names[i];
	if ((st = job_call(c, until, 1 + JOB_FIELDS, args, &rep)) != STEP_DONE)
		return st;
	if (!array_of(rep, 1 + JOB_FIELDS))
		return unexpected(c);
	for (i = 0; i <= JOB_FIELDS; i++) {
		e = &rep->elem[i];
		if (e->type != REPLY_BULK && e->type != REPLY_NIL)
			return unexpected(c);
		(void)snprintf(i == 0 ? h->version : h->field[i - 1],
		    sizeof(h->version), "%.*s", e->type == REPLY_BULK &&
		    e->len < sizeof(h->version) ? (int)e->len : 0,
		    e->type == REPLY_BULK ? e->str : "");
	}
	if (h->version[0] == '\0')
		(void)snprintf(h->version, sizeof(h->version), "0");
	return STEP_DONE;
}

/* h's fields, if the version is still h->version: *stored 1, else 0. */
enum circuit_step
store_job_put(struct shared *c, int64_t until, const struct job_hash *h,
    int *stored)
{
	const char *args[2 + 2 * JOB_FIELDS];
	const struct reply *rep;
	enum circuit_step st;
	size_t i;

	args[0] = "put";
	args[1] = h->version;
	for (i = 0; i < JOB_FIELDS; i++) {
		args[2 + 2 * i] = h->names[i];
		args[3 + 2 * i] = h->field[i];
	}
	if ((st = job_call(c, until, 2 + 2 * JOB_FIELDS, args, &rep)) !=
	    STEP_DONE)
		return st;
	if (rep->type != REPLY_INTEGER)
		return unexpected(c);
	*stored = rep->integer == 1;
	return STEP_DONE;
}

/* --job-reset: *existed 1 if there was a hash. */
enum circuit_step
store_job_del(struct shared *c, int *existed)
{
	const char *args[] = { "del" };
	const struct reply *rep;
	enum circuit_step st;

	if ((st = job_call(c, NEVER, 1, args, &rep)) != STEP_DONE)
		return st;
	if (rep->type != REPLY_INTEGER)
		return unexpected(c);
	*existed = rep->integer > 0;
	return STEP_DONE;
}

/* ---- Opening ---------------------------------------------------------- */

#define NHEAD	(sizeof(script_head) / sizeof(script_head[0]))
#define NTAIL	(sizeof(script_tail) / sizeof(script_tail[0]))

/* The n lines at line after the len bytes of the script, each ended. */
static size_t
add_lines(char *script, size_t len, const char *const line[], size_t n)
{
	size_t i, size = sizeof(the_store.script);

	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(script + len, size - len, "%s\n",
		    line[i]);
	return len < size ? len : size - 1;
}

/*
 * The store of c, at u, each step bounded by timeout: nothing is sent
 * yet; the first step connects.  The password is the URL's, else
 * REDISCLI_AUTH's, which keeps it off the process list.
 */
void
store_open(struct shared *c, const struct store_url *u, int64_t timeout)
{
	struct store *s = &the_store;
	const char *auth = getenv("REDISCLI_AUTH");
	size_t len;

	memset(s, 0, sizeof(*s));
	s->url = u;
	s->timeout = timeout;
	s->auth = auth != NULL && *auth != '\0' ? auth : NULL;
	s->password = u->has_password ? u->password : s->auth;
	route_init(&s->route, u, s->password, s->auth);
	if (c->name == NULL)	/* --circuit-list */
		c->name = "";
	(void)snprintf(s->keys[0], sizeof(s->keys[0]), "retry:{%s}:state",
	    c->name);
	(void)snprintf(s->keys[1], sizeof(s->keys[1]), "retry:{%s}:probe",
	    c->name);
	(void)snprintf(s->keys[2], sizeof(s->keys[2]), "retry:{%s}:retries",
	    c->name);
	(void)snprintf(s->token, sizeof(s->token), "%016" PRIx64,
	    random_nonce());
	(void)snprintf(s->pid, sizeof(s->pid), "%ld", (long)getpid());
	if (gethostname(s->host, sizeof(s->host) - 1) == -1)
		(void)snprintf(s->host, sizeof(s->host), "unknown");
	/* It fits: the tests run it. */
	len = add_lines(s->script, 0, script_head, NHEAD);
	len += breaker_lua(s->script + len, sizeof(s->script) - len);
	len = add_lines(s->script, len, script_tail, NTAIL);
	sha1_hex(s->script, len, s->sha);
}
