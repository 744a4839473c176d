// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's connection to one agent: every exchange of the protocol on
 * the host side. Hello (the same code for the control and the data
 * connections), authentication, session setup, sync rounds, trace start
 * and stop, stream hellos and the metadata transfer, each with a
 * deadline; callers (host/guest/guest.c, host/cmd/sync_cmd.c) never see a message.
 *
 * The sync round's host side is in host/peer/client_round.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "common/wire/auth.h"
#include "common/base/errbuf.h"
#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "common/tracemeta/tracemeta.h"
#include "host/peer/cancel.h"
#include "host/peer/client.h"
#include "host/peer/client_priv.h"

/* Accessors; see client.h. */
const struct tsync_session_reply *client_session(const struct tsync_client *c)
{
	return &c->session;
}

/* The sync method the agent took; see client.h. */
int client_method(const struct tsync_client *c, uint8_t *method)
{
	if (!c->method_said)
		return -ENOENT;
	*method = c->method;
	return 0;
}

unsigned int client_version(const struct tsync_client *c)
{
	return c->dctx.version;
}

const char *client_peer(const struct tsync_client *c)
{
	return c->peer.name;
}

/* Sends @m on @fd; on failure says which message in @err. */
static int send_msg(const struct tsync_client *c, int fd, const struct tsync_msg *m,
		    char *err, size_t errlen)
{
	int ret = tsync_msg_send(fd, m, client_io_deadline(c));

	if (ret)
		tsync_set_err(err, errlen, "%s: sending %s: %s", c->peer.name,
			      tsync_msg_name(m->type), strerror(-ret));
	return ret;
}

/* Receives a message of @type on @fd by @deadline into @m; on failure the
 * reason in @err names the agent. */
static int recv_msg(const struct tsync_client *c, int fd, uint8_t type, struct tsync_msg *m,
		    int64_t deadline, char *err, size_t errlen)
{
	char why[256];
	int ret = tsync_msg_recv_expect(fd, type, m, &c->dctx, deadline, why, sizeof(why));

	if (ret)
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
	return ret;
}

/* Checks the agent's answer to our nonce @hnonce in @r and sends ours to
 * its nonce. Returns 0, or -EACCES / -errno with the reason in @err. */
static int client_auth(struct tsync_client *c, const struct tsync_key *key,
		       const uint8_t *hnonce, const struct tsync_hello_reply *r,
		       char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	if (!(r->caps & TSYNC_CAP_AUTH_HMAC)) {
		tsync_set_err(err, errlen, "%s: the agent does not authenticate itself (it has no "
			      "--key-file) but we were given a key: refusing it", c->peer.name);
		return -EACCES;
	}
	if (!tsync_auth_check(key, TSYNC_AUTH_AGENT, hnonce, r->nonce, r->mac)) {
		tsync_set_err(err, errlen, "%s: authentication failed: the agent's key differs "
			      "from --key-file", c->peer.name);
		return -EACCES;
	}
	tsync_msg_init(&m, TSYNC_MSG_AUTH);
	ret = tsync_auth_mac(key, TSYNC_AUTH_HOST, hnonce, r->nonce, m.auth.mac);
	if (ret) {
		tsync_set_err(err, errlen, "%s: AUTH: %s", c->peer.name, strerror(-ret));
		return ret;
	}
	return send_msg(c, c->fd, &m, err, errlen);
}

/*
 * The first answer on a control connection failed with @ret: what answers
 * is silent or speaks another protocol (a wrong port, or a trace-cmd
 * agent). Rewrites @err to say so and what to check.
 */
static void not_an_agent(const struct tsync_client *c, int ret, char *err, size_t errlen)
{
	if (ret == -ETIMEDOUT)
		tsync_set_err(err, errlen, "%s: connected, but no answer to HELLO within %d ms: "
			      "is it a tsync-agent (not another program), and not stopped?",
			      c->peer.name, c->opts.io_timeout_ms);
	else if (ret == TSYNC_PERR_BAD_MAGIC)
		tsync_set_err(err, errlen, "%s: not a tsync-agent: it answered HELLO with bytes "
			      "of another protocol: check the port (tsync-agent's default is %d)",
			      c->peer.name, TSYNC_DEFAULT_PORT);
	else if (ret == -ECONNRESET || ret == -EPIPE)
		/* a tsync-agent that refuses says why before it closes; trace-cmd's
		 * agent resets the connection on a HELLO it cannot parse */
		tsync_set_err(err, errlen, "%s: not a tsync-agent, it seems: it closed the "
			      "connection at HELLO without a word (a trace-cmd agent does): "
			      "check the port (tsync-agent's default is %d)", c->peer.name,
			      TSYNC_DEFAULT_PORT);
}

