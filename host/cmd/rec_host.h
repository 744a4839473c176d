/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's part of a `record`: its instance, the per-CPU streamers into
 * temporary files, and its trace.dat at the end.
 */
#ifndef TSYNC_HOST_REC_HOST_H
#define TSYNC_HOST_REC_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/cmd/phases.h"
#include "host/cmd/record_args.h"

struct host_rec {
	pid_t only_pid;			/* -F: COMMAND's process, or 0 */
	struct tsync_instance *ti;
	int ncpus;
	int *files;
	/* each CPU's trace_pipe_raw until its streamer takes it over */
	int *src;
	/* each CPU's "read events" after the arming (tsync_watermark_arm()) */
	uint64_t *arm_read;
	struct tsync_streamer **streamers;
	int marker_fd;
	struct tracemeta_events *events;
	/* the metadata, collected while the recording runs (host_start()) */
	pthread_t meta_thr;
	bool meta_running;
	int meta_ret;
	struct tracemeta *meta;
	bool meta_done;			/* collected at host_stop() (no thread) */
	enum tracedat_compress meta_zip;	/* the file's, for the kallsyms */
	/* what host_write() needs of the instance, read at host_stop():
	 * its figures per CPU and where -m keeps the data from */
	struct tracemeta_stats *stats;
	char **cpustat;
	uint64_t *keep_from;
};

/* Creates the host instance and starts its streamers into temporary
 * files in @dir (tracing on), and a thread that collects the metadata
 * meanwhile (only the saved cmdlines are read again at the end). Returns
 * 0 or -errno (said why in @err). */
int host_start(struct host_rec *h, const struct rec_cfg *cfg, const char *dir,
	       char *err, size_t errlen);
/* Stops host tracing and its streamers and reads what host_write() needs
 * of the instance. */
void host_stop(struct host_rec *h);
/* Leaves the removal of the instance host_stop() stopped to a process of
 * its own (tsync_instance_destroy_detached()), which may outlive this one
 * by the tens of ms the kernel takes. The kernel holds its tracing locks
 * meanwhile: an agent on this kernel (a loopback guest) would wait for
 * them, so call it once the guests stopped. */
void host_remove_start(struct host_rec *h);
/* Removes the host instance and frees everything. */
void host_free(struct host_rec *h);
/* Writes the host's trace.dat (after host_stop()) under a temporary
 * name, staged in @out (common/tracedat/tracedat.h: the caller renames or
 * discards it with the run's other files); prints the host summary.
 * Returns 0 or -errno (said why in @err). */
int host_write(struct host_rec *h, const struct rec_cfg *cfg, uint64_t trace_id,
	       struct rec_phases *ph, struct tracedat_staged *out, char *err, size_t errlen);

#endif
