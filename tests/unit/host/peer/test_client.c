// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/client: the host's protocol client against a scripted
 * agent over socketpairs. Each exchange (hello, authentication, session,
 * sync round, trace start, stream hello, trace stop, metadata) is played
 * right, answered with an ERROR, answered with the wrong message, and left
 * unanswered, so that a regression names the exchange that broke. The
 * metadata transfer is also attacked the way a lying agent would: endless
 * empty chunks, endless chunks of unknown kinds, a trickle that never ends.
 *
 * The scripted peer runs in a thread with its own end of the socketpair;
 * it records what it saw wrong in peer->bad (cmocka asserts only run in
 * the test's thread) and the test checks it after joining.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/wire/auth.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"
#include "common/tracemeta/tracemeta.h"
#include "host/peer/client.h"

#define IO_MS 1000		/* the client's I/O timeout in these tests */
#define NCPUS 4

struct peer;
typedef void (*peer_script)(struct peer *p);

/* The scripted agent: its ends of the connections and what went wrong. */
struct peer {
	int fd;			/* control connection */
	int data_fd;		/* data connection (stream tests) */
	peer_script script;
	int arg;		/* script parameter */
	char bad[256];		/* first thing the peer found wrong */
	pthread_t th;
	struct tsync_decode_ctx dctx;
};

/* The client ends the connect hook hands out, in order (-1: refuse). */
static int next_fds[2] = { -1, -1 };

/* Connect hook: returns the next prepared socketpair end. */
static int fake_connect(const struct tsync_endpoint *ep, int timeout_ms,
			struct tsync_peer *peer, char *err, size_t errlen)
{
	int fd = next_fds[0];

	(void)ep;
	(void)timeout_ms;
	next_fds[0] = next_fds[1];
	next_fds[1] = -1;
	if (fd < 0) {
		snprintf(err, errlen, "refused");
		return -ECONNREFUSED;
	}
	if (peer) {
		memset(peer, 0, sizeof(*peer));
		snprintf(peer->name, sizeof(peer->name), "fake:%d", fd);
	}
	return fd;
}

/* Records the peer's first complaint. */
static void peer_bad(struct peer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void peer_bad(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->bad, sizeof(p->bad), fmt, ap);
	va_end(ap);
}

/* Receives a message of @type on @fd into @m; 0 or -1 (complaint noted). */
static int peer_expect(struct peer *p, int fd, uint8_t type, struct tsync_msg *m)
{
	char why[256];
	int ret = tsync_msg_recv_expect(fd, type, m, &p->dctx, tsync_deadline_ms(5000),
					why, sizeof(why));

	if (ret) {
		peer_bad(p, "expected %s: %s", tsync_msg_name(type), why);
		return -1;
	}
	return 0;
}

/* Sends @m on @fd (complaint noted on failure). */
static void peer_send(struct peer *p, int fd, const struct tsync_msg *m)
{
	int ret = tsync_msg_send(fd, m, tsync_deadline_ms(5000));

	if (ret)
		peer_bad(p, "sending %s: %s", tsync_msg_name(m->type), strerror(-ret));
}

/* Sends an ERROR with @code. */
static void peer_error(struct peer *p, int fd, uint32_t code, const char *reason)
{
	struct tsync_msg m;

	tsync_msg_set_error(&m, code, "%s", reason);
	peer_send(p, fd, &m);
}

/* Waits until the client closes or shuts down its end. */
static void peer_wait_eof(struct peer *p, int fd)
{
	char buf[256];

	(void)p;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Answers a control HELLO with a HELLO_REPLY of @version. */
static int peer_hello(struct peer *p, uint8_t version)
{
	struct tsync_msg m;

	if (peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m))
		return -1;
	if (m.hello.kind != TSYNC_CONN_CONTROL)
		peer_bad(p, "control hello of kind %u", m.hello.kind);
	tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
	m.hello_reply.version = version;
	m.hello_reply.ver_min = m.hello_reply.ver_max = version;
	m.hello_reply.caps = TSYNC_CAP_TRACE;
	peer_send(p, p->fd, &m);
	return 0;
}

/* Answers SESSION_REQ with a session of @ncpus CPUs. */
static int peer_session(struct peer *p, uint32_t ncpus)
{
	struct tsync_msg m;

	if (peer_expect(p, p->fd, TSYNC_MSG_SESSION_REQ, &m))
		return -1;
	if (m.session_req.trace_id != 0x1234)
		peer_bad(p, "host trace id %llx", (unsigned long long)m.session_req.trace_id);
	tsync_msg_init(&m, TSYNC_MSG_SESSION_REPLY);
	m.session_reply.ncpus = ncpus;
	m.session_reply.page_size = 4096;
	m.session_reply.trace_id = 0x5678;
	m.session_reply.session_id = 77;
	memset(m.session_reply.secret, 0xa5, TSYNC_SECRET_LEN);
	snprintf(m.session_reply.name, sizeof(m.session_reply.name), "guest");
	snprintf(m.session_reply.clock, sizeof(m.session_reply.clock), "local");
	m.session_reply.nclocks = 1;
	snprintf(m.session_reply.clocks[0], TSYNC_CLOCK_NAME_MAX, "local");
	peer_send(p, p->fd, &m);
	p->dctx.ncpus = ncpus;
	return 0;
}

/* Hello and a session of NCPUS CPUs: what every later exchange needs. */
static int peer_open(struct peer *p)
{
	if (peer_hello(p, TSYNC_PROTO_VERSION_MIN))
		return -1;
	return peer_session(p, NCPUS);
}

/* Thread body: runs the script, then holds the connection until the
 * client closes it (so a script's end is not taken for an answer). */
static void *peer_thread(void *arg)
{
	struct peer *p = arg;

	p->script(p);
	peer_wait_eof(p, p->fd);
	return NULL;
}

/* Starts @script as the agent; the client's end goes to the connect hook. */
static struct peer *peer_start(peer_script script, int arg)
{
	struct peer *p = calloc(1, sizeof(*p));
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p->fd = sv[1];
	p->data_fd = -1;
	p->script = script;
	p->arg = arg;
	next_fds[0] = sv[0];
	next_fds[1] = -1;
	assert_int_equal(pthread_create(&p->th, NULL, peer_thread, p), 0);
	return p;
}

/* Adds a data connection for the client's next connect. */
static void peer_add_data(struct peer *p)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p->data_fd = sv[1];
	next_fds[next_fds[0] < 0 ? 0 : 1] = sv[0];
}

