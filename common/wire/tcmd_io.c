// SPDX-License-Identifier: GPL-2.0-or-later
/* trace-cmd's agent protocol on a socket, with deadlines; see tcmd_io.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "common/base/errbuf.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/wire/tcmd_io.h"
#include "proto/proto.h"

/* Re-arms TCP_QUICKACK once the peer was seen waiting for our ACK.
 * Setting it also sends an ACK that is pending right now. */
static void quickack(const struct tcmd_conn *c)
{
	int one = 1;

	if (c->acking)
		(void)setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

/* Sets up a connection; see tcmd_io.h. */
int tcmd_conn_init(struct tcmd_conn *c, int fd, const char *peer, bool quickack_on,
		   int timeout_ms)
{
	struct sockaddr_storage ss = { 0 };
	const char *env = getenv("TSYNC_TCMD_QUICKACK");
	socklen_t sl = sizeof(ss);
	int one = 1, flags;

	c->fd = fd;
	c->peer = peer;
	c->quickack = quickack_on;
	c->acking = false;
	c->timeout_ms = timeout_ms;
	c->deadline = 0;
	c->rcvtimeo_us = -1;
	flags = fcntl(fd, F_GETFL);
	c->nonblock = flags >= 0 && (flags & O_NONBLOCK);
	if (!quickack_on || getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		c->quickack = false;
		return 0;
	}
	c->acking = env && !strcmp(env, "always");
	if (setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one)))
		return -errno;
	return 0;
}

/* Sets the exchange's deadline; see tcmd_io.h. */
void tcmd_conn_set_deadline(struct tcmd_conn *c, int64_t deadline)
{
	c->deadline = deadline;
}

/* Returns @dl, or the exchange's deadline if that comes first. */
static int64_t capped(const struct tcmd_conn *c, int64_t dl)
{
	return c->deadline && c->deadline < dl ? c->deadline : dl;
}

/* True once the exchange's deadline has passed. */
static bool exchange_over(const struct tcmd_conn *c)
{
	return c->deadline && tsync_now_ns() >= c->deadline;
}

