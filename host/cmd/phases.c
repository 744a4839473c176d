// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The phases of a record and their split; see phases.h.
 */
#include <stdio.h>

#include "host/cmd/phases.h"
#include "common/base/timeutil.h"

/* The name of the span that ends at each phase. */
static const char *const span[REC_PH_COUNT] = {
	[REC_PH_CHECKED] = "checks",
	[REC_PH_GUESTS] = "guests (connect, metadata, first sync)",
	[REC_PH_HOST] = "host instance",
	[REC_PH_ARMED] = "guests' tracing",
	[REC_PH_CMD_END] = "COMMAND",
	[REC_PH_FINAL_SYNC] = "final sync",
	[REC_PH_STOPPED] = "host flush",
	[REC_PH_GUESTS_STOPPED] = "guests' flush",
	[REC_PH_HOST_META] = "host metadata",
	[REC_PH_HOST_FILE] = "host file",
	[REC_PH_END] = "guest files (the rest of)",
};

void rec_phase_mark(struct rec_phases *p, enum rec_step ph)
{
	p->t[ph] = tsync_now_ns();
}

/* Appends to @buf at *@off what printf would; keeps it terminated. */
#define APPEND(buf, len, off, ...) do {						\
		int n_ = snprintf((buf) + *(off), (len) - *(off), __VA_ARGS__);	\
		if (n_ > 0)							\
			*(off) += (size_t)n_ < (len) - *(off) ? (size_t)n_ :	\
				  (len) - *(off) - 1;				\
	} while (0)

void rec_phases_format(const struct rec_phases *p, char *buf, size_t len)
{
	int64_t prev = p->t[REC_PH_BEGIN], last = prev;
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int ph = REC_PH_BEGIN + 1; ph < REC_PH_COUNT; ph++) {
		if (!p->t[ph] || !prev)
			continue;
		APPEND(buf, len, &off, "%s%s %.1f", off ? ", " : "",
		       span[ph],
		       (double)(p->t[ph] - prev) / 1e6);
		if (ph == REC_PH_CMD_END && p->guests_on && p->t[REC_PH_ARMED])
			APPEND(buf, len, &off, " (guests' receivers on after %.1f)",
			       (double)(p->guests_on - p->t[REC_PH_ARMED]) / 1e6);
		prev = last = p->t[ph];
	}
	if (p->t[REC_PH_BEGIN] && p->t[REC_PH_ARMED] && p->t[REC_PH_CMD_END])
		APPEND(buf, len, &off, "; added before COMMAND %.1f, after %.1f, total %.1f ms",
		       (double)(p->t[REC_PH_ARMED] - p->t[REC_PH_BEGIN]) / 1e6,
		       (double)(last - p->t[REC_PH_CMD_END]) / 1e6,
		       (double)(last - p->t[REC_PH_BEGIN]) / 1e6);
}
