/* SPDX-License-Identifier: ISC */
/*
 * What the whole of retry shares: the policy, the run and its events, the
 * outcomes and the verdict, and the interfaces of the leaves (clocks and
 * waits, messages, descriptors, randomness, parsing, the environment) and
 * of the listeners, as relayd.h and tmux.h hold theirs.  A module has a
 * header of its own only where it is an interface of its own: the stdio
 * relay, line matching, the circuit and its stores, the Redis client.
 */
#ifndef COMMON_H
#define COMMON_H

#include <sys/stat.h>
#include <sys/types.h>

#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- clock.c --------------------------------------------------------- */
/*
 * The clocks: monotonic nanoseconds for every wait and limit, real time
 * for hints and reports; and the caught signals with the self-pipe, that
 * every wait of retry's ends on.  A leaf: the self-pipe is the caller's.
 */
#define NS_PER_SEC	INT64_C(1000000000)
#define NEVER		INT64_MAX	/* a time that never comes */

int		 clock_check(void);
int64_t		 monotonic_now(void);
int64_t		 realtime_now(void);

/* The caught signals and the self-pipe. */
int	 sp_open(const int [2], const int *, int, int64_t);
int	 sp_is_open(void);
int	 sp_fd(void);
void	 sp_on_signal(int, siginfo_t *, void *);
int	 sp_caught(void);
int	 sp_any_caught(void);
int	 sp_signalled(void);
int	 sp_take_child_changed(void);
int	 sp_continued(void);
void	 sp_forget_continued(void);
int	 sp_pending(void);
void	 sp_take_wake(void);
void	 sp_ticking(int);
int	 sp_poll_one(int, short, int64_t);
int	 sp_wait_fd(int, short, int64_t);
int	 sp_may_write(int);
int	 sp_write(int, const char *, size_t, int64_t);

/* ---- msg.c ----------------------------------------------------------- */
/*
 * retry's messages: one line each on stderr, "retry: ...", with the bytes
 * that came from elsewhere (argv, keys, file contents) escaped so that no
 * message can ever become two lines or reach the terminal as a control.
 */
/* C99 has no _Noreturn; the analyzers and -Wextra want to know. */
#if defined(__GNUC__) || defined(__clang__)
#define NORETURN	__attribute__((__noreturn__))
#else
#define NORETURN
#endif

#define EXIT_OWN_FAILURE 125	/* retry itself failed; nothing more is run */
#define MSGMAX		1024

/* The syslog priority a line of retry's has in the journal (sd-daemon(3)). */
enum priority { PRI_ERROR = 3, PRI_WARNING = 4, PRI_NOTICE = 5, PRI_INFO = 6 };

void	 warning(const char *, ...);		/* with errno's text; always */
void	 warningx(const char *, ...);		/* always */
void	 fatal(const char *, ...) NORETURN;	/* with errno's text; exit 125 */
void	 fatalx(const char *, ...) NORETURN;	/* exit 125 */
size_t	 escape(char *, size_t, const char *, size_t);
size_t	 msg_format(char [MSGMAX], const char *, va_list, const char *);
void	 msg_put(const char *, size_t);		/* as it is; always; never held */
void	 msg_line(enum priority, const char *, size_t);	/* a line of ours */
void	 msg_find_journal(void);
void	 msg_stderr_afresh(void);
long	 msg_warnings(void);
int	 close_stdout(void);			/* 0, or 125 said */

/* ---- fd.c ------------------------------------------------------------ */
/*
 * Descriptor helpers that every part of retry which opens something uses,
 * and scratch files in $TMPDIR.
 */
int		 fd_keep(int);
int		 fd_keep_cloexec(int);
int		 new_pipe(int [2]);
int		 new_pipe_nonblocking(int [2]);
int		 nonblocking(int);
int		 open_dir(int, const char *, int, int *);
int		 write_all(int, const char *, size_t);
int		 fd_holds_data(int);

const char	*temp_dir(void);
void		 temp_dir_keep(void);
int		 scratch_file(void);
int		 owner_gone(long);

/* ---- random.c -------------------------------------------------------- */
/*
 * The kernel's randomness: one read per run, parted among its uses.
 */
uint64_t	 random_seed(void);
uint64_t	 random_nonce(void);
void		 random_key_bytes(unsigned char [16]);
void		 random_run_id_bytes(unsigned char [16]);
void		 random_secret_bytes(unsigned char [16]);
void		 random_trace_bytes(unsigned char [16], unsigned char [8]);
uint64_t	 random_spans_seed(void);

/* ---- sha256.c -------------------------------------------------------- */
/*
 * SHA-256 (FIPS 180-4), for the name-based idempotency key of a nested
 * run: written here, as the card allows libc alone.
 */
struct sha256 {
	uint32_t	 h[8];
	uint64_t	 len;		/* bytes so far */
	unsigned char	 block[64];
	size_t		 used;		/* bytes in block */
};

void	sha256_init(struct sha256 *);
void	sha256_add(struct sha256 *, const void *, size_t);
void	sha256_end(struct sha256 *, unsigned char [32]);

/* ---- names.c --------------------------------------------------------- */
/*
 * A list of circuit names, as --circuit-list gathers them from the state
 * directory or a store's keys: any order and repeats in, sorted and each
 * once out.
 */
