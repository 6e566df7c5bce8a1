/* SPDX-License-Identifier: ISC */
/*
 * The command line of retry, checked and turned into a policy.  Nothing
 * here prints or exits, so that tests and the fuzzer can drive it.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "parse.h"
#include "url.h"

enum parsed { PARSED_RUN, PARSED_HELP, PARSED_VERSION, PARSED_ERROR };
enum circuit_command {
	CIRCUIT_RUN, CIRCUIT_STATUS, CIRCUIT_LIST, CIRCUIT_RESET
};
enum ci_format { CI_AUTO, CI_NONE, CI_GITHUB, CI_GITLAB };	/* --ci */

/* The hooks, in the order of --on-retry, --on-giveup and --on-success. */
enum hook { HOOK_RETRY, HOOK_GIVEUP, HOOK_SUCCESS, NHOOKS };

struct pattern {
	regex_t		 re;
	const char	*text;		/* as given, for relay's faster ways */
	int		 set;
};

/* What the command line asked for. */
struct policy {
	long		 attempts;	/* 0: unlimited */
	int64_t		 deadline;	/* ns from start; 0: none */
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
	int		 share_stdin;
	struct pattern	 on_output, stop_output;
	const char	*report;	/* file for the JSON report, "-": stderr */
	const char	*metrics;	/* file for the Prometheus metrics */
	enum ci_format	 ci;		/* --ci, auto settled by the environment */
	const char	*hooks[NHOOKS];	/* --on-retry, --on-giveup, --on-success */
	int64_t		 hook_grace;	/* ns an end hook may run past -D */
	int64_t		 reset_after;	/* ns; 0: never */
	int64_t		 splay;		/* ns; 0: none */
	const char	*circuit;	/* NAME, or NULL */
	enum circuit_command circuit_command;
	int		 tunes_circuit;	/* --trip, --cool or --budget given */
	long		 trip;
	int64_t		 cool;
	long		 budget;	/* 0: none */
	int64_t		 budget_window;
	const char	*store_text;	/* --store URL, as given */
	struct store_url store;		/* it, or RETRY_STORE's: .given */
	int64_t		 store_timeout;	/* ns */
	int		 store_closed;	/* --store-fail closed */
	int		 tunes_store;	/* --store, --store-timeout or -fail */
	enum verbosity	 verbosity;
	char		**argv;		/* the command; may be empty with dry_run */
};

extern const char help_text[];	/* the usage line and the options */

enum parsed	 parse_options(int, char *[], struct policy *, char *, size_t);
void		 free_policy(struct policy *);

#endif
