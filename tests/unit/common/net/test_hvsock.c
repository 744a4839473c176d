// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hybrid vsock backend (common/net/hvsock.c): its handshake against
 * answers written on the other end of a socketpair (Firecracker's OK,
 * a refusal, a close in the middle, silence, garbage of every shape), and
 * a whole tsync_connect to a Unix socket served by a thread.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <cmocka.h>

#include "common/base/timeutil.h"
#include "common/net/endpoint.h"
#include "common/net/transport.h"

/* How late a deadline may end a call on a loaded machine. */
#define LATE_MARGIN_MS 10000

/* Parses @str or fails the test. */
static void parse_ep(const char *str, struct tsync_endpoint *ep)
{
	char err[256];

	if (tsync_endpoint_parse(str, 0, ep, err, sizeof(err)))
		fail_msg("'%s': %s", str, err);
}

/*
 * Runs the handshake for @ep on one end of a socketpair whose other end
 * has had @answer (@len bytes) written and is then closed if @close_after.
 * Returns the handshake's result; @err gets its reason, @req what it sent.
 */
static int run(const struct tsync_endpoint *ep, const char *answer, size_t len,
	       int close_after, int timeout_ms, char *err, size_t errlen, char *req,
	       size_t reqlen, int *left_fd)
{
	int sv[2], ret;
	ssize_t n;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(write(sv[1], answer, len), (ssize_t)len);
	if (close_after)
		shutdown(sv[1], SHUT_WR);
	err[0] = '\0';
	ret = tsync_hvsock_ops.handshake(sv[0], ep, tsync_deadline_ms(timeout_ms), err, errlen);
	n = read(sv[1], req, reqlen - 1);
	req[n > 0 ? n : 0] = '\0';
	if (left_fd) {
		*left_fd = sv[0];
	} else {
		close(sv[0]);
	}
	close(sv[1]);
	return ret;
}

/* Firecracker's answer: the request is "CONNECT PORT\n" exactly, and the
 * bytes after the answer's '\n' are left for the caller. */
static void test_ok(void **state)
{
	struct tsync_endpoint ep;
	char err[256], req[64], rest[16] = "";
	int fd;

	(void)state;
	parse_ep("hvsock:/v.sock:8823", &ep);
	assert_int_equal(run(&ep, "OK 1073741824\nHELLO", 19, 1, 5000, err, sizeof(err), req,
			     sizeof(req), &fd), 0);
	assert_string_equal(req, "CONNECT 8823\n");
	assert_int_equal(read(fd, rest, sizeof(rest) - 1), 5);
	assert_string_equal(rest, "HELLO");
	close(fd);

	/* the largest host port, and a peer-reported guest port above 65535 */
	ep.vsock_port32 = 1479105456u;
	assert_int_equal(run(&ep, "OK 4294967295\n", 14, 0, 5000, err, sizeof(err), req,
			     sizeof(req), NULL), 0);
	assert_string_equal(req, "CONNECT 1479105456\n");
	ep.vsock_port32 = 0;
	assert_int_equal(run(&ep, "OK 0\n", 5, 0, 5000, err, sizeof(err), req, sizeof(req),
			     NULL), 0);
}

/* Anything but "OK " and 1-10 digits within 32 bits is -EPROTO, named. */
static void test_garbage(void **state)
{
	static const struct {
		const char *answer, *shown;
	} bad[] = {
		{ "ERR no such port\n", "ERR no such port" },
		{ "ok 5\n", "ok 5" },
		{ "OK\n", "OK" },
		{ "OK \n", "OK " },
		{ "OK 5 \n", "OK 5 " },
		{ "OK  5\n", "OK  5" },
		{ "OK -5\n", "OK -5" },
		{ "OK +5\n", "OK +5" },
		{ "OK 4294967296\n", "OK 4294967296" },
		{ "OK 12345678901\n", "OK 12345678901" },
		{ "OK 5\r\n", "OK 5\\x0d" },
		{ "\n", "" },
		{ "OK \x01\n", "OK \\x01" },
	};
	struct tsync_endpoint ep;
	char err[512], req[64], want[512];

	(void)state;
	parse_ep("hvsock:/v.sock:8823", &ep);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = run(&ep, bad[i].answer, strlen(bad[i].answer), 0, 5000, err,
			      sizeof(err), req, sizeof(req), NULL);

		if (ret != -EPROTO)
			fail_msg("'%s': %d (%s)", bad[i].shown, ret, err);
		snprintf(want, sizeof(want), "the VMM answered '%s' to CONNECT 8823, not 'OK PORT'",
			 bad[i].shown);
		assert_string_equal(err, want);
	}
	/* a line longer than any answer: cut at 32 bytes, never read on */
	assert_int_equal(run(&ep, "OK 123456789012345678901234567890123456789\n", 43, 0, 5000,
			     err, sizeof(err), req, sizeof(req), NULL), -EPROTO);
	assert_string_equal(err, "the VMM answered 'OK 12345678901234567890123456789...' to "
			    "CONNECT 8823, not 'OK PORT'");
}