/*
 * Says HELLO on @fd (a control connection when @data is NULL, else the
 * data connection of CPU *@data) and checks the HELLO_REPLY, which is
 * returned in @reply. The one hello of both kinds of connection.
 */
static int say_hello(struct tsync_client *c, int fd, const uint32_t *data,
		     const uint8_t *nonce, struct tsync_hello_reply *reply,
		     char *err, size_t errlen)
{
	struct tsync_hello h;
	struct tsync_msg m;
	char why[256];
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_HELLO);
	m.hello.ver_min = TSYNC_PROTO_VERSION_MIN;
	m.hello.ver_max = TSYNC_PROTO_VERSION_MAX;
	m.hello.kind = data ? TSYNC_CONN_DATA : TSYNC_CONN_CONTROL;
	m.hello.caps = TSYNC_CAP_TRACE | (nonce ? TSYNC_CAP_AUTH_HMAC : 0);
	if (nonce)
		memcpy(m.hello.nonce, nonce, TSYNC_NONCE_LEN);
	if (data) {
		m.hello.session_id = c->session.session_id;
		m.hello.cpu = *data;
		memcpy(m.hello.secret, c->session.secret, TSYNC_SECRET_LEN);
	} else {
		m.hello.caps |= TSYNC_CAP_SYNC_METHOD;
		m.hello.methods = TSYNC_METHOD_BIT(TSYNC_METHOD_PROBES) | c->opts.methods;
	}
	h = m.hello;
	ret = send_msg(c, fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, fd, TSYNC_MSG_HELLO_REPLY, &m, client_io_deadline(c), err, errlen);
	if (ret == TSYNC_PERR_PEER_ERROR && m.type == TSYNC_MSG_ERROR &&
	    m.error.code == TSYNC_ERR_VERSION) {
		/* version skew: the agent's reason speaks from its side */
		tsync_set_err(err, errlen, "%s: the agent and this tsync-host (protocol "
			      "versions %u..%u) share no protocol version (the agent says: %s); "
			      "fix: install the same tsync version on host and guest",
			      c->peer.name, TSYNC_PROTO_VERSION_MIN, TSYNC_PROTO_VERSION_MAX,
			      m.error.reason);
		return TSYNC_PERR_NO_COMMON_VERSION;
	}
	if (ret && !data)
		not_an_agent(c, ret, err, errlen);
	if (ret)
		return ret;
	*reply = m.hello_reply;
	ret = tsync_proto_check_choice(TSYNC_PROTO_VERSION_MIN, TSYNC_PROTO_VERSION_MAX,
				       reply, why, sizeof(why));
	if (!ret && !data)
		ret = tsync_proto_check_method(&h, reply, &c->method, why, sizeof(why));
	if (!ret && !data)
		c->method_said = reply->caps & TSYNC_CAP_SYNC_METHOD;
	if (ret) {
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
		return ret;
	}
	/* from now on the control connection refuses other versions */
	if (!data)
		c->dctx.version = reply->version;
	return 0;
}

/* SESSION_REQ / SESSION_REPLY: fills c->session and checks its CPU count. */
static int open_session(struct tsync_client *c, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	m.session_req.trace_id = c->opts.host_trace_id;
	snprintf(m.session_req.name, sizeof(m.session_req.name), "%s",
		 c->opts.host_name ? c->opts.host_name : "host");
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_SESSION_REPLY, &m, client_io_deadline(c), err, errlen);
	if (ret)
		return ret;
	c->session = m.session_reply;
	tsync_msg_free(&m);
	if (!c->session.ncpus || c->session.ncpus > TSYNC_MAX_CPUS) {
		tsync_set_err(err, errlen, "%s: agent reports %u CPUs", c->peer.name,
			      c->session.ncpus);
		return -EPROTO;
	}
	c->dctx.ncpus = c->session.ncpus;
	log_debug("%s: session %llx, %u CPUs, clock %s", c->peer.name,
		  (unsigned long long)c->session.session_id, c->session.ncpus,
		  c->session.clock);
	return 0;
}

