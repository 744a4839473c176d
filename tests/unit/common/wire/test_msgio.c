// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/msgio: protocol messages over real sockets (a
 * socketpair and a TCP loopback connection): every type, the probe fast
 * path, lying headers rejected before the payload is read, timeouts, a
 * closed peer, a peer ERROR, and no over-read into the raw bytes that
 * follow a data stream's hello.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/wire/probeio.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "tests/unit/proto_samples.h"

struct pair {
	int fd[2];
};

static int setup_pair(void **state)
{
	struct pair *p = malloc(sizeof(*p));

	if (!p || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->fd)) {
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

static int teardown_pair(void **state)
{
	struct pair *p = *state;

	if (p->fd[0] >= 0)
		close(p->fd[0]);
	if (p->fd[1] >= 0)
		close(p->fd[1]);
	free(p);
	return 0;
}

/* Sends every sample type on fd[0], receives and compares on fd[1]. */
static void roundtrip_all(int wfd, int rfd)
{
	struct tsync_decode_ctx ctx = { .ncpus = 4 };
	size_t i;

	for (i = 0; i < N_SAMPLE_TYPES; i++) {
		struct tsync_msg m, got;
		char err[256] = "";

		sample_msg(sample_types[i], &m);
		assert_int_equal(tsync_msg_send(wfd, &m, tsync_deadline_ms(5000)),
				 0);
		assert_int_equal(tsync_msg_recv(rfd, &got, &ctx,
						tsync_deadline_ms(5000), err,
						sizeof(err)), 0);
		if (sample_cmp(&m, &got))
			fail_msg("%s differs after send/recv",
				 tsync_msg_name(m.type));
		tsync_msg_free(&got);
	}
}

static void test_all_types_socketpair(void **state)
{
	struct pair *p = *state;

	roundtrip_all(p->fd[0], p->fd[1]);
	roundtrip_all(p->fd[1], p->fd[0]);
}

/* The same over a real TCP loopback connection (TCP_NODELAY). */
static void test_all_types_tcp(void **state)
{
	struct tsync_listener *l = NULL;
	struct tsync_endpoint ep;
	char err[256], name[64];
	int cfd, afd;

	(void)state;
	assert_int_equal(tsync_endpoint_parse("tcp:127.0.0.1:0",
					      TSYNC_EP_ALLOW_PORT0, &ep, err,
					      sizeof(err)), 0);
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), 0);
	snprintf(name, sizeof(name), "tcp:127.0.0.1:%u",
		 tsync_listener_port(l));
	assert_int_equal(tsync_endpoint_parse(name, 0, &ep, err, sizeof(err)),
			 0);
	cfd = tsync_connect(&ep, 5000, NULL, err, sizeof(err));
	assert_true(cfd >= 0);
	afd = tsync_accept(l, NULL);
	assert_true(afd >= 0);
	roundtrip_all(cfd, afd);
	roundtrip_all(afd, cfd);
	close(cfd);
	close(afd);
	tsync_listener_close(l);
}

/* PROBE/PROBE_REPLY via the fast path, decoded by the generic receiver. */
static void test_probe_fast_path(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;
	char err[128];
	uint32_t i;

	for (i = 0; i < 339; i++) {
		assert_int_equal(tsync_probe_send(p->fd[0], TSYNC_MSG_PROBE, 5, i,
						  tsync_deadline_ms(5000)), 0);
		assert_int_equal(tsync_msg_recv_expect(p->fd[1], TSYNC_MSG_PROBE,
						       &m, NULL,
						       tsync_deadline_ms(5000),
						       err, sizeof(err)), 0);
		assert_int_equal(m.probe.round_id, 5);
		assert_int_equal(m.probe.seq, i);
		assert_int_equal(tsync_probe_send(p->fd[1],
						  TSYNC_MSG_PROBE_REPLY, 5, i,
						  tsync_deadline_ms(5000)), 0);
		assert_int_equal(tsync_msg_recv_expect(p->fd[0],
						       TSYNC_MSG_PROBE_REPLY,
						       &m, NULL,
						       tsync_deadline_ms(5000),
						       err, sizeof(err)), 0);
		assert_int_equal(m.probe.seq, i);
	}
}

/*
 * The probe loop's receive: a probe (sleeping and busy-polling), another
 * message in its place (returned as 1, decoded like tsync_msg_recv()
 * does), and a header over the receiver's limit, refused with the same
 * reason tsync_msg_recv() gives (they share the header check).
 */
