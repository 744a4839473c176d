/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One valid sample of every protocol message type, with non-trivial values
 * in every field (so a field the codec drops or swaps shows), and a field
 * by field comparison. Shared by test_proto, test_msgio and the fuzz seed
 * corpus generator (test_proto with TSYNC_PROTO_CORPUS set).
 */
#ifndef TSYNC_PROTO_SAMPLES_H
#define TSYNC_PROTO_SAMPLES_H

#include <stdint.h>
#include <string.h>

#include "proto/proto.h"

/* Every message type, in table order. */
static const uint8_t sample_types[] = {
#define SAMPLE_X(name, id, min, max) TSYNC_MSG_##name,
	TSYNC_MSG_TYPES(SAMPLE_X)
#undef SAMPLE_X
};
#define N_SAMPLE_TYPES (sizeof(sample_types) / sizeof(sample_types[0]))

static struct tsync_probe_stamps sample_stamps[3] = {
	{ .seq = 0, .t2 = 1000000000123LL, .t3 = 1000000000456LL },
	{ .seq = 1, .t2 = -5, .t3 = INT64_MAX },
	{ .seq = 0xfffffffeu, .t2 = INT64_MIN, .t3 = 42 },
};
static char sample_filter0[] = "common_pid == 42 && prev_comm ~ \"a*\"";
static char *sample_args[7] = {
	"-e", "sched:sched_switch", "-f", sample_filter0, "-e", "irq",
	"",	/* a word may be empty */
};
static struct tsync_cpu_stats sample_cpus[2] = {
	{ 0, 1ULL << 40, 123456, 7, 8 },
	{ 3, 4096, 1, 0, UINT64_MAX },
};
static uint8_t sample_meta[] = "name: sched_switch\nID: 316\nformat:\n\0\xff";

