// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/wire/tcmd_io: trace-cmd's messages over real
 * sockets (socketpairs and a TCP loopback connection). A message is one
 * write, or trace-cmd's two when split; a whole one is received and decoded, also when it comes in
 * pieces; a header announcing a bad size is refused with the codec's
 * reason before anything else is read; tsync's protocol is named; every
 * wait ends: a silent peer, one that stalls after the first byte, an idle
 * deadline, a close; TIME_SYNC of the wrong kind is refused; an encoder's
 * error is passed on. A stamped receive stamps once the last byte is in
 * and passes the stamp's error on, reads a probe in trace-cmd's reads
 * when split, and waits for a probe inside recv()
 * (SO_RCVTIMEO, the same timeout), the socket option set once, not per
 * message; TCP_QUICKACK is re-armed only once a
 * message's rest lagged its first part (a peer waiting for our ACK), never
 * for peers whose messages come whole.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <cmocka.h>

#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/wire/tcmd_io.h"
#include "proto/tcmd.h"

#define TIMEOUT_MS 200

struct fx {
	int fd[2];		/* [0] the connection's, [1] the scripted peer's */
	struct tcmd_conn c;
	char err[256];
};

static int setup_type(void **state, int type)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, f->fd)) {
		free(f);
		return -1;
	}
	*state = f;
	return tcmd_conn_init(&f->c, f->fd[0], "the peer", true, TIMEOUT_MS);
}

static int setup(void **state)
{
	return setup_type(state, SOCK_STREAM);
}

static int setup_seqpacket(void **state)
{
	return setup_type(state, SOCK_SEQPACKET);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tcmd_conn_close(&f->c);
	tcmd_conn_close(&f->c);		/* twice is fine */
	if (f->fd[1] >= 0)
		close(f->fd[1]);
	free(f);
	return 0;
}

/* Writes @len bytes of @buf on the peer's end. */
static void peer_write(struct fx *f, const void *buf, size_t len)
{
	assert_int_equal(write(f->fd[1], buf, len), (ssize_t)len);
}

/* One send is one write: on a SOCK_SEQPACKET pair one recv() gets it all
 * (a TIME_SYNC PROBES, the largest message, 8180 bytes). */
static void test_send_one_write(void **state)
{
	struct fx *f = *state;
	struct tcmd_ptp_sample samples[TCMD_PTP_SAMPLES] = { { 0 } };
	uint8_t msg[TCMD_MSG_MAX], got[TCMD_MSG_MAX + 16];
	ssize_t len = tcmd_enc_ptp_probes(msg, sizeof(msg), 7, 339, samples);

	assert_true(len > 8000);
	assert_int_equal(tcmd_conn_send(&f->c, msg, len, f->err, sizeof(f->err)), 0);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), len);
	assert_memory_equal(got, msg, (size_t)len);
	/* by a deadline of the caller's */
	len = tcmd_enc_simple(msg, sizeof(msg), TCMD_FIN_DATA);
	assert_int_equal(tcmd_conn_send_by(&f->c, msg, len, tsync_deadline_ms(1000), NULL, 0),
			 0);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), len);
	/* an encoder's error is passed on */
	assert_int_equal(tcmd_conn_send(&f->c, msg, -ENOSPC, f->err, sizeof(f->err)),
			 -ENOSPC);
	assert_non_null(strstr(f->err, "cannot encode a message"));
}

/* A split send is trace-cmd's two writes: the header and command struct,
 * then the payload (a PTP probe: 32 and 4 bytes); one write without a
 * payload; an encoder's error passed on. */
static void test_send_split(void **state)
{
	struct fx *f = *state;
	uint8_t msg[64], got[128];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 5);
	size_t cut = TCMD_HDR_LEN + 20;	/* TIME_SYNC's command struct */

	assert_true(len > (ssize_t)cut);
	assert_int_equal(tcmd_conn_send_split(&f->c, msg, len, f->err, sizeof(f->err)), 0);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), (ssize_t)cut);
	assert_memory_equal(got, msg, cut);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), len - (ssize_t)cut);
	assert_memory_equal(got, msg + cut, (size_t)len - cut);
	len = tcmd_enc_simple(msg, sizeof(msg), TCMD_FIN_DATA);
	assert_int_equal(tcmd_conn_send_split(&f->c, msg, len, NULL, 0), 0);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), len);
	assert_int_equal(tcmd_conn_send_split(&f->c, msg, -ENOSPC, f->err, sizeof(f->err)),
			 -ENOSPC);
	assert_non_null(strstr(f->err, "cannot encode a message"));
}

