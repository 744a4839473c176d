// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of trace-cmd's kvm time-sync messages (proto/tcmd_kvm.c):
 * the bytes trace-cmd's host and guest put on the wire (its struct
 * kvm_clock_offset_msg in memory order after the TIME_SYNC header), and
 * the refusal of hostile payloads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/tcmd.h"

/* A RESPONSE as trace-cmd's host sends it on x86 (little-endian): be32
 * size 64, cmd 9 (TIME_SYNC), cmd_size 20; "kvm" padded to 16; be32 id 2;
 * then ts 0x1122334455, offset -5, scaling 1, frac 0 as native int64. */
static const uint8_t resp_bytes[] = {
	0, 0, 0, 64, 0, 0, 0, 9, 0, 0, 0, 20,
	'k', 'v', 'm', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 2,
	0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0,
	0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	1, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0,
};

static void test_kvm_known_bytes(void **state)
{
	const struct tcmd_kvm_msg k = { .ts = 0x1122334455, .offset = -5, .scaling = 1 };
	uint8_t buf[128];
	struct tcmd_msg m;
	struct tcmd_err e;
	ssize_t n;

	(void)state;
	n = tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE, &k);
	assert_int_equal(n, sizeof(resp_bytes));
	assert_memory_equal(buf, resp_bytes, sizeof(resp_bytes));
	assert_int_equal(tcmd_decode(resp_bytes, sizeof(resp_bytes), &m, &e), 0);
	assert_int_equal(m.cmd, TCMD_TIME_SYNC);
	assert_string_equal(m.ts.proto, TCMD_PROTO_KVM);
	assert_int_equal(m.ts.id, TCMD_KVM_RESPONSE);
	assert_true(m.ts.kvm.ts == 0x1122334455 && m.ts.kvm.offset == -5 &&
		    m.ts.kvm.scaling == 1 && m.ts.kvm.frac == 0);
}

static void test_kvm_roundtrip(void **state)
{
	/* a REQUEST as trace-cmd's guest sends it: ts only */
	const struct tcmd_kvm_msg req = { .ts = INT64_MAX };
	/* a scaled answer: ratio 1.5 in 48 bits */
	const struct tcmd_kvm_msg resp = { .ts = 7, .offset = INT64_MIN,
					   .scaling = 422212465065984, .frac = 48 };
	uint8_t buf[128];
	struct tcmd_msg m;
	ssize_t n;

	(void)state;
	n = tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_REQUEST, &req);
	assert_int_equal(n, TCMD_HDR_LEN + 20 + TCMD_KVM_MSG_LEN);
	assert_int_equal(tcmd_decode(buf, (size_t)n, &m, NULL), 0);
	assert_int_equal(m.ts.id, TCMD_KVM_REQUEST);
	assert_true(m.ts.kvm.ts == INT64_MAX && !m.ts.kvm.offset && !m.ts.kvm.scaling);
	n = tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE, &resp);
	assert_int_equal(tcmd_decode(buf, (size_t)n, &m, NULL), 0);
	assert_memory_equal(&m.ts.kvm, &resp, sizeof(resp));
	assert_int_equal(tcmd_enc_kvm(buf, 40, TCMD_KVM_REQUEST, &req), -ENOSPC);
}

static void test_kvm_enc_rejects(void **state)
{
	uint8_t buf[128];

	(void)state;
	assert_int_equal(tcmd_enc_kvm(buf, sizeof(buf), 3, &(struct tcmd_kvm_msg){ 0 }),
			 -EINVAL);
	assert_int_equal(tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_REQUEST,
				      &(struct tcmd_kvm_msg){ .ts = -1 }), -EINVAL);
	assert_int_equal(tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE,
				      &(struct tcmd_kvm_msg){ .scaling = 0 }), -EINVAL);
	assert_int_equal(tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE,
				      &(struct tcmd_kvm_msg){ .scaling = 1, .frac = 64 }),
			 -EINVAL);
	assert_int_equal(tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE,
				      &(struct tcmd_kvm_msg){ .scaling = 1, .frac = -1 }),
			 -EINVAL);
}

/* Decodes @msg with byte @at set to @v (and the size fixed by @len). */
static int dec_patched(size_t len, size_t at, uint8_t v, struct tcmd_err *e)
{
	uint8_t b[sizeof(resp_bytes) + 8];
	struct tcmd_msg m;

	memset(b, 0, sizeof(b));
	memcpy(b, resp_bytes, len < sizeof(resp_bytes) ? len : sizeof(resp_bytes));
	b[3] = (uint8_t)len;
	if (at < sizeof(b))
		b[at] = v;
	return tcmd_decode(b, len, &m, e);
}

static void test_kvm_dec_rejects(void **state)
{
	struct tcmd_err e;

	(void)state;
	/* payload one byte short, one byte long */
	assert_int_equal(dec_patched(sizeof(resp_bytes) - 1, 999, 0, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "payload is 31 bytes, expected 32"));
	assert_int_equal(dec_patched(sizeof(resp_bytes) + 1, 999, 0, &e), -EBADMSG);
	/* unknown id 3 */
	assert_int_equal(dec_patched(sizeof(resp_bytes), 31, 3, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "unknown message"));
	/* negative ts (top byte of the native int64) */
	assert_int_equal(dec_patched(sizeof(resp_bytes), 39, 0x80, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "negative timestamp"));
	/* scaling 0 */
	assert_int_equal(dec_patched(sizeof(resp_bytes), 48, 0, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "scaling below 1"));
	/* frac 64 */
	assert_int_equal(dec_patched(sizeof(resp_bytes), 56, 64, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "fraction bits"));
	/* the valid message itself */
	assert_int_equal(dec_patched(sizeof(resp_bytes), 999, 0, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kvm_known_bytes),
		cmocka_unit_test(test_kvm_roundtrip),
		cmocka_unit_test(test_kvm_enc_rejects),
		cmocka_unit_test(test_kvm_dec_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
