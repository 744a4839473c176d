/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest of `tsync-host record` that runs a stock `trace-cmd agent`
 * (AGENT tcmd:...): what host/guest/guest.c needs from trace-cmd's protocol,
 * behind one small object. host/guest/guest.c keeps everything the two kinds of
 * guests share (samples, receivers checking pages, the guest's file).
 *
 * The guest's record options go over as trace-cmd's host sends them: "-C
 * CLOCK" first, then "--file-version 6" (host/peer/tcmd_meta.h reads v6), and
 * "-d -k --no-filter", which make trace-cmd record as tsync always does
 * (no function tracer switched on by itself, the tracer kept, its own
 * threads not filtered out), then the guest's own option words
 * (tsync_recopt_instance_argv(): trace-cmd record's instance options,
 * which its agent parses as `trace-cmd record` would).
 */
#ifndef TSYNC_HOST_TCMD_GUEST_H
#define TSYNC_HOST_TCMD_GUEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/net/endpoint.h"
#include "proto/proto.h"

struct tcmd_guest;
struct tracemeta;

struct tcmd_guest_opts {
	const char *clock;
	unsigned int source;		/* enum tsync_stamp_source */
	bool quickack;
	int connect_timeout_ms, io_timeout_ms;
	uint64_t host_trace_id;
	int argc;			/* the guest's option words */
	char *const *argv;
};

/* Connects, requests the recording, connects time sync. Returns 0 and
 * @out, or -errno with a reason in @err. */
int tcmd_guest_open(const struct tsync_endpoint *ep, const struct tcmd_guest_opts *o,
		    struct tcmd_guest **out, char *err, size_t errlen);
uint32_t tcmd_guest_ncpus(const struct tcmd_guest *t);
uint32_t tcmd_guest_page_size(const struct tcmd_guest *t);
uint64_t tcmd_guest_trace_id(const struct tcmd_guest *t);
/*
 * One PTP sample of guest CPU @cpu (host/peer/tcmd_ptp.h), holding @lock (may
 * be NULL) around it. Returns 0 with the guest time @ts and host - guest
 * @offset, -ERANGE for a sample trace-cmd would drop, or -errno when the
 * time-sync connection broke, with a reason in @err.
 */
int tcmd_guest_sample(struct tcmd_guest *t, uint32_t cpu, pthread_mutex_t *locks,
		      int64_t *ts, int64_t *offset, char *err, size_t errlen);
/* Reads the agent's metadata into @out (host/peer/tcmd_meta.h); 0 or -errno. */
int tcmd_guest_meta(struct tcmd_guest *t, struct tracemeta **out, char *err, size_t errlen);
/* Connects CPU @cpu's stream; 0 and @fd, or -errno. */
int tcmd_guest_stream(struct tcmd_guest *t, uint32_t cpu, int *fd, char *err, size_t errlen);
/* Stops the recording: CLOSE, then STOP on time sync. 0 or -errno. */
int tcmd_guest_stop(struct tcmd_guest *t, char *err, size_t errlen);
/* Waits for the agent's CLOSE_RESP (or its orderly close). 0 or -errno. */
int tcmd_guest_wait_closed(struct tcmd_guest *t, char *err, size_t errlen);
/* Closes everything (NULL is fine). */
void tcmd_guest_free(struct tcmd_guest *t);

#endif
