/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of the trace-cmd record option parser shared by its two
 * files: recopt_table.c (the rows, one per option, with their checks and
 * setters) and recopt.c (the parser, storing, freeing and the words for
 * an agent, all derived from the rows). Not for use outside
 * common/cli/recopt*.c.
 */
#ifndef TSYNC_COMMON_RECOPT_PRIV_H
#define TSYNC_COMMON_RECOPT_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "common/cli/opt.h"
#include "common/cli/recopt.h"

/* The scopes of recopt.h as bits. */
#define S_HOST	0x1
#define S_GUEST	0x2
#define S_AGENT	0x4

/* Where an option is taken, and what it is for after an -A. */
enum rec_scope {
	SC_INST,	/* an instance's: the host's before the first -A, that
			 * guest's after one, an agent's */
	SC_HOST,	/* the host's or tsync-host's own: before the first -A */
	SC_RUN,		/* the whole recording's, before or after an -A (after
			 * one it still is: tsync_recopt_take_run()) */
	SC_FORMAT,	/* the files' format: as SC_RUN; and an agent's, for the
			 * metadata it sends (tsync-host asks a trace-cmd agent
			 * for version 6 this way) */
	SC_FILE,	/* a file's own: the host's, that guest's after an -A;
			 * a trace-cmd host sends it to the agent, which writes
			 * it into its metadata */
	SC_GUEST,	/* a guest's only: after an -A, and an agent's */
	SC_VM,		/* a guest's for tsync-host only: after an -A, never
			 * an agent's */
	SC_CLOCK,	/* the whole recording's trace clock; after an -A that
			 * guest's, as trace-cmd takes it (tsync-host wants the
			 * recording's there: one clock for all); a trace-cmd
			 * host sends its own to the agent */
	SC_SYNTAX,	/* -A, -h: the command line's own (the parser stops at
			 * -A, prints the usage for -h); an agent's words may
			 * not have them */
};

/* What each scope means (indexed by enum rec_scope). */
struct rec_scope_info {
	unsigned int in;	/* the scopes it is accepted in */
	bool run;		/* after an -A: the whole recording's */
};

/* How a value is kept in its field (rec_opt.off). */
enum rec_kind {
	K_NONE,		/* no field of its own (its .set does what it means) */
	K_TRUE,		/* bool, true when given */
	K_INT,		/* int: the number, or the choice's index */
	K_U32,		/* uint32_t: the number */
	K_DOUBLE,	/* double */
	K_STR,		/* char *: a copy of the text */
	K_LIST,		/* struct tsync_instance_list: the text appended */
	K_PIDS,		/* inst.pids, inst.npids: PID[,PID...] appended */
	K_EVENTS,	/* events, nevents: one -e (negated after a -v) */
};

struct parse_ctx;
struct rec_opt;

/* Checks the text @s of an option; returns what to keep (@s, a part of
 * it, or @buf of @len filled), or NULL with @err set. */
typedef const char *rec_check_fn(const struct parse_ctx *c, const char *s, char *buf,
				  size_t len, char *err, size_t errlen);
/* Gives a value its meaning where storing it by kind does not: 0, or -1
 * with @err set. */
typedef int rec_set_fn(struct parse_ctx *c, const struct rec_opt *ro,
		       const struct tsync_opt_val *v, char *err, size_t errlen);

struct rec_opt {
	size_t off;		/* the field: offsetof(struct tsync_recopt, ...) */
	size_t given;		/* 1 + the offset of a bool set when the option
				 * is given (not defaulted), or 0 */
	const char *fixed;	/* a flag's value (-a: "all", -T: "stacktrace") */
	rec_check_fn *check;	/* K_STR, K_LIST: or NULL for any text */
	rec_set_fn *set;	/* instead of storing by kind, or NULL */
	struct tsync_opt o;	/* names, type, default, range, help; the id
				 * is set per parse (the row's index + 1) */
	enum rec_scope scope;
	enum rec_kind kind;
	int unset;		/* K_INT: the field's value until given */
	bool pass;		/* an agent gets it as option words
				 * (tsync_recopt_instance_argv()) */
};

/* Parse state: the result and the scope. */
struct parse_ctx {
	struct tsync_recopt *r;
	unsigned int scope;
	bool negate;		/* a -v was seen in this scope */
};

/* The most rows rec_opts[] may have (the parser's tables are this big). */
#define REC_OPTS_MAX 128

extern const struct rec_scope_info rec_scopes[];
extern const struct rec_opt rec_opts[];
extern const size_t rec_nopts;

/* -l / -n / -g: a function glob, with ":mod:M" after a --module. */
rec_check_fn rec_check_func;

/* The field of @ro in @r. */
static inline void *rec_field(const struct tsync_recopt *r, const struct rec_opt *ro)
{
	return (char *)r + ro->off;
}

#endif
