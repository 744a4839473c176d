// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: tsync_msg_decode() on arbitrary payloads of every
 * message type. Input: one context byte (low nibble: CPU count, 0 =
 * unknown; high nibble: probe limit / 16, 0 = default), then a message
 * (12-byte header + payload). The payload decoder is run on everything
 * after the header with the header's type, whatever its length field says
 * (so lying lengths reach it too); the header decoder on the header.
 *
 * Invariants: a rejection carries its code and a reason and leaves nothing
 * allocated; an accepted message re-encodes, and decoding that gives the
 * same message field by field (decode(encode(decode(x))) == decode(x)).
 * The sync method negotiation: an accepted HELLO's offer, answered with
 * the agent's pick, passes the host's check; an accepted HELLO_REPLY's
 * method passes against an offer of every method, and against probes
 * alone only if it is probes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/unit/proto_samples.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks the method negotiation invariants of accepted @m. */
static void check_methods(const struct tsync_msg *m)
{
	struct tsync_hello all = { .caps = TSYNC_CAP_SYNC_METHOD, .methods = 0xffffffffu };
	struct tsync_hello probes = { .caps = TSYNC_CAP_SYNC_METHOD,
				      .methods = TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES) };
	struct tsync_hello_reply r = { .caps = TSYNC_CAP_SYNC_METHOD };
	uint8_t id;

	if (m->type == TSYNC_MSG_HELLO && (m->hello.caps & TSYNC_CAP_SYNC_METHOD)) {
		for (uint32_t can = 0; can < 2; can++) {
			r.method = tsync_method_pick(m->hello.methods, can ? 0xffffffffu : 0);
			if (tsync_proto_check_method(&m->hello, &r, &id, NULL, 0) ||
			    id != r.method || !tsync_method_known(id))
				abort();
		}
	}
	if (m->type == TSYNC_MSG_HELLO_REPLY && (m->hello_reply.caps & TSYNC_CAP_SYNC_METHOD)) {
		if (tsync_proto_check_method(&all, &m->hello_reply, &id, NULL, 0) ||
		    id != m->hello_reply.method)
			abort();
		if (!tsync_proto_check_method(&probes, &m->hello_reply, &id, NULL, 0) !=
		    (m->hello_reply.method == TSYNC_METHOD_PROBES))
			abort();
	}
}

/* Checks one input; aborts on a broken invariant. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsync_decode_ctx ctx = { 0 };
	struct tsync_proto_err e;
	struct tsync_msg m, again;
	struct tsync_hdr h;
	uint8_t *payload, *enc = NULL;
	size_t plen, elen;
	int ret;

	if (size < 1 + TSYNC_HDR_LEN)
		return 0;
	ctx.ncpus = data[0] & 0x0f;
	ctx.max_probes = (uint32_t)(data[0] >> 4) * 16;
	(void)tsync_hdr_decode(data + 1, TSYNC_HDR_LEN, &h, &e);
	h.magic = TSYNC_MAGIC;
	h.version = 1;
	h.type = data[1 + 5];
	plen = size - 1 - TSYNC_HDR_LEN;
	h.len = (uint32_t)plen;
	payload = malloc(plen ? plen : 1);	/* exact size for ASan */
	if (!payload)
		return 0;
	if (plen)
		memcpy(payload, data + 1 + TSYNC_HDR_LEN, plen);
	ret = tsync_msg_decode(&h, payload, plen, &ctx, &m, &e);
	if (ret) {
		if (e.code != ret || !e.reason[0] || m.type != 0)
			abort();
		goto out;
	}
	check_methods(&m);
	if (tsync_msg_size(&m, &elen))
		abort();
	enc = malloc(elen);
	if (!enc || tsync_msg_encode(&m, enc, elen, &elen))
		abort();
	if (tsync_hdr_decode(enc, elen, &h, &e))
		abort();
	if (tsync_msg_decode(&h, enc + TSYNC_HDR_LEN, elen - TSYNC_HDR_LEN,
			     &ctx, &again, &e))
		abort();
	if (sample_cmp(&m, &again))
		abort();
	tsync_msg_free(&again);
	tsync_msg_free(&m);
out:
	free(enc);
	free(payload);
	return 0;
}
