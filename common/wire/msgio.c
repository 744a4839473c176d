// SPDX-License-Identifier: GPL-2.0-or-later
/* Protocol messages over a socket with deadlines; see msgio.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/errbuf.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"

/* Messages up to this size (header included) are encoded on the stack. */
#define STACK_MSG	(TSYNC_HDR_LEN + TSYNC_SMALL_MAX)

/* Encodes @m into one buffer and writes it with one write call. */
int tsync_msg_send(int fd, const struct tsync_msg *m, int64_t deadline)
{
	uint8_t stack[STACK_MSG];
	uint8_t *buf = stack;
	size_t len;
	int ret;

	ret = tsync_msg_size(m, &len);
	if (ret) {
		log_err("cannot encode %s: %s", tsync_msg_name(m->type),
			tsync_perr_name(ret));
		return ret;
	}
	if (len > sizeof(stack)) {
		buf = malloc(len);
		if (!buf)
			return -ENOMEM;
	}
	ret = tsync_msg_encode(m, buf, len, &len);
	if (!ret)
		ret = tsync_write_full(fd, buf, len, deadline);
	if (buf != stack)
		free(buf);
	if (ret)
		log_debug("fd %d: sending %s failed: %s", fd,
			  tsync_msg_name(m->type), tsync_perr_name(ret));
	else
		log_debug("fd %d: sent %s (%zu bytes)", fd,
			  tsync_msg_name(m->type), len);
	return ret;
}

/* Sends a PROBE/PROBE_REPLY built directly into a stack buffer. A sent
 * probe is not logged, not even at debug level: the line would be a
 * write(2) between a probe and the stamp of its reply, on one side only
 * (with -v, offsets moved by 100-200 ns, and a reader of the log, such as
 * a terminal, woke up for every probe); each round logs its probes in one
 * line when it ends. */
int tsync_probe_send(int fd, uint8_t type, uint32_t round_id, uint32_t seq,
		     int64_t deadline)
{
	uint8_t buf[TSYNC_PROBE_MSG_LEN];
	int ret;

	tsync_probe_encode(buf, type, round_id, seq);
	ret = tsync_write_full(fd, buf, sizeof(buf), deadline);
	if (ret)
		log_debug("fd %d: sending %s round %u seq %u failed: %s", fd,
			  tsync_msg_name(type), round_id, seq, tsync_perr_name(ret));
	return ret;
}

/* Describes an I/O failure while reading @what into @err. */
static void io_err(char *err, size_t errlen, int ret, const char *what)
{
	if (ret == -EPIPE)
		tsync_set_err(err, errlen, "peer closed the connection (%s)", what);
	else if (ret == -ETIMEDOUT)
		tsync_set_err(err, errlen, "timed out waiting for %s", what);
	else
		tsync_set_err(err, errlen, "reading %s: %s", what, strerror(-ret));
}

/* Decodes a received header and checks it against @ctx; see msgio.h. */
int tsync_msg_recv_hdr(int fd, const uint8_t hbuf[TSYNC_HDR_LEN],
		       const struct tsync_decode_ctx *ctx, struct tsync_hdr *hdr,
		       char *err, size_t errlen)
{
	struct tsync_proto_err perr = { 0 };
	int ret;

	ret = tsync_hdr_decode(hbuf, TSYNC_HDR_LEN, hdr, &perr);
	if (!ret)
		ret = tsync_hdr_check_ctx(hdr, ctx, &perr);
	if (ret) {
		tsync_set_err(err, errlen, "%s", perr.reason);
		log_debug("fd %d: bad header: %s", fd, perr.reason);
	}
	return ret;
}