struct names {
	char		**v;
	size_t		 n, cap;
};

int		 names_add(struct names *, const char *, size_t);
void		 names_sort(struct names *);
void		 names_free(struct names *);

/* ---- spool.c --------------------------------------------------------- */
/*
 * -Q's spool: the attempts' output and retry's lines held in a file in
 * $TMPDIR, with an index of where each attempt's part lies, shown on
 * stderr when the run fails.  A spool that fails (a full disk) shows what
 * it held and lets the rest pass through.  Below the run's lines
 * (say.c) and the relay, which both write into it; cron.c says what to
 * index and when to show.
 */
int	 spool_open(int64_t);
int	 spool_holding(void);
int	 spool_fd(void);
void	 spool_begin(const char *, size_t);
void	 spool_end_attempt(void);
void	 spool_index(const char *, size_t);
int	 spool_put(const char *, size_t);
void	 spool_failed(int);
void	 spool_mark(void);
void	 spool_show(int);
int	 spool_drop(void);

/* ---- path.c --------------------------------------------------------- */
/*
 * The one walk to what retry opens by a path it was given, the state
 * directory (circuit.c) and the files it writes (outfile.c): one name at a
 * time from directory descriptors, so that what is checked is what is
 * used, under the rules that the caller asks for; and whether a file
 * opened where it led is retry's own.
 */
#define WALK_TO_DIR	0x01	/* to a directory, opened to read; else to
				   a file, which need not be there yet */
#define WALK_MAKE	0x02	/* directories missing are made, 0700 */
#define WALK_NO_LINKS	0x04	/* no symbolic link is followed; else one
				   is only where protected_symlinks would
				   and not in its owner's own directory */
#define WALK_TRUSTED	0x08	/* each directory root's or the user's, that
				   no one else may write unless it is
				   sticky; no ".."; give a path from / */
#define WALK_OWN	0x10	/* where WALK_TO_DIR leads: the user's, that
				   no one else may write */
#define WALK_LINKS_MAX	40	/* followed for one path, as Linux allows */

/* Why a walk stopped, or a file is not retry's own. */
enum walk_fault {
	WALK_OK,
	WALK_ERRNO,		/* err says why */
	WALK_LINK,		/* a symbolic link, under WALK_NO_LINKS */
	WALK_LINK_REFUSED,	/* another user's, where they could aim it */
	WALK_TOO_MANY_LINKS,	/* past WALK_LINKS_MAX */
	WALK_DOTDOT,		/* "..", under WALK_TRUSTED */
	WALK_NO_NAME,		/* WALK_TO_DIR: no name at all, as "/" */
	WALK_NOT_OURS,		/* another user's (WALK_TRUSTED, WALK_OWN) */
	WALK_WRITABLE,		/* others may write it (likewise) */
	WALK_NOT_REGULAR,	/* path_own_file(): not a regular file */
	WALK_OTHER_NAME		/* path_own_file(): a hard link */
};

struct path_walk {
	int		 dir;		/* where it leads (WALK_TO_DIR), or the
					   directory that holds name; or -1 */
	char		 name[NAME_MAX + 1];	/* what it leads to */
	struct stat	 st;		/* its status; st_mode 0: not there */
	int		 follow;	/* name is a link of /proc's to a
					   descriptor: open it following */
	/* Where a walk stopped, and why, for the caller's words: */
	enum walk_fault	 fault;
	int		 err;		/* an errno, whatever the fault (EPERM:
					   a rule of the walk refused) */
	int		 last;		/* at the path's last name */
	size_t		 len;		/* the path's bytes up to the name, as
					   given; 0 past a link */
	char		 at[PATH_MAX];	/* the path up to the name, as walked */
	uid_t		 owner;		/* WALK_LINK_REFUSED: whose link */
	struct stat	 where;		/* and its directory's status */
};

int		 path_walk(struct path_walk *, const char *, int);
enum walk_fault	 path_own_file(int, int, struct stat *);

/* ---- outfile.c ------------------------------------------------------- */
/*
 * The files retry writes for the user (--report, --metrics, the CI
 * files): reached through symbolic links only as the kernel's
 * protected_symlinks would allow, checked when the run starts, written
 * whole when it ends, so that no reader ever sees half of one.
 */
/* What may stand at the path and be written there as it is. */
enum in_place { NEVER_IN_PLACE, DEVICES_IN_PLACE };

struct outfile {
	const char	*path;
	enum in_place	 how;
	int		 in_place;	/* a device or FIFO: written as is */
	int		 follow;	/* name is a link of /proc's, opened
					   through (outfile.c's walk) */
	int		 dir;		/* where name is, or -1 */
	char		 name[NAME_MAX + 1];	/* what the path leads to */
	char		 temp[NAME_MAX + 1];	/* in dir, renamed over name */
	char		 refused[PATH_MAX + 512];	/* why, when errno is not */
};

int	 outfile_check(struct outfile *, const char *, enum in_place);
FILE	*outfile_open(struct outfile *, mode_t);
int	 outfile_close(struct outfile *, FILE *);
void	 outfile_abandon(struct outfile *);
int	 outfile_append(struct outfile *, const char *, mode_t);
int	 outfile_check_append(struct outfile *, const char *);
void	 outfile_put_whole(const char *, const char *, int, const char *,
	    size_t);
