/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-CPU ring-buffer statistics of a tracefs instance
 * (per_cpu/cpuN/stats): parsed into numbers, and kept as the text
 * trace-cmd stores in its CPUSTAT option. tracemeta.h includes this
 * header (its collector takes the CPUSTAT texts from here); this module
 * calls nothing of tracemeta.c.
 */
#ifndef TSYNC_TRACEMETA_STATS_H
#define TSYNC_TRACEMETA_STATS_H

#include <stddef.h>
#include <stdint.h>

struct tracefs_instance;

/* One CPU's ring-buffer statistics (per_cpu/cpuN/stats). */
struct tracemeta_stats {
	uint64_t entries;		/* events in the buffer now */
	uint64_t overrun;		/* events lost: overwritten */
	uint64_t commit_overrun;	/* events lost: nested writes */
	uint64_t bytes;			/* bytes in the buffer now */
	uint64_t oldest_event_ts;	/* ns ("s.us" x 1000), or raw count */
	uint64_t now_ts;		/* same unit */
	uint64_t dropped_events;	/* events lost: buffer full, no
					 * overwrite mode */
	uint64_t read_events;		/* events consumed by readers */
	unsigned int have;		/* TRACEMETA_ST_* of the fields seen */
};

#define TRACEMETA_ST_ENTRIES		(1u << 0)
#define TRACEMETA_ST_OVERRUN		(1u << 1)
#define TRACEMETA_ST_COMMIT_OVERRUN	(1u << 2)
#define TRACEMETA_ST_BYTES		(1u << 3)
#define TRACEMETA_ST_OLDEST_TS		(1u << 4)
#define TRACEMETA_ST_NOW_TS		(1u << 5)
#define TRACEMETA_ST_DROPPED		(1u << 6)
#define TRACEMETA_ST_READ		(1u << 7)

/*
 * Parses a stats text of @len bytes. Unknown lines are ignored (newer
 * kernels add some). Returns 0, or -EINVAL when "entries" or "overrun" is
 * missing or a known field has a malformed number.
 */
int tracemeta_parse_stats(const char *text, size_t len,
			  struct tracemeta_stats *out);
/*
 * Reads and parses per_cpu/cpu@cpu/stats of @inst. When @cpustat is not
 * NULL it also returns (malloc'd) the text trace-cmd stores in its CPUSTAT
 * option: "CPU: N\n" followed by the stats. Returns 0 or -errno.
 */
int tracemeta_read_stats(struct tracefs_instance *inst, int cpu,
			 struct tracemeta_stats *out, char **cpustat);

#endif
