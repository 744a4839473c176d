// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostile_client: misbehaves against a running tsync-agent, one case per
 * run, and checks that the agent copes: it closes (or answers with ERROR)
 * in bounded time and does not wait for the rest of a lie.
 *
 *   hostile_client ENDPOINT CASE [ARGS]
 *
 * Cases (IO is the agent's --io-timeout in ms, as the tests set it):
 *   random N             N random bytes instead of a HELLO
 *   lying-huge           HELLO header announcing 2 GiB
 *   lying-short          HELLO header announcing 10 bytes (below its size)
 *   lying-long IO        HELLO header announcing 1000 bytes, 84 sent, silence
 *   truncated IO         half a HELLO, then silence
 *   trickle IO MS        a HELLO one byte every MS ms
 *   session-lie IO KB    after a session: a TRACE_START header announcing
 *                        KB KiB, 100 bytes sent, silence
 *   idle N MAXCONNS IDLE N connections that say nothing: at least
 *                        N-MAXCONNS are closed early (well before IDLE ms),
 *                        the rest by the idle timeout
 *   data-secret IO       a data stream hello for a live session with a
 *                        wrong secret, and one for an unknown session
 *   bad-cpu              session, then SYNC_START for CPU 9999
 *   bad-event            session, then TRACE_START for an unknown event
 *   big-buffer KB        session, then TRACE_START asking KB KiB per CPU
 *   auth-wrong           to an agent with --key-file: a HELLO offering
 *                        authentication, then an AUTH with a wrong MAC
 *   data-auth-fail N     N times: a session with an active trace, a data
 *                        hello for CPU 0 with the right secret offering
 *                        authentication, a wrong AUTH, BYE; then a session
 *                        must still open and CPU 0 still take a stream
 *                        (needs --key-file)
 *   hello-silence N MS   holds N connections that sent HELLO (offering
 *                        authentication) and then say nothing, for MS ms,
 *                        reopening those the agent closed every 200 ms;
 *                        prints "holding" once all N are open
 *   auth-deadline MAX    one HELLO-then-silence connection must be closed
 *                        within MAX ms (the agent's --auth-timeout)
 *   busy-abuse IO        a busy-polling round (TSYNC_SYNC_F_BUSY) of 4096
 *                        probes, one probe every 0.8 IO: the agent must
 *                        end it (ERROR TIMEOUT) within twice IO
 *   amplify              TRACE_START with '*' 40 times, each with its own
 *                        filter: refused (LIMIT, with a reason) at once
 *   budget KB N          N sessions each starting a trace of KB KiB per
 *                        CPU at once: some must be refused for the
 *                        agent's --max-trace-mb (LIMIT), and after they
 *                        all end, a trace of that size starts again
 *
 * With --key-file FILE before ENDPOINT, control sessions the cases open
 * authenticate with that key.
 *
 * Random bytes (the random case, nonces, MACs) come from a PRNG seeded by
 * TSYNC_TEST_SEED when set, else from a drawn seed; the seed is printed,
 * so a run can be repeated.
 *
 * Prints what happened on stdout. Exit: 0 the agent behaved, 1 it did not,
 * 2 usage or local error, 3 the agent does not support the feature the
 * case needs (e.g. tracing), so the case could not be judged.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/wire/auth.h"
#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "proto/proto.h"

/* Slack on top of the agent's timeouts for a loaded 2-CPU machine. */
#define SLACK_MS 4000

struct ctx {
	struct tsync_endpoint ep;
	struct tsync_key *key;		/* --key-file, or NULL */
	uint64_t *rng;		/* splitmix64 state */
};

/* Returns the next 64 bits of splitmix64 state @x. */
static uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fills @buf with @n pseudo-random bytes of @c's generator. */
static void rand_bytes(const struct ctx *c, void *buf, size_t n)
{
	uint8_t *p = buf;
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (i % 8 == 0)
			v = rng_next(c->rng);
		p[i] = (uint8_t)(v >> (8 * (i % 8)));
	}
}

/* Returns the seed: TSYNC_TEST_SEED (decimal) or a drawn one; exits 2 on a
 * malformed TSYNC_TEST_SEED. Prints it. */
static uint64_t test_seed(void)
{
	const char *env = getenv("TSYNC_TEST_SEED");
	uint64_t seed = 0;
	char *end;

	if (env && *env) {
		errno = 0;
		seed = strtoull(env, &end, 10);
		if (errno || *end || *env == '-') {
			fprintf(stderr, "hostile_client: bad TSYNC_TEST_SEED '%s'\n", env);
			exit(2);
		}
	} else if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		seed = (uint64_t)tsync_now_ns() ^ (uint64_t)getpid();
	}
	printf("seed: TSYNC_TEST_SEED=%llu\n", (unsigned long long)seed);
	return seed;
}

/* Prints a failure and returns 1. */
static int __attribute__((format(printf, 1, 2))) bad(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 1;
}

/* Connects to the agent; exits 2 if it cannot. */
static int conn(const struct ctx *c)
{
	char err[256];
	int fd = tsync_connect(&c->ep, 5000, NULL, err, sizeof(err));

	if (fd < 0) {
		fprintf(stderr, "hostile_client: connect: %s\n", err);
		exit(2);
	}
	return fd;
}

/*
 * Waits up to @ms for the agent to close @fd, reading (and ignoring)
 * whatever it sends; an ERROR message's code goes to *@code if not NULL.
 * Returns the milliseconds until the close, or -1 if still open.
 */
