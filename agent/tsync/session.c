// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A control session on the agent.
 *
 * Theory of operation
 * -------------------
 * hello.c hands over a control connection once HELLO (and AUTH, with a
 * key) passed. The session registers itself (registry.c: an id, counted
 * against --max-sessions; over the limit it answers ERROR BUSY and ends),
 * then serves one request at a time until it ends:
 *
 *   state      request        answer                          next state
 *   NEW        SESSION_REQ    SESSION_REPLY (ids, secret)     SET_UP
 *   NEW        a request      ERROR UNEXPECTED (goes on)      NEW
 *   SET_UP     SESSION_REQ    ERROR UNEXPECTED (goes on)      SET_UP
 *   SET_UP     SYNC_START     a round (round.c)               SET_UP
 *   SET_UP     SYNC_RESULT    (no answer) round record        SET_UP
 *   SET_UP     CLOCK_REQ      CLOCK_STATE (the time daemon's  SET_UP
 *                             state, common/clock/clock.h)
 *   SET_UP     TRACE_START / TRACE_STOP / META_REQ            SET_UP
 *                             trace.c (the recording's states)
 *   any        BYE            (none)                          end
 *   any        ERROR          (none, logged)                  end
 *   any        other type     ERROR UNEXPECTED                end
 *
 * Every wait is bounded: between requests by the idle timeout, inside a
 * message by the I/O timeout (common/wire/msgio.h). A malformed message is
 * answered with ERROR PROTOCOL and ends the session; a refused request
 * (unknown clock, no trace, ...) is answered with ERROR and the session
 * goes on. An agent without tracefs (tracefs_check.h) refuses that way
 * what needs it: TRACE_START and rounds with marker stamps. On every way
 * out the session removes what it created (stamp and recording
 * instances), unregisters (waiting for its data connections), and logs
 * one line with how it ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include "common/clock/clock.h"
#include "agent/conn/control.h"
#include "agent/conn/ratelimit.h"
#include "agent/tsync/trace.h"
#include "agent/conn/registry.h"
#include "agent/tsync/round.h"
#include "agent/tsync/session.h"
#include "agent/conn/tracefs_check.h"
#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "common/base/trace_clock.h"

/* What the loop does after a request. */
enum next { NEXT_GO_ON, NEXT_END };

/* Per-session counters for the closing log line. */
struct outcome {
	const char *why;
	int rounds;
};

/* Fills @r's clock list from the kernel's trace clocks; the selected
 * one is the current clock. Without tracefs: the clocks the agent can
 * stamp without it, the first one as the current. Returns 0 or -errno. */
static int list_clocks(const struct agent_ctx *ctx, struct tsync_session_reply *r)
{
	char clocks[TSYNC_MAX_CLOCKS][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n, sel = -1;

	_Static_assert(TSYNC_TRACE_CLOCK_NAME_MAX == TSYNC_CLOCK_NAME_MAX,
		       "clock names fit the wire");
	if (ctx->tracefs->usable) {
		n = tsync_instance_clocks(clocks, TSYNC_MAX_CLOCKS, &sel);
	} else {
		n = tsync_stamp_user_clocks(clocks, TSYNC_MAX_CLOCKS);
		sel = 0;
	}
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		memcpy(r->clocks[i], clocks[i], TSYNC_CLOCK_NAME_MAX);
	r->nclocks = n > 0 ? (uint32_t)n : 0;
	if (sel >= 0 && n > 0)
		memcpy(r->clock, clocks[sel], TSYNC_CLOCK_NAME_MAX);
	return 0;
}

/* Answers SESSION_REQ: CPUs, page size, clocks, ids, the secret. */
static int session_setup(struct agent_session *s, const struct tsync_session_req *req)
{
	struct tsync_msg m;
	struct tsync_session_reply *r = &m.session_reply;
	struct utsname un;
	int ret;

	s->host_trace_id = req->trace_id;
	snprintf(s->host_name, sizeof(s->host_name), "%s", req->name);
	if (getrandom(s->secret, sizeof(s->secret), 0) != sizeof(s->secret) ||
	    getrandom(&s->trace_id, sizeof(s->trace_id), 0) != sizeof(s->trace_id))
		return -EIO;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REPLY);
	r->ncpus = (uint32_t)s->ctx->ncpus;
	r->page_size = (uint32_t)getpagesize();
	r->trace_id = s->trace_id;
	r->caps = (s->ctx->tracefs->usable ? TSYNC_CAP_TRACE : 0) |
		  tsync_stamp_caps() | TSYNC_CAP_CLOCK_STATE;
	r->session_id = s->id;
	memcpy(r->secret, s->secret, sizeof(r->secret));
	if (uname(&un) == 0)
		snprintf(r->name, sizeof(r->name), "%s", un.nodename);
	ret = list_clocks(s->ctx, r);
	if (ret) {
		/* without its clocks the agent can neither sync nor trace: say
		 * why rather than fail to encode an empty clock name */
		log_err("%s: cannot read the trace clocks from tracefs: %s", s->peer->name,
			strerror(-ret));
		if (ret == -EACCES || ret == -EPERM)
			agent_session_error(s, TSYNC_ERR_PERMISSION,
					    "the agent cannot read the trace clocks from tracefs: %s "
					    "(it needs root, or access to /sys/kernel/tracing)",
					    strerror(-ret));
		else
			agent_session_error(s, TSYNC_ERR_INTERNAL,
					    "the agent cannot read the trace clocks from tracefs: %s",
					    strerror(-ret));
		return ret;
	}
	return agent_session_send(s, &m);
}

/* Answers SESSION_REQ, once: data threads read the secret without a
 * lock. */
static int on_session_req(struct agent_session *s, const struct tsync_msg *m)
{
	int ret;

	if (s->set_up) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: second SESSION_REQ refused",
			      s->peer->name);
		return agent_session_error(s, TSYNC_ERR_UNEXPECTED, "session already set up");
	}
	ret = session_setup(s, &m->session_req);
	s->set_up = true;
	return ret;
}

