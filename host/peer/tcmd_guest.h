/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest that runs a stock `trace-cmd agent` (AGENT tcmd:...): what the
 * peer interface needs from trace-cmd's protocol, behind one small object
 * (host/peer/peer_tcmd.c puts it behind the ops). host/guest/guest.c keeps
 * everything all guests share (samples, receivers checking pages, the
 * guest's file).
 *
 * The guest's record options go over as trace-cmd's host sends them: "-C
 * CLOCK" first, then "--file-version 6" (host/peer/tcmd_meta.h reads v6), and
 * "-d -k --no-filter", which make trace-cmd record as tsync always does
 * (no function tracer switched on by itself, the tracer kept, its own
 * threads not filtered out), then the guest's own option words
 * (tsync_recopt_instance_argv(): trace-cmd record's instance options,
 * which its agent parses as `trace-cmd record` would). A session of
 * `sync` records nothing, as far as trace-cmd lets it: its agent syncs
 * only while it records, so the guest's words are "-p nop" (the nop
 * tracer, next to no data), and the data is read and dropped at the end.
 */
#ifndef TSYNC_HOST_TCMD_GUEST_H
#define TSYNC_HOST_TCMD_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/net/endpoint.h"
#include "host/peer/round.h"
#include "proto/proto.h"
#include "proto/tcmd.h"

struct tcmd_guest;
struct tracemeta;

struct tcmd_guest_opts {
	const char *clock;
	unsigned int source;		/* enum tsync_stamp_source */
	bool quickack;
	int connect_timeout_ms, io_timeout_ms;
	uint64_t host_trace_id;
	bool record;			/* false: `sync`, nothing recorded (see above) */
	bool kvm;			/* offer kvm time sync before PTP */
	bool keep_tsync_agent;		/* trace-cmd's protocol with a tsync-agent too */
	int argc;			/* the guest's option words (record) */
	char *const *argv;
};

/* Connects, requests the recording, connects time sync. Returns 0 and
 * @out, or -errno with a reason in @err (-EPROTOTYPE: the agent is a
 * tsync-agent, see tcmd_session_open()). */
int tcmd_guest_open(const struct tsync_endpoint *ep, const struct tcmd_guest_opts *o,
		    struct tcmd_guest **out, char *err, size_t errlen);
uint32_t tcmd_guest_ncpus(const struct tcmd_guest *t);
uint32_t tcmd_guest_page_size(const struct tcmd_guest *t);
uint64_t tcmd_guest_trace_id(const struct tcmd_guest *t);
/* Returns the agent's address for messages ("tcp:127.0.0.1:823"). */
const char *tcmd_guest_addr(const struct tcmd_guest *t);
/* Returns true if the agent chose trace-cmd's kvm time sync (offered with
 * tcmd_guest_opts.kvm); its samples are then the two calls below, and
 * tcmd_guest_round() fails. */
bool tcmd_guest_kvm(const struct tcmd_guest *t);
/*
 * kvm's exchange for guest CPU @cpu, as trace-cmd's host runs it: none
 * PROBE(cpu), then the agent's kvm REQUEST with its marker's timestamp
 * into *@ts; then tcmd_guest_kvm_answer() sends the RESPONSE @a (trace-cmd
 * echoes the request's ts in it). 0 or -errno with @err.
 */
int tcmd_guest_kvm_request(struct tcmd_guest *t, uint32_t cpu, int64_t *ts, char *err,
			   size_t errlen);
int tcmd_guest_kvm_answer(struct tcmd_guest *t, const struct tcmd_kvm_msg *a, char *err,
			  size_t errlen);
/*
 * One PTP sample of guest CPU @cpu (host/peer/tcmd_ptp.h) as a round of
 * @o (its clock and stamps are the session's): stamped on host CPU
 * o->host_cpu; if -1, over TCP on the one this guest CPU's first sample
 * chose: that sample tries the guest CPU's number and the next one
 * (round_host_cpu()) and keeps the one whose probes came in the faster
 * (host/peer/tcmd_place.h), a sample that ends before it could tell
 * leaving the choice to the next; with one host CPU, or over vsock, the
 * guest CPU's number (modulo the host's CPUs). It holds
 * the lock of o->cpu_locks (may be NULL) of the CPU it stamps on;
 * res->host_cpu is the one it ended on. The
 * agent estimates: @res holds the offset, the guest time and the probes
 * sent, its error bound and delay ROUND_UNKNOWN (host/peer/round.h).
 * Returns as peer_round() (host/peer/peer.h): a sample trace-cmd would
 * drop is res->status -ERANGE; a broken time-sync connection -errno.
 */
int tcmd_guest_round(struct tcmd_guest *t, uint32_t cpu, const struct round_opts *o,
		     struct round_result *res);
/* Reads the agent's metadata into @out (host/peer/tcmd_meta.h); 0 or -errno. */
int tcmd_guest_meta(struct tcmd_guest *t, struct tracemeta **out, char *err, size_t errlen);
/* Connects CPU @cpu's stream; 0 and @fd, or -errno. */
int tcmd_guest_stream(struct tcmd_guest *t, uint32_t cpu, int *fd, char *err, size_t errlen);
/* Stops the recording: CLOSE, then STOP on time sync. 0 or -errno. */
int tcmd_guest_stop(struct tcmd_guest *t, char *err, size_t errlen);
/* Waits for the agent's CLOSE_RESP (or its orderly close). 0 or -errno. */
int tcmd_guest_wait_closed(struct tcmd_guest *t, char *err, size_t errlen);
/*
 * Ends a `sync` session as trace-cmd's host does: the agent's metadata
 * read (and dropped), the CPU streams connected (the agent's recorders
 * wait for them), CLOSE, STOP, the streams read to their end, then
 * CLOSE_RESP. Returns 0 or -errno.
 */
int tcmd_guest_finish(struct tcmd_guest *t, char *err, size_t errlen);
/* Closes everything (NULL is fine). */
void tcmd_guest_free(struct tcmd_guest *t);

#endif