static int wait_closed(int fd, int ms, uint32_t *code)
{
	int64_t start = tsync_now_ns(), deadline = tsync_deadline_ms(ms);
	uint8_t buf[4096];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, tsync_remaining_ms(deadline));
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return (int)((tsync_now_ns() - start) / NSEC_PER_MSEC);
		/* An ERROR right at the start of what we read: keep its code. */
		if (code && n >= TSYNC_HDR_LEN + 4 && buf[5] == TSYNC_MSG_ERROR)
			*code = (uint32_t)buf[12] << 24 | (uint32_t)buf[13] << 16 |
				(uint32_t)buf[14] << 8 | buf[15];
	}
}

/* Encodes @m into @buf; returns its length. Exits 2 if it cannot. */
static size_t encode(const struct tsync_msg *m, uint8_t *buf, size_t cap)
{
	size_t len;
	int ret = tsync_msg_encode(m, buf, cap, &len);

	if (ret) {
		fprintf(stderr, "hostile_client: encode %s: %s\n", tsync_msg_name(m->type),
			tsync_perr_name(ret));
		exit(2);
	}
	return len;
}

/* Builds a HELLO of @kind. */
static void mk_hello(struct tsync_msg *m, uint8_t kind, uint64_t sid,
		     const uint8_t *secret)
{
	tsync_msg_init(m, TSYNC_MSG_HELLO);
	m->hello.ver_min = TSYNC_PROTO_VERSION_MIN;
	m->hello.ver_max = TSYNC_PROTO_VERSION_MAX;
	m->hello.kind = kind;
	m->hello.session_id = sid;
	if (secret)
		memcpy(m->hello.secret, secret, TSYNC_SECRET_LEN);
}

/* Writes @len bytes or exits 2. */
static void put(int fd, const void *buf, size_t len)
{
	int ret = tsync_write_full(fd, buf, len, tsync_deadline_ms(5000));

	if (ret) {
		fprintf(stderr, "hostile_client: write: %s\n", strerror(-ret));
		exit(2);
	}
}

/* Sends a HELLO offering authentication (fresh nonce in @hnonce) on
 * @fd and reads the HELLO_REPLY into @m. Returns 0, or -1 with @err. */
static int hello_auth(const struct ctx *c, int fd, struct tsync_msg *m, uint8_t kind,
		      uint64_t sid, const uint8_t *secret, uint8_t *hnonce, char *err,
		      size_t errlen)
{
	struct tsync_decode_ctx dctx = { 0 };
	uint8_t buf[256];

	mk_hello(m, kind, sid, secret);
	m->hello.caps |= TSYNC_CAP_AUTH_HMAC;
	rand_bytes(c, hnonce, TSYNC_NONCE_LEN);
	memcpy(m->hello.nonce, hnonce, TSYNC_NONCE_LEN);
	put(fd, buf, encode(m, buf, sizeof(buf)));
	return tsync_msg_recv_expect(fd, TSYNC_MSG_HELLO_REPLY, m, &dctx,
				     tsync_deadline_ms(5000), err, errlen) ? -1 : 0;
}

/* Sends the AUTH answering the agent's nonce in HELLO_REPLY @r, with
 * @key (NULL: a random, wrong MAC). */
static void send_auth(const struct ctx *c, int fd, const struct tsync_key *key,
		      const uint8_t *hnonce, const struct tsync_hello_reply *r)
{
	struct tsync_msg m;
	uint8_t buf[256];

	tsync_msg_init(&m, TSYNC_MSG_AUTH);
	if (!key)
		rand_bytes(c, m.auth.mac, sizeof(m.auth.mac));
	else if (tsync_auth_mac(key, TSYNC_AUTH_HOST, hnonce, r->nonce, m.auth.mac))
		exit(2);
	put(fd, buf, encode(&m, buf, sizeof(buf)));
}

/* Opens a control session; fills @reply. Exits 2 on failure. */
static int open_session(const struct ctx *c, struct tsync_session_reply *reply)
{
	struct tsync_decode_ctx dctx = { 0 };
	uint8_t hnonce[TSYNC_NONCE_LEN];
	struct tsync_msg m;
	uint8_t buf[256];
	char err[256];
	int fd = conn(c);

	if (c->key) {
		if (hello_auth(c, fd, &m, TSYNC_CONN_CONTROL, 0, NULL, hnonce, err, sizeof(err)))
			goto fail;
		send_auth(c, fd, c->key, hnonce, &m.hello_reply);
	} else {
		mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
		put(fd, buf, encode(&m, buf, sizeof(buf)));
		if (tsync_msg_recv_expect(fd, TSYNC_MSG_HELLO_REPLY, &m, &dctx,
					  tsync_deadline_ms(5000), err, sizeof(err)))
			goto fail;
	}
	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	snprintf(m.session_req.name, sizeof(m.session_req.name), "hostile");
	put(fd, buf, encode(&m, buf, sizeof(buf)));
	if (tsync_msg_recv_expect(fd, TSYNC_MSG_SESSION_REPLY, &m, &dctx,
				  tsync_deadline_ms(5000), err, sizeof(err)))
		goto fail;
	*reply = m.session_reply;
	tsync_msg_free(&m);
	return fd;
fail:
	fprintf(stderr, "hostile_client: session: %s\n", err);
	exit(2);
}

