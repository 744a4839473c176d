// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Control sessions on the agent: session setup, then a loop of requests
 * (sync rounds, tracing control, metadata) until BYE, an error, the idle
 * timeout, or shutdown. Everything the session created (tracefs instances)
 * is removed on every way out.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracefs.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include "agent/record.h"
#include "agent/session.h"
#include "common/log.h"
#include "common/msgio.h"
#include "common/stamp.h"
#include "common/timeutil.h"

/* Sends @m with the I/O deadline. */
int agent_session_send(struct agent_session *s, const struct tsync_msg *m)
{
	return tsync_msg_send(s->fd, m,
			      tsync_deadline_ms(agent_config(s->agent)->io_timeout_ms));
}

/* Sends an ERROR message built from @fmt. */
int agent_session_error(struct agent_session *s, uint32_t code,
			const char *fmt, ...)
{
	char reason[TSYNC_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return tsync_msg_send_error(s->fd, code,
				    tsync_deadline_ms(agent_config(s->agent)->io_timeout_ms),
				    "%s", reason);
}

/* Reads the top instance's trace_clock ("local [global] ...") into @buf;
 * returns 0 or -errno. */
static int read_trace_clocks(char *buf, size_t len)
{
	char *txt = tracefs_instance_file_read(NULL, "trace_clock", NULL);

	if (!txt)
		return -errno ? -errno : -ENOENT;
	snprintf(buf, len, "%s", txt);
	free(txt);
	return 0;
}

/* Answers SESSION_REQ: CPUs, page size, clocks, ids, the secret. */
static int session_setup(struct agent_session *s, const struct tsync_session_req *req)
{
	struct tsync_msg m;
	struct tsync_session_reply *r = &m.session_reply;
	struct utsname un;
	char clocks[512];
	int ret;

	s->host_trace_id = req->trace_id;
	snprintf(s->host_name, sizeof(s->host_name), "%s", req->name);
	if (getrandom(s->secret, sizeof(s->secret), 0) != sizeof(s->secret) ||
	    getrandom(&s->trace_id, sizeof(s->trace_id), 0) != sizeof(s->trace_id))
		return -EIO;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REPLY);
	r->ncpus = (uint32_t)agent_ncpus(s->agent);
	r->page_size = (uint32_t)getpagesize();
	r->trace_id = s->trace_id;
	r->caps = TSYNC_CAP_TRACE;
	r->session_id = s->id;
	memcpy(r->secret, s->secret, sizeof(r->secret));
	if (uname(&un) == 0)
		snprintf(r->name, sizeof(r->name), "%s", un.nodename);
	ret = read_trace_clocks(clocks, sizeof(clocks));
	if (ret == 0) {
		/* "local global [mono] ..." */
		for (char *tok = strtok(clocks, " \n"); tok && r->nclocks < TSYNC_MAX_CLOCKS;
		     tok = strtok(NULL, " \n")) {
			size_t n = strlen(tok);

			if (tok[0] == '[' && tok[n - 1] == ']') {
				tok[n - 1] = '\0';
				tok++;
				snprintf(r->clock, sizeof(r->clock), "%s", tok);
			}
			snprintf(r->clocks[r->nclocks++], TSYNC_CLOCK_NAME_MAX, "%s", tok);
		}
	}
	return agent_session_send(s, &m);
}

/* Frees what the session holds: recording state, stamp instance. */
static void session_cleanup(struct agent_session *s)
{
	if (s->trace)
		agent_trace_destroy(s);
	tsync_stamp_cache_close(&s->stamps);
}

/* Serves a control connection; see agent.h. */
void agent_serve_control(struct agent *a, int fd, const struct tsync_peer *peer,
			 uint16_t version)
{
	const struct agent_cfg *cfg = agent_config(a);
	struct agent_session s = {
		.agent = a,
		.fd = fd,
		.peer = peer,
	};
	const char *outcome = "closed by host";
	struct tsync_msg m;
	char err[256];
	int rounds = 0, ret;

	(void)version;
	s.dctx.ncpus = (uint32_t)agent_ncpus(a);
	s.dctx.max_probes = cfg->max_probes;
	s.dctx.max_payload = cfg->max_msg_kb * 1024;

	ret = agent_session_register(a, &s, &s.id);
	if (ret) {
		log_warn("%s: session refused: %s", peer->name,
			 ret == -EBUSY ? "too many sessions (--max-sessions)" : strerror(-ret));
		agent_session_error(&s, TSYNC_ERR_BUSY, "too many sessions");
		return;
	}

	for (;;) {
		ret = tsync_msg_recv_idle(fd, &m, &s.dctx,
					  tsync_deadline_ms(cfg->idle_timeout_ms),
					  cfg->io_timeout_ms, err, sizeof(err));
		if (ret) {
			if (ret == -EPIPE)
				outcome = "host disconnected";
			else {
				log_warn("%s: %s", peer->name, err);
				outcome = "error";
				if (tsync_perr_is_proto(ret))
					agent_session_error(&s, TSYNC_ERR_PROTOCOL, "%s", err);
			}
			break;
		}
		switch (m.type) {
		case TSYNC_MSG_SESSION_REQ:
			/* Once: data threads read the secret without a lock. */
			if (s.set_up) {
				log_warn("%s: second SESSION_REQ refused", peer->name);
				ret = agent_session_error(&s, TSYNC_ERR_UNEXPECTED,
							  "session already set up");
				break;
			}
			ret = session_setup(&s, &m.session_req);
			s.set_up = true;
			break;
		case TSYNC_MSG_SYNC_START:
			ret = agent_sync_round(&s, &m);
			rounds++;
			break;
		case TSYNC_MSG_SYNC_RESULT:
			ret = agent_record_round(&s, &m.sync_result);
			break;
		case TSYNC_MSG_TRACE_START:
			ret = agent_trace_start(&s, &m.trace_start);
			break;
		case TSYNC_MSG_TRACE_STOP:
			ret = agent_trace_stop(&s);
			break;
		case TSYNC_MSG_META_REQ:
			ret = agent_trace_send_meta(&s);
			break;
		case TSYNC_MSG_BYE:
			outcome = "done";
			tsync_msg_free(&m);
			goto out;
		case TSYNC_MSG_ERROR:
			log_warn("%s: host error %s: %s", peer->name,
				 tsync_err_name(m.error.code), m.error.reason);
			outcome = "host error";
			tsync_msg_free(&m);
			goto out;
		default:
			log_warn("%s: unexpected %s in a control session", peer->name,
				 tsync_msg_name(m.type));
			agent_session_error(&s, TSYNC_ERR_UNEXPECTED, "unexpected %s",
					    tsync_msg_name(m.type));
			ret = -EPROTO;
			break;
		}
		tsync_msg_free(&m);
		if (ret) {
			outcome = "error";
			break;
		}
	}
out:
	session_cleanup(&s);
	agent_session_unregister(a, &s);
	agent_trace_free(&s);	/* no data connection can reach it now */
	log_info("%s: session %llx (%s) ended: %s, %d sync round(s)", peer->name,
		 (unsigned long long)s.id, s.host_name[0] ? s.host_name : "?",
		 outcome, rounds);
}