/* A PTP echo goes in the same two writes. */
static void test_send_echo(void **state)
{
	struct fx *f = *state;
	uint8_t msg[64], got[128];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 6);
	size_t cut = TCMD_HDR_LEN + 20;

	assert_int_equal(tcmd_conn_send_echo(&f->c, msg, len, f->err, sizeof(f->err)), 0);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), (ssize_t)cut);
	assert_memory_equal(got, msg, cut);
	assert_int_equal(recv(f->fd[1], got, sizeof(got), 0), len - (ssize_t)cut);
	assert_memory_equal(got, msg + cut, (size_t)len - cut);
}

/* A whole message is received and decoded, also in pieces within the
 * timeout. */
static void test_recv(void **state)
{
	struct fx *f = *state;
	uint8_t msg[TCMD_MSG_MAX];
	struct tcmd_msg m;
	ssize_t len = tcmd_enc_not_supp(msg, sizeof(msg), "no such thing");

	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m.cmd, TCMD_NOT_SUPP);
	assert_string_equal(m.reason, "no such thing");

	peer_write(f, msg, 5);
	peer_write(f, msg + 5, 10);
	peer_write(f, msg + 15, (size_t)len - 15);
	assert_int_equal(tcmd_conn_recv_idle(&f->c, &m, tsync_deadline_ms(1000), f->err,
					     sizeof(f->err)), 0);
	assert_int_equal(m.cmd, TCMD_NOT_SUPP);
}

/* A header that announces 9216 bytes is refused with the codec's reason,
 * and nothing after the header is read. */
static void test_bad_size(void **state)
{
	static const uint8_t hdr[] = { 0, 0, 0x24, 0, 0, 0, 0, 6, 0, 0, 0, 0x10 };
	struct fx *f = *state;
	struct tcmd_msg m;
	uint8_t rest[4];

	peer_write(f, hdr, sizeof(hdr));
	peer_write(f, "more", 4);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), -EBADMSG);
	assert_string_equal(f->err, "message size 9216 is above the limit of 8192");
	assert_int_equal(read(f->fd[0], rest, sizeof(rest)), 4);	/* still there */
	assert_memory_equal(rest, "more", 4);
}

/* A message whose fields lie (3 strings announced, 2 given) is refused
 * with the codec's reason. */
static void test_bad_body(void **state)
{
	static const char hex[] = "0000002c000000060000001000000000000000000000000000000000"
				  "00000000000000080000000361006200";
	struct fx *f = *state;
	uint8_t msg[64];
	struct tcmd_msg m;
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &msg[i]);
	peer_write(f, msg, n);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), -EBADMSG);
	assert_string_equal(f->err, "TRACE_REQ ARGS: 3 strings announced, data ends after 2");
}

/* tsync's header where trace-cmd's should be is named as such. */
static void test_tsync_magic(void **state)
{
	static const uint8_t hdr[] = { 'T', 'S', 'Y', 'P', 1, 2, 0, 0, 0, 0, 0, 0 };
	struct fx *f = *state;
	struct tcmd_msg m;

	peer_write(f, hdr, sizeof(hdr));
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), -EPROTO);
	assert_string_equal(f->err, "the peer speaks tsync's protocol, not trace-cmd's: a "
			    "tsync-agent is addressed without the tcmd: prefix");
}

/* Every wait ends: silence, a stall after the first byte, an idle
 * deadline, a close (also while waiting for ever). */