/*
 * Without tracefs (tracefs_check.h), refuses what needs it: TRACE_START
 * and rounds with marker stamps. Returns 1 when @m was refused (@ret set
 * to the result of sending the ERROR), else 0.
 */
static int refused_without_tracefs(struct agent_session *s, const struct tsync_msg *m,
				   int *ret)
{
	const struct agent_tracefs *t = s->ctx->tracefs;

	if (t->usable)
		return 0;
	if (m->type == TSYNC_MSG_TRACE_START) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: no tracefs", s->peer->name);
		*ret = agent_session_error(s, t->code, "recording needs tracefs: %s; fix: %s",
					   t->why, t->fix);
		return 1;
	}
	if (m->type == TSYNC_MSG_SYNC_START && tsync_stamp_needs_tracefs(m->sync_start.source)) {
		const char *src = tsync_stamp_source_name(m->sync_start.source);
		char others[64];

		tsync_stamp_user_sources_text(others, sizeof(others));
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused a round with %s stamps: no tracefs", s->peer->name, src);
		*ret = agent_session_error(s, t->code,
					   "sync with %s stamps (clock %s) needs tracefs: %s; "
					   "fix: %s. Without it the agent syncs the clocks %s "
					   "with %s stamps (e.g. -C mono)", src, m->sync_start.clock,
					   t->why, t->fix, t->clocks, others);
		return 1;
	}
	return 0;
}

/* Answers CLOCK_REQ: the time daemon's state and the asked clock against
 * CLOCK_REALTIME (common/clock/clock.h), read within --clock-timeout. */
static int on_clock_req(struct agent_session *s, const struct tsync_clock_req *req)
{
	const struct agent_cfg *c = s->ctx->cfg;
	struct agent_clock_cfg cc;
	struct tsync_msg m;

	agent_clock_cfg_init(&cc, c->clock_daemon, c->ptp4l_socket, c->chrony_socket,
			     c->clock_timeout_ms);
	tsync_msg_init(&m, TSYNC_MSG_CLOCK_STATE);
	agent_clock_state(&cc, req->clock, &m.clock_state);
	agent_record_clock(s, &m.clock_state);
	log_info("%s: clock %s: %s %s, offset %lld ns, bound %lld ns: %s", s->peer->name,
		 req->clock, tsync_clock_source_name(m.clock_state.source),
		 m.clock_state.synced ? "synchronized" : "not synchronized",
		 (long long)m.clock_state.offset_ns, (long long)m.clock_state.bound_ns,
		 m.clock_state.detail);
	return agent_session_send(s, &m);
}

/* Returns true for the requests that need a set-up session. */
static bool needs_setup(uint8_t type)
{
	return type == TSYNC_MSG_SYNC_START || type == TSYNC_MSG_SYNC_RESULT ||
	       type == TSYNC_MSG_TRACE_START || type == TSYNC_MSG_TRACE_STOP ||
	       type == TSYNC_MSG_META_REQ || type == TSYNC_MSG_CLOCK_REQ;
}

/*
 * Serves one request @m. Returns NEXT_GO_ON or NEXT_END with @o->why set;
 * a failed answer (-errno in @ret) ends the session too.
 */
static enum next dispatch(struct agent_session *s, const struct tsync_msg *m,
			  struct outcome *o)
{
	int ret;

