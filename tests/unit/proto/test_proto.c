// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the wire protocol (proto/): round trips of every message
 * type, and every rejection with its specific code. Payloads are always
 * decoded from a heap buffer of exactly their length so that valgrind and
 * ASan see any read past the end.
 *
 * With TSYNC_PROTO_CORPUS=DIR set, the corpus test also writes the fuzz
 * seed corpus (DIR/fuzz_proto_msg/, DIR/fuzz_proto_hdr/).
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "proto/proto.h"
#include "tests/unit/proto_samples.h"

/* Encodes sample @type into a malloc()ed buffer; returns it, @len set. */
static uint8_t *enc_sample(uint8_t type, size_t *len)
{
	struct tsync_msg m;
	uint8_t *buf;
	size_t sz;

	sample_msg(type, &m);
	assert_int_equal(tsync_msg_size(&m, &sz), 0);
	buf = malloc(sz);
	assert_non_null(buf);
	assert_int_equal(tsync_msg_encode(&m, buf, sz, len), 0);
	assert_int_equal(*len, sz);
	return buf;
}

/*
 * Decodes @len payload bytes of @type (copied to a heap buffer of exactly
 * @len bytes) with a header claiming @len. Returns the decoder's result.
 */
static int dec(uint8_t type, const uint8_t *payload, size_t len,
	       const struct tsync_decode_ctx *ctx, struct tsync_msg *m,
	       struct tsync_proto_err *e)
{
	struct tsync_hdr h = { TSYNC_MAGIC, 1, type, 0, (uint32_t)len };
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	if (len)
		memcpy(copy, payload, len);
	memset(e, 0, sizeof(*e));
	ret = tsync_msg_decode(&h, copy, len, ctx, m, e);
	free(copy);
	if (ret) {
		/* every rejection carries its code and a reason */
		assert_int_equal(e->code, ret);
		assert_true(strlen(e->reason) > 0);
	}
	return ret;
}

/* Decodes a modified sample payload; expects rejection @want. */
static void expect_reject(uint8_t type, const uint8_t *payload, size_t len,
			  const struct tsync_decode_ctx *ctx, int want)
{
	struct tsync_proto_err e;
	struct tsync_msg m;
	int ret = dec(type, payload, len, ctx, &m, &e);

	if (ret != want)
		fail_msg("%s: got %d (%s) want %d (%s): %s",
			 tsync_msg_name(type), ret, tsync_perr_name(ret), want,
			 tsync_perr_name(want), e.reason);
	/* a failed decode leaves nothing to free */
	assert_int_equal(m.type, 0);
}

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* decode(encode(m)) == m for every type, and re-encoding is byte-exact. */
static void test_roundtrip_all(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		struct tsync_msg orig, got;
		struct tsync_proto_err e;
		struct tsync_hdr h;
		uint8_t *buf, *buf2;
		size_t len, len2;
		int diff;

		sample_msg(sample_types[i], &orig);
		buf = enc_sample(sample_types[i], &len);
		assert_int_equal(tsync_hdr_decode(buf, len, &h, &e), 0);
		assert_int_equal(h.magic, TSYNC_MAGIC);
		assert_int_equal(h.version, 1);
		assert_int_equal(h.type, sample_types[i]);
		assert_int_equal(h.len, len - TSYNC_HDR_LEN);
		assert_true(h.len >= tsync_msg_min_len(h.type));
		assert_int_equal(dec(h.type, buf + TSYNC_HDR_LEN, h.len, NULL,
				     &got, &e), 0);
		diff = sample_cmp(&orig, &got);
		if (diff)
			fail_msg("%s: field %d differs after round trip",
				 tsync_msg_name(h.type), diff);
		buf2 = malloc(len);
		assert_non_null(buf2);
		assert_int_equal(tsync_msg_encode(&got, buf2, len, &len2), 0);
		assert_int_equal(len2, len);
		assert_memory_equal(buf, buf2, len);
		tsync_msg_free(&got);
		tsync_msg_free(&got);	/* idempotent */
		free(buf);
		free(buf2);
	}
}

/* Known bytes on the wire: the header layout and a PROBE. */
static void test_wire_bytes(void **state)
{
	static const uint8_t want[] = {
		0x54, 0x53, 0x59, 0x50, 1, TSYNC_MSG_PROBE, 0, 0, 0, 0, 0, 8,
		0xde, 0xad, 0xbe, 0xef, 0, 0, 0x01, 0x52,
	};
	uint8_t buf[TSYNC_PROBE_MSG_LEN], buf2[64];
	struct tsync_msg m;
	size_t len;

	(void)state;
	sample_msg(TSYNC_MSG_PROBE, &m);
	assert_int_equal(tsync_msg_encode(&m, buf2, sizeof(buf2), &len), 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(buf2, want, sizeof(want));
	assert_int_equal(tsync_probe_encode(buf, TSYNC_MSG_PROBE, 0xdeadbeefu,
					    338), TSYNC_PROBE_MSG_LEN);
	assert_memory_equal(buf, want, sizeof(want));
	tsync_probe_encode(buf, TSYNC_MSG_PROBE_REPLY, 0xdeadbeefu, 338);
	assert_int_equal(buf[5], TSYNC_MSG_PROBE_REPLY);
	/* negative stamps are two's complement big-endian */
	sample_msg(TSYNC_MSG_SYNC_STAMPS, &m);
	{
		uint8_t *b = enc_sample(TSYNC_MSG_SYNC_STAMPS, &len);
		const uint8_t *s1 = b + TSYNC_HDR_LEN + 12 + TSYNC_STAMP_LEN;

		assert_int_equal(len, TSYNC_HDR_LEN + 12 + 3 * TSYNC_STAMP_LEN);
		assert_int_equal(s1[3], 1);		/* seq 1 */
		assert_int_equal(s1[4], 0xff);		/* t2 = -5 */
		assert_int_equal(s1[11], 0xfb);
		free(b);
	}
}

/* Every truncated payload (0..full-1 bytes) is rejected, never over-read. */
static void test_truncated_all(void **state)
{
	size_t i, l;

	(void)state;
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		uint8_t type = sample_types[i];
		uint32_t min = tsync_msg_min_len(type);
		uint8_t *buf;
		size_t len, plen;

		buf = enc_sample(type, &len);
		plen = len - TSYNC_HDR_LEN;
		for (l = 0; l < plen; l++) {
			struct tsync_proto_err e;
			struct tsync_msg m;
			struct tsync_hdr h;
			uint8_t hb[TSYNC_HDR_LEN];
			int ret;

			ret = dec(type, buf + TSYNC_HDR_LEN, l, NULL, &m, &e);
			if (l < min) {
				if (ret != TSYNC_PERR_TOO_SHORT)
					fail_msg("%s len %zu: %d %s", tsync_msg_name(type),
						 l, ret, e.reason);
			} else if (ret != TSYNC_PERR_TRUNCATED &&
				   ret != TSYNC_PERR_COUNT_OVERFLOW) {
				fail_msg("%s len %zu/%zu: got %d (%s): %s",
					 tsync_msg_name(type), l, plen, ret,
					 tsync_perr_name(ret), e.reason);
			}
			/* the header check agrees on the minimum */
			memcpy(hb, buf, sizeof(hb));
			wr32(hb + 8, (uint32_t)l);
			ret = tsync_hdr_decode(hb, sizeof(hb), &h, &e);
			assert_int_equal(ret, l < min ? TSYNC_PERR_TOO_SHORT : 0);
		}
		free(buf);
	}
}

