// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the agent's control session state machine (agent/tsync/session.c
 * and the round and record steps it drives), against a scripted host over
 * a socketpair: the session set-up, every request out of order, every
 * error reply, every timeout (idle, in the middle of a message, in a
 * round), and a full sync round and trace. Each test names the exchange it
 * checks, so a failure shows which one broke.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <cmocka.h>

#include <tracefs.h>

#include "agent/rec/budget.h"
#include "agent/conn/context.h"
#include "agent/conn/registry.h"
#include "agent/tsync/session.h"
#include "agent/conn/tracefs_check.h"
#include "common/base/cpu.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/tracefs/instance.h"
#include "common/wire/msgio.h"
#include "common/wire/probeio.h"
#include "common/base/timeutil.h"
#include "tests/unit/proto_samples.h"

/* Generous bound for anything the agent must do promptly (a loaded
 * machine, sanitizers, valgrind). */
#define SLACK_MS 20000
#define FIRST_ID 0x100000001ull

/* The agent's session thread and the scripted host's end. */
struct fx {
	struct agent_cfg cfg;
	struct agent_ctx ctx;
	struct agent_tracefs tracefs;
	struct tsync_peer peer;
	int afd, hfd;		/* agent's end, host's end */
	pthread_t th;
	bool running;
	struct tsync_decode_ctx dctx;
};

/* The session thread; closes the agent's end afterwards, as the
 * server's connection thread does. */
static void *serve(void *arg)
{
	struct fx *f = arg;

	agent_serve_control(&f->ctx, f->afd, &f->peer, TSYNC_PROTO_VERSION_MIN);
	close(f->afd);
	f->afd = -1;
	return NULL;
}

/* A fresh connection for the next session of a test. */
static void reconnect(struct fx *f)
{
	int sv[2];

	assert_false(f->running);
	close(f->hfd);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->afd = sv[0];
	f->hfd = sv[1];
}

/* Sets up the configuration and registry (before start()). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int sv[2];

	if (!f || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	f->afd = sv[0];
	f->hfd = sv[1];
	f->cfg = (struct agent_cfg){
		.max_sessions = 4,
		.max_conns = 16,
		.idle_timeout_ms = 1500,
		.io_timeout_ms = 1000,
		.max_probes = 64,
		.max_buffer_kb = 8192,
		.max_msg_kb = 64,
	};
	f->ctx.cfg = &f->cfg;
	f->ctx.ncpus = tsync_cpu_count();
	f->tracefs.usable = true;	/* as this machine has it */
	f->ctx.tracefs = &f->tracefs;
	f->ctx.reg = agent_registry_new(f->cfg.max_sessions, FIRST_ID);
	f->ctx.budget = agent_budget_new(1024 * 1024);
	snprintf(f->peer.name, sizeof(f->peer.name), "scripted-host");
	f->dctx.max_payload = TSYNC_MSG_MAX;
	*state = f;
	return f->ctx.reg && f->ctx.budget ? 0 : -1;
}

/* Starts the session thread. */
static void start(struct fx *f)
{
	assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
	f->running = true;
}

/* Waits (bounded) for the session thread to return. */
static void join(struct fx *f)
{
	struct timespec ts;

	if (!f->running)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += SLACK_MS / 1000;
	assert_int_equal(pthread_timedjoin_np(f->th, NULL, &ts), 0);
	f->running = false;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->running) {
		shutdown(f->hfd, SHUT_RDWR);
		join(f);
	}
	if (f->afd >= 0)
		close(f->afd);
	close(f->hfd);
	agent_registry_free(f->ctx.reg);
	agent_budget_free(f->ctx.budget);
	free(f);
	return 0;
}

/* The host sends @m. */
static void host_send(struct fx *f, const struct tsync_msg *m)
{
	assert_int_equal(tsync_msg_send(f->hfd, m, tsync_deadline_ms(SLACK_MS)), 0);
}

/* The host sends an empty message of @type. */
static void host_send_type(struct fx *f, uint8_t type)
{
	struct tsync_msg m;

	tsync_msg_init(&m, type);
	host_send(f, &m);
}

/* The host expects a message of @type from the agent; the caller frees
 * @m. */
