// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The message table, names, helpers shared by both directions, version
 * negotiation, and the encoder. See proto.h and Documentation/protocol.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/tsync_record.h"

struct msg_desc {
	const char *name;
	uint32_t min, max;
};

static const struct msg_desc msg_table[256] = {
#define TSYNC_X_DESC(n, id, mn, mx) [id] = { #n, mn, mx },
	TSYNC_MSG_TYPES(TSYNC_X_DESC)
#undef TSYNC_X_DESC
};

/* Returns the table entry of @type, or NULL for unknown types. */
static const struct msg_desc *msg_desc(unsigned int type)
{
	if (type >= 256 || !msg_table[type].name)
		return NULL;
	return &msg_table[type];
}

/* Returns the name of @type or "UNKNOWN". */
const char *tsync_msg_name(unsigned int type)
{
	const struct msg_desc *d = msg_desc(type);

	return d ? d->name : "UNKNOWN";
}

/* Returns 1 if @type is a known message type. */
int tsync_msg_type_known(unsigned int type)
{
	return msg_desc(type) != NULL;
}

/* Returns the minimum payload length of @type (0 if unknown). */
uint32_t tsync_msg_min_len(unsigned int type)
{
	const struct msg_desc *d = msg_desc(type);

	return d ? d->min : 0;
}

/* Returns the maximum payload length of @type (0 if unknown). */
uint32_t tsync_msg_max_len(unsigned int type)
{
	const struct msg_desc *d = msg_desc(type);

	return d ? d->max : 0;
}

/* Returns a short name of a TSYNC_PERR_* code or of a -errno. */
const char *tsync_perr_name(int code)
{
	static const char *const names[] = {
		"bad magic", "bad version", "unknown message type",
		"payload too short", "payload too long", "length mismatch",
		"truncated field", "count overflows payload",
		"count out of limits", "unterminated string",
		"embedded NUL in string", "unprintable string",
		"string too long", "empty name", "bad CPU number",
		"value out of range", "no common protocol version",
		"unexpected message", "peer error",
	};

	if (code >= TSYNC_PERR_BAD_MAGIC && code < TSYNC_PERR_LAST)
		return names[code - TSYNC_PERR_BAD_MAGIC];
	if (code == 0)
		return "success";
	return strerror(code < 0 ? -code : code);
}

/* Returns 1 if @code is a protocol (TSYNC_PERR_*) code. */
int tsync_perr_is_proto(int code)
{
	return code >= TSYNC_PERR_BAD_MAGIC && code < TSYNC_PERR_LAST;
}

/* Returns the name of a wire error code, "UNKNOWN" if not known. */
const char *tsync_err_name(uint32_t code)
{
	static const char *const names[] = {
		"NONE", "PROTOCOL", "VERSION", "AUTH", "UNEXPECTED",
		"BAD_REQUEST", "NO_CPU", "BUSY", "LIMIT", "UNSUPPORTED",
		"NO_SESSION", "INTERNAL", "TIMEOUT", "NO_EVENT", "PERMISSION",
	};

	if (code < sizeof(names) / sizeof(names[0]))
		return names[code];
	return "UNKNOWN";
}

/* The names of the stamp sources; see proto.h. */
const char *const tsync_stamp_names[] = {
#define TSYNC_X_NAME(name, NAME, id, cap) #name,
	TSYNC_STAMP_SOURCES(TSYNC_X_NAME)
#undef TSYNC_X_NAME
	NULL
};

/* The rows of TSYNC_STAMP_SOURCES. */
static const struct {
	const char *name;
	enum tsync_stamp_source id;
	uint32_t cap;
} stamp_rows[] = {
#define TSYNC_X_ROW(name, NAME, id, cap) { #name, TSYNC_STAMP_##NAME, cap },
	TSYNC_STAMP_SOURCES(TSYNC_X_ROW)
#undef TSYNC_X_ROW
};
#define NSTAMP_ROWS (sizeof(stamp_rows) / sizeof(stamp_rows[0]))

/* Returns the index of @source in stamp_rows[], or -1. */
static int stamp_row(unsigned int source)
{
	for (size_t i = 0; i < NSTAMP_ROWS; i++)
		if (stamp_rows[i].id == source)
			return (int)i;
	return -1;
}

/* Returns the name of a stamp source or "unknown". */
const char *tsync_stamp_source_name(unsigned int source)
{
	int i = stamp_row(source);

	return i >= 0 ? stamp_rows[i].name : "unknown";
}

