/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timestamp sources for sync rounds, in the trace clock of the buffers.
 * Used by both sides: the host stamps t1/t4, the agent t2/t3.
 *
 * The sources are a table (stamp.c): a row of TSYNC_STAMP_SOURCES in
 * proto/proto.h each (name, wire id, capability bit) joined to the ops
 * its file implements (stamp_priv.h). Everything about sources is asked
 * of the table: a clock's default source, which source may stamp which
 * clock, the capabilities an agent announces, what needs tracefs, and
 * the lists in messages. Today's rows:
 *
 *   marker  each stamp is a struct tsync_rec_probe written to
 *           trace_marker_raw of a private tracefs instance whose trace_clock
 *           is the chosen clock; the kernel timestamps it. resolve() reads
 *           the records back from that instance's per-CPU ring buffer
 *           (a consuming read of per_cpu/cpuN/trace_pipe_raw) and fills the
 *           timestamps in. Works for every trace clock (the only way for
 *           local, global, counter, perf, uptime).
 *   clock   clock_gettime() of the POSIX clock behind the trace clock:
 *           mono, mono_raw, boot, tai, minus this process's time-namespace
 *           offset of that clock (unless TSYNC_STAMP_NS_CLOCK): the kernel
 *           stamps trace events without it. Filled at once.
 *   tsc     rdtsc (x86 only), for x86-tsc. Filled at once.
 *
 * A new source is a row in TSYNC_STAMP_SOURCES (a new wire id, and a
 * capability bit if not every agent has it) and a file
 * common/stamp/stamp_<name>.c defining stamp_<name>_ops, listed in the
 * map below; nothing else in the tree names a source.
 *
 * The marker instance is created once by tsync_stamp_open() (a
 * common/tracefs/instance.h instance with prefix "tsync-<tag>", named
 * "tsync-<tag>-<pid>-<n>", unique even for concurrent opens in one process),
 * its ring buffer of at least TSYNC_STAMP_BUFFER_KB per CPU, and removed by
 * tsync_stamp_close(). Nothing is cleared or created per round: the records
 * carry the round id, and records of other rounds are skipped.
 *
 * Threads: take() may be called from several threads at once; resolve()
 * for different CPUs too, but not twice at once for the same CPU.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/stamp/
 *   stamp.c, stamp.h              the table of timestamp sources, and what is asked of it
 *   stamp_priv.h                  what a source implements (struct stamp_source_ops)
 *   stamp_clock.c                 the clock source: clock_gettime() of the trace clock
 *   stamp_marker.c                the marker source: trace_marker_raw, read back
 *   stamp_tsc.c                   the tsc source: rdtsc
 *   stamp_round.c, stamp_round.h  the sources as both ends of a round use them
 */
#ifndef TSYNC_STAMP_H
#define TSYNC_STAMP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/base/trace_clock.h"
#include "proto/proto.h"

/* Ring-buffer size per CPU of a marker instance: room for a round of 4096
 * probes, two stamps each, on one CPU (40 bytes per record). A new
 * instance's own size is kept when it is at least that and at most
 * TSYNC_STAMP_BUFFER_MAX_KB (a resize costs 8-20 ms). */
#define TSYNC_STAMP_BUFFER_KB 512
#define TSYNC_STAMP_BUFFER_MAX_KB 4096

/* Longest instance tag accepted by tsync_stamp_open(). */
#define TSYNC_STAMP_TAG_MAX 32

/* One timestamp resolve() must find: probe seq, direction, result. */
struct tsync_stamp_slot {
	uint32_t seq;
	uint8_t dir;		/* enum tsync_probe_dir */
	int64_t ts;		/* filled by resolve() */
};

struct tsync_stamper;

/*
 * The source used for trace clock @clock_name when none is asked for (the
 * only place this is decided): the first source of the table this
 * machine has that reads that clock itself (clock for mono, mono_raw,
 * boot and tai, tsc for x86-tsc on x86), else the one that stamps every
 * clock through tracefs (marker; also for NULL).
 */
enum tsync_stamp_source tsync_stamp_default(const char *clock_name);

/*
 * Checks that @source (a wire value, enum tsync_stamp_source) can stamp in
 * trace clock @clock_name here. Returns 0, or -EINVAL (unknown source,
 * empty clock name, a source this machine lacks or that does not stamp
 * that clock).
 */
int tsync_stamp_check(unsigned int source, const char *clock_name);

/* Returns the capability bits of the sources this machine has: what an
 * agent announces (TSYNC_CAP_STAMP_TSC on x86). */
uint32_t tsync_stamp_caps(void);