/* A close before any answer is Firecracker's refusal; a close within it
 * is a reset. Both at once, not at the deadline. */
static void test_closed(void **state)
{
	struct tsync_endpoint ep;
	char err[512], req[64];
	int64_t t0 = tsync_now_ns();

	(void)state;
	parse_ep("hvsock:/v.sock:8823", &ep);
	assert_int_equal(run(&ep, "", 0, 1, 60000, err, sizeof(err), req, sizeof(req), NULL),
			 -ECONNREFUSED);
	assert_string_equal(err, "the VMM closed the connection after CONNECT 8823 without OK: "
			    "nothing listens on vsock port 8823 in the guest (is tsync-agent "
			    "running there, -l vsock:any:8823?)");
	assert_int_equal(run(&ep, "OK 10", 5, 1, 60000, err, sizeof(err), req, sizeof(req),
			     NULL), -ECONNRESET);
	assert_string_equal(err, "the VMM closed the connection in the middle of its answer to "
			    "CONNECT 8823 ('OK 10' so far)");
	assert_true(tsync_now_ns() - t0 < 30 * NSEC_PER_SEC);
}

/* Silence, or half an answer and silence, ends at the deadline, not before. */
static void test_silent(void **state)
{
	struct tsync_endpoint ep;
	char err[512], req[64];
	int64_t t0, dt;

	(void)state;
	parse_ep("hvsock:/v.sock:823", &ep);
	t0 = tsync_now_ns();
	assert_int_equal(run(&ep, "", 0, 0, 300, err, sizeof(err), req, sizeof(req), NULL),
			 -ETIMEDOUT);
	dt = (tsync_now_ns() - t0) / NSEC_PER_MSEC;
	assert_true(dt >= 300 && dt <= 300 + LATE_MARGIN_MS);
	assert_string_equal(err, "no answer to CONNECT 823 in time: is this the vsock socket "
			    "(uds_path) of a Firecracker or cloud-hypervisor guest?");
	assert_int_equal(run(&ep, "OK 1", 4, 0, 200, err, sizeof(err), req, sizeof(req), NULL),
			 -ETIMEDOUT);
	assert_string_equal(err, "no answer to CONNECT 823 in time ('OK 1' so far): is this the "
			    "vsock socket (uds_path) of a Firecracker or cloud-hypervisor guest?");
}

/* The VMM's end for test_connect: accepts once, checks the request,
 * answers OK and echoes one byte. */
static void *vmm_thread(void *arg)
{
	int l = *(int *)arg, fd;
	char req[32] = "", c;

	fd = accept(l, NULL, NULL);
	if (fd < 0)
		return NULL;
	if (read(fd, req, 13) == 13 && !strcmp(req, "CONNECT 8823\n") &&
	    write(fd, "OK 1073741824\n", 14) == 14 && read(fd, &c, 1) == 1)
		(void)!write(fd, &c, 1);
	close(fd);
	return NULL;
}

/* tsync_connect: to the VMM's socket, handshake included, the peer named
 * by its endpoint; listening on hvsock is refused with the reason. */
static void test_connect(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct tsync_endpoint ep;
	struct tsync_listener *lst = NULL;
	struct tsync_peer peer;
	char dir[] = "/tmp/tsync-hvsock.XXXXXX", str[256], err[512], c = 'x';
	pthread_t th;
	int l, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/v.sock", dir);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(pthread_create(&th, NULL, vmm_thread, &l), 0);

	snprintf(str, sizeof(str), "hvsock:%s:8823", sun.sun_path);
	parse_ep(str, &ep);
	fd = tsync_connect(&ep, 5000, &peer, err, sizeof(err));
	if (fd < 0)
		fail_msg("connect: %s", err);
	assert_int_equal(peer.kind, TSYNC_EP_HVSOCK);
	assert_string_equal(peer.name, str);
	assert_int_equal(write(fd, &c, 1), 1);
	c = 0;
	assert_int_equal(read(fd, &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	pthread_join(th, NULL);

	/* nothing accepts any more: the kernel refuses, the backend says why */
	close(l);
	assert_int_equal(tsync_connect(&ep, 5000, NULL, err, sizeof(err)), -ECONNREFUSED);
	snprintf(str, sizeof(str), "cannot connect to hvsock:%s:8823: Connection refused: "
		 "nothing listens on that socket: is the VMM (Firecracker, cloud-hypervisor) "
		 "still running?", sun.sun_path);
	assert_string_equal(err, str);
	unlink(sun.sun_path);
	rmdir(dir);

	assert_int_equal(tsync_listen(&ep, 4, &lst, err, sizeof(err)), -EINVAL);
	assert_null(lst);
	assert_non_null(strstr(err, ": hvsock is how a host reaches a Firecracker or "
				    "cloud-hypervisor guest; in the guest, listen on vsock:any:PORT"));
	/* no socket is hvsock's by its family */
	assert_false(tsync_hvsock_ops.has_family(AF_UNIX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_closed),
		cmocka_unit_test(test_silent),
		cmocka_unit_test(test_connect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