static void test_timeouts(void **state)
{
	struct fx *f = *state;
	uint8_t msg[TCMD_MSG_MAX];
	ssize_t len = tcmd_enc_simple(msg, sizeof(msg), TCMD_CLOSE);
	struct tcmd_msg m;
	int64_t t0 = tsync_now_ns();

	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), -ETIMEDOUT);
	assert_string_equal(f->err, "the peer sent nothing for 200 ms");
	assert_true(tsync_now_ns() - t0 < 5 * NSEC_PER_SEC);

	assert_int_equal(tcmd_conn_recv_idle(&f->c, &m, tsync_deadline_ms(50), f->err,
					     sizeof(f->err)), -ETIMEDOUT);
	assert_string_equal(f->err, "idle: the peer sent no message in time");

	peer_write(f, msg, 1);
	assert_int_equal(tcmd_conn_recv_idle(&f->c, &m, -1, f->err, sizeof(f->err)),
			 -ETIMEDOUT);
	assert_string_equal(f->err, "the peer stalled in the middle of a message: the rest "
			    "not in time (200 ms)");

	close(f->fd[1]);
	f->fd[1] = -1;
	assert_int_equal(tcmd_conn_recv_idle(&f->c, &m, -1, f->err, sizeof(f->err)), -EPIPE);
	assert_string_equal(f->err, "reading from the peer: connection closed");
	assert_int_equal(len, TCMD_HDR_LEN);
}

/* TIME_SYNC of the kind asked for passes; another kind, another id or
 * another message is refused naming what came. */
static void test_recv_tsync(void **state)
{
	struct fx *f = *state;
	uint8_t msg[TCMD_MSG_MAX];
	struct tcmd_msg m;
	ssize_t len;

	len = tcmd_enc_ptp_start(msg, sizeof(msg), 5, TCMD_PTP_FL_FASTEST);
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv_tsync(&f->c, TCMD_PROTO_PTP, TCMD_PTP_START, &m,
					      f->err, sizeof(f->err)), 0);
	assert_int_equal(m.ts.start.series, 5);
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv_tsync(&f->c, TCMD_PROTO_PTP, TCMD_PTP_END, &m,
					      f->err, sizeof(f->err)), -EPROTO);
	snprintf((char *)msg, sizeof(msg), "the peer sent time-sync message ptp/%u, "
		 "expected ptp/%u", (unsigned int)TCMD_PTP_START, (unsigned int)TCMD_PTP_END);
	assert_string_equal(f->err, (char *)msg);
	len = tcmd_enc_simple(msg, sizeof(msg), TCMD_CLOSE);
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv_tsync(&f->c, TCMD_PROTO_PTP, TCMD_PTP_START, &m,
					      f->err, sizeof(f->err)), -EPROTO);
	assert_string_equal(f->err, "the peer sent CLOSE during time sync");
}

/* Over TCP with quick ACKs: messages both ways. */
static void test_tcp(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a, b;
	struct tcmd_conn ca, cb;
	uint8_t msg[TCMD_MSG_MAX];
	struct tcmd_msg m;
	char err[256];

	(void)state;
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
	a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	b = accept(l, NULL, NULL);
	assert_true(b >= 0);
	close(l);
	assert_int_equal(tcmd_conn_init(&ca, a, "b", true, 1000), 0);
	assert_true(ca.quickack);
	assert_int_equal(tcmd_conn_init(&cb, b, "a", true, 1000), 0);
	for (uint32_t n = 1; n <= 20; n++) {
		assert_int_equal(tcmd_conn_send(&ca, msg, tcmd_enc_ptp_probe(msg, sizeof(msg), n),
						err, sizeof(err)), 0);
		assert_int_equal(tcmd_conn_recv(&cb, &m, err, sizeof(err)), 0);
		assert_int_equal(m.ts.count, n);
		assert_int_equal(tcmd_conn_send(&cb, msg, tcmd_enc_ptp_probe(msg, sizeof(msg), n),
						err, sizeof(err)), 0);
		assert_int_equal(tcmd_conn_recv(&ca, &m, err, sizeof(err)), 0);
	}
	/* whole messages: nobody waits for an ACK, no TCP_QUICKACK */
	assert_false(ca.acking);
	assert_false(cb.acking);
	tcmd_conn_close(&ca);
	tcmd_conn_close(&cb);
	assert_int_equal(ca.fd, -1);
}

/* What stamp() saw: how often it ran, when, and what it returns. */
struct stamp_rec {
	int calls;
	int64_t at;
	int ret;
};

static int stamp(void *arg)
{
	struct stamp_rec *r = arg;

	r->calls++;
	r->at = tsync_now_ns();
	return r->ret;
}

