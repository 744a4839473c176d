// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The first exchange on every agent connection, and who may connect.
 *
 *   host                           agent
 *   HELLO (kind, versions, caps,   ---> checked; a data hello also finds
 *          [nonce], [data ids])          its session and claims its CPU
 *                                  <--- HELLO_REPLY ([nonce, MAC]) or ERROR
 *   [AUTH (MAC of both nonces)]    ---> checked (with --key-file)
 *   then a control session (session.c) or a data stream (data.c)
 *
 * Until a connection has authenticated - its HELLO arrived, and on an
 * agent with --key-file its AUTH passed; a data stream's session secret
 * matched - it may be evicted to make room (conntab.c), and the whole
 * exchange must be over within --auth-timeout of the connection's start.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/conn/conntab.h"
#include "agent/tsync/data.h"
#include "agent/hello.h"
#include "agent/conn/ratelimit.h"
#include "agent/tsync/session.h"
#include "agent/tcmd/tcmd_session.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "proto/proto.h"

/* One connection's handshake. */
struct hello {
	const struct agent_ctx *ctx;
	struct agent_conn *conn;
	int fd;
	const struct tsync_peer *peer;
	struct tsync_hello h;		/* the host's HELLO */
	bool auth;			/* the host must prove it holds the key */
	uint8_t anonce[TSYNC_NONCE_LEN];	/* our challenge */
	uint8_t version;		/* negotiated */
	int64_t deadline;		/* authenticated by then (--auth-timeout) */
	int64_t idle;			/* the first message by then (--idle-timeout) */
};

/* Checks the allow lists; see hello.h. */
int agent_check_peer(const struct agent_ctx *ctx, int fd, const struct tsync_peer *peer)
{
	char why[128];

	if (tsync_acl_allows(ctx->cfg->acl, (const struct sockaddr *)&peer->addr,
			     peer->addrlen, why, sizeof(why)))
		return 0;
	agent_rl_warn(ctx->rl, AGENT_RL_ACL, "%s: refused: %s", peer->name, why);
	/* Said before the host's HELLO arrives, on the accept loop: a fresh
	 * socket's send buffer takes it at once, and a short deadline bounds
	 * the rest. */
	tsync_msg_send_error(fd, TSYNC_ERR_PERMISSION, tsync_deadline_ms(50),
			     "%s refused: %s of the agent: add this host to it and restart "
			     "the agent", peer->name, why);
	return -EACCES;
}

/* Sends an ERROR with @code and @reason, best effort. */
static void send_error(const struct hello *hs, uint32_t code, const char *reason)
{
	tsync_msg_send_error(hs->fd, code, tsync_deadline_ms(hs->ctx->cfg->io_timeout_ms),
			     "%s", reason);
}

/* Waits for the HELLO (bounded by the idle timeout) into @hs->h. Returns
 * 0, or -errno / TSYNC_PERR_* after logging (and telling the peer). */
static int recv_hello(struct hello *hs)
{
	const struct agent_cfg *cfg = hs->ctx->cfg;
	struct tsync_decode_ctx dctx = { .max_payload = 4096 };
	struct tsync_msg m;
	char err[256];
	int64_t idle = hs->idle;
	int ret;

	ret = tsync_msg_recv_idle(hs->fd, &m, &dctx, idle < hs->deadline ? idle : hs->deadline,
				  cfg->io_timeout_ms, err, sizeof(err));
	if (ret) {
		if (ret == -EPIPE)
			log_info("%s: closed before hello", hs->peer->name);
		else if (ret == -ETIMEDOUT && hs->deadline < idle && !strncmp(err, "idle", 4))
			agent_rl_warn(hs->ctx->rl, AGENT_RL_SILENT, "%s: refused: not "
				      "authenticated within %d ms (--auth-timeout)",
				      hs->peer->name, cfg->auth_timeout_ms);
		else
			agent_rl_warn(hs->ctx->rl, !strncmp(err, "idle", 4) ?
				      AGENT_RL_SILENT : AGENT_RL_HELLO, "%s: refused: %s",
				      hs->peer->name, err);
		if (tsync_perr_is_proto(ret))
			send_error(hs, TSYNC_ERR_PROTOCOL, err);
		else if (ret == -ETIMEDOUT)
			send_error(hs, TSYNC_ERR_TIMEOUT, err);
		return ret;
	}
	if (m.type != TSYNC_MSG_HELLO) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_HELLO, "%s: refused: first message is "
			      "%s, not HELLO", hs->peer->name, tsync_msg_name(m.type));
		send_error(hs, TSYNC_ERR_UNEXPECTED, "expected HELLO");
		tsync_msg_free(&m);
		return -EPROTO;
	}
	hs->h = m.hello;
	return 0;
}

