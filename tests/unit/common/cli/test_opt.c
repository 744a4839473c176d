// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option tables: the one number parser (ranges, garbage, decimals),
 * choices, a single-value option given twice refused (per scope for scoped
 * ones), repeatable options, optional values, defaults applied only to
 * absent options, unknown options, and the generated usage text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/cli/opt.h"

enum { O_NUM = 1, O_DBL, O_STR, O_LIST, O_POLL, O_OPT, O_SCOPE, O_SIZE, O_FLAG, O_HELP };

static const char *const polls[] = { "sleep", "busy", "auto", NULL };

static const struct tsync_opt opts[] = {
	{ .id = O_NUM, .name = "num", .short_name = 'n', .type = TSYNC_OPT_INT, .arg = "N",
	  .def = "7", .min = 1, .max = 4096, .help = "a number" },
	{ .id = O_DBL, .name = "secs", .type = TSYNC_OPT_DOUBLE, .arg = "S", .min = 0,
	  .max = 1e7, .def_text = "no limit", .help = "seconds" },
	{ .id = O_STR, .name = "name", .type = TSYNC_OPT_STRING, .arg = "NAME",
	  .help = "a name" },
	{ .id = O_LIST, .short_name = 'e', .type = TSYNC_OPT_STRING, .arg = "EVENT",
	  .flags = TSYNC_OPT_REPEAT | TSYNC_OPT_SCOPED, .help = "an event" },
	{ .id = O_POLL, .name = "poll", .type = TSYNC_OPT_CHOICE, .choices = polls,
	  .arg = "MODE", .def = "auto", .help = "how to wait" },
	{ .id = O_OPT, .name = "opt", .short_name = 'O', .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_OPTIONAL, .arg = "VAL", .help = "optional value" },
	{ .id = O_SCOPE, .short_name = 'A', .type = TSYNC_OPT_STRING, .arg = "AGENT",
	  .flags = TSYNC_OPT_REPEAT | TSYNC_OPT_NEW_SCOPE, .help = "a guest" },
	{ .id = O_SIZE, .short_name = 'b', .type = TSYNC_OPT_INT, .arg = "KB", .min = 1,
	  .max = 100, .flags = TSYNC_OPT_SCOPED, .help = "buffer" },
	{ .id = O_FLAG, .name = "verbose", .short_name = 'v', .type = TSYNC_OPT_FLAG,
	  .help = "more" },
	{ .id = O_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	{ 0 }
};

static const struct tsync_opt_cmd cmd = {
	.prog = "prog", .synopsis = "usage: prog [OPTIONS] ARG\n", .opts = opts,
	.epilogue = "after the options\n",
};

/* What the handler saw. */
struct seen {
	long long num;
	int num_calls, num_default;
	double dbl;
	const char *name;
	int nlist, poll, flags, sizes[4], nscopes;
	const char *opt;
	int opt_calls;
};

/* tsync_opt_fn recording into struct seen; refuses the name "bad". */
static int handler(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct seen *s = ctx;

	switch (o->id) {
	case O_NUM: s->num = v->num; s->num_calls++; s->num_default = v->is_default; break;
	case O_DBL: s->dbl = v->dbl; break;
	case O_STR:
		if (!strcmp(v->str, "bad"))
			return snprintf(err, errlen, "not this one"), -1;
		s->name = v->str;
		break;
	case O_LIST: s->nlist++; break;
	case O_POLL: s->poll = (int)v->num; break;
	case O_OPT: s->opt = v->str; s->opt_calls++; break;
	case O_SCOPE: s->nscopes++; break;
	case O_SIZE: s->sizes[s->nscopes] = (int)v->num; break;
	case O_FLAG: s->flags++; break;
	}
	return 0;
}

/* The words after "prog", NULL-terminated. */
#define W(...) ((const char *[]){ __VA_ARGS__, NULL })

/* Parses @words (after "prog") into @s; returns the result of
 * tsync_opt_parse() and leaves its message in @err. */
static int parse(struct seen *s, char *err, size_t errlen, const char *const *words)
{
	char *argv[32] = { (char *)"prog" };
	int argc = 1;

	while (argc < 31 && words[argc - 1]) {
		argv[argc] = (char *)words[argc - 1];
		argc++;
	}
	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return tsync_opt_parse(&cmd, argc, argv, handler, s, stdout, err, errlen);
}

static void test_numbers_in_range(void **state)
{
	struct tsync_opt_val v;
	char err[128];

	(void)state;
	assert_int_equal(tsync_opt_number(&opts[0], "1", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, 1);
	assert_int_equal(tsync_opt_number(&opts[0], "4096", &v, err, sizeof(err)), 0);
	assert_int_equal(v.num, 4096);
	static const char *const bad[] = { "0", "4097", "-1", "", "12x", "0x10", "1.5",
					   " ", "99999999999999999999", NULL };
	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		assert_int_equal(tsync_opt_number(&opts[0], bad[i], &v, err, sizeof(err)), -1);
		assert_string_equal(err, "expected a number from 1 to 4096");
	}
	assert_int_equal(tsync_opt_number(&opts[1], "0.5", &v, err, sizeof(err)), 0);
	assert_true(v.dbl == 0.5);
	assert_int_equal(tsync_opt_number(&opts[1], "1e7", &v, err, sizeof(err)), 0);
	assert_int_equal(tsync_opt_number(&opts[1], "0", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "expected a number above 0, at most 10000000");
	assert_int_equal(tsync_opt_number(&opts[1], "nan", &v, err, sizeof(err)), -1);
	assert_int_equal(tsync_opt_number(&opts[1], "inf", &v, err, sizeof(err)), -1);
	assert_int_equal(tsync_opt_number(&opts[1], "2s", &v, err, sizeof(err)), -1);
}

static void test_values_and_operands(void **state)
{
	struct seen s;
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, err, sizeof(err), W("-n", "12", "--secs=2.5", "--name", "x",
			       "--poll", "busy", "ARG")), 8);
	assert_int_equal(s.num, 12);
	assert_int_equal(s.num_calls, 1);
	assert_false(s.num_default);
	assert_true(s.dbl == 2.5);
	assert_string_equal(s.name, "x");
	assert_int_equal(s.poll, 1);
	/* operands may come first (permuted) unless stop_at_operand */
	assert_int_equal(parse(&s, err, sizeof(err), W("ARG", "--num", "3")), 3);
	assert_int_equal(s.num, 3);
}