int	 outfile_previous(const struct outfile *);
const char *outfile_why(const struct outfile *);

/* ---- env.c ----------------------------------------------------------- */
/*
 * The environment: what each attempt finds there, what retry takes from an
 * outer retry; the Retry-After hint file that RETRY_AFTER_FILE names.
 */
int		 under_outer_retry(void);
long		 outer_attempts(void);
int		 deadline_inherited(void);
int64_t		 find_deadline(int64_t, int64_t, int *);
void		 export(const char *, const char *);
void		 export_environment(const char *, char *const [], long, int64_t,
		    int);
void		 export_attempt(long);
const char	*export_run_id(char *, size_t);
const char	*deadline_text(char *, size_t, int64_t);

void		 export_hint_file(void);
const char	*hint_read(char *, size_t, const char **);
void		 hint_close(void);

/* ---- backoff.c ------------------------------------------------------- */
/*
 * The delay schedule of retry: a random generator and the backoff with its
 * jitter.  No I/O, no global state, so that tests and fuzzers can drive it
 * directly.
 */
/* The longest duration, ~31.7 years: no overflow when added to a clock. */
#define DUR_MAX		(INT64_C(1000000000) * NS_PER_SEC)

enum jitter { JITTER_NONE, JITTER_FULL, JITTER_EQUAL, JITTER_DECORRELATED };

/* xoshiro256** state. */
struct rng {
	uint64_t s[4];
};

struct backoff {
	int64_t base, cap;	/* nanoseconds, 0 < base <= cap */
	double factor;		/* >= 1 */
	enum jitter jitter;
	double prev;		/* decorrelated: the previous delay, ns */
	double grown;		/* base x factor^(k-1) while not above cap */
	uint64_t failures;	/* k: failed attempts so far */
};

/* What lies behind one delay, for verbose messages. */
struct step {
	int64_t step;		/* b_k, or 3 x d_{k-1} for decorrelated */
	int64_t lo, hi;		/* the band the delay was drawn from */
	int64_t delay;
	int capped;		/* the cap cut the step */
};

void		 rng_seed(struct rng *, uint64_t);
uint64_t	 rng_next(struct rng *);
double		 rng_uniform(struct rng *);

void		 backoff_init(struct backoff *, int64_t, double, int64_t,
		    enum jitter);
int64_t		 backoff_next(struct backoff *, struct rng *, struct step *);

/* ---- parse.c --------------------------------------------------------- */
/*
 * The values of retry's command line and environment: parsed into numbers
 * and sets, and written back for messages.  No I/O, no global state.
 */
/* A set of exit statuses 0-255, one bit each. */
struct codes {
	unsigned char bits[32];
};

/*
 * Parsers return NULL on success and otherwise a short reason such as
 * "invalid duration", to be completed with the option and the value.
 */
const char	*parse_duration(const char *, int64_t *);
const char	*parse_codes(const char *, struct codes *);
const char	*parse_count(const char *, long, long *);
const char	*parse_factor(const char *, double *);
const char	*parse_seed(const char *, uint64_t *);
const char	*parse_jitter(const char *, enum jitter *);
int		 parse_signal(const char *, int *);
int		 parse_unix_time(const char *, int64_t *);
size_t		 utf8_length(const unsigned char *);
int		 scan_bounded(char **, int64_t, int64_t *);
int		 valid_circuit_name(const char *);
const char	*check_pattern(const char *);
const char	*bracket_end(const char *);

int		 codes_has(const struct codes *, int);
void		 codes_add(struct codes *, int);

/*
 * What an attempt said of its retry (parse_hint), in a hint file or on
 * its stderr: the status of the last HTTP response in it, whether that
 * response asks to be called again later, and the delay it gives or why
 * there is none.
 */
struct hint {
	int		 status;	/* 100-599; 0: no status line */
	int		 rate_limited;	/* 429, a Retry-After, or a remaining
					   count of 0 */
	int64_t		 delay;		/* ns from now, when why is NULL */
	const char	*why;		/* why no delay; "empty": nothing said */
	const char	*from;		/* the header that gave the delay */
};

/* What a line of an attempt's stderr is to a hint (--hint-from-stderr). */
enum hint_line { HINT_LINE_OTHER, HINT_LINE_STATUS, HINT_LINE_HEADER };

void		 parse_hint(const char *, int64_t, struct hint *);
enum hint_line	 hint_line(const char *, size_t);

/* Writers: each fills buf and returns it. */
const char	*jitter_name(enum jitter);
const char	*signal_name(char *, size_t, int);
const char	*fmt_duration(char *, size_t, int64_t);
const char	*fmt_seconds(char *, size_t, int64_t, int64_t);
const char	*fmt_codes(char *, size_t, const struct codes *);
const char	*fmt_utc(char *, size_t, int64_t);

/* ---- url.c ----------------------------------------------------------- */
/*
 * The URL of --store (and RETRY_STORE): redis://[user:password@]host[:port]
 * [,host[:port]...][/db] (one server, or the seeds of a Redis Cluster),
 * redis+unix://[user:password@]/path[?db=N], or redis+sentinel://
 * [user:password@]host[:port][,host[:port]...]/service[/db]; checked and
 * split without I/O, and shown with its password as "***"; and server
 * text with the password masked.
 */
