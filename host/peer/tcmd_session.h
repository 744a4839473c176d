/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A session with a stock `trace-cmd agent` (its "v3" agent protocol), the
 * host side, as trace-cmd's `record -A` drives it:
 *
 *   1. connect to the agent; TRACE_REQ with the guest's record argv and
 *      the offer of time sync (kvm and PTP when the host can serve kvm,
 *      else PTP); TRACE_RESP with the guest's CPU count,
 *      page size, trace id, the time-sync port and one port per CPU;
 *   2. connect to the time-sync port (host/peer/tcmd_ptp.h runs the samples);
 *   3. the agent streams its trace.dat metadata as SEND_DATA chunks up to
 *      FIN_DATA (tcmd_session_meta());
 *   4. one connection per CPU port: raw ring-buffer pages, no framing;
 *   5. stop: CLOSE; the last time-sync samples and STOP; then CLOSE_RESP.
 *      trace-cmd 3.1.6's agent over TCP closes the connection without
 *      sending CLOSE_RESP (seen here): an orderly close counts as the end.
 *
 * Every reply is checked (CPU count 1..TCMD_MAX_CPUS, page size a power of
 * two, ports, protocol "ptp" or the "kvm" offered), every wait has the session's timeout, and
 * the agent's messages are decoded by proto/tcmd.h.
 */
#ifndef TSYNC_HOST_TCMD_SESSION_H
#define TSYNC_HOST_TCMD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/net/endpoint.h"
#include "common/wire/tcmd_io.h"

/* trace-cmd's agent listens on vsock port 823 by default. */
#define TCMD_DEFAULT_PORT TCMD_VSOCK_PORT
/* Most guest CPUs accepted from an agent. */
#define TCMD_MAX_CPUS 1024u

struct tcmd_session_opts {
	int connect_timeout_ms;
	int io_timeout_ms;
	bool quickack;			/* common/wire/tcmd_io.h */
	uint64_t host_trace_id;
	bool offer_kvm;			/* offer kvm before ptp (peer_opts.kvm) */
	bool keep_tsync_agent;		/* go on with a tsync-agent (see below) */
	int argc;			/* the guest's record options */
	const char *const *argv;
};

struct tcmd_session {
	struct tsync_endpoint ep;
	struct tcmd_conn ctl;		/* the agent connection */
	struct tcmd_conn ts;		/* time sync; fd -1 when not offered */
	uint32_t ncpus;
	uint32_t page_size;
	uint64_t guest_trace_id;
	uint32_t tsync_port;
	uint32_t *ports;		/* [ncpus] */
	int timeout_ms;
	uint32_t streams;		/* CPU ports connected so far */
	bool ended;			/* CLOSE_RESP or the agent's close seen */
	bool kvm;			/* the agent chose kvm time sync, not ptp */
	bool tsync_agent;		/* TRACE_RESP carried TCMD_TSYNC_TAG */
};

/*
 * Steps 1 and 2: connects to the agent at @ep, requests the recording and
 * connects time sync. Returns 0 and a session in @out, or -errno with a
 * reason in @err (-EPROTONOSUPPORT when the agent offers no PTP;
 * -EPROTOTYPE when its TRACE_RESP says it is a tsync-agent, unless
 * @o->keep_tsync_agent: the session is then ended, for the caller to
 * speak tsync's own protocol to it).
 */
int tcmd_session_open(const struct tsync_endpoint *ep, const struct tcmd_session_opts *o,
		      struct tcmd_session **out, char *err, size_t errlen);
/*
 * Step 3: reads the metadata chunks up to FIN_DATA, at most @max bytes.
 * Returns 0 with a malloc'd @buf of @len bytes, or -errno (-EFBIG past
 * @max) with a reason in @err.
 */
int tcmd_session_meta(struct tcmd_session *s, size_t max, uint8_t **buf, size_t *len,
		      char *err, size_t errlen);
/* Step 4: connects to CPU @cpu's port; 0 and the socket in @fd, or -errno. */
int tcmd_session_stream(struct tcmd_session *s, uint32_t cpu, int *fd, char *err,
			size_t errlen);
/* Step 5, first half: sends CLOSE. Returns 0 or -errno. */
int tcmd_session_close(struct tcmd_session *s, char *err, size_t errlen);
/* Step 5, second half: waits for CLOSE_RESP or an orderly close, skipping
 * nothing else. Returns 0 or -errno. */
int tcmd_session_wait_closed(struct tcmd_session *s, char *err, size_t errlen);
/*
 * Closes every connection and frees @s (NULL is fine). A session that did
 * not end cleanly is ended as far as it can be first: CLOSE and STOP are
 * sent, and each CPU port not yet connected is connected and closed at
 * once. trace-cmd's agent serves one session at a time and its recorders
 * wait in accept() for their connection with no deadline: without this,
 * one failed session (bad metadata, say) leaves it busy for good.
 */
void tcmd_session_free(struct tcmd_session *s);

#endif