static void test_defaults_only_when_absent(void **state)
{
	struct seen s;
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, err, sizeof(err), (const char *[]){ NULL }), 1);
	assert_int_equal(s.num, 7);
	assert_int_equal(s.num_calls, 1);
	assert_true(s.num_default);
	assert_int_equal(s.poll, 2);	/* "auto" */
	assert_true(s.dbl == 0);	/* no def, only def_text: not applied */
	assert_null(s.name);
}

static void test_bad_values(void **state)
{
	struct seen s;
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, err, sizeof(err), W("--num", "0")), TSYNC_OPT_BAD_VALUE);
	assert_string_equal(err, "prog: invalid value '0' for --num: "
			    "expected a number from 1 to 4096");
	assert_int_equal(parse(&s, err, sizeof(err), W("--poll", "spin")),
			 TSYNC_OPT_BAD_VALUE);
	assert_string_equal(err, "prog: invalid value 'spin' for --poll: "
			    "expected sleep, busy or auto");
	assert_int_equal(parse(&s, err, sizeof(err), W("--name", "bad")),
			 TSYNC_OPT_BAD_VALUE);
	assert_string_equal(err, "prog: invalid value 'bad' for --name: not this one");
	assert_int_equal(parse(&s, err, sizeof(err), W("--bogus")), TSYNC_OPT_BAD_SYNTAX);
	assert_string_equal(err, "prog: unknown option '--bogus'");
	assert_int_equal(parse(&s, err, sizeof(err), W("-z")), TSYNC_OPT_BAD_SYNTAX);
	assert_string_equal(err, "prog: unknown option '-z'");
	assert_int_equal(parse(&s, err, sizeof(err), W("--num")), TSYNC_OPT_BAD_SYNTAX);
	assert_string_equal(err, "prog: option '--num' needs a value");
	assert_int_equal(parse(&s, err, sizeof(err), W("-n")), TSYNC_OPT_BAD_SYNTAX);
	assert_string_equal(err, "prog: option '-n' needs a value");
}