#define URL_HOST_MAX	253	/* a DNS name */
#define URL_PATH_MAX	103	/* a socket path: sun_path is 104 on BSD */
#define URL_SECRET_MAX	512	/* a user or a password */
#define URL_NODES	8	/* seeds, or sentinels, in one URL */
#define URL_SERVICE_MAX	64	/* a Sentinel's name of a primary */
#define URL_SHOWN_MAX	(URL_NODES * (URL_HOST_MAX + 9) + URL_PATH_MAX + \
	URL_SECRET_MAX + URL_SERVICE_MAX + 64)

/* A server: given in the URL, or named by a redirection or a Sentinel. */
struct url_node {
	char		 host[URL_HOST_MAX + 1];	/* IPv6 without brackets */
	char		 port[6];
	int		 sentinel;	/* asked for the primary; no SELECT */
};

struct store_url {
	int		 given;		/* there is a store */
	int		 unix_socket;	/* redis+unix: path; else node[] */
	int		 sentinel;	/* redis+sentinel: node[] are sentinels */
	struct url_node	 node[URL_NODES];	/* tried in this order */
	int		 nodes;
	char		 service[URL_SERVICE_MAX + 1];	/* redis+sentinel */
	char		 path[URL_PATH_MAX + 1];
	char		 user[URL_SECRET_MAX + 1];	/* "": none */
	char		 password[URL_SECRET_MAX + 1];
	int		 has_password;	/* given in the URL, maybe empty */
	long		 db;
	char		 shown[URL_SHOWN_MAX];	/* for messages */
};

int		 url_check(const char *, const char *, struct store_url *,
		    char *, size_t);
void		 url_hide(char *, size_t, const char *, size_t, const char *,
		    const char *);

/* ---- options.c ------------------------------------------------------- */
/*
 * The command line of retry, checked and turned into a policy.  Nothing
 * here prints or exits, so that tests and the fuzzer can drive it.
 */
enum parsed { PARSED_RUN, PARSED_HELP, PARSED_VERSION, PARSED_ERROR };
enum circuit_command {
	CIRCUIT_RUN, CIRCUIT_STATUS, CIRCUIT_LIST, CIRCUIT_RESET
};
enum ci_format { CI_AUTO, CI_NONE, CI_GITHUB, CI_GITLAB };	/* --ci */
enum verbosity { QUIET, NORMAL, VERBOSE };			/* -q, -v */

/*
 * The hooks, in the order of --on-retry, --on-giveup, --on-success,
 * --on-start, --on-tolerate and --on-recover.
 */
enum hook {
	HOOK_RETRY, HOOK_GIVEUP, HOOK_SUCCESS, HOOK_START, HOOK_TOLERATE,
	HOOK_RECOVER, NHOOKS
};
/* A run, or --job-status or --job-reset. */
enum job_command { JOB_RUN, JOB_STATUS, JOB_RESET };
/* --env-from-hooks: which names RETRY_ENV_FILE may set. */
enum env_names { ENV_NAMES_SAFE, ENV_NAMES_ALL };

struct pattern {
	regex_t		 re;
	const char	*text;		/* as given, for relay's faster ways */
	int		 set;
};

/* What the command line asked for. */
struct policy {
	long		 attempts;	/* 0: unlimited */
	int		 attempts_given;	/* -n was given */
	int		 nested;	/* an attempt of an outer retry's */
	long		 outer_attempts;	/* nested: its -n (0: no limit),
					   or -1 when it did not say */
	int64_t		 deadline;	/* ns from start; 0: none */
	int64_t		 min_time;	/* ns an attempt needs; 0: none */
	int64_t		 timeout;	/* ns; 0: none */
	int		 signal;
	int64_t		 kill_after;
	int64_t		 base, cap;
	double		 factor;
	enum jitter	 jitter;
	int		 seeded;
	uint64_t	 seed;
	struct codes	 on, stop_on;
	const char	*key;
	int		 dry_run;
	int		 replay_stdin, buffer_stdout;
	int		 quiet_unless_failed;	/* -Q, the cron mode */
	int		 hint_from_stderr;
	int		 http_4xx_retry;	/* --http-4xx retry */
	int		 share_stdin;
	int		 notify_pass;	/* --notify-pass: keep NOTIFY_SOCKET */
	struct pattern	 on_output, stop_output;
	const char	*report;	/* file for the JSON report, "-": stderr */
	const char	*metrics;	/* file for the Prometheus metrics */
	const char	*trace;		/* file the spans are appended to */
	const char	*trace_service;	/* their service.name, or NULL */
	char *const	*own_argv;	/* retry's own, for the trace */
	enum ci_format	 ci;		/* --ci, auto settled by the environment */
	const char	*hooks[NHOOKS];	/* --on-retry, ... (enum hook) */
	int64_t		 hook_grace;	/* ns an end hook may run past -D */
	int64_t		 reset_after;	/* ns; 0: never */
	int64_t		 splay;		/* ns; 0: none */
	const char	*circuit;	/* NAME, or NULL */
	enum circuit_command circuit_command;
	int		 tunes_circuit;	/* --trip, --cool or --budget given */
	long		 trip;		/* --trip N, or 0 for P%/M: */
	long		 trip_ratio;	/* P, or 0 */
	long		 trip_span;	/* M */
	int64_t		 cool;
	long		 budget;	/* --budget N/DUR, 0: none */
	long		 budget_share;	/* --budget P%/DUR, 0: none */
	long		 budget_min;	/* --budget-min */
	int		 budget_min_given;
	int64_t		 budget_window;
	const char	*store_text;	/* --store URL, as given */
	struct store_url store;		/* it, or RETRY_STORE's: .given */
	int64_t		 store_timeout;	/* ns */
	int		 store_closed;	/* --store-fail closed */
	int		 tunes_store;	/* --store, --store-timeout or -fail */
	const char	*job;		/* --job NAME (or --metrics'), or NULL */
	enum job_command job_command;
	long		 alert_after;	/* --alert-after N; 1: every failure */
	int		 alert_given;
	enum env_names	 env_names;	/* --env-from-hooks */
	enum verbosity	 verbosity;
	char		**argv;		/* the command; may be empty with dry_run */
};