/* Hello (and authentication with @key) on the control connection. */
static int control_hello(struct tsync_client *c, const struct tsync_key *key,
			 char *err, size_t errlen)
{
	uint8_t hnonce[TSYNC_NONCE_LEN] = { 0 };
	struct tsync_hello_reply r;
	int ret;

	if (key) {
		ret = tsync_auth_nonce(hnonce);
		if (ret) {
			tsync_set_err(err, errlen, "nonce: %s", strerror(-ret));
			return ret;
		}
	}
	ret = say_hello(c, c->fd, NULL, key ? hnonce : NULL, &r, err, errlen);
	if (!ret && key)
		ret = client_auth(c, key, hnonce, &r, err, errlen);
	return ret;
}

/* Connects, says hello, sets up the session; see client.h. */
int client_open(const struct tsync_endpoint *ep, const struct client_opts *o,
		struct tsync_client **out, char *err, size_t errlen)
{
	struct tsync_client *c = calloc(1, sizeof(*c));
	struct tsync_key *key = NULL;
	int ret;

	if (!c)
		return -ENOMEM;
	c->opts = *o;
	c->ep = *ep;
	if (!c->opts.connect)
		c->opts.connect = tsync_connect;
	if (c->opts.meta_timeout_ms <= 0)
		c->opts.meta_timeout_ms = CLIENT_META_DEADLINE_MS;
	if (!c->opts.meta_max_chunks)
		c->opts.meta_max_chunks = CLIENT_META_MAX_CHUNKS;
	c->next_round = 1;
	c->dctx.max_payload = TSYNC_MSG_MAX;
	c->fd = -1;
	if (o->key_file) {
		ret = tsync_key_load(o->key_file, &key, err, errlen);
		if (ret)
			goto fail;
	}
	c->fd = c->opts.connect(ep, o->connect_timeout_ms, &c->peer, err, errlen);
	if (c->fd < 0) {
		ret = c->fd;
		goto fail;
	}
	ret = host_cancel_add(o->cancel, c->fd);
	if (ret) {
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, strerror(-ret));
		close(c->fd);
		c->fd = -1;
		goto fail;
	}
	ret = control_hello(c, key, err, errlen);
	if (!ret)
		ret = open_session(c, err, errlen);
	if (ret)
		goto fail;
	tsync_key_free(key);
	*out = c;
	return 0;
fail:
	tsync_key_free(key);
	if (c->fd >= 0) {
		host_cancel_remove(o->cancel, c->fd);
		close(c->fd);
	}
	free(c);
	return ret;
}

/* Starts tracing on the agent; see client.h. */
int client_trace_start(struct tsync_client *c, const struct client_trace_opts *o,
		       uint32_t *nstreams, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "%s", o->clock);
	if (o->nargs) {
		m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
		m.trace_start.nargs = o->nargs;
		m.trace_start.args = (char **)o->args;
	}
	ret = send_msg(c, c->fd, &m, err, errlen);
	/* Creating the instance and enabling events takes the agent a while. */
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_TRACE_STARTED, &m,
			       tsync_deadline_ms(c->opts.io_timeout_ms + 10000), err, errlen);
	if (!ret)
		*nstreams = m.trace_started.ncpus;
	return ret;
}

/* Opens the data connection of @cpu; see client.h. */
int client_stream_open(struct tsync_client *c, uint32_t cpu, int *fd,
		       char *err, size_t errlen)
{
	struct tsync_hello_reply r;
	char why[256];
	int sock, ret;

	sock = c->opts.connect(&c->ep, c->opts.io_timeout_ms, NULL, why, sizeof(why));
	if (sock < 0) {
		tsync_set_err(err, errlen, "%s: data connection for CPU %u: %s", c->peer.name,
			      cpu, why);
		return sock;
	}
	ret = host_cancel_add(c->opts.cancel, sock);
	if (ret) {
		snprintf(why, sizeof(why), "%s", strerror(-ret));
		close(sock);
		sock = -1;
	} else {
		ret = say_hello(c, sock, &cpu, NULL, &r, why, sizeof(why));
	}
	if (ret) {
		tsync_set_err(err, errlen, "data connection for CPU %u: %s", cpu, why);
		if (sock >= 0)
			client_stream_close(c, sock);
		return ret;
	}
	*fd = sock;
	return 0;
}