/* Sends BYE (best effort) and closes. */
static void bye(int fd)
{
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_BYE);
	tsync_msg_send(fd, &m, tsync_deadline_ms(1000));
	close(fd);
}

/* Expects the agent to close @fd within @max_ms; @what names the case. */
static int expect_closed(int fd, int max_ms, const char *what)
{
	uint32_t code = 0;
	int t = wait_closed(fd, max_ms, &code);

	close(fd);
	if (t < 0)
		return bad("%s: still open after %d ms", what, max_ms);
	printf("ok: %s: closed by the agent after %d ms%s%s\n", what, t,
	       code ? ", ERROR " : "", code ? tsync_err_name(code) : "");
	return 0;
}

static int case_random(const struct ctx *c, int n)
{
	uint8_t *buf = malloc((size_t)n);
	int fd = conn(c);

	if (!buf)
		return 2;
	rand_bytes(c, buf, (size_t)n);
	/* never "TSYP" by chance, nor a trace-cmd message (first byte 0),
	 * which the agent would serve as trace-cmd's (tests/e2e/tcmd_agent.sh) */
	buf[0] = 0xff;
	/* the agent may close before it has read everything: ignore EPIPE */
	tsync_write_full(fd, buf, (size_t)n, tsync_deadline_ms(5000));
	free(buf);
	return expect_closed(fd, SLACK_MS, "random bytes");
}

/* A HELLO header announcing @len bytes, then @send payload bytes. */
static int lying_hello(const struct ctx *c, uint32_t len, size_t send, int max_ms,
		       const char *what)
{
	struct tsync_msg m;
	uint8_t buf[256];
	int fd = conn(c);

	mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
	encode(&m, buf, sizeof(buf));
	buf[8] = (uint8_t)(len >> 24);
	buf[9] = (uint8_t)(len >> 16);
	buf[10] = (uint8_t)(len >> 8);
	buf[11] = (uint8_t)len;
	put(fd, buf, TSYNC_HDR_LEN + send);
	return expect_closed(fd, max_ms, what);
}

static int case_truncated(const struct ctx *c, int io_ms)
{
	struct tsync_msg m;
	uint8_t buf[256];
	int fd = conn(c);
	size_t len;

	mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
	len = encode(&m, buf, sizeof(buf));
	put(fd, buf, len / 2);
	return expect_closed(fd, io_ms + SLACK_MS, "half a HELLO, then silence");
}

static int case_trickle(const struct ctx *c, int io_ms, int every_ms)
{
	int64_t first = 0;
	struct tsync_msg m;
	uint8_t buf[256];
	int fd = conn(c);
	size_t len, i;

	mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
	len = encode(&m, buf, sizeof(buf));
	for (i = 0; i < len; i++) {
		int t;

		if (send(fd, buf + i, 1, MSG_NOSIGNAL) != 1)
			break;	/* closed under us */
		if (!first)
			first = tsync_now_ns();
		t = wait_closed(fd, every_ms, NULL);
		if (t >= 0)
			break;
	}
	if (i >= len) {
		close(fd);
		return bad("trickle: the agent waited for all %zu bytes at one per %d ms",
			   len, every_ms);
	}
	{
		int ms = (int)((tsync_now_ns() - first) / NSEC_PER_MSEC);

		close(fd);
		if (ms > io_ms + every_ms + SLACK_MS)
			return bad("trickle: closed only %d ms after the first byte", ms);
		printf("ok: one byte per %d ms: closed after %zu of %zu bytes, %d ms after "
		       "the first\n", every_ms, i + 1, len, ms);
	}
	return 0;
}

static int case_session_lie(const struct ctx *c, int io_ms, int kb)
{
	struct tsync_session_reply r;
	uint8_t buf[TSYNC_HDR_LEN + 100] = { 0 };
	int fd = open_session(c, &r);
	uint32_t len = (uint32_t)kb * 1024;
	char what[96];

	buf[0] = 'T'; buf[1] = 'S'; buf[2] = 'Y'; buf[3] = 'P';
	buf[4] = TSYNC_PROTO_VERSION_MIN;
	buf[5] = TSYNC_MSG_TRACE_START;
	buf[8] = (uint8_t)(len >> 24);
	buf[9] = (uint8_t)(len >> 16);
	buf[10] = (uint8_t)(len >> 8);
	buf[11] = (uint8_t)len;
	put(fd, buf, sizeof(buf));
	snprintf(what, sizeof(what), "session: TRACE_START announcing %d KiB, 100 bytes sent",
		 kb);
	return expect_closed(fd, io_ms + SLACK_MS, what);
}

/* Counts and closes the connections of @p[0..@n) the agent has closed
 * (waiting up to @wait_ms for the first); a close within @early_ms of the
 * connection's open counts as early. Returns poll's result. */
static int reap(struct pollfd *p, const int64_t *opened, int n, int wait_ms,
		int early_ms, int *early, int *closed)
{
	int r = poll(p, (nfds_t)n, wait_ms);

	for (int i = 0; r > 0 && i < n; i++) {
		char b[64];
		ssize_t got;

		if (p[i].fd < 0 || !p[i].revents)
			continue;
		got = recv(p[i].fd, b, sizeof(b), MSG_DONTWAIT);
		if (got > 0 || (got < 0 && errno == EAGAIN))
			continue;
		if ((tsync_now_ns() - opened[i]) / NSEC_PER_MSEC < early_ms)
			(*early)++;
		(*closed)++;
		close(p[i].fd);
		p[i].fd = -1;
	}
	return r;
}