extern const char help_text[];	/* the usage line and the options */

enum parsed	 parse_options(int, char *[], struct policy *, char *, size_t);
void		 free_policy(struct policy *);

/* ---- envfile.c ------------------------------------------------------- */
/*
 * RETRY_ENV_FILE's text read as GITHUB_ENV's: the assignments it makes
 * (spans of the text) and a line for each name refused.  Pure, fuzzed.
 */
#define ENVFILE_MAX	65536	/* bytes of the file read, at most */
#define ENVFILE_WARNMAX	16	/* refusals said one by one; more counted */

struct env_assign {
	const char	*name, *value;
	size_t		 name_len, value_len;
};
struct envfile {
	struct env_assign *set;
	size_t		 nset, cap;
	char		 warn[ENVFILE_WARNMAX][160];
	size_t		 nwarn, unsaid;	/* lines in warn; refusals beyond */
	int		 refused;	/* the whole text: nothing set */
};

int		 envfile_parse(const char *, size_t, enum env_names,
		    struct envfile *);
void		 envfile_free(struct envfile *);

/* env.c's part: the file that RETRY_ENV_FILE names, and what it sets. */
void		 export_env_file(int);
void		 set_env_file_variables(enum env_names);
void		 env_file_close(void);

/* ---- outcome.c ------------------------------------------------------- */
/*
 * How a run ends: the outcomes, and the one table that gives each its
 * words, its report key and its exit-status rule.
 */
#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the circuit stays open */
#define EXIT_TIMEDOUT	124
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

/*
 * Why the run ends; RUNNING while it does not.  After an attempt the run
 * loop (judge_attempt) tries them in this order, the first that holds
 * wins: CANNOT_RUN, INTERRUPTED, OUTPUT_STOP, DEADLINE (stopped at it),
 * READER_GONE, then HTTP_REFUSED (its hint is an HTTP answer not to be
 * retried), SUCCEEDED or NOT_RETRYABLE, then EXHAUSTED, then
 * INPUT_CUT (stdin passed what is kept for a retry) or INPUT_UNKEPT (the
 * file of the copy had no room for it), then OUTPUT_UNHELD (-O's file
 * had none: the attempt's output went to stdout).  The
 * others end a wait: DEADLINE (the next delay would pass it, or leave
 * less than --min-time), INTERRUPTED, CIRCUIT_OPEN, BUDGET_SPENT and
 * STORE_DOWN; and TOO_LATE ends a run before its first attempt, which
 * would have less than --min-time.
 */
enum outcome {
	RUNNING, SUCCEEDED, NOT_RETRYABLE, HTTP_REFUSED, EXHAUSTED, DEADLINE,
	INTERRUPTED, CANNOT_RUN, OUTPUT_STOP, CIRCUIT_OPEN, BUDGET_SPENT,
	READER_GONE, STORE_DOWN, INPUT_CUT, INPUT_UNKEPT, OUTPUT_UNHELD,
	TOO_LATE,
	NOUTCOMES
};

/* The exit status an outcome gives, as retry(1)'s EXIT STATUS says. */
enum exit_rule {
	EXIT_LAST,		/* the last attempt's status, as reported */
	EXIT_LAST_OR_TIMEDOUT,	/* that, or 124 when no attempt ran */
	EXIT_BY_SIGNAL,		/* retry dies of the signal: 128 + N */
	EXIT_TEMPFAIL_ALWAYS	/* 75, whatever else happened */
};

/* Whether a run that ends so has passed. */
enum passes {
	PASSES_NEVER,		/* it gave up, or was stopped */
	PASSES_ALWAYS,
	PASSES_UNMATCHED	/* when the last exited 0, its output unmatched */
};

/* The run's one CI annotation. */
enum notice { NOTICE_NONE, NOTICE_WARNING, NOTICE_ERROR };

struct outcome_row {
	const char	*words;		/* -v's summary: "stopped: WORDS" */
	const char	*giving_up;	/* "...; giving up: GIVING_UP", or NULL */
	const char	*key;		/* the report's "outcome" */
	enum exit_rule	 rule;
	enum passes	 passes;
	int		 flakes;	/* kept in the circuit's flake counts */
	int		 counts_job;	/* a failed run of --job's, or a success:
					   retry-circuit(7) JOBS */
};

extern const struct outcome_row outcome_table[NOUTCOMES];