/* Closes @c (NULL fine), joins the peer, checks it found nothing wrong. */
static void peer_finish(struct peer *p, struct tsync_client *c)
{
	if (c)
		client_close(c);
	else
		shutdown(p->fd, SHUT_RDWR);	/* the client already closed its end */
	pthread_join(p->th, NULL);
	if (next_fds[0] >= 0)
		close(next_fds[0]);
	if (next_fds[1] >= 0)
		close(next_fds[1]);
	next_fds[0] = next_fds[1] = -1;
	close(p->fd);
	if (p->data_fd >= 0)
		close(p->data_fd);
	if (p->bad[0])
		fail_msg("scripted agent: %s", p->bad);
	free(p);
}

/* Client options of these tests. */
static struct client_opts test_opts(void)
{
	return (struct client_opts){ .connect_timeout_ms = IO_MS, .io_timeout_ms = IO_MS,
				     .host_trace_id = 0x1234, .host_name = "testhost",
				     .connect = fake_connect };
}

/* Opens a client against @p; asserts success. */
static struct tsync_client *open_ok(void)
{
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct tsync_client *c = NULL;
	char err[256];

	assert_int_equal(client_open(&ep, &o, &c, err, sizeof(err)), 0);
	return c;
}

/* Opens a client expecting failure @want; returns the error text. */
static void open_fails(int want, const char *needle)
{
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct tsync_client *c = NULL;
	char err[256] = "";
	int ret = client_open(&ep, &o, &c, err, sizeof(err));

	if (ret != want)
		fail_msg("client_open: %d (%s), expected %d", ret, err, want);
	assert_null(c);
	if (needle && !strstr(err, needle))
		fail_msg("error '%s' does not say '%s'", err, needle);
}

/* ---- hello and session ---- */

static void script_open(struct peer *p) { peer_open(p); }

/* The right exchange: the session's fields reach the caller. */
static void test_open_ok(void **state)
{
	struct peer *p = peer_start(script_open, 0);
	struct tsync_client *c;

	(void)state;
	c = open_ok();
	assert_int_equal(client_session(c)->ncpus, NCPUS);
	assert_int_equal(client_session(c)->trace_id, 0x5678);
	assert_string_equal(client_session(c)->name, "guest");
	assert_non_null(strstr(client_peer(c), "fake:"));
	peer_finish(p, c);
}

/*
 * The sync method offer: the HELLO offers probes and what the options
 * add (kvm in these tests); the agent answers as p->arg says: -1 without
 * the cap (an agent older than the field), else taking that method id.
 */
static void script_method(struct peer *p)
{
	struct tsync_msg m;

	if (peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m))
		return;
	if (!(m.hello.caps & TSYNC_CAP_SYNC_METHOD) ||
	    m.hello.methods != (TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES) |
				TSYNC_METHOD_BIT(TSYNC_METHOD_KVM)))
		peer_bad(p, "offer: caps 0x%x, methods 0x%x", m.hello.caps, m.hello.methods);
	tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
	m.hello_reply.version = m.hello_reply.ver_min = m.hello_reply.ver_max = 1;
	m.hello_reply.caps = TSYNC_CAP_TRACE | (p->arg >= 0 ? TSYNC_CAP_SYNC_METHOD : 0);
	m.hello_reply.method = (uint8_t)(p->arg >= 0 ? p->arg : 0);
	peer_send(p, p->fd, &m);
	peer_session(p, NCPUS);
}