static void expect(struct fx *f, uint8_t type, struct tsync_msg *m)
{
	char err[256] = "";
	int ret = tsync_msg_recv(f->hfd, m, &f->dctx, tsync_deadline_ms(SLACK_MS),
				 err, sizeof(err));

	if (ret)
		fail_msg("expected %s, got: %s", tsync_msg_name(type), err);
	if (m->type != type)
		fail_msg("expected %s, got %s%s%s", tsync_msg_name(type),
			 tsync_msg_name(m->type), m->type == TSYNC_MSG_ERROR ? ": " : "",
			 m->type == TSYNC_MSG_ERROR ? m->error.reason : "");
}

/* The host expects ERROR @code with a reason (containing @what if not
 * NULL). */
static void expect_error(struct fx *f, uint32_t code, const char *what)
{
	struct tsync_msg m;

	expect(f, TSYNC_MSG_ERROR, &m);
	if (m.error.code != code)
		fail_msg("ERROR %s (%s), expected %s", tsync_err_name(m.error.code),
			 m.error.reason, tsync_err_name(code));
	assert_true(m.error.reason[0] != '\0');
	if (what && !strstr(m.error.reason, what))
		fail_msg("ERROR reason '%s' does not mention '%s'", m.error.reason, what);
	tsync_msg_free(&m);
}

/* The host expects the agent to end the session: EOF (nothing more on the
 * socket) within @ms, and its thread to return. Returns the ms it took. */
static int expect_end(struct fx *f, int ms)
{
	int64_t start = tsync_now_ns(), deadline = tsync_deadline_ms(ms);
	char b[256];

	for (;;) {
		struct pollfd p = { .fd = f->hfd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, tsync_remaining_ms(deadline)) <= 0)
			fail_msg("session still open after %d ms", ms);
		n = recv(f->hfd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			fail_msg("%zd unexpected bytes (type %u) before the end", n,
				 n > 5 ? b[5] : 0);
	}
	join(f);
	return (int)((tsync_now_ns() - start) / NSEC_PER_MSEC);
}

/* SESSION_REQ -> SESSION_REPLY; the reply in @r. */
static void session_req(struct fx *f, struct tsync_session_reply *r)
{
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	m.session_req.trace_id = 0x1234;
	snprintf(m.session_req.name, sizeof(m.session_req.name), "unit-host");
	host_send(f, &m);
	expect(f, TSYNC_MSG_SESSION_REPLY, &m);
	*r = m.session_reply;
	tsync_msg_free(&m);
}

/* BYE ends the session without an answer. */
static void bye(struct fx *f)
{
	host_send_type(f, TSYNC_MSG_BYE);
	expect_end(f, SLACK_MS);
}

/* SESSION_REQ is answered with the guest's CPUs, ids and a secret; BYE
 * ends the session. */
static void test_setup_bye(void **state)
{
	static const uint8_t zero[TSYNC_SECRET_LEN];
	struct fx *f = *state;
	struct tsync_session_reply r;

	start(f);
	session_req(f, &r);
	assert_int_equal(r.ncpus, (uint32_t)f->ctx.ncpus);
	assert_int_equal(r.page_size, (uint32_t)getpagesize());
	assert_true(r.session_id == FIRST_ID);
	assert_true(memcmp(r.secret, zero, sizeof(zero)) != 0);
	assert_true(r.caps & TSYNC_CAP_TRACE);
	bye(f);
}

/* A second SESSION_REQ is refused (UNEXPECTED) and the session goes on. */
static void test_second_session_req(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	snprintf(m.session_req.name, sizeof(m.session_req.name), "again");
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_UNEXPECTED, "already set up");
	bye(f);
}

/* Builds a SYNC_START for CPU 0 with @nprobes probes. */
static void mk_sync_start(struct tsync_msg *m, uint32_t round, uint32_t nprobes,
			  const char *clock, bool busy)
{
	tsync_msg_init(m, TSYNC_MSG_SYNC_START);
	m->flags = busy ? TSYNC_SYNC_F_BUSY : 0;
	m->sync_start.round_id = round;
	m->sync_start.cpu = 0;
	m->sync_start.nprobes = nprobes;
	m->sync_start.source = TSYNC_STAMP_CLOCK;
	snprintf(m->sync_start.clock, sizeof(m->sync_start.clock), "%s", clock);
}

/* Before SESSION_REQ, every request is refused (UNEXPECTED) and the
 * session goes on to be set up. */