/* Fills @m with a valid sample of @type (pointers to static data). */
static inline void sample_msg(uint8_t type, struct tsync_msg *m)
{
	int i;

	tsync_msg_init(m, type);
	switch (type) {
	case TSYNC_MSG_HELLO:
		m->hello.ver_min = 1;
		m->hello.ver_max = 1;
		m->hello.kind = TSYNC_CONN_DATA;
		m->hello.caps = TSYNC_CAP_TRACE | 0x80000000u;
		m->hello.session_id = 0x0123456789abcdefULL;
		m->hello.cpu = 3;
		for (i = 0; i < TSYNC_SECRET_LEN; i++)
			m->hello.secret[i] = (uint8_t)(i * 7 + 1);
		for (i = 0; i < TSYNC_NONCE_LEN; i++)
			m->hello.nonce[i] = (uint8_t)(255 - i);
		break;
	case TSYNC_MSG_HELLO_REPLY:
		m->hello_reply.version = 1;
		m->hello_reply.ver_min = 1;
		m->hello_reply.ver_max = 1;
		m->hello_reply.caps = TSYNC_CAP_AUTH_HMAC;
		for (i = 0; i < TSYNC_NONCE_LEN; i++)
			m->hello_reply.nonce[i] = (uint8_t)(i + 100);
		for (i = 0; i < TSYNC_MAC_LEN; i++)
			m->hello_reply.mac[i] = (uint8_t)(i ^ 0x5a);
		break;
	case TSYNC_MSG_AUTH:
		for (i = 0; i < TSYNC_MAC_LEN; i++)
			m->auth.mac[i] = (uint8_t)(i * 3);
		break;
	case TSYNC_MSG_ERROR:
		m->error.code = TSYNC_ERR_NO_CPU;
		strcpy(m->error.reason, "guest CPU 7 is offline");
		break;
	case TSYNC_MSG_SESSION_REQ:
		m->session_req.trace_id = 0xfedcba9876543210ULL;
		strcpy(m->session_req.name, "host-1.example");
		break;
	case TSYNC_MSG_SESSION_REPLY:
		m->session_reply.ncpus = 4;
		m->session_reply.page_size = 4096;
		m->session_reply.trace_id = 0x1122334455667788ULL;
		m->session_reply.caps = TSYNC_CAP_TRACE | TSYNC_CAP_STAMP_TSC;
		m->session_reply.session_id = 77;
		for (i = 0; i < TSYNC_SECRET_LEN; i++)
			m->session_reply.secret[i] = (uint8_t)(i * 13);
		strcpy(m->session_reply.name, "guest0");
		strcpy(m->session_reply.clock, "local");
		m->session_reply.nclocks = 3;
		strcpy(m->session_reply.clocks[0], "local");
		strcpy(m->session_reply.clocks[1], "mono");
		strcpy(m->session_reply.clocks[2], "x86-tsc");
		break;
	case TSYNC_MSG_SYNC_START:
		m->sync_start.round_id = 9;
		m->sync_start.cpu = 2;
		m->sync_start.nprobes = 339;
		m->sync_start.source = TSYNC_STAMP_MARKER;
		strcpy(m->sync_start.clock, "local");
		break;
	case TSYNC_MSG_SYNC_READY:
		m->sync_ready.round_id = 9;
		m->sync_ready.cpu = 2;
		m->sync_ready.status = TSYNC_ERR_BUSY;
		break;
	case TSYNC_MSG_PROBE:
	case TSYNC_MSG_PROBE_REPLY:
		m->probe.round_id = 0xdeadbeefu;
		m->probe.seq = 338;
		break;
	case TSYNC_MSG_SYNC_END:
		m->sync_end.round_id = 9;
		break;
	case TSYNC_MSG_SYNC_STAMPS:
		m->sync_stamps.round_id = 9;
		m->sync_stamps.cpu = 2;
		m->sync_stamps.count = 3;
		m->sync_stamps.stamps = sample_stamps;
		break;
	case TSYNC_MSG_SYNC_RESULT:
		m->sync_result.round_id = 9;
		m->sync_result.cpu = 2;
		m->sync_result.offset_ns = -123456789012LL;
		m->sync_result.error_ns = 1500;
		m->sync_result.delay_ns = 30000;
		m->sync_result.used = 33;
		m->sync_result.sent = 339;
		break;
	case TSYNC_MSG_TRACE_START:
		/* and a flag the codec carries but does not know */
		m->trace_start.flags = TSYNC_TRACE_FL_ARGS | 0x4;
		strcpy(m->trace_start.clock, "global");
		m->trace_start.nargs = 7;
		m->trace_start.args = sample_args;
		break;
	case TSYNC_MSG_TRACE_STARTED:
		m->trace_started.ncpus = 4;
		break;
	case TSYNC_MSG_TRACE_STOPPED:
		m->trace_stopped.count = 2;
		m->trace_stopped.cpus = sample_cpus;
		break;
	case TSYNC_MSG_STREAM_END:
		m->stream_end.cpu = 3;
		m->stream_end.bytes = 1ULL << 33;
		break;
	case TSYNC_MSG_META_CHUNK:
		m->meta_chunk.kind = TSYNC_META_EVENT_FORMAT;
		strcpy(m->meta_chunk.system, "sched");
		m->meta_chunk.more = 1;
		m->meta_chunk.len = sizeof(sample_meta);
		m->meta_chunk.data = sample_meta;
		break;
	case TSYNC_MSG_CLOCK_REQ:
		strcpy(m->clock_req.clock, "tai");
		break;
	case TSYNC_MSG_CLOCK_STATE:
		m->clock_state.source = TSYNC_CLOCK_SRC_PTP4L;
		m->clock_state.synced = 1;
		m->clock_state.stratum = 2;
		m->clock_state.offset_ns = -37;
		m->clock_state.bound_ns = 1234;
		m->clock_state.clock_ns = 37000000123456789LL;
		m->clock_state.realtime_ns = 1700000000123456789LL;
		m->clock_state.read_ns = 300;
		strcpy(m->clock_state.master, "001122.fffe.334455");
		strcpy(m->clock_state.detail, "SLAVE");
		break;
	default:	/* BYE, TRACE_STOP, META_REQ, META_END */
		break;
	}
}

/* Compares two strings that may be NULL (NULL equals ""). */
static inline int sample_streq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/*
 * Returns 0 if @a and @b carry the same message, field by field, else the
 * 1-based number of the first differing field (for a readable failure).
 */