/* Bytes after the known fields are ignored (newer peers may add fields). */
static void test_trailing_ignored(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		uint8_t type = sample_types[i];
		struct tsync_msg orig, got;
		struct tsync_proto_err e;
		uint8_t *buf, *ext;
		size_t len, plen;

		sample_msg(type, &orig);
		buf = enc_sample(type, &len);
		plen = len - TSYNC_HDR_LEN;
		ext = calloc(1, plen + 7);
		assert_non_null(ext);
		memcpy(ext, buf + TSYNC_HDR_LEN, plen);
		memcpy(ext + plen, "\x01\x02\xff\0\0zz", 7);
		assert_int_equal(dec(type, ext, plen + 7, NULL, &got, &e), 0);
		assert_int_equal(sample_cmp(&orig, &got), 0);
		tsync_msg_free(&got);
		free(ext);
		free(buf);
	}
}

/* Header rejections: magic, version, type, lengths, short header. */
static void test_header_errors(void **state)
{
	struct tsync_proto_err e;
	struct tsync_hdr h;
	uint8_t *buf, hb[TSYNC_HDR_LEN];
	size_t len, i;

	(void)state;
	buf = enc_sample(TSYNC_MSG_SYNC_START, &len);
	memcpy(hb, buf, sizeof(hb));
	free(buf);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e), 0);
	assert_int_equal(e.code, 0);

	for (i = 0; i < TSYNC_HDR_LEN; i++) {
		assert_int_equal(tsync_hdr_decode(hb, i, &h, &e),
				 TSYNC_PERR_TRUNCATED);
		assert_int_equal(e.code, TSYNC_PERR_TRUNCATED);
	}

	hb[0] = 'X';
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_BAD_MAGIC);
	assert_non_null(strstr(e.reason, "magic"));
	hb[0] = 'T';
	hb[3] = 'Q';
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_BAD_MAGIC);
	hb[3] = 'P';

	hb[4] = 0;
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_BAD_VERSION);
	hb[4] = TSYNC_PROTO_VERSION_MAX + 1;
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_BAD_VERSION);
	assert_non_null(strstr(e.reason, "version 2"));
	hb[4] = 1;

	for (i = 0; i < 256; i++) {
		hb[5] = (uint8_t)i;
		if (tsync_msg_type_known((unsigned int)i))
			continue;
		assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
				 TSYNC_PERR_UNKNOWN_TYPE);
		assert_string_equal(tsync_msg_name((unsigned int)i), "UNKNOWN");
	}
	hb[5] = TSYNC_MSG_SYNC_START;

	/* lengths: above the type's max, above the global max, huge */
	wr32(hb + 8, TSYNC_SMALL_MAX + 1);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_TOO_LONG);
	wr32(hb + 8, TSYNC_SMALL_MAX);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e), 0);
	hb[5] = TSYNC_MSG_SYNC_STAMPS;
	wr32(hb + 8, TSYNC_MSG_MAX);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e), 0);
	wr32(hb + 8, TSYNC_MSG_MAX + 1);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_TOO_LONG);
	wr32(hb + 8, 0xffffffffu);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, &e),
			 TSYNC_PERR_TOO_LONG);
	/* flags are passed through */
	wr32(hb + 8, 12);
	wr16(hb + 6, 0xa5a5);
	assert_int_equal(tsync_hdr_decode(hb, sizeof(hb), &h, NULL), 0);
	assert_int_equal(h.flags, 0xa5a5);
}

/* Payload length checks inside the decoder itself. */
static void test_payload_length_errors(void **state)
{
	struct tsync_decode_ctx ctx = { .max_payload = 50 };
	struct tsync_hdr h = { TSYNC_MAGIC, 1, TSYNC_MSG_PROBE, 0, 8 };
	struct tsync_proto_err e;
	struct tsync_msg m;
	uint8_t *big, *buf;
	size_t len;

	(void)state;
	big = calloc(1, TSYNC_SMALL_MAX + 1);
	assert_non_null(big);
	/* given length differs from the header's */
	assert_int_equal(tsync_msg_decode(&h, big, 9, NULL, &m, &e),
			 TSYNC_PERR_LENGTH_MISMATCH);
	/* unknown type given straight to the payload decoder */
	h.type = 200;
	assert_int_equal(tsync_msg_decode(&h, big, 8, NULL, &m, &e),
			 TSYNC_PERR_UNKNOWN_TYPE);
	/* above the type maximum */
	expect_reject(TSYNC_MSG_PROBE, big, TSYNC_SMALL_MAX + 1, NULL,
		      TSYNC_PERR_TOO_LONG);
	/* above the context's maximum, for a big type */
	buf = enc_sample(TSYNC_MSG_SYNC_STAMPS, &len);
	assert_true(len - TSYNC_HDR_LEN > 50);
	expect_reject(TSYNC_MSG_SYNC_STAMPS, buf + TSYNC_HDR_LEN,
		      len - TSYNC_HDR_LEN, &ctx, TSYNC_PERR_TOO_LONG);
	ctx.max_payload = (uint32_t)(len - TSYNC_HDR_LEN);
	assert_int_equal(dec(TSYNC_MSG_SYNC_STAMPS, buf + TSYNC_HDR_LEN,
			     len - TSYNC_HDR_LEN, &ctx, &m, &e), 0);
	tsync_msg_free(&m);
	free(buf);
	free(big);
}