static void test_repeats(void **state)
{
	struct seen s;
	char err[256];

	(void)state;
	/* a single-value option given twice, by either name */
	assert_int_equal(parse(&s, err, sizeof(err), W("-n", "1", "--num", "2")),
			 TSYNC_OPT_BAD_VALUE);
	assert_string_equal(err, "prog: --num given twice");
	assert_int_equal(parse(&s, err, sizeof(err), W("--name", "a", "--name", "a")),
			 TSYNC_OPT_BAD_VALUE);
	/* repeatable options and flags */
	assert_int_equal(parse(&s, err, sizeof(err), W("-e", "a", "-e", "b", "-v", "-v",
			       "-e", "c")), 9);
	assert_int_equal(s.nlist, 3);
	assert_int_equal(s.flags, 2);
	/* a scoped option once per scope */
	assert_int_equal(parse(&s, err, sizeof(err), W("-b", "1", "-A", "g0", "-b", "2",
			       "-A", "g1", "-b", "3")), 11);
	assert_int_equal(s.sizes[0], 1);
	assert_int_equal(s.sizes[1], 2);
	assert_int_equal(s.sizes[2], 3);
	assert_int_equal(parse(&s, err, sizeof(err), W("-A", "g0", "-b", "2", "-b", "3")),
			 TSYNC_OPT_BAD_VALUE);
	assert_string_equal(err, "prog: -b given twice for the same target");
}

static void test_optional_value(void **state)
{
	struct seen s;
	char err[256];

	(void)state;
	assert_int_equal(parse(&s, err, sizeof(err), W("--opt")), 2);
	assert_int_equal(s.opt_calls, 1);
	assert_null(s.opt);
	assert_int_equal(parse(&s, err, sizeof(err), W("--opt=x")), 2);
	assert_string_equal(s.opt, "x");
	assert_int_equal(parse(&s, err, sizeof(err), W("-Oy")), 2);
	assert_string_equal(s.opt, "y");
	/* a separate word is an operand, not the value */
	assert_int_equal(parse(&s, err, sizeof(err), W("-O", "z")), 2);
	assert_null(s.opt);
}

static void test_usage_from_table(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct seen s;
	char err[256];

	(void)state;
	assert_non_null(f);
	tsync_opt_usage(&cmd, f);
	fclose(f);
	assert_non_null(strstr(text, "usage: prog [OPTIONS] ARG\n"));
	assert_non_null(strstr(text, "\n  -n, --num N             a number (1-4096, default 7)\n"));
	assert_non_null(strstr(text, "\n      --secs S            seconds (default no limit)\n"));
	assert_non_null(strstr(text, "\n  -e EVENT                an event (repeatable)\n"));
	assert_non_null(strstr(text, "how to wait (sleep|busy|auto, default auto)\n"));
	assert_non_null(strstr(text, "\n  -O, --opt[=VAL]         optional value\n"));
	assert_non_null(strstr(text, "\n  -h, --help              this text\n"));
	assert_non_null(strstr(text, "\nafter the options\n"));
	for (char *line = text; *line; line = strchr(line, '\n') + 1)
		assert_true(strcspn(line, "\n") <= 79);
	free(text);

	/* --help prints it and says so */
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	memset(&s, 0, sizeof(s));
	assert_int_equal(tsync_opt_parse(&cmd, 2, (char *[]){ "prog", "--help", NULL },
					 handler, &s, f, err, sizeof(err)),
			 TSYNC_OPT_HELP_SHOWN);
	fclose(f);
}

/* Long help text wraps at word boundaries within 79 columns. */
static void test_usage_wraps(void **state)
{
	static const struct tsync_opt longo[] = {
		{ .id = 1, .name = "a-rather-long-option-name", .type = TSYNC_OPT_INT,
		  .arg = "NUMBER", .min = 1, .max = 10, .def = "5",
		  .help = "words words words words words words words words words words "
			  "words words words words words words words words" },
		{ 0 }
	};
	const struct tsync_opt_cmd c = { .prog = "p", .synopsis = "", .opts = longo };
	char *text = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int lines = 0;

	(void)state;
	assert_non_null(f);
	tsync_opt_usage(&c, f);
	fclose(f);
	for (line = text; *line; line = strchr(line, '\n') + 1, lines++) {
		size_t n = strcspn(line, "\n");

		assert_true(n <= 79);
		assert_true(n == 0 || line[n - 1] != ' ');
		if (lines)
			assert_int_equal(strspn(line, " "), 26);
	}
	assert_true(lines >= 2);
	assert_non_null(strstr(text, "      --a-rather-long-option-name NUMBER  words"));
	assert_non_null(strstr(text, "(1-10, default 5)\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_in_range),
		cmocka_unit_test(test_values_and_operands),
		cmocka_unit_test(test_defaults_only_when_absent),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_repeats),
		cmocka_unit_test(test_optional_value),
		cmocka_unit_test(test_usage_from_table),
		cmocka_unit_test(test_usage_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
