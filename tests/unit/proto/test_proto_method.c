// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the sync method negotiation of tsync's hello (proto/):
 * the appended fields' bytes, the agent's pick, the host's check, and the
 * decoder's answers to hostile values. With TSYNC_PROTO_CORPUS=DIR set it
 * also writes fuzz seeds with the fields (DIR/fuzz_proto_msg/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/proto.h"

#define KVM_BIT TSYNC_METHOD_BIT(TSYNC_METHOD_KVM)
#define PROBES_BIT TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES)

/* A control HELLO offering @methods (with CAP_SYNC_METHOD when @cap). */
static void hello(struct tsync_msg *m, bool cap, uint32_t methods)
{
	tsync_msg_init(m, TSYNC_MSG_HELLO);
	m->hello.ver_min = 1;
	m->hello.ver_max = 1;
	m->hello.kind = TSYNC_CONN_CONTROL;
	m->hello.caps = TSYNC_CAP_TRACE | (cap ? TSYNC_CAP_SYNC_METHOD : 0);
	m->hello.methods = methods;
}

/* A HELLO_REPLY taking @method (with CAP_SYNC_METHOD when @cap). */
static void reply(struct tsync_msg *m, bool cap, uint8_t method)
{
	tsync_msg_init(m, TSYNC_MSG_HELLO_REPLY);
	m->hello_reply.version = 1;
	m->hello_reply.ver_min = 1;
	m->hello_reply.ver_max = 1;
	m->hello_reply.caps = TSYNC_CAP_TRACE | (cap ? TSYNC_CAP_SYNC_METHOD : 0);
	m->hello_reply.method = method;
}

/* Encodes @m into @buf (at least 128 bytes); returns the length. */
static size_t enc(const struct tsync_msg *m, uint8_t *buf)
{
	size_t len;

	assert_int_equal(tsync_msg_encode(m, buf, 128, &len), 0);
	return len;
}

/* Decodes the payload of the message in @buf (@len bytes, the header's
 * length field ignored) from an exact heap copy; returns the result. */
static int dec(const uint8_t *buf, size_t len, struct tsync_msg *m)
{
	struct tsync_hdr h = { TSYNC_MAGIC, 1, buf[5], 0, (uint32_t)(len - TSYNC_HDR_LEN) };
	struct tsync_proto_err e = { 0 };
	uint8_t *copy = malloc(h.len ? h.len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, buf + TSYNC_HDR_LEN, h.len);
	ret = tsync_msg_decode(&h, copy, h.len, NULL, m, &e);
	free(copy);
	if (ret) {
		assert_int_equal(e.code, ret);
		assert_true(e.reason[0] != '\0');
	}
	return ret;
}

/* The bytes: the offer's be32 right after the nonce (payload offset 84),
 * the choice's u8 and three reserved bytes after the MAC (offset 72);
 * without the capability neither is sent (version 1's layout). */
static void test_bytes(void **state)
{
	uint8_t buf[128];
	struct tsync_msg m, d;
	size_t len;

	(void)state;
	hello(&m, true, PROBES_BIT | KVM_BIT);
	len = enc(&m, buf);
	assert_int_equal(len, TSYNC_HDR_LEN + 88);
	assert_int_equal(buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11], 88);
	assert_memory_equal(buf + TSYNC_HDR_LEN + 84, "\0\0\0\3", 4);
	assert_int_equal(buf[TSYNC_HDR_LEN + 7], TSYNC_CAP_TRACE | TSYNC_CAP_SYNC_METHOD);
	assert_int_equal(dec(buf, len, &d), 0);
	assert_int_equal(d.hello.methods, PROBES_BIT | KVM_BIT);

	hello(&m, false, PROBES_BIT | KVM_BIT);	/* no cap: no field */
	assert_int_equal(enc(&m, buf), TSYNC_HDR_LEN + TSYNC_HELLO_LEN);

	reply(&m, true, TSYNC_METHOD_KVM);
	len = enc(&m, buf);
	assert_int_equal(len, TSYNC_HDR_LEN + 76);
	assert_memory_equal(buf + TSYNC_HDR_LEN + 72, "\1\0\0\0", 4);
	assert_int_equal(dec(buf, len, &d), 0);
	assert_int_equal(d.hello_reply.method, TSYNC_METHOD_KVM);

	reply(&m, false, TSYNC_METHOD_KVM);
	assert_int_equal(enc(&m, buf), TSYNC_HDR_LEN + TSYNC_HELLO_REPLY_LEN);
}

