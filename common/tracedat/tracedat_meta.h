/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metadata a trace.dat carries, as the writer (tracedat.h) takes it:
 * the texts that let a reader decode the ring-buffer pages. The writer
 * owns these types; whoever gathers the texts fills them in
 * (common/tracemeta/ from a tracefs instance, or from parts a peer sent).
 * Types only: no code, no I/O.
 */
#ifndef TSYNC_TRACEDAT_META_H
#define TSYNC_TRACEDAT_META_H

#include <stddef.h>
#include <stdint.h>

struct tracedat_zpart;

/* A borrowed byte string (not necessarily NUL-terminated). */
struct tracedat_text {
	const char *data;
	size_t len;
};

/* The formats of the events of one system (events/SYS/EV/format texts). */
struct tracedat_system {
	const char *name;
	int nformats;
	const struct tracedat_text *formats;
};

/*
 * Everything trace-cmd needs to decode the pages. All pointers are
 * borrowed for the duration of the call. Empty (len 0) kallsyms, printk
 * formats and cmdlines are allowed; header_page and header_event are
 * required (a 0-length header_page makes libtraceevent assume the old
 * ring-buffer layout), so are the ftrace formats of the events in the data
 * (print, raw_data, bprint, bputs for markers).
 */
struct tracedat_meta {
	struct tracedat_text header_page;	/* events/header_page */
	struct tracedat_text header_event;	/* events/header_event */
	int nftrace;
	const struct tracedat_text *ftrace_formats; /* events/ftrace/ * /format */
	int nsystems;
	const struct tracedat_system *systems;	/* other systems */
	struct tracedat_text kallsyms;		/* /proc/kallsyms, may be empty */
	struct tracedat_text printk_formats;	/* printk_formats, may be empty */
	struct tracedat_text cmdlines;		/* saved_cmdlines, may be empty */
	/* Sub-buffer (ring-buffer page) size; the CPU data is aligned to it. */
	uint32_t page_size;
	/* Optional: UNAME option text ("sysname nodename release machine"). */
	const char *uname;
	/*
	 * Optional: trace_clock file content, e.g. "[local] global ...".
	 * Written as the TRACECLOCK option plus the v6 clock trailer
	 * "[clock]" (the selected one). Without it trace-cmd assumes
	 * nanosecond timestamps ("local").
	 */
	const char *trace_clock;
	/* Optional: the kallsyms section compressed already (tracedat.h,
	 * tracedat_precompress_kallsyms()); NULL: compressed at the write. */
	const struct tracedat_zpart *kallsyms_z;
};

#endif
