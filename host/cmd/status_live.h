/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live status line of `tsync-host record` (host/cmd/status.h formats it):
 * a thread that, about once a second while recording, gathers the host's
 * and each guest's numbers and rewrites one line on a terminal with \r.
 * Nothing is written when the file descriptor is not a terminal.
 *
 * It reads what other threads write without taking their locks: the
 * host's per-CPU stats files and temporary files, the guests' receiver
 * counters (rx_group_counts()) and last sync round (atomics in struct
 * guest). Start it once the recording runs; stop it before the
 * recording stops (before the guests' receivers are freed).
 */
#ifndef TSYNC_HOST_STATUS_LIVE_H
#define TSYNC_HOST_STATUS_LIVE_H

struct tracefs_instance;
struct guest;
struct status_live;

/* The host's recording, as status_live reads it. */
struct status_host {
	struct tracefs_instance *inst;	/* the host's instance */
	const int *files;		/* [ncpus] temporary files of its data */
	int ncpus;
};

/* True when status_live_start() draws a status line on @fd (a terminal). */
bool status_live_wanted(int fd);

/*
 * Starts the status line on @fd for host @h and the @nguests guests
 * @guests (which must outlive it). When @fd is not a terminal, starts
 * nothing and returns 0 with *@out NULL. Returns 0 or -errno.
 */
int status_live_start(int fd, const struct status_host *h, const struct guest *guests,
		      int nguests, struct status_live **out);

/* Stops the thread and clears the line (NULL is fine). */
void status_live_stop(struct status_live *s);

#endif