static void test_before_session_req(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	mk_sync_start(&m, 1, 4, "mono", false);
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_UNEXPECTED, "SESSION_REQ");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "local");
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_UNEXPECTED, NULL);
	host_send_type(f, TSYNC_MSG_TRACE_STOP);
	expect_error(f, TSYNC_ERR_UNEXPECTED, NULL);
	host_send_type(f, TSYNC_MSG_META_REQ);
	expect_error(f, TSYNC_ERR_UNEXPECTED, NULL);
	session_req(f, &r);
	bye(f);
}

/* A message type that has no place in a control session is refused
 * (UNEXPECTED) and ends the session; one fresh session per type. */
static void test_unexpected_types(void **state)
{
	static const uint8_t types[] = {
		TSYNC_MSG_HELLO, TSYNC_MSG_HELLO_REPLY, TSYNC_MSG_AUTH,
		TSYNC_MSG_SESSION_REPLY, TSYNC_MSG_SYNC_READY, TSYNC_MSG_PROBE,
		TSYNC_MSG_PROBE_REPLY, TSYNC_MSG_SYNC_END, TSYNC_MSG_SYNC_STAMPS,
		TSYNC_MSG_TRACE_STARTED, TSYNC_MSG_TRACE_STOPPED, TSYNC_MSG_STREAM_END,
		TSYNC_MSG_META_CHUNK, TSYNC_MSG_META_END,
	};
	struct fx *f = *state;

	/* the samples' CPU fields go up to 3: within the guest's CPUs, the
	 * decoder accepts them and the session judges the type */
	f->ctx.ncpus = 8;
	for (size_t i = 0; i < sizeof(types); i++) {
		struct tsync_session_reply r;
		struct tsync_msg m;

		if (i)	/* a fresh connection for each */
			reconnect(f);
		start(f);
		session_req(f, &r);
		sample_msg(types[i], &m);
		host_send(f, &m);
		expect_error(f, TSYNC_ERR_UNEXPECTED, tsync_msg_name(types[i]));
		expect_end(f, SLACK_MS);
	}
}

/* An ERROR from the host ends the session without an answer. */
static void test_host_error(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	tsync_msg_set_error(&m, TSYNC_ERR_INTERNAL, "host gives up");
	host_send(f, &m);
	expect_end(f, SLACK_MS);
}

/* Bytes that are not a message: ERROR PROTOCOL, then the end. */
static void test_malformed(void **state)
{
	struct fx *f = *state;
	uint8_t junk[TSYNC_HDR_LEN] = "NOPE-not-a-";

	start(f);
	assert_int_equal(tsync_write_full(f->hfd, junk, sizeof(junk),
					  tsync_deadline_ms(SLACK_MS)), 0);
	expect_error(f, TSYNC_ERR_PROTOCOL, "magic");
	expect_end(f, SLACK_MS);
}

/* A message over --max-message-kb: ERROR PROTOCOL before its payload is
 * read, then the end. */
static void test_too_long(void **state)
{
	struct fx *f = *state;
	uint8_t hdr[TSYNC_HDR_LEN] = { 'T', 'S', 'Y', 'P', TSYNC_PROTO_VERSION_MIN,
				       TSYNC_MSG_TRACE_START, 0, 0, 0, 0x10, 0, 0 };

	start(f);
	assert_int_equal(tsync_write_full(f->hfd, hdr, sizeof(hdr),
					  tsync_deadline_ms(SLACK_MS)), 0);
	expect_error(f, TSYNC_ERR_PROTOCOL, "limit");
	expect_end(f, SLACK_MS);
}

/* A host that says nothing is cut off by the idle timeout, told so in an
 * ERROR TIMEOUT first. */
static void test_idle_timeout(void **state)
{
	struct fx *f = *state;
	int64_t t0 = tsync_now_ns();

	start(f);
	assert_int_equal(tsync_wait_readable(f->hfd,
					     tsync_deadline_ms(f->cfg.idle_timeout_ms + SLACK_MS)), 1);
	assert_true(tsync_now_ns() - t0 >= f->cfg.idle_timeout_ms / 2 * NSEC_PER_MSEC);
	expect_error(f, TSYNC_ERR_TIMEOUT, "idle");
	expect_end(f, SLACK_MS);
}

/* A host that stops in the middle of a message is cut off (ERROR TIMEOUT,
 * then EOF) by the I/O timeout, not the (longer) idle timeout. */
