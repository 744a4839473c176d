// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The validating decoder: every length, count, string and CPU number a
 * peer sends is checked before use; every rejection has its own code and a
 * reason. Allocations happen only after the counts were checked against
 * the payload size. See proto.h and Documentation/protocol.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

/* Read cursor over one payload. */
struct rcur {
	const uint8_t *p;
	size_t len, off;
	const char *msg;		/* message name for reasons */
	const struct tsync_decode_ctx *ctx;
	struct tsync_proto_err *err;
};

/* Records @code and a formatted reason in @e (may be NULL); returns @code. */
static int __attribute__((format(printf, 3, 4)))
fail(struct tsync_proto_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		e->code = code;
		va_start(ap, fmt);
		vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Returns the bytes left at the cursor. */
static size_t left(const struct rcur *c)
{
	return c->len - c->off;
}

/* Checks that @n bytes of @field remain; returns 0 or TRUNCATED. */
static int need(struct rcur *c, size_t n, const char *field)
{
	if (n <= left(c))
		return 0;
	return fail(c->err, TSYNC_PERR_TRUNCATED,
		    "%s: payload ends inside %s (offset %zu, %zu bytes left, %zu needed)",
		    c->msg, field, c->off, left(c), n);
}

static uint8_t rd_u8(struct rcur *c)
{
	return c->p[c->off++];
}

static uint16_t rd_be16(struct rcur *c)
{
	uint16_t v = (uint16_t)((c->p[c->off] << 8) | c->p[c->off + 1]);

	c->off += 2;
	return v;
}

static uint32_t rd_be32(struct rcur *c)
{
	const uint8_t *b = c->p + c->off;

	c->off += 4;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static uint64_t rd_be64(struct rcur *c)
{
	uint64_t hi = rd_be32(c);

	return hi << 32 | rd_be32(c);
}

static void rd_bytes(struct rcur *c, void *dst, size_t n)
{
	memcpy(dst, c->p + c->off, n);
	c->off += n;
}

/* Reads a be32 @field into @v; returns 0 or TRUNCATED. */
static int get_be32(struct rcur *c, uint32_t *v, const char *field)
{
	int ret = need(c, 4, field);

	if (!ret)
		*v = rd_be32(c);
	return ret;
}

/*
 * Reads a string field into @dst (@max bytes, NUL included): be16 length,
 * bytes, last byte NUL, no other NUL, printable; @nonempty for names that
 * must not be empty. Returns 0 or the specific TSYNC_PERR_* code.
 */
static int get_str(struct rcur *c, char *dst, size_t max, int nonempty,
		   const char *field)
{
	const uint8_t *s;
	size_t n, i;
	int ret;

	ret = need(c, 2, field);
	if (ret)
		return ret;
	n = rd_be16(c);
	if (n == 0)
		return fail(c->err, TSYNC_PERR_STRING_UNTERMINATED,
			    "%s: %s has length 0 (no room for its NUL)",
			    c->msg, field);
	if (n > max)
		return fail(c->err, TSYNC_PERR_STRING_TOO_LONG,
			    "%s: %s is %zu bytes, limit %zu", c->msg, field,
			    n, max);
	ret = need(c, n, field);
	if (ret)
		return ret;
	s = c->p + c->off;
	if (s[n - 1] != 0)
		return fail(c->err, TSYNC_PERR_STRING_UNTERMINATED,
			    "%s: %s is not NUL-terminated", c->msg, field);
	for (i = 0; i + 1 < n; i++) {
		if (s[i] == 0)
			return fail(c->err, TSYNC_PERR_STRING_EMBEDDED_NUL,
				    "%s: %s has a NUL at byte %zu of %zu",
				    c->msg, field, i, n);
		if (s[i] < 0x20 || s[i] > 0x7e)
			return fail(c->err, TSYNC_PERR_STRING_UNPRINTABLE,
				    "%s: %s has unprintable byte 0x%02x at %zu",
				    c->msg, field, s[i], i);
	}
	if (nonempty && n == 1)
		return fail(c->err, TSYNC_PERR_STRING_EMPTY,
			    "%s: %s is empty", c->msg, field);
	if (dst)
		memcpy(dst, s, n);
	c->off += n;
	return 0;
}

/* Checks CPU number @cpu of @field against the context's CPU count. */
static int check_cpu(struct rcur *c, uint32_t cpu, const char *field)
{
	uint32_t ncpus = c->ctx ? c->ctx->ncpus : 0;

	if (cpu >= TSYNC_MAX_CPUS || (ncpus && cpu >= ncpus))
		return fail(c->err, TSYNC_PERR_BAD_CPU,
			    "%s: %s %u out of range (%u CPUs)", c->msg, field,
			    cpu, ncpus ? ncpus : TSYNC_MAX_CPUS);
	return 0;
}

/* Returns the probe limit of the context. */
static uint32_t max_probes(const struct rcur *c)
{
	uint32_t m = c->ctx ? c->ctx->max_probes : 0;

	return m && m < TSYNC_MAX_PROBES ? m : TSYNC_MAX_PROBES;
}

/*
 * Checks a @count of elements of at least @elem bytes each against @limit
 * and the bytes left. Returns 0, COUNT_LIMIT or COUNT_OVERFLOW.
 */
static int check_count(struct rcur *c, uint32_t count, uint32_t limit,
		       size_t elem, const char *field)
{
	if (count > limit)
		return fail(c->err, TSYNC_PERR_COUNT_LIMIT,
			    "%s: %s %u above limit %u", c->msg, field, count,
			    limit);
	if ((uint64_t)count * elem > left(c))
		return fail(c->err, TSYNC_PERR_COUNT_OVERFLOW,
			    "%s: %s %u needs at least %llu bytes, %zu left",
			    c->msg, field, count,
			    (unsigned long long)count * elem, left(c));
	return 0;
}

static int dec_hello(struct rcur *c, struct tsync_hello *h)
{
	int ret;

	h->ver_min = rd_u8(c);
	h->ver_max = rd_u8(c);
	h->kind = rd_u8(c);
	(void)rd_u8(c);		/* reserved */
	h->caps = rd_be32(c);
	h->session_id = rd_be64(c);
	h->cpu = rd_be32(c);
	rd_bytes(c, h->secret, sizeof(h->secret));
	rd_bytes(c, h->nonce, sizeof(h->nonce));
	/* the offer's unknown bits are later methods: ignored */
	if (h->caps & TSYNC_CAP_SYNC_METHOD) {
		ret = get_be32(c, &h->methods, "sync method offer");
		if (ret)
			return ret;
	}
	if (!h->ver_min || h->ver_min > h->ver_max)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "HELLO: bad version range %u..%u", h->ver_min,
			    h->ver_max);
	if (h->kind != TSYNC_CONN_CONTROL && h->kind != TSYNC_CONN_DATA)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "HELLO: unknown connection kind %u", h->kind);
	if ((h->caps & TSYNC_CAP_SYNC_METHOD) &&
	    !(h->methods & TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES)))
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "HELLO: sync method offer 0x%x lacks probes, which every host serves",
			    h->methods);
	if (h->kind == TSYNC_CONN_DATA)
		return check_cpu(c, h->cpu, "cpu");
	return 0;
}