/* Returns true if @source needs tracefs (marker; and an unknown one). */
bool tsync_stamp_needs_tracefs(unsigned int source);

/*
 * Checks that a peer announcing capabilities @caps has @source. Returns 0,
 * or -EOPNOTSUPP with @err saying so ("the agent cannot stamp with the
 * TSC (it does not announce the capability): use --stamp marker").
 */
int tsync_stamp_peer_check(unsigned int source, uint32_t caps, char *err, size_t errlen);

/*
 * Writes which clocks @source stamps, for messages: "mono, mono_raw, boot
 * and tai", "x86-tsc, on x86", "every trace clock".
 */
void tsync_stamp_clocks_text(unsigned int source, char *buf, size_t len);

/*
 * Lists into @names (at most @max) the trace clocks the sources that need
 * no tracefs stamp on this machine (mono, mono_raw, boot, tai, and x86-tsc
 * on x86). Returns the count.
 */
int tsync_stamp_user_clocks(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max);

/* Writes tsync_stamp_user_clocks() as "mono, mono_raw, boot, tai, x86-tsc",
 * or with @last (NULL: none) before the last one: "..., tai or x86-tsc". */
void tsync_stamp_user_clocks_text(const char *last, char *buf, size_t len);

/* Writes the names of this machine's sources that need no tracefs as
 * "clock or tsc". */
void tsync_stamp_user_sources_text(char *buf, size_t len);

/*
 * tsync_stamp_open() flag: the clock source reads the clock as this
 * process's time namespace shows it. Without it, the clock source removes
 * the namespace's offset (/proc/self/timens_offsets): its stamps are in the
 * kernel trace clock's terms, as marker stamps and recorded events are.
 */
#define TSYNC_STAMP_NS_CLOCK	0x1u
/*
 * tsync_stamp_open() flag: the marker source's instance is removed at
 * close by a process of its own (tsync_instance_destroy_detached()), so
 * that a program about to exit does not wait the kernel's 50-110 ms.
 */
#define TSYNC_STAMP_DETACHED_CLOSE	0x2u

/*
 * Opens a timestamp source @source for trace clock @clock_name (checked
 * with tsync_stamp_check()), with TSYNC_STAMP_* @flags. For marker, @tag
 * (letters, digits, '_', at most TSYNC_STAMP_TAG_MAX) names the private
 * instance. Returns 0 and *@out, or -errno (-EINVAL bad arguments or
 * unknown clock, -ENODEV no tracefs).
 */
int tsync_stamp_open(unsigned int source, const char *clock_name,
		     const char *tag, unsigned int flags,
		     struct tsync_stamper **out);

/* Returns the source an open @s (not NULL) uses. */
enum tsync_stamp_source tsync_stamp_source_of(const struct tsync_stamper *s);

/*
 * Returns true if @s is deferred: take() writes what resolve() later
 * turns into the stamp (marker). Such a stamp costs a system call, and
 * what lies between two of them is mostly that call.
 */
bool tsync_stamp_deferred(const struct tsync_stamper *s);

/* Returns the name of the source's tracefs instance (marker), or NULL. */
const char *tsync_stamp_instance(const struct tsync_stamper *s);

/*
 * Takes a timestamp now, for probe @seq, direction @dir of @round, syncing
 * CPU @cpu (recorded in the marker). Sets *@ts; a deferred source (marker)
 * writes its record and sets *@ts to 0 (pending until resolve()), on the
 * CPU the caller runs on: a caller that moves to another CPU during a
 * round resolves each CPU's records from that CPU, all of one CPU's in
 * one resolve, which consumes them (host/peer/tcmd_ptp.c does, as the
 * first sample of a trace-cmd agent's CPU tries two host CPUs). Returns
 * 0 or -errno.
 */
int tsync_stamp_take(struct tsync_stamper *s, uint32_t round, uint32_t seq,
		     uint8_t dir, uint32_t cpu, int64_t *ts);

/*
 * A deferred source (marker): reads back everything written on CPU @cpu
 * since the last resolve of that CPU (consuming it), and fills the ts of
 * each of the @n slots from the record of @round with the same seq and
 * dir. Returns 0, -ENOENT if any slot found no record (ts of those left
 * 0), or -errno. Other sources: returns 0 and leaves the slots alone.
 */
int tsync_stamp_resolve(struct tsync_stamper *s, int cpu, uint32_t round,
			struct tsync_stamp_slot *slots, size_t n);

/* Closes @s and removes its instance (NULL is fine). */
void tsync_stamp_close(struct tsync_stamper *s);

#endif