static void test_stall_mid_message(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	uint8_t half[TSYNC_HDR_LEN / 2] = { 'T', 'S', 'Y', 'P' };

	f->cfg.idle_timeout_ms = 60000;
	start(f);
	session_req(f, &r);
	assert_int_equal(tsync_write_full(f->hfd, half, sizeof(half),
					  tsync_deadline_ms(SLACK_MS)), 0);
	assert_int_equal(tsync_wait_readable(f->hfd,
					     tsync_deadline_ms(f->cfg.io_timeout_ms + SLACK_MS)), 1);
	expect_error(f, TSYNC_ERR_TIMEOUT, "stalled in the middle of a message");
	expect_end(f, SLACK_MS);
}

/* Over --max-sessions: ERROR BUSY, and the session never starts. */
static void test_max_sessions(void **state)
{
	struct fx *f = *state;
	struct agent_session *dummy[4];
	uint64_t id;

	for (int i = 0; i < f->cfg.max_sessions; i++) {
		dummy[i] = (struct agent_session *)&dummy[i];
		assert_int_equal(agent_registry_add(f->ctx.reg, dummy[i], &id), 0);
	}
	start(f);
	expect_error(f, TSYNC_ERR_BUSY, "too many sessions");
	join(f);
	for (int i = 0; i < f->cfg.max_sessions; i++)
		agent_registry_remove(f->ctx.reg, dummy[i]);
}

/* Runs @n probes of round @round; returns how many were answered before
 * the agent went quiet or closed. @gap_ms between probes. An ERROR the
 * agent sent instead of an answer goes to *@code (if not NULL). */
static uint32_t run_probes_err(struct fx *f, uint32_t round, uint32_t n, int gap_ms,
			       uint32_t *code)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct tsync_msg m;
		char err[256];
		int sent;

		if (gap_ms)
			usleep((useconds_t)gap_ms * 1000);
		/* the agent may have closed meanwhile: its ERROR is still
		 * there to read */
		sent = tsync_probe_send(f->hfd, TSYNC_MSG_PROBE, round, i,
					tsync_deadline_ms(SLACK_MS));
		if (tsync_msg_recv(f->hfd, &m, &f->dctx, tsync_deadline_ms(SLACK_MS),
				   err, sizeof(err)))
			break;
		if (m.type != TSYNC_MSG_PROBE_REPLY || sent) {
			if (m.type == TSYNC_MSG_ERROR && code)
				*code = m.error.code;
			tsync_msg_free(&m);
			break;
		}
		assert_int_equal(m.probe.round_id, round);
		assert_int_equal(m.probe.seq, i);
	}
	return i;
}

/* run_probes_err() for rounds that must go through. */
static uint32_t run_probes(struct fx *f, uint32_t round, uint32_t n, int gap_ms)
{
	return run_probes_err(f, round, n, gap_ms, NULL);
}

/* A whole round: SYNC_READY, every probe answered in order, SYNC_STAMPS
 * with a (t2 <= t3) pair per probe; SYNC_RESULT needs no answer. */
static void test_round(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 7, 5, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(m.sync_ready.round_id, 7);
	assert_int_equal(m.sync_ready.status, 0);
	assert_int_equal(run_probes(f, 7, 5, 0), 5);
	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = 7;
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_STAMPS, &m);
	assert_int_equal(m.sync_stamps.round_id, 7);
	assert_int_equal(m.sync_stamps.count, 5);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(m.sync_stamps.stamps[i].seq, i);
		assert_true(m.sync_stamps.stamps[i].t2 <= m.sync_stamps.stamps[i].t3);
	}
	tsync_msg_free(&m);
	tsync_msg_init(&m, TSYNC_MSG_SYNC_RESULT);
	m.sync_result.round_id = 7;
	m.sync_result.used = m.sync_result.sent = 5;
	host_send(f, &m);
	bye(f);
}

/* A round on an unknown clock: SYNC_READY with status BAD_REQUEST, and
 * the session goes on. */
static void test_round_bad_clock(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 1, 4, "nosuchclock", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(m.sync_ready.status, TSYNC_ERR_BAD_REQUEST);
	bye(f);
}

/* An agent without tracefs: SESSION_REPLY offers the clocks it can stamp
 * without it and no CAP_TRACE; TRACE_START and a round with marker stamps
 * get ERROR with the reason and the fix, and the session goes on to sync
 * clock mono. */