/* The agent's answer reaches client_method(); an old agent's is none. */
static void test_open_method(void **state)
{
	static const int answers[] = { -1, TSYNC_METHOD_KVM, TSYNC_METHOD_PROBES };
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct tsync_client *c;
	char err[256];
	uint8_t method;

	(void)state;
	o.methods = TSYNC_METHOD_BIT(TSYNC_METHOD_KVM);
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		struct peer *p = peer_start(script_method, answers[i]);

		c = NULL;
		assert_int_equal(client_open(&ep, &o, &c, err, sizeof(err)), 0);
		method = 99;
		if (answers[i] < 0) {
			assert_int_equal(client_method(c, &method), -ENOENT);
		} else {
			assert_int_equal(client_method(c, &method), 0);
			assert_int_equal(method, answers[i]);
		}
		peer_finish(p, c);
	}
}

/* An agent taking a method the host did not offer is refused. */
static void test_open_method_not_offered(void **state)
{
	struct peer *p = peer_start(script_method, TSYNC_METHOD_KVM);
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct tsync_client *c = NULL;
	char err[256] = "";

	(void)state;
	o.methods = 0;	/* probes alone: the script complains of the offer */
	assert_int_equal(client_open(&ep, &o, &c, err, sizeof(err)), TSYNC_PERR_BAD_VALUE);
	assert_null(c);
	assert_non_null(strstr(err, "the agent took sync method kvm (1), which this host did "
				"not offer (offer 0x1)"));
	shutdown(p->fd, SHUT_RDWR);
	pthread_join(p->th, NULL);
	assert_non_null(strstr(p->bad, "offer: caps"));
	close(p->fd);
	free(p);
}

static void script_hello_error(struct peer *p)
{
	struct tsync_msg m;

	if (!peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m))
		peer_error(p, p->fd, TSYNC_ERR_BUSY, "too many sessions");
}

static void script_hello_wrong(struct peer *p)
{
	struct tsync_msg m;

	if (peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m))
		return;
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STARTED);
	m.trace_started.ncpus = 1;
	peer_send(p, p->fd, &m);
}

static void script_hello_silent(struct peer *p)
{
	struct tsync_msg m;

	peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m);
}

static void script_hello_hangup(struct peer *p)
{
	struct tsync_msg m;

	if (!peer_expect(p, p->fd, TSYNC_MSG_HELLO, &m))
		shutdown(p->fd, SHUT_WR);
}

static void script_hello_version(struct peer *p) { peer_hello(p, 9); }

/* Every wrong answer to HELLO fails client_open with its own code. */
static void test_open_hello_errors(void **state)
{
	struct peer *p;
	int64_t t0;

	(void)state;
	p = peer_start(script_hello_error, 0);
	open_fails(TSYNC_PERR_PEER_ERROR, "too many sessions");
	peer_finish(p, NULL);

	p = peer_start(script_hello_wrong, 0);
	open_fails(TSYNC_PERR_UNEXPECTED, "TRACE_STARTED");
	peer_finish(p, NULL);

	p = peer_start(script_hello_version, 0);
	open_fails(TSYNC_PERR_NO_COMMON_VERSION, "version 9");
	peer_finish(p, NULL);

	p = peer_start(script_hello_hangup, 0);
	open_fails(-EPIPE, NULL);
	peer_finish(p, NULL);

	t0 = tsync_now_ns();
	p = peer_start(script_hello_silent, 0);
	open_fails(-ETIMEDOUT, NULL);
	assert_true(tsync_now_ns() - t0 < 5 * IO_MS * NSEC_PER_MSEC);
	peer_finish(p, NULL);

	/* no connection at all */
	next_fds[0] = -1;
	open_fails(-ECONNREFUSED, "refused");
}

/* Sends a SESSION_REPLY claiming 0 CPUs, which no encoder makes. */
static void send_session_0(struct peer *p)
{
	uint8_t buf[4096];
	size_t len;
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REPLY);
	m.session_reply.ncpus = 1;
	m.session_reply.page_size = 4096;
	snprintf(m.session_reply.name, sizeof(m.session_reply.name), "guest");
	snprintf(m.session_reply.clock, sizeof(m.session_reply.clock), "local");
	if (tsync_msg_encode(&m, buf, sizeof(buf), &len)) {
		peer_bad(p, "encoding SESSION_REPLY");
		return;
	}
	memset(buf + TSYNC_HDR_LEN, 0, 4);	/* be32 ncpus */
	if (write(p->fd, buf, len) != (ssize_t)len)
		peer_bad(p, "write");
}

static void script_session_bad(struct peer *p)
{
	struct tsync_msg m;

	if (peer_hello(p, TSYNC_PROTO_VERSION_MIN))
		return;
	switch (p->arg) {
	case 0:
		if (!peer_expect(p, p->fd, TSYNC_MSG_SESSION_REQ, &m))
			send_session_0(p);
		break;
	case 1:
		if (!peer_expect(p, p->fd, TSYNC_MSG_SESSION_REQ, &m))
			peer_error(p, p->fd, TSYNC_ERR_LIMIT, "no more sessions");
		break;
	case 2:
		if (!peer_expect(p, p->fd, TSYNC_MSG_SESSION_REQ, &m)) {
			tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
			m.hello_reply.version = m.hello_reply.ver_min = m.hello_reply.ver_max = 1;
			peer_send(p, p->fd, &m);
		}
		break;
	default:
		peer_expect(p, p->fd, TSYNC_MSG_SESSION_REQ, &m);
		break;
	}
}