static inline int sample_cmp(const struct tsync_msg *a, const struct tsync_msg *b)
{
	uint32_t i;
	int f = 0;

#define F(cond) do { f++; if (!(cond)) return f; } while (0)
	F(a->type == b->type);
	F((a->version ? a->version : 1) == (b->version ? b->version : 1));
	F(a->flags == b->flags);
	switch (a->type) {
	case TSYNC_MSG_HELLO:
		F(a->hello.ver_min == b->hello.ver_min);
		F(a->hello.ver_max == b->hello.ver_max);
		F(a->hello.kind == b->hello.kind);
		F(a->hello.caps == b->hello.caps);
		F(a->hello.session_id == b->hello.session_id);
		F(a->hello.cpu == b->hello.cpu);
		F(!memcmp(a->hello.secret, b->hello.secret, TSYNC_SECRET_LEN));
		F(!memcmp(a->hello.nonce, b->hello.nonce, TSYNC_NONCE_LEN));
		F(a->hello.methods == b->hello.methods);
		break;
	case TSYNC_MSG_HELLO_REPLY:
		F(a->hello_reply.version == b->hello_reply.version);
		F(a->hello_reply.ver_min == b->hello_reply.ver_min);
		F(a->hello_reply.ver_max == b->hello_reply.ver_max);
		F(a->hello_reply.caps == b->hello_reply.caps);
		F(!memcmp(a->hello_reply.nonce, b->hello_reply.nonce,
			  TSYNC_NONCE_LEN));
		F(!memcmp(a->hello_reply.mac, b->hello_reply.mac,
			  TSYNC_MAC_LEN));
		F(a->hello_reply.method == b->hello_reply.method);
		break;
	case TSYNC_MSG_AUTH:
		F(!memcmp(a->auth.mac, b->auth.mac, TSYNC_MAC_LEN));
		break;
	case TSYNC_MSG_ERROR:
		F(a->error.code == b->error.code);
		F(!strcmp(a->error.reason, b->error.reason));
		break;
	case TSYNC_MSG_SESSION_REQ:
		F(a->session_req.trace_id == b->session_req.trace_id);
		F(!strcmp(a->session_req.name, b->session_req.name));
		break;
	case TSYNC_MSG_SESSION_REPLY:
		F(a->session_reply.ncpus == b->session_reply.ncpus);
		F(a->session_reply.page_size == b->session_reply.page_size);
		F(a->session_reply.trace_id == b->session_reply.trace_id);
		F(a->session_reply.caps == b->session_reply.caps);
		F(a->session_reply.session_id == b->session_reply.session_id);
		F(!memcmp(a->session_reply.secret, b->session_reply.secret,
			  TSYNC_SECRET_LEN));
		F(!strcmp(a->session_reply.name, b->session_reply.name));
		F(!strcmp(a->session_reply.clock, b->session_reply.clock));
		F(a->session_reply.nclocks == b->session_reply.nclocks);
		for (i = 0; i < a->session_reply.nclocks; i++)
			F(!strcmp(a->session_reply.clocks[i],
				  b->session_reply.clocks[i]));
		break;
	case TSYNC_MSG_SYNC_START:
		F(a->sync_start.round_id == b->sync_start.round_id);
		F(a->sync_start.cpu == b->sync_start.cpu);
		F(a->sync_start.nprobes == b->sync_start.nprobes);
		F(a->sync_start.source == b->sync_start.source);
		F(!strcmp(a->sync_start.clock, b->sync_start.clock));
		break;
	case TSYNC_MSG_SYNC_READY:
		F(a->sync_ready.round_id == b->sync_ready.round_id);
		F(a->sync_ready.cpu == b->sync_ready.cpu);
		F(a->sync_ready.status == b->sync_ready.status);
		break;
	case TSYNC_MSG_PROBE:
	case TSYNC_MSG_PROBE_REPLY:
		F(a->probe.round_id == b->probe.round_id);
		F(a->probe.seq == b->probe.seq);
		break;
	case TSYNC_MSG_SYNC_END:
		F(a->sync_end.round_id == b->sync_end.round_id);
		break;
	case TSYNC_MSG_SYNC_STAMPS:
		F(a->sync_stamps.round_id == b->sync_stamps.round_id);
		F(a->sync_stamps.cpu == b->sync_stamps.cpu);
		F(a->sync_stamps.count == b->sync_stamps.count);
		for (i = 0; i < a->sync_stamps.count; i++) {
			F(a->sync_stamps.stamps[i].seq ==
			  b->sync_stamps.stamps[i].seq);
			F(a->sync_stamps.stamps[i].t2 ==
			  b->sync_stamps.stamps[i].t2);
			F(a->sync_stamps.stamps[i].t3 ==
			  b->sync_stamps.stamps[i].t3);
		}
		break;
	case TSYNC_MSG_SYNC_RESULT:
		F(a->sync_result.round_id == b->sync_result.round_id);
		F(a->sync_result.cpu == b->sync_result.cpu);
		F(a->sync_result.offset_ns == b->sync_result.offset_ns);
		F(a->sync_result.error_ns == b->sync_result.error_ns);
		F(a->sync_result.delay_ns == b->sync_result.delay_ns);
		F(a->sync_result.used == b->sync_result.used);
		F(a->sync_result.sent == b->sync_result.sent);
		break;
	case TSYNC_MSG_TRACE_START:
		F(a->trace_start.flags == b->trace_start.flags);
		F(!strcmp(a->trace_start.clock, b->trace_start.clock));
		F(a->trace_start.nargs == b->trace_start.nargs);
		for (i = 0; i < a->trace_start.nargs; i++)
			F(sample_streq(a->trace_start.args[i], b->trace_start.args[i]));
		break;
	case TSYNC_MSG_TRACE_STARTED:
		F(a->trace_started.ncpus == b->trace_started.ncpus);
		break;
	case TSYNC_MSG_TRACE_STOPPED:
		F(a->trace_stopped.count == b->trace_stopped.count);
		for (i = 0; i < a->trace_stopped.count; i++) {
			const struct tsync_cpu_stats *x = &a->trace_stopped.cpus[i];
			const struct tsync_cpu_stats *y = &b->trace_stopped.cpus[i];

			F(x->cpu == y->cpu);
			F(x->bytes == y->bytes);
			F(x->entries == y->entries);
			F(x->overrun == y->overrun);
			F(x->dropped == y->dropped);
		}
		break;
	case TSYNC_MSG_STREAM_END:
		F(a->stream_end.cpu == b->stream_end.cpu);
		F(a->stream_end.bytes == b->stream_end.bytes);
		break;
	case TSYNC_MSG_META_CHUNK:
		F(a->meta_chunk.kind == b->meta_chunk.kind);
		F(!strcmp(a->meta_chunk.system, b->meta_chunk.system));
		F(a->meta_chunk.more == b->meta_chunk.more);
		F(a->meta_chunk.len == b->meta_chunk.len);
		F(!a->meta_chunk.len || !memcmp(a->meta_chunk.data,
						b->meta_chunk.data,
						a->meta_chunk.len));
		break;
	case TSYNC_MSG_CLOCK_REQ:
		F(!strcmp(a->clock_req.clock, b->clock_req.clock));
		break;
	case TSYNC_MSG_CLOCK_STATE:
		F(a->clock_state.source == b->clock_state.source);
		F(a->clock_state.synced == b->clock_state.synced);
		F(a->clock_state.stratum == b->clock_state.stratum);
		F(a->clock_state.status == b->clock_state.status);
		F(a->clock_state.offset_ns == b->clock_state.offset_ns);
		F(a->clock_state.bound_ns == b->clock_state.bound_ns);
		F(a->clock_state.clock_ns == b->clock_state.clock_ns);
		F(a->clock_state.realtime_ns == b->clock_state.realtime_ns);
		F(a->clock_state.read_ns == b->clock_state.read_ns);
		F(!strcmp(a->clock_state.master, b->clock_state.master));
		F(!strcmp(a->clock_state.detail, b->clock_state.detail));
		break;
	default:
		break;
	}
#undef F
	return 0;
}

#endif