static void test_without_tracefs(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	f->tracefs = (struct agent_tracefs){
		.usable = false, .code = TSYNC_ERR_UNSUPPORTED,
		.why = "tracefs is not mounted at /nowhere", .fix = "mount it",
		.clocks = "mono, mono_raw, boot, tai",
	};
	start(f);
	session_req(f, &r);
	assert_false(r.caps & TSYNC_CAP_TRACE);
	assert_string_equal(r.clock, "mono");
	assert_true(r.nclocks >= 4);
	assert_string_equal(r.clocks[0], "mono");
	assert_string_equal(r.clocks[3], "tai");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "local");
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_UNSUPPORTED,
		     "recording needs tracefs: tracefs is not mounted at /nowhere; fix: mount it");
	mk_sync_start(&m, 1, 4, "local", false);
	m.sync_start.source = TSYNC_STAMP_MARKER;
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_UNSUPPORTED,
		     "sync with marker stamps (clock local) needs tracefs: tracefs is not "
		     "mounted at /nowhere; fix: mount it. Without it the agent syncs the "
		     "clocks mono, mono_raw, boot, tai with clock or tsc stamps (e.g. -C mono)");
	mk_sync_start(&m, 2, 3, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(m.sync_ready.status, 0);
	assert_int_equal(run_probes(f, 2, 3, 0), 3);
	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = 2;
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_STAMPS, &m);
	assert_int_equal(m.sync_stamps.count, 3);
	tsync_msg_free(&m);
	bye(f);
}

/* SYNC_START for a CPU the guest lacks, or more probes than
 * --max-probes: ERROR PROTOCOL (the decoder's limits), then the end. */
static void test_round_limits(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 1, 4, "mono", false);
	m.sync_start.cpu = (uint32_t)f->ctx.ncpus;
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_PROTOCOL, "out of range");
	expect_end(f, SLACK_MS);

	reconnect(f);
	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 1, f->cfg.max_probes + 1, "mono", false);
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_PROTOCOL, NULL);
	expect_end(f, SLACK_MS);
}

/* A probe of another round, and a probe beyond nprobes: ERROR PROTOCOL,
 * then the end. */
static void test_round_bad_probe(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 3, 2, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(run_probes(f, 3, 2, 0), 2);
	/* a third probe of a 2-probe round */
	assert_int_equal(tsync_probe_send(f->hfd, TSYNC_MSG_PROBE, 3, 2,
					  tsync_deadline_ms(SLACK_MS)), 0);
	expect_error(f, TSYNC_ERR_PROTOCOL, "unexpected probe");
	expect_end(f, SLACK_MS);
}

/* Something else than a probe or SYNC_END inside a round: ERROR
 * UNEXPECTED, then the end. */
static void test_round_unexpected(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 4, 8, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	host_send_type(f, TSYNC_MSG_META_REQ);
	expect_error(f, TSYNC_ERR_UNEXPECTED, "META_REQ");
	expect_end(f, SLACK_MS);
}

/* BYE or ERROR (@type) inside a round ends the session as outside one:
 * the agent cleans up and closes, sending nothing (no ERROR back). */
static void end_inside_round(struct fx *f, uint8_t type)
{
	struct tsync_session_reply r;
	struct tsync_msg m;

	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 7, 8, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(run_probes(f, 7, 2, 0), 2);
	tsync_msg_init(&m, type);
	if (type == TSYNC_MSG_ERROR) {
		m.error.code = TSYNC_ERR_INTERNAL;
		snprintf(m.error.reason, sizeof(m.error.reason), "host gives up");
	}
	host_send(f, &m);
	expect_end(f, SLACK_MS);
}

static void test_round_bye(void **state)
{
	end_inside_round(*state, TSYNC_MSG_BYE);
}

static void test_round_host_error(void **state)
{
	end_inside_round(*state, TSYNC_MSG_ERROR);
}

/* A host that goes quiet inside a round is cut off by the I/O timeout. */
static void test_round_timeout(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;

	f->cfg.idle_timeout_ms = 60000;
	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 5, 8, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(run_probes(f, 5, 2, 0), 2);
	expect_end(f, f->cfg.io_timeout_ms + SLACK_MS);
}

/* A host that keeps a round alive with a probe now and then (each
 * within the I/O timeout) is cut off by the round's overall deadline,
 * twice the I/O timeout: ERROR TIMEOUT, then the end. */