/* Reads and decodes the payload @hdr announced; see msgio.h. */
int tsync_msg_recv_payload(int fd, const struct tsync_hdr *hdr,
			   struct tsync_msg *m,
			   const struct tsync_decode_ctx *ctx, int64_t deadline,
			   char *err, size_t errlen)
{
	uint8_t stack[TSYNC_SMALL_MAX];
	uint8_t *payload = stack;
	struct tsync_proto_err perr = { 0 };
	char what[64];
	int ret;

	memset(m, 0, sizeof(*m));
	if (hdr->len > sizeof(stack)) {
		payload = malloc(hdr->len);
		if (!payload) {
			tsync_set_err(err, errlen, "%s: no memory for %u bytes",
				tsync_msg_name(hdr->type), hdr->len);
			return -ENOMEM;
		}
	}
	ret = tsync_read_full(fd, payload, hdr->len, deadline);
	if (ret) {
		snprintf(what, sizeof(what), "the %s payload",
			 tsync_msg_name(hdr->type));
		io_err(err, errlen, ret, what);
		goto out;
	}
	ret = tsync_msg_decode(hdr, payload, hdr->len, ctx, m, &perr);
	if (ret) {
		tsync_set_err(err, errlen, "%s", perr.reason);
		log_debug("fd %d: bad %s: %s", fd, tsync_msg_name(hdr->type),
			  perr.reason);
		goto out;
	}
	if (m->type == TSYNC_MSG_PROBE || m->type == TSYNC_MSG_PROBE_REPLY)
		log_debug("fd %d: received %s round %u seq %u", fd,
			  tsync_msg_name(m->type), m->probe.round_id,
			  m->probe.seq);
	else
		log_debug("fd %d: received %s (%u bytes)", fd,
			  tsync_msg_name(m->type), hdr->len + TSYNC_HDR_LEN);
out:
	if (payload != stack)
		free(payload);
	return ret;
}

/* Reads, checks and decodes one message; see msgio.h. */
int tsync_msg_recv(int fd, struct tsync_msg *m,
		   const struct tsync_decode_ctx *ctx, int64_t deadline,
		   char *err, size_t errlen)
{
	uint8_t hbuf[TSYNC_HDR_LEN];
	struct tsync_hdr hdr;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = tsync_read_full(fd, hbuf, sizeof(hbuf), deadline);
	if (ret) {
		io_err(err, errlen, ret, "a message header");
		return ret;
	}
	ret = tsync_msg_recv_hdr(fd, hbuf, ctx, &hdr, err, errlen);
	if (ret)
		return ret;
	return tsync_msg_recv_payload(fd, &hdr, m, ctx, deadline, err, errlen);
}

/* Waits for a message's first byte, then reads it with the I/O deadline;
 * see msgio.h. */
int tsync_msg_recv_idle(int fd, struct tsync_msg *m,
			const struct tsync_decode_ctx *ctx, int64_t idle_deadline,
			int io_ms, char *err, size_t errlen)
{
	int ret;

	memset(m, 0, sizeof(*m));
	ret = tsync_wait_readable(fd, idle_deadline);
	if (ret < 0) {
		io_err(err, errlen, ret, "a message");
		return ret;
	}
	if (ret == 0) {
		tsync_set_err(err, errlen, "idle: no message within the idle timeout");
		return -ETIMEDOUT;
	}
	ret = tsync_msg_recv(fd, m, ctx, tsync_deadline_ms(io_ms), err, errlen);
	if (ret == -ETIMEDOUT)
		tsync_set_err(err, errlen, "peer stalled in the middle of a message (%d ms I/O timeout)",
			io_ms);
	return ret;
}

/* Receives a message of @type; see msgio.h. */
int tsync_msg_recv_expect(int fd, uint8_t type, struct tsync_msg *m,
			  const struct tsync_decode_ctx *ctx, int64_t deadline,
			  char *err, size_t errlen)
{
	int ret = tsync_msg_recv(fd, m, ctx, deadline, err, errlen);

	if (ret)
		return ret;
	ret = tsync_msg_expect(m, type, err, errlen);
	if (ret)
		tsync_msg_free(m);
	return ret;
}

/* Sends an ERROR message; see msgio.h. */
int tsync_msg_send_error(int fd, uint32_t code, int64_t deadline,
			 const char *fmt, ...)
{
	struct tsync_msg m;
	char reason[TSYNC_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	tsync_msg_set_error(&m, code, "%s", reason);
	return tsync_msg_send(fd, &m, deadline);
}
