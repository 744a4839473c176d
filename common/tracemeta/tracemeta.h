/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trace metadata of a tracefs instance on the local machine, and event
 * selection for recording.
 *
 *  - tracemeta_collect(): everything a trace.dat file needs to decode the
 *    instance's ring-buffer pages (header_page, header_event, the ftrace
 *    event formats, the formats of every enabled event, printk formats,
 *    saved cmdlines, optionally kallsyms, uname, trace_clock and the
 *    sub-buffer size), filled into the writer's own struct tracedat_meta
 *    (common/tracedat/tracedat_meta.h).
 *  - tracemeta_read_stats()/tracemeta_parse_stats(): per-CPU `stats`
 *    (tracemeta_stats.h, included here).
 *  - tracemeta_resolve_events(): "system:event" / "system" / "all" specs
 *    (globs allowed in the event part) checked against the events this
 *    kernel has, with a clear error naming what is unknown; then
 *    tracemeta_enable_events() enables them (with optional filters) in an
 *    instance.
 * Used by the agent (guest side) and the host alike.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/tracemeta/
 *   tracemeta.c, tracemeta.h                    trace metadata collected from tracefs or rebuilt from parts
 *   tracemeta_events.c                          event selection: -e specs against the kernel's events
 *   tracemeta_file.c, tracemeta_file.h          whole-file reads and writes of tracefs files
 *   tracemeta_stats.c, tracemeta_stats.h        per-CPU ring-buffer statistics
 *   tsc2nsec.c, tsc2nsec.h                      the kernel's TSC to ns conversion, for TSC2NSEC
 */
#ifndef TSYNC_TRACEMETA_H
#define TSYNC_TRACEMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/tracedat/tracedat.h"
#include "common/tracedat/tracedat_meta.h"
/* tracemeta_read_stats() and its numbers: the collector's CPUSTAT texts
 * come from there */
#include "common/tracemeta/tracemeta_stats.h"

struct tracefs_instance;

struct tracemeta_opts {
	bool kallsyms;	/* include /proc/kallsyms (several MB) */
	bool cpustat;	/* include every CPU's stats (trace-cmd's CPUSTAT) */
};

/* Collected metadata; owns every text its tracedat_meta points to. */
struct tracemeta;

/*
 * Collects the metadata of @inst (NULL = top instance) with the events
 * enabled in it right now (its set_event file), so enable the events
 * first. Returns 0 and *@out (free with tracemeta_free()), or -errno.
 */
int tracemeta_collect(struct tracefs_instance *inst,
		      const struct tracemeta_opts *opts, struct tracemeta **out);
/* Reads the saved cmdlines (pid to comm) again into @tm, which was
 * collected before the processes of the recording ran. Returns 0 or
 * -errno (@tm keeps its old ones then). */
int tracemeta_refresh_cmdlines(struct tracemeta *tm);
/*
 * Reads again into @tm, collected from @inst with @opts (or the same
 * options), what changes while @inst records: the printk formats and
 * saved cmdlines and, with opts->cpustat, every CPU's stats of @inst.
 * Everything else (headers, formats, kallsyms, uname, trace clock) stays
 * as collected: a recording's events, clock and kernel do not change.
 * Cheaper than a new tracemeta_collect() by kallsyms and the formats.
 * Returns 0, -EINVAL when @tm is not finished, or -errno of a read (what
 * was not read again then keeps its old text; @tm stays valid).
 */
int tracemeta_refresh(struct tracemeta *tm, struct tracefs_instance *inst,
		      const struct tracemeta_opts *opts);
/*
 * Compresses the kallsyms section for a version 7 file compressed with
 * @kind (tracedat_precompress_kallsyms()), so that the write does not:
 * for a recorder to call while its command runs. none: drops it. Returns
 * 0 or -errno (the write then compresses as usual).
 */
int tracemeta_precompress(struct tracemeta *tm, enum tracedat_compress kind);
/*
 * Moves @from's compressed kallsyms section (tracemeta_precompress()) to
 * @to when @to has none and the same kallsyms text, byte for byte (a
 * peer's final metadata sends it again). Returns true if it moved.
 */
bool tracemeta_take_precompressed(struct tracemeta *to, struct tracemeta *from);
/* Returns the metadata view for tracedat_write(); valid until freed. */
const struct tracedat_meta *tracemeta_meta(const struct tracemeta *tm);
/* Frees @tm (NULL is fine). */
void tracemeta_free(struct tracemeta *tm);
/*
 * Returns the number of CPUSTAT texts of @tm (collected with
 * opts.cpustat, or received) and sets *@out to them, in the form
 * struct tracedat_opts.cpustat takes; valid until freed.
 */
int tracemeta_cpustat(const struct tracemeta *tm, const char *const **out);

/*
 * Moving metadata between machines. The agent collects it on the guest
 * and sends it as parts (proto META_CHUNK messages); the host rebuilds it
 * to write the guest's file. A part is one text (one format for the
 * FORMAT kinds), sent in one or more chunks: every chunk but the last has
 * @more set, and chunks of different parts never interleave. Empty texts
 * are not sent. Part kinds equal proto's enum tsync_meta_kind.
 */