/* Counts that exceed their limit or do not fit the payload. */
static void test_count_errors(void **state)
{
	struct tsync_decode_ctx ctx = { .max_probes = 2 };
	uint8_t *buf, *p;
	size_t len, plen;

	(void)state;
	/* SYNC_STAMPS: count at offset 8 */
	buf = enc_sample(TSYNC_MSG_SYNC_STAMPS, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p + 8, 4);
	expect_reject(TSYNC_MSG_SYNC_STAMPS, p, plen, NULL,
		      TSYNC_PERR_COUNT_OVERFLOW);
	wr32(p + 8, 0x0ccccccd);	/* * 20 wraps 32 bits to 4 */
	expect_reject(TSYNC_MSG_SYNC_STAMPS, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr32(p + 8, TSYNC_MAX_PROBES + 1);
	expect_reject(TSYNC_MSG_SYNC_STAMPS, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr32(p + 8, 3);
	expect_reject(TSYNC_MSG_SYNC_STAMPS, p, plen, &ctx,
		      TSYNC_PERR_COUNT_LIMIT);
	free(buf);

	/* TRACE_STOPPED: count at offset 0 */
	buf = enc_sample(TSYNC_MSG_TRACE_STOPPED, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p, 3);
	expect_reject(TSYNC_MSG_TRACE_STOPPED, p, plen, NULL,
		      TSYNC_PERR_COUNT_OVERFLOW);
	wr32(p, 0xffffffffu);
	expect_reject(TSYNC_MSG_TRACE_STOPPED, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	free(buf);

	/* TRACE_START: nargs after the zero word (was buffer_kb), flags,
	 * clock "global" and the zero word (was nevents) */
	buf = enc_sample(TSYNC_MSG_TRACE_START, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p + 8 + 2 + 7 + 4, 200);
	expect_reject(TSYNC_MSG_TRACE_START, p, plen, NULL,
		      TSYNC_PERR_COUNT_OVERFLOW);
	wr32(p + 8 + 2 + 7 + 4, TSYNC_MAX_ARGS + 1);
	expect_reject(TSYNC_MSG_TRACE_START, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr32(p + 8 + 2 + 7 + 4, 8);	/* fits the minimum size, not the strings */
	expect_reject(TSYNC_MSG_TRACE_START, p, plen, NULL,
		      TSYNC_PERR_TRUNCATED);
	free(buf);

	/* SESSION_REPLY: nclocks after fixed 60, name "guest0", clock "local" */
	buf = enc_sample(TSYNC_MSG_SESSION_REPLY, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr16(p + 60 + 9 + 8, TSYNC_MAX_CLOCKS + 1);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr16(p + 60 + 9 + 8, 30);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_COUNT_OVERFLOW);
	free(buf);

	/* META_CHUNK: data length after kind, system "sched", more */
	buf = enc_sample(TSYNC_MSG_META_CHUNK, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p + 1 + 8 + 4, (uint32_t)sizeof(sample_meta) + 1);
	expect_reject(TSYNC_MSG_META_CHUNK, p, plen, NULL,
		      TSYNC_PERR_COUNT_OVERFLOW);
	wr32(p + 1 + 8 + 4, 0xffffffffu);
	expect_reject(TSYNC_MSG_META_CHUNK, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	free(buf);

	/* SYNC_START: nprobes 0 and above the limits */
	buf = enc_sample(TSYNC_MSG_SYNC_START, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p + 8, 0);
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr32(p + 8, TSYNC_MAX_PROBES + 1);
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_COUNT_LIMIT);
	wr32(p + 8, TSYNC_MAX_PROBES);
	{
		struct tsync_proto_err e;
		struct tsync_msg m;

		assert_int_equal(dec(TSYNC_MSG_SYNC_START, p, plen, NULL, &m,
				     &e), 0);
		assert_int_equal(m.sync_start.nprobes, TSYNC_MAX_PROBES);
	}
	wr32(p + 8, 3);
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, &ctx,
		      TSYNC_PERR_COUNT_LIMIT);
	free(buf);
}

/* String checks, on the SYNC_START clock (offset 13) and ERROR reason. */
static void test_string_errors(void **state)
{
	uint8_t *buf, *p;
	size_t len, plen;

	(void)state;
	buf = enc_sample(TSYNC_MSG_SYNC_START, &len);	/* clock "local" */
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	assert_int_equal(p[13], 0);
	assert_int_equal(p[14], 6);
	p[15 + 5] = 'x';			/* NUL replaced */
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNTERMINATED);
	p[15 + 5] = 0;
	p[15 + 2] = 0;				/* "lo\0al\0" */
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_EMBEDDED_NUL);
	p[15 + 2] = 0x01;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNPRINTABLE);
	p[15 + 2] = 0x7f;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNPRINTABLE);
	p[15 + 2] = 0xc3;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNPRINTABLE);
	p[15 + 2] = '\n';
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNPRINTABLE);
	p[15 + 2] = 'c';
	p[14] = 0;				/* length 0 */
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_UNTERMINATED);
	p[14] = 1;				/* "" then junk: empty name */
	p[15] = 0;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_EMPTY);
	p[15] = 'l';
	p[14] = 7;				/* beyond the payload */
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_TRUNCATED);
	wr16(p + 13, TSYNC_CLOCK_NAME_MAX + 1);	/* beyond the field limit */
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_TOO_LONG);
	wr16(p + 13, 0xffff);
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_STRING_TOO_LONG);
	free(buf);

	/* the longest allowed clock name passes, one more byte does not */
	{
		uint8_t pl[13 + 2 + TSYNC_CLOCK_NAME_MAX + 1];

		memcpy(pl, "\0\0\0\1\0\0\0\0\0\0\0\1\1", 13);
		wr16(pl + 13, TSYNC_CLOCK_NAME_MAX);
		memset(pl + 15, 'c', TSYNC_CLOCK_NAME_MAX - 1);
		pl[15 + TSYNC_CLOCK_NAME_MAX - 1] = 0;
		{
			struct tsync_proto_err e;
			struct tsync_msg m;

			assert_int_equal(dec(TSYNC_MSG_SYNC_START, pl,
					     15 + TSYNC_CLOCK_NAME_MAX, NULL,
					     &m, &e), 0);
			assert_int_equal(strlen(m.sync_start.clock),
					 TSYNC_CLOCK_NAME_MAX - 1);
		}
		wr16(pl + 13, TSYNC_CLOCK_NAME_MAX + 1);
		pl[15 + TSYNC_CLOCK_NAME_MAX - 1] = 'c';
		pl[15 + TSYNC_CLOCK_NAME_MAX] = 0;
		expect_reject(TSYNC_MSG_SYNC_START, pl, sizeof(pl), NULL,
			      TSYNC_PERR_STRING_TOO_LONG);
	}

	/* ERROR: unprintable reason */
	buf = enc_sample(TSYNC_MSG_ERROR, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	p[6 + 3] = 0x1b;
	expect_reject(TSYNC_MSG_ERROR, p, plen, NULL,
		      TSYNC_PERR_STRING_UNPRINTABLE);
	free(buf);

	/* TRACE_START: an unterminated word, a NUL inside one */
	buf = enc_sample(TSYNC_MSG_TRACE_START, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	{
		/* the words follow 8 + 9 + 4 + 4 bytes; the filter is the
		 * fourth, after "-e", "sched:sched_switch" and "-f" */
		uint8_t *w = p + 25 + (2 + 3) + (2 + 19) + (2 + 3);
		size_t nl = (size_t)w[0] << 8 | w[1];

		assert_int_equal(nl, sizeof(sample_filter0));
		w[2 + nl - 1] = '!';
		expect_reject(TSYNC_MSG_TRACE_START, p, plen, NULL,
			      TSYNC_PERR_STRING_UNTERMINATED);
		w[2 + nl - 1] = 0;
		w[2 + 3] = 0;
		expect_reject(TSYNC_MSG_TRACE_START, p, plen, NULL,
			      TSYNC_PERR_STRING_EMBEDDED_NUL);
	}
	free(buf);

	/* META_CHUNK: EVENT_FORMAT needs a system name, others do not */
	{
		struct tsync_msg m;
		struct tsync_proto_err e;
		uint8_t pl[12] = { TSYNC_META_EVENT_FORMAT, 0, 1, 0 };

		expect_reject(TSYNC_MSG_META_CHUNK, pl, sizeof(pl), NULL,
			      TSYNC_PERR_STRING_EMPTY);
		pl[0] = TSYNC_META_KALLSYMS;
		assert_int_equal(dec(TSYNC_MSG_META_CHUNK, pl, sizeof(pl),
				     NULL, &m, &e), 0);
		assert_int_equal(m.meta_chunk.len, 0);
		assert_null(m.meta_chunk.data);
		pl[0] = 200;	/* unknown kinds are passed on */
		assert_int_equal(dec(TSYNC_MSG_META_CHUNK, pl, sizeof(pl),
				     NULL, &m, &e), 0);
		assert_int_equal(m.meta_chunk.kind, 200);
		pl[0] = 0;
		expect_reject(TSYNC_MSG_META_CHUNK, pl, sizeof(pl), NULL,
			      TSYNC_PERR_BAD_VALUE);
	}
}

/* CPU numbers are checked against the context's CPU count everywhere. */
static void test_cpu_errors(void **state)
{
	static const struct {
		uint8_t type;
		size_t off;	/* of the CPU field in the sample payload */
	} cases[] = {
		{ TSYNC_MSG_HELLO, 16 },
		{ TSYNC_MSG_SYNC_START, 4 },
		{ TSYNC_MSG_SYNC_READY, 4 },
		{ TSYNC_MSG_SYNC_STAMPS, 4 },
		{ TSYNC_MSG_SYNC_RESULT, 4 },
		{ TSYNC_MSG_STREAM_END, 0 },
		{ TSYNC_MSG_TRACE_STOPPED, 4 + TSYNC_CPU_STATS_LEN },
	};
	struct tsync_decode_ctx ctx = { .ncpus = 4 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tsync_proto_err e;
		struct tsync_msg m;
		uint8_t *buf, *p;
		size_t len, plen;

		buf = enc_sample(cases[i].type, &len);
		p = buf + TSYNC_HDR_LEN;
		plen = len - TSYNC_HDR_LEN;
		wr32(p + cases[i].off, 3);
		assert_int_equal(dec(cases[i].type, p, plen, &ctx, &m, &e), 0);
		tsync_msg_free(&m);
		wr32(p + cases[i].off, 4);
		expect_reject(cases[i].type, p, plen, &ctx, TSYNC_PERR_BAD_CPU);
		/* unknown CPU count: only the global limit applies */
		assert_int_equal(dec(cases[i].type, p, plen, NULL, &m, &e), 0);
		tsync_msg_free(&m);
		wr32(p + cases[i].off, TSYNC_MAX_CPUS);
		expect_reject(cases[i].type, p, plen, NULL, TSYNC_PERR_BAD_CPU);
		wr32(p + cases[i].off, 0xffffffffu);
		expect_reject(cases[i].type, p, plen, &ctx, TSYNC_PERR_BAD_CPU);
		free(buf);
	}
	/* a CONTROL hello's CPU field is not a CPU number */
	{
		struct tsync_proto_err e;
		struct tsync_msg m;
		uint8_t *buf, *p;
		size_t len;

		buf = enc_sample(TSYNC_MSG_HELLO, &len);
		p = buf + TSYNC_HDR_LEN;
		p[2] = TSYNC_CONN_CONTROL;
		wr32(p + 16, 999);
		assert_int_equal(dec(TSYNC_MSG_HELLO, p, len - TSYNC_HDR_LEN,
				     &ctx, &m, &e), 0);
		free(buf);
	}
}

/* Enumerations and ranges. */
static void test_value_errors(void **state)
{
	uint8_t *buf, *p;
	size_t len, plen;

	(void)state;
	buf = enc_sample(TSYNC_MSG_HELLO, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	p[2] = 3;
	expect_reject(TSYNC_MSG_HELLO, p, plen, NULL, TSYNC_PERR_BAD_VALUE);
	p[2] = 0;
	expect_reject(TSYNC_MSG_HELLO, p, plen, NULL, TSYNC_PERR_BAD_VALUE);
	p[2] = TSYNC_CONN_DATA;
	p[0] = 2;	/* range 2..1 */
	expect_reject(TSYNC_MSG_HELLO, p, plen, NULL, TSYNC_PERR_BAD_VALUE);
	p[0] = 0;	/* range 0..1 */
	expect_reject(TSYNC_MSG_HELLO, p, plen, NULL, TSYNC_PERR_BAD_VALUE);
	p[0] = 5;	/* a future peer's range decodes (negotiation decides) */
	p[1] = 9;
	{
		struct tsync_proto_err e;
		struct tsync_msg m;

		assert_int_equal(dec(TSYNC_MSG_HELLO, p, plen, NULL, &m, &e), 0);
		assert_int_equal(m.hello.ver_min, 5);
		assert_int_equal(m.hello.ver_max, 9);
	}
	free(buf);

	buf = enc_sample(TSYNC_MSG_HELLO_REPLY, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	p[0] = 2;	/* chosen outside its own range */
	expect_reject(TSYNC_MSG_HELLO_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	p[0] = 0;
	p[1] = 0;
	expect_reject(TSYNC_MSG_HELLO_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	free(buf);

	buf = enc_sample(TSYNC_MSG_SYNC_START, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	p[12] = 0;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	p[12] = TSYNC_STAMP_TSC + 1;
	expect_reject(TSYNC_MSG_SYNC_START, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	free(buf);

	buf = enc_sample(TSYNC_MSG_SESSION_REPLY, &len);
	p = buf + TSYNC_HDR_LEN;
	plen = len - TSYNC_HDR_LEN;
	wr32(p, 0);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	wr32(p, TSYNC_MAX_CPUS + 1);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	wr32(p, 4);
	wr32(p + 4, 4000);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	wr32(p + 4, 0);
	expect_reject(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
		      TSYNC_PERR_BAD_VALUE);
	wr32(p + 4, 65536);
	{
		struct tsync_proto_err e;
		struct tsync_msg m;

		assert_int_equal(dec(TSYNC_MSG_SESSION_REPLY, p, plen, NULL,
				     &m, &e), 0);
		assert_int_equal(m.session_reply.page_size, 65536);
	}
	free(buf);

	buf = enc_sample(TSYNC_MSG_TRACE_STARTED, &len);
	p = buf + TSYNC_HDR_LEN;
	wr32(p, 0);
	expect_reject(TSYNC_MSG_TRACE_STARTED, p, 4, NULL,
		      TSYNC_PERR_BAD_VALUE);
	free(buf);

	buf = enc_sample(TSYNC_MSG_SYNC_RESULT, &len);
	p = buf + TSYNC_HDR_LEN;
	wr32(p + 32, 340);	/* used > sent */
	expect_reject(TSYNC_MSG_SYNC_RESULT, p, len - TSYNC_HDR_LEN, NULL,
		      TSYNC_PERR_BAD_VALUE);
	free(buf);
}

/* The encoder refuses what the decoder would refuse, and small buffers. */
static void test_encode_errors(void **state)
{
	struct tsync_probe_stamps many[1];
	char *words[1] = { "-e\tsched" }, **many_words = calloc(TSYNC_MAX_ARGS + 1,
								  sizeof(char *));
	struct tsync_msg m;
	uint8_t buf[2048];
	size_t len, full, cap;
	size_t i;

	(void)state;
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		sample_msg(sample_types[i], &m);
		assert_int_equal(tsync_msg_size(&m, &full), 0);
		for (cap = 0; cap < full; cap++)
			assert_int_equal(tsync_msg_encode(&m, buf, cap, &len),
					 -ENOSPC);
	}
	tsync_msg_init(&m, 0);
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_UNKNOWN_TYPE);
	sample_msg(TSYNC_MSG_PROBE, &m);
	m.version = TSYNC_PROTO_VERSION_MAX + 1;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len),
			 TSYNC_PERR_BAD_VERSION);

	sample_msg(TSYNC_MSG_SYNC_START, &m);
	memset(m.sync_start.clock, 'a', sizeof(m.sync_start.clock));
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len),
			 TSYNC_PERR_STRING_TOO_LONG);
	strcpy(m.sync_start.clock, "lo\tcal");
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len),
			 TSYNC_PERR_STRING_UNPRINTABLE);
	m.sync_start.clock[0] = 0;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len),
			 TSYNC_PERR_STRING_EMPTY);

	sample_msg(TSYNC_MSG_SYNC_STAMPS, &m);
	m.sync_stamps.stamps = many;
	m.sync_stamps.count = TSYNC_MAX_PROBES + 1;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_COUNT_LIMIT);
	sample_msg(TSYNC_MSG_TRACE_STOPPED, &m);
	m.trace_stopped.count = TSYNC_MAX_CPUS + 1;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_COUNT_LIMIT);
	sample_msg(TSYNC_MSG_SESSION_REPLY, &m);
	m.session_reply.nclocks = TSYNC_MAX_CLOCKS + 1;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_COUNT_LIMIT);
	sample_msg(TSYNC_MSG_TRACE_START, &m);
	assert_non_null(many_words);
	for (i = 0; i <= TSYNC_MAX_ARGS; i++)
		many_words[i] = "-a";
	m.trace_start.nargs = TSYNC_MAX_ARGS + 1;
	m.trace_start.args = many_words;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_COUNT_LIMIT);
	m.trace_start.nargs = TSYNC_MAX_ARGS;
	assert_int_equal(tsync_msg_size(&m, &len), 0);
	free(many_words);
	m.trace_start.nargs = 1;
	m.trace_start.args = words;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_STRING_UNPRINTABLE);
	sample_msg(TSYNC_MSG_META_CHUNK, &m);
	m.meta_chunk.kind = 0;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_BAD_VALUE);
	m.meta_chunk.kind = TSYNC_META_KALLSYMS;
	m.meta_chunk.len = TSYNC_META_CHUNK_MAX + 1;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_TOO_LONG);
}

