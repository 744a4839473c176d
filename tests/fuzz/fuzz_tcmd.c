// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: trace-cmd's agent protocol decoder (proto/tcmd.c).
 * Input: one message (12-byte header + rest). The header decoder runs on
 * the header as given; the message decoder on the whole input with the
 * header's size field set to the input length (so lying sizes and every
 * payload reach the field checks).
 *
 * Invariants: a rejection is -EBADMSG with a reason and a zeroed message;
 * an accepted message's lists and samples can be walked, it re-encodes
 * (a kvm TIME_SYNC through tcmd_enc_kvm(), a tagged TRACE_RESP tagged
 * again), and decoding that gives the same fields.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/tcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STRS 4096

/* Collects the strings of @s into @v; returns their number. */
static uint32_t strs_collect(const struct tcmd_strs *s, const char **v)
{
	const char *p;
	uint32_t n = 0;

	for (p = tcmd_strs_next(s, NULL); p; p = tcmd_strs_next(s, p)) {
		if (n >= MAX_STRS || p < s->buf || p >= s->buf + s->len)
			abort();
		v[n++] = p;
	}
	if (n != s->count)
		abort();
	return n;
}

/* Compares two string lists. */
static void strs_same(const struct tcmd_strs *a, const struct tcmd_strs *b)
{
	if (a->count != b->count || a->len != b->len ||
	    memcmp(a->buf, b->buf, a->len))
		abort();
}

/* Re-encodes accepted @m into @out; returns the length. */
static ssize_t reencode(const struct tcmd_msg *m, uint8_t *out)
{
	static const char *argv[MAX_STRS], *protos[MAX_STRS + 1];
	static uint32_t ports[MAX_STRS];
	uint32_t n, np;

	switch (m->cmd) {
	case TCMD_TRACE_REQ:
		n = m->req.has_args ? strs_collect(&m->req.args, argv) : 0;
		np = m->req.has_protos ? strs_collect(&m->req.protos, protos) : 0;
		protos[np] = NULL;
		return tcmd_enc_trace_req(out, TCMD_MSG_MAX, m->req.flags,
					  m->req.trace_id, (int)n, argv,
					  m->req.has_protos ? protos : NULL);
	case TCMD_TRACE_RESP: {
		ssize_t len;

		if (tcmd_resp_ports(&m->resp, ports, MAX_STRS))
			abort();
		len = tcmd_enc_trace_resp(out, TCMD_MSG_MAX, &m->resp, ports);
		/* tsync-agent's tag survives the round trip */
		if (len > 0 && tcmd_resp_tagged(&m->resp))
			len = tcmd_resp_tag(out, TCMD_MSG_MAX, (size_t)len);
		return len == -EINVAL && tcmd_resp_tagged(&m->resp) ? 0 : len;
	}
	case TCMD_TIME_SYNC:
		if (!strcmp(m->ts.proto, TCMD_PROTO_KVM))
			return tcmd_enc_kvm(out, TCMD_MSG_MAX, m->ts.id, &m->ts.kvm);
		return tcmd_enc_time_sync(out, TCMD_MSG_MAX, m->ts.proto,
					  m->ts.id, m->ts.payload, m->ts.len);
	case TCMD_SEND_DATA:
		return tcmd_enc_send_data(out, TCMD_MSG_MAX, m->payload,
					  m->payload_len);
	case TCMD_NOT_SUPP:
		return tcmd_enc_not_supp(out, TCMD_MSG_MAX, m->reason);
	case TCMD_CLOSE:
	case TCMD_FIN_DATA:
	case TCMD_CLOSE_RESP:
	case TCMD_CONT:
		return tcmd_enc_simple(out, TCMD_MSG_MAX, m->cmd);
	}
	return 0;	/* TINIT, RINIT, TRACE_PROXY: not sent by tsync */
}

/* Checks that @a and @b decoded the same fields. */
static void same(const struct tcmd_msg *a, const struct tcmd_msg *b)
{
	if (a->cmd != b->cmd)
		abort();
	switch (a->cmd) {
	case TCMD_TRACE_REQ:
		if (a->req.flags != b->req.flags ||
		    a->req.trace_id != b->req.trace_id ||
		    a->req.has_args != b->req.has_args ||
		    a->req.has_protos != b->req.has_protos)
			abort();
		if (a->req.has_args)
			strs_same(&a->req.args, &b->req.args);
		if (a->req.has_protos)
			strs_same(&a->req.protos, &b->req.protos);
		return;
	case TCMD_TRACE_RESP:
		if (a->resp.flags != b->resp.flags || a->resp.cpus != b->resp.cpus ||
		    a->resp.page_size != b->resp.page_size ||
		    a->resp.trace_id != b->resp.trace_id ||
		    strcmp(a->resp.proto, b->resp.proto) ||
		    (a->resp.proto[0] && a->resp.tsync_port != b->resp.tsync_port) ||
		    tcmd_resp_tagged(&a->resp) != tcmd_resp_tagged(&b->resp))
			abort();
		return;	/* ports: canonical decimal may differ ("01") */
	case TCMD_TIME_SYNC:
		if (strcmp(a->ts.proto, b->ts.proto) || a->ts.id != b->ts.id ||
		    a->ts.len != b->ts.len ||
		    memcmp(a->ts.payload, b->ts.payload, a->ts.len) ||
		    memcmp(&a->ts.offset, &b->ts.offset, sizeof(a->ts.offset)))
			abort();
		return;
	case TCMD_NOT_SUPP:
		if (!a->reason != !b->reason ||
		    (a->reason && strcmp(a->reason, b->reason)))
			abort();
		return;
	}
	if (a->payload_len != b->payload_len ||
	    memcmp(a->payload, b->payload, a->payload_len))
		abort();
}

/* Checks one input; aborts on a broken invariant. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[TCMD_MSG_MAX];
	struct tcmd_msg m, again, zero;
	struct tcmd_ptp_sample s;
	struct tcmd_err e;
	struct tcmd_hdr h;
	uint8_t *buf;
	unsigned int i;
	ssize_t n;

	if (size < TCMD_HDR_LEN || size > TCMD_MSG_MAX)
		return 0;
	(void)tcmd_hdr_decode(data, &h, &e);
	buf = malloc(size);		/* exact size for ASan */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[0] = (uint8_t)(size >> 24);
	buf[1] = (uint8_t)(size >> 16);
	buf[2] = (uint8_t)(size >> 8);
	buf[3] = (uint8_t)size;
	memset(&zero, 0, sizeof(zero));
	e.reason[0] = 0;
	if (tcmd_decode(buf, size, &m, &e)) {
		if (!e.reason[0] || memcmp(&m, &zero, sizeof(m)))
			abort();
		goto out;
	}
	if (m.cmd == TCMD_TIME_SYNC && m.ts.id == TCMD_PTP_PROBES &&
	    !strcmp(m.ts.proto, TCMD_PROTO_PTP))
		for (i = 0; i < TCMD_PTP_SAMPLES; i++)
			tcmd_ptp_sample_get(&m.ts, i, &s);
	n = reencode(&m, out);
	if (n < 0)
		abort();
	if (n > 0) {
		if (tcmd_decode(out, (size_t)n, &again, &e))
			abort();
		same(&m, &again);
	}
out:
	free(buf);
	return 0;
}