static int dec_hello_reply(struct rcur *c, struct tsync_hello_reply *h)
{
	int ret;

	h->version = rd_u8(c);
	h->ver_min = rd_u8(c);
	h->ver_max = rd_u8(c);
	(void)rd_u8(c);		/* reserved */
	h->caps = rd_be32(c);
	rd_bytes(c, h->nonce, sizeof(h->nonce));
	rd_bytes(c, h->mac, sizeof(h->mac));
	if (h->caps & TSYNC_CAP_SYNC_METHOD) {
		ret = need(c, 4, "sync method");
		if (ret)
			return ret;
		h->method = rd_u8(c);
		(void)rd_u8(c);		/* reserved */
		(void)rd_be16(c);	/* reserved */
	}
	if (!h->ver_min || h->ver_min > h->ver_max || h->version < h->ver_min ||
	    h->version > h->ver_max)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "HELLO_REPLY: version %u not in its range %u..%u",
			    h->version, h->ver_min, h->ver_max);
	if ((h->caps & TSYNC_CAP_SYNC_METHOD) && !tsync_method_known(h->method))
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "HELLO_REPLY: unknown sync method %u", h->method);
	return 0;
}

static int dec_session_reply(struct rcur *c, struct tsync_session_reply *s)
{
	uint32_t i;
	int ret;

	s->ncpus = rd_be32(c);
	s->page_size = rd_be32(c);
	s->trace_id = rd_be64(c);
	s->caps = rd_be32(c);
	s->session_id = rd_be64(c);
	rd_bytes(c, s->secret, sizeof(s->secret));
	if (!s->ncpus || s->ncpus > TSYNC_MAX_CPUS)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "SESSION_REPLY: ncpus %u not in 1..%u", s->ncpus,
			    TSYNC_MAX_CPUS);
	if (s->page_size < 256 || s->page_size > TSYNC_MSG_MAX ||
	    (s->page_size & (s->page_size - 1)))
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "SESSION_REPLY: page size %u is not a power of two in 256..%u",
			    s->page_size, TSYNC_MSG_MAX);
	ret = get_str(c, s->name, sizeof(s->name), 0, "name");
	if (!ret)
		ret = get_str(c, s->clock, sizeof(s->clock), 1, "clock");
	if (!ret)
		ret = need(c, 2, "clock count");
	if (ret)
		return ret;
	s->nclocks = rd_be16(c);
	ret = check_count(c, s->nclocks, TSYNC_MAX_CLOCKS, 3, "clock count");
	for (i = 0; !ret && i < s->nclocks; i++)
		ret = get_str(c, s->clocks[i], sizeof(s->clocks[i]), 1,
			      "clock list entry");
	return ret;
}