/* Every wrong answer to SESSION_REQ fails client_open. */
static void test_open_session_errors(void **state)
{
	static const struct { int code; const char *needle; } want[] = {
		{ TSYNC_PERR_BAD_VALUE, "ncpus 0" },
		{ TSYNC_PERR_PEER_ERROR, "no more sessions" },
		{ TSYNC_PERR_UNEXPECTED, "HELLO_REPLY" },
		{ -ETIMEDOUT, NULL },
	};

	(void)state;
	for (int i = 0; i < 4; i++) {
		struct peer *p = peer_start(script_session_bad, i);

		open_fails(want[i].code, want[i].needle);
		peer_finish(p, NULL);
	}
}

/* Writes a 32-byte key file; returns its path in @path. */
static void make_key(char *path, size_t len)
{
	char key[32];
	int fd;

	snprintf(path, len, "/tmp/tsync-test-client-key.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	memset(key, 0x5a, sizeof(key));
	assert_int_equal(write(fd, key, sizeof(key)), (ssize_t)sizeof(key));
	fchmod(fd, 0600);
	close(fd);
}

static void script_hello_only(struct peer *p) { peer_hello(p, TSYNC_PROTO_VERSION_MIN); }

/* With a key, an agent that does not authenticate itself is refused. */
static void test_open_auth_refused(void **state)
{
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct tsync_client *c = NULL;
	struct peer *p;
	char path[64], err[256] = "";

	(void)state;
	make_key(path, sizeof(path));
	o.key_file = path;
	p = peer_start(script_hello_only, 0);
	assert_int_equal(client_open(&ep, &o, &c, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "does not authenticate"));
	peer_finish(p, NULL);
	unlink(path);
}

/* ---- sync rounds ---- */

/*
 * Plays one round as an agent would, with CLOCK_MONOTONIC stamps, except
 * where p->arg says to lie: 1 refuses the round (SYNC_READY status), 2
 * answers SYNC_START with ERROR, 3 replies to a probe with the wrong
 * sequence, 4 sends the stamps of another round, 5 stays silent after
 * SYNC_START, 6 sends SYNC_STAMPS instead of a probe reply.
 */
static void script_round(struct peer *p)
{
	struct tsync_probe_stamps *st;
	struct tsync_msg m;
	uint32_t round, n;

	if (peer_open(p) || peer_expect(p, p->fd, TSYNC_MSG_SYNC_START, &m))
		return;
	round = m.sync_start.round_id;
	n = m.sync_start.nprobes;
	if (m.sync_start.cpu != 2 || m.sync_start.source != TSYNC_STAMP_CLOCK ||
	    strcmp(m.sync_start.clock, "mono"))
		peer_bad(p, "SYNC_START cpu %u source %u clock %s", m.sync_start.cpu,
			 m.sync_start.source, m.sync_start.clock);
	if (p->arg == 2) {
		peer_error(p, p->fd, TSYNC_ERR_BAD_REQUEST, "no such clock");
		return;
	}
	if (p->arg == 5)
		return;
	tsync_msg_init(&m, TSYNC_MSG_SYNC_READY);
	m.sync_ready.round_id = round;
	m.sync_ready.cpu = 2;
	m.sync_ready.status = p->arg == 1 ? TSYNC_ERR_NO_CPU : 0;
	peer_send(p, p->fd, &m);
	if (p->arg == 1)
		return;
	st = calloc(n, sizeof(*st));
	for (uint32_t i = 0; i < n; i++) {
		if (peer_expect(p, p->fd, TSYNC_MSG_PROBE, &m))
			goto out;
		st[i].seq = m.probe.seq;
		st[i].t2 = tsync_now_ns();
		st[i].t3 = tsync_now_ns();
		if (p->arg == 6) {
			tsync_msg_init(&m, TSYNC_MSG_SYNC_STAMPS);
			m.sync_stamps.round_id = round;
			m.sync_stamps.cpu = 2;
			peer_send(p, p->fd, &m);
			goto out;
		}
		tsync_probe_send(p->fd, TSYNC_MSG_PROBE_REPLY, round,
				 p->arg == 3 && i == 3 ? i + 1 : i, tsync_deadline_ms(1000));
		if (p->arg == 3 && i == 3)
			goto out;	/* the client gives up here */
	}
	if (peer_expect(p, p->fd, TSYNC_MSG_SYNC_END, &m))
		goto out;
	tsync_msg_init(&m, TSYNC_MSG_SYNC_STAMPS);
	m.sync_stamps.round_id = p->arg == 4 ? round + 1 : round;
	m.sync_stamps.cpu = 2;
	m.sync_stamps.count = n;
	m.sync_stamps.stamps = st;
	peer_send(p, p->fd, &m);
	if (!p->arg && !peer_expect(p, p->fd, TSYNC_MSG_SYNC_RESULT, &m) &&
	    (m.sync_result.round_id != round || m.sync_result.used == 0))
		peer_bad(p, "SYNC_RESULT round %u used %u", m.sync_result.round_id,
			 m.sync_result.used);
out:
	free(st);
}

/* Runs a round against script_round(@lie); returns the call's result. */
static int run_round(int lie, struct round_result *res)
{
	/* exactly 20 probes (the script expects them all) */
	struct round_opts ro = { .clock = "mono", .source = TSYNC_STAMP_CLOCK, .nprobes = 20,
				 .fixed_count = true, .estimator = TSYNC_EST_ROBUST,
				 .host_cpu = 0, .busy = 0 };
	struct peer *p = peer_start(script_round, lie);
	struct tsync_client *c = open_ok();
	int ret = client_sync_round(c, 2, &ro, res);

	peer_finish(p, c);
	return ret;
}

/* A good round: stamps from the same clock give an offset near zero, and
 * the agent is told the result. */
static void test_round_ok(void **state)
{
	struct round_result res;

	(void)state;
	assert_int_equal(run_round(0, &res), 0);
	assert_int_equal(res.status, 0);
	assert_int_equal(res.cpu, 2);
	assert_int_equal(res.est.sent, 20);
	assert_true(res.est.used > 0);
	/* same clock on both sides, one machine: well within a millisecond */
	assert_true(res.est.offset_ns < 1000000 && res.est.offset_ns > -1000000);
}

/* A refused round fails alone: the session goes on (0 returned). */
static void test_round_refused(void **state)
{
	struct round_result res;

	(void)state;
	assert_int_equal(run_round(1, &res), 0);
	assert_int_equal(res.status, -EIO);
	assert_non_null(strstr(res.error, "NO_CPU"));
}

/* Lies and silences inside a round break the session with their code. */
static void test_round_errors(void **state)
{
	static const struct { int lie, code; const char *needle; } want[] = {
		{ 2, TSYNC_PERR_PEER_ERROR, "no such clock" },
		{ 3, -EPROTO, "reply 4 of round" },
		{ 4, -EPROTO, "stamps of round" },
		{ 5, -ETIMEDOUT, NULL },
		{ 6, TSYNC_PERR_UNEXPECTED, "SYNC_STAMPS" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct round_result res;
		int ret = run_round(want[i].lie, &res);

		if (ret != want[i].code || res.status != want[i].code)
			fail_msg("lie %d: %d/%d (%s), expected %d", want[i].lie, ret, res.status,
				 res.error, want[i].code);
		if (want[i].needle && !strstr(res.error, want[i].needle))
			fail_msg("lie %d: '%s' does not say '%s'", want[i].lie, res.error,
				 want[i].needle);
	}
}

/* A CPU the agent does not have fails the round, not the session, and
 * sends nothing. */
static void test_round_bad_cpu(void **state)
{
	struct round_opts ro = { .clock = "mono", .source = TSYNC_STAMP_CLOCK, .nprobes = 5,
				 .host_cpu = 0 };
	struct peer *p = peer_start(script_open, 0);
	struct tsync_client *c = open_ok();
	struct round_result res;

	(void)state;
	assert_int_equal(client_sync_round(c, NCPUS, &ro, &res), 0);
	assert_int_equal(res.status, -EINVAL);
	assert_non_null(strstr(res.error, "does not exist"));
	peer_finish(p, c);
}

/* Opens a session (without CAP_STAMP_TSC), then the next message must be
 * the client's BYE: nothing may be asked of this agent in between. */
static void script_open_bye(struct peer *p)
{
	struct tsync_msg m;

	if (!peer_open(p) && !peer_expect(p, p->fd, TSYNC_MSG_BYE, &m))
		tsync_msg_free(&m);
}

/* TSC stamps are not asked of an agent that did not announce
 * CAP_STAMP_TSC: the round fails with the reason, no SYNC_START is sent. */
static void test_round_no_tsc_cap(void **state)
{
	struct round_opts ro = { .clock = "x86-tsc", .source = TSYNC_STAMP_TSC, .nprobes = 5,
				 .host_cpu = 0 };
	struct peer *p = peer_start(script_open_bye, 0);
	struct tsync_client *c = open_ok();
	struct round_result res;

	(void)state;
	assert_int_equal(client_sync_round(c, 0, &ro, &res), 0);
	assert_int_equal(res.status, -EOPNOTSUPP);
	assert_string_equal(res.error, "the agent cannot stamp with the TSC (it does not "
			    "announce the capability): use --stamp marker");
	peer_finish(p, c);
}

/* ---- tracing ---- */

/* TRACE_START: 0 answers right, 1 ERROR, 2 the wrong message, 3 nothing. */
static void script_trace_start(struct peer *p)
{
	struct tsync_msg m;

	if (peer_open(p) || peer_expect(p, p->fd, TSYNC_MSG_TRACE_START, &m))
		return;
	if (strcmp(m.trace_start.clock, "mono") || m.trace_start.flags != TSYNC_TRACE_FL_ARGS ||
	    m.trace_start.nargs != 4 ||
	    strcmp(m.trace_start.args[0], "-e") || strcmp(m.trace_start.args[1], "sched") ||
	    strcmp(m.trace_start.args[2], "-b") || strcmp(m.trace_start.args[3], "512"))
		peer_bad(p, "TRACE_START not as asked");
	tsync_msg_free(&m);
	switch (p->arg) {
	case 0:
		tsync_msg_init(&m, TSYNC_MSG_TRACE_STARTED);
		m.trace_started.ncpus = NCPUS;
		peer_send(p, p->fd, &m);
		break;
	case 1:
		peer_error(p, p->fd, TSYNC_ERR_NO_EVENT, "unknown event sched");
		break;
	case 2:
		tsync_msg_init(&m, TSYNC_MSG_META_END);
		peer_send(p, p->fd, &m);
		break;
	default:
		break;
	}
}

/* TRACE_START's answers: the stream count, or the failure with its code. */
static void test_trace_start(void **state)
{
	static const struct { int code; const char *needle; } want[] = {
		{ 0, NULL },
		{ TSYNC_PERR_PEER_ERROR, "unknown event sched" },
		{ TSYNC_PERR_UNEXPECTED, "META_END" },
	};
	static char *const words[] = { "-e", "sched", "-b", "512" };
	struct client_trace_opts to = { .clock = "mono", .nargs = 4, .args = words };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct peer *p = peer_start(script_trace_start, i);
		struct tsync_client *c = open_ok();
		uint32_t n = 0;
		char err[256] = "";
		int ret = client_trace_start(c, &to, &n, err, sizeof(err));

		if (ret != want[i].code)
			fail_msg("case %d: %d (%s), expected %d", i, ret, err, want[i].code);
		if (!ret)
			assert_int_equal(n, NCPUS);
		if (want[i].needle && !strstr(err, want[i].needle))
			fail_msg("case %d: '%s' does not say '%s'", i, err, want[i].needle);
		peer_finish(p, c);
	}
}

/* The data hello: 0 right, 1 ERROR NO_SESSION, 2 silence. */
static void script_stream(struct peer *p)
{
	struct tsync_msg m;

	if (peer_open(p) || peer_expect(p, p->data_fd, TSYNC_MSG_HELLO, &m))
		return;
	if (m.hello.kind != TSYNC_CONN_DATA || m.hello.session_id != 77 || m.hello.cpu != 3 ||
	    m.hello.secret[0] != 0xa5 || m.hello.secret[TSYNC_SECRET_LEN - 1] != 0xa5)
		peer_bad(p, "data hello kind %u session %llu cpu %u", m.hello.kind,
			 (unsigned long long)m.hello.session_id, m.hello.cpu);
	if (p->arg == 1) {
		peer_error(p, p->data_fd, TSYNC_ERR_NO_SESSION, "no such session");
		return;
	}
	if (p->arg == 2)
		return;
	tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
	m.hello_reply.version = m.hello_reply.ver_min = m.hello_reply.ver_max = 1;
	peer_send(p, p->data_fd, &m);
	if (write(p->data_fd, "PAGE", 4) != 4)
		peer_bad(p, "data write");
}

/* Opening a stream: the socket carries the raw bytes after the hello; an
 * ERROR or silence fails with its code and leaves no socket behind. */
static void test_stream_open(void **state)
{
	static const int want[] = { 0, TSYNC_PERR_PEER_ERROR, -ETIMEDOUT };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct peer *p = peer_start(script_stream, i);
		struct tsync_client *c;
		char err[256] = "", buf[4];
		int fd = -1, ret;

		peer_add_data(p);
		c = open_ok();
		ret = client_stream_open(c, 3, &fd, err, sizeof(err));
		if (ret != want[i])
			fail_msg("case %d: %d (%s), expected %d", i, ret, err, want[i]);
		if (!ret) {
			assert_int_equal(read(fd, buf, 4), 4);
			assert_memory_equal(buf, "PAGE", 4);
			close(fd);
		} else {
			assert_int_equal(fd, -1);
			assert_non_null(strstr(err, "CPU 3"));
		}
		peer_finish(p, c);
	}
}