/* A stamped receive: the stamp once the message is in, its error passed on. */
static void test_stamped(void **state)
{
	struct fx *f = *state;
	struct stamp_rec r = { 0 };
	uint8_t msg[64];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 7);
	struct tcmd_msg m;
	int64_t sent;

	assert_true(len > TCMD_HDR_LEN);
	assert_int_equal(write(f->fd[1], msg, TCMD_HDR_LEN), TCMD_HDR_LEN);
	assert_int_equal(write(f->fd[1], msg + TCMD_HDR_LEN, 1), 1);
	usleep(20000);
	sent = tsync_now_ns();
	assert_int_equal(write(f->fd[1], msg + TCMD_HDR_LEN + 1, (size_t)len - TCMD_HDR_LEN - 1),
			 len - TCMD_HDR_LEN - 1);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)), 0);
	assert_int_equal(r.calls, 1);
	assert_true(r.at >= sent);
	assert_int_equal(m.ts.count, 7);

	r.ret = -EIO;
	assert_int_equal(write(f->fd[1], msg, (size_t)len), len);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)),
			 -EIO);
	assert_int_equal(r.calls, 2);
	assert_non_null(strstr(f->err, "timestamp"));
}

/* A split stamped receive reads a probe as trace-cmd's host does: the
 * header, then exactly the command struct, then the payload. On a
 * SOCK_SEQPACKET pair each read takes one record: the probe as three
 * records (trace-cmd's reads) is received and stamped once; with the
 * command struct and the payload in one record the split receive reads
 * the command struct alone (the record's rest is dropped) and then waits
 * for a payload that never comes, where the unsplit receive reads both. */
static void test_stamped_split(void **state)
{
	struct fx *f = *state;
	struct stamp_rec r = { 0 };
	uint8_t msg[64];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 5);
	size_t cut = TCMD_HDR_LEN + ((size_t)msg[8] << 24 | (size_t)msg[9] << 16 |
				     (size_t)msg[10] << 8 | msg[11]);
	struct tcmd_msg m;

	assert_true(len > (ssize_t)cut && cut > TCMD_HDR_LEN);
	peer_write(f, msg, TCMD_HDR_LEN);
	peer_write(f, msg + TCMD_HDR_LEN, cut - TCMD_HDR_LEN);
	peer_write(f, msg + cut, (size_t)len - cut);
	assert_int_equal(tcmd_conn_recv_stamped_split(&f->c, &m, stamp, &r, f->err,
						      sizeof(f->err)), 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(m.cmd, TCMD_TIME_SYNC);
	assert_int_equal(m.ts.count, 5);

	peer_write(f, msg, TCMD_HDR_LEN);
	peer_write(f, msg + TCMD_HDR_LEN, (size_t)len - TCMD_HDR_LEN);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)), 0);
	assert_int_equal(r.calls, 2);
	assert_int_equal(m.ts.count, 5);

	peer_write(f, msg, TCMD_HDR_LEN);
	peer_write(f, msg + TCMD_HDR_LEN, (size_t)len - TCMD_HDR_LEN);
	assert_int_equal(tcmd_conn_recv_stamped_split(&f->c, &m, stamp, &r, f->err,
						      sizeof(f->err)), -ETIMEDOUT);
	assert_int_equal(r.calls, 2);
}

/* The rest of a message, written 3x TCMD_ACK_STALL_MS late: after it was
 * written, or (@reader set) after thread @reader was seen blocked in
 * recvfrom() on @rfd with nothing to read, i.e. waiting for that rest, so
 * that a reader that starts late on a loaded machine still waits for it. */
struct late {
	int fd;
	const uint8_t *p;
	size_t len;
	pid_t reader;
	int rfd;
};

/* Waits (10 s at most) until thread @tid blocks in recvfrom() on @fd with
 * no byte queued on @fd. */