/* Version 1 peers that predate the field: an old agent decodes a new
 * HELLO (the extension rule: bytes after its fields ignored), a new
 * host decodes an old HELLO_REPLY (no cap: probes), and a new agent an
 * old HELLO (no cap: nothing offered, nothing answered). */
static void test_old_peers(void **state)
{
	uint8_t buf[128];
	struct tsync_msg m, d;
	uint8_t method = 99;
	size_t len;

	(void)state;
	hello(&m, true, PROBES_BIT | KVM_BIT);
	len = enc(&m, buf);
	/* an old agent reads 84 bytes of it and ignores the unknown cap bit:
	 * what it sees is a valid version 1 HELLO */
	assert_int_equal(dec(buf, TSYNC_HDR_LEN + TSYNC_HELLO_LEN + 4, &d), 0);
	reply(&d, false, 0);
	assert_int_equal(tsync_proto_check_method(&m.hello, &d.hello_reply, &method, NULL, 0), 0);
	assert_int_equal(method, TSYNC_METHOD_PROBES);

	hello(&m, false, 0);
	len = enc(&m, buf);
	assert_int_equal(dec(buf, len, &d), 0);
	assert_int_equal(d.hello.caps & TSYNC_CAP_SYNC_METHOD, 0);
	assert_int_equal(d.hello.methods, 0);
}

/* The agent's pick: the first row of TSYNC_SYNC_METHODS in both sets. */
static void test_pick(void **state)
{
	(void)state;
	assert_int_equal(tsync_method_pick(PROBES_BIT | KVM_BIT, KVM_BIT), TSYNC_METHOD_KVM);
	assert_int_equal(tsync_method_pick(PROBES_BIT | KVM_BIT, 0), TSYNC_METHOD_PROBES);
	assert_int_equal(tsync_method_pick(PROBES_BIT, KVM_BIT), TSYNC_METHOD_PROBES);
	/* later methods' bits, on either side, are not picked */
	assert_int_equal(tsync_method_pick(0xfffffffcu | PROBES_BIT, 0xfffffffcu),
			 TSYNC_METHOD_PROBES);
	assert_int_equal(tsync_method_pick(0xffffffffu, 0xffffffffu), TSYNC_METHOD_KVM);
	/* an offer without probes (the decoder refuses it) still gets probes */
	assert_int_equal(tsync_method_pick(0, KVM_BIT), TSYNC_METHOD_PROBES);
}

/* The host's check: the agent takes one of the offered methods. */
static void test_check(void **state)
{
	struct tsync_msg h, r;
	uint8_t method;
	char err[256];

	(void)state;
	hello(&h, true, PROBES_BIT | KVM_BIT);
	reply(&r, true, TSYNC_METHOD_KVM);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, err,
						  sizeof(err)), 0);
	assert_int_equal(method, TSYNC_METHOD_KVM);
	reply(&r, true, TSYNC_METHOD_PROBES);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, err,
						  sizeof(err)), 0);
	assert_int_equal(method, TSYNC_METHOD_PROBES);

	hello(&h, true, PROBES_BIT);	/* kvm not offered, taken */
	reply(&r, true, TSYNC_METHOD_KVM);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, err,
						  sizeof(err)), TSYNC_PERR_BAD_VALUE);
	assert_string_equal(err, "the agent took sync method kvm (1), which this host did "
			    "not offer (offer 0x1)");
	assert_int_equal(method, TSYNC_METHOD_PROBES);
	/* no cap in the HELLO: nothing was offered, an answer is a lie */
	hello(&h, false, PROBES_BIT | KVM_BIT);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, err,
						  sizeof(err)), TSYNC_PERR_BAD_VALUE);
	reply(&r, true, 200);
	hello(&h, true, 0xffffffffu);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, err,
						  sizeof(err)), TSYNC_PERR_BAD_VALUE);
	assert_int_equal(tsync_proto_check_method(&h.hello, &r.hello_reply, &method, NULL, 0),
			 TSYNC_PERR_BAD_VALUE);
}

