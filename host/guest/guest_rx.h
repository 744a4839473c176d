/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-CPU data receivers of one guest (`tsync-host record`): each
 * reads its CPU's raw ring-buffer pages from the data connection, checks
 * every page (host/guest/pagecheck.h) before writing it to an unnamed temporary
 * file, and stops at the first bad page. A guest's receivers share a
 * group: the page format, a cap on the guest's data, a floor of free
 * space kept for the host's own file, and one stop signal, so that bad
 * data, the cap or a full disk on one CPU stops the whole guest.
 */
#ifndef TSYNC_HOST_GUEST_RX_H
#define TSYNC_HOST_GUEST_RX_H

#include <stdbool.h>
#include <stdint.h>

#include "host/guest/pagecheck.h"

struct rx_group;
struct guest_rx;
struct peer;

/* How a receiver ended (rx_join()); errors are -errno. */
enum rx_end {
	RX_EOF = 0,		/* the stream ended after a whole page */
	RX_CUT = 1,		/* stopped (rx_group_stop()) */
	RX_RUNNING = 2,		/* not ended yet */
};

/*
 * Creates a group for pages of format @f. @max_bytes caps the data of all
 * its receivers together (0: no cap). Returns 0 or -ENOMEM.
 */
int rx_group_new(const struct page_format *f, uint64_t max_bytes, struct rx_group **out);
/* trace-cmd's -m: each receiver of @grp keeps only the newest half to
 * all of @max_kb KiB in its file (common/base/maxkb.h), giving the older data
 * back to the file system; the cap then counts what is kept. Call before
 * rx_start(). */
void rx_group_keep_newest(struct rx_group *grp, uint32_t max_kb);
/* Makes every receiver of @grp stop soon, keeping what it has read. */
void rx_group_stop(struct rx_group *grp);
/* What the receivers of a group have written so far. */
struct rx_counts {
	uint64_t bytes, events;
	uint64_t missed;		/* events the guest's pages report lost */
	bool missed_min;		/* some pages only flagged a loss */
};

/* Reads @grp's counters, from any thread. */
void rx_group_counts(const struct rx_group *grp, struct rx_counts *c);
/* Frees @grp (NULL is fine) once its receivers are freed. */
void rx_group_free(struct rx_group *grp);

/*
 * Starts a receiver of CPU @cpu reading @sock, a stream of peer @p,
 * into a temporary file in @dir. The receiver closes @sock
 * (peer_stream_close()) as soon as it ends: an agent writing to a
 * stream nobody reads any more learns it at once. Returns 0 or -errno
 * with a reason in @err (@sock is closed then too).
 */
int rx_start(struct rx_group *grp, uint32_t cpu, struct peer *p, int sock,
	     const char *dir, struct guest_rx **out, char *err, size_t errlen);
/*
 * Waits until @deadline (CLOCK_MONOTONIC ns) for the receiver to end, then
 * cuts it. Returns how it ended: RX_EOF, RX_CUT or -errno: -EBADMSG (a bad
 * page), -EFBIG (over the cap), -ENOSPC (the disk is, or nearly is, full)
 * or another I/O error; rx_error() says more.
 */
int rx_join(struct guest_rx *rx, int64_t deadline);
/* Returns why the receiver stopped on an error ("" otherwise). */
const char *rx_error(const struct guest_rx *rx);
/* Returns the bytes written to the file. */
uint64_t rx_bytes(const struct guest_rx *rx);
/* Returns the events in the pages received (read once it has ended). */
uint64_t rx_events(const struct guest_rx *rx);
/* Returns the file holding the pages (for writing the trace.dat). */
int rx_file(const struct guest_rx *rx);
/* Returns where the pages kept in the file start (0 unless -m). */
uint64_t rx_keep_from(const struct guest_rx *rx);
/* Drops the data received (the file is emptied), to give the space back. */
void rx_drop_data(struct guest_rx *rx);
/* Stops and joins the receiver if running, closes its file, frees it. */
void rx_free(struct guest_rx *rx);

#endif