static void test_round_deadline(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;
	uint32_t code = 0, n;

	f->cfg.idle_timeout_ms = 60000;
	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 6, 12, "mono", false);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	/* 12 probes 600 ms apart would take 7.2 s; the round may last 2 s */
	n = run_probes_err(f, 6, 12, f->cfg.io_timeout_ms * 6 / 10, &code);
	if (n >= 12)
		fail_msg("all 12 probes of a round %d ms long were answered",
			 12 * f->cfg.io_timeout_ms * 6 / 10);
	assert_int_equal(code, TSYNC_ERR_TIMEOUT);
	expect_end(f, SLACK_MS);
}

/* Returns the CPU time this process used so far, in ms. */
static int64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A busy-polling round (TSYNC_SYNC_F_BUSY) whose host goes quiet: the
 * agent stops spinning soon (it sleeps for the rest of the wait), and the
 * round still completes when the probes come. */
static void test_busy_spin_bound(void **state)
{
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;
	int64_t c0, spent;

	f->cfg.idle_timeout_ms = 60000;
	f->cfg.io_timeout_ms = 4000;
	start(f);
	session_req(f, &r);
	mk_sync_start(&m, 8, 4, "mono", true);
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_READY, &m);
	assert_int_equal(run_probes(f, 8, 2, 0), 2);
	/* 2 s of silence inside the I/O timeout: spinning all along would
	 * cost up to 2 s of CPU (less on a loaded machine, where the
	 * spinning thread gets a share of a CPU) */
	c0 = cpu_ms();
	usleep(2000000);
	spent = cpu_ms() - c0;
	if (spent > 150)
		fail_msg("the agent spun %lld ms of CPU in 2000 ms without a probe",
			 (long long)spent);
	printf("agent CPU during 2000 ms of silence in a busy round: %lld ms\n",
	       (long long)spent);
	tsync_probe_send(f->hfd, TSYNC_MSG_PROBE, 8, 2, tsync_deadline_ms(SLACK_MS));
	expect(f, TSYNC_MSG_PROBE_REPLY, &m);
	tsync_probe_send(f->hfd, TSYNC_MSG_PROBE, 8, 3, tsync_deadline_ms(SLACK_MS));
	expect(f, TSYNC_MSG_PROBE_REPLY, &m);
	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = 8;
	host_send(f, &m);
	expect(f, TSYNC_MSG_SYNC_STAMPS, &m);
	assert_int_equal(m.sync_stamps.count, 4);
	tsync_msg_free(&m);
	bye(f);
}

/* Skips the test unless this process can create tracefs instances. */
static void need_tracefs(void)
{
	if (geteuid() != 0 || access("/sys/kernel/tracing/instances", W_OK)) {
		printf("skipped: needs root and tracefs at /sys/kernel/tracing\n");
		skip();
	}
}

/* Sends TRACE_START with the option words of @n events (-e
 * @names[i % nnames], -f @filters[i] or none) and -b @kb (0: none). */