/* TRACE_STOP: 0 stats for two CPUs, 1 ERROR, 2 silence. */
static void script_trace_stop(struct peer *p)
{
	struct tsync_cpu_stats st[2] = { { .cpu = 0, .entries = 10 },
					 { .cpu = 1, .entries = 20, .overrun = 1 } };
	struct tsync_msg m;

	if (peer_open(p) || peer_expect(p, p->fd, TSYNC_MSG_TRACE_STOP, &m))
		return;
	if (p->arg == 1) {
		peer_error(p, p->fd, TSYNC_ERR_INTERNAL, "stop failed");
		return;
	}
	if (p->arg == 2)
		return;
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOPPED);
	m.trace_stopped.count = 2;
	m.trace_stopped.cpus = st;
	peer_send(p, p->fd, &m);
}

/* TRACE_STOP's answers, and its own timeout. */
static void test_trace_stop(void **state)
{
	static const int want[] = { 0, TSYNC_PERR_PEER_ERROR, -ETIMEDOUT };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct peer *p = peer_start(script_trace_stop, i);
		struct tsync_client *c = open_ok();
		struct tsync_trace_stopped st = { 0 };
		char err[256] = "";
		int64_t t0 = tsync_now_ns();
		int ret = client_trace_stop(c, 200, &st, err, sizeof(err));

		if (ret != want[i])
			fail_msg("case %d: %d (%s), expected %d", i, ret, err, want[i]);
		if (!ret) {
			assert_int_equal(st.count, 2);
			assert_int_equal(st.cpus[1].entries, 20);
			assert_int_equal(st.cpus[1].overrun, 1);
			free(st.cpus);
		}
		/* the timeout given, not the session's I/O timeout */
		if (i == 2)
			assert_true(tsync_now_ns() - t0 < (IO_MS - 100) * NSEC_PER_MSEC);
		peer_finish(p, c);
	}
}