/*
 * Answers the host's sync method offer in @r: the best one this agent can
 * take. kvm needs nothing of the agent but a guest TSC, which KVM's
 * offsets describe (the host reads them; the probes stay for when they
 * go); probes every agent takes.
 */
static void take_method(const struct hello *hs, struct tsync_hello_reply *r)
{
	uint32_t can = TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES);

	if (tsync_stamp_caps() & TSYNC_CAP_STAMP_TSC)
		can |= TSYNC_METHOD_BIT(TSYNC_METHOD_KVM);
	r->caps |= TSYNC_CAP_SYNC_METHOD;
	r->method = tsync_method_pick(hs->h.methods, can);
	log_info("%s: sync method %s (offered 0x%x)", hs->peer->name,
		 tsync_method_name(r->method), hs->h.methods);
}

/* Builds the HELLO_REPLY for @hs->h in @reply: version, caps, and our
 * answer and challenge when authenticating. Returns 0, or -errno after
 * logging and telling the peer. */
static int build_reply(struct hello *hs, struct tsync_msg *reply)
{
	const struct agent_cfg *cfg = hs->ctx->cfg;

	/* With a key, control connections must prove they hold it; a data
	 * stream may (if it offers to), else its session secret vouches for
	 * it (common/wire/auth.h). */
	hs->auth = cfg->key && (hs->h.kind == TSYNC_CONN_CONTROL ||
				(hs->h.caps & TSYNC_CAP_AUTH_HMAC));
	if (hs->auth && !(hs->h.caps & TSYNC_CAP_AUTH_HMAC)) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_AUTH, "%s: refused: no authentication "
			      "offered (this agent has --key-file)", hs->peer->name);
		send_error(hs, TSYNC_ERR_AUTH,
			   "this agent requires authentication: give tsync-host --key-file");
		return -EACCES;
	}
	tsync_msg_init(reply, TSYNC_MSG_HELLO_REPLY);
	if (hs->auth) {
		if (tsync_auth_nonce(hs->anonce) ||
		    tsync_auth_mac(cfg->key, TSYNC_AUTH_AGENT, hs->h.nonce, hs->anonce,
				   reply->hello_reply.mac)) {
			log_err("%s: cannot compute the authentication answer", hs->peer->name);
			send_error(hs, TSYNC_ERR_INTERNAL, "authentication unavailable");
			return -EIO;
		}
		memcpy(reply->hello_reply.nonce, hs->anonce, sizeof(hs->anonce));
	}
	if (tsync_proto_negotiate(TSYNC_PROTO_VERSION_MIN, TSYNC_PROTO_VERSION_MAX,
				  hs->h.ver_min, hs->h.ver_max, &hs->version, reply)) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_HELLO, "%s: refused: %s", hs->peer->name,
			      reply->error.reason);
		tsync_msg_send(hs->fd, reply, tsync_deadline_ms(cfg->io_timeout_ms));
		return -EPROTO;
	}
	reply->hello_reply.version = hs->version;
	reply->hello_reply.ver_min = TSYNC_PROTO_VERSION_MIN;
	reply->hello_reply.ver_max = TSYNC_PROTO_VERSION_MAX;
	reply->hello_reply.caps = TSYNC_CAP_TRACE | (hs->auth ? TSYNC_CAP_AUTH_HMAC : 0) |
				  tsync_stamp_caps();
	if (hs->h.kind == TSYNC_CONN_CONTROL && (hs->h.caps & TSYNC_CAP_SYNC_METHOD))
		take_method(hs, &reply->hello_reply);
	return 0;
}

/* Receives the host's AUTH and checks it against our nonce. Returns 0 if
 * the host holds the key, else -EACCES (refusal logged and sent). */
