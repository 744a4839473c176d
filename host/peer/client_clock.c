// SPDX-License-Identifier: GPL-2.0-or-later
/* The host side of CLOCK_REQ: the agent's time daemon state (see client.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/base/errbuf.h"
#include "common/wire/msgio.h"
#include "host/peer/client_priv.h"

int client_clock_state(struct tsync_client *c, const char *clock, struct tsync_clock_state *out,
		       char *err, size_t errlen)
{
	struct tsync_msg m;
	char why[256];
	int ret;

	if (!(c->session.caps & TSYNC_CAP_CLOCK_STATE)) {
		tsync_set_err(err, errlen, "%s: the agent does not report its time daemon "
			      "(an older tsync-agent)", c->peer.name);
		return -EOPNOTSUPP;
	}
	tsync_msg_init(&m, TSYNC_MSG_CLOCK_REQ);
	snprintf(m.clock_req.clock, sizeof(m.clock_req.clock), "%s", clock);
	ret = tsync_msg_send(c->fd, &m, client_io_deadline(c));
	if (ret) {
		tsync_set_err(err, errlen, "%s: sending CLOCK_REQ: %s", c->peer.name,
			      strerror(-ret));
		return ret;
	}
	ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_CLOCK_STATE, &m, &c->dctx,
				    client_io_deadline(c), why, sizeof(why));
	if (ret) {
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
		return ret;
	}
	*out = m.clock_state;
	return 0;
}