/* Closes a stream socket; see client.h. */
void client_stream_close(struct tsync_client *c, int fd)
{
	if (c)
		host_cancel_remove(c->opts.cancel, fd);
	close(fd);
}

/* Stops tracing; see client.h. */
int client_trace_stop(struct tsync_client *c, int timeout_ms,
		      struct tsync_trace_stopped *st, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOP);
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_TRACE_STOPPED, &m, tsync_deadline_ms(timeout_ms),
			       err, errlen);
	if (!ret)
		*st = m.trace_stopped;	/* the caller owns m's array now */
	return ret;
}

/*
 * Receives the META_CHUNKs up to META_END into @tm, all by @deadline and
 * within the CLIENT_META_* limits: a lying agent can send chunks of kinds
 * we skip, or empty ones, without end.
 */
static int meta_receive(struct tsync_client *c, struct tracemeta *tm, int64_t deadline,
			char *err, size_t errlen)
{
	uint64_t bytes = 0;
	uint32_t chunks = 0;
	struct tsync_msg m;
	char why[256];
	int ret;

	for (;;) {
		int64_t io = client_io_deadline(c) + 10000 * NSEC_PER_MSEC;

		ret = tsync_msg_recv(c->fd, &m, &c->dctx, io < deadline ? io : deadline,
				     why, sizeof(why));
		if (ret) {
			if (ret == -ETIMEDOUT && tsync_now_ns() >= deadline)
				tsync_set_err(err, errlen, "%s: metadata not complete after %d ms: "
					      "giving up", c->peer.name, c->opts.meta_timeout_ms);
			else
				tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
			return ret;
		}
		if (m.type == TSYNC_MSG_META_END)
			return 0;
		if (m.type != TSYNC_MSG_META_CHUNK) {
			ret = tsync_msg_expect(&m, TSYNC_MSG_META_CHUNK, why, sizeof(why));
			tsync_msg_free(&m);
			tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
			return ret ? ret : -EPROTO;
		}
		bytes += m.meta_chunk.len;
		if (++chunks > c->opts.meta_max_chunks || bytes > CLIENT_META_MAX_BYTES) {
			tsync_msg_free(&m);
			tsync_set_err(err, errlen, "%s: metadata over the limit of %u chunks or "
				      "%u MiB: refusing it", c->peer.name, c->opts.meta_max_chunks,
				      CLIENT_META_MAX_BYTES >> 20);
			return -E2BIG;
		}
		ret = tracemeta_add_part(tm, m.meta_chunk.kind, m.meta_chunk.system,
					 m.meta_chunk.data, m.meta_chunk.len, m.meta_chunk.more);
		if (ret)
			tsync_set_err(err, errlen, "%s: bad metadata (%s part): %s", c->peer.name,
				      tsync_meta_kind_name(m.meta_chunk.kind), strerror(-ret));
		tsync_msg_free(&m);
		if (ret)
			return ret;
	}
}

/* Fetches the guest's metadata; see client.h. */
int client_fetch_meta(struct tsync_client *c, struct tracemeta **out,
		      char *err, size_t errlen)
{
	struct tracemeta *tm = tracemeta_new();
	struct tsync_msg m;
	int ret;

	if (!tm)
		return -ENOMEM;
	tsync_msg_init(&m, TSYNC_MSG_META_REQ);
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = meta_receive(c, tm, tsync_deadline_ms(c->opts.meta_timeout_ms), err, errlen);
	if (!ret) {
		ret = tracemeta_finish(tm, c->session.page_size);
		if (ret)
			tsync_set_err(err, errlen, "%s: incomplete metadata: %s", c->peer.name,
				      strerror(-ret));
	}
	if (ret) {
		tracemeta_free(tm);
		return ret;
	}
	*out = tm;
	return 0;
}

/* Shuts the connection down so that every call fails at once. */
void client_abort(struct tsync_client *c)
{
	if (c)
		shutdown(c->fd, SHUT_RDWR);
}

/* Says goodbye and frees @c. */
void client_close(struct tsync_client *c)
{
	struct tsync_msg m;

	if (!c)
		return;
	tsync_msg_init(&m, TSYNC_MSG_BYE);
	tsync_msg_send(c->fd, &m, tsync_deadline_ms(500));
	tsync_stamp_cache_close(&c->stamps);
	host_cancel_remove(c->opts.cancel, c->fd);
	close(c->fd);
	free(c);
}
