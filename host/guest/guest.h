/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One guest of `tsync-host record`: its control session, its periodic sync
 * thread, its per-CPU data receivers and its metadata.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/guest/
 *   guest.c, guest.h          one guest of a recording: session, sync rounds, streams
 *   guest_rx.c, guest_rx.h    a guest CPU's data receiver
 *   pagecheck.c, pagecheck.h  checks of a guest's ring-buffer pages
 *   agent_arg.c, agent_arg.h  -A arguments, trace-cmd's forms and tsync's
 *   qemu.c, qemu.h            local QEMU guests from /proc
 */
#ifndef TSYNC_HOST_GUEST_H
#define TSYNC_HOST_GUEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/peer/peer.h"
#include "host/sync/sync.h"
#include "common/sync/sync_interval.h"
#include "common/tracedat/tracedat.h"
#include "proto/proto.h"

struct tracemeta;
struct guest_rx;
struct rx_group;

/* The moments of a guest's stop (guest_stop_trace()), CLOCK_MONOTONIC ns;
 * 0: not reached. */
enum guest_stop_mark {
	GUEST_STOP_BEGIN,	/* TRACE_STOP about to be sent */
	GUEST_STOP_STOPPED,	/* the agent's answer: its tracing off, its streams flushed */
	GUEST_STOP_DRAINED,	/* every receiver ended (EOF) */
	GUEST_STOP_META,	/* the final metadata received */
	GUEST_STOP_N
};

/* Per-CPU time-sync samples gathered during the recording. */
struct guest_samples {
	uint32_t count, cap;
	struct tracedat_ts_sample *s;
	int64_t err_max;		/* largest error bound of the rounds */
	uint32_t failed;		/* rounds that failed */
	struct tsync_interval *iv;	/* when to sync this CPU next */
};

struct guest {
	/* from the command line */
	struct tsync_endpoint ep;
	const struct peer_ops *dialect;	/* its agent's protocol (host/peer/peer.h) */
	char name[64];
	const char *agent_str;
	char **argv;			/* its options for the agent ("record" first:
					 * tsync_recopt_instance_argv()) */
	int argc;
	uint64_t max_bytes;		/* cap of the guest's data; 0: none */
	uint32_t max_kb;		/* -m: each CPU keeps the newest half to all
					 * of it (common/base/maxkb.h); 0: all */
	pid_t vm_pid;			/* --vm after its -A: its QEMU; 0: by CID */
	const char *ts_offset;		/* --ts-offset after its -A: the file's
					 * OFFSET option; or NULL */
	bool unsynced;			/* --tsync-interval < 0: no sync rounds,
					 * a file without TIME_SHIFT */

	/* run time */
	int host_marker_fd;		/* host instance trace_marker_raw, or -1 */
	struct peer *peer;		/* the connection to its agent */
	struct sync_method *sm;		/* how it is synced (not when unsynced) */
	uint32_t ncpus;
	struct guest_samples *samples;	/* [ncpus] */
	struct rx_group *rxg;		/* the receivers' shared limits */
	struct guest_rx **rx;		/* [ncpus] data receivers */
	struct tsync_trace_stopped stopped;	/* agent's stats at stop */
	struct tracemeta *meta;		/* the guest's metadata, once received */
	pthread_t sync_thread;
	bool sync_running;
	int sync_interval_ms;		/* the sync thread's; 0: adaptive, -1: none */
	int status;			/* 0, or the first fatal error */
	char error[TSYNC_REASON_MAX + 128];	/* holds a round's error whole */
	int data_status;		/* bad data, over the cap, disk full */
	const char *data_error;		/* why (a receiver's) */
	bool disk_full;			/* a receiver stopped for lack of space */
	bool data_dropped;		/* its data was dropped (disk full) */
	/* the last successful sync round, for the live status line
	 * (host/cmd/status_live.c reads them while the sync thread writes) */
	_Atomic uint32_t live_rounds;
	_Atomic int64_t live_offset_ns;
	_Atomic int64_t live_error_ns;
	int64_t stop_t[GUEST_STOP_N];	/* where its stop's time went */
};

struct guest_sync_opts {
	struct round_opts round;
	int interval_ms;		/* 0: adaptive (common/sync/sync_interval.h); -1:
					 * only the first and the final round */
	int stop_fd;			/* eventfd: readable when stopping */
};