/* Parses a stamp source name; see proto.h. */
int tsync_stamp_source_parse(const char *name, enum tsync_stamp_source *out)
{
	for (size_t i = 0; name && i < NSTAMP_ROWS; i++) {
		if (!strcmp(name, stamp_rows[i].name)) {
			*out = stamp_rows[i].id;
			return 0;
		}
	}
	return -EINVAL;
}

/* Says whether a stamp source is known; see proto.h. */
int tsync_stamp_source_known(unsigned int source)
{
	return stamp_row(source) >= 0;
}

/* Returns the capability bit of a stamp source; see proto.h. */
uint32_t tsync_stamp_source_cap(unsigned int source)
{
	int i = stamp_row(source);

	return i >= 0 ? stamp_rows[i].cap : 0;
}

/* Returns the name of a META_CHUNK kind or "unknown". */
const char *tsync_meta_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		"unknown", "header_page", "header_event", "ftrace_format",
		"event_format", "kallsyms", "printk", "cmdlines", "uname",
		"trace_clock", "cpustat",
	};

	if (kind < sizeof(names) / sizeof(names[0]))
		return names[kind];
	return "unknown";
}

/* Returns the name of a CLOCK_STATE source or "unknown". */
const char *tsync_clock_source_name(unsigned int source)
{
	static const char *const names[] = { "none", "ptp4l", "chrony" };

	if (source < sizeof(names) / sizeof(names[0]))
		return names[source];
	return "unknown";
}

/* Copies string @src into the NUL-padded field @dst of @size bytes,
 * cut to fit; the field is not terminated when @src fills it. */
static void pad_copy(char *dst, size_t size, const char *src)
{
	memset(dst, 0, size);
	memcpy(dst, src, strnlen(src, size));
}

/* Fills a clock record from a daemon's state; see proto.h. */
void tsync_rec_clock_init(struct tsync_rec_clock *rec, const struct tsync_clock_state *st,
			  const char *peer)
{
	memset(rec, 0, sizeof(*rec));
	tsync_rec_hdr_init(&rec->hdr, TSYNC_REC_CLOCK, sizeof(*rec));
	rec->synced = st->synced ? 1 : 0;
	rec->stratum = st->stratum;
	rec->status = st->status;
	rec->offset_ns = st->offset_ns;
	rec->bound_ns = st->bound_ns == TSYNC_CLOCK_BOUND_UNKNOWN ? TSYNC_REC_BOUND_UNKNOWN :
		       st->bound_ns;
	pad_copy(rec->daemon, sizeof(rec->daemon), tsync_clock_source_name(st->source));
	pad_copy(rec->peer, sizeof(rec->peer), peer);
	pad_copy(rec->master, sizeof(rec->master), st->master);
	pad_copy(rec->detail, sizeof(rec->detail), st->detail);
}

/* Zeroes @m and sets its type. */
void tsync_msg_init(struct tsync_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
}