static int dec_sync_start(struct rcur *c, struct tsync_sync_start *s)
{
	int ret;

	s->round_id = rd_be32(c);
	s->cpu = rd_be32(c);
	s->nprobes = rd_be32(c);
	s->source = rd_u8(c);
	ret = get_str(c, s->clock, sizeof(s->clock), 1, "clock");
	if (ret)
		return ret;
	ret = check_cpu(c, s->cpu, "cpu");
	if (ret)
		return ret;
	if (!s->nprobes || s->nprobes > max_probes(c))
		return fail(c->err, TSYNC_PERR_COUNT_LIMIT,
			    "SYNC_START: nprobes %u not in 1..%u", s->nprobes,
			    max_probes(c));
	if (!tsync_stamp_source_known(s->source))
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "SYNC_START: unknown stamp source %u", s->source);
	return 0;
}

static int dec_sync_stamps(struct rcur *c, struct tsync_sync_stamps *s)
{
	uint32_t i;
	int ret;

	s->round_id = rd_be32(c);
	s->cpu = rd_be32(c);
	s->count = rd_be32(c);
	ret = check_cpu(c, s->cpu, "cpu");
	if (!ret)
		ret = check_count(c, s->count, max_probes(c), TSYNC_STAMP_LEN,
				  "stamp count");
	if (ret)
		return ret;
	if (!s->count)
		return 0;
	s->stamps = calloc(s->count, sizeof(*s->stamps));
	if (!s->stamps)
		return fail(c->err, -ENOMEM, "SYNC_STAMPS: out of memory");
	for (i = 0; i < s->count; i++) {
		s->stamps[i].seq = rd_be32(c);
		s->stamps[i].t2 = (int64_t)rd_be64(c);
		s->stamps[i].t3 = (int64_t)rd_be64(c);
	}
	return 0;
}

static int dec_sync_result(struct rcur *c, struct tsync_sync_result *r)
{
	r->round_id = rd_be32(c);
	r->cpu = rd_be32(c);
	r->offset_ns = (int64_t)rd_be64(c);
	r->error_ns = rd_be64(c);
	r->delay_ns = rd_be64(c);
	r->used = rd_be32(c);
	r->sent = rd_be32(c);
	if (r->used > r->sent)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "SYNC_RESULT: used %u > sent %u", r->used, r->sent);
	return check_cpu(c, r->cpu, "cpu");
}

/*
 * TRACE_START: the guest's settings are the option words (with ARGS), in
 * one allocation (the pointer array, then the strings). The two fields
 * that held an event list and a buffer size in protocol 1's first
 * encoding must be 0: a host that still sends them is told so
 * (Documentation/protocol.md, 6.14).
 */
