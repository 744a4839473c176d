// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command-line options from one table per command: getopt description,
 * usage text, number parsing, repeat and default handling (see opt.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli/opt.h"

#define OPT_MAX		128	/* options per table */
#define USAGE_COL	26	/* where the help text starts */
#define USAGE_WIDTH	79

/* Returns the number of entries of @opts. */
static int opt_count(const struct tsync_opt *opts)
{
	int n = 0;

	while (opts[n].id)
		n++;
	return n;
}

const char *tsync_opt_name(const struct tsync_opt *o, char *buf, size_t len)
{
	if (o->name)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

/* Prints a number of a range without a useless ".0". */
static void fmt_num(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

int tsync_opt_number(const struct tsync_opt *o, const char *s, struct tsync_opt_val *v,
		     char *err, size_t errlen)
{
	char lo[32], hi[32], *end;
	bool ok;

	fmt_num(lo, sizeof(lo), o->min);
	fmt_num(hi, sizeof(hi), o->max);
	errno = 0;
	if (o->type == TSYNC_OPT_DOUBLE) {
		v->dbl = strtod(s, &end);
		ok = !errno && end != s && !*end && isfinite(v->dbl) &&
		     v->dbl > o->min && v->dbl <= o->max;
		if (!ok)
			snprintf(err, errlen, "expected a number above %s, at most %s", lo, hi);
	} else {
		v->num = strtoll(s, &end, 10);
		ok = !errno && end != s && !*end && v->num >= (long long)o->min &&
		     v->num <= (long long)o->max;
		if (!ok)
			snprintf(err, errlen, "expected a number from %s to %s", lo, hi);
	}
	return ok ? 0 : -1;
}

/* Matches @s against @o's choices into @v; 0 or -1 with @err set. */
static int opt_choice(const struct tsync_opt *o, const char *s, struct tsync_opt_val *v,
		      char *err, size_t errlen)
{
	size_t off;

	for (int i = 0; o->choices[i]; i++) {
		if (!strcmp(s, o->choices[i])) {
			v->num = i;
			return 0;
		}
	}
	off = (size_t)snprintf(err, errlen, "expected");
	for (int i = 0; o->choices[i] && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, "%s %s",
					i ? (o->choices[i + 1] ? "," : " or") : "",
					o->choices[i]);
	return -1;
}

/* Turns the text @s (NULL: no value) of @o into @v and hands it to @fn. */
static int opt_deliver(const struct tsync_opt_cmd *cmd, const struct tsync_opt *o,
		       const char *s, bool is_default, tsync_opt_fn fn, void *ctx,
		       char *err, size_t errlen)
{
	struct tsync_opt_val v = { .str = s, .is_default = is_default };
	char why[256] = "", name[64], given[128];
	int ret = 0;

	/* the handler may take the value apart in place (argv is writable) */
	snprintf(given, sizeof(given), "%s", s ? s : "");
	if (s && o->type == TSYNC_OPT_CHOICE)
		ret = opt_choice(o, s, &v, why, sizeof(why));
	else if (s && (o->type == TSYNC_OPT_INT || o->type == TSYNC_OPT_DOUBLE))
		ret = tsync_opt_number(o, s, &v, why, sizeof(why));
	if (!ret)
		ret = fn(ctx, o, &v, why, sizeof(why));
	if (ret) {
		tsync_opt_name(o, name, sizeof(name));
		if (s)
			snprintf(err, errlen, "%s: invalid value '%s' for %s: %s", cmd->prog,
				 given, name, why);
		else
			snprintf(err, errlen, "%s: %s: %s", cmd->prog, name, why);
		return -1;
	}
	return 0;
}

/* Builds getopt_long's short-option string and long-option array. */
static void opt_getopt_tables(const struct tsync_opt_cmd *cmd, char *shorts,
			      struct option *longs)
{
	const struct tsync_opt *o;
	int nl = 0;

	*shorts++ = cmd->stop_at_operand ? '+' : ':';
	if (cmd->stop_at_operand)
		*shorts++ = ':';
	for (o = cmd->opts; o->id; o++) {
		int has = o->type == TSYNC_OPT_FLAG || o->type == TSYNC_OPT_HELP ?
			  no_argument : o->flags & TSYNC_OPT_OPTIONAL ?
			  optional_argument : required_argument;

		if (o->short_name) {
			*shorts++ = o->short_name;
			if (has != no_argument)
				*shorts++ = ':';
			if (has == optional_argument)
				*shorts++ = ':';
		}
		if (o->name)
			longs[nl++] = (struct option){ o->name, has, NULL,
						       (int)(o - cmd->opts) + 256 };
	}
	*shorts = '\0';
	longs[nl] = (struct option){ 0 };
}

/* Finds the table entry getopt_long returned @c for, or NULL. */
static const struct tsync_opt *opt_find(const struct tsync_opt_cmd *cmd, int c)
{
	if (c >= 256)
		return &cmd->opts[c - 256];
	for (const struct tsync_opt *o = cmd->opts; o->id; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* Describes the option getopt_long refused (@c is '?' or ':'). */
static void opt_refused(const struct tsync_opt_cmd *cmd, char **argv, int c,
			char *err, size_t errlen)
{
	char word[128];

	/* optopt is the short option's letter, or 0 / >= 256 for a long one */
	if (optopt > 0 && optopt < 256)
		snprintf(word, sizeof(word), "-%c", optopt);
	else
		snprintf(word, sizeof(word), "%s", argv[optind - 1]);
	if (c == ':')
		snprintf(err, errlen, "%s: option '%s' needs a value", cmd->prog, word);
	else
		snprintf(err, errlen, "%s: unknown option '%s'", cmd->prog, word);
}

/* Marks @o given; refuses a second occurrence of a single-value option
 * (within its scope, for a SCOPED one). A flag may be repeated: it has no
 * value to contradict. */
static int opt_count_seen(const struct tsync_opt_cmd *cmd, const struct tsync_opt *o,
			  int *seen, char *err, size_t errlen)
{
	int i = (int)(o - cmd->opts);
	char name[64];

	if (o->flags & TSYNC_OPT_NEW_SCOPE)
		for (int j = 0; cmd->opts[j].id; j++)
			if (cmd->opts[j].flags & TSYNC_OPT_SCOPED)
				seen[j] = 0;
	if (seen[i]++ && !(o->flags & TSYNC_OPT_REPEAT) && o->type != TSYNC_OPT_FLAG) {
		snprintf(err, errlen, "%s: %s given twice%s", cmd->prog,
			 tsync_opt_name(o, name, sizeof(name)),
			 o->flags & TSYNC_OPT_SCOPED ? " for the same target" : "");
		return -1;
	}
	return 0;
}

/* A STOP option @o was met in argv[@at]: returns @at, where the caller
 * resumes, if @o starts that word (not inside "-xA" or "-A" glued to a
 * value of another option). */
static int opt_stop(const struct tsync_opt_cmd *cmd, const struct tsync_opt *o,
		    char **argv, int at, char *err, size_t errlen)
{
	char name[64];
	const char *w = argv[at];

	if ((o->short_name && w[0] == '-' && w[1] == o->short_name) ||
	    (o->name && !strncmp(w, "--", 2) && !strncmp(w + 2, o->name, strlen(o->name))))
		return at;
	snprintf(err, errlen, "%s: %s must be a word of its own, not part of '%s'", cmd->prog,
		 tsync_opt_name(o, name, sizeof(name)), w);
	return TSYNC_OPT_BAD_SYNTAX;
}

static int opt_parse_locked(const struct tsync_opt_cmd *cmd, int argc, char **argv,
			    tsync_opt_fn fn, void *ctx, FILE *out, char *err, size_t errlen);

/*
 * getopt_long() keeps its state in globals (optind, optarg, its position
 * in a word), and the agent parses option words of several sessions at
 * once: one parse at a time.
 */
static pthread_mutex_t getopt_lock = PTHREAD_MUTEX_INITIALIZER;

int tsync_opt_parse(const struct tsync_opt_cmd *cmd, int argc, char **argv,
		    tsync_opt_fn fn, void *ctx, FILE *out, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&getopt_lock);
	ret = opt_parse_locked(cmd, argc, argv, fn, ctx, out, err, errlen);
	pthread_mutex_unlock(&getopt_lock);
	return ret;
}

/* tsync_opt_parse() with the getopt lock held. */
static int opt_parse_locked(const struct tsync_opt_cmd *cmd, int argc, char **argv,
			    tsync_opt_fn fn, void *ctx, FILE *out, char *err, size_t errlen)
{
	int n = opt_count(cmd->opts), ever[OPT_MAX] = { 0 }, seen[OPT_MAX] = { 0 };
	int stop = -1;
	struct option longs[OPT_MAX + 1];
	char shorts[3 * OPT_MAX + 3];
	int c;

	if (n > OPT_MAX) {
		snprintf(err, errlen, "%s: option table too large", cmd->prog);
		return TSYNC_OPT_BAD_SYNTAX;
	}
	opt_getopt_tables(cmd, shorts, longs);
	optind = 0;	/* glibc: start afresh (the table may differ) */
	opterr = 0;
	for (int at = 1; (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;
	     at = optind) {
		const struct tsync_opt *o = c == '?' || c == ':' ? NULL : opt_find(cmd, c);

		if (!o) {
			opt_refused(cmd, argv, c, err, errlen);
			return TSYNC_OPT_BAD_SYNTAX;
		}
		if (o->flags & TSYNC_OPT_STOP) {
			stop = opt_stop(cmd, o, argv, at, err, errlen);
			if (stop < 0)
				return stop;
			break;
		}
		if (o->flags & TSYNC_OPT_UNSUPPORTED) {
			char name[64];

			snprintf(err, errlen, "%s: option %s is not supported: %s", cmd->prog,
				 tsync_opt_name(o, name, sizeof(name)), o->help);
			return TSYNC_OPT_BAD_VALUE;
		}
		if (o->type == TSYNC_OPT_HELP) {
			tsync_opt_usage(cmd, out);
			return TSYNC_OPT_HELP_SHOWN;
		}
		if (opt_count_seen(cmd, o, seen, err, errlen))
			return TSYNC_OPT_BAD_VALUE;
		ever[o - cmd->opts] = 1;
		if (opt_deliver(cmd, o, o->type == TSYNC_OPT_FLAG ? NULL : optarg, false,
				fn, ctx, err, errlen))
			return TSYNC_OPT_BAD_VALUE;
	}
	for (int i = 0; i < n; i++) {
		const struct tsync_opt *o = &cmd->opts[i];

		if (!ever[i] && o->def &&
		    opt_deliver(cmd, o, o->def, true, fn, ctx, err, errlen))
			return TSYNC_OPT_BAD_VALUE;
	}
	return stop >= 0 ? stop : optind;
}

int tsync_opt_parse_or_exit(const struct tsync_opt_cmd *cmd, int argc, char **argv,
			    tsync_opt_fn fn, void *ctx)
{
	char err[512];
	int ret = tsync_opt_parse(cmd, argc, argv, fn, ctx, stdout, err, sizeof(err));

	if (ret == TSYNC_OPT_HELP_SHOWN)
		exit(0);
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		if (ret == TSYNC_OPT_BAD_SYNTAX)
			tsync_opt_usage(cmd, stderr);
		exit(2);
	}
	return ret;
}

/* Writes @o's "-c, --name ARG" column into @buf. */
static void usage_left(const struct tsync_opt *o, char *buf, size_t len)
{
	bool optional = o->flags & TSYNC_OPT_OPTIONAL;
	size_t off;

	if (o->short_name)
		off = (size_t)snprintf(buf, len, "  -%c%s", o->short_name, o->name ? ", " : "");
	else
		off = (size_t)snprintf(buf, len, "      ");
	if (o->name && off < len)
		off += (size_t)snprintf(buf + off, len - off, "--%s", o->name);
	if (o->arg && off < len)
		snprintf(buf + off, len - off, optional ? (o->name ? "[=%s]" : "[%s]") : " %s",
			 o->arg);
}

/* Writes @o's help sentence and its "(repeatable, range, default)" note. */
static void usage_text(const struct tsync_opt *o, char *buf, size_t len)
{
	const char *def = o->def_text ? o->def_text : o->def;
	char lo[32], hi[32], note[256] = "";
	size_t n = 0;

#define NOTE(...) (n += (size_t)snprintf(note + n, n < sizeof(note) ? sizeof(note) - n : 0, \
					 __VA_ARGS__))
	if (o->flags & TSYNC_OPT_REPEAT)
		NOTE("repeatable");
	if (o->type == TSYNC_OPT_INT) {
		fmt_num(lo, sizeof(lo), o->min);
		fmt_num(hi, sizeof(hi), o->max);
		NOTE("%s%s-%s", n ? ", " : "", lo, hi);
	}
	for (int i = 0; o->type == TSYNC_OPT_CHOICE && o->choices[i]; i++)
		NOTE("%s%s", i ? "|" : n ? ", " : "", o->choices[i]);
	if (def)
		NOTE("%sdefault %s", n ? ", " : "", def);
#undef NOTE
	snprintf(buf, len, "%s%s%s%s", o->help, *note ? " (" : "", note, *note ? ")" : "");
}

/* Prints @text word-wrapped from column @col; the cursor is at @at. */
static void usage_wrap(FILE *f, const char *text, int at, int col)
{
	bool first = true;

	/* a left column too wide for @col: the text follows it after two spaces */
	at += fprintf(f, "%*s", at + 2 > col ? 2 : col - at, "");
	while (*text) {
		int w = (int)strcspn(text, " ");

		if (w && !first && at + 1 + w > USAGE_WIDTH)
			at = fprintf(f, "\n%*s", col, "") - 1;
		else if (w && !first)
			at += fprintf(f, " ");
		at += fprintf(f, "%.*s", w, text);
		first = first && !w;
		text += w + (text[w] == ' ');
	}
	fputc('\n', f);
}

void tsync_opt_usage(const struct tsync_opt_cmd *cmd, FILE *f)
{
	char left[128], text[1024];

	fputs(cmd->synopsis, f);
	for (const struct tsync_opt *o = cmd->opts; o->id; o++) {
		if (o->flags & TSYNC_OPT_UNSUPPORTED)
			continue;
		usage_left(o, left, sizeof(left));
		usage_text(o, text, sizeof(text));
		fputs(left, f);
		usage_wrap(f, text, (int)strlen(left), USAGE_COL);
	}
	if (cmd->epilogue)
		fputs(cmd->epilogue, f);
}