static void trace_start(struct fx *f, const char *const *names, int nnames,
			char **filters, uint32_t n, uint32_t kb)
{
	char **words = calloc((size_t)n * 4 + 2, sizeof(*words)), num[16];
	struct tsync_msg m;
	uint32_t w = 0;

	assert_non_null(words);
	for (uint32_t i = 0; i < n; i++) {
		words[w++] = "-e";
		words[w++] = (char *)names[i % (uint32_t)nnames];
		if (filters) {
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
	host_send(f, &m);
	free(words);
}

/* Returns true if a tracefs instance of session @id of this process is
 * left ("tsync-r<id hex>-<pid>-<n>", common/tracefs/instance.h). */
static bool instance_left(uint64_t id)
{
	char prefix[96];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/sys/kernel/tracing/instances");

	if (!d)
		return false;
	snprintf(prefix, sizeof(prefix), "tsync-r%llx-%d-", (unsigned long long)id,
		 (int)getpid());
	while ((de = readdir(d)))
		found |= !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return found;
}

/* A whole trace: TRACE_START -> TRACE_STARTED; a second one refused
 * (UNEXPECTED); TRACE_STOP -> TRACE_STOPPED with every CPU; META_REQ ->
 * META_CHUNKs, META_END; TRACE_STOP again refused; BYE removes the
 * instance. */
static void test_trace(void **state)
{
	static const char *const names[] = { "sched:sched_switch" };
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;
	int chunks = 0;

	need_tracefs();
	start(f);
	session_req(f, &r);
	trace_start(f, names, 1, NULL, 1, 0);
	expect(f, TSYNC_MSG_TRACE_STARTED, &m);
	assert_int_equal(m.trace_started.ncpus, (uint32_t)f->ctx.ncpus);
	assert_true(instance_left(r.session_id));
	trace_start(f, names, 1, NULL, 1, 0);
	expect_error(f, TSYNC_ERR_UNEXPECTED, "already active");
	host_send_type(f, TSYNC_MSG_TRACE_STOP);
	expect(f, TSYNC_MSG_TRACE_STOPPED, &m);
	assert_int_equal(m.trace_stopped.count, (uint32_t)f->ctx.ncpus);
	tsync_msg_free(&m);
	host_send_type(f, TSYNC_MSG_META_REQ);
	for (;;) {
		char err[256];

		assert_int_equal(tsync_msg_recv(f->hfd, &m, &f->dctx,
						tsync_deadline_ms(SLACK_MS), err, sizeof(err)), 0);
		if (m.type == TSYNC_MSG_META_END)
			break;
		assert_int_equal(m.type, TSYNC_MSG_META_CHUNK);
		chunks++;
		tsync_msg_free(&m);
	}
	assert_true(chunks > 0);
	host_send_type(f, TSYNC_MSG_TRACE_STOP);
	expect_error(f, TSYNC_ERR_UNEXPECTED, "no trace");
	bye(f);
	assert_false(instance_left(r.session_id));
}

/* Refused TRACE_STARTs, each with its code and a reason, and the
 * session goes on: a buffer over --max-buffer-kb (LIMIT), an unknown
 * clock (BAD_REQUEST), an unknown event (NO_EVENT). */
static void test_trace_refusals(void **state)
{
	static const char *const good[] = { "sched:sched_switch" };
	static const char *const bad[] = { "nosuchsys:nosuchevent" };
	struct fx *f = *state;
	struct tsync_session_reply r;
	char *words[] = { "-e", "sched:sched_switch" };
	struct tsync_msg m;

	need_tracefs();
	start(f);
	session_req(f, &r);
	trace_start(f, good, 1, NULL, 1, f->cfg.max_buffer_kb + 1);
	expect_error(f, TSYNC_ERR_LIMIT, "--max-buffer-kb");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "nosuchclock");
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	m.trace_start.nargs = 2;
	m.trace_start.args = words;
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_BAD_REQUEST, "nosuchclock");
	trace_start(f, bad, 1, NULL, 1, 0);
	expect_error(f, TSYNC_ERR_NO_EVENT, "nosuchsys");
	assert_false(instance_left(r.session_id));
	bye(f);
}

/* Event-spec amplification: a TRACE_START whose specs expand to more
 * events than the agent allows, or whose filters add up to too much, is
 * refused (LIMIT, with a reason) before the kernel sees any of it;
 * repeated specs count once. */
static void test_trace_amplify(void **state)
{
	static const char *const star[] = { "*" };
	static const char *const one[] = { "sched:sched_switch" };
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_msg m;
	char *filters[40], longf[240];

	need_tracefs();
	start(f);
	session_req(f, &r);
	/* "*" alone matches every event of every system: 40 of them with
	 * distinct filters would be 40 x all events */
	for (int i = 0; i < 40; i++)
		assert_true(asprintf(&filters[i], "common_pid != %d", i) > 0);
	trace_start(f, star, 1, filters, 40, 0);
	expect_error(f, TSYNC_ERR_LIMIT, "expands to more than");
	for (int i = 0; i < 40; i++)
		free(filters[i]);
	/* one "*" with a 239-byte filter: its copies add up */
	memset(longf, ' ', sizeof(longf) - 1);
	memcpy(longf, "common_pid != 1", 15);
	longf[sizeof(longf) - 1] = '\0';
	for (int i = 0; i < 40; i++)
		filters[i] = longf;
	trace_start(f, star, 1, filters, 1, 0);
	expect_error(f, TSYNC_ERR_LIMIT, "filters add up");
	assert_false(instance_left(r.session_id));
	/* the same spec as often as the words allow is one selection */
	trace_start(f, one, 1, NULL, TSYNC_MAX_ARGS / 2, 0);
	expect(f, TSYNC_MSG_TRACE_STARTED, &m);
	bye(f);
	assert_false(instance_left(r.session_id));
}

/* The trace buffer budget (--max-trace-mb) holds across sessions: a
 * second session that would go over it is refused (LIMIT, naming the
 * option), and gets its buffers once the first session gave them back. */