static int dec_trace_start(struct rcur *c, struct tsync_trace_start *t)
{
	size_t start, total = 0, n;
	uint32_t kb, nevents, i;
	char *strs;
	int ret;

	kb = rd_be32(c);
	t->flags = rd_be32(c);
	ret = get_str(c, t->clock, sizeof(t->clock), 0, "clock");
	if (!ret)
		ret = get_be32(c, &nevents, "event count");
	if (ret)
		return ret;
	if (kb || nevents)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "TRACE_START: %u events, %u KiB as fields: this agent takes a "
			    "guest's settings as option words only (flag ARGS, -e and -b among "
			    "them)", nevents, kb);
	if (!(t->flags & TSYNC_TRACE_FL_ARGS))
		return 0;
	ret = get_be32(c, &t->nargs, "option count");
	if (!ret)
		ret = check_count(c, t->nargs, TSYNC_MAX_ARGS, 3, "option count");
	if (ret)
		return ret;
	/* pass 1: validate and size the words */
	start = c->off;
	for (i = 0; i < t->nargs; i++) {
		n = c->off;
		ret = get_str(c, NULL, TSYNC_ARG_MAX, 0, "option");
		if (ret)
			return ret;
		total += (size_t)c->p[n] << 8 | c->p[n + 1];
	}
	t->args = calloc(1, (t->nargs + 1) * sizeof(char *) + total);
	if (!t->args)
		return fail(c->err, -ENOMEM, "TRACE_START: out of memory");
	strs = (char *)(t->args + t->nargs + 1);
	/* pass 2: copy (already validated) */
	c->off = start;
	for (i = 0; i < t->nargs; i++) {
		n = rd_be16(c);
		rd_bytes(c, strs, n);
		t->args[i] = strs;
		strs += n;
	}
	return 0;
}

static int dec_trace_stopped(struct rcur *c, struct tsync_trace_stopped *t)
{
	struct tsync_cpu_stats *s;
	uint32_t i;
	int ret;

	t->count = rd_be32(c);
	ret = check_count(c, t->count, TSYNC_MAX_CPUS, TSYNC_CPU_STATS_LEN,
			  "CPU count");
	if (ret || !t->count)
		return ret;
	s = calloc(t->count, sizeof(*s));
	if (!s)
		return fail(c->err, -ENOMEM, "TRACE_STOPPED: out of memory");
	for (i = 0; i < t->count; i++) {
		s[i].cpu = rd_be32(c);
		s[i].bytes = rd_be64(c);
		s[i].entries = rd_be64(c);
		s[i].overrun = rd_be64(c);
		s[i].dropped = rd_be64(c);
		ret = check_cpu(c, s[i].cpu, "cpu");
		if (ret) {
			free(s);
			return ret;
		}
	}
	t->cpus = s;
	return 0;
}

static int dec_meta_chunk(struct rcur *c, struct tsync_meta_chunk *k)
{
	int ret;

	k->kind = rd_u8(c);
	if (!k->kind)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "META_CHUNK: kind 0");
	ret = get_str(c, k->system, sizeof(k->system),
		      k->kind == TSYNC_META_EVENT_FORMAT, "system");
	if (!ret)
		ret = get_be32(c, &k->more, "more flag");
	if (!ret)
		ret = get_be32(c, &k->len, "data length");
	if (!ret)
		ret = check_count(c, k->len, TSYNC_META_CHUNK_MAX, 1,
				  "data length");
	if (ret || !k->len)
		return ret;
	k->data = malloc(k->len);
	if (!k->data)
		return fail(c->err, -ENOMEM, "META_CHUNK: out of memory");
	rd_bytes(c, k->data, k->len);
	return 0;
}

/* CLOCK_STATE: the enums in range, a status that is 0 or an errno. */
static int dec_clock_state(struct rcur *c, struct tsync_clock_state *k)
{
	int ret;

	k->source = rd_u8(c);
	k->synced = rd_u8(c);
	k->stratum = rd_be16(c);
	k->status = (int32_t)rd_be32(c);
	k->offset_ns = (int64_t)rd_be64(c);
	k->bound_ns = rd_be64(c);
	k->clock_ns = (int64_t)rd_be64(c);
	k->realtime_ns = (int64_t)rd_be64(c);
	k->read_ns = rd_be64(c);
	if (k->source > TSYNC_CLOCK_SRC_MAX)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "CLOCK_STATE: source %u not in 0..%d", k->source,
			    TSYNC_CLOCK_SRC_MAX);
	if (k->synced > 1)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "CLOCK_STATE: synced %u not 0 or 1", k->synced);
	if (k->status > 0 || k->status < -4095)
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "CLOCK_STATE: status %d is not 0 or -errno", k->status);
	if (k->synced && (k->status || k->source == TSYNC_CLOCK_SRC_NONE))
		return fail(c->err, TSYNC_PERR_BAD_VALUE,
			    "CLOCK_STATE: synchronized without a daemon read");
	ret = get_str(c, k->master, sizeof(k->master), 0, "master");
	if (ret)
		return ret;
	return get_str(c, k->detail, sizeof(k->detail), 0, "detail");
}

