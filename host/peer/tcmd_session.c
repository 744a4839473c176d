// SPDX-License-Identifier: GPL-2.0-or-later
/* A session with a stock trace-cmd agent; see tcmd_session.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>

#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "host/peer/client.h"
#include "host/peer/tcmd_session.h"

/* Connects to port @port of the agent's machine; fd or -errno. */
static int connect_port(const struct tcmd_session *s, uint32_t port, int timeout_ms,
			char *err, size_t errlen)
{
	struct tsync_endpoint ep = s->ep;

	/* over vsock its listeners take the kernel's pick: any 32-bit port */
	if (!port || port == VMADDR_PORT_ANY ||
	    (!tsync_endpoint_vsock_ports(&ep) && port > 65535)) {
		snprintf(err, errlen, "the trace-cmd agent gave port %u", port);
		return -EPROTO;
	}
	ep.port = port <= 65535 ? (uint16_t)port : 0;
	ep.vsock_port32 = port > 65535 ? port : 0;
	return tsync_connect(&ep, timeout_ms, NULL, err, errlen);
}

/* Checks the TRACE_RESP @r and takes its values into @s; 0 or -errno. */
static int take_resp(struct tcmd_session *s, const struct tcmd_trace_resp *r, bool kvm,
		     char *err, size_t errlen)
{
	if (!r->cpus || r->cpus > TCMD_MAX_CPUS || r->page_size < 64 ||
	    r->page_size > (1u << 20) || (r->page_size & (r->page_size - 1))) {
		snprintf(err, errlen, "the trace-cmd agent answered %u CPUs and page size %u",
			 r->cpus, r->page_size);
		return -EPROTO;
	}
	if (r->flags & TCMD_FL_USE_FIFOS) {
		snprintf(err, errlen, "the trace-cmd agent wants FIFOs, which were not asked for");
		return -EPROTO;
	}
	if (strcmp(r->proto, TCMD_PROTO_PTP) && (!kvm || strcmp(r->proto, TCMD_PROTO_KVM))) {
		snprintf(err, errlen, "the trace-cmd agent chose time sync '%s' of the offered "
			 "%s" TCMD_PROTO_PTP, r->proto[0] ? r->proto : "(none)",
			 kvm ? TCMD_PROTO_KVM ", " : "");
		return -EPROTONOSUPPORT;
	}
	s->kvm = !strcmp(r->proto, TCMD_PROTO_KVM);
	s->tsync_agent = tcmd_resp_tagged(r);
	s->ncpus = r->cpus;
	s->page_size = r->page_size;
	s->guest_trace_id = r->trace_id;
	s->tsync_port = r->tsync_port;
	s->ports = calloc(r->cpus, sizeof(*s->ports));
	if (!s->ports) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return tcmd_resp_ports(r, s->ports, r->cpus) ? -EPROTO : 0;
}

/* TRACE_REQ, then TRACE_RESP into @s; 0 or -errno. */
static int request(struct tcmd_session *s, const struct tcmd_session_opts *o, char *err,
		   size_t errlen)
{
	/* trace-cmd's host lists its methods newest-registered first */
	static const char *const with_kvm[] = { TCMD_PROTO_KVM, TCMD_PROTO_PTP, NULL };
	static const char *const protos[] = { TCMD_PROTO_PTP, NULL };
	uint8_t *buf = malloc(TCMD_MSG_MAX);
	struct tcmd_msg m = { 0 };
	ssize_t n;
	int ret;

	if (!buf)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	n = tcmd_enc_trace_req(buf, TCMD_MSG_MAX, 0, o->host_trace_id, o->argc, o->argv,
			       o->offer_kvm ? with_kvm : protos);
	if (n == -ENOSPC) {
		snprintf(err, errlen, "the guest options do not fit one trace-cmd message");
		ret = -E2BIG;
		goto out;
	}
	ret = tcmd_conn_send(&s->ctl, buf, n, err, errlen);
	if (!ret)
		ret = tcmd_conn_recv(&s->ctl, &m, err, errlen);
	if (ret == -EPIPE || ret == -ECONNRESET)
		snprintf(err, errlen, "the trace-cmd agent closed the connection without an "
			 "answer: it serves one session at a time, and may be busy with another "
			 "(or still ending one)");
	if (ret)
		goto out;
	if (m.cmd != TCMD_TRACE_RESP) {
		snprintf(err, errlen, "the trace-cmd agent answered %s to the trace request%s",
			 tcmd_cmd_name(m.cmd), m.cmd == TCMD_NOT_SUPP ?
			 " (it refused the guest options; its own output says why)" : "");
		ret = -EPROTO;
		goto out;
	}
	ret = take_resp(s, &m.resp, o->offer_kvm, err, errlen);
out:
	free(buf);
	return ret;
}

/* Opens a session; see tcmd_session.h. */
int tcmd_session_open(const struct tsync_endpoint *ep, const struct tcmd_session_opts *o,
		      struct tcmd_session **out, char *err, size_t errlen)
{
	struct tcmd_session *s = calloc(1, sizeof(*s));
	int fd, ret;