/* ---- metadata ---- */

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

/* Sends one META_CHUNK. */
static void send_chunk(struct peer *p, uint8_t kind, const char *sys, const void *data,
		       uint32_t len, bool more)
{
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
	m.meta_chunk.kind = kind;
	snprintf(m.meta_chunk.system, sizeof(m.meta_chunk.system), "%s", sys);
	m.meta_chunk.more = more;
	m.meta_chunk.len = len;
	m.meta_chunk.data = (uint8_t *)data;
	peer_send(p, p->fd, &m);
}

/* Sends chunks until the client hangs up, or for 10 s: the old client
 * kept reading until its peer stopped. */
static void send_forever(struct peer *p, uint8_t kind, uint32_t len, int pause_ms)
{
	static const char junk[64];
	struct tsync_msg m;
	int64_t end = tsync_deadline_ms(10000);

	tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
	m.meta_chunk.kind = kind;
	m.meta_chunk.more = 1;
	m.meta_chunk.len = len;
	m.meta_chunk.data = (uint8_t *)junk;
	while (tsync_now_ns() < end && !tsync_msg_send(p->fd, &m, tsync_deadline_ms(2000)))
		if (pause_ms)
			usleep((useconds_t)pause_ms * 1000);
	shutdown(p->fd, SHUT_WR);
}

