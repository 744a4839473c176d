// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A top tracefs instance that someone uses: refused with the reason
 * unless taken, and taken, its tracer and events given back. Needs
 * tracefs (root); skipped without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <tracefs.h>

#include "common/tracefs/instance.h"
#include "common/tracefs/topstate.h"

#define TRACING "/sys/kernel/tracing"
#define SWITCH "events/sched/sched_switch/enable"

/* Reads the first line of top file @file into @buf. */
static void read_top(const char *file, char *buf, size_t len)
{
	char *txt = tracefs_instance_file_read(NULL, file, NULL);

	assert_non_null(txt);
	snprintf(buf, len, "%.*s", (int)strcspn(txt, "\n"), txt);
	free(txt);
}

/* Writes @val to top file @file. */
static void write_top(const char *file, const char *val)
{
	assert_true(tracefs_instance_file_write(NULL, file, val) >= 0);
}

/* True if the top buffer holds our marker @mark. */
static bool holds(const char *mark)
{
	char *txt = tracefs_instance_file_read(NULL, "trace", NULL);
	bool ret = txt && strstr(txt, mark);

	free(txt);
	return ret;
}

/* Tries to borrow the top instance without taking it in use; it must be
 * refused with a reason containing @want. */
static void refused(const char *want)
{
	struct tsync_instance *ti = NULL;
	char why[256] = "";

	assert_int_equal(tsync_instance_create_top(false, &ti, why, sizeof(why)),
			 -EADDRINUSE);
	assert_null(ti);
	if (!strstr(why, want))
		fail_msg("reason '%s' lacks '%s'", why, want);
}

static void test_in_use(void **state)
{
	char mark[64], val[64], on[8], why[256];
	struct tsync_instance *ti;
	char *tracers;
	bool blk;

	(void)state;
	if (access(TRACING "/trace", W_OK)) {
		printf("skipped: no tracefs\n");
		skip();
	}
	if (tsync_topstate_in_use(why, sizeof(why))) {
		printf("skipped: the top instance is in use already (%s)\n", why);
		skip();
	}
	tracers = tracefs_instance_file_read(NULL, "available_tracers", NULL);
	blk = tracers && strstr(tracers, "blk");
	free(tracers);
	read_top("tracing_on", on, sizeof(on));
	write_top("tracing_on", "1");

	/* someone's data, then an event, then a tracer */
	snprintf(mark, sizeof(mark), "tsync-test-topstate-%d", (int)getpid());
	write_top("trace_marker", mark);
	refused("its buffer holds ");
	write_top(SWITCH, "1");
	refused("1 event enabled (sched:sched_switch)");
	if (blk) {
		write_top("current_tracer", "blk");
		refused("current_tracer is blk");
	}

	/* taken: a clean start, and theirs given back at the end */
	assert_int_equal(tsync_instance_create_top(true, &ti, why, sizeof(why)), 0);
	read_top("current_tracer", val, sizeof(val));
	assert_string_equal(val, "nop");
	read_top(SWITCH, val, sizeof(val));
	assert_string_equal(val, "0");
	assert_false(holds(mark));
	assert_int_equal(tsync_instance_destroy(ti), 0);
	read_top(SWITCH, val, sizeof(val));
	assert_string_equal(val, "1");
	read_top("current_tracer", val, sizeof(val));
	assert_string_equal(val, blk ? "blk" : "nop");
	read_top("tracing_on", val, sizeof(val));
	assert_string_equal(val, "1");
	assert_false(holds(mark));	/* the buffer is not given back */

	write_top("current_tracer", "nop");
	write_top(SWITCH, "0");
	write_top("tracing_on", on);
	write_top("trace", "");		/* sched_switch's events since */
	assert_false(tsync_topstate_in_use(why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_use),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