enum tracemeta_part {
	TRACEMETA_HEADER_PAGE = 1,
	TRACEMETA_HEADER_EVENT = 2,
	TRACEMETA_FTRACE_FORMAT = 3,	/* one events/ftrace/EV/format */
	TRACEMETA_EVENT_FORMAT = 4,	/* one format of system @system */
	TRACEMETA_KALLSYMS = 5,
	TRACEMETA_PRINTK = 6,
	TRACEMETA_CMDLINES = 7,
	TRACEMETA_UNAME = 8,		/* without NUL */
	TRACEMETA_TRACE_CLOCK = 9,	/* without NUL */
	TRACEMETA_CPUSTAT = 10,		/* one per CPU: "CPU: N\n" and its
					 * per_cpu/cpuN/stats, without NUL */
};

/* Limits on what a peer may send (a rogue guest must not exhaust the
 * host): one text, everything, number of formats, number of systems. */
#define TRACEMETA_MAX_TEXT	(64u << 20)
#define TRACEMETA_MAX_TOTAL	(256u << 20)
#define TRACEMETA_MAX_FORMATS	65536
#define TRACEMETA_MAX_SYSTEMS	4096

/* Receives one chunk; a non-zero return stops the iteration with it. */
typedef int (*tracemeta_part_cb)(void *ctx, unsigned int kind,
				 const char *system, const void *data,
				 size_t len, bool more);
/*
 * Calls @cb for every chunk of @tm's parts (at most @max_chunk bytes
 * each; system is "" but for EVENT_FORMAT). Returns 0, -EINVAL, or the
 * first non-zero return of @cb.
 */
int tracemeta_foreach_part(const struct tracemeta *tm, size_t max_chunk,
			   tracemeta_part_cb cb, void *ctx);
/* Returns an empty tracemeta to add parts to, or NULL (ENOMEM). */
struct tracemeta *tracemeta_new(void);
/*
 * Adds one received chunk. Unknown kinds (> TRACEMETA_TRACE_CLOCK) are
 * skipped. Returns 0; -EPROTO for a part sent twice, interleaved chunks,
 * a bad system name; -E2BIG past the limits above; -EINVAL after
 * tracemeta_finish(). After an error the object can only be freed.
 */
int tracemeta_add_part(struct tracemeta *tm, unsigned int kind,
		       const char *system, const void *data, size_t len,
		       bool more);
/*
 * Completes a tracemeta built with tracemeta_add_part(): checks it
 * (header_page and header_event present, no open part, no empty format,
 * uname/trace_clock without NUL, trace_clock with a "[selected]" clock)
 * and sets the page size: @page_size, or when 0 the size header_page
 * describes (tsync_ringbuf_page_size_of(), common/tracefs/ringbuf.h). Then tracemeta_meta() is valid. Returns 0,
 * -EPROTO (incomplete or bad) or -EINVAL (bad page size).
 */
int tracemeta_finish(struct tracemeta *tm, uint32_t page_size);

/*
 * An event selection as given on a command line: @spec is "system:event"
 * (glob patterns allowed in the event part), "system", an event name
 * alone (matched in every system), or "all"; @filter (optional) is an
 * ftrace filter for it ("all" takes none).
 */
struct tracemeta_event_spec {
	const char *spec;
	const char *filter;
	bool negate;		/* disable the events instead (trace-cmd -v) */
	bool optional;		/* matching nothing is no error (-i): a warning */
};

/* Resolved event selection. */
struct tracemeta_events;

/*
 * Checks @n specs against the events this kernel has (tracefs events/).
 * Returns 0 and *@out (free with tracemeta_events_free()), or -ENOENT for
 * an unknown event or system, -EINVAL for a malformed spec or a filter on
 * "all"; then @err (if not NULL) holds a message naming the culprit, e.g.
 * "unknown event 'sched:sched_swich'". Nothing in tracefs is changed.
 */
int tracemeta_resolve_events(const struct tracemeta_event_spec *specs, int n,
			     struct tracemeta_events **out, char *err,
			     size_t errlen);

/* Bounds on what specs may expand to (0: no bound). */
struct tracemeta_event_limits {
	int max_selections;		/* after expanding globs and bare names */
	size_t max_filter_bytes;	/* filter text summed over selections */
};
/*
 * tracemeta_resolve_events() for specs from an untrusted peer: stops as
 * soon as the expansion goes over @lim and returns -E2BIG with @err
 * saying which bound, before the memory is spent.
 */
int tracemeta_resolve_events_limited(const struct tracemeta_event_spec *specs, int n,
				     const struct tracemeta_event_limits *lim,
				     struct tracemeta_events **out, char *err,
				     size_t errlen);
/* Returns how many selections (events, systems, "all") @ev holds. */
int tracemeta_events_count(const struct tracemeta_events *ev);
/* Frees @ev (NULL is fine). */
void tracemeta_events_free(struct tracemeta_events *ev);

/*
 * Sets the filters and enables the events of @ev in @inst. ftrace events
 * (print, raw_data...: marker writes) are always recorded and need
 * nothing. Returns 0, or -errno with @err naming the event and, for a
 * rejected filter, the kernel's complaint.
 */
int tracemeta_enable_events(struct tracefs_instance *inst,
			    const struct tracemeta_events *ev, char *err,
			    size_t errlen);
/* Disables every event of @inst (events/enable = 0). Returns 0/-errno. */
int tracemeta_disable_events(struct tracefs_instance *inst);

#endif
