/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the host's client (host/peer/client.h): the connection's state, shared
 * by client.c (hello, session, tracing, metadata) and client_round.c (the
 * sync round). Nothing else includes this.
 */
#ifndef TSYNC_HOST_CLIENT_PRIV_H
#define TSYNC_HOST_CLIENT_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "host/peer/client.h"

struct tsync_client {
	int fd;
	struct tsync_endpoint ep;	/* data connections go there too */
	struct tsync_peer peer;
	struct client_opts opts;
	struct tsync_session_reply session;
	struct tsync_decode_ctx dctx;
	uint32_t next_round;
	uint8_t method;		/* the sync method the agent took (HELLO_REPLY) */
	bool method_said;	/* it answered the offer (CAP_SYNC_METHOD) */
	bool rt_warned;		/* said once that probes run at normal priority */

	struct tsync_stamp_cache stamps;	/* host stamps, kept across rounds */
};

/* Returns the deadline of one message exchange. */
static inline int64_t client_io_deadline(const struct tsync_client *c)
{
	return tsync_deadline_ms(c->opts.io_timeout_ms);
}

#endif