static void wait_blocked_in_recv(pid_t tid, int fd)
{
	int64_t deadline = tsync_now_ns() + 10 * NSEC_PER_SEC;
	char path[64], want[48], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	snprintf(want, sizeof(want), "%ld 0x%x ", (long)SYS_recvfrom, fd);
	for (;;) {
		int f = open(path, O_RDONLY | O_CLOEXEC), queued = -1;
		ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;

		if (f >= 0)
			close(f);
		buf[n > 0 ? n : 0] = '\0';
		if (!strncmp(buf, want, strlen(want)) && !ioctl(fd, FIONREAD, &queued) &&
		    !queued)
			return;
		assert_true(tsync_now_ns() < deadline);
		usleep(200);
	}
}

static void *write_late(void *arg)
{
	struct late *l = arg;

	if (l->reader)
		wait_blocked_in_recv(l->reader, l->rfd);
	usleep(3000 * TCMD_ACK_STALL_MS);
	assert_int_equal(write(l->fd, l->p, l->len), (ssize_t)l->len);
	return NULL;
}

/* A stamped receive (a probe) waits for its first bytes inside recv(),
 * bounded by SO_RCVTIMEO (one system call less before the stamp than
 * poll() and recv()): a message that comes later is read and stamped
 * after it was written; none within the timeout is -ETIMEDOUT as before,
 * in about the timeout; an unstamped receive after it still waits. */
static void test_stamped_waits_in_recv(void **state)
{
	struct fx *f = *state;
	struct stamp_rec r = { 0 };
	uint8_t msg[64];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 9);
	struct late l = { .fd = f->fd[1], .p = msg, .len = (size_t)len };
	struct timeval tv = { 0 };
	socklen_t tl = sizeof(tv);
	struct tcmd_msg m;
	pthread_t th;
	int64_t t0 = tsync_now_ns();

	assert_true(len > TCMD_HDR_LEN);
	assert_int_equal(pthread_create(&th, NULL, write_late, &l), 0);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)), 0);
	pthread_join(th, NULL);
	assert_int_equal(r.calls, 1);
	assert_true(r.at - t0 >= 3000000LL * TCMD_ACK_STALL_MS);
	assert_int_equal(m.ts.count, 9);
	assert_int_equal(getsockopt(f->fd[0], SOL_SOCKET, SO_RCVTIMEO, &tv, &tl), 0);
	assert_true(tv.tv_sec > 0 || tv.tv_usec > 0);
	assert_true(tv.tv_sec * 1000 + tv.tv_usec / 1000 <= TIMEOUT_MS);

	t0 = tsync_now_ns();
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)),
			 -ETIMEDOUT);
	assert_string_equal(f->err, "the peer sent nothing for 200 ms");
	assert_true(tsync_now_ns() - t0 >= (TIMEOUT_MS - 10) * 1000000LL);
	assert_true(tsync_now_ns() - t0 < 5 * NSEC_PER_SEC);
	assert_int_equal(r.calls, 1);

	assert_int_equal(pthread_create(&th, NULL, write_late, &l), 0);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), 0);
	pthread_join(th, NULL);
	assert_int_equal(m.ts.count, 9);
}

/* SO_RCVTIMEO of @fd in ms. */
static long rcvtimeo_ms(int fd)
{
	struct timeval tv = { 0 };
	socklen_t tl = sizeof(tv);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl), 0);
	return tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* True if SO_RCVTIMEO of @fd is @ms, as the kernel keeps it: rounded up
 * to its clock tick (4 ms at HZ=250). */
static bool rcvtimeo_is(int fd, long ms)
{
	long t = rcvtimeo_ms(fd);

	return t >= ms && t <= ms + 10;
}

/* A wait costs the recv() alone: SO_RCVTIMEO is set once, to half the
 * timeout (no peer to watch for stalls here), not again before every
 * message (a setting made behind the connection's back stays), and is
 * cut only when a deadline comes nearer than that. */
static void test_rcvtimeo_once(void **state)
{
	struct fx *f = *state;
	struct timeval tv = { .tv_sec = 1 };
	struct stamp_rec r = { 0 };
	uint8_t msg[64];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 4);
	struct tcmd_msg m;

	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)), 0);
	assert_true(rcvtimeo_is(f->fd[0], TIMEOUT_MS / 2));
	assert_int_equal(setsockopt(f->fd[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv_stamped(&f->c, &m, stamp, &r, f->err, sizeof(f->err)), 0);
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), 0);
	assert_true(rcvtimeo_is(f->fd[0], 1000));
	assert_int_equal(r.calls, 2);

	tcmd_conn_set_deadline(&f->c, tsync_deadline_ms(TIMEOUT_MS / 4));
	peer_write(f, msg, (size_t)len);
	assert_int_equal(tcmd_conn_recv(&f->c, &m, f->err, sizeof(f->err)), 0);
	assert_true(rcvtimeo_ms(f->fd[0]) <= TIMEOUT_MS / 4 + 10);
	assert_true(rcvtimeo_ms(f->fd[0]) > 0);
}

