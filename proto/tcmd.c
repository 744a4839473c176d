// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's agent protocol codec (see proto/tcmd.h and
 * Documentation/protocol.md). The decoder trusts nothing: every size,
 * count and string is checked against the bytes actually present before it
 * is used, and each rejection says which field and why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/tcmd.h"

/* Struct bytes of each command after the header (trace-msg.c's table). */
static const uint32_t cmd_struct_len[TCMD_NR_CMDS] = {
	[TCMD_TINIT] = 12,
	[TCMD_RINIT] = 4,
	[TCMD_TRACE_REQ] = 16,
	[TCMD_TRACE_RESP] = 40,
	[TCMD_TIME_SYNC] = 20,
	[TCMD_TRACE_PROXY] = 24,
};

static const char *const cmd_names[TCMD_NR_CMDS] = {
	"CLOSE", "TINIT", "RINIT", "SEND_DATA", "FIN_DATA", "NOT_SUPP",
	"TRACE_REQ", "TRACE_RESP", "CLOSE_RESP", "TIME_SYNC", "TRACE_PROXY",
	"CONT",
};

/* TRACE_REQ parameter ids. */
enum { PARAM_ARGS = 0, PARAM_TSYNC_PROTOS = 1 };

/* Returns the name of @cmd, or "UNKNOWN". */
const char *tcmd_cmd_name(uint32_t cmd)
{
	return cmd < TCMD_NR_CMDS ? cmd_names[cmd] : "UNKNOWN";
}

/* Returns the struct bytes of @cmd. */
uint32_t tcmd_cmd_struct_len(uint32_t cmd)
{
	return cmd < TCMD_NR_CMDS ? cmd_struct_len[cmd] : 0;
}