/* Decodes the payload at @c for type @type into @m. */
static int dec_payload(struct rcur *c, struct tsync_msg *m)
{
	switch (m->type) {
	case TSYNC_MSG_HELLO:
		return dec_hello(c, &m->hello);
	case TSYNC_MSG_HELLO_REPLY:
		return dec_hello_reply(c, &m->hello_reply);
	case TSYNC_MSG_AUTH:
		rd_bytes(c, m->auth.mac, sizeof(m->auth.mac));
		return 0;
	case TSYNC_MSG_ERROR:
		m->error.code = rd_be32(c);
		return get_str(c, m->error.reason, sizeof(m->error.reason), 0,
			       "reason");
	case TSYNC_MSG_SESSION_REQ:
		m->session_req.trace_id = rd_be64(c);
		return get_str(c, m->session_req.name,
			       sizeof(m->session_req.name), 0, "name");
	case TSYNC_MSG_SESSION_REPLY:
		return dec_session_reply(c, &m->session_reply);
	case TSYNC_MSG_SYNC_START:
		return dec_sync_start(c, &m->sync_start);
	case TSYNC_MSG_SYNC_READY:
		m->sync_ready.round_id = rd_be32(c);
		m->sync_ready.cpu = rd_be32(c);
		m->sync_ready.status = rd_be32(c);
		return check_cpu(c, m->sync_ready.cpu, "cpu");
	case TSYNC_MSG_PROBE:
	case TSYNC_MSG_PROBE_REPLY:
		m->probe.round_id = rd_be32(c);
		m->probe.seq = rd_be32(c);
		return 0;
	case TSYNC_MSG_SYNC_END:
		m->sync_end.round_id = rd_be32(c);
		return 0;
	case TSYNC_MSG_SYNC_STAMPS:
		return dec_sync_stamps(c, &m->sync_stamps);
	case TSYNC_MSG_SYNC_RESULT:
		return dec_sync_result(c, &m->sync_result);
	case TSYNC_MSG_TRACE_START:
		return dec_trace_start(c, &m->trace_start);
	case TSYNC_MSG_TRACE_STARTED:
		m->trace_started.ncpus = rd_be32(c);
		if (!m->trace_started.ncpus ||
		    m->trace_started.ncpus > TSYNC_MAX_CPUS)
			return fail(c->err, TSYNC_PERR_BAD_VALUE,
				    "TRACE_STARTED: ncpus %u not in 1..%u",
				    m->trace_started.ncpus, TSYNC_MAX_CPUS);
		return 0;
	case TSYNC_MSG_TRACE_STOPPED:
		return dec_trace_stopped(c, &m->trace_stopped);
	case TSYNC_MSG_STREAM_END:
		m->stream_end.cpu = rd_be32(c);
		m->stream_end.bytes = rd_be64(c);
		return check_cpu(c, m->stream_end.cpu, "cpu");
	case TSYNC_MSG_META_CHUNK:
		return dec_meta_chunk(c, &m->meta_chunk);
	case TSYNC_MSG_CLOCK_REQ:
		return get_str(c, m->clock_req.clock, sizeof(m->clock_req.clock), 1,
			       "clock");
	case TSYNC_MSG_CLOCK_STATE:
		return dec_clock_state(c, &m->clock_state);
	default:	/* empty payloads: anything present is ignored */
		return 0;
	}
}

/* Decodes and checks a header; see proto.h. */
int tsync_hdr_decode(const uint8_t *buf, size_t len, struct tsync_hdr *hdr,
		     struct tsync_proto_err *err)
{
	struct rcur c = { .p = buf, .len = len };
	uint32_t min, max;

