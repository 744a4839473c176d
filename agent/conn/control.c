// SPDX-License-Identifier: GPL-2.0-or-later
/* Sending on a session's control connection; see control.h. */
#include <stdarg.h>
#include <stdio.h>

#include "agent/conn/control.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"

/* Sends @m with the I/O deadline. */
int agent_session_send(struct agent_session *s, const struct tsync_msg *m)
{
	return tsync_msg_send(s->fd, m,
			      tsync_deadline_ms(agent_session_cfg(s)->io_timeout_ms));
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
				    tsync_deadline_ms(agent_session_cfg(s)->io_timeout_ms),
				    "%s", reason);
}
