/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the time of a `record` goes: the moments between its phases, and
 * the --verbose line that splits the run into them (what runs before
 * COMMAND and after it is the time tsync adds to it).
 */
#ifndef TSYNC_HOST_PHASES_H
#define TSYNC_HOST_PHASES_H

#include <stddef.h>
#include <stdint.h>

enum rec_step {
	REC_PH_BEGIN,		/* the command line is parsed */
	REC_PH_CHECKED,		/* preflight checks done */
	REC_PH_GUESTS,		/* every guest connected, checked, synced once */
	REC_PH_HOST,		/* the host's instance made and its streamers running */
	REC_PH_ARMED,		/* the guests trace too: COMMAND is let go */
	REC_PH_CMD_END,		/* COMMAND ended (or the stop was asked) */
	REC_PH_FINAL_SYNC,	/* the guests' final sync rounds done */
	REC_PH_STOPPED,		/* host streams flushed */
	REC_PH_GUESTS_STOPPED,	/* guests' streams drained */
	REC_PH_HOST_META,	/* the host's metadata collected */
	REC_PH_HOST_FILE,	/* the host's trace.dat written */
	REC_PH_END,		/* every guest's file written (with the host's) */
	REC_PH_COUNT
};

struct rec_phases {
	int64_t t[REC_PH_COUNT];	/* CLOCK_MONOTONIC ns; 0: not reached */
	/* the guests' metadata and receivers were started while COMMAND
	 * ran, and were on at this moment (0: before COMMAND) */
	int64_t guests_on;
};

/* Notes that phase @ph was reached now. */
void rec_phase_mark(struct rec_phases *p, enum rec_step ph);

/* Formats the split into @buf (never more than @len bytes, always
 * terminated): milliseconds between the phases reached, in order, and the
 * time added to COMMAND before and after it; with guests_on, how far into
 * COMMAND the guests' receivers came on. Pure: no I/O. */
void rec_phases_format(const struct rec_phases *p, char *buf, size_t len);

#endif
