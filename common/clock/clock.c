// SPDX-License-Identifier: GPL-2.0-or-later
/* The time daemons' table and the answer to CLOCK_REQ (see clock.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock/clock.h"
#include "common/base/timeutil.h"
#include "common/stamp/stamp.h"

const char *const agent_clock_daemons[] = { "auto", "ptp4l", "chrony", "none", NULL };

/* Fills a configuration from the defaults and what was given; see clock.h. */
void agent_clock_cfg_init(struct agent_clock_cfg *c, const char *daemon, const char *ptp4l_socket,
			  const char *chrony_socket, int timeout_ms)
{
	*c = (struct agent_clock_cfg){
		.daemon = daemon ? daemon : CLOCK_DEF_DAEMON,
		.ptp4l_socket = ptp4l_socket ? ptp4l_socket : CLOCK_DEF_PTP4L_SOCKET,
		.chrony_server = chrony_socket ? chrony_socket : CLOCK_DEF_CHRONY_SOCKET,
		.chronyc = CLOCK_DEF_CHRONYC,
		.timeout_ms = timeout_ms > 0 ? timeout_ms : CLOCK_DEF_TIMEOUT_MS,
	};
}

static const struct clock_daemon_ops *const daemons[] = {
	&clock_ptp4l_ops,
	&clock_chrony_ops,
};
#define NDAEMONS (sizeof(daemons) / sizeof(daemons[0]))

/* Reads daemon @d into @out, keeping the -errno in out->status. */
static int read_one(const struct clock_daemon_ops *d, const struct agent_clock_cfg *cfg,
		    struct tsync_clock_state *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = d->read(cfg, tsync_deadline_ms(cfg->timeout_ms), out);
	if (ret) {
		out->synced = 0;
		out->status = ret;
		if (!out->detail[0])
			snprintf(out->detail, sizeof(out->detail), "%s: %s", d->name,
				 strerror(-ret));
	}
	return ret;
}

/* The daemon part of agent_clock_state(). */
static void read_daemon(const struct agent_clock_cfg *cfg, struct tsync_clock_state *out)
{
	struct tsync_clock_state first, s;
	bool have = false;

	memset(out, 0, sizeof(*out));
	if (!strcmp(cfg->daemon, "none")) {
		snprintf(out->detail, sizeof(out->detail), "no daemon asked (--clock-daemon none)");
		return;
	}
	for (size_t i = 0; i < NDAEMONS; i++) {
		const struct clock_daemon_ops *d = daemons[i];

		if (strcmp(cfg->daemon, "auto") && strcmp(cfg->daemon, d->name))
			continue;
		read_one(d, cfg, &s);
		if (s.synced) {
			*out = s;
			return;
		}
		if (!have || (first.status && !s.status)) {
			first = s;
			have = true;
		}
	}
	if (have)
		*out = first;
}

/* Reads @clk between two CLOCK_REALTIME readings, three times, keeping
 * the closest pair. Returns 0 or -errno. */
static int read_relation(const char *clk, struct tsync_clock_state *out)
{
	struct tsync_stamper *st;
	int ret;

	ret = tsync_stamp_open(TSYNC_STAMP_CLOCK, clk, NULL, 0, &st);
	if (ret)
		return ret;
	for (int i = 0; i < 3; i++) {
		struct timespec a, b;
		int64_t t, ra, rb;

		clock_gettime(CLOCK_REALTIME, &a);
		ret = tsync_stamp_take(st, 0, 0, 0, 0, &t);
		clock_gettime(CLOCK_REALTIME, &b);
		if (ret)
			break;
		ra = a.tv_sec * 1000000000LL + a.tv_nsec;
		rb = b.tv_sec * 1000000000LL + b.tv_nsec;
		if (rb < ra)
			continue;	/* stepped in between */
		if (!out->read_ns || (uint64_t)(rb - ra) < out->read_ns) {
			out->read_ns = (uint64_t)(rb - ra) ? (uint64_t)(rb - ra) : 1;
			out->realtime_ns = ra + (rb - ra) / 2;
			out->clock_ns = t;
		}
	}
	tsync_stamp_close(st);
	return ret;
}

void agent_clock_state(const struct agent_clock_cfg *cfg, const char *trace_clock,
		       struct tsync_clock_state *out)
{
	read_daemon(cfg, out);
	if (read_relation(trace_clock, out))
		out->read_ns = 0;
}