static void test_probe_recv(void **state)
{
	struct tsync_decode_ctx ctx = { .max_payload = 64 * 1024 };
	struct pair *p = *state;
	struct tsync_msg m, other;
	uint32_t round = 0, seq = 0;
	uint8_t hdr[64];
	char err[256];
	size_t len;

	for (int busy = 0; busy < 2; busy++) {
		assert_int_equal(tsync_probe_send(p->fd[0], TSYNC_MSG_PROBE, 7, 40 + busy,
						  tsync_deadline_ms(5000)), 0);
		assert_int_equal(tsync_probe_recv(p->fd[1], TSYNC_MSG_PROBE, busy,
						  tsync_deadline_ms(5000), &round, &seq,
						  &other, &ctx, err, sizeof(err)), 0);
		assert_int_equal(round, 7);
		assert_int_equal(seq, 40 + busy);
	}
	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = 9;
	assert_int_equal(tsync_msg_send(p->fd[0], &m, tsync_deadline_ms(5000)), 0);
	assert_int_equal(tsync_probe_recv(p->fd[1], TSYNC_MSG_PROBE, false,
					  tsync_deadline_ms(5000), &round, &seq,
					  &other, &ctx, err, sizeof(err)), 1);
	assert_int_equal(other.type, TSYNC_MSG_SYNC_END);
	assert_int_equal(other.sync_end.round_id, 9);
	tsync_msg_free(&other);

	sample_msg(TSYNC_MSG_SYNC_STAMPS, &m);
	m.sync_stamps.count = 0;
	assert_int_equal(tsync_msg_encode(&m, hdr, sizeof(hdr), &len), 0);
	hdr[8] = 0x00; hdr[9] = 0x01; hdr[10] = 0x00; hdr[11] = 0x01;
	assert_int_equal(write(p->fd[0], hdr, TSYNC_HDR_LEN), TSYNC_HDR_LEN);
	assert_int_equal(tsync_probe_recv(p->fd[1], TSYNC_MSG_PROBE, false,
					  tsync_deadline_ms(5000), &round, &seq,
					  &other, &ctx, err, sizeof(err)), TSYNC_PERR_TOO_LONG);
	assert_string_equal(err, "SYNC_STAMPS: payload 65537 bytes, limit 65536");
}

/* A silent peer gives -ETIMEDOUT, mid-header and mid-payload too. */
static void test_timeout(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;
	uint8_t buf[64];
	char err[128];
	size_t len;
	int64_t t0;

	t0 = tsync_now_ns();
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(50), err, sizeof(err)),
			 -ETIMEDOUT);
	assert_true(tsync_now_ns() - t0 >= 45 * NSEC_PER_MSEC);
	assert_non_null(strstr(err, "timed out"));

	/* half a header, then silence */
	sample_msg(TSYNC_MSG_SYNC_END, &m);
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(write(p->fd[0], buf, 6), 6);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(50), err, sizeof(err)),
			 -ETIMEDOUT);
	/* (the stream is now out of step; use a fresh pair below) */
}

/* A closed peer gives -EPIPE, also in the middle of a payload. */
static void test_closed(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;
	uint8_t buf[64];
	char err[128];
	size_t len;

	sample_msg(TSYNC_MSG_SYNC_RESULT, &m);
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(write(p->fd[0], buf, len - 3), (ssize_t)(len - 3));
	close(p->fd[0]);
	p->fd[0] = -1;
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(5000), err,
					sizeof(err)), -EPIPE);
	assert_non_null(strstr(err, "SYNC_RESULT payload"));
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(5000), err,
					sizeof(err)), -EPIPE);
	assert_non_null(strstr(err, "closed"));
}

/*
 * A header that lies about its length is rejected before any payload is
 * read or allocated: the bytes after it are still in the socket.
 */
static void test_lying_header(void **state)
{
	struct tsync_decode_ctx ctx = { .max_payload = 64 * 1024 };
	struct pair *p = *state;
	struct tsync_msg m;
	uint8_t hdr[64], rest[4];
	char err[256];
	size_t len;

	sample_msg(TSYNC_MSG_SYNC_STAMPS, &m);
	m.sync_stamps.count = 0;
	assert_int_equal(tsync_msg_encode(&m, hdr, sizeof(hdr), &len), 0);
	/* 1 MiB + 1 */
	hdr[8] = 0x00; hdr[9] = 0x10; hdr[10] = 0x00; hdr[11] = 0x01;
	assert_int_equal(write(p->fd[0], hdr, TSYNC_HDR_LEN), TSYNC_HDR_LEN);
	assert_int_equal(write(p->fd[0], "abcd", 4), 4);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(5000), err,
					sizeof(err)), TSYNC_PERR_TOO_LONG);
	assert_non_null(strstr(err, "SYNC_STAMPS"));
	assert_int_equal(tsync_read_full(p->fd[1], rest, 4,
					 tsync_deadline_ms(5000)), 0);
	assert_memory_equal(rest, "abcd", 4);

	/* within the global maximum but above the context's */
	hdr[8] = 0x00; hdr[9] = 0x01; hdr[10] = 0x00; hdr[11] = 0x01;
	assert_int_equal(write(p->fd[0], hdr, TSYNC_HDR_LEN), TSYNC_HDR_LEN);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, &ctx,
					tsync_deadline_ms(5000), err,
					sizeof(err)), TSYNC_PERR_TOO_LONG);
	assert_non_null(strstr(err, "limit 65536"));

	/* garbage */
	assert_int_equal(write(p->fd[0], "GET / HTTP/1.0\r\n", 16), 16);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, NULL,
					tsync_deadline_ms(5000), err,
					sizeof(err)), TSYNC_PERR_BAD_MAGIC);
	assert_true(tsync_perr_is_proto(TSYNC_PERR_BAD_MAGIC));
}