/* How the run's last attempt ended, as the verdict needs it. */
struct last_attempt {
	long		 attempts;	/* in the run: 0 if none ran */
	int		 status;	/* the last one's, as reported */
	int		 matched;	/* its output matched --on-output */
	int		 signal;	/* retry got it, or the keyboard sent it */
};

/*
 * What a run's end made of its job's history (job.c decides, in
 * job_run_ended()): the failed runs in a row, and whether this one is an
 * alert, a tolerated failure (--alert-after) or a recovery.
 */
struct job_end {
	const char	*name;		/* the job, or NULL: none, or not read */
	int		 counted;	/* the run counted in the history */
	long		 failed_in_row;	/* after this run */
	int64_t		 since;		/* the first of them: real time, ns */
	int		 alert;		/* a failed run that alerts */
	int		 tolerated;	/* a failed run before the Nth */
	int		 recovered;	/* a success after an alert */
	int		 alerting;	/* the job alerts after this run */
	int		 unknown;	/* the history could not be kept: the
					   fields above but alert are not known */
};

/*
 * What the end of a run is, decided once, here, for every listener: the
 * last line, the report, the metrics, the annotation, the end hook and
 * the flake counts all read it.
 */
struct verdict {
	int		 status;	/* the exit status */
	int		 signal;	/* retry dies of it instead, or 0 */
	int		 passed;	/* exit status 0 after an attempt */
	int		 after_retries;	/* passed, after failed attempts */
	enum notice	 notice;
	int		 flakes;	/* counts in the flake counts */
	int		 counts_job;	/* counts in --job's history */
	struct job_end	 job;		/* and what it made of it (job.c) */
};

struct verdict	 outcome_verdict(enum outcome, const struct last_attempt *);

/* ---- proc.c ---------------------------------------------------------- */
/*
 * Process control: each attempt in a process group of its own, lent the
 * terminal while retry has it, watched until it ends; the signals retry
 * catches; and the one wait in which every part of retry sleeps.
 */
struct relay;

/* When retry stops an attempt, and how; and what it does meanwhile. */
struct limit {
	int64_t		 at;		/* monotonic ns, or NEVER */
	int		 signal;	/* sent at that time */
	int64_t		 kill_after;	/* then SIGKILL, this much later */
	void		(*tick)(int64_t);	/* or NULL; done by the time given */
	int64_t		 tick_every;	/* ns */
	/* Or NULL: told the attempt's group as it starts, done by the time
	 * given; returns a signal that came meanwhile, or 0. */
	int		(*started)(long, int64_t);
};

/* What came of an attempt: facts only; retry.c decides what they mean. */
struct ending {
	int		 error;		/* it never ran: errno, else 0 */
	int		 status;	/* as the shell's $?: exit or 128 + signal */
	int		 termsig;	/* it died of this signal, or 0 */
	int		 stopped;	/* retry stopped it at the limit */
	int		 keyboard;	/* SIGINT or SIGQUIT, not retry's */
	int		 forwarded_int_quit;	/* retry passed one on */
	int		 signal;	/* a signal retry caught meanwhile, or 0 */
};

/*
 * A process group known by more than its number, which the system gives
 * again once the group is gone: its session, and when its leader started
 * (clock ticks since boot).
 */
struct group_mark {
	long		 pgid;
	long		 sid;
	unsigned long long start;
};

/* What proc_end_group() did. */
struct group_end {
	long		 ended;		/* processes sent SIGKILL */
	long		 left;		/* of them, not gone when it returned */
};

/* How a wait for a lock ended. */
enum lock_wait { LOCK_TAKEN, LOCK_FAILED, LOCK_TIMEOUT, LOCK_SIGNAL };

void		 proc_hold_stdio(void);
void		 proc_init(struct relay *, int64_t);
void		 proc_run(char *const [], const struct limit *, struct ending *);
void		 proc_run_hook(char *const [], int, const struct limit *,
		    struct ending *);
int		 proc_sleep(int64_t);
enum lock_wait	 proc_lock(int, const struct flock *, int64_t, int *);
void		 proc_drain(void);
int		 proc_mark_group(long, struct group_mark *);
int		 proc_end_group(const struct group_mark *, int64_t,
		    struct group_end *);
void		 proc_die(int) NORETURN;

/* ---- The events of a run --------------------------------------------- */
/*
 * The story of a run as the run loop tells it, one event at a time, to
 * every listener (the messages, the report, ...).  A listener formats and
 * keeps what it is told; it decides nothing about the run.
 */
struct policy;
struct run;
struct step;
struct verdict;

enum event_kind {
	RUN_BEGINS,		/* the policy is settled, nothing has run */
	ATTEMPT_STARTS,		/* run->attempt is about to start */
	ATTEMPT_ENDS,		/* run->end, status, began and ended say how */
	WAIT_BEGINS,		/* reason, wait */
	CIRCUIT_CHANGES,	/* state: what this run found or made it */
	RUN_ENDS		/* run->why; verdict */
};

/* Why the run waits before an attempt. */
enum wait_reason {
	WAIT_BACKOFF,		/* the schedule's delay; step says how drawn */
	WAIT_HINT,		/* the attempt's Retry-After; note says it */
	WAIT_SPLAY,		/* --splay, before the first attempt */
	WAIT_CIRCUIT_OPEN,	/* the shared circuit is open */
	WAIT_PROBE_ELSEWHERE,	/* another run probes the half-open circuit */
	WAIT_BUDGET		/* the shared retry budget is spent */
};
#define NWAIT_REASONS	(WAIT_BUDGET + 1)