/*
 * META_REQ: 0 a valid set; 1 an ERROR midway; 2 endless empty chunks
 * marked "more"; 3 endless chunks of an unknown kind; 4 a trickle of
 * unknown chunks within the I/O timeout that never ends; 5 META_END with
 * no header page; 6 a part sent twice.
 */
static void script_meta(struct peer *p)
{
	struct tsync_msg m;

	if (peer_open(p) || peer_expect(p, p->fd, TSYNC_MSG_META_REQ, &m))
		return;
	switch (p->arg) {
	case 2:
		send_forever(p, TSYNC_META_HEADER_PAGE, 0, 0);
		return;
	case 3:
		send_forever(p, 200, 64, 0);
		return;
	case 4:
		send_forever(p, 200, 1, 20);
		return;
	case 6:
		/* the same part twice; the client stops reading there */
		send_chunk(p, TSYNC_META_HEADER_PAGE, "", header_page, sizeof(header_page) - 1, 0);
		send_chunk(p, TSYNC_META_HEADER_PAGE, "", header_page, sizeof(header_page) - 1, 0);
		return;
	default:
		break;
	}
	if (p->arg != 5)
		send_chunk(p, TSYNC_META_HEADER_PAGE, "", header_page, sizeof(header_page) - 1, 0);
	if (p->arg == 1) {
		peer_error(p, p->fd, TSYNC_ERR_INTERNAL, "kallsyms unreadable");
		return;
	}
	send_chunk(p, TSYNC_META_HEADER_EVENT, "", "x", 1, 0);
	send_chunk(p, TSYNC_META_EVENT_FORMAT, "sched", "a", 1, 1);
	send_chunk(p, TSYNC_META_EVENT_FORMAT, "sched", "b", 1, 0);
	send_chunk(p, 200, "", "newer kind", 10, 0);
	send_chunk(p, TSYNC_META_TRACE_CLOCK, "", "[mono] local", 12, 0);
	tsync_msg_init(&m, TSYNC_MSG_META_END);
	peer_send(p, p->fd, &m);
}

/* Runs script_meta(@arg); returns the result, the error and the time. */
static int run_meta(int arg, int timeout_ms, struct tracemeta **tm, char *err, size_t errlen,
		    int64_t *ns)
{
	struct client_opts o = test_opts();
	struct tsync_endpoint ep = { 0 };
	struct peer *p = peer_start(script_meta, arg);
	struct tsync_client *c = NULL;
	int64_t t0;
	int ret;

	o.meta_timeout_ms = timeout_ms;
	/* the limit's mechanism, not its size (slow under valgrind) */
	o.meta_max_chunks = 5000;
	assert_int_equal(client_open(&ep, &o, &c, err, errlen), 0);
	t0 = tsync_now_ns();
	*tm = NULL;
	ret = client_fetch_meta(c, tm, err, errlen);
	*ns = tsync_now_ns() - t0;
	peer_finish(p, c);
	return ret;
}