/* Makes @m an ERROR message with a sanitized, truncated reason. */
void tsync_msg_set_error(struct tsync_msg *m, uint32_t code,
			 const char *fmt, ...)
{
	va_list ap;
	char *p;

	tsync_msg_init(m, TSYNC_MSG_ERROR);
	m->error.code = code;
	va_start(ap, fmt);
	vsnprintf(m->error.reason, sizeof(m->error.reason), fmt, ap);
	va_end(ap);
	for (p = m->error.reason; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

/* Frees what the decoder allocated for @m; safe to call twice. */
void tsync_msg_free(struct tsync_msg *m)
{
	if (!m)
		return;
	switch (m->type) {
	case TSYNC_MSG_SYNC_STAMPS:
		free(m->sync_stamps.stamps);
		m->sync_stamps.stamps = NULL;
		break;
	case TSYNC_MSG_TRACE_START:
		free(m->trace_start.args);
		m->trace_start.args = NULL;
		break;
	case TSYNC_MSG_TRACE_STOPPED:
		free(m->trace_stopped.cpus);
		m->trace_stopped.cpus = NULL;
		break;
	case TSYNC_MSG_META_CHUNK:
		free(m->meta_chunk.data);
		m->meta_chunk.data = NULL;
		break;
	default:
		break;
	}
}

/* Picks the highest common version or builds the ERROR naming both ranges. */
int tsync_proto_negotiate(uint8_t our_min, uint8_t our_max, uint8_t peer_min,
			  uint8_t peer_max, uint8_t *chosen,
			  struct tsync_msg *reply)
{
	uint8_t lo = our_min > peer_min ? our_min : peer_min;
	uint8_t hi = our_max < peer_max ? our_max : peer_max;

	if (lo <= hi && lo >= 1) {
		*chosen = hi;
		return 0;
	}
	if (reply)
		tsync_msg_set_error(reply, TSYNC_ERR_VERSION,
				    "no common protocol version: we speak %u..%u, peer speaks %u..%u",
				    our_min, our_max, peer_min, peer_max);
	return TSYNC_PERR_NO_COMMON_VERSION;
}

/* Checks the version an agent chose in HELLO_REPLY; see proto.h. */
int tsync_proto_check_choice(uint8_t our_min, uint8_t our_max,
			     const struct tsync_hello_reply *r, char *err,
			     size_t errlen)
{
	uint8_t want;

	if (tsync_proto_negotiate(our_min, our_max, r->ver_min, r->ver_max, &want,
				  NULL)) {
		if (err && errlen)
			snprintf(err, errlen, "no common protocol version: the agent chose "
				 "version %u and speaks %u..%u, this host speaks %u..%u",
				 r->version, r->ver_min, r->ver_max, our_min, our_max);
		return TSYNC_PERR_NO_COMMON_VERSION;
	}
	if (r->version != want) {
		if (err && errlen)
			snprintf(err, errlen, "the agent chose protocol version %u, but the "
				 "highest both speak is %u (agent %u..%u, host %u..%u)",
				 r->version, want, r->ver_min, r->ver_max, our_min, our_max);
		return TSYNC_PERR_BAD_VALUE;
	}
	return 0;
}

/* The sync methods, in the agent's order of preference. */
static const struct {
	const char *name;
	uint8_t id;
} method_rows[] = {
#define TSYNC_X_ROW(name, NAME, id) { #name, id },
	TSYNC_SYNC_METHODS(TSYNC_X_ROW)
#undef TSYNC_X_ROW
};
#define NMETHOD_ROWS (sizeof(method_rows) / sizeof(method_rows[0]))

/* Returns the name of a sync method; see proto.h. */
const char *tsync_method_name(unsigned int id)
{
	for (size_t i = 0; i < NMETHOD_ROWS; i++)
		if (method_rows[i].id == id)
			return method_rows[i].name;
	return "unknown";
}

/* Parses a sync method name; see proto.h. */
int tsync_method_parse(const char *name, uint8_t *out)
{
	for (size_t i = 0; name && i < NMETHOD_ROWS; i++) {
		if (!strcmp(name, method_rows[i].name)) {
			*out = method_rows[i].id;
			return 0;
		}
	}
	return -EINVAL;
}

/* Says whether a sync method is known; see proto.h. */
int tsync_method_known(unsigned int id)
{
	return strcmp(tsync_method_name(id), "unknown") != 0;
}

/* The agent's choice from the host's offer; see proto.h. */
uint8_t tsync_method_pick(uint32_t offer, uint32_t can)
{
	can |= TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES);
	for (size_t i = 0; i < NMETHOD_ROWS; i++)
		if (offer & can & TSYNC_METHOD_BIT(method_rows[i].id))
			return method_rows[i].id;
	return TSYNC_METHOD_PROBES;
}

/* Checks the sync method an agent took in HELLO_REPLY; see proto.h. */
int tsync_proto_check_method(const struct tsync_hello *h, const struct tsync_hello_reply *r,
			     uint8_t *method, char *err, size_t errlen)
{
	uint32_t offer = h->caps & TSYNC_CAP_SYNC_METHOD ? h->methods : 0;

	*method = TSYNC_METHOD_PROBES;
	if (!(r->caps & TSYNC_CAP_SYNC_METHOD))
		return 0;
	if (r->method >= 32 || !(offer & TSYNC_METHOD_BIT(r->method))) {
		if (err && errlen)
			snprintf(err, errlen, "the agent took sync method %s (%u), which this "
				 "host did not offer (offer 0x%x)", tsync_method_name(r->method),
				 r->method, offer);
		return TSYNC_PERR_BAD_VALUE;
	}
	*method = r->method;
	return 0;
}

/* Checks that @m has @type; turns an ERROR into a readable reason. */
int tsync_msg_expect(const struct tsync_msg *m, uint8_t type, char *err,
		     size_t errlen)
{
	if (m->type == type)
		return 0;
	if (m->type == TSYNC_MSG_ERROR) {
		if (err && errlen)
			snprintf(err, errlen, "peer error %s (%u): %s",
				 tsync_err_name(m->error.code), m->error.code,
				 m->error.reason);
		return TSYNC_PERR_PEER_ERROR;
	}
	if (err && errlen)
		snprintf(err, errlen, "expected %s, got %s", tsync_msg_name(type),
			 tsync_msg_name(m->type));
	return TSYNC_PERR_UNEXPECTED;
}

/* ---- encoder ---- */

/* Write cursor; with buf == NULL it only measures. */
struct wcur {
	uint8_t *buf;
	size_t cap, off;
	int err;
};

/* Appends @n bytes of @src (or only counts them). */
static void put(struct wcur *c, const void *src, size_t n)
{
	if (c->buf && !c->err) {
		if (n > c->cap - c->off) {
			c->err = -ENOSPC;
			return;
		}
		if (n)
			memcpy(c->buf + c->off, src, n);
	}
	c->off += n;
}

static void put_u8(struct wcur *c, uint8_t v)
{
	put(c, &v, 1);
}

static void put_be16(struct wcur *c, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(c, b, 2);
}

static void put_be32(struct wcur *c, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	put(c, b, 4);
}

static void put_be64(struct wcur *c, uint64_t v)
{
	put_be32(c, (uint32_t)(v >> 32));
	put_be32(c, (uint32_t)v);
}

/* Returns 1 if every byte of @s (length @n) is printable ASCII. */
static int printable(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

/*
 * Appends string @s (NULL is "") limited to @max bytes with its NUL;
 * @nonempty requires at least one character. Sets c->err on bad input.
 */
static void put_str(struct wcur *c, const char *s, size_t max, int nonempty)
{
	size_t n;

	if (!s)
		s = "";
	n = strnlen(s, max);
	if (c->err)
		return;
	if (n >= max) {
		c->err = TSYNC_PERR_STRING_TOO_LONG;
		return;
	}
	if (nonempty && !n) {
		c->err = TSYNC_PERR_STRING_EMPTY;
		return;
	}
	if (!printable(s, n)) {
		c->err = TSYNC_PERR_STRING_UNPRINTABLE;
		return;
	}
	put_be16(c, (uint16_t)(n + 1));
	put(c, s, n + 1);
}

/* Encodes the payload of @m at the cursor. */
static void put_payload(struct wcur *c, const struct tsync_msg *m)
{
	uint32_t i;

	switch (m->type) {
	case TSYNC_MSG_HELLO: {
		const struct tsync_hello *h = &m->hello;

		put_u8(c, h->ver_min);
		put_u8(c, h->ver_max);
		put_u8(c, h->kind);
		put_u8(c, 0);
		put_be32(c, h->caps);
		put_be64(c, h->session_id);
		put_be32(c, h->cpu);
		put(c, h->secret, sizeof(h->secret));
		put(c, h->nonce, sizeof(h->nonce));
		if (h->caps & TSYNC_CAP_SYNC_METHOD)
			put_be32(c, h->methods);
		break;
	}
	case TSYNC_MSG_HELLO_REPLY: {
		const struct tsync_hello_reply *h = &m->hello_reply;

		put_u8(c, h->version);
		put_u8(c, h->ver_min);
		put_u8(c, h->ver_max);
		put_u8(c, 0);
		put_be32(c, h->caps);
		put(c, h->nonce, sizeof(h->nonce));
		put(c, h->mac, sizeof(h->mac));
		if (h->caps & TSYNC_CAP_SYNC_METHOD) {
			put_u8(c, h->method);
			put_u8(c, 0);
			put_be16(c, 0);
		}
		break;
	}
	case TSYNC_MSG_AUTH:
		put(c, m->auth.mac, sizeof(m->auth.mac));
		break;
	case TSYNC_MSG_ERROR:
		put_be32(c, m->error.code);
		put_str(c, m->error.reason, sizeof(m->error.reason), 0);
		break;
	case TSYNC_MSG_SESSION_REQ:
		put_be64(c, m->session_req.trace_id);
		put_str(c, m->session_req.name, TSYNC_NAME_MAX, 0);
		break;
	case TSYNC_MSG_SESSION_REPLY: {
		const struct tsync_session_reply *s = &m->session_reply;

		if (s->nclocks > TSYNC_MAX_CLOCKS) {
			c->err = TSYNC_PERR_COUNT_LIMIT;
			return;
		}
		put_be32(c, s->ncpus);
		put_be32(c, s->page_size);
		put_be64(c, s->trace_id);
		put_be32(c, s->caps);
		put_be64(c, s->session_id);
		put(c, s->secret, sizeof(s->secret));
		put_str(c, s->name, TSYNC_NAME_MAX, 0);
		put_str(c, s->clock, TSYNC_CLOCK_NAME_MAX, 1);
		put_be16(c, (uint16_t)s->nclocks);
		for (i = 0; i < s->nclocks; i++)
			put_str(c, s->clocks[i], TSYNC_CLOCK_NAME_MAX, 1);
		break;
	}
	case TSYNC_MSG_SYNC_START: {
		const struct tsync_sync_start *s = &m->sync_start;

		put_be32(c, s->round_id);
		put_be32(c, s->cpu);
		put_be32(c, s->nprobes);
		put_u8(c, s->source);
		put_str(c, s->clock, TSYNC_CLOCK_NAME_MAX, 1);
		break;
	}
	case TSYNC_MSG_SYNC_READY:
		put_be32(c, m->sync_ready.round_id);
		put_be32(c, m->sync_ready.cpu);
		put_be32(c, m->sync_ready.status);
		break;
	case TSYNC_MSG_PROBE:
	case TSYNC_MSG_PROBE_REPLY:
		put_be32(c, m->probe.round_id);
		put_be32(c, m->probe.seq);
		break;
	case TSYNC_MSG_SYNC_END:
		put_be32(c, m->sync_end.round_id);
		break;
	case TSYNC_MSG_SYNC_STAMPS: {
		const struct tsync_sync_stamps *s = &m->sync_stamps;

		if (s->count > TSYNC_MAX_PROBES) {
			c->err = TSYNC_PERR_COUNT_LIMIT;
			return;
		}
		put_be32(c, s->round_id);
		put_be32(c, s->cpu);
		put_be32(c, s->count);
		for (i = 0; i < s->count; i++) {
			put_be32(c, s->stamps[i].seq);
			put_be64(c, (uint64_t)s->stamps[i].t2);
			put_be64(c, (uint64_t)s->stamps[i].t3);
		}
		break;
	}
	case TSYNC_MSG_SYNC_RESULT: {
		const struct tsync_sync_result *r = &m->sync_result;

		put_be32(c, r->round_id);
		put_be32(c, r->cpu);
		put_be64(c, (uint64_t)r->offset_ns);
		put_be64(c, r->error_ns);
		put_be64(c, r->delay_ns);
		put_be32(c, r->used);
		put_be32(c, r->sent);
		break;
	}
	case TSYNC_MSG_TRACE_START: {
		const struct tsync_trace_start *t = &m->trace_start;

		put_be32(c, 0);		/* protocol 1's first encoding: buffer_kb */
		put_be32(c, t->flags);
		put_str(c, t->clock, TSYNC_CLOCK_NAME_MAX, 0);
		put_be32(c, 0);		/* and nevents */
		if (!(t->flags & TSYNC_TRACE_FL_ARGS))
			break;
		if (t->nargs > TSYNC_MAX_ARGS) {
			c->err = TSYNC_PERR_COUNT_LIMIT;
			return;
		}
		put_be32(c, t->nargs);
		for (i = 0; i < t->nargs; i++)
			put_str(c, t->args[i], TSYNC_ARG_MAX, 0);
		break;
	}
	case TSYNC_MSG_TRACE_STARTED:
		put_be32(c, m->trace_started.ncpus);
		break;
	case TSYNC_MSG_TRACE_STOPPED: {
		const struct tsync_trace_stopped *t = &m->trace_stopped;

		if (t->count > TSYNC_MAX_CPUS) {
			c->err = TSYNC_PERR_COUNT_LIMIT;
			return;
		}
		put_be32(c, t->count);
		for (i = 0; i < t->count; i++) {
			put_be32(c, t->cpus[i].cpu);
			put_be64(c, t->cpus[i].bytes);
			put_be64(c, t->cpus[i].entries);
			put_be64(c, t->cpus[i].overrun);
			put_be64(c, t->cpus[i].dropped);
		}
		break;
	}
	case TSYNC_MSG_STREAM_END:
		put_be32(c, m->stream_end.cpu);
		put_be64(c, m->stream_end.bytes);
		break;
	case TSYNC_MSG_META_CHUNK: {
		const struct tsync_meta_chunk *k = &m->meta_chunk;

		if (!k->kind) {
			c->err = TSYNC_PERR_BAD_VALUE;
			return;
		}
		if (k->len > TSYNC_META_CHUNK_MAX) {
			c->err = TSYNC_PERR_TOO_LONG;
			return;
		}
		put_u8(c, k->kind);
		put_str(c, k->system, TSYNC_NAME_MAX,
			k->kind == TSYNC_META_EVENT_FORMAT);
		put_be32(c, k->more);
		put_be32(c, k->len);
		put(c, k->data, k->len);
		break;
	}
	case TSYNC_MSG_CLOCK_REQ:
		put_str(c, m->clock_req.clock, TSYNC_CLOCK_NAME_MAX, 1);
		break;
	case TSYNC_MSG_CLOCK_STATE: {
		const struct tsync_clock_state *k = &m->clock_state;

		if (k->source > TSYNC_CLOCK_SRC_MAX || k->synced > 1) {
			c->err = TSYNC_PERR_BAD_VALUE;
			return;
		}
		put_u8(c, k->source);
		put_u8(c, k->synced);
		put_be16(c, k->stratum);
		put_be32(c, (uint32_t)k->status);
		put_be64(c, (uint64_t)k->offset_ns);
		put_be64(c, k->bound_ns);
		put_be64(c, (uint64_t)k->clock_ns);
		put_be64(c, (uint64_t)k->realtime_ns);
		put_be64(c, k->read_ns);
		put_str(c, k->master, TSYNC_CLOCK_TEXT_MAX, 0);
		put_str(c, k->detail, TSYNC_CLOCK_TEXT_MAX, 0);
		break;
	}
	default:	/* BYE, TRACE_STOP, META_REQ, META_END: empty */
		break;
	}
}

/* Writes a header (version 0 means TSYNC_PROTO_VERSION_MIN). */
static void put_hdr(struct wcur *c, uint8_t version, uint8_t type,
		    uint16_t flags, uint32_t plen)
{
	put_be32(c, TSYNC_MAGIC);
	put_u8(c, version ? version : TSYNC_PROTO_VERSION_MIN);
	put_u8(c, type);
	put_be16(c, flags);
	put_be32(c, plen);
}

/* Measures @m's payload and checks it against the table; returns 0/PERR. */
static int measure(const struct tsync_msg *m, size_t *plen)
{
	const struct msg_desc *d = msg_desc(m->type);
	struct wcur c = { 0 };

	if (!d)
		return TSYNC_PERR_UNKNOWN_TYPE;
	if (m->version > TSYNC_PROTO_VERSION_MAX)
		return TSYNC_PERR_BAD_VERSION;
	put_payload(&c, m);
	if (c.err)
		return c.err;
	if (c.off < d->min)
		return TSYNC_PERR_TOO_SHORT;
	if (c.off > d->max || c.off > TSYNC_MSG_MAX)
		return TSYNC_PERR_TOO_LONG;
	*plen = c.off;
	return 0;
}

/* Returns the encoded size of @m in @len; see proto.h. */
int tsync_msg_size(const struct tsync_msg *m, size_t *len)
{
	size_t plen;
	int ret = measure(m, &plen);

	if (ret)
		return ret;
	*len = TSYNC_HDR_LEN + plen;
	return 0;
}

/* Encodes @m into @buf; see proto.h. */
int tsync_msg_encode(const struct tsync_msg *m, uint8_t *buf, size_t cap,
		     size_t *len)
{
	struct wcur c = { .buf = buf, .cap = cap };
	size_t plen;
	int ret = measure(m, &plen);

	if (ret)
		return ret;
	if (cap < TSYNC_HDR_LEN + plen)
		return -ENOSPC;
	put_hdr(&c, m->version, m->type, m->flags, (uint32_t)plen);
	put_payload(&c, m);
	if (c.err)
		return c.err;
	*len = c.off;
	return 0;
}

/* Writes a whole PROBE/PROBE_REPLY message; see proto.h. */
size_t tsync_probe_encode(uint8_t *buf, uint8_t type, uint32_t round_id,
			  uint32_t seq)
{
	struct wcur c = { .buf = buf, .cap = TSYNC_PROBE_MSG_LEN };

	put_hdr(&c, 0, type, 0, TSYNC_PROBE_LEN);
	put_be32(&c, round_id);
	put_be32(&c, seq);
	return TSYNC_PROBE_MSG_LEN;
}