static int case_idle(const struct ctx *c, int n, int max_conns, int idle_ms)
{
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	int64_t *opened = calloc((size_t)n, sizeof(*opened));
	int early = 0, closed = 0, early_ms = idle_ms / 2;
	struct tsync_peer peer;
	struct rlimit rl;
	int64_t deadline;
	char err[256];

	if (!p || !opened)
		return 2;
	/* room for n descriptors */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* the first through tsync_connect (which resolves), the rest with
	 * plain connect() to the same address, as fast as the kernel goes;
	 * closes are noticed as they happen, the flood goes on meanwhile */
	p[0] = (struct pollfd){ .fd = tsync_connect(&c->ep, 5000, &peer, err, sizeof(err)),
				.events = POLLIN };
	if (p[0].fd < 0) {
		fprintf(stderr, "hostile_client: connect: %s\n", err);
		return 2;
	}
	opened[0] = tsync_now_ns();
	for (int i = 1; i < n; i++) {
		int fd = socket(peer.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&peer.addr, peer.addrlen)) {
			fprintf(stderr, "hostile_client: connection %d: %s\n", i, strerror(errno));
			return 2;
		}
		p[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
		opened[i] = tsync_now_ns();
		reap(p, opened, i + 1, 0, early_ms, &early, &closed);
	}
	printf("opened %d idle connections in %lld ms\n", n,
	       (long long)((tsync_now_ns() - opened[0]) / NSEC_PER_MSEC));
	deadline = tsync_deadline_ms(idle_ms + SLACK_MS);
	while (closed < n && tsync_now_ns() < deadline)
		if (reap(p, opened, n, tsync_remaining_ms(deadline), early_ms, &early,
			 &closed) < 0 && errno != EINTR)
			break;
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	free(opened);
	printf("%d closed, %d of them early (within %d ms of their open), %d still open\n",
	       closed, early, early_ms, n - closed);
	if (closed < n)
		return bad("%d idle connections outlived the idle timeout", n - closed);
	if (early < n - max_conns)
		return bad("only %d connections closed early, expected >= %d over --max-conns",
			   early, n - max_conns);
	printf("ok: %d idle connections: %d closed early (over --max-conns %d), "
	       "all closed by the idle timeout\n", n, early, max_conns);
	return 0;
}

/* Sends a data hello for session @sid with @secret on a new connection;
 * the agent must answer ERROR NO_SESSION (its reason in @reason) and
 * close within @max_ms. Returns 0 or 1. */
static int data_hello_refused(const struct ctx *c, uint64_t sid, const uint8_t *secret,
			      int max_ms, char *reason, size_t rlen, const char *what)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_msg m;
	uint8_t buf[256];
	char err[256];
	int fd = conn(c);

	mk_hello(&m, TSYNC_CONN_DATA, sid, secret);
	put(fd, buf, encode(&m, buf, sizeof(buf)));
	if (tsync_msg_recv(fd, &m, &dctx, tsync_deadline_ms(max_ms), err, sizeof(err))) {
		close(fd);
		return bad("%s: no answer: %s", what, err);
	}
	if (m.type != TSYNC_MSG_ERROR || m.error.code != TSYNC_ERR_NO_SESSION) {
		close(fd);
		return bad("%s: answered %s, expected ERROR NO_SESSION", what,
			   tsync_msg_name(m.type));
	}
	snprintf(reason, rlen, "%s", m.error.reason);
	return expect_closed(fd, max_ms, what);
}

static int case_data_secret(const struct ctx *c, int io_ms)
{
	char r1[TSYNC_REASON_MAX], r2[TSYNC_REASON_MAX];
	uint8_t secret[TSYNC_SECRET_LEN];
	struct tsync_session_reply r;
	int cfd = open_session(c, &r), ret;

	memcpy(secret, r.secret, sizeof(secret));
	secret[0] ^= 0x01;
	ret = data_hello_refused(c, r.session_id, secret, io_ms + SLACK_MS, r1, sizeof(r1),
				 "data hello with a wrong secret");
	ret |= data_hello_refused(c, r.session_id ^ 0x5a5a0000, r.secret, io_ms + SLACK_MS,
				  r2, sizeof(r2), "data hello for an unknown session");
	bye(cfd);
	if (ret)
		return ret;
	/* session ids are sequential: the answer must not tell which exist */
	if (strcmp(r1, r2))
		return bad("the agent tells a wrong secret ('%s') from an unknown session "
			   "('%s')", r1, r2);
	printf("ok: wrong secret and unknown session get the same answer: %s\n", r1);
	return 0;
}

/* Sends @m on a fresh session and waits for the agent's ERROR. Returns 0
 * and its code, or 1. */