/* A maximal TRACE_START and SYNC_STAMPS fit the limits and round-trip. */
static void test_large_messages(void **state)
{
	struct tsync_probe_stamps *st = calloc(TSYNC_MAX_PROBES, sizeof(*st));
	char **words = calloc(300, sizeof(*words));
	char *filter = malloc(TSYNC_ARG_MAX);
	struct tsync_msg m, got;
	struct tsync_proto_err e;
	uint8_t *buf;
	size_t len, i;

	(void)state;
	assert_non_null(st);
	assert_non_null(words);
	assert_non_null(filter);
	buf = malloc(TSYNC_HDR_LEN + TSYNC_MSG_MAX);
	assert_non_null(buf);
	tsync_msg_init(&m, TSYNC_MSG_SYNC_STAMPS);
	m.sync_stamps.count = TSYNC_MAX_PROBES;
	m.sync_stamps.stamps = st;
	for (i = 0; i < TSYNC_MAX_PROBES; i++) {
		st[i].seq = (uint32_t)i;
		st[i].t2 = (int64_t)i * 1000 - 7;
		st[i].t3 = -(int64_t)i;
	}
	assert_int_equal(tsync_msg_encode(&m, buf, TSYNC_HDR_LEN + TSYNC_MSG_MAX,
					  &len), 0);
	assert_int_equal(dec(m.type, buf + TSYNC_HDR_LEN, len - TSYNC_HDR_LEN,
			     NULL, &got, &e), 0);
	assert_int_equal(sample_cmp(&m, &got), 0);
	tsync_msg_free(&got);

	/* 200 words, two of three a maximal filter */
	memset(filter, 'f', TSYNC_ARG_MAX - 1);
	filter[TSYNC_ARG_MAX - 1] = 0;
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	m.trace_start.nargs = 200;
	m.trace_start.args = words;
	for (i = 0; i < 300; i++)
		words[i] = (i % 3) ? filter : "-f";
	assert_int_equal(tsync_msg_encode(&m, buf, TSYNC_HDR_LEN + TSYNC_MSG_MAX,
					  &len), 0);
	assert_true(len > 500000);
	assert_int_equal(dec(m.type, buf + TSYNC_HDR_LEN, len - TSYNC_HDR_LEN,
			     NULL, &got, &e), 0);
	assert_int_equal(sample_cmp(&m, &got), 0);
	tsync_msg_free(&got);
	/* too many maximal words exceed TSYNC_MSG_MAX */
	m.trace_start.nargs = 300;
	for (i = 0; i < 300; i++)
		words[i] = filter;
	assert_int_equal(tsync_msg_size(&m, &len), TSYNC_PERR_TOO_LONG);
	free(buf);
	free(filter);
	free(words);
	free(st);
}