static int check_auth(struct hello *hs)
{
	const struct agent_cfg *cfg = hs->ctx->cfg;
	struct tsync_decode_ctx dctx = { .max_payload = TSYNC_SMALL_MAX };
	int64_t io = tsync_deadline_ms(cfg->io_timeout_ms);
	struct tsync_msg m;
	char err[256];
	bool ok;
	int ret;

	ret = tsync_msg_recv_expect(hs->fd, TSYNC_MSG_AUTH, &m, &dctx,
				    io < hs->deadline ? io : hs->deadline, err, sizeof(err));
	if (ret == -ETIMEDOUT && hs->deadline <= io) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_SILENT, "%s: refused: not authenticated "
			      "within %d ms (--auth-timeout)", hs->peer->name,
			      cfg->auth_timeout_ms);
		send_error(hs, TSYNC_ERR_AUTH, "no AUTH in time");
		return -EACCES;
	}
	if (ret) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_AUTH, "%s: refused: no authentication "
			      "answer: %s", hs->peer->name, err);
		if (ret != -EPIPE)
			send_error(hs, TSYNC_ERR_AUTH, "expected AUTH");
		return -EACCES;
	}
	ok = tsync_auth_check(cfg->key, TSYNC_AUTH_HOST, hs->h.nonce, hs->anonce,
			      m.auth.mac);
	tsync_msg_free(&m);
	if (!ok) {
		agent_rl_warn(hs->ctx->rl, AGENT_RL_AUTH, "%s: refused: authentication "
			      "failed (the host's key differs)", hs->peer->name);
		send_error(hs, TSYNC_ERR_AUTH, "authentication failed: wrong key");
		return -EACCES;
	}
	log_debug("%s: authenticated", hs->peer->name);
	return 0;
}

/* Returns true if the connection's first byte (waited for like a HELLO)
 * starts a trace-cmd message; false for tsync's, or when none came (then
 * recv_hello() reports it). */
static bool first_byte_is_tcmd(const struct hello *hs)
{
	unsigned char b;

	if (tsync_wait_readable(hs->fd, hs->idle < hs->deadline ? hs->idle : hs->deadline) <= 0)
		return false;
	if (recv(hs->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
		return false;
	return agent_tcmd_first_byte(b);
}

/* Serves one connection; see hello.h. */
void agent_handle_connection(const struct agent_ctx *ctx, struct agent_conn *c)
{
	struct hello hs = {
		.ctx = ctx,
		.conn = c,
		.fd = agent_conn_fd(c),
		.peer = agent_conn_peer(c),
		.deadline = tsync_deadline_ms(ctx->cfg->auth_timeout_ms),
		.idle = tsync_deadline_ms(ctx->cfg->idle_timeout_ms),
	};
	struct agent_session *ds = NULL;	/* a data stream's session */
	struct tsync_msg reply;
	int ret;

	/* One port serves both protocols: trace-cmd's messages start with a
	 * size below 8192 (a 0 byte), ours with the magic. */
	if (first_byte_is_tcmd(&hs)) {
		agent_tcmd_serve(ctx, c);
		return;
	}
	if (recv_hello(&hs))
		return;
	if (build_reply(&hs, &reply))
		return;
	/* A data stream is checked and its CPU claimed before the reply: a
	 * refusal is an ERROR instead of HELLO_REPLY (never bytes inside the
	 * stream), and HELLO_REPLY means the stream is established. */
	if (hs.h.kind == TSYNC_CONN_DATA) {
		ds = agent_data_claim(ctx, hs.fd, hs.peer, &hs.h);
		if (!ds)
			return;
	}
	ret = tsync_msg_send(hs.fd, &reply, tsync_deadline_ms(ctx->cfg->io_timeout_ms));
	if (ret)
		log_info("%s: hello reply: %s", hs.peer->name, strerror(-ret));
	else if (hs.auth)
		ret = check_auth(&hs);
	if (ret) {
		/* whatever was claimed for the connection goes back */
		if (ds)
			agent_data_release(ctx, ds, hs.h.cpu);
		return;
	}
	agent_conntab_authenticated(ctx->conns, c);
	if (hs.h.kind == TSYNC_CONN_CONTROL)
		agent_serve_control(ctx, hs.fd, hs.peer, hs.version);
	else if (ds)
		agent_data_serve(ctx, hs.fd, hs.peer, ds, hs.h.cpu);
	else
		agent_rl_warn(ctx->rl, AGENT_RL_HELLO, "%s: refused: unknown connection "
			      "kind %u", hs.peer->name, hs.h.kind);
}
