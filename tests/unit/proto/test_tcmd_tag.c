// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of tsync-agent's name in trace-cmd's TRACE_RESP
 * (proto/tcmd_tag.c): the tagged message is the untagged one with 16
 * bytes more in its struct, decodes to the same fields and ports (as
 * trace-cmd, which skips a longer struct, reads it), and is told apart;
 * malformed input is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/tcmd.h"

static void test_tag_roundtrip(void **state)
{
	const struct tcmd_trace_resp r = { .cpus = 2, .page_size = 4096, .trace_id = 77,
					   .proto = "kvm", .tsync_port = 5000 };
	const uint32_t ports[] = { 6001, 6002 };
	uint8_t plain[256], tagged[256];
	struct tcmd_msg m;
	ssize_t n, t;
	uint32_t got[2];

	(void)state;
	n = tcmd_enc_trace_resp(plain, sizeof(plain), &r, ports);
	assert_true(n > 0);
	memcpy(tagged, plain, (size_t)n);
	t = tcmd_resp_tag(tagged, sizeof(tagged), (size_t)n);
	assert_int_equal(t, n + 16);
	/* header: size and cmd_size grew by 16; the tag after the 40 bytes */
	assert_int_equal(tagged[3], (uint8_t)(n + 16));
	assert_int_equal(tagged[11], 56);
	assert_memory_equal(tagged + 12, plain + 12, 40);
	assert_memory_equal(tagged + 52, "tsync-agent\0\0\0\0\0", 16);
	assert_memory_equal(tagged + 68, plain + 52, (size_t)n - 52);
	assert_int_equal(tcmd_decode(plain, (size_t)n, &m, NULL), 0);
	assert_int_equal(tcmd_resp_tagged(&m.resp), 0);
	assert_int_equal(tcmd_decode(tagged, (size_t)t, &m, NULL), 0);
	assert_int_equal(tcmd_resp_tagged(&m.resp), 1);
	assert_string_equal(m.resp.proto, "kvm");
	assert_int_equal(m.resp.cpus, 2);
	assert_int_equal(m.resp.tsync_port, 5000);
	assert_int_equal(tcmd_resp_ports(&m.resp, got, 2), 0);
	assert_int_equal(got[0], 6001);
	assert_int_equal(got[1], 6002);
}

static void test_tag_rejects(void **state)
{
	const struct tcmd_trace_resp r = { .cpus = 1, .page_size = 4096 };
	const uint32_t ports[] = { 6001 };
	uint8_t b[128], c[128];
	struct tcmd_msg m;
	ssize_t n, t;

	(void)state;
	n = tcmd_enc_trace_resp(b, sizeof(b), &r, ports);
	assert_true(n > 0);
	assert_int_equal(tcmd_resp_tag(b, (size_t)n + 15, (size_t)n), -ENOSPC);
	assert_int_equal(tcmd_resp_tag(b, sizeof(b), (size_t)n - 1), -EINVAL);
	assert_int_equal(tcmd_resp_tag(b, sizeof(b), 20), -EINVAL);
	memcpy(c, b, (size_t)n);
	t = tcmd_resp_tag(c, sizeof(c), (size_t)n);
	assert_true(t > 0);
	/* tagged twice: the struct is no longer trace-cmd's length */
	assert_int_equal(tcmd_resp_tag(c, sizeof(c), (size_t)t), -EINVAL);
	/* not a TRACE_RESP */
	n = tcmd_enc_simple(c, sizeof(c), TCMD_CLOSE);
	assert_int_equal(tcmd_resp_tag(c, sizeof(c), (size_t)n), -EINVAL);
	/* a different 16 bytes: not the tag */
	memcpy(c, b, sizeof(b));
	t = tcmd_resp_tag(c, sizeof(c), (size_t)tcmd_enc_trace_resp(c, sizeof(c), &r, ports));
	c[52] = 'T';
	assert_int_equal(tcmd_decode(c, (size_t)t, &m, NULL), 0);
	assert_int_equal(tcmd_resp_tagged(&m.resp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tag_roundtrip),
		cmocka_unit_test(test_tag_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