/* TRACE_START carries the guest's options (TSYNC_TRACE_FL_ARGS): they
 * round-trip; more than TSYNC_MAX_ARGS or a count beyond the payload are
 * refused; without the flag no count follows. Protocol 1's first
 * encoding, an event list and a buffer size in fields of their own, is
 * refused with a reason that says how the settings go now. */
static void test_trace_args(void **state)
{
	char *args[] = { "-e", "sched", "-v", "-e", "sched:sched_switch", "", "--name", "g" };
	static const uint8_t old[] = {	/* buffer_kb 1024, flags 0, clock "local", one
					 * event "irq" without a filter */
		0, 0, 4, 0, 0, 0, 0, 0, 0, 6, 'l', 'o', 'c', 'a', 'l', 0,
		0, 0, 0, 1, 0, 4, 'i', 'r', 'q', 0, 0, 1, 0,
	};
	uint8_t buf[4096], *p = buf + TSYNC_HDR_LEN, bad[sizeof(old)];
	struct tsync_msg m, got;
	struct tsync_proto_err e;
	size_t len;

	(void)state;
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	m.trace_start.nargs = 8;
	m.trace_start.args = args;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	/* the two words of the first encoding are zero */
	assert_int_equal(p[0] | p[1] | p[2] | p[3], 0);
	assert_int_equal(p[8] << 8 | p[9], 1);	/* clock "" */
	assert_int_equal(p[11] | p[12] | p[13] | p[14], 0);
	assert_int_equal(dec(m.type, p, len - TSYNC_HDR_LEN, NULL, &got, &e), 0);
	assert_int_equal(got.trace_start.nargs, 8);
	for (int i = 0; i < 8; i++)
		assert_string_equal(got.trace_start.args[i], args[i]);
	tsync_msg_free(&got);
	/* too many words: not encoded */
	m.trace_start.nargs = TSYNC_MAX_ARGS + 1;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), TSYNC_PERR_COUNT_LIMIT);
	/* no words: the count (the last 4 bytes) is 0 */
	m.trace_start.nargs = 0;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(dec(m.type, p, len - TSYNC_HDR_LEN, NULL, &got, &e), 0);
	assert_int_equal(got.trace_start.nargs, 0);
	tsync_msg_free(&got);
	/* a count beyond the payload, and beyond the limit */
	wr32(p + len - TSYNC_HDR_LEN - 4, 2);
	expect_reject(m.type, p, len - TSYNC_HDR_LEN, NULL, TSYNC_PERR_COUNT_OVERFLOW);
	wr32(p + len - TSYNC_HDR_LEN - 4, TSYNC_MAX_ARGS + 1);
	expect_reject(m.type, p, len - TSYNC_HDR_LEN, NULL, TSYNC_PERR_COUNT_LIMIT);
	/* without the flag, nothing follows: no settings */
	m.trace_start.flags = 0;
	m.trace_start.nargs = 8;
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, TSYNC_HDR_LEN + 8 + 3 + 4);
	assert_int_equal(dec(m.type, buf + TSYNC_HDR_LEN, len - TSYNC_HDR_LEN, NULL, &got, &e), 0);
	assert_int_equal(got.trace_start.nargs, 0);
	assert_null(got.trace_start.args);
	tsync_msg_free(&got);

	/* an event list, a buffer size: refused, saying why */
	assert_int_equal(dec(TSYNC_MSG_TRACE_START, old, sizeof(old), NULL, &got, &e),
			 TSYNC_PERR_BAD_VALUE);
	assert_string_equal(e.reason, "TRACE_START: 1 events, 1024 KiB as fields: this agent "
			    "takes a guest's settings as option words only (flag ARGS, -e and -b "
			    "among them)");
	memcpy(bad, old, sizeof(old));
	bad[2] = 0;		/* the event alone */
	expect_reject(TSYNC_MSG_TRACE_START, bad, sizeof(bad), NULL, TSYNC_PERR_BAD_VALUE);
	memcpy(bad, old, sizeof(old));
	bad[19] = 0;		/* the buffer size alone, before the words */
	expect_reject(TSYNC_MSG_TRACE_START, bad, 20, NULL, TSYNC_PERR_BAD_VALUE);
}