static void test_trace_budget(void **state)
{
	static const char *const names[] = { "sched:sched_switch" };
	struct fx *f = *state, g = { 0 };
	struct tsync_session_reply r;
	uint32_t kb = 512, n = (uint32_t)f->ctx.ncpus;
	struct tsync_msg m;
	int sv[2];

	need_tracefs();
	agent_budget_free(f->ctx.budget);
	f->ctx.budget = agent_budget_new(kb * n * 3 / 2);	/* room for 1.5 */
	start(f);
	session_req(f, &r);
	trace_start(f, names, 1, NULL, 1, kb);
	expect(f, TSYNC_MSG_TRACE_STARTED, &m);

	/* a second session on the same agent */
	g.cfg = f->cfg;
	g.ctx = f->ctx;
	g.ctx.cfg = &g.cfg;
	g.peer = f->peer;
	g.dctx = f->dctx;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	g.afd = sv[0];
	g.hfd = sv[1];
	start(&g);
	session_req(&g, &r);
	trace_start(&g, names, 1, NULL, 1, kb);
	expect_error(&g, TSYNC_ERR_LIMIT, "--max-trace-mb");
	bye(f);		/* gives its buffers back */
	trace_start(&g, names, 1, NULL, 1, kb);
	expect(&g, TSYNC_MSG_TRACE_STARTED, &m);
	bye(&g);
	close(g.hfd);
}

/* Returns true if the kernel has tracer @name in the top instance only
 * (blk, on most kernels): a recording with it needs the top instance. */
static bool tracer_top_only(const char *name)
{
	char *top = tracefs_instance_file_read(NULL, "available_tracers", NULL);
	struct tsync_instance *ti;
	char *inst = NULL;
	bool ret;

	if (!tsync_instance_create("tsync-tsess", &ti)) {
		inst = tracefs_instance_file_read(tsync_instance_tracefs(ti),
						  "available_tracers", NULL);
		tsync_instance_destroy(ti);
	}
	ret = top && inst && strstr(top, name) && !strstr(inst, name);
	free(top);
	free(inst);
	return ret;
}

/* A TRACE_START whose instance cannot be made (the top instance it needs
 * is in use: BUSY) gives its buffers back to the budget: the next
 * TRACE_START, which the budget has room for once, is served. */
static void test_trace_budget_after_busy(void **state)
{
	static char *words[] = { "-p", "blk", "-e", "sched:sched_switch" };
	struct fx *f = *state;
	struct tsync_session_reply r;
	struct tsync_instance *top;
	struct tsync_msg m;

	need_tracefs();
	if (!tracer_top_only("blk")) {
		printf("skipped: no tracer of the top instance only\n");
		skip();
	}
	agent_budget_free(f->ctx.budget);
	f->ctx.budget = agent_budget_new((uint64_t)1408 /* default KiB */ *
					 (uint64_t)f->ctx.ncpus);	/* room for one */
	assert_int_equal(tsync_instance_create_top(true, &top, NULL, 0), 0);	/* held: BUSY */
	start(f);
	session_req(f, &r);
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	m.trace_start.nargs = sizeof(words) / sizeof(words[0]);
	m.trace_start.args = words;
	host_send(f, &m);
	expect_error(f, TSYNC_ERR_BUSY, "top tracefs instance");
	assert_int_equal(tsync_instance_destroy(top), 0);
	trace_start(f, NULL, 0, NULL, 0, 0);
	expect(f, TSYNC_MSG_TRACE_STARTED, &m);
	bye(f);
	assert_false(instance_left(r.session_id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_setup_bye),
		T(test_second_session_req),
		T(test_before_session_req),
		T(test_unexpected_types),
		T(test_host_error),
		T(test_malformed),
		T(test_too_long),
		T(test_idle_timeout),
		T(test_stall_mid_message),
		T(test_max_sessions),
		T(test_round),
		T(test_round_bad_clock),
		T(test_without_tracefs),
		T(test_round_limits),
		T(test_round_bad_probe),
		T(test_round_unexpected),
		T(test_round_bye),
		T(test_round_host_error),
		T(test_round_timeout),
		T(test_round_deadline),
		T(test_busy_spin_bound),
		T(test_trace),
		T(test_trace_refusals),
		T(test_trace_amplify),
		T(test_trace_budget),
		T(test_trace_budget_after_busy),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);	/* a probe sent after the agent closed */
	tsync_log_init("test_session", TSYNC_LOG_WARN, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