static int session_error(const struct ctx *c, const struct tsync_msg *m,
			 uint32_t *code, const char *what)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_session_reply r;
	struct tsync_msg reply;
	char err[256];
	int fd = open_session(c, &r), ret;

	ret = tsync_msg_send(fd, m, tsync_deadline_ms(5000));
	if (ret) {
		close(fd);
		return bad("%s: send: %s", what, strerror(-ret));
	}
	ret = tsync_msg_recv(fd, &reply, &dctx, tsync_deadline_ms(SLACK_MS), err, sizeof(err));
	if (ret) {
		close(fd);
		return bad("%s: no answer: %s", what, err);
	}
	if (reply.type != TSYNC_MSG_ERROR && reply.type != TSYNC_MSG_SYNC_READY) {
		close(fd);
		return bad("%s: answered %s", what, tsync_msg_name(reply.type));
	}
	*code = reply.type == TSYNC_MSG_ERROR ? reply.error.code : reply.sync_ready.status;
	if (reply.type == TSYNC_MSG_ERROR)
		printf("%s: ERROR %s: %s\n", what, tsync_err_name(*code), reply.error.reason);
	else
		printf("%s: SYNC_READY status %s\n", what, tsync_err_name(*code));
	bye(fd);
	return *code ? 0 : bad("%s: accepted", what);
}

static int case_bad_cpu(const struct ctx *c)
{
	struct tsync_msg m;
	uint32_t code;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_START);
	m.sync_start.round_id = 1;
	m.sync_start.cpu = 9999;
	m.sync_start.nprobes = 10;
	m.sync_start.source = TSYNC_STAMP_CLOCK;
	snprintf(m.sync_start.clock, sizeof(m.sync_start.clock), "mono");
	if (session_error(c, &m, &code, "SYNC_START cpu 9999"))
		return 1;
	printf("ok: SYNC_START for CPU 9999 refused (%s)\n", tsync_err_name(code));
	return 0;
}

/* TRACE_START with the words of one event @event and @kb KiB (-e, -b);
 * @want the expected error code. */
static int trace_start(const struct ctx *c, const char *event, uint32_t kb,
		       uint32_t want, const char *what)
{
	char num[16], *words[] = { "-e", (char *)event, "-b", num };
	struct tsync_msg m;
	uint32_t code;

	snprintf(num, sizeof(num), "%u", kb);
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "local");
	m.trace_start.nargs = kb ? 4 : 2;
	m.trace_start.args = words;
	if (session_error(c, &m, &code, what))
		return 1;
	if (code == TSYNC_ERR_UNSUPPORTED) {
		printf("note: %s: the agent does not support tracing\n", what);
		return 3;
	}
	if (code != want)
		return bad("%s: ERROR %s, expected %s", what, tsync_err_name(code),
			   tsync_err_name(want));
	printf("ok: %s refused (%s)\n", what, tsync_err_name(code));
	return 0;
}

static int case_auth_wrong(const struct ctx *c)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_msg m;
	uint8_t buf[256];
	uint32_t code = 0;
	char err[256];
	int fd = conn(c), t;

	mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
	m.hello.caps |= TSYNC_CAP_AUTH_HMAC;
	rand_bytes(c, m.hello.nonce, sizeof(m.hello.nonce));
	put(fd, buf, encode(&m, buf, sizeof(buf)));
	if (tsync_msg_recv_expect(fd, TSYNC_MSG_HELLO_REPLY, &m, &dctx,
				  tsync_deadline_ms(SLACK_MS), err, sizeof(err))) {
		close(fd);
		return bad("auth-wrong: %s", err);
	}
	if (!(m.hello_reply.caps & TSYNC_CAP_AUTH_HMAC)) {
		close(fd);
		return bad("auth-wrong: the agent does not ask for authentication");
	}
	tsync_msg_init(&m, TSYNC_MSG_AUTH);
	rand_bytes(c, m.auth.mac, sizeof(m.auth.mac));
	put(fd, buf, encode(&m, buf, sizeof(buf)));
	t = wait_closed(fd, SLACK_MS, &code);
	close(fd);
	if (t < 0)
		return bad("auth-wrong: still open after a wrong AUTH");
	if (code != TSYNC_ERR_AUTH)
		return bad("auth-wrong: closed with ERROR %s, expected AUTH", tsync_err_name(code));
	printf("ok: AUTH with a wrong MAC: ERROR AUTH and closed after %d ms\n", t);
	return 0;
}

/* Starts a trace (no events, clock local) in session @fd. Returns 0, 3
 * when the agent cannot trace, or 1. */
static int start_trace(int fd)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_msg m;
	char err[256];
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "local");
	if (tsync_msg_send(fd, &m, tsync_deadline_ms(5000)))
		return bad("TRACE_START: send failed");
	ret = tsync_msg_recv_expect(fd, TSYNC_MSG_TRACE_STARTED, &m, &dctx,
				    tsync_deadline_ms(SLACK_MS), err, sizeof(err));
	if (ret) {
		if (strstr(err, "UNSUPPORTED"))
			return 3;
		return bad("TRACE_START: %s", err);
	}
	tsync_msg_free(&m);
	return 0;
}

/* A data hello for CPU 0 of session @r offering authentication, then an
 * AUTH with a wrong MAC: the agent must answer ERROR AUTH and close. */
static int data_auth_wrong(const struct ctx *c, const struct tsync_session_reply *r)
{
	uint8_t hnonce[TSYNC_NONCE_LEN];
	struct tsync_msg m;
	uint32_t code = 0;
	char err[256];
	int fd = conn(c), t;

	if (hello_auth(c, fd, &m, TSYNC_CONN_DATA, r->session_id, r->secret, hnonce,
		       err, sizeof(err))) {
		close(fd);
		return bad("data hello: %s", err);
	}
	send_auth(c, fd, NULL, hnonce, &m.hello_reply);
	t = wait_closed(fd, SLACK_MS, &code);
	close(fd);
	if (t < 0 || code != TSYNC_ERR_AUTH)
		return bad("data AUTH with a wrong MAC: %s (ERROR %s)",
			   t < 0 ? "still open" : "closed", tsync_err_name(code));
	return 0;
}