/*
 * The receiver's header check: its payload limit, and once a version was
 * negotiated, that every message but HELLO, HELLO_REPLY and a base-version
 * ERROR carries it. Versions above 1 are synthetic here: the header decoder
 * of this build refuses them before this check.
 */
static void test_hdr_check_ctx(void **state)
{
	struct tsync_decode_ctx ctx = { .max_payload = 100 };
	struct tsync_hdr h = { .magic = TSYNC_MAGIC, .version = 1,
			       .type = TSYNC_MSG_SYNC_START, .len = 100 };
	struct tsync_proto_err e;

	(void)state;
	assert_int_equal(tsync_hdr_check_ctx(&h, NULL, &e), 0);
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	h.len = 101;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), TSYNC_PERR_TOO_LONG);
	assert_string_equal(e.reason, "SYNC_START: payload 101 bytes, limit 100");
	h.len = 20;
	ctx.version = 1;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	ctx.version = 2;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), TSYNC_PERR_BAD_VERSION);
	assert_string_equal(e.reason,
			    "SYNC_START in protocol version 1, the connection negotiated 2");
	h.version = 2;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	/* the base-version exceptions */
	h.version = 1;
	h.type = TSYNC_MSG_HELLO;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	h.type = TSYNC_MSG_HELLO_REPLY;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	h.type = TSYNC_MSG_ERROR;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), 0);
	ctx.version = 3;
	h.version = 2;
	assert_int_equal(tsync_hdr_check_ctx(&h, &ctx, &e), TSYNC_PERR_BAD_VERSION);
}

