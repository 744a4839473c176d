// SPDX-License-Identifier: GPL-2.0-or-later
/* A data connection on the agent; see data.h. */
#include <stdarg.h>
#include <stdio.h>

#include "agent/conn/control.h"
#include "agent/tsync/data.h"
#include "agent/conn/ratelimit.h"
#include "agent/tsync/trace.h"
#include "agent/conn/registry.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"

/* Compares two secrets in time independent of where they differ. */
static bool secret_equal(const uint8_t *a, const uint8_t *b)
{
	volatile uint8_t diff = 0;

	for (size_t i = 0; i < TSYNC_SECRET_LEN; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

/* Refuses a data connection: logs @why and sends ERROR @code. */
static void __attribute__((format(printf, 5, 6)))
refuse_data(const struct agent_ctx *ctx, int fd, const struct tsync_peer *peer,
	    uint32_t code, const char *fmt, ...)
{
	char why[TSYNC_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	agent_rl_warn(ctx->rl, AGENT_RL_DATA, "%s: data stream refused: %s", peer->name, why);
	tsync_msg_send_error(fd, code, tsync_deadline_ms(ctx->cfg->io_timeout_ms),
			     "%s", why);
}

/* Refuses a data hello whose session @sid is unknown (@known false) or
 * whose secret is wrong: the log says which, the peer cannot tell (ids
 * are sequential; the difference would say which sessions exist). */
static void refuse_secret(const struct agent_ctx *ctx, int fd, const struct tsync_peer *peer,
			  unsigned long long sid, bool known)
{
	agent_rl_warn(ctx->rl, AGENT_RL_DATA, "%s: data stream refused: %s %llx", peer->name,
		      known ? "wrong secret for session" : "unknown session", sid);
	tsync_msg_send_error(fd, TSYNC_ERR_NO_SESSION,
			     tsync_deadline_ms(ctx->cfg->io_timeout_ms),
			     "no session with this id and secret");
}

/* Checks a data hello and claims its CPU; see data.h. */
struct agent_session *agent_data_claim(const struct agent_ctx *ctx, int fd,
				       const struct tsync_peer *peer,
				       const struct tsync_hello *h)
{
	static const uint8_t zero[TSYNC_SECRET_LEN];
	unsigned long long sid = (unsigned long long)h->session_id;
	char why[TSYNC_REASON_MAX];
	struct agent_session *s;
	int code;

	s = agent_registry_get(ctx->reg, h->session_id);
	if (!s) {
		refuse_secret(ctx, fd, peer, sid, false);
		return NULL;
	}
	/* a session not set up yet has an all-zero secret: never a match */
	if (!secret_equal(h->secret, s->secret) || secret_equal(h->secret, zero)) {
		refuse_secret(ctx, fd, peer, sid, true);
		goto fail;
	}
	code = agent_trace_claim(s, h->cpu, why, sizeof(why));
	if (code) {
		refuse_data(ctx, fd, peer, (uint32_t)code, "session %llx: %s", sid, why);
		goto fail;
	}
	return s;
fail:
	agent_registry_put(ctx->reg, s);
	return NULL;
}

/* Streams a claimed CPU, then lets go of the session; see data.h. */
void agent_data_serve(const struct agent_ctx *ctx, int fd,
		      const struct tsync_peer *peer, struct agent_session *s,
		      uint32_t cpu)
{
	agent_trace_stream(s, fd, peer, cpu);
	agent_registry_put(ctx->reg, s);
}

/* Lets go of a claim that never streamed; see data.h. */
void agent_data_release(const struct agent_ctx *ctx, struct agent_session *s,
			uint32_t cpu)
{
	agent_trace_unclaim(s, cpu);
	agent_registry_put(ctx->reg, s);
}