/* A bad payload is read fully, rejected with its code and reason. */
static void test_bad_payload(void **state)
{
	struct tsync_decode_ctx ctx = { .ncpus = 2 };
	struct pair *p = *state;
	struct tsync_msg m;
	char err[256];

	sample_msg(TSYNC_MSG_SYNC_START, &m);	/* cpu 2 */
	assert_int_equal(tsync_msg_send(p->fd[0], &m, tsync_deadline_ms(5000)),
			 0);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, &ctx,
					tsync_deadline_ms(5000), err,
					sizeof(err)), TSYNC_PERR_BAD_CPU);
	assert_string_equal(err, "SYNC_START: cpu 2 out of range (2 CPUs)");
	/* the stream stays in step: the next message decodes */
	assert_int_equal(tsync_probe_send(p->fd[0], TSYNC_MSG_PROBE, 1, 2,
					  tsync_deadline_ms(5000)), 0);
	assert_int_equal(tsync_msg_recv(p->fd[1], &m, &ctx,
					tsync_deadline_ms(5000), err,
					sizeof(err)), 0);
	assert_int_equal(m.type, TSYNC_MSG_PROBE);
}

/* recv_expect turns a peer ERROR or a wrong type into clear failures. */
static void test_expect(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;
	char err[256];

	assert_int_equal(tsync_msg_send_error(p->fd[0], TSYNC_ERR_NO_CPU,
					      tsync_deadline_ms(5000),
					      "CPU %d is offline", 3), 0);
	assert_int_equal(tsync_msg_recv_expect(p->fd[1], TSYNC_MSG_SYNC_READY,
					       &m, NULL, tsync_deadline_ms(5000),
					       err, sizeof(err)),
			 TSYNC_PERR_PEER_ERROR);
	assert_string_equal(err, "peer error NO_CPU (6): CPU 3 is offline");
	sample_msg(TSYNC_MSG_TRACE_STOPPED, &m);
	assert_int_equal(tsync_msg_send(p->fd[0], &m, tsync_deadline_ms(5000)),
			 0);
	assert_int_equal(tsync_msg_recv_expect(p->fd[1], TSYNC_MSG_SYNC_READY,
					       &m, NULL, tsync_deadline_ms(5000),
					       err, sizeof(err)),
			 TSYNC_PERR_UNEXPECTED);
	assert_string_equal(err, "expected SYNC_READY, got TRACE_STOPPED");
	/* freed by recv_expect: valgrind checks nothing leaks */
}

/* After a DATA hello, raw bytes follow; the receiver must not eat them. */
static void test_no_overread(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m, got;
	uint8_t buf[256], raw[32];
	char err[128];
	size_t len;

	sample_msg(TSYNC_MSG_HELLO, &m);
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	memcpy(buf + len, "RAW-RING-BUFFER-PAGE-BYTES......", 32);
	assert_int_equal(write(p->fd[0], buf, len + 32), (ssize_t)(len + 32));
	assert_int_equal(tsync_msg_recv(p->fd[1], &got, NULL,
					tsync_deadline_ms(5000), err,
					sizeof(err)), 0);
	assert_int_equal(got.hello.kind, TSYNC_CONN_DATA);
	assert_int_equal(tsync_read_full(p->fd[1], raw, 32,
					 tsync_deadline_ms(5000)), 0);
	assert_memory_equal(raw, "RAW-RING-BUFFER-PAGE-BYTES......", 32);
}

struct big_writer {
	int fd;
	const struct tsync_msg *m;
	int ret;
};

static void *big_writer_fn(void *arg)
{
	struct big_writer *w = arg;

	w->ret = tsync_msg_send(w->fd, w->m, tsync_deadline_ms(10000));
	return NULL;
}

