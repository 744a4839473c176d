// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/cmd/json_out.c: the exact text of sync samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/cmd/json_out.h"
#include "host/sync/sync.h"

/* Prints @doc with host_json_print() and compares it to @want. */
static void assert_printed(struct json_object *doc, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(host_json_print(f, doc), 0);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_round_ok(void **state)
{
	struct sync_result r = {
		.round = 3, .cpu = 1, .host_cpu = 2, .guest_ts = 1000, .offset_ns = -42,
		.scaling = 1, .error_ns = 7, .round_ns = 1234567,
		.probes = { .delay_ns = 900, .used = 10, .valid = 12, .sent = 16,
			    .stop = TSYNC_STOP_CONVERGED },
	};

	(void)state;
	assert_printed(host_json_sync_round(&r),
		       "{ \"round\": 3, \"cpu\": 1, \"host_cpu\": 2, \"ok\": true, "
		       "\"offset_ns\": -42, \"scaling\": 1, \"frac\": 0, \"error_ns\": 7, "
		       "\"delay_ns\": 900, \"used\": 10, \"valid\": 12, \"sent\": 16, "
		       "\"stop\": \"converged\", \"guest_ts\": 1000, \"round_ms\": 1.235 }\n");
	/* a method without probes: unknowns are null */
	r.probes = (struct sync_probes){ 0 };
	r.error_ns = SYNC_UNKNOWN;
	assert_printed(host_json_sync_round(&r),
		       "{ \"round\": 3, \"cpu\": 1, \"host_cpu\": 2, \"ok\": true, "
		       "\"offset_ns\": -42, \"scaling\": 1, \"frac\": 0, \"error_ns\": null, "
		       "\"delay_ns\": null, \"used\": null, \"valid\": null, \"sent\": 0, "
		       "\"stop\": \"none\", \"guest_ts\": 1000, \"round_ms\": 1.235 }\n");
}

/* A failed sample's reason, escaped by json-c: quotes, backslashes and
 * control characters kept, slashes not escaped. */
static void test_round_failed(void **state)
{
	struct sync_result r = { .round = 1, .cpu = 0, .host_cpu = -1, .status = -5 };

	(void)state;
	snprintf(r.error, sizeof(r.error), "agent said \"no\\way\"\tat /sys\n");
	assert_printed(host_json_sync_round(&r),
		       "{ \"round\": 1, \"cpu\": 0, \"host_cpu\": -1, \"ok\": false, "
		       "\"error\": \"agent said \\\"no\\\\way\\\"\\tat /sys\\n\" }\n");
}

static void test_values(void **state)
{
	const struct host_json_kv kv[] = {
		{ "s", host_json_str("") }, { "n", host_json_ns(-1) },
		{ "c", host_json_count(0) }, { "f", host_json_fixed(2.5, 4) },
		{ "b", host_json_bool(7) },
	};

	(void)state;
	assert_printed(host_json_object(kv, sizeof(kv) / sizeof(kv[0])),
		       "{ \"s\": null, \"n\": null, \"c\": null, \"f\": 2.5000, \"b\": true }\n");
	assert_int_equal(host_json_add(NULL, "x", host_json_int(1)), -ENOMEM);
	assert_int_equal(host_json_append(NULL, host_json_int(1)), -ENOMEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_ok),
		cmocka_unit_test(test_round_failed),
		cmocka_unit_test(test_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