/* Records a formatted reason in @e (may be NULL); returns -EBADMSG. */
static int __attribute__((format(printf, 2, 3)))
bad(struct tcmd_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static uint64_t get64(const uint8_t *b)
{
	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static void put64(uint8_t *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b + 4, (uint32_t)v);
}

/* Checks a header decoded into @h. */
static int hdr_check(const struct tcmd_hdr *h, struct tcmd_err *e)
{
	if (h->size < TCMD_HDR_LEN)
		return bad(e, "message size %u is below the %u-byte header",
			   h->size, TCMD_HDR_LEN);
	if (h->size > TCMD_MSG_MAX)
		return bad(e, "message size %u is above the limit of %u",
			   h->size, TCMD_MSG_MAX);
	if (h->cmd >= TCMD_NR_CMDS)
		return bad(e, "unknown command %u", h->cmd);
	if (h->cmd_size > h->size - TCMD_HDR_LEN)
		return bad(e, "%s: struct size %u does not fit in a %u-byte message",
			   cmd_names[h->cmd], h->cmd_size, h->size);
	if (h->cmd_size < cmd_struct_len[h->cmd])
		return bad(e, "%s: struct size %u, needs %u",
			   cmd_names[h->cmd], h->cmd_size,
			   cmd_struct_len[h->cmd]);
	return 0;
}

/* Decodes and checks a header. */
int tcmd_hdr_decode(const uint8_t *buf, struct tcmd_hdr *h,
		    struct tcmd_err *err)
{
	h->size = get32(buf);
	h->cmd = get32(buf + 4);
	h->cmd_size = get32(buf + 8);
	return hdr_check(h, err);
}

/*
 * Checks that @len bytes at @p are @count NUL-terminated strings filling
 * them exactly, each shorter than @maxlen (0: no limit) and non-empty if
 * @nonempty. @what names the list in reasons.
 */
static int strs_check(const char *p, uint32_t len, uint32_t count,
		      size_t maxlen, int nonempty, const char *what,
		      struct tcmd_err *e)
{
	uint32_t i, off = 0;
	size_t n;

	for (i = 0; i < count; i++) {
		if (off >= len)
			return bad(e, "%s: %u strings announced, data ends after %u",
				   what, count, i);
		n = strnlen(p + off, len - off);
		if (n == len - off)
			return bad(e, "%s: string %u is not NUL-terminated",
				   what, i);
		if (nonempty && !n)
			return bad(e, "%s: string %u is empty", what, i);
		if (maxlen && n >= maxlen)
			return bad(e, "%s: string %u is %zu bytes long, limit %zu",
				   what, i, n, maxlen - 1);
		off += (uint32_t)n + 1;
	}
	if (off != len)
		return bad(e, "%s: %u bytes after the %u strings", what,
			   len - off, count);
	return 0;
}

/* Returns the string after @prev in @s (the first if NULL), or NULL. */
const char *tcmd_strs_next(const struct tcmd_strs *s, const char *prev)
{
	const char *p;

	if (!prev)
		return s->count ? s->buf : NULL;
	p = prev + strlen(prev) + 1;
	return p < s->buf + s->len ? p : NULL;
}

/* ARGS parameter: be32 argc, then argc NUL-terminated strings. */
static int param_args(const uint8_t *p, uint32_t len,
		      struct tcmd_trace_req *r, struct tcmd_err *e)
{
	uint32_t argc;
	int ret;

	if (r->has_args)
		return bad(e, "TRACE_REQ: ARGS given twice");
	if (len < 4)
		return bad(e, "TRACE_REQ: ARGS is %u bytes, below its be32 argc",
			   len);
	argc = get32(p);
	if (!argc)	/* trace-cmd sends ARGS only with arguments */
		return bad(e, "TRACE_REQ: ARGS with 0 arguments");
	if (argc > (len - 4))
		return bad(e, "TRACE_REQ: ARGS announces %u arguments in %u bytes",
			   argc, len - 4);
	ret = strs_check((const char *)p + 4, len - 4, argc, 0, 0,
			 "TRACE_REQ ARGS", e);
	if (ret)
		return ret;
	r->has_args = 1;
	r->args.buf = (const char *)p + 4;
	r->args.len = len - 4;
	r->args.count = argc;
	return 0;
}

/* TSYNC_PROTOS parameter: names, each NUL-terminated, then an empty one. */
static int param_protos(const uint8_t *p, uint32_t len,
			struct tcmd_trace_req *r, struct tcmd_err *e)
{
	const char *s = (const char *)p;
	uint32_t off = 0, count = 0;
	size_t n;
	int ret;

	if (r->has_protos)
		return bad(e, "TRACE_REQ: TSYNC_PROTOS given twice");
	for (;;) {
		if (off >= len)
			return bad(e, "TRACE_REQ: TSYNC_PROTOS does not end with its empty name");
		n = strnlen(s + off, len - off);
		if (n == len - off)
			return bad(e, "TRACE_REQ: TSYNC_PROTOS does not end with its empty name");
		if (!n)
			break;
		off += (uint32_t)n + 1;
		count++;
	}
	if (off != len - 1)
		return bad(e, "TRACE_REQ: TSYNC_PROTOS has %u bytes after its end",
			   len - 1 - off);
	ret = strs_check(s, len - 1, count, TCMD_PNAME_LEN, 1,
			 "TRACE_REQ TSYNC_PROTOS", e);
	if (ret)
		return ret;
	r->has_protos = 1;
	r->protos.buf = s;
	r->protos.len = len - 1;
	r->protos.count = count;
	return 0;
}

/* TRACE_REQ / TRACE_PROXY: struct, then {be32 id, be32 len, data}... */
static int dec_trace_req(const uint8_t *st, const uint8_t *p, uint32_t len,
			 uint32_t cmd, struct tcmd_trace_req *r,
			 struct tcmd_err *e)
{
	uint32_t off = 0, id, plen;
	int ret;

	memset(r, 0, sizeof(*r));
	r->flags = get32(st);
	r->trace_id = get64(st + 8);
	if (cmd == TCMD_TRACE_PROXY) {
		r->cpus = get32(st + 16);
		r->siblings = get32(st + 20);
	}
	while (off < len) {
		if (len - off < 8)
			return bad(e, "TRACE_REQ: %u bytes after the last parameter",
				   len - off);
		id = get32(p + off);
		plen = get32(p + off + 4);
		off += 8;
		if (plen > len - off)
			return bad(e, "TRACE_REQ: parameter %u claims %u bytes, %u left",
				   id, plen, len - off);
		ret = 0;
		if (id == PARAM_ARGS)
			ret = param_args(p + off, plen, r, e);
		else if (id == PARAM_TSYNC_PROTOS)
			ret = param_protos(p + off, plen, r, e);
		/* unknown parameters are skipped, as trace-cmd does */
		if (ret)
			return ret;
		off += plen;
	}
	return 0;
}

/* Checks @len bytes of a 16-byte protocol name field; copies it to @dst. */
static int pname(const uint8_t *src, char *dst, const char *what,
		 struct tcmd_err *e)
{
	if (strnlen((const char *)src, TCMD_PNAME_LEN) == TCMD_PNAME_LEN)
		return bad(e, "%s: protocol name is not NUL-terminated within %u bytes",
			   what, TCMD_PNAME_LEN);
	memcpy(dst, src, TCMD_PNAME_LEN);
	return 0;
}

/* Parses decimal @s (no sign, no spaces) into @v; returns 0 or -1. */
static int parse_port(const char *s, uint32_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > UINT32_MAX)
			return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

/* Checks a page size: a power of two in [1 KiB, 1 MiB]. */
static int page_size_ok(uint32_t ps)
{
	return ps >= 1024 && ps <= (1u << 20) && !(ps & (ps - 1));
}

/* TRACE_RESP: struct, then @cpus decimal ports. */
static int dec_trace_resp(const uint8_t *st, const uint8_t *p, uint32_t len,
			  struct tcmd_trace_resp *r, struct tcmd_err *e)
{
	const char *s;
	uint32_t port;
	int ret;

	memset(r, 0, sizeof(*r));
	r->flags = get32(st);
	r->cpus = get32(st + 4);
	r->page_size = get32(st + 8);
	r->trace_id = get64(st + 12);
	ret = pname(st + 20, r->proto, "TRACE_RESP", e);
	if (ret)
		return ret;
	r->tsync_port = get32(st + 36);
	if (!r->cpus)
		return bad(e, "TRACE_RESP: 0 CPUs");
	if (!page_size_ok(r->page_size))
		return bad(e, "TRACE_RESP: page size %u is not a power of two in 1K..1M",
			   r->page_size);
	if (r->proto[0] && !r->tsync_port)
		return bad(e, "TRACE_RESP: time sync \"%s\" on port 0", r->proto);
	ret = strs_check((const char *)p, len, r->cpus, 11, 1,
			 "TRACE_RESP ports", e);
	if (ret)
		return ret;
	r->ports.buf = (const char *)p;
	r->ports.len = len;
	r->ports.count = r->cpus;
	for (s = tcmd_strs_next(&r->ports, NULL); s;
	     s = tcmd_strs_next(&r->ports, s))
		if (parse_port(s, &port))
			return bad(e, "TRACE_RESP: port \"%s\" is not a decimal number below 2^32",
				   s);
	return 0;
}

/* Fills @ports from a decoded TRACE_RESP. */
int tcmd_resp_ports(const struct tcmd_trace_resp *r, uint32_t *ports,
		    size_t n)
{
	const char *s;
	size_t i = 0;

	if (n < r->ports.count)
		return -ENOSPC;
	for (s = tcmd_strs_next(&r->ports, NULL); s;
	     s = tcmd_strs_next(&r->ports, s))
		if (parse_port(s, &ports[i++]))
			return -EINVAL;	/* not from tcmd_decode() */
	return 0;
}

/* Checks that a TIME_SYNC payload is exactly @want bytes. */
static int ts_len(const struct tcmd_time_sync *t, uint32_t want,
		  const char *what, struct tcmd_err *e)
{
	if (t->len != want)
		return bad(e, "TIME_SYNC %s %s: payload is %u bytes, expected %u",
			   t->proto, what, t->len, want);
	return 0;
}

/* proto "none": PROBE (native u16 CPU) and STOP. */
static int dec_ts_none(struct tcmd_time_sync *t, struct tcmd_err *e)
{
	if (t->id == TCMD_TSYNC_PROBE) {
		if (ts_len(t, 2, "PROBE", e))
			return -EBADMSG;
		memcpy(&t->cpu, t->payload, 2);	/* host order, as trace-cmd */
		return 0;
	}
	if (t->id == TCMD_TSYNC_STOP)
		return ts_len(t, 0, "STOP", e);
	return bad(e, "TIME_SYNC none: unknown message %u", t->id);
}

/* proto "ptp": START, PROBE, PROBES, OFFSET, END. */
static int dec_ts_ptp(struct tcmd_time_sync *t, struct tcmd_err *e)
{
	const uint8_t *p = t->payload;

	switch (t->id) {
	case TCMD_PTP_START:
		if (ts_len(t, 8, "START", e))
			return -EBADMSG;
		t->start.series = get32(p);
		t->start.flags = get32(p + 4);
		return 0;
	case TCMD_PTP_PROBE:
		if (ts_len(t, 4, "PROBE", e))
			return -EBADMSG;
		t->count = get32(p);
		return 0;
	case TCMD_PTP_PROBES:
		if (ts_len(t, TCMD_PTP_PROBES_LEN, "PROBES", e))
			return -EBADMSG;
		t->probes.series = get32(p);
		t->probes.count = get32(p + 4);
		if (t->probes.count > TCMD_PTP_SAMPLES)
			return bad(e, "TIME_SYNC ptp PROBES: count %u above %u",
				   t->probes.count, TCMD_PTP_SAMPLES);
		return 0;
	case TCMD_PTP_OFFSET:
		if (ts_len(t, 16, "OFFSET", e))
			return -EBADMSG;
		t->offset.ts = (int64_t)get64(p);
		t->offset.offset = (int64_t)get64(p + 8);
		return 0;
	case TCMD_PTP_END:
		return ts_len(t, 0, "END", e);
	}
	return bad(e, "TIME_SYNC ptp: unknown message %u", t->id);
}

/* TIME_SYNC: char proto[16], be32 id, payload by protocol and id. */
static int dec_time_sync(const uint8_t *st, const uint8_t *p, uint32_t len,
			 struct tcmd_time_sync *t, struct tcmd_err *e)
{
	int ret;

	memset(t, 0, sizeof(*t));
	ret = pname(st, t->proto, "TIME_SYNC", e);
	if (ret)
		return ret;
	t->id = get32(st + 16);
	t->payload = p;
	t->len = len;
	if (!strcmp(t->proto, TCMD_PROTO_NONE))
		return dec_ts_none(t, e);
	if (!strcmp(t->proto, TCMD_PROTO_PTP))
		return dec_ts_ptp(t, e);
	if (!strcmp(t->proto, TCMD_PROTO_KVM))
		return tcmd_dec_kvm(t, e);
	if (!t->proto[0])
		return bad(e, "TIME_SYNC: empty protocol name");
	return 0;	/* another protocol's payload: left to its owner */
}

/* Reads PROBES slot @i. */
void tcmd_ptp_sample_get(const struct tcmd_time_sync *t, unsigned int i,
			 struct tcmd_ptp_sample *s)
{
	const uint8_t *p = t->payload + 8 + 12 * (size_t)i;

	s->ts = (int64_t)get64(p);
	s->id = get32(p + 8);
}

/* Decodes the payload of the commands without a struct. */
static int dec_plain(struct tcmd_msg *m, struct tcmd_err *e)
{
	const char *name = cmd_names[m->cmd];

	switch (m->cmd) {
	case TCMD_SEND_DATA:
		if (!m->payload_len)
			return bad(e, "SEND_DATA without data");
		return 0;
	case TCMD_NOT_SUPP:
		m->reason = NULL;
		if (!m->payload_len)
			return 0;
		if (strnlen((const char *)m->payload, m->payload_len) !=
		    m->payload_len - 1)
			return bad(e, "NOT_SUPP: reason is not one NUL-terminated string");
		if (m->payload[0])	/* an empty reason is no reason */
			m->reason = (const char *)m->payload;
		return 0;
	}
	if (m->payload_len)
		return bad(e, "%s carries %u unexpected payload bytes", name,
			   m->payload_len);
	return 0;
}

/* Decodes and checks a whole message. */
int tcmd_decode(const uint8_t *buf, size_t len, struct tcmd_msg *m,
		struct tcmd_err *err)
{
	struct tcmd_hdr h;
	const uint8_t *st;
	int ret;

	memset(m, 0, sizeof(*m));
	if (len < TCMD_HDR_LEN)
		return bad(err, "message of %zu bytes is shorter than its header",
			   len);
	ret = tcmd_hdr_decode(buf, &h, err);
	if (ret)
		return ret;
	if (h.size != len)
		return bad(err, "%s: header says %u bytes, got %zu",
			   cmd_names[h.cmd], h.size, len);
	m->cmd = h.cmd;
	st = buf + TCMD_HDR_LEN;
	m->payload = st + h.cmd_size;
	m->payload_len = h.size - TCMD_HDR_LEN - h.cmd_size;
	switch (h.cmd) {
	case TCMD_TRACE_REQ:
	case TCMD_TRACE_PROXY:
		ret = dec_trace_req(st, m->payload, m->payload_len, h.cmd,
				    &m->req, err);
		break;
	case TCMD_TRACE_RESP:
		ret = dec_trace_resp(st, m->payload, m->payload_len, &m->resp,
				     err);
		m->resp.ext = st + cmd_struct_len[TCMD_TRACE_RESP];
		m->resp.ext_len = h.cmd_size - cmd_struct_len[TCMD_TRACE_RESP];
		break;
	case TCMD_TIME_SYNC:
		ret = dec_time_sync(st, m->payload, m->payload_len, &m->ts, err);
		break;
	case TCMD_TINIT:
	case TCMD_RINIT:
		ret = 0;	/* `trace-cmd listen`: payload left raw */
		break;
	default:
		ret = dec_plain(m, err);
	}
	if (ret)
		memset(m, 0, sizeof(*m));
	return ret;
}

/* ---- encoders ---- */

/* Writes a header for @cmd with @payload bytes after its struct; returns
 * the whole length or -ENOSPC/-EINVAL. */
static ssize_t enc_hdr(uint8_t *buf, size_t cap, uint32_t cmd, size_t payload)
{
	size_t st = cmd_struct_len[cmd];
	size_t total = TCMD_HDR_LEN + st + payload;

	if (total > TCMD_MSG_MAX)
		return -EINVAL;
	if (total > cap)
		return -ENOSPC;
	put32(buf, (uint32_t)total);
	put32(buf + 4, cmd);
	put32(buf + 8, (uint32_t)st);
	memset(buf + TCMD_HDR_LEN, 0, st);
	return (ssize_t)total;
}

/* Encodes a message without struct or payload. */
ssize_t tcmd_enc_simple(uint8_t *buf, size_t cap, uint32_t cmd)
{
	if (cmd != TCMD_CLOSE && cmd != TCMD_FIN_DATA &&
	    cmd != TCMD_CLOSE_RESP && cmd != TCMD_CONT && cmd != TCMD_NOT_SUPP)
		return -EINVAL;
	return enc_hdr(buf, cap, cmd, 0);
}

/* Encodes NOT_SUPP with an optional reason, cut to fit one message. */
ssize_t tcmd_enc_not_supp(uint8_t *buf, size_t cap, const char *reason)
{
	size_t n;
	ssize_t ret;

	if (!reason || !*reason)
		return tcmd_enc_simple(buf, cap, TCMD_NOT_SUPP);
	n = strnlen(reason, TCMD_DATA_MAX - 1);
	ret = enc_hdr(buf, cap, TCMD_NOT_SUPP, n + 1);
	if (ret < 0)
		return ret;
	memcpy(buf + TCMD_HDR_LEN, reason, n);
	buf[TCMD_HDR_LEN + n] = 0;
	return ret;
}

/* Encodes SEND_DATA. */
ssize_t tcmd_enc_send_data(uint8_t *buf, size_t cap, const void *data,
			   size_t len)
{
	ssize_t ret;

	if (!len || len > TCMD_DATA_MAX)
		return -EINVAL;
	ret = enc_hdr(buf, cap, TCMD_SEND_DATA, len);
	if (ret >= 0)
		memcpy(buf + TCMD_HDR_LEN, data, len);
	return ret;
}

/* Returns the ARGS and TSYNC_PROTOS parameter bytes (headers included),
 * or (size_t)-1 on a bad protocol name. */
static size_t req_params_len(int argc, const char *const *argv,
			     const char *const *protos)
{
	size_t n = 0;
	int i;

	if (argc > 0) {
		n += 8 + 4;
		for (i = 0; i < argc; i++)
			n += strnlen(argv[i], TCMD_MSG_MAX) + 1;
	}
	if (protos) {
		n += 8 + 1;
		for (i = 0; protos[i]; i++) {
			size_t l = strnlen(protos[i], TCMD_PNAME_LEN);

			if (!l || l >= TCMD_PNAME_LEN)
				return (size_t)-1;
			n += l + 1;
		}
	}
	return n;
}

/* Encodes TRACE_REQ. */
ssize_t tcmd_enc_trace_req(uint8_t *buf, size_t cap, uint32_t flags,
			   uint64_t trace_id, int argc,
			   const char *const *argv, const char *const *protos)
{
	size_t plen = req_params_len(argc, argv, protos);
	uint8_t *p, *param;
	ssize_t ret;
	int i;

	if (argc < 0 || plen == (size_t)-1 || plen > TCMD_MSG_MAX)
		return -EINVAL;
	ret = enc_hdr(buf, cap, TCMD_TRACE_REQ, plen);
	if (ret < 0)
		return ret;
	put32(buf + TCMD_HDR_LEN, flags);
	put32(buf + TCMD_HDR_LEN + 4, 0);	/* argc: unused by trace-cmd */
	put64(buf + TCMD_HDR_LEN + 8, trace_id);
	p = buf + TCMD_HDR_LEN + 16;
	if (argc > 0) {
		param = p;
		put32(p, PARAM_ARGS);
		put32(p + 8, (uint32_t)argc);
		p += 12;
		for (i = 0; i < argc; i++)
			p = (uint8_t *)stpcpy((char *)p, argv[i]) + 1;
		put32(param + 4, (uint32_t)(p - param - 8));
	}
	if (protos) {
		param = p;
		put32(p, PARAM_TSYNC_PROTOS);
		p += 8;
		for (i = 0; protos[i]; i++)
			p = (uint8_t *)stpcpy((char *)p, protos[i]) + 1;
		*p++ = 0;
		put32(param + 4, (uint32_t)(p - param - 8));
	}
	return ret;
}

/* Encodes TRACE_RESP. */
ssize_t tcmd_enc_trace_resp(uint8_t *buf, size_t cap,
			    const struct tcmd_trace_resp *r,
			    const uint32_t *ports)
{
	char num[16];
	size_t plen = 0, pn = strnlen(r->proto, TCMD_PNAME_LEN);
	uint8_t *st, *p;
	ssize_t ret;
	uint32_t i;

	if (!r->cpus || r->cpus > TCMD_DATA_MAX / 2 || pn >= TCMD_PNAME_LEN ||
	    !page_size_ok(r->page_size) || (pn && !r->tsync_port))
		return -EINVAL;
	for (i = 0; i < r->cpus; i++)
		plen += (size_t)snprintf(num, sizeof(num), "%u", ports[i]) + 1;
	ret = enc_hdr(buf, cap, TCMD_TRACE_RESP, plen);
	if (ret < 0)
		return ret;
	st = buf + TCMD_HDR_LEN;
	put32(st, r->flags);
	put32(st + 4, r->cpus);
	put32(st + 8, r->page_size);
	put64(st + 12, r->trace_id);
	memcpy(st + 20, r->proto, pn);
	put32(st + 36, r->tsync_port);
	p = st + 40;
	for (i = 0; i < r->cpus; i++)
		p += snprintf((char *)p, 16, "%u", ports[i]) + 1;
	return ret;
}

/* Encodes TIME_SYNC with any payload. */
ssize_t tcmd_enc_time_sync(uint8_t *buf, size_t cap, const char *proto,
			   uint32_t id, const void *payload, size_t len)
{
	size_t pn = strnlen(proto, TCMD_PNAME_LEN);
	ssize_t ret;

	if (!pn || pn >= TCMD_PNAME_LEN)
		return -EINVAL;
	ret = enc_hdr(buf, cap, TCMD_TIME_SYNC, len);
	if (ret < 0)
		return ret;
	memcpy(buf + TCMD_HDR_LEN, proto, pn);
	put32(buf + TCMD_HDR_LEN + 16, id);
	if (len)
		memcpy(buf + TCMD_HDR_LEN + 20, payload, len);
	return ret;
}

/* none PROBE: the CPU in host order (trace-cmd's packed native u16). */
ssize_t tcmd_enc_tsync_probe(uint8_t *buf, size_t cap, uint16_t cpu)
{
	return tcmd_enc_time_sync(buf, cap, TCMD_PROTO_NONE, TCMD_TSYNC_PROBE,
				  &cpu, sizeof(cpu));
}

/* none STOP. */
ssize_t tcmd_enc_tsync_stop(uint8_t *buf, size_t cap)
{
	return tcmd_enc_time_sync(buf, cap, TCMD_PROTO_NONE, TCMD_TSYNC_STOP,
				  NULL, 0);
}

/* Encodes a ptp message whose payload is @n big-endian words of @size
 * bytes (4 or 8) taken from @v: START, PROBE, END and OFFSET. */
static ssize_t enc_ptp_words(uint8_t *buf, size_t cap, uint32_t id, size_t size,
			     const uint64_t *v, size_t n)
{
	uint8_t p[16] = { 0 };

	for (size_t i = 0; i < n; i++) {
		if (size == 8)
			put64(p + 8 * i, v[i]);
		else
			put32(p + 4 * i, (uint32_t)v[i]);
	}
	return tcmd_enc_time_sync(buf, cap, TCMD_PROTO_PTP, id, p, size * n);
}

/* ptp START. */
ssize_t tcmd_enc_ptp_start(uint8_t *buf, size_t cap, uint32_t series,
			   uint32_t flags)
{
	const uint64_t v[] = { series, flags };

	return enc_ptp_words(buf, cap, TCMD_PTP_START, 4, v, 2);
}

/* ptp PROBE. */
ssize_t tcmd_enc_ptp_probe(uint8_t *buf, size_t cap, uint32_t count)
{
	const uint64_t v[] = { count };

	return enc_ptp_words(buf, cap, TCMD_PTP_PROBE, 4, v, 1);
}

/* ptp END. */
ssize_t tcmd_enc_ptp_end(uint8_t *buf, size_t cap)
{
	return enc_ptp_words(buf, cap, TCMD_PTP_END, 4, NULL, 0);
}

/* ptp OFFSET. */
ssize_t tcmd_enc_ptp_offset(uint8_t *buf, size_t cap, int64_t ts,
			    int64_t offset)
{
	const uint64_t v[] = { (uint64_t)ts, (uint64_t)offset };

	return enc_ptp_words(buf, cap, TCMD_PTP_OFFSET, 8, v, 2);
}

/* ptp PROBES: written in place, no intermediate copy. */
ssize_t tcmd_enc_ptp_probes(uint8_t *buf, size_t cap, uint32_t series,
			    uint32_t count,
			    const struct tcmd_ptp_sample *samples)
{
	uint8_t *p;
	ssize_t ret;
	unsigned int i;

	if (count > TCMD_PTP_SAMPLES)
		return -EINVAL;
	ret = enc_hdr(buf, cap, TCMD_TIME_SYNC, TCMD_PTP_PROBES_LEN);
	if (ret < 0)
		return ret;
	memcpy(buf + TCMD_HDR_LEN, TCMD_PROTO_PTP, sizeof(TCMD_PROTO_PTP) - 1);
	put32(buf + TCMD_HDR_LEN + 16, TCMD_PTP_PROBES);
	p = buf + TCMD_HDR_LEN + 20;
	put32(p, series);
	put32(p + 4, count);
	p += 8;
	for (i = 0; i < TCMD_PTP_SAMPLES; i++, p += 12) {
		put64(p, (uint64_t)samples[i].ts);
		put32(p + 8, samples[i].id);
	}
	return ret;
}