/* Closes the socket; see tcmd_io.h. */
void tcmd_conn_close(struct tcmd_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Writes @n bytes at @p, part of message @msg of @len bytes, by
 * @deadline; re-arms the quick ACK after it if @rearm. Returns 0 or
 * -errno with a reason in @err. */
static int send_part(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, const uint8_t *p,
		     size_t n, int64_t deadline, bool rearm, char *err, size_t errlen)
{
	int ret = tsync_write_full(c->fd, p, n, capped(c, deadline));

	if (rearm)
		quickack(c);
	if (ret == -ETIMEDOUT && exchange_over(c))
		tsync_set_err(err, errlen, "sending %s: %s did not finish the exchange by its "
			      "deadline", len >= TCMD_HDR_LEN ? tcmd_cmd_name(msg[7]) : "a message",
			      c->peer);
	else if (ret)
		tsync_set_err(err, errlen, "sending %s: %s",
			      len >= TCMD_HDR_LEN ? tcmd_cmd_name(msg[7]) : "a message",
			      strerror(-ret));
	return ret;
}

/* Says why an encoder failed (@len < 0); returns @len. */
static int enc_failed(ssize_t len, char *err, size_t errlen)
{
	tsync_set_err(err, errlen, "cannot encode a message: %s", strerror((int)-len));
	return (int)len;
}

/* Sends one message by a deadline; see tcmd_io.h. */
int tcmd_conn_send_by(struct tcmd_conn *c, const uint8_t *msg, ssize_t len,
		      int64_t deadline, char *err, size_t errlen)
{
	if (len < 0)
		return enc_failed(len, err, errlen);
	return send_part(c, msg, len, msg, (size_t)len, deadline, true, err, errlen);
}

/* Sends one message in trace-cmd's two writes, re-arming the quick ACK
 * after the last and, if @between, after the first too. */
static int send_two(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, bool between,
		    char *err, size_t errlen)
{
	int64_t deadline = tsync_deadline_ms(c->timeout_ms);
	struct tcmd_err e = { { 0 } };
	struct tcmd_hdr h;
	size_t cut;
	int ret;

	if (len < 0)
		return enc_failed(len, err, errlen);
	if ((size_t)len < TCMD_HDR_LEN || tcmd_hdr_decode(msg, &h, &e))
		return tcmd_conn_send_by(c, msg, len, deadline, err, errlen);
	cut = TCMD_HDR_LEN + h.cmd_size;
	if (cut >= (size_t)len)
		return tcmd_conn_send_by(c, msg, len, deadline, err, errlen);
	ret = send_part(c, msg, len, msg, cut, deadline, between, err, errlen);
	if (!ret)
		ret = send_part(c, msg, len, msg + cut, (size_t)len - cut, deadline, true, err,
				errlen);
	return ret;
}

/* Sends one message in trace-cmd's two writes; see tcmd_io.h. */
int tcmd_conn_send_split(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
			 size_t errlen)
{
	return send_two(c, msg, len, true, err, errlen);
}

/* Sends a PTP echo; see tcmd_io.h. */
int tcmd_conn_send_echo(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
			size_t errlen)
{
	return send_two(c, msg, len, false, err, errlen);
}

/* Sends one message; see tcmd_io.h. */
int tcmd_conn_send(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
		   size_t errlen)
{
	return tcmd_conn_send_by(c, msg, len, tsync_deadline_ms(c->timeout_ms), err, errlen);
}

/*
 * How long one blocking recv() waits before read_part() looks again: the
 * stall limit while the peer may yet prove to be one that waits for our
 * ACK (so that the rest of a message lagging its first part is noticed),
 * else half the connection's timeout (so that a message's deadline, the
 * timeout from now, never needs a shorter one but in its last half).
 */
static int64_t slice_ns(const struct tcmd_conn *c)
{
	if (c->quickack && !c->acking)
		return TCMD_ACK_STALL_MS * NSEC_PER_MSEC;
	return (int64_t)c->timeout_ms * NSEC_PER_MSEC / 2;
}

/*
 * Bounds the next blocking recv() by SO_RCVTIMEO: the slice, or what is
 * left from @now until @deadline if that is less. The socket option is set only
 * when that changes, so that a wait costs the recv() alone: no system
 * call between a probe's arrival and its stamp, or between a reply and
 * the wait for the next probe, that trace-cmd's blocking read does not
 * make. Returns 0, -ETIMEDOUT once @deadline has passed, or -errno.
 */
static int set_rcvtimeo(struct tcmd_conn *c, int64_t now, int64_t deadline)
{
	int64_t left = deadline - now, want = slice_ns(c), us;
	struct timeval tv;

	if (left <= 0)
		return -ETIMEDOUT;
	us = ((left < want ? left : want) + 999) / 1000;
	if (us == c->rcvtimeo_us)
		return 0;
	tv = (struct timeval){ .tv_sec = us / 1000000, .tv_usec = us % 1000000 };
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	c->rcvtimeo_us = us;
	return 0;
}

/* On a non-blocking socket, waits up to the slice (and @deadline) for
 * @fd to be readable from @now: 1 readable, 0 not yet, or -errno. */
static int wait_slice(const struct tcmd_conn *c, int64_t now, int64_t deadline)
{
	int64_t slice = now + slice_ns(c);

	return tsync_wait_readable(c->fd, slice < deadline ? slice : deadline);
}

/*
 * The rest of a message has not come TCMD_ACK_STALL_MS after @since: a
 * peer waiting for our delayed ACK (tcmd_io.h). TCP_QUICKACK from now on,
 * set at once to send the ACK it waits for.
 */
static void rest_lags(struct tcmd_conn *c, int64_t since)
{
	if (!c->quickack || c->acking || tsync_now_ns() - since < TCMD_ACK_STALL_MS * NSEC_PER_MSEC)
		return;
	log_debug("tcmd: %s waits for our ACKs (Nagle on): TCP_QUICKACK from now on", c->peer);
	c->acking = true;
	quickack(c);
}

/*
 * Reads @len bytes into @p before @deadline; @in: bytes of this message
 * already read. Waits inside recv() itself, bounded by SO_RCVTIMEO
 * (set_rcvtimeo()), for the first bytes as for the rest: the arrival
 * wakes the call that reads it, as trace-cmd's blocking read does (a
 * non-blocking socket waits in poll() instead). Re-arms the quick ACK
 * after every read that leaves some of @len to read (recv_by() does
 * after the message's stamp, or leaves it to the echo that follows).
 * Returns 0 or -errno.
 */
static int read_part(struct tcmd_conn *c, uint8_t *p, size_t len, size_t in, int64_t deadline)
{
	int64_t since = 0;	/* when the wait for the rest began */

	while (len) {
		int64_t now = 0;
		ssize_t n = -1;
		int ret;

		/* the rest of a message that is here: taken before any clock
		 * read, so that its stamp follows its arrival by reads alone,
		 * as trace-cmd's (a clock read here delayed tsync-host's stamp
		 * of a PTP probe behind trace-cmd's host's) */
		if (in) {
			n = recv(c->fd, p, len, MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return -errno;
		}
		if (n < 0) {
			now = tsync_now_ns();
			ret = c->nonblock ? 0 : set_rcvtimeo(c, now, deadline);
			if (ret)
				return ret;
			if (in && !since)
				since = now;
			n = recv(c->fd, p, len, c->nonblock ? MSG_DONTWAIT : 0);
		}
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			in += (size_t)n;
			since = 0;
			if (len)
				quickack(c);
			continue;
		}
		if (!n)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (c->nonblock && (ret = wait_slice(c, now, deadline)) != 0) {
			if (ret < 0)
				return ret;
			continue;
		}
		/* a slice passed with nothing new */
		if (tsync_now_ns() >= deadline)
			return -ETIMEDOUT;
		if (in)
			rest_lags(c, since);
	}
	return 0;
}

/* Says why reading failed with @ret into @err; @started: after the
 * message's first byte, within the timeout counted from there. */
static void read_err(const struct tcmd_conn *c, int ret, bool started, char *err,
		     size_t errlen)
{
	if (ret == -ETIMEDOUT && exchange_over(c))
		tsync_set_err(err, errlen, "%s did not finish the exchange by its deadline "
			      "(each message in time, the whole too slow)", c->peer);
	else if (ret == -ETIMEDOUT && started)
		tsync_set_err(err, errlen, "%s stalled in the middle of a message: the rest "
			      "not in time (%d ms)", c->peer, c->timeout_ms);
	else if (ret == -ETIMEDOUT)
		tsync_set_err(err, errlen, "%s sent nothing for %d ms", c->peer, c->timeout_ms);
	else
		tsync_set_err(err, errlen, "reading from %s: %s", c->peer,
			      ret == -EPIPE ? "connection closed" : strerror(-ret));
}

/* How recv_by() reads a message. */
struct recv_how {
	tcmd_stamp_fn stamp;	/* called once it is in (NULL: none) */
	void *arg;		/* @stamp's */
	bool split;		/* the rest in trace-cmd's reads: command struct, then
				 * payload (else both in one) */
	bool ack_later;		/* no quick-ACK re-arm once it is in: the caller's
				 * reply, sent next, re-arms after its last write */
};

/* Reads and checks one message by @deadline, as @how says (NULL: one
 * read of the rest, no stamp); @started as read_err()'s. */
static int recv_by(struct tcmd_conn *c, struct tcmd_msg *m, int64_t deadline, bool started,
		   const struct recv_how *how, char *err, size_t errlen)
{
	tcmd_stamp_fn stamp = how ? how->stamp : NULL;
	bool split = how && how->split;	/* trace-cmd's reads and order */
	size_t first;
	struct tcmd_err e = { { 0 } };
	struct tcmd_hdr h;
	int ret;

	ret = read_part(c, c->buf, TCMD_HDR_LEN, 0, deadline);
	if (!ret && ((uint32_t)c->buf[0] << 24 | (uint32_t)c->buf[1] << 16 |
		     (uint32_t)c->buf[2] << 8 | c->buf[3]) == TSYNC_MAGIC) {
		tsync_set_err(err, errlen, "%s speaks tsync's protocol, not trace-cmd's: "
			      "a tsync-agent is addressed without the tcmd: prefix", c->peer);
		return -EPROTO;
	}
	if (!ret && tcmd_hdr_decode(c->buf, &h, &e)) {
		tsync_set_err(err, errlen, "%s", e.reason);
		return -EBADMSG;
	}
	/* the rest: in one read, or in trace-cmd's two (tracecmd_msg_recv():
	 * the command struct, then the payload; none of an empty part) */
	if (!ret) {
		first = split ? h.cmd_size : h.size - TCMD_HDR_LEN;
		ret = read_part(c, c->buf + TCMD_HDR_LEN, first, TCMD_HDR_LEN, deadline);
		if (!ret)
			ret = read_part(c, c->buf + TCMD_HDR_LEN + first,
					h.size - TCMD_HDR_LEN - first, TCMD_HDR_LEN + first,
					deadline);
	}
	if (ret) {
		read_err(c, ret, started, err, errlen);
		return ret;
	}
	/* the message is in: its stamp before anything else, or, in
	 * trace-cmd's order (@how->split), once it is decoded, as
	 * tracecmd_msg_recv_time_sync() decodes before the stamp */
	if (split && tcmd_decode(c->buf, h.size, m, &e)) {
		tsync_set_err(err, errlen, "%s", e.reason);
		return -EBADMSG;
	}
	if (stamp && (ret = stamp(how->arg)) < 0) {
		tsync_set_err(err, errlen, "timestamp: %s", strerror(-ret));
		return ret;
	}
	if (!how || !how->ack_later)
		quickack(c);
	if (!split && tcmd_decode(c->buf, h.size, m, &e)) {
		tsync_set_err(err, errlen, "%s", e.reason);
		return -EBADMSG;
	}
	log_debug("tcmd: received %s (%u bytes)", tcmd_cmd_name(m->cmd), h.size);
	return 0;
}

/* Receives one message; see tcmd_io.h. */
int tcmd_conn_recv(struct tcmd_conn *c, struct tcmd_msg *m, char *err, size_t errlen)
{
	return recv_by(c, m, capped(c, tsync_deadline_ms(c->timeout_ms)), false, NULL, err,
		       errlen);
}

/* Receives one message and stamps its arrival; see tcmd_io.h. */
int tcmd_conn_recv_stamped(struct tcmd_conn *c, struct tcmd_msg *m, tcmd_stamp_fn stamp,
			   void *arg, char *err, size_t errlen)
{
	const struct recv_how how = { .stamp = stamp, .arg = arg };

	return recv_by(c, m, capped(c, tsync_deadline_ms(c->timeout_ms)), false, &how, err,
		       errlen);
}

/* tcmd_conn_recv_stamped() in trace-cmd's reads; see tcmd_io.h. */
int tcmd_conn_recv_stamped_split(struct tcmd_conn *c, struct tcmd_msg *m, tcmd_stamp_fn stamp,
				 void *arg, char *err, size_t errlen)
{
	const struct recv_how how = { .stamp = stamp, .arg = arg, .split = true,
				      .ack_later = true };

	return recv_by(c, m, capped(c, tsync_deadline_ms(c->timeout_ms)), false, &how, err,
		       errlen);
}

/* Waits until @fd is readable (or closed, or failed: a peer the
 * transport's keepalive declared gone, common/net/tcp.c; or shut down by
 * the agent's shutdown): the wait for a peer that may rightly be silent
 * for hours, but not gone. */
static int wait_forever(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };

	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Receives one message after an idle wait; see tcmd_io.h. */
int tcmd_conn_recv_idle(struct tcmd_conn *c, struct tcmd_msg *m, int64_t first,
			char *err, size_t errlen)
{
	int ret = first < 0 ? wait_forever(c->fd) : tsync_wait_readable(c->fd, first);

	if (ret == 0 && first >= 0) {
		tsync_set_err(err, errlen, "idle: %s sent no message in time", c->peer);
		return -ETIMEDOUT;
	}
	if (ret < 0) {
		read_err(c, ret, false, err, errlen);
		return ret;
	}
	return recv_by(c, m, capped(c, tsync_deadline_ms(c->timeout_ms)), true, NULL, err,
		       errlen);
}

/* Receives one TIME_SYNC message of a given kind; see tcmd_io.h. */
int tcmd_conn_recv_tsync(struct tcmd_conn *c, const char *proto, uint32_t id,
			 struct tcmd_msg *m, char *err, size_t errlen)
{
	int ret = tcmd_conn_recv(c, m, err, errlen);

	if (ret)
		return ret;
	if (m->cmd != TCMD_TIME_SYNC) {
		tsync_set_err(err, errlen, "%s sent %s during time sync", c->peer,
			      tcmd_cmd_name(m->cmd));
		return -EPROTO;
	}
	if (strcmp(m->ts.proto, proto) || m->ts.id != id) {
		tsync_set_err(err, errlen, "%s sent time-sync message %.15s/%u, expected %s/%u",
			      c->peer, m->ts.proto, m->ts.id, proto, id);
		return -EPROTO;
	}
	return 0;
}