/* The host's check of the agent's choice: the highest common version. */
static void test_check_choice(void **state)
{
	struct tsync_hello_reply r = { .version = 1, .ver_min = 1, .ver_max = 1 };
	char err[256];

	(void)state;
	assert_int_equal(tsync_proto_check_choice(1, 1, &r, err, sizeof(err)), 0);
	r.ver_max = 4;
	assert_int_equal(tsync_proto_check_choice(1, 3, &r, err, sizeof(err)),
			 TSYNC_PERR_BAD_VALUE);
	assert_string_equal(err, "the agent chose protocol version 1, but the highest "
			    "both speak is 3 (agent 1..4, host 1..3)");
	r.version = 3;
	assert_int_equal(tsync_proto_check_choice(1, 3, &r, err, sizeof(err)), 0);
	r.version = 4;
	assert_int_equal(tsync_proto_check_choice(1, 3, &r, err, sizeof(err)),
			 TSYNC_PERR_BAD_VALUE);
	r.ver_min = 2;
	r.version = 2;
	assert_int_equal(tsync_proto_check_choice(1, 1, &r, err, sizeof(err)),
			 TSYNC_PERR_NO_COMMON_VERSION);
	assert_string_equal(err, "no common protocol version: the agent chose version 2 "
			    "and speaks 2..4, this host speaks 1..1");
}