	if (!s->set_up && needs_setup(m->type)) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: %s before SESSION_REQ refused",
			      s->peer->name, tsync_msg_name(m->type));
		ret = agent_session_error(s, TSYNC_ERR_UNEXPECTED, "%s before SESSION_REQ",
					  tsync_msg_name(m->type));
		if (ret)
			o->why = "error";
		return ret ? NEXT_END : NEXT_GO_ON;
	}
	if (refused_without_tracefs(s, m, &ret)) {
		if (ret)
			o->why = "error";
		return ret ? NEXT_END : NEXT_GO_ON;
	}
	switch (m->type) {
	case TSYNC_MSG_SESSION_REQ:
		ret = on_session_req(s, m);
		break;
	case TSYNC_MSG_SYNC_START:
		ret = agent_sync_round(s, m);
		o->rounds++;
		if (ret == AGENT_ROUND_HOST_ENDED) {
			o->why = "done inside a round";
			return NEXT_END;
		}
		break;
	case TSYNC_MSG_SYNC_RESULT:
		ret = agent_record_round(s, &m->sync_result);
		break;
	case TSYNC_MSG_TRACE_START:
		ret = agent_trace_start(s, &m->trace_start);
		break;
	case TSYNC_MSG_TRACE_STOP:
		ret = agent_trace_stop(s);
		break;
	case TSYNC_MSG_META_REQ:
		ret = agent_trace_send_meta(s);
		break;
	case TSYNC_MSG_CLOCK_REQ:
		ret = on_clock_req(s, &m->clock_req);
		break;
	case TSYNC_MSG_BYE:
		o->why = "done";
		return NEXT_END;
	case TSYNC_MSG_ERROR:
		log_warn("%s: host error %s: %s", s->peer->name,
			 tsync_err_name(m->error.code), m->error.reason);
		o->why = "host error";
		return NEXT_END;
	default:
		log_warn("%s: unexpected %s in a control session", s->peer->name,
			 tsync_msg_name(m->type));
		agent_session_error(s, TSYNC_ERR_UNEXPECTED, "unexpected %s",
				    tsync_msg_name(m->type));
		ret = -EPROTO;
		break;
	}
	if (ret) {
		o->why = "error";
		return NEXT_END;
	}
	return NEXT_GO_ON;
}

/* Receives one request into @m, bounded by the idle and I/O timeouts.
 * Returns 0, or -errno with @o->why set (and the peer told on a protocol
 * error). */
static int next_request(struct agent_session *s, struct tsync_msg *m,
			struct outcome *o)
{
	const struct agent_cfg *cfg = agent_session_cfg(s);
	char err[256];
	int ret;

	ret = tsync_msg_recv_idle(s->fd, m, &s->dctx,
				  tsync_deadline_ms(cfg->idle_timeout_ms),
				  cfg->io_timeout_ms, err, sizeof(err));
	if (ret == -EPIPE) {
		o->why = "host disconnected";
	} else if (ret) {
		log_warn("%s: %s", s->peer->name, err);
		o->why = "error";
		if (tsync_perr_is_proto(ret))
			agent_session_error(s, TSYNC_ERR_PROTOCOL, "%s", err);
		else if (ret == -ETIMEDOUT)
			agent_session_error(s, TSYNC_ERR_TIMEOUT, "%s", err);
	}
	return ret;
}

/* Serves a control connection; see session.h. */
void agent_serve_control(const struct agent_ctx *ctx, int fd,
			 const struct tsync_peer *peer, uint8_t version)
{
	struct agent_session s = {
		.ctx = ctx,
		.fd = fd,
		.peer = peer,
	};
	struct outcome o = { .why = "closed by host" };
	struct tsync_msg m;
	enum next next;
	int ret;

	/* from now on a message in another version is refused */
	s.dctx.version = version;
	s.dctx.ncpus = (uint32_t)ctx->ncpus;
	s.dctx.max_probes = ctx->cfg->max_probes;
	s.dctx.max_payload = ctx->cfg->max_msg_kb * 1024;

	ret = agent_registry_add(ctx->reg, &s, &s.id);
	if (ret) {
		agent_rl_warn(ctx->rl, AGENT_RL_SESSION, "%s: session refused: %s", peer->name,
			      ret == -EBUSY ? "too many sessions (--max-sessions)" :
			      strerror(-ret));
		agent_session_error(&s, TSYNC_ERR_BUSY, "too many sessions");
		return;
	}
	do {
		if (next_request(&s, &m, &o))
			break;
		next = dispatch(&s, &m, &o);
		tsync_msg_free(&m);
	} while (next == NEXT_GO_ON);

	if (s.rec)
		agent_trace_destroy(&s);
	tsync_stamp_cache_close(&s.stamps);
	agent_registry_remove(ctx->reg, &s);
	agent_trace_free(&s);	/* no data connection can reach it now */
	log_info("%s: session %llx (%s) ended: %s, %d sync round(s)", peer->name,
		 (unsigned long long)s.id, s.host_name[0] ? s.host_name : "?",
		 o.why, o.rounds);
}