/* Hostile values: a cap without its field, an offer without probes, an
 * unknown method taken; unknown offer bits and reserved bytes pass. */
static void test_hostile(void **state)
{
	uint8_t buf[128];
	struct tsync_msg m, d;
	size_t len;

	(void)state;
	hello(&m, true, PROBES_BIT);
	len = enc(&m, buf);
	for (size_t cut = 1; cut <= 4; cut++)
		assert_int_equal(dec(buf, len - cut, &d), TSYNC_PERR_TRUNCATED);
	buf[TSYNC_HDR_LEN + 87] = 0;	/* offer 0 */
	assert_int_equal(dec(buf, len, &d), TSYNC_PERR_BAD_VALUE);
	buf[TSYNC_HDR_LEN + 87] = KVM_BIT;	/* kvm alone */
	assert_int_equal(dec(buf, len, &d), TSYNC_PERR_BAD_VALUE);
	buf[TSYNC_HDR_LEN + 2] = TSYNC_CONN_DATA;	/* on a data hello too */
	assert_int_equal(dec(buf, len, &d), TSYNC_PERR_BAD_VALUE);
	buf[TSYNC_HDR_LEN + 2] = TSYNC_CONN_CONTROL;
	memset(buf + TSYNC_HDR_LEN + 84, 0xff, 4);	/* later methods: fine */
	assert_int_equal(dec(buf, len, &d), 0);
	assert_int_equal(d.hello.methods, 0xffffffffu);

	reply(&m, true, TSYNC_METHOD_KVM);
	len = enc(&m, buf);
	for (size_t cut = 1; cut <= 4; cut++)
		assert_int_equal(dec(buf, len - cut, &d), TSYNC_PERR_TRUNCATED);
	buf[TSYNC_HDR_LEN + 72] = 2;	/* no such method */
	assert_int_equal(dec(buf, len, &d), TSYNC_PERR_BAD_VALUE);
	buf[TSYNC_HDR_LEN + 72] = 0xff;
	assert_int_equal(dec(buf, len, &d), TSYNC_PERR_BAD_VALUE);
	buf[TSYNC_HDR_LEN + 72] = TSYNC_METHOD_PROBES;
	memset(buf + TSYNC_HDR_LEN + 73, 0xee, 3);	/* reserved: ignored */
	assert_int_equal(dec(buf, len, &d), 0);
	assert_int_equal(d.hello_reply.method, TSYNC_METHOD_PROBES);
}

/* Names and ids. */
static void test_names(void **state)
{
	uint8_t id = 77;

	(void)state;
	assert_string_equal(tsync_method_name(TSYNC_METHOD_KVM), "kvm");
	assert_string_equal(tsync_method_name(TSYNC_METHOD_PROBES), "probes");
	assert_string_equal(tsync_method_name(2), "unknown");
	assert_int_equal(tsync_method_parse("kvm", &id), 0);
	assert_int_equal(id, 1);
	assert_int_equal(tsync_method_parse("probes", &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(tsync_method_parse("ptp", &id), -EINVAL);
	assert_int_equal(tsync_method_parse(NULL, &id), -EINVAL);
	assert_true(tsync_method_known(1));
	assert_false(tsync_method_known(2));
}

/* Writes @len bytes of message @buf, after fuzz_proto_msg's context
 * byte, as seed @name under $TSYNC_PROTO_CORPUS. */
static void seed(const char *name, const uint8_t *buf, size_t len)
{
	const char *dir = getenv("TSYNC_PROTO_CORPUS");
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fuzz_proto_msg/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fputc(4, f), 4);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The fuzz seeds with the fields (only with TSYNC_PROTO_CORPUS). */
static void test_corpus(void **state)
{
	uint8_t buf[128];
	struct tsync_msg m;

	(void)state;
	if (!getenv("TSYNC_PROTO_CORPUS"))
		skip();
	hello(&m, true, PROBES_BIT | KVM_BIT);
	seed("HELLO_METHODS", buf, enc(&m, buf));
	reply(&m, true, TSYNC_METHOD_KVM);
	seed("HELLO_REPLY_METHOD", buf, enc(&m, buf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_old_peers),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