static int case_data_auth_fail(const struct ctx *c, int n)
{
	uint8_t hnonce[TSYNC_NONCE_LEN];
	struct tsync_session_reply r;
	struct tsync_msg m;
	char err[256];
	int cfd, fd, ret;

	if (!c->key)
		return bad("data-auth-fail needs --key-file");
	for (int i = 0; i < n; i++) {
		cfd = open_session(c, &r);
		ret = start_trace(cfd);
		if (!ret)
			ret = data_auth_wrong(c, &r);
		bye(cfd);
		if (ret)
			return ret;
	}
	printf("%d data connections failed AUTH\n", n);
	/* the agent is not locked out, and a failed AUTH left CPU 0 free */
	cfd = open_session(c, &r);
	ret = start_trace(cfd);
	if (!ret)
		ret = data_auth_wrong(c, &r);
	if (ret) {
		bye(cfd);
		return ret;
	}
	fd = conn(c);
	if (hello_auth(c, fd, &m, TSYNC_CONN_DATA, r.session_id, r.secret, hnonce,
		       err, sizeof(err))) {
		close(fd);
		bye(cfd);
		return bad("CPU 0 after a failed AUTH: %s", err);
	}
	send_auth(c, fd, c->key, hnonce, &m.hello_reply);
	bye(cfd);
	/* the session ends, so does its stream */
	if (wait_closed(fd, SLACK_MS * 2, NULL) < 0) {
		close(fd);
		return bad("stream of CPU 0 still open after BYE");
	}
	close(fd);
	printf("ok: %d data connections failed AUTH; a session still opens and CPU 0 "
	       "still streams\n", n);
	return 0;
}

/* Opens a connection that sends HELLO (offering authentication), reads
 * the HELLO_REPLY and then says nothing. Returns its fd or -1. */