/* A near-maximal META_CHUNK crosses the socket buffer in one piece. */
static void test_big_message(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m, got;
	struct big_writer w;
	pthread_t th;
	uint8_t *data;
	char err[128];
	uint32_t i;

	data = malloc(TSYNC_META_CHUNK_MAX);
	assert_non_null(data);
	for (i = 0; i < TSYNC_META_CHUNK_MAX; i++)
		data[i] = (uint8_t)(i * 31 + (i >> 9));
	tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
	m.meta_chunk.kind = TSYNC_META_KALLSYMS;
	m.meta_chunk.more = 1;
	m.meta_chunk.len = TSYNC_META_CHUNK_MAX;
	m.meta_chunk.data = data;
	w.fd = p->fd[0];
	w.m = &m;
	w.ret = 1;
	assert_int_equal(pthread_create(&th, NULL, big_writer_fn, &w), 0);
	assert_int_equal(tsync_msg_recv(p->fd[1], &got, NULL,
					tsync_deadline_ms(10000), err,
					sizeof(err)), 0);
	pthread_join(th, NULL);
	assert_int_equal(w.ret, 0);
	assert_int_equal(sample_cmp(&m, &got), 0);
	tsync_msg_free(&got);
	free(data);
}

/* An invalid message is refused by the sender, nothing is written. */
static void test_send_invalid(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;

	sample_msg(TSYNC_MSG_SYNC_START, &m);
	m.sync_start.clock[0] = 0;
	assert_int_equal(tsync_msg_send(p->fd[0], &m, tsync_deadline_ms(5000)),
			 TSYNC_PERR_STRING_EMPTY);
	assert_int_equal(tsync_wait_readable(p->fd[1], tsync_deadline_ms(20)),
			 0);
}

/*
 * tsync_msg_recv_idle: silence is bounded by the idle deadline, a message
 * that stalls after its first bytes by the I/O timeout (much shorter
 * here), and a whole message arriving late but intact is received.
 */
static void test_recv_idle(void **state)
{
	struct pair *p = *state;
	struct tsync_msg m;
	uint8_t buf[64];
	char err[128];
	size_t len;
	int64_t t0, dt;

	t0 = tsync_now_ns();
	assert_int_equal(tsync_msg_recv_idle(p->fd[1], &m, NULL, tsync_deadline_ms(60),
					     5000, err, sizeof(err)), -ETIMEDOUT);
	dt = tsync_now_ns() - t0;
	assert_true(dt >= 55 * NSEC_PER_MSEC && dt < 3000 * NSEC_PER_MSEC);
	assert_non_null(strstr(err, "idle"));

	/* a whole message after some silence: received */
	sample_msg(TSYNC_MSG_SYNC_END, &m);
	assert_int_equal(tsync_msg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(write(p->fd[0], buf, len), (ssize_t)len);
	assert_int_equal(tsync_msg_recv_idle(p->fd[1], &m, NULL, tsync_deadline_ms(5000),
					     1000, err, sizeof(err)), 0);
	assert_int_equal(m.type, TSYNC_MSG_SYNC_END);

	/* 5 bytes, then a stall: cut off after the 80 ms I/O timeout although
	 * the idle deadline is 10 s away */
	assert_int_equal(write(p->fd[0], buf, 5), 5);
	t0 = tsync_now_ns();
	assert_int_equal(tsync_msg_recv_idle(p->fd[1], &m, NULL, tsync_deadline_ms(10000),
					     80, err, sizeof(err)), -ETIMEDOUT);
	dt = tsync_now_ns() - t0;
	assert_true(dt >= 75 * NSEC_PER_MSEC && dt < 5000 * NSEC_PER_MSEC);
	assert_non_null(strstr(err, "stalled in the middle of a message"));

	/* a closed peer: -EPIPE */
	close(p->fd[0]);
	p->fd[0] = -1;
	assert_int_equal(tsync_msg_recv_idle(p->fd[1], &m, NULL, tsync_deadline_ms(1000),
					     80, err, sizeof(err)), -EPIPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_all_types_socketpair,
						setup_pair, teardown_pair),
		cmocka_unit_test(test_all_types_tcp),
		cmocka_unit_test_setup_teardown(test_probe_fast_path,
						setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_probe_recv,
						setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_timeout, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_recv_idle, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_closed, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_lying_header, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_bad_payload, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_expect, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_no_overread, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_big_message, setup_pair,
						teardown_pair),
		cmocka_unit_test_setup_teardown(test_send_invalid, setup_pair,
						teardown_pair),
	};

	/* debug logging on, so the name-logging paths run too */
	tsync_log_init("test_msgio", TSYNC_LOG_DEBUG, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