/* What the circuit is, as this run meets it or makes it. */
enum circuit_change {
	CIRCUIT_PROBING,	/* half-open, and this run holds the probe */
	CIRCUIT_OPENED,		/* an attempt's end opened it: failures */
	CIRCUIT_CLOSED		/* an attempt's success closed it again */
};
#define NCIRCUIT_CHANGES (CIRCUIT_CLOSED + 1)

struct event {
	enum event_kind		 kind;
	const struct policy	*policy;
	const struct run	*run;
	enum wait_reason	 reason;	/* WAIT_BEGINS */
	int64_t			 wait;		/* WAIT_BEGINS: ns */
	const struct step	*step;		/* WAIT_BACKOFF: the draw */
	const char		*note;		/* WAIT_HINT: what it said */
	enum circuit_change	 change;	/* CIRCUIT_CHANGES */
	long			 failures;	/* CIRCUIT_OPENED: in a row */
	const struct verdict	*verdict;	/* RUN_ENDS: outcome.c's */
	const char		*log;		/* a hook's: the attempt's */
	size_t			 log_len;	/* last output (RETRY_LOG) */
};

/* ---- The run --------------------------------------------------------- */
/*
 * A run of the command: the facts of how it is going, which retry.c's
 * loop keeps and its listeners read (see the events below).
 */
enum timed_out { NOT_TIMED_OUT, TIMED_OUT, AT_DEADLINE };
/* Where the deadline passed once a delay had begun, if it did. */
enum late { ON_TIME, LATE_IN_HOOK, LATE_BEFORE_ATTEMPT };
/* What the run ended short of, when it ended at its deadline. */
enum short_of { SHORT_OF_DEADLINE, SHORT_OF_MIN_TIME };

/* How the run is going. */
struct run {
	int64_t		 start, deadline;	/* monotonic ns; NEVER: none */
	int64_t		 start_by;		/* no attempt starts from then on:
					   --min-time before the deadline */
	int64_t		 start_real;		/* the start, as real time */
	int64_t		 writes_until;		/* a stalled reader of retry's own
					   output is waited for until then */
	const char	*key;			/* the idempotency key */
	char		 run_id[40];		/* RETRY_RUN_ID: a UUID */
	int		 holding;		/* -Q holds the output */
	struct backoff	 backoff;
	struct rng	 rng;			/* the schedule's draws */
	struct rng	 aside;			/* all other draws */
	long		 attempt;		/* in the schedule: 1, 2, ... */
	long		 attempts;		/* in the run, resets or not */
	int		 reset;			/* the last ran --reset-after */
	struct ending	 end;			/* what came of the last one */
	enum timed_out	 timed_out;
	int		 status;		/* its status, as reported */
	int		 on_hit, stop_hit;	/* its output matched */
	int64_t		 out_bytes;		/* it put on stdout (not a tty) */
	int		 input_cut;		/* stdin passed input_kept */
	int64_t		 input_kept;		/* bytes of stdin kept to replay */
	int		 input_error;		/* why no more: errno, or 0 */
	int		 input_unkept;		/* no room for the copy: errno */
	int		 output_unheld;		/* none for -O's file: errno */
	int64_t		 input_unread;		/* taken of stdin, read by none */
	int		 interrupt;		/* a signal retry itself got */
	int64_t		 began, ended;		/* the last attempt's */
	int64_t		 took;	/* start to end, set as the run ends: the one
				   duration its report, metrics, CI lines, -v
				   and end hooks tell */
	int64_t		 delay, asleep;
	enum late	 late;			/* DEADLINE though the delay fit */
	enum short_of	 short_of;		/* DEADLINE: which limit it met */
	struct hint	 hint;			/* what the last attempt said of
					   a retry, read as it ended */
	const char	*hint_unread;		/* why its file was not read */
	int		 from_hint;		/* the delay came from a hint */
	int		 store_down;		/* --store failed */
	const char	*store_err;		/* how */
	enum outcome	 why;
};

/* ---- say.c ----------------------------------------------------------- */
/*
 * The run's messages on stderr: a listener of the run's events; and the
 * run's lines that any part of retry tells, held by -Q's spool while it
 * holds (say_hold), written by msg.c otherwise.
 */
struct policy;
struct run;

void		 say_verbosity(enum verbosity);
void		 say_hold(int);
int		 say_fd(void);
void		 say(const char *, ...);	/* hidden by -q */
void		 detail(const char *, ...);	/* shown by -v */

void		 say_event(const struct event *);
const char	*say_label(char *, size_t, const struct policy *,
		    const struct run *);
const char	*say_ending(char *, size_t, const struct policy *,
		    const struct run *);

/* ---- ci.c ------------------------------------------------------------ */
/*
 * --ci: each attempt folded in a CI job's log (GitHub Actions, GitLab CI)
 * and, on GitHub, one annotation, a summary row and outputs per run; a
 * listener of the run's events.
 */
struct policy;

int	 ci_start(const struct policy *);
void	 ci_event(const struct event *);
void	 ci_drop(void);