	if (!s)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	s->ep = *ep;
	s->ctl.fd = s->ts.fd = -1;
	s->timeout_ms = o->io_timeout_ms;
	fd = tsync_connect(ep, o->connect_timeout_ms, NULL, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	ret = tcmd_conn_init(&s->ctl, fd, "the trace-cmd agent", o->quickack, o->io_timeout_ms);
	if (!ret)
		ret = request(s, o, err, errlen);
	if (!ret && s->tsync_agent && !o->keep_tsync_agent) {
		snprintf(err, errlen, "a tsync-agent answered in trace-cmd's protocol");
		ret = -EPROTOTYPE;
	}
	if (ret)
		goto fail;
	/* the agent blocks in accept() on this port until the host comes */
	fd = connect_port(s, s->tsync_port, o->connect_timeout_ms, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	ret = tcmd_conn_init(&s->ts, fd, "the trace-cmd agent", o->quickack, o->io_timeout_ms);
	if (ret) {
		snprintf(err, errlen, "TCP_QUICKACK: %s", strerror(-ret));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	tcmd_session_free(s);
	return ret;
}

/* Reads the metadata; see tcmd_session.h. */
int tcmd_session_meta(struct tcmd_session *s, size_t max, uint8_t **buf, size_t *len,
		      char *err, size_t errlen)
{
	uint8_t *b = NULL;
	size_t n = 0, cap = 0;
	struct tcmd_msg m = { 0 };
	int ret;

	cap = 1u << 20;
	b = malloc(cap);
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* the whole transfer by the deadline of tsync's own metadata path */
	tcmd_conn_set_deadline(&s->ctl, tsync_deadline_ms(CLIENT_META_DEADLINE_MS));
	for (;;) {
		ret = tcmd_conn_recv(&s->ctl, &m, err, errlen);
		if (ret)
			goto fail;
		if (m.cmd == TCMD_FIN_DATA)
			break;
		if (m.cmd != TCMD_SEND_DATA) {
			snprintf(err, errlen, "the trace-cmd agent sent %s within its metadata",
				 tcmd_cmd_name(m.cmd));
			ret = -EPROTO;
			goto fail;
		}
		if (!m.payload_len)
			continue;
		if (m.payload_len > max - n) {
			snprintf(err, errlen, "the trace-cmd agent's metadata is over %zu bytes", max);
			ret = -EFBIG;
			goto fail;
		}
		if (n + m.payload_len > cap) {
			size_t ncap = cap * 2;
			uint8_t *nb;

			while (ncap < n + m.payload_len)
				ncap *= 2;
			nb = realloc(b, ncap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto fail;
			}
			b = nb;
			cap = ncap;
		}
		memcpy(b + n, m.payload, m.payload_len);
		n += m.payload_len;
	}
	tcmd_conn_set_deadline(&s->ctl, 0);
	*buf = b;
	*len = n;
	return 0;
fail:
	tcmd_conn_set_deadline(&s->ctl, 0);
	free(b);
	return ret;
}

/* Connects a CPU stream; see tcmd_session.h. */
int tcmd_session_stream(struct tcmd_session *s, uint32_t cpu, int *fd, char *err,
			size_t errlen)
{
	int ret;

	if (cpu >= s->ncpus)
		return snprintf(err, errlen, "no CPU %u", cpu), -EINVAL;
	ret = connect_port(s, s->ports[cpu], s->timeout_ms, err, errlen);
	if (ret < 0)
		return ret;
	*fd = ret;
	if (cpu + 1 > s->streams)
		s->streams = cpu + 1;
	return 0;
}

/* Sends CLOSE; see tcmd_session.h. */
int tcmd_session_close(struct tcmd_session *s, char *err, size_t errlen)
{
	uint8_t buf[TCMD_HDR_LEN];

	return tcmd_conn_send(&s->ctl, buf, tcmd_enc_simple(buf, sizeof(buf), TCMD_CLOSE), err,
			 errlen);
}

/* Waits for CLOSE_RESP; see tcmd_session.h. */
int tcmd_session_wait_closed(struct tcmd_session *s, char *err, size_t errlen)
{
	struct tcmd_msg m = { 0 };
	int ret = tcmd_conn_recv(&s->ctl, &m, err, errlen);

	if (ret == -EPIPE) {
		s->ended = true;
		return 0;	/* 3.1.6 over TCP: closed without CLOSE_RESP */
	}
	if (ret)
		return ret;
	s->ended = m.cmd == TCMD_CLOSE_RESP;
	if (m.cmd != TCMD_CLOSE_RESP) {
		snprintf(err, errlen, "the trace-cmd agent sent %s instead of CLOSE_RESP",
			 tcmd_cmd_name(m.cmd));
		return -EPROTO;
	}
	return 0;
}

/* Ends a session that failed as far as it can; see tcmd_session_free(). */
static void abort_session(struct tcmd_session *s)
{
	uint8_t buf[64];
	char err[200];

	s->ctl.timeout_ms = s->ts.timeout_ms = 1000;
	if (s->ctl.fd >= 0)
		(void)tcmd_conn_send(&s->ctl, buf, tcmd_enc_simple(buf, sizeof(buf), TCMD_CLOSE), err,
				sizeof(err));
	if (s->ts.fd >= 0)
		(void)tcmd_conn_send(&s->ts, buf, tcmd_enc_tsync_stop(buf, sizeof(buf)), err,
				sizeof(err));
	for (uint32_t cpu = s->streams; cpu < s->ncpus; cpu++) {
		int fd = connect_port(s, s->ports[cpu], 1000, err, sizeof(err));

		if (fd >= 0)
			close(fd);
	}
}

/* Frees a session; see tcmd_session.h. */
void tcmd_session_free(struct tcmd_session *s)
{
	if (!s)
		return;
	if (!s->ended && s->ports)
		abort_session(s);
	tcmd_conn_close(&s->ts);
	tcmd_conn_close(&s->ctl);
	free(s->ports);
	free(s);
}