static int silent_open(const struct ctx *c)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_msg m;
	uint8_t buf[256];
	char err[256];
	size_t len;
	int fd = tsync_connect(&c->ep, 5000, NULL, err, sizeof(err));

	if (fd < 0)
		return -1;
	mk_hello(&m, TSYNC_CONN_CONTROL, 0, NULL);
	m.hello.caps |= TSYNC_CAP_AUTH_HMAC;
	len = encode(&m, buf, sizeof(buf));
	if (tsync_write_full(fd, buf, len, tsync_deadline_ms(5000)) ||
	    tsync_msg_recv_expect(fd, TSYNC_MSG_HELLO_REPLY, &m, &dctx,
				  tsync_deadline_ms(5000), err, sizeof(err))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int case_hello_silence(const struct ctx *c, int n, int ms)
{
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	int64_t deadline;
	int reopened = 0, failed = 0;

	if (!p)
		return 2;
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = silent_open(c), .events = POLLIN };
	printf("holding %d HELLO-then-silence connections\n", n);
	fflush(stdout);
	deadline = tsync_deadline_ms(ms);
	while (tsync_now_ns() < deadline) {
		int r;

		usleep(200000);	/* a persistent attacker, not a racing one */
		r = poll(p, (nfds_t)n, 0);

		for (int i = 0; i < n; i++) {
			char b[64];

			if (p[i].fd >= 0 && !(r > 0 && p[i].revents))
				continue;
			if (p[i].fd >= 0) {
				if (recv(p[i].fd, b, sizeof(b), MSG_DONTWAIT) > 0)
					continue;
				close(p[i].fd);
			}
			p[i].fd = silent_open(c);
			if (p[i].fd < 0)
				failed++;
			else
				reopened++;
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	printf("ok: held %d HELLO-then-silence connections for %d ms (%d reopened, "
	       "%d could not)\n", n, ms, reopened, failed);
	return 0;
}

static int case_auth_deadline(const struct ctx *c, int max_ms)
{
	int fd = silent_open(c), t;

	if (fd < 0)
		return bad("auth-deadline: no HELLO_REPLY");
	t = wait_closed(fd, max_ms, NULL);
	close(fd);
	if (t < 0)
		return bad("HELLO-then-silence connection still open after %d ms", max_ms);
	printf("ok: HELLO-then-silence connection closed after %d ms\n", t);
	return 0;
}

static int case_busy_abuse(const struct ctx *c, int io_ms)
{
	struct tsync_decode_ctx dctx = { 0 };
	struct tsync_session_reply r;
	int fd = open_session(c, &r);
	int64_t start, limit = 2 * (int64_t)io_ms + SLACK_MS;
	uint32_t answered = 0, code = 0;
	struct tsync_msg m;
	char err[256];

	tsync_msg_init(&m, TSYNC_MSG_SYNC_START);
	m.flags = TSYNC_SYNC_F_BUSY;
	m.sync_start.round_id = 1;
	m.sync_start.nprobes = 4096;
	m.sync_start.source = TSYNC_STAMP_CLOCK;
	snprintf(m.sync_start.clock, sizeof(m.sync_start.clock), "mono");
	if (tsync_msg_send(fd, &m, tsync_deadline_ms(5000)) ||
	    tsync_msg_recv_expect(fd, TSYNC_MSG_SYNC_READY, &m, &dctx,
				  tsync_deadline_ms(SLACK_MS), err, sizeof(err))) {
		close(fd);
		return bad("busy-abuse: no SYNC_READY");
	}
	start = tsync_now_ns();
	while ((tsync_now_ns() - start) / NSEC_PER_MSEC < limit) {
		uint32_t got = 0;

		if (wait_closed(fd, io_ms * 8 / 10, &got) >= 0) {
			code = got;
			break;
		}
		if (tsync_probe_send(fd, TSYNC_MSG_PROBE, 1, answered,
				     tsync_deadline_ms(5000)))
			break;
		answered++;
	}
	if ((tsync_now_ns() - start) / NSEC_PER_MSEC >= limit) {
		close(fd);
		return bad("busy-abuse: round still going after %lld ms (%u probes)",
			   (long long)limit, answered);
	}
	close(fd);
	if (code && code != TSYNC_ERR_TIMEOUT)
		return bad("busy-abuse: ERROR %s, expected TIMEOUT", tsync_err_name(code));
	printf("ok: busy-polled round with a probe every %d ms ended by the agent "
	       "after %lld ms (%u probes)%s\n", io_ms * 8 / 10,
	       (long long)((tsync_now_ns() - start) / NSEC_PER_MSEC), answered,
	       code ? ", ERROR TIMEOUT" : "");
	return 0;
}

/* Sends TRACE_START of @n specs @name (as -e words), filters
 * "common_pid != i" (-f, when more than one), -b @kb on session @fd;
 * returns the answer's type and the error code in *@code, or -1. */
static int send_trace_start(int fd, const char *name, uint32_t n, uint32_t kb,
			    uint32_t *code, char *reason, size_t rlen)
{
	struct tsync_decode_ctx dctx = { 0 };
	char **words = calloc((size_t)n * 4 + 2, sizeof(*words)), num[16];
	char (*filters)[32] = calloc(n, sizeof(*filters));
	struct tsync_msg m;
	char err[256];
	int type = -1;
	uint32_t w = 0;

	if (!words || !filters)
		exit(2);
	for (uint32_t i = 0; i < n; i++) {
		words[w++] = "-e";
		words[w++] = (char *)name;
		if (n > 1) {
			snprintf(filters[i], sizeof(filters[i]), "common_pid != %u", i);
			words[w++] = "-f";
			words[w++] = filters[i];
		}
	}
	snprintf(num, sizeof(num), "%u", kb);
	if (kb) {
		words[w++] = "-b";
		words[w++] = num;
	}
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "local");
	m.trace_start.nargs = w;
	m.trace_start.args = words;
	/* resolving a selection lists tracefs directories: slow under ASan
	 * on a loaded machine, so a generous deadline for the answer */
	if (!tsync_msg_send(fd, &m, tsync_deadline_ms(5000)) &&
	    !tsync_msg_recv(fd, &m, &dctx, tsync_deadline_ms(4 * SLACK_MS), err,
			    sizeof(err))) {
		type = m.type;
		*code = m.type == TSYNC_MSG_ERROR ? m.error.code : 0;
		snprintf(reason, rlen, "%s", m.type == TSYNC_MSG_ERROR ? m.error.reason : "");
		tsync_msg_free(&m);
	}
	free(words);
	free(filters);
	return type;
}

static int case_amplify(const struct ctx *c)
{
	struct tsync_session_reply r;
	int fd = open_session(c, &r), type;
	int64_t start = tsync_now_ns();
	char reason[TSYNC_REASON_MAX] = "";
	uint32_t code = 0;

	type = send_trace_start(fd, "*", 40, 0, &code, reason, sizeof(reason));
	bye(fd);
	if (type < 0)
		return bad("amplify: no answer to TRACE_START");
	if (code == TSYNC_ERR_UNSUPPORTED)
		return 3;
	if (type != TSYNC_MSG_ERROR || code != TSYNC_ERR_LIMIT || !reason[0])
		return bad("amplify: answered %s %s '%s', expected ERROR LIMIT with a reason",
			   tsync_msg_name((uint8_t)type), code ? tsync_err_name(code) : "",
			   reason);
	printf("ok: TRACE_START of '*' x 40 with filters refused after %lld ms: %s\n",
	       (long long)((tsync_now_ns() - start) / NSEC_PER_MSEC), reason);
	return 0;
}

static int case_budget(const struct ctx *c, int kb, int n)
{
	struct tsync_session_reply r;
	char reason[TSYNC_REASON_MAX] = "", why[TSYNC_REASON_MAX] = "";
	int fds[64], started = 0, refused = 0, type, fd;
	uint32_t code = 0;

	if (n > 64)
		return 2;
	for (int i = 0; i < n; i++) {
		fds[i] = open_session(c, &r);
		type = send_trace_start(fds[i], "sched:sched_switch", 1, (uint32_t)kb,
					&code, reason, sizeof(reason));
		if (type == TSYNC_MSG_TRACE_STARTED)
			started++;
		else if (code == TSYNC_ERR_UNSUPPORTED)
			return 3;
		else if (code == TSYNC_ERR_LIMIT && strstr(reason, "--max-trace-mb") &&
			 ++refused)
			snprintf(why, sizeof(why), "%s", reason);
		else
			return bad("budget: session %d: %s %s: %s", i,
				   tsync_msg_name((uint8_t)type), tsync_err_name(code), reason);
	}
	for (int i = 0; i < n; i++)
		bye(fds[i]);
	if (!refused || !started)
		return bad("budget: %d of %d traces of %d KiB/CPU started, %d refused",
			   started, n, kb, refused);
	/* the buffers come back when the sessions end (bye() does not wait
	 * for that): a new trace must start within a few tries */
	for (int tries = 0; tries < 50; tries++) {
		fd = open_session(c, &r);
		type = send_trace_start(fd, "sched:sched_switch", 1, (uint32_t)kb,
					&code, reason, sizeof(reason));
		bye(fd);
		if (type == TSYNC_MSG_TRACE_STARTED) {
			printf("ok: %d sessions of %d KiB/CPU: %d started, %d refused (%s); "
			       "the budget came back\n", n, kb, started, refused, why);
			return 0;
		}
		usleep(100000);
	}
	return bad("budget: no trace starts after the sessions ended: %s", reason);
}

/* Parses a positive int argument or exits 2. */
static int num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v <= 0 || v > 1000000000) {
		fprintf(stderr, "hostile_client: bad number '%s'\n", s);
		exit(2);
	}
	return (int)v;
}