/* Over TCP, a message whose rest lags its first part (as a Nagle-on
 * peer's second write waiting for our delayed ACK): quick ACKs from then
 * on. Until then a wait looks every TCMD_ACK_STALL_MS; after, every half
 * timeout. */
/* TCP_QUICKACK as the kernel reports it: not in delayed-ACK mode. */
static bool quickack_on(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);

	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &v, &l), 0);
	return v == 1;
}

static void test_tcp_stall(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a, b;
	struct tcmd_conn cb;
	uint8_t msg[64];
	ssize_t len = tcmd_enc_ptp_probe(msg, sizeof(msg), 3);
	struct late lt;
	pthread_t th;
	struct tcmd_msg m;
	char err[256];

	(void)state;
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
	a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	b = accept(l, NULL, NULL);
	assert_true(b >= 0);
	close(l);
	assert_int_equal(tcmd_conn_init(&cb, b, "a", true, 1000), 0);
	assert_false(cb.acking);
	/* whole: no change */
	assert_int_equal(write(a, msg, (size_t)len), len);
	assert_int_equal(tcmd_conn_recv(&cb, &m, err, sizeof(err)), 0);
	assert_false(cb.acking);
	assert_true(rcvtimeo_is(b, TCMD_ACK_STALL_MS));
	/* the rest 3x TCMD_ACK_STALL_MS late */
	assert_int_equal(write(a, msg, TCMD_HDR_LEN), TCMD_HDR_LEN);
	lt = (struct late){ .fd = a, .p = msg + TCMD_HDR_LEN, .len = (size_t)len - TCMD_HDR_LEN,
			    .reader = (pid_t)syscall(SYS_gettid), .rfd = b };
	assert_int_equal(pthread_create(&th, NULL, write_late, &lt), 0);
	assert_int_equal(tcmd_conn_recv(&cb, &m, err, sizeof(err)), 0);
	pthread_join(th, NULL);
	assert_int_equal(m.ts.count, 3);
	assert_true(cb.acking);
	assert_int_equal(write(a, msg, (size_t)len), len);
	assert_int_equal(tcmd_conn_recv(&cb, &m, err, sizeof(err)), 0);
	assert_true(rcvtimeo_is(b, 500));
	/* a plain write after a receive leaves the quick-ACK mode (what the
	 * kernel reports as TCP_QUICKACK) ... */
	assert_int_equal(write(a, msg, (size_t)len), len);
	assert_int_equal(tcmd_conn_recv_stamped_split(&cb, &m, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(write(b, msg, (size_t)len), len);
	assert_false(quickack_on(b));
	/* ... a probe and its echo leave it set, re-armed after the last write */
	assert_int_equal(write(a, msg, (size_t)len), len);
	assert_int_equal(tcmd_conn_recv_stamped_split(&cb, &m, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(tcmd_conn_send_echo(&cb, msg, len, err, sizeof(err)), 0);
	assert_true(quickack_on(b));
	close(a);
	tcmd_conn_close(&cb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_one_write, setup_seqpacket, teardown),
		cmocka_unit_test_setup_teardown(test_send_split, setup_seqpacket, teardown),
		cmocka_unit_test_setup_teardown(test_send_echo, setup_seqpacket, teardown),
		cmocka_unit_test_setup_teardown(test_recv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tsync_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_tsync, setup, teardown),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test_setup_teardown(test_stamped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamped_split, setup_seqpacket, teardown),
		cmocka_unit_test_setup_teardown(test_stamped_waits_in_recv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rcvtimeo_once, setup, teardown),
		cmocka_unit_test(test_tcp_stall),
	};

	tsync_log_init("test_tcmd_io", TSYNC_LOG_WARN, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