	if (len < TSYNC_HDR_LEN)
		return fail(err, TSYNC_PERR_TRUNCATED,
			    "header: %zu bytes, need %d", len, TSYNC_HDR_LEN);
	hdr->magic = rd_be32(&c);
	hdr->version = rd_u8(&c);
	hdr->type = rd_u8(&c);
	hdr->flags = rd_be16(&c);
	hdr->len = rd_be32(&c);
	if (hdr->magic != TSYNC_MAGIC)
		return fail(err, TSYNC_PERR_BAD_MAGIC,
			    "header: bad magic 0x%08x (want 0x%08x)",
			    hdr->magic, TSYNC_MAGIC);
	if (hdr->version < TSYNC_PROTO_VERSION_MIN ||
	    hdr->version > TSYNC_PROTO_VERSION_MAX)
		return fail(err, TSYNC_PERR_BAD_VERSION,
			    "header: version %u, we speak %d..%d",
			    hdr->version, TSYNC_PROTO_VERSION_MIN,
			    TSYNC_PROTO_VERSION_MAX);
	if (!tsync_msg_type_known(hdr->type))
		return fail(err, TSYNC_PERR_UNKNOWN_TYPE,
			    "header: unknown message type %u", hdr->type);
	min = tsync_msg_min_len(hdr->type);
	max = tsync_msg_max_len(hdr->type);
	if (hdr->len < min)
		return fail(err, TSYNC_PERR_TOO_SHORT,
			    "%s: payload %u bytes, minimum %u",
			    tsync_msg_name(hdr->type), hdr->len, min);
	if (hdr->len > max || hdr->len > TSYNC_MSG_MAX)
		return fail(err, TSYNC_PERR_TOO_LONG,
			    "%s: payload %u bytes, maximum %u",
			    tsync_msg_name(hdr->type), hdr->len,
			    max < TSYNC_MSG_MAX ? max : TSYNC_MSG_MAX);
	if (err) {
		err->code = 0;
		err->reason[0] = 0;
	}
	return 0;
}

/* Checks a header against the receiver's context; see proto.h. */
int tsync_hdr_check_ctx(const struct tsync_hdr *hdr,
			const struct tsync_decode_ctx *ctx,
			struct tsync_proto_err *err)
{
	if (ctx && ctx->max_payload && hdr->len > ctx->max_payload)
		return fail(err, TSYNC_PERR_TOO_LONG,
			    "%s: payload %u bytes, limit %u",
			    tsync_msg_name(hdr->type), hdr->len, ctx->max_payload);
	/* HELLO and HELLO_REPLY keep the base version forever; an ERROR may
	 * use it so that any peer can read it (Documentation/protocol.md, 4) */
	if (ctx && ctx->version && hdr->version != ctx->version &&
	    hdr->type != TSYNC_MSG_HELLO && hdr->type != TSYNC_MSG_HELLO_REPLY &&
	    !(hdr->type == TSYNC_MSG_ERROR && hdr->version == TSYNC_PROTO_VERSION_MIN))
		return fail(err, TSYNC_PERR_BAD_VERSION,
			    "%s in protocol version %u, the connection negotiated %u",
			    tsync_msg_name(hdr->type), hdr->version, ctx->version);
	if (err) {
		err->code = 0;
		err->reason[0] = 0;
	}
	return 0;
}

/* Decodes and checks a payload; see proto.h. */
int tsync_msg_decode(const struct tsync_hdr *hdr, const uint8_t *payload,
		     size_t len, const struct tsync_decode_ctx *ctx,
		     struct tsync_msg *m, struct tsync_proto_err *err)
{
	struct rcur c = { .p = payload, .len = len, .ctx = ctx, .err = err };
	uint32_t min, max;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!tsync_msg_type_known(hdr->type))
		return fail(err, TSYNC_PERR_UNKNOWN_TYPE,
			    "unknown message type %u", hdr->type);
	c.msg = tsync_msg_name(hdr->type);
	if (len != hdr->len)
		return fail(err, TSYNC_PERR_LENGTH_MISMATCH,
			    "%s: %zu payload bytes given, header says %u",
			    c.msg, len, hdr->len);
	min = tsync_msg_min_len(hdr->type);
	max = tsync_msg_max_len(hdr->type);
	if (ctx && ctx->max_payload && ctx->max_payload < max)
		max = ctx->max_payload;
	if (len < min)
		return fail(err, TSYNC_PERR_TOO_SHORT,
			    "%s: payload %zu bytes, minimum %u", c.msg, len,
			    min);
	if (len > max)
		return fail(err, TSYNC_PERR_TOO_LONG,
			    "%s: payload %zu bytes, maximum %u", c.msg, len,
			    max);
	m->type = hdr->type;
	m->version = hdr->version;
	m->flags = hdr->flags;
	ret = dec_payload(&c, m);
	if (ret) {
		tsync_msg_free(m);
		memset(m, 0, sizeof(*m));
		return ret;
	}
	if (err) {
		err->code = 0;
		err->reason[0] = 0;
	}
	return 0;
}