/* Version negotiation picks the highest common version or names both. */
static void test_negotiate(void **state)
{
	struct tsync_msg err;
	uint8_t v = 0;

	(void)state;
	assert_int_equal(tsync_proto_negotiate(1, 1, 1, 1, &v, &err), 0);
	assert_int_equal(v, 1);
	assert_int_equal(tsync_proto_negotiate(1, 3, 2, 5, &v, NULL), 0);
	assert_int_equal(v, 3);
	assert_int_equal(tsync_proto_negotiate(2, 5, 1, 3, &v, NULL), 0);
	assert_int_equal(v, 3);
	assert_int_equal(tsync_proto_negotiate(1, 1, 1, 9, &v, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(tsync_proto_negotiate(1, 1, 2, 3, &v, &err),
			 TSYNC_PERR_NO_COMMON_VERSION);
	assert_int_equal(err.type, TSYNC_MSG_ERROR);
	assert_int_equal(err.error.code, TSYNC_ERR_VERSION);
	assert_string_equal(err.error.reason,
			    "no common protocol version: we speak 1..1, peer speaks 2..3");
	assert_int_equal(tsync_proto_negotiate(4, 6, 1, 3, &v, NULL),
			 TSYNC_PERR_NO_COMMON_VERSION);
	/* the ERROR it builds is encodable */
	{
		uint8_t buf[TSYNC_HDR_LEN + TSYNC_SMALL_MAX];
		size_t len;

		assert_int_equal(tsync_msg_encode(&err, buf, sizeof(buf), &len),
				 0);
	}
}

/* tsync_msg_expect, error building, names. */
static void test_helpers(void **state)
{
	char err[256];
	struct tsync_msg m;
	size_t i, j;
	int c;

	(void)state;
	sample_msg(TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(tsync_msg_expect(&m, TSYNC_MSG_SYNC_READY, err,
					  sizeof(err)), 0);
	assert_int_equal(tsync_msg_expect(&m, TSYNC_MSG_SYNC_STAMPS, err,
					  sizeof(err)), TSYNC_PERR_UNEXPECTED);
	assert_string_equal(err, "expected SYNC_STAMPS, got SYNC_READY");
	tsync_msg_set_error(&m, TSYNC_ERR_NO_CPU, "cpu %d\n\x01 gone", 7);
	assert_string_equal(m.error.reason, "cpu 7?? gone");
	assert_int_equal(tsync_msg_expect(&m, TSYNC_MSG_SYNC_READY, err,
					  sizeof(err)), TSYNC_PERR_PEER_ERROR);
	assert_string_equal(err, "peer error NO_CPU (6): cpu 7?? gone");
	/* a reason longer than the field is truncated, still encodable */
	{
		char longr[2000];
		uint8_t buf[TSYNC_HDR_LEN + TSYNC_SMALL_MAX];
		size_t len;

		memset(longr, 'r', sizeof(longr) - 1);
		longr[sizeof(longr) - 1] = 0;
		tsync_msg_set_error(&m, 99, "%s", longr);
		assert_int_equal(strlen(m.error.reason), TSYNC_REASON_MAX - 1);
		assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
		assert_string_equal(tsync_err_name(99), "UNKNOWN");
	}

	/* names: every type named, all distinct */
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		assert_string_not_equal(tsync_msg_name(sample_types[i]),
					"UNKNOWN");
		for (j = 0; j < i; j++)
			assert_string_not_equal(tsync_msg_name(sample_types[i]),
						tsync_msg_name(sample_types[j]));
	}
	assert_string_equal(tsync_msg_name(TSYNC_MSG_SYNC_STAMPS), "SYNC_STAMPS");
	/* every protocol error code distinct, named, below -errno */
	for (c = TSYNC_PERR_BAD_MAGIC; c < TSYNC_PERR_LAST; c++) {
		assert_true(tsync_perr_is_proto(c));
		assert_true(c < -255);
		for (j = (size_t)TSYNC_PERR_BAD_MAGIC; (int)j < c; j++)
			assert_string_not_equal(tsync_perr_name(c),
						tsync_perr_name((int)j));
	}
	assert_false(tsync_perr_is_proto(-EPIPE));
	assert_string_equal(tsync_perr_name(-EPIPE), strerror(EPIPE));
	assert_string_equal(tsync_err_name(TSYNC_ERR_VERSION), "VERSION");
	assert_string_equal(tsync_stamp_source_name(TSYNC_STAMP_TSC), "tsc");
	/* the stamp-source list: each name parses to an id that names it */
	for (j = 0; tsync_stamp_names[j]; j++) {
		enum tsync_stamp_source k;

		assert_int_equal(tsync_stamp_source_parse(tsync_stamp_names[j], &k), 0);
		assert_true(tsync_stamp_source_known(k));
		assert_string_equal(tsync_stamp_source_name(k), tsync_stamp_names[j]);
	}
	assert_int_equal(j, 3);
	assert_false(tsync_stamp_source_known(0));
	assert_false(tsync_stamp_source_known(TSYNC_STAMP_TSC + 1));
	assert_string_equal(tsync_stamp_source_name(0), "unknown");
	assert_int_equal(tsync_stamp_source_cap(TSYNC_STAMP_TSC), TSYNC_CAP_STAMP_TSC);
	assert_int_equal(tsync_stamp_source_cap(TSYNC_STAMP_MARKER), 0);
	assert_int_equal(tsync_stamp_source_cap(TSYNC_STAMP_CLOCK), 0);
	assert_int_equal(tsync_stamp_source_cap(0), 0);
	assert_string_equal(tsync_meta_kind_name(TSYNC_META_KALLSYMS),
			    "kallsyms");
	assert_string_equal(tsync_meta_kind_name(77), "unknown");
}

/*
 * The catalogue in Documentation/protocol.md matches the code: every
 * message type with its id, name and payload limits, every capability
 * with its bit, every wire error code with its name (so the specification
 * cannot drift silently).
 */
static void test_doc_tables(void **state)
{
	FILE *f = fopen("Documentation/protocol.md", "r");
	char line[512], name[64], dir[64];
	unsigned int id, min, max, types = 0, codes = 0, ncaps = 0, nsources = 0;
	int in_types = 0;

	(void)state;
	if (!f) {
		fail_msg("Documentation/protocol.md: %s (run from the tree's top)",
			 strerror(errno));
		return;	/* not reached: tells cppcheck fail_msg() does not return */
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "| id | name"))
			in_types = 1;
		if (in_types &&
		    sscanf(line, "| %u | %63[A-Z_] | %63[^|]| %u | %u |", &id, name,
			   dir, &min, &max) == 5) {
			if (strcmp(tsync_msg_name(id), name) ||
			    tsync_msg_min_len(id) != min ||
			    tsync_msg_max_len(id) != max)
				fail_msg("doc says %u %s %u..%u, code says %s %u..%u",
					 id, name, min, max, tsync_msg_name(id),
					 tsync_msg_min_len(id),
					 tsync_msg_max_len(id));
			types++;
			continue;
		}
		if (in_types && types && line[0] != '|')
			in_types = 0;
		/* capabilities: "| 2   | `CAP_STAMP_TSC`   | ..." */
		if (!in_types && sscanf(line, "| %u | `CAP_%63[A-Z_]` |", &id, name) == 2) {
			static const struct { const char *name; uint32_t bit; } caps[] = {
				{ "AUTH_HMAC", TSYNC_CAP_AUTH_HMAC },
				{ "TRACE", TSYNC_CAP_TRACE },
				{ "STAMP_TSC", TSYNC_CAP_STAMP_TSC },
				{ "SYNC_METHOD", TSYNC_CAP_SYNC_METHOD },
				{ "CLOCK_STATE", TSYNC_CAP_CLOCK_STATE },
			};
			size_t k = 0;

			while (k < sizeof(caps) / sizeof(caps[0]) && strcmp(caps[k].name, name))
				k++;
			if (k == sizeof(caps) / sizeof(caps[0]) || caps[k].bit != 1u << id)
				fail_msg("doc says capability %s is bit %u, code differs", name, id);
			ncaps++;
			continue;
		}
		/* SYNC_START's sources: "... | source   | 1 = MARKER (...), 2 = ..." */
		if (!in_types && strstr(line, "| source ")) {
			for (size_t k = 0; tsync_stamp_names[k]; k++) {
				enum tsync_stamp_source src;
				char want[64];
				size_t c;

				tsync_stamp_source_parse(tsync_stamp_names[k], &src);
				c = (size_t)snprintf(want, sizeof(want), "%u = ", (unsigned int)src);
				for (const char *n = tsync_stamp_names[k]; *n && c + 1 < sizeof(want); n++)
					want[c++] = (char)toupper((unsigned char)*n);
				want[c] = '\0';
				if (!strstr(line, want))
					fail_msg("doc's SYNC_START source misses \"%s\"", want);
			}
			nsources++;
			continue;
		}
		/* wire error codes: "| 2    | VERSION      | ..." */
		if (!in_types && !strstr(line, "| -") &&
		    sscanf(line, "| %u | %63[A-Z_] |", &id, name) == 2) {
			assert_string_equal(tsync_err_name(id), name);
			codes++;
		}
	}
	fclose(f);
	assert_int_equal(types, N_SAMPLE_TYPES);
	assert_int_equal(codes, TSYNC_ERR_PERMISSION + 1);
	assert_int_equal(ncaps, 5);
	assert_int_equal(nsources, 1);
}

/* Writes @len bytes of @data to DIR/SUB/NAME. */
static void write_file(const char *dir, const char *sub, const char *name,
		       const uint8_t *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* Writes the fuzz seed corpus when TSYNC_PROTO_CORPUS names a directory. */
static void test_corpus(void **state)
{
	const char *dir = getenv("TSYNC_PROTO_CORPUS");
	size_t i;

	(void)state;
	if (!dir)
		skip();
	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		uint8_t *buf, *in;
		size_t len;
		char name[64];

		buf = enc_sample(sample_types[i], &len);
		snprintf(name, sizeof(name), "%s",
			 tsync_msg_name(sample_types[i]));
		write_file(dir, "fuzz_proto_hdr", name, buf, TSYNC_HDR_LEN);
		/* fuzz_proto_msg: one context byte, then the message */
		in = malloc(len + 1);
		assert_non_null(in);
		in[0] = 4;
		memcpy(in + 1, buf, len);
		write_file(dir, "fuzz_proto_msg", name, in, len + 1);
		free(in);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_wire_bytes),
		cmocka_unit_test(test_truncated_all),
		cmocka_unit_test(test_trailing_ignored),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_payload_length_errors),
		cmocka_unit_test(test_count_errors),
		cmocka_unit_test(test_string_errors),
		cmocka_unit_test(test_cpu_errors),
		cmocka_unit_test(test_value_errors),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_large_messages),
		cmocka_unit_test(test_trace_args),
		cmocka_unit_test(test_hdr_check_ctx),
		cmocka_unit_test(test_check_choice),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_doc_tables),
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
