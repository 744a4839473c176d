// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/cmd/status.c: the status line from synthetic numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/cmd/status.h"

/* Host and two guests: units scale, a guest before its first round says
 * "off -", a synced one its offset and error. */
static void test_line(void **state)
{
	struct status_src src[3] = {
		{ .name = "host", .bytes = 12900000, .events = 45678, .lost = 0 },
		{ .name = "vm1", .bytes = 999, .events = 999, .lost = 12, .lost_min = true,
		  .guest = true,
		  .rounds = 3, .offset_ns = -1234, .error_ns = 56 },
		{ .name = "vm2", .bytes = 3ull << 30, .events = 2500000000ull, .guest = true },
	};
	char buf[512];
	size_t n;

	(void)state;
	n = status_format(buf, sizeof(buf), 83500000000LL, src, 3, 0);
	assert_string_equal(buf, "0:01:23 | host 12.3 MiB 45.7k ev lost 0 | vm1 999 B 999 ev "
			    "lost 12+ off -1234 err 56 ns | vm2 3.0 GiB 2.5G ev lost 0 off -");
	assert_int_equal(n, strlen(buf));
	/* hours; the host alone; 1024 B is 1.0 KiB */
	src[0].bytes = 1024;
	src[0].events = 1000;
	n = status_format(buf, sizeof(buf), (3600LL * 26 + 61) * 1000000000LL, src, 1, 0);
	assert_string_equal(buf, "26:01:01 | host 1.0 KiB 1.0k ev lost 0");
	/* negative elapsed time (a clock step) shows 0 */
	status_format(buf, sizeof(buf), -5, src, 1, 0);
	assert_string_equal(buf, "0:00:00 | host 1.0 KiB 1.0k ev lost 0");
}

/* The line is cut one column short of the terminal and of the buffer. */
static void test_cut(void **state)
{
	struct status_src s = { .name = "host", .bytes = 1, .events = 2, .lost = 3 };
	char buf[512], small[12];

	(void)state;
	assert_int_equal(status_format(buf, sizeof(buf), 0, &s, 1, 20), 19);
	assert_string_equal(buf, "0:00:00 | host 1 B ");
	assert_int_equal(status_format(small, sizeof(small), 0, &s, 1, 0), 11);
	assert_string_equal(small, "0:00:00 | h");
	assert_int_equal(status_format(buf, 0, 0, &s, 1, 0), 0);
}

/* The legend names both loss columns and what each counts. */
static void test_legend(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	status_print_legend(f);
	fclose(f);
	assert_non_null(strstr(text, "lost: events the ring buffer\n  overwrote before they "
				     "were read"));
	assert_non_null(strstr(text, "dropped: events the kernel discarded because the ring "
				     "buffer was full"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_legend),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
