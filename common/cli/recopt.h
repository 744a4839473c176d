/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one parser of `trace-cmd record` options, for one scope.
 *
 * A trace-cmd command line is the host's options, then for each guest an
 * -A and the options that apply to that guest, then COMMAND. This module
 * parses one of those parts into a struct tsync_recopt, each option with
 * trace-cmd's meaning (tracecmd/trace-record.c parse_record_options()):
 *
 *   TSYNC_RECOPT_HOST   the part before the first -A of `tsync-host
 *                       record`: every option, tsync's own included.
 *                       Parsing stops at an -A or at COMMAND.
 *   TSYNC_RECOPT_GUEST  the part after one -A (the -A and its value
 *                       excluded): the options of one guest's instance,
 *                       --name, and tsync's own options (--duration,
 *                       --stamp, --key-file, --guest-max-mb), which
 *                       trace-cmd does not have and which apply to the
 *                       whole recording wherever they are. Parsing stops
 *                       at the next -A or at COMMAND. What the guest's
 *                       agent receives is tsync_recopt_instance_argv().
 *   TSYNC_RECOPT_AGENT  an argv that an agent received (from tsync-host,
 *                       or a trace-cmd host's TRACE_REQ): as GUEST, but
 *                       an -A or an operand is an error.
 *
 * Options trace-cmd has and tsync does not are known to the parser and
 * refused with "option X is not supported: <why>"; an option that applies
 * to the whole recording, given after an -A, is refused with a message
 * saying so. Nothing is silently ignored. Defaults (output trace.dat,
 * clock local, ...) are those of the HOST scope's table; other scopes
 * leave a field unset (0 / NULL / -1) when its option is absent.
 *
 * Pure: no I/O. Every string is copied: the result does not point into
 * argv. tsync-host(1) documents each option.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/cli/
 *   recopt.c, recopt.h  the one parser of trace-cmd record options, per scope
 *   recopt_table.c      its table: one row per option, with their checks
 *   recopt_priv.h       what recopt.c and recopt_table.c share
 *   opt.c, opt.h        command-line options from one table per command
 */
#ifndef TSYNC_COMMON_RECOPT_H
#define TSYNC_COMMON_RECOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/base/log.h"
#include "common/tracefs/instance_opts.h"

enum tsync_recopt_scope {
	TSYNC_RECOPT_HOST,
	TSYNC_RECOPT_GUEST,
	TSYNC_RECOPT_AGENT,
};

/* One -e, in command-line order. */
struct tsync_recopt_event {
	char *name;		/* "system:event", "system", "all" (-a too) */
	char *filter;		/* the -f after it, several joined as
				 * trace-cmd does: "(f1)&&(f2)"; or NULL */
	bool negate;		/* after a -v: disable it (trace-cmd: every
				 * -e after a -v in the same scope) */
};

/* trace-cmd's --verbose levels (TEP_LOG_*). */
enum tsync_recopt_verbose {
	TSYNC_RECOPT_LOG_UNSET = -1,
	TSYNC_RECOPT_LOG_NONE, TSYNC_RECOPT_LOG_CRIT, TSYNC_RECOPT_LOG_ERR,
	TSYNC_RECOPT_LOG_WARN, TSYNC_RECOPT_LOG_INFO, TSYNC_RECOPT_LOG_DEBUG,
	TSYNC_RECOPT_LOG_ALL,
};

struct tsync_recopt {
	/* --- the instance: host, or a guest (HOST, GUEST, AGENT) --- */
	struct tsync_recopt_event *events;	/* -e, -f, -v, -a */
	int nevents;
	/* -p (spaces trimmed), -l, -n, -g (with ":mod:M" after a --module),
	 * --max-graph-depth, -P, -c, -O and -T ("stacktrace") in order, -M
	 * (hex as given), -b, --cmdlines-size */
	struct tsync_instance_opts inst;
	char *module;			/* --module: ":mod:M" appended to -l/-n/-g
					 * after it; alone: "-l :mod:M" */
	bool filter_command;		/* -F: only COMMAND (HOST only) */
	bool ignore_missing;		/* -i: an -e matching nothing is skipped */
	bool no_filter;			/* --no-filter: keep our own threads */
	int sleep_us;			/* -s, -1: unset */
	bool sleep_given;		/* -s was given (not its default) */
	int rt_prio;			/* -r, 0: unset */
	int verbose;			/* --verbose[=LEVEL], -1: unset */
	bool quiet;			/* -q, --quiet */
	bool borrow_top_in_use;		/* --borrow-top-in-use (HOST only) */
	char *name;			/* --name (GUEST, AGENT) */
	char *vm;			/* --vm: the guest's QEMU, a PID or a
					 * -name (GUEST) */
	bool disable_function;		/* -d (tsync never enables the function
					 * tracer on its own) */
	bool keep;			/* -k (tsync's instance is its own) */
	char *ts_offset;		/* --ts-offset as given (an integer in C
					 * notation, checked), for the file's
					 * OFFSET option; or NULL (HOST, GUEST) */

	/* --- the whole recording (HOST only) --- */
	char *clock;			/* -C, default "local" */
	bool clock_given;		/* -C was given */
	char *output;			/* -o, default "trace.dat" */
	char *user;			/* --user: COMMAND runs as this user */
	bool has_tsync_interval;	/* --tsync-interval given */
	int tsync_interval_ms;		/* trace-cmd: 0 start and end only,
					 * negative: no synchronization */
	int file_version;		/* --file-version, 0: unset (also AGENT:
					 * the metadata a trace-cmd host gets) */
	char *compression;		/* --compression, or NULL (likewise) */
	uint32_t max_kb;		/* -m: each per-CPU file keeps the newest
					 * half to all of KB; 0: unset */

	/* --- tsync's own (HOST only) --- */
	double duration;		/* --duration, 0: no limit */
	int stamp;			/* --stamp: index into its choices,
					 * tsync_stamp_names[] (proto/proto.h),
					 * -1: unset */
	char *key_file;			/* --key-file */
	uint32_t guest_max_mb;		/* --guest-max-mb, default 4096 */
	char *tsync_method;		/* --tsync-method, or NULL: auto */
	char *clock_daemon;		/* --clock-daemon, or NULL: auto */
	char *ptp4l_socket;		/* --ptp4l-socket, or NULL: the default */
	char *chrony_socket;		/* --chrony-socket, or NULL: the default */
	bool has_guest_max_mb;		/* given (0 is a value: no cap) */
};

/* The choices of --tsync-method, NULL-terminated: "auto", then the names
 * of host/sync's methods (its unit test checks that they agree). */
extern const char *const tsync_method_choices[];

/* Results of tsync_recopt_parse() other than an index. */
#define TSYNC_RECOPT_ERROR	(-1)	/* @err says why */
#define TSYNC_RECOPT_HELP	(-2)	/* usage printed (HOST only) */

/*
 * Parses @argv[1..@argc-1] (argv[0] is skipped, as a program name) in
 * @scope into @r, which must be zeroed or tsync_recopt_init()ed first
 * (several calls for the same scope add up: the caller does not do
 * that). Returns the index in @argv where parsing stopped: @argc, an -A
 * (HOST, GUEST), or COMMAND's first word (HOST, GUEST); or
 * TSYNC_RECOPT_ERROR with @err set ("tsync-host record: ..."), or
 * TSYNC_RECOPT_HELP after printing the usage to @out. On error @r may
 * hold part of the values: tsync_recopt_free() it.
 */
int tsync_recopt_parse(struct tsync_recopt *r, enum tsync_recopt_scope scope,
		       int argc, char **argv, FILE *out, char *err, size_t errlen);

/* Sets @r's unset markers (-1 fields); no allocation. */
void tsync_recopt_init(struct tsync_recopt *r);

/* Frees what @r holds and re-initializes it. */
void tsync_recopt_free(struct tsync_recopt *r);

/*
 * Moves the options of the whole recording that a guest's part @g (GUEST
 * scope) holds (tsync's own, -o, -m, --file-version, ...: given after an
 * -A, they still apply to the whole recording) into @run, the host's
 * part: each one given replaces @run's. What @run held goes with @g.
 */
void tsync_recopt_take_run(struct tsync_recopt *run, struct tsync_recopt *g);

/*
 * Reads an -A value's start in @argv[@at] ("-A", "-AVALUE"): returns the
 * value and sets *@next to the index after it, or NULL if the value is
 * missing.
 */
const char *tsync_recopt_agent_value(int argc, char **argv, int at, int *next);

/*
 * Builds the argv (argv[0] "record", NULL-terminated) that gives an
 * instance the settings of @r, for an agent: the instance options only
 * (no --name, no whole-recording option), each as its parser reads it
 * back. Returns 0 and *@argv / *@argc (tsync_recopt_argv_free()), or
 * -ENOMEM.
 */
int tsync_recopt_instance_argv(const struct tsync_recopt *r, char ***argv, int *argc);

/* Frees what tsync_recopt_instance_argv() made. */
void tsync_recopt_argv_free(char **argv, int argc);

/* Prints the usage of `tsync-host record`, generated from the table. */
void tsync_recopt_usage(FILE *f);

/*
 * Reads trace-cmd's --verbose LEVEL as trace-cmd reads it: a name by its
 * first letters (none, crit, err, warn, info, debug, all: "warning" is
 * warn), or a number of any size (above 6: all); NULL: info. Returns the
 * level (TSYNC_RECOPT_LOG_*) or -EINVAL.
 */
int tsync_recopt_verbose_level(const char *s);
/* What tsync_recopt_verbose_level() refuses gets this message. */
#define TSYNC_RECOPT_VERBOSE_EXPECTED \
	"expected none, crit, err, warn, info, debug, all or a number"

/* tsync's log level for trace-cmd's @verbose (none, crit and err: errors
 * only; debug and all: debug; unset: info). */
enum tsync_log_level tsync_recopt_log_level(int verbose);

#endif