/* Connects and sets up the session (@o: the recording's clock and stamps;
 * the guest's option words are added), then, unless unsynced, chooses
 * how the guest is synced with the rounds @ro (host/sync/sync.h); 0 or
 * -errno with g->error set. */
int guest_connect(struct guest *g, const struct peer_opts *o, const struct round_opts *ro);
/*
 * Formats a guest's stop split @t into @buf (never more than @len bytes,
 * always terminated): milliseconds of the agent's stop, of the streams'
 * ends after it, of the final metadata, and in all, leaving out what was
 * not reached. Pure: no I/O.
 */
void guest_stop_split(const int64_t t[GUEST_STOP_N], char *buf, size_t len);
/* Returns true once connected. */
bool guest_connected(const struct guest *g);
/* Returns the guest's trace id (its file's TRACEID); 0 before connecting. */
uint64_t guest_trace_id(const struct guest *g);
/* Before anything else of a recording: an agent that cannot record
 * (host/peer/peer.h: peer_can_record()); 0, or -errno with its reason in
 * g->error. */
int guest_check_can_record(struct guest *g, const char *clock);
/* Takes one sample of every guest CPU with the guest's sync method,
 * recording them (none for a guest without sync rounds). Returns 0 or
 * -errno when the connection broke. */
int guest_sync_all(struct guest *g, const struct round_opts *ro);
/* Starts tracing on the guest (its options and events accepted there).
 * 0 or -errno with g->error set. */
int guest_start_trace(struct guest *g, const char *clock);
/* Then (the guest traces meanwhile) its metadata and one data receiver
 * per CPU writing into temporary files in @dir; then the metadata's
 * kallsyms section is compressed with @zip, the compression of the file
 * to be written (none: not), so that the write after the recording does
 * not. 0 or -errno with g->error set. */
int guest_start_rx(struct guest *g, const char *dir, enum tracedat_compress zip);
/* Starts the periodic sync thread (a round per CPU every interval, and a
 * final one when stop_fd fires). An adaptive interval is the shortest one
 * any CPU needs. */
int guest_start_sync_thread(struct guest *g, const struct guest_sync_opts *o);
/* Waits for the sync thread (after its final round). */
void guest_join_sync_thread(struct guest *g);
/* Stops tracing on the guest, waits for the streams to end and fetches the
 * metadata. Returns 0 or -errno (what was received stays usable): bad
 * data from the agent, its data over max_bytes or a full disk fail it. */
int guest_stop_trace(struct guest *g, int timeout_ms);
/* Writes the guest's file @path with TRACEID, TIME_SHIFT (not when
 * unsynced), CPUSTAT, OFFSET (ts_offset) and the CPU data, under a
 * temporary name staged in @out (common/tracedat/tracedat.h); @run holds
 * what every file of the run shares (format, VERSION, TSC2NSEC: not when
 * unsynced, as trace-cmd). Returns 0, -ENODATA when the agent sent no
 * metadata (there is no file to write), -ENOSPC when its data was dropped
 * for a full disk, or -errno of the write. */
int guest_write_file(struct guest *g, const char *path, uint64_t host_trace_id,
		     const struct tracedat_opts *run, struct tracedat_staged *out);
/*
 * Fills @pids[0..@n) with the host thread of each of @g's vCPUs when @g
 * is a local QEMU guest (host/guest/qemu.h): the QEMU with @g's vsock CID, or,
 * for a TCP agent, the one whose -name is @g's name; -1 where unknown (a
 * remote guest, QEMU without debug-threads=on). Returns how many it found.
 */
int guest_vcpu_threads(const struct guest *g, int32_t *pids, uint32_t n);
/* When the guest stopped because the disk filled up, drops its data so
 * that the host's file can be written; returns true if it did. */
bool guest_drop_if_disk_full(struct guest *g);
/* Prints the per-CPU summary lines. */
void guest_print_summary(const struct guest *g);
/* The CPUs of a synced guest that no sync round succeeded on (their
 * events cannot be corrected to the host's clock); the first in *@first.
 * 0 for a guest recorded without sync (negative --tsync-interval). */
uint32_t guest_cpus_never_synced(const struct guest *g, uint32_t *first);
/* Frees everything (temporary files included) and closes the session. */
void guest_free(struct guest *g);

#endif
