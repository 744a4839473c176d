// SPDX-License-Identifier: GPL-2.0-or-later
/* Rate-limited warnings; see ratelimit.h. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/conn/ratelimit.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"

/* One kind's window: at most AGENT_RL_BURST lines from @start on. */
struct rl_window {
	int64_t start;
	int lines;
	unsigned long suppressed;	/* since the last line let through */
};

struct agent_ratelimit {
	pthread_mutex_t lock;
	struct rl_window w[AGENT_RL_KINDS];
};

/* Creates the limiters; see ratelimit.h. */
struct agent_ratelimit *agent_ratelimit_new(void)
{
	struct agent_ratelimit *rl = calloc(1, sizeof(*rl));

	if (rl)
		pthread_mutex_init(&rl->lock, NULL);
	return rl;
}

/* Frees @rl. */
void agent_ratelimit_free(struct agent_ratelimit *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

/* Returns true if a line of @kind may go out now; *@suppressed gets how
 * many were held back before it. */
static bool rl_allow(struct agent_ratelimit *rl, enum agent_rl_kind kind,
		     unsigned long *suppressed)
{
	struct rl_window *w = &rl->w[kind];
	int64_t now = tsync_now_ns();
	bool ok;

	pthread_mutex_lock(&rl->lock);
	if (now - w->start >= AGENT_RL_INTERVAL_MS * NSEC_PER_MSEC) {
		w->start = now;
		w->lines = 0;
	}
	ok = w->lines < AGENT_RL_BURST;
	if (ok) {
		w->lines++;
		*suppressed = w->suppressed;
		w->suppressed = 0;
	} else {
		w->suppressed++;
	}
	pthread_mutex_unlock(&rl->lock);
	return ok;
}

/* Logs a rate-limited warning; see ratelimit.h. */
void agent_rl_warn(struct agent_ratelimit *rl, enum agent_rl_kind kind,
		   const char *fmt, ...)
{
	unsigned long suppressed = 0;
	char line[512];
	va_list ap;

	if (rl && (unsigned int)kind < AGENT_RL_KINDS && !rl_allow(rl, kind, &suppressed))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (suppressed)
		log_warn("%s (%lu more like it suppressed)", line, suppressed);
	else
		log_warn("%s", line);
}
