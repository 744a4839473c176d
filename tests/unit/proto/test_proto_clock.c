// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CLOCK_REQ and CLOCK_STATE (Documentation/protocol.md, 6.20): the wire
 * bytes of the sample, and every value the decoder refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/proto.h"
#include "proto/tsync_record.h"
#include "tests/unit/proto_samples.h"

/* Encodes sample @type into @buf (@cap bytes); returns the length. */
static size_t enc(uint8_t type, uint8_t *buf, size_t cap)
{
	struct tsync_msg m;
	size_t len;

	sample_msg(type, &m);
	assert_int_equal(tsync_msg_encode(&m, buf, cap, &len), 0);
	return len;
}

/* Decodes payload @p of @len bytes as @type; returns the decoder's result. */
static int dec(uint8_t type, const uint8_t *p, size_t len, struct tsync_msg *m)
{
	struct tsync_hdr h = { TSYNC_MAGIC, 1, type, 0, (uint32_t)len };
	struct tsync_proto_err e;
	int ret = tsync_msg_decode(&h, p, len, NULL, m, &e);

	if (ret) {
		assert_int_equal(e.code, ret);
		assert_true(e.reason[0] != 0);
	}
	return ret;
}

static void test_clock_state_bytes(void **state)
{
	static const uint8_t want[] = {
		1, 1, 0, 2,				/* ptp4l, synced, stratum 2 */
		0, 0, 0, 0,				/* status */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xdb,	/* offset -37 */
		0, 0, 0, 0, 0, 0, 0x04, 0xd2,		/* bound 1234 */
	};
	uint8_t buf[512];
	size_t len = enc(TSYNC_MSG_CLOCK_STATE, buf, sizeof(buf));
	const uint8_t *p = buf + TSYNC_HDR_LEN;

	(void)state;
	assert_int_equal(buf[5], 81);
	assert_memory_equal(p, want, sizeof(want));
	/* read_ns 300 ends the fixed part, then the master string */
	assert_int_equal(p[TSYNC_CLOCK_STATE_LEN - 1], 300 & 0xff);
	assert_int_equal(p[TSYNC_CLOCK_STATE_LEN + 1], sizeof("001122.fffe.334455"));
	assert_int_equal(len, TSYNC_HDR_LEN + TSYNC_CLOCK_STATE_LEN + 2 + 19 + 2 + 6);
	len = enc(TSYNC_MSG_CLOCK_REQ, buf, sizeof(buf));
	assert_int_equal(len, TSYNC_HDR_LEN + 2 + 4);
	assert_memory_equal(buf + TSYNC_HDR_LEN, "\0\004tai", 6);
}

static void test_clock_state_rejects(void **state)
{
	uint8_t buf[512], *p = buf + TSYNC_HDR_LEN;
	size_t plen = enc(TSYNC_MSG_CLOCK_STATE, buf, sizeof(buf)) - TSYNC_HDR_LEN;
	struct tsync_msg m;

	(void)state;
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), 0);
	p[0] = TSYNC_CLOCK_SRC_MAX + 1;
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), TSYNC_PERR_BAD_VALUE);
	p[0] = TSYNC_CLOCK_SRC_NONE;	/* synchronized by no daemon */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), TSYNC_PERR_BAD_VALUE);
	p[0] = TSYNC_CLOCK_SRC_CHRONY;
	p[1] = 2;
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), TSYNC_PERR_BAD_VALUE);
	p[1] = 1;
	p[7] = 1;			/* a positive status */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), TSYNC_PERR_BAD_VALUE);
	memset(p + 4, 0xff, 4);		/* -1: synchronized, yet not read */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), TSYNC_PERR_BAD_VALUE);
	p[1] = 0;			/* not synchronized, -EPERM: fine */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m), 0);
	assert_int_equal(m.clock_state.status, -EPERM);
	assert_string_equal(m.clock_state.detail, "SLAVE");
	p[TSYNC_CLOCK_STATE_LEN + 2] = 1;	/* a control byte in master */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, plen, &m),
			 TSYNC_PERR_STRING_UNPRINTABLE);
	assert_int_equal(dec(TSYNC_MSG_CLOCK_STATE, p, TSYNC_CLOCK_STATE_LEN + 3, &m),
			 TSYNC_PERR_TOO_SHORT);
	/* CLOCK_REQ: the clock must be named */
	assert_int_equal(dec(TSYNC_MSG_CLOCK_REQ, (const uint8_t *)"\0\001", 3, &m),
			 TSYNC_PERR_STRING_EMPTY);
	assert_string_equal(tsync_clock_source_name(TSYNC_CLOCK_SRC_CHRONY), "chrony");
	assert_string_equal(tsync_clock_source_name(9), "unknown");
}

/* A daemon's state becomes a clock record (proto/tsync_record.h): the
 * header, every number, the daemon's name, texts cut to the record's
 * 64 bytes (unterminated when full) and NUL-padded, an unknown bound kept
 * unknown. */
static void test_rec_clock(void **state)
{
	struct tsync_clock_state st = { .source = TSYNC_CLOCK_SRC_CHRONY, .synced = 1,
					.stratum = 10, .status = 0, .offset_ns = -1234,
					.bound_ns = 5678 };
	struct tsync_rec_clock r;

	(void)state;
	memset(st.master, 'M', sizeof(st.master) - 1);
	strcpy(st.detail, "Normal");
	tsync_rec_clock_init(&r, &st, "guest1");
	assert_int_equal(r.hdr.id, TSYNC_RAW_ID);
	assert_int_equal(r.hdr.magic, TSYNC_REC_MAGIC);
	assert_int_equal(r.hdr.version, TSYNC_REC_VERSION);
	assert_int_equal(r.hdr.type, TSYNC_REC_CLOCK);
	assert_int_equal(r.hdr.len, sizeof(r));
	assert_int_equal(sizeof(r), 12 + 24 + 8 + 32 + 64 + 64);
	assert_int_equal(r.synced, 1);
	assert_int_equal(r.stratum, 10);
	assert_int_equal(r.offset_ns, -1234);
	assert_int_equal(r.bound_ns, 5678);
	assert_memory_equal(r.daemon, "chrony\0\0", 8);
	assert_memory_equal(r.peer, "guest1\0\0", 8);
	for (size_t i = 0; i < sizeof(r.master); i++)
		assert_int_equal(r.master[i], 'M');
	assert_memory_equal(r.detail, "Normal\0\0", 8);
	assert_int_equal(r.detail[sizeof(r.detail) - 1], 0);

	st = (struct tsync_clock_state){ .source = TSYNC_CLOCK_SRC_NONE, .status = -ENOENT,
					 .bound_ns = TSYNC_CLOCK_BOUND_UNKNOWN };
	tsync_rec_clock_init(&r, &st, "");
	assert_int_equal(r.bound_ns, TSYNC_REC_BOUND_UNKNOWN);
	assert_int_equal(r.status, -ENOENT);
	assert_int_equal(r.synced, 0);
	assert_memory_equal(r.daemon, "none\0\0\0\0", 8);
	assert_int_equal(r.peer[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_state_bytes),
		cmocka_unit_test(test_clock_state_rejects),
		cmocka_unit_test(test_rec_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
