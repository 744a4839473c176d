// SPDX-License-Identifier: GPL-2.0-or-later
/* The first exchange on every agent connection, and who may connect. */
#include <errno.h>
#include <string.h>

#include "agent/hello.h"
#include "common/log.h"
#include "common/msgio.h"
#include "common/timeutil.h"
#include "proto/proto.h"

/* Checks the allow lists; see hello.h. */
int agent_check_peer(struct agent *a, const struct tsync_peer *peer)
{
	char why[128];

	if (tsync_acl_allows(agent_config(a)->acl, (const struct sockaddr *)&peer->addr,
			     peer->addrlen, why, sizeof(why)))
		return 0;
	log_warn("%s: refused: %s", peer->name, why);
	return -EACCES;
}

/* Sends an ERROR with @code and @reason, best effort. */
static void send_error(struct agent *a, int fd, uint32_t code, const char *reason)
{
	struct tsync_msg m;

	tsync_msg_set_error(&m, code, "%s", reason);
	tsync_msg_send(fd, &m, tsync_deadline_ms(agent_config(a)->io_timeout_ms));
}

/* Receives the host's AUTH and checks it against our nonce @anonce.
 * Returns 0 if the host holds the key, else -EACCES (refusal logged and
 * sent). */
static int check_auth(struct agent *a, int fd, const struct tsync_peer *peer,
		      const uint8_t *hnonce, const uint8_t *anonce)
{
	const struct agent_cfg *cfg = agent_config(a);
	struct tsync_decode_ctx ctx = { .max_payload = TSYNC_SMALL_MAX };
	struct tsync_msg m;
	char err[256];
	bool ok;
	int ret;

	ret = tsync_msg_recv_expect(fd, TSYNC_MSG_AUTH, &m, &ctx,
				    tsync_deadline_ms(cfg->io_timeout_ms), err, sizeof(err));
	if (ret) {
		log_warn("%s: refused: no authentication answer: %s", peer->name, err);
		if (ret != -EPIPE)
			send_error(a, fd, TSYNC_ERR_AUTH, "expected AUTH");
		return -EACCES;
	}
	ok = tsync_auth_check(cfg->key, TSYNC_AUTH_HOST, hnonce, anonce, m.auth.mac);
	tsync_msg_free(&m);
	if (!ok) {
		log_warn("%s: refused: authentication failed (the host's key differs)",
			 peer->name);
		send_error(a, fd, TSYNC_ERR_AUTH, "authentication failed: wrong key");
		return -EACCES;
	}
	log_debug("%s: authenticated", peer->name);
	return 0;
}

/* Serves one connection; see hello.h. */
void agent_handle_connection(struct agent *a, int fd,
			     const struct tsync_peer *peer)
{
	const struct agent_cfg *cfg = agent_config(a);
	struct tsync_decode_ctx ctx = { .max_payload = 4096 };
	struct agent_session *ds = NULL;	/* a data stream's session */
	uint8_t anonce[TSYNC_NONCE_LEN];
	struct tsync_msg m, reply;
	uint8_t version;
	bool auth;
	char err[256];
	int ret;

	ret = tsync_msg_recv_idle(fd, &m, &ctx, tsync_deadline_ms(cfg->idle_timeout_ms),
				  cfg->io_timeout_ms, err, sizeof(err));
	if (ret) {
		if (ret == -EPIPE)
			log_info("%s: closed before hello", peer->name);
		else
			log_warn("%s: refused: %s", peer->name, err);
		if (tsync_perr_is_proto(ret))
			send_error(a, fd, TSYNC_ERR_PROTOCOL, err);
		return;
	}
	if (m.type != TSYNC_MSG_HELLO) {
		log_warn("%s: refused: first message is %s, not HELLO", peer->name,
			 tsync_msg_name(m.type));
		send_error(a, fd, TSYNC_ERR_UNEXPECTED, "expected HELLO");
		tsync_msg_free(&m);
		return;
	}
	agent_conn_established(a, fd);
	/* With a key, control connections must prove they hold it; a data
	 * stream may (if it offers to), else its session secret vouches for
	 * it (common/auth.h). */
	auth = cfg->key && (m.hello.kind == TSYNC_CONN_CONTROL ||
			    (m.hello.caps & TSYNC_CAP_AUTH_HMAC));
	if (auth && !(m.hello.caps & TSYNC_CAP_AUTH_HMAC)) {
		log_warn("%s: refused: no authentication offered (this agent has --key-file)",
			 peer->name);
		send_error(a, fd, TSYNC_ERR_AUTH,
			   "this agent requires authentication: give tsync-host --key-file");
		return;
	}
	tsync_msg_init(&reply, TSYNC_MSG_HELLO_REPLY);
	if (auth) {
		if (tsync_auth_nonce(anonce) ||
		    tsync_auth_mac(cfg->key, TSYNC_AUTH_AGENT, m.hello.nonce, anonce,
				   reply.hello_reply.mac)) {
			log_err("%s: cannot compute the authentication answer", peer->name);
			send_error(a, fd, TSYNC_ERR_INTERNAL, "authentication unavailable");
			return;
		}
		memcpy(reply.hello_reply.nonce, anonce, sizeof(anonce));
	}
	if (tsync_proto_negotiate(TSYNC_PROTO_VERSION_MIN, TSYNC_PROTO_VERSION_MAX,
				  m.hello.ver_min, m.hello.ver_max, &version, &reply)) {
		log_warn("%s: refused: %s", peer->name, reply.error.reason);
		tsync_msg_send(fd, &reply, tsync_deadline_ms(cfg->io_timeout_ms));
		return;
	}
	reply.hello_reply.version = version;
	reply.hello_reply.ver_min = TSYNC_PROTO_VERSION_MIN;
	reply.hello_reply.ver_max = TSYNC_PROTO_VERSION_MAX;
	reply.hello_reply.caps = TSYNC_CAP_TRACE | (auth ? TSYNC_CAP_AUTH_HMAC : 0);
	/* A data stream is checked and its CPU claimed before the reply: a
	 * refusal is an ERROR instead of HELLO_REPLY (never bytes inside the
	 * stream), and HELLO_REPLY means the stream is established. */
	if (m.hello.kind == TSYNC_CONN_DATA) {
		ds = agent_data_claim(a, fd, peer, m.hello.session_id, m.hello.cpu,
				      m.hello.secret);
		if (!ds)
			return;
	}
	ret = tsync_msg_send(fd, &reply, tsync_deadline_ms(cfg->io_timeout_ms));
	if (ret) {
		log_info("%s: hello reply: %s", peer->name, strerror(-ret));
		if (ds)
			agent_serve_data(a, fd, peer, ds, m.hello.cpu, false);
		return;
	}
	if (auth && check_auth(a, fd, peer, m.hello.nonce, anonce))
		return;
	if (m.hello.kind == TSYNC_CONN_CONTROL)
		agent_serve_control(a, fd, peer, version);
	else if (ds)
		agent_serve_data(a, fd, peer, ds, m.hello.cpu, true);
	else
		log_warn("%s: refused: unknown connection kind %u", peer->name, m.hello.kind);
}
