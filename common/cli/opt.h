/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command-line options from one table per command.
 *
 * A command describes each option once (struct tsync_opt: names, type,
 * default, range, help); from that table this module builds the getopt
 * description, the usage text and the checks every option shares: numbers
 * parsed by one parser and held to their range, choices matched against
 * their names, a single-value option given twice refused, and defaults
 * applied from the table when an option is absent. What a value means is
 * left to the command's handler, called once per occurrence (and once with
 * the default for an absent option that has one).
 */
#ifndef TSYNC_COMMON_OPT_H
#define TSYNC_COMMON_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum tsync_opt_type {
	TSYNC_OPT_FLAG,		/* no value */
	TSYNC_OPT_INT,		/* integer in [min, max] */
	TSYNC_OPT_DOUBLE,	/* decimal number, min < value <= max */
	TSYNC_OPT_STRING,	/* any text; the handler checks it */
	TSYNC_OPT_CHOICE,	/* one of choices[]; its index is the value */
	TSYNC_OPT_HELP,		/* prints the usage to stdout */
};

/* Flags of an option. */
#define TSYNC_OPT_REPEAT	0x1	/* may be given more than once (any
					 * other option with a value given
					 * twice is a usage error) */
#define TSYNC_OPT_SCOPED	0x2	/* once per scope (see NEW_SCOPE) */
#define TSYNC_OPT_NEW_SCOPE	0x4	/* starts a scope: SCOPED options may
					 * be given again after it */
#define TSYNC_OPT_OPTIONAL	0x8	/* the value may be left out */
#define TSYNC_OPT_UNSUPPORTED	0x10	/* known (another program's option)
					 * but refused: "option -x is not
					 * supported: <help>"; not in the usage */
#define TSYNC_OPT_STOP		0x20	/* parsing stops before it: its
					 * index is returned as an operand's */

struct tsync_opt {
	int id;			/* handed to the handler; 0 ends the table */
	const char *name;	/* long name without "--", or NULL */
	char short_name;	/* or 0 */
	enum tsync_opt_type type;
	unsigned int flags;
	const char *arg;	/* the value's name in the usage ("N", "FILE") */
	const char *def;	/* default applied when absent, or NULL */
	const char *def_text;	/* the default in words (what --help shows, also
				 * when def gives the value to store) */
	double min, max;	/* range of INT and DOUBLE */
	const char *const *choices; /* CHOICE: NULL-terminated */
	const char *help;
};

/* One value as the handler gets it. */
struct tsync_opt_val {
	const char *str;	/* the text (NULL for a FLAG or an omitted
				 * optional value) */
	long long num;		/* INT: the number; CHOICE: the index */
	double dbl;		/* DOUBLE: the number */
	bool is_default;	/* applied from the table, not given */
};

/*
 * Handler: called for each option occurrence, in command-line order, then
 * for each absent option with a default. Returns 0, or -1 with @err set to
 * why @v is refused.
 */
typedef int (*tsync_opt_fn)(void *ctx, const struct tsync_opt *o,
			    const struct tsync_opt_val *v, char *err, size_t errlen);

struct tsync_opt_cmd {
	const char *prog;	/* for messages: "tsync-host sync" */
	const char *synopsis;	/* usage lines before the options */
	const char *epilogue;	/* usage lines after them, or NULL */
	const struct tsync_opt *opts;
	bool stop_at_operand;	/* options end at the first operand */
};

/* Results of tsync_opt_parse() other than an operand index. */
#define TSYNC_OPT_BAD_VALUE	(-1)	/* a value refused; @err says why */
#define TSYNC_OPT_HELP_SHOWN	(-2)	/* usage printed for a HELP option */
#define TSYNC_OPT_BAD_SYNTAX	(-3)	/* unknown option or missing value */

/*
 * Parses @argv against @cmd, calling @fn for each value, then for each
 * absent option with a default. Returns the index of the first operand,
 * or one of the negative results above (@err set, or for HELP_SHOWN the
 * usage printed to @out).
 */
int tsync_opt_parse(const struct tsync_opt_cmd *cmd, int argc, char **argv,
		    tsync_opt_fn fn, void *ctx, FILE *out, char *err, size_t errlen);

/*
 * tsync_opt_parse() for main(): exits 0 after --help, 2 on a usage error
 * (the message on stderr, and the usage too for an unknown option); else
 * returns the index of the first operand.
 */
int tsync_opt_parse_or_exit(const struct tsync_opt_cmd *cmd, int argc, char **argv,
			    tsync_opt_fn fn, void *ctx);

/* Prints @cmd's usage text, generated from its table, to @f. */
void tsync_opt_usage(const struct tsync_opt_cmd *cmd, FILE *f);

/*
 * The one number parser: a decimal integer (@decimal false) or a decimal
 * number (@decimal true) held to @o's range. Returns 0, or -1 with @err
 * set ("expected a number from 1 to 4096").
 */
int tsync_opt_number(const struct tsync_opt *o, const char *s, struct tsync_opt_val *v,
		     char *err, size_t errlen);

/* "--name" or "-c": how messages name @o. */
const char *tsync_opt_name(const struct tsync_opt *o, char *buf, size_t len);

#endif