static int run_case(const struct ctx *cp, int argc, char **argv);

int main(int argc, char **argv)
{
	uint64_t rng;
	struct ctx c = { .rng = &rng };
	char err[256];
	int ret;

	if (argc >= 3 && !strcmp(argv[1], "--key-file")) {
		if (tsync_key_load(argv[2], &c.key, err, sizeof(err))) {
			fprintf(stderr, "hostile_client: --key-file: %s\n", err);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: hostile_client ENDPOINT CASE [ARGS] (see the source)\n");
		ret = 2;
	} else if (tsync_endpoint_parse(argv[1], 0, &c.ep, err, sizeof(err))) {
		fprintf(stderr, "hostile_client: %s\n", err);
		ret = 2;
	} else {
		rng = test_seed();
		ret = run_case(&c, argc, argv);
	}
	tsync_key_free(c.key);
	return ret;
}

/* Runs the case argv[2] with its arguments; returns the exit status. */
static int run_case(const struct ctx *cp, int argc, char **argv)
{
	const struct ctx c = *cp;
	const char *cs = argv[2];

#define NEED(n) do { if (argc < 3 + (n)) { fprintf(stderr, "%s needs %d argument(s)\n", cs, n); return 2; } } while (0)
	if (!strcmp(cs, "random")) {
		NEED(1);
		return case_random(&c, num(argv[3]));
	} else if (!strcmp(cs, "lying-huge")) {
		return lying_hello(&c, 0x7fffffffu, 84, SLACK_MS, "HELLO announcing 2 GiB");
	} else if (!strcmp(cs, "lying-short")) {
		return lying_hello(&c, 10, 10, SLACK_MS, "HELLO announcing 10 bytes");
	} else if (!strcmp(cs, "lying-long")) {
		NEED(1);
		return lying_hello(&c, 1000, 84, num(argv[3]) + SLACK_MS,
				   "HELLO announcing 1000 bytes, 84 sent");
	} else if (!strcmp(cs, "truncated")) {
		NEED(1);
		return case_truncated(&c, num(argv[3]));
	} else if (!strcmp(cs, "trickle")) {
		NEED(2);
		return case_trickle(&c, num(argv[3]), num(argv[4]));
	} else if (!strcmp(cs, "session-lie")) {
		NEED(2);
		return case_session_lie(&c, num(argv[3]), num(argv[4]));
	} else if (!strcmp(cs, "idle")) {
		NEED(3);
		return case_idle(&c, num(argv[3]), num(argv[4]), num(argv[5]));
	} else if (!strcmp(cs, "data-secret")) {
		NEED(1);
		return case_data_secret(&c, num(argv[3]));
	} else if (!strcmp(cs, "auth-wrong")) {
		return case_auth_wrong(&c);
	} else if (!strcmp(cs, "data-auth-fail")) {
		NEED(1);
		return case_data_auth_fail(&c, num(argv[3]));
	} else if (!strcmp(cs, "hello-silence")) {
		NEED(2);
		return case_hello_silence(&c, num(argv[3]), num(argv[4]));
	} else if (!strcmp(cs, "busy-abuse")) {
		NEED(1);
		return case_busy_abuse(&c, num(argv[3]));
	} else if (!strcmp(cs, "amplify")) {
		return case_amplify(&c);
	} else if (!strcmp(cs, "budget")) {
		NEED(2);
		return case_budget(&c, num(argv[3]), num(argv[4]));
	} else if (!strcmp(cs, "auth-deadline")) {
		NEED(1);
		return case_auth_deadline(&c, num(argv[3]));
	} else if (!strcmp(cs, "bad-cpu")) {
		return case_bad_cpu(&c);
	} else if (!strcmp(cs, "bad-event")) {
		return trace_start(&c, "nosuchsys:nosuchevent", 0, TSYNC_ERR_NO_EVENT,
				   "TRACE_START of an unknown event");
	} else if (!strcmp(cs, "big-buffer")) {
		NEED(1);
		return trace_start(&c, "sched:sched_switch", (uint32_t)num(argv[3]),
				   TSYNC_ERR_LIMIT, "TRACE_START with a buffer over the limit");
	}
	fprintf(stderr, "hostile_client: unknown case '%s'\n", cs);
	return 2;
}