/* A valid set is rebuilt with the session's page size. */
static void test_meta_ok(void **state)
{
	struct tracemeta *tm;
	char err[256] = "";
	int64_t ns;

	(void)state;
	if (run_meta(0, 1500, &tm, err, sizeof(err), &ns))
		fail_msg("metadata: %s", err);
	assert_int_equal(tracemeta_meta(tm)->page_size, 4096);
	assert_int_equal(tracemeta_meta(tm)->nsystems, 1);
	tracemeta_free(tm);
}

/* An ERROR, an incomplete set or a duplicate part fail with a reason. */
static void test_meta_bad(void **state)
{
	static const struct { int arg, code; const char *needle; } want[] = {
		{ 1, TSYNC_PERR_PEER_ERROR, "kallsyms unreadable" },
		{ 5, -EPROTO, "incomplete metadata" },
		{ 6, -EPROTO, "bad metadata (header_page part)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct tracemeta *tm;
		char err[256] = "";
		int64_t ns;
		int ret = run_meta(want[i].arg, 1500, &tm, err, sizeof(err), &ns);

		if (ret != want[i].code || tm)
			fail_msg("case %d: %d (%s), expected %d", want[i].arg, ret, err,
				 want[i].code);
		if (!strstr(err, want[i].needle))
			fail_msg("case %d: '%s' does not say '%s'", want[i].arg, err, want[i].needle);
	}
}

/*
 * A lying agent cannot keep the transfer going: endless empty chunks and
 * endless chunks of an unknown kind hit the chunk limit (5000 here, with
 * the default deadline), a slow trickle the overall deadline (1.5 s). The peer gives up after 10 s, so a
 * client without limits fails the time bound instead of hanging.
 */
static void test_meta_endless(void **state)
{
	static const struct { int arg, timeout_ms, code; const char *needle; } want[] = {
		{ 2, 0, -E2BIG, "over the limit" },
		{ 3, 0, -E2BIG, "over the limit" },
		{ 4, 1500, -ETIMEDOUT, "not complete after 1500 ms" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct tracemeta *tm;
		char err[256] = "";
		int64_t ns;
		int ret = run_meta(want[i].arg, want[i].timeout_ms, &tm, err, sizeof(err), &ns);

		if (ret != want[i].code || tm)
			fail_msg("case %d: %d (%s), expected %d", want[i].arg, ret, err,
				 want[i].code);
		if (!strstr(err, want[i].needle))
			fail_msg("case %d: '%s' does not say '%s'", want[i].arg, err, want[i].needle);
		/* generous for a loaded machine; the peer gives up at 10 s */
		if (ns > 8 * NSEC_PER_SEC)
			fail_msg("case %d: took %lld ms", want[i].arg, (long long)(ns / NSEC_PER_MSEC));
	}
}

/* ---- abort ---- */

struct abort_arg {
	struct tsync_client *c;
	int64_t when;
};

/* Aborts the client after a short while, from another thread. */
static void *abort_later(void *arg)
{
	struct abort_arg *a = arg;

	usleep(100000);
	a->when = tsync_now_ns();
	client_abort(a->c);
	return NULL;
}

/* client_abort() from another thread ends a wait at once (a signal must
 * not wait out a 30 s stop). */
static void test_abort(void **state)
{
	struct peer *p = peer_start(script_trace_stop, 2);
	struct tsync_client *c = open_ok();
	struct tsync_trace_stopped st;
	struct abort_arg a = { .c = c };
	pthread_t th;
	char err[256] = "";
	int ret;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, abort_later, &a), 0);
	ret = client_trace_stop(c, 30000, &st, err, sizeof(err));
	pthread_join(th, NULL);
	assert_true(ret != 0);
	assert_true(tsync_now_ns() - a.when < 1000 * NSEC_PER_MSEC);
	peer_finish(p, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_ok),
		cmocka_unit_test(test_open_method),
		cmocka_unit_test(test_open_method_not_offered),
		cmocka_unit_test(test_open_hello_errors),
		cmocka_unit_test(test_open_session_errors),
		cmocka_unit_test(test_open_auth_refused),
		cmocka_unit_test(test_round_ok),
		cmocka_unit_test(test_round_refused),
		cmocka_unit_test(test_round_errors),
		cmocka_unit_test(test_round_bad_cpu),
		cmocka_unit_test(test_round_no_tsc_cap),
		cmocka_unit_test(test_trace_start),
		cmocka_unit_test(test_stream_open),
		cmocka_unit_test(test_trace_stop),
		cmocka_unit_test(test_meta_ok),
		cmocka_unit_test(test_meta_bad),
		cmocka_unit_test(test_meta_endless),
		cmocka_unit_test(test_abort),
	};

	tsync_log_init("test_client", TSYNC_LOG_WARN, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