/* ---- cron.c ---------------------------------------------------------- */
/*
 * -Q, --quiet-unless-failed, the cron mode: each attempt's output and
 * retry's lines held in a file, shown only if the run fails; a listener
 * of the run's events.
 */
int	 cron_start(int64_t);
void	 cron_event(const struct event *);
void	 cron_end(int);
void	 cron_drop(void);

/* ---- notify.c -------------------------------------------------------- */
/*
 * NOTIFY_SOCKET: the run's state as systemd's STATUS= line, never more;
 * a listener of the run's events.
 */
int	 notify_start(const struct policy *, const char *);
void	 notify_event(const struct event *);
void	 notify_drop(void);

/* ---- metrics.c ------------------------------------------------------- */
/*
 * --metrics FILE: the run in Prometheus's text format, for
 * node_exporter's textfile collector; a listener of the run's events.
 */
void	 metrics_start(const char *);
void	 metrics_event(const struct event *);
void	 metrics_drop(void);

/* ---- trace.c --------------------------------------------------------- */
/*
 * --trace FILE: the run and its attempts as OpenTelemetry spans, a line
 * of OTLP/JSON appended at its end; each attempt's TRACEPARENT.  A
 * listener of the run's events.
 */
void	 trace_start(const struct policy *);
void	 trace_event(const struct event *);

/* ---- report.c -------------------------------------------------------- */
/*
 * The JSON report of a run (--report FILE), a listener of its events:
 * attempts are kept in memory as their delays are known, and the whole
 * object is written at the end by outfile.c (a new file renamed over
 * FILE, or a device or FIFO written in place).
 */
struct report {
	const char	*path;		/* "-": stderr */
	struct outfile	 out;		/* else where it goes */
	FILE		*spool;		/* the attempts so far, in memory */
	char		*attempts_text;
	size_t		 attempts_len;
	long		 attempts;
	FILE		*waits;		/* the waits so far, likewise */
	char		*waits_text;
	size_t		 waits_len;
	long		 nwaits;
	FILE		*changes;	/* the circuit's changes, likewise */
	char		*changes_text;
	size_t		 changes_len;
	long		 nchanges;
	const char	*store;		/* "store" member, or NULL: none */
	char		*text;		/* "-": the object, built in memory */
	size_t		 text_len;
};

/* One attempt; times in ns from the start, delay < 0 when none followed. */
struct attempt_record {
	long		 number;
	int64_t		 start, duration, delay;
	int		 status, termsig, timed_out, from_hint;
	int		 reset;		/* --reset-after started the schedule afresh */
	int64_t		 started_at;	/* real time */
	int		 error;		/* it could not start: errno, or 0 */
};

void	report_start(const char *);
void	report_event(const struct event *);
void	report_drop(void);
void	json_string(FILE *, const char *);
/* The report's words for a wait's reason and a circuit's change. */
extern const char *const report_wait_keys[NWAIT_REASONS];
extern const char *const report_change_keys[NCIRCUIT_CHANGES];

int	report_open(struct report *, const char *);
int	report_attempt(struct report *, const struct attempt_record *);
/* What the report says of the whole run. */
struct report_end {
	char *const	*argv;
	int64_t		 started_at;	/* real time */
	const char	*key, *circuit, *store_url;	/* or NULL */
	const char	*run_id;
	const char	*job_name;	/* --job, or NULL */
	const struct job_end *job;	/* with it: what the run made of it */
	const char	*outcome;
	int		 passed_after_retries, status, signal;
	int64_t		 total;
	int64_t		 until;		/* "-": a stalled stderr waited for */
};

int	report_wait(struct report *, int64_t, int64_t, const char *);
int	report_change(struct report *, int64_t, const char *);
int	report_finish(struct report *, const struct report_end *);
void	report_abandon(struct report *);

struct circuit_view;
int	report_status(struct report *, const char *, const struct circuit_view *,
	    int);

/* A job's history, as --job-status shows it (job.c). */
struct job_view {
	long		 failed;	/* failed runs in a row */
	int64_t		 since;		/* real time of the first of them, ns */
	int64_t		 success;	/* of the last success, or 0 */
	int64_t		 alert;		/* of the last alert, or 0 */
	int		 alerting;	/* an alert since the last success */
	long		 alert_after;	/* the last run's --alert-after */
	int		 found;		/* there is a history */
	int		 on_store;	/* place is the store's URL */
	const char	*place;		/* else the directory of the records */
	const char	*state;		/* "healthy", "failing" or "alerting" */
};

int	report_job_status(struct report *, const char *,
	    const struct job_view *, int);

/* ---- job.c ---------------------------------------------------------- */
/*
 * --job NAME: the job's history across runs, in the state directory or on
 * the store, and the rule of --alert-after that makes a run's end a
 * tolerated failure, an alert or a recovery (retry-circuit(7) JOBS).
 */
void	 job_open(const struct policy *);
int	 job_run_ended(const struct policy *, struct verdict *, int64_t);
int	 job_command(const struct policy *);

/* ---- hooks.c --------------------------------------------------------- */
/*
 * The hooks (--on-retry, --on-giveup, --on-success): a command for
 * /bin/sh -c run at a point of the run's story, with that point's facts
 * in its environment.
 */
int	 hook_run(const struct event *, enum hook);
int	 hooks_want_log(const struct policy *);

#endif
