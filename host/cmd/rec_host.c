// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's part of a `record`; see rec_host.h.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "host/cmd/rec_host.h"
#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/stream/streamer.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/ringbuf.h"
#include "common/tracefs/stale.h"
#include "common/tracefs/watermark.h"
#include "common/tracemeta/tracemeta.h"
#include "host/cmd/status_live.h"
#include "host/guest/guest.h"

/* Creates and configures the host instance (tracing still off). */
static int host_instance(struct host_rec *h, const struct rec_cfg *cfg,
			 char *err, size_t errlen)
{
	/* our own threads are left out (trace-cmd does the same with its
	 * own); the streamers, started later, by event-fork and function-fork
	 * at their clone, and threads after them once the recording runs
	 * (rec_run()). With -P but not -c the forks are not followed (they
	 * would make -P follow the children its processes fork meanwhile, as
	 * the agent does), and -P alone keeps the streamers out. */
	struct tsync_instance_recipe rp = {
		.prefix = "tsync-host", .opt = &cfg->opt.inst, .clock = cfg->opt.clock,
		.buffer_kb = cfg->opt.inst.buffer_kb, .only_pid = h->only_pid,
		.hide_self = !cfg->opt.no_filter,
		.follow_new = !cfg->opt.inst.npids || cfg->opt.inst.follow_children,
		.self = "tsync-host", .take_top_in_use = cfg->opt.borrow_top_in_use,
		.events = cfg->nevents ? h->events : NULL,
		.enable_events = tracemeta_enable_events,
	};

	/* Instances of killed tsync programs: their owner lock is free. */
	if (tsync_instance_cleanup_all_stale() > 0)
		log_info("removed instances of killed tsync programs");
	return tsync_instance_from_recipe(&rp, &h->ti, NULL, err, errlen);
}

/* The metadata thread: collects what the file needs while COMMAND runs. */
static void *meta_main(void *arg)
{
	struct host_rec *h = arg;
	struct tracemeta_opts mo = { .kallsyms = true };

	h->meta_ret = tracemeta_collect(tsync_instance_tracefs(h->ti), &mo, &h->meta);
	/* kallsyms compressed now, not after COMMAND (tens of ms of zstd);
	 * a failure leaves it to the write */
	if (!h->meta_ret && tracemeta_precompress(h->meta, h->meta_zip))
		log_debug("kallsyms is compressed at the write");
	return NULL;
}

/* Closes the trace_pipe_raw descriptors no streamer took over. */
static void close_src(struct host_rec *h)
{
	for (int cpu = 0; h->src && cpu < h->ncpus; cpu++)
		if (h->src[cpu] >= 0)
			close(h->src[cpu]);
	free(h->src);
	h->src = NULL;
}

/* Notes each CPU's "read events" after the arming, which read its
 * marker and whatever else the moment held: the summary counts the
 * recording's own. */
static void arm_baseline(struct host_rec *h)
{
	h->arm_read = calloc((size_t)h->ncpus, sizeof(*h->arm_read));
	for (int cpu = 0; h->arm_read && cpu < h->ncpus; cpu++) {
		struct tracemeta_stats st;

		if (!tracemeta_read_stats(tsync_instance_tracefs(h->ti), cpu, &st, NULL))
			h->arm_read[cpu] = st.read_events;
		log_debug("host CPU %d: %llu events read out before the recording", cpu,
			  h->arm_read ? (unsigned long long)h->arm_read[cpu] : 0ULL);
	}
}

/* Opens every CPU's trace_pipe_raw for the streamers. */
static int open_cpus(struct host_rec *h, char *err, size_t errlen)
{
	h->src = malloc((size_t)h->ncpus * sizeof(int));
	if (!h->src)
		return -ENOMEM;
	for (int cpu = 0; cpu < h->ncpus; cpu++)
		h->src[cpu] = -1;
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		h->src[cpu] = tsync_ringbuf_open_cpu(tsync_instance_tracefs(h->ti), cpu);
		if (h->src[cpu] < 0) {
			int ret = h->src[cpu];

			snprintf(err, errlen, "streaming host CPU %d: trace_pipe_raw: %s", cpu,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Creates the host instance and starts its streamers into temp files. */
int host_start(struct host_rec *h, const struct rec_cfg *cfg, const char *dir,
		      char *err, size_t errlen)
{
	/* -s: how often the streamers also look for data, at least every ms;
	 * 0: never, only when the kernel wakes them at buffer_percent. Not
	 * given: its default (TSYNC_STREAMER_LOOK_MS) only where the data of
	 * a quiet CPU shows before the end (the live status line, -m), else
	 * never: a quiet CPU is not woken once a second for nothing */
	int look_us = cfg->opt.sleep_given || cfg->opt.max_kb ||
		      status_live_wanted(STDERR_FILENO) ? cfg->opt.sleep_us : 0;
	struct tsync_streamer_opts so = { .poll_ms = look_us <= 0 ? TSYNC_STREAMER_NO_POLL :
						     look_us < 1000 ? 1 : look_us / 1000,
					  .max_kb = cfg->opt.max_kb };
	int ret;

	h->ncpus = tsync_cpu_count();
	h->marker_fd = -1;
	h->files = calloc((size_t)h->ncpus, sizeof(int));
	h->streamers = calloc((size_t)h->ncpus, sizeof(*h->streamers));
	if (!h->files || !h->streamers)
		return -ENOMEM;
	for (int i = 0; i < h->ncpus; i++)
		h->files[i] = -1;
	ret = host_instance(h, cfg, err, errlen);
	if (ret)
		return ret;
	ret = open_cpus(h, err, errlen);
	if (ret)
		return ret;
	/* before any streamer sleeps: else each is woken a page into the
	 * recording for nothing (common/tracefs/watermark.h) */
	ret = tsync_watermark_arm(tsync_instance_tracefs(h->ti), h->src, h->ncpus);
	if (ret < 0)
		log_debug("buffer_percent's wake-up not armed: %s", strerror(-ret));
	else
		log_debug("buffer_percent's wake-up armed on %d of %d CPUs", ret, h->ncpus);
	arm_baseline(h);
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		h->files[cpu] = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (h->files[cpu] < 0) {
			ret = -errno;
			snprintf(err, errlen, "temporary file in %.200s: %s", dir, strerror(errno));
			return ret;
		}
		ret = tsync_streamer_start_fd(tsync_instance_tracefs(h->ti), cpu, h->src[cpu],
					      h->files[cpu], &so, &h->streamers[cpu]);
		h->src[cpu] = -1;	/* the streamer's now, closed with it */
		if (ret) {
			snprintf(err, errlen, "streaming host CPU %d: %s", cpu, strerror(-ret));
			return ret;
		}
	}
	h->marker_fd = tsync_instance_marker_fd(h->ti);
	h->meta_zip = tracedat_format_zip(&cfg->run_opts.format);
	/* the formats and kallsyms (MBs) while COMMAND runs, not after it;
	 * a thread that cannot start leaves it to host_write() */
	h->meta_running = !pthread_create(&h->meta_thr, NULL, meta_main, h);
	/* the streamers and the metadata thread run: the switches and
	 * wakeups that name them are left out from the first event on */
	if (!cfg->opt.no_filter && tsync_instance_filter_self(h->ti))
		log_warn("switches and wakeups of tsync-host's threads stay in the trace");
	if (tsync_instance_start(h->ti)) {
		snprintf(err, errlen, "cannot turn tracing on in %s", tsync_instance_name(h->ti));
		return -EIO;
	}
	return 0;
}

/* Waits for the metadata thread; the metadata it collected, or NULL with
 * the error in *@ret (not started: collected now). */
static struct tracemeta *meta_take(struct host_rec *h, int *ret)
{
	struct tracemeta_opts mo = { .kallsyms = true };
	struct tracemeta *tm = NULL;

	if (!h->meta_running && !h->meta_done) {
		*ret = h->ti ? tracemeta_collect(tsync_instance_tracefs(h->ti), &mo, &tm) :
			       -ENOENT;
		return tm;
	}
	if (h->meta_running)
		pthread_join(h->meta_thr, NULL);
	h->meta_running = false;
	h->meta_done = false;
	tm = h->meta;
	h->meta = NULL;
	*ret = h->meta_ret;
	/* who ran is known only now */
	if (!*ret)
		*ret = tracemeta_refresh_cmdlines(tm);
	if (*ret) {
		tracemeta_free(tm);
		tm = NULL;
	}
	return tm;
}


/* Leaves the stopped instance's removal to a process of its own (tens of
 * ms of RCU grace periods in the kernel, which this process would
 * otherwise wait for before it exits), then frees the streamers: the
 * remover has copies of their trace_pipe_raw files and closes them once
 * ours are, so that their last close, which waits for the kernel's
 * tracing lock while any instance is being removed (a loopback agent's),
 * is the remover's. */
static void host_rm_start(struct host_rec *h)
{
	int go;

	tsync_instance_destroy_detached(h->ti, &go);	/* closes marker_fd */
	h->ti = NULL;
	h->marker_fd = -1;
	close_src(h);
	for (int cpu = 0; h->streamers && cpu < h->ncpus; cpu++)
		tsync_streamer_free(h->streamers[cpu]);
	free(h->streamers);
	h->streamers = NULL;
	if (go >= 0)
		close(go);	/* the remover's closes are the last ones */
}

/* Reads what host_write() needs of the stopped instance: the figures of
 * each CPU, where -m keeps the data from and (without the metadata
 * thread) the metadata. */
static void host_read_stopped(struct host_rec *h)
{
	struct tracemeta_opts mo = { .kallsyms = true };

	h->stats = calloc((size_t)h->ncpus, sizeof(*h->stats));
	h->cpustat = calloc((size_t)h->ncpus, sizeof(*h->cpustat));
	h->keep_from = calloc((size_t)h->ncpus, sizeof(*h->keep_from));
	for (int cpu = 0; h->stats && h->cpustat && h->keep_from && cpu < h->ncpus; cpu++) {
		h->keep_from[cpu] = h->streamers[cpu] ?
				    tsync_streamer_keep_from(h->streamers[cpu]) : 0;
		tracemeta_read_stats(tsync_instance_tracefs(h->ti), cpu, &h->stats[cpu],
				     &h->cpustat[cpu]);
	}
	/* the metadata thread reads the instance's files: done before the
	 * removal (it ran while COMMAND did) */
	if (h->meta_running)
		pthread_join(h->meta_thr, NULL);
	else
		h->meta_ret = tracemeta_collect(tsync_instance_tracefs(h->ti), &mo, &h->meta);
	h->meta_running = false;
	h->meta_done = true;
}

/* Stops host tracing and its streamers; see rec_host.h. */
void host_stop(struct host_rec *h)
{
	if (!h->ti || h->stats)
		return;		/* stopped already */
	tsync_instance_stop(h->ti);
	for (int cpu = 0; h->streamers && cpu < h->ncpus; cpu++) {
		if (!h->streamers[cpu])
			continue;
		int ret = tsync_streamer_stop(h->streamers[cpu]);

		if (ret)
			log_warn("host CPU %d stream: %s", cpu, strerror(-ret));
	}
	if (h->streamers)
		host_read_stopped(h);
}

/* Starts the removal of the stopped instance; see rec_host.h. */
void host_remove_start(struct host_rec *h)
{
	/* nothing of the instance is read from here on */
	if (h->ti && h->stats)
		host_rm_start(h);
}

/* Removes the host instance and frees everything. */
void host_free(struct host_rec *h)
{
	if (h->meta_running)
		pthread_join(h->meta_thr, NULL);
	h->meta_running = false;
	tracemeta_free(h->meta);
	h->meta = NULL;
	for (int cpu = 0; h->cpustat && cpu < h->ncpus; cpu++)
		free(h->cpustat[cpu]);
	free(h->cpustat);
	free(h->stats);
	free(h->keep_from);
	free(h->arm_read);
	close_src(h);
	for (int cpu = 0; h->streamers && cpu < h->ncpus; cpu++)
		tsync_streamer_free(h->streamers[cpu]);
	for (int cpu = 0; h->files && cpu < h->ncpus; cpu++)
		if (h->files[cpu] >= 0)
			close(h->files[cpu]);
	tsync_instance_destroy(h->ti);	/* closes marker_fd */
	free(h->files);
	free(h->streamers);
	tracemeta_events_free(h->events);
}

/* Writes the host's trace.dat; prints the host summary. */
int host_write(struct host_rec *h, const struct rec_cfg *cfg, uint64_t trace_id,
	       struct rec_phases *ph, struct tracedat_staged *out, char *err, size_t errlen)
{
	struct tracedat_guest guests[MAX_GUESTS];
	int32_t *vcpu_pids[MAX_GUESTS] = { NULL };
	struct tracedat_cpu_data *cpus = calloc((size_t)h->ncpus, sizeof(*cpus));
	struct tracemeta *tm = NULL;
	struct tracedat_opts opts = cfg->run_opts;
	int ng = 0, ret;

	if (!cpus || !h->stats || !h->cpustat || !h->keep_from) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < cfg->nguests; i++) {
		const struct guest *g = &cfg->guests[i];

		if (!guest_connected(g))
			continue;
		/* the host thread of each vCPU, for a local QEMU guest */
		vcpu_pids[ng] = calloc(g->ncpus ? g->ncpus : 1, sizeof(int32_t));
		if (vcpu_pids[ng])
			guest_vcpu_threads(g, vcpu_pids[ng], g->ncpus);
		guests[ng] = (struct tracedat_guest){ g->name, guest_trace_id(g), g->ncpus,
						      vcpu_pids[ng] };
		ng++;
	}
	opts.has_traceid = 1;
	opts.traceid = trace_id;
	opts.ts_offset = cfg->opt.ts_offset;
	opts.guests = guests;
	opts.nguests = ng;
	tm = meta_take(h, &ret);
	rec_phase_mark(ph, REC_PH_HOST_META);
	if (ret) {
		snprintf(err, errlen, "host metadata: %s", strerror(-ret));
		goto out;
	}
	printf("host: %d CPUs, clock %s%s%s%s\n  %4s %12s %10s %10s %10s\n", h->ncpus,
	       cfg->opt.clock, cfg->clock_why[0] ? " (" : "", cfg->clock_why,
	       cfg->clock_why[0] ? ")" : "", "cpu", "bytes", "entries", "lost", "dropped");
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		struct tracemeta_stats st = h->stats[cpu];
		struct stat sb;

		cpus[cpu].fd = h->files[cpu];
		/* -m: only the newest data, from where it is kept */
		cpus[cpu].offset = (off_t)h->keep_from[cpu];
		if (fstat(h->files[cpu], &sb) == 0 && sb.st_size >= cpus[cpu].offset)
			cpus[cpu].size = (uint64_t)(sb.st_size - cpus[cpu].offset);
		if (h->arm_read && st.read_events >= h->arm_read[cpu])
			st.read_events -= h->arm_read[cpu];
		printf("  %4d %12llu %10llu %10llu %10llu\n", cpu, (unsigned long long)cpus[cpu].size,
		       (unsigned long long)st.read_events,
		       (unsigned long long)(st.overrun + st.commit_overrun),
		       (unsigned long long)st.dropped_events);
		if (st.overrun || st.commit_overrun || st.dropped_events)
			printf("  WARNING: host CPU %d lost %llu events\n", cpu,
			       (unsigned long long)(st.overrun + st.commit_overrun + st.dropped_events));
	}
	opts.cpustat = (const char *const *)h->cpustat;
	opts.ncpustat = h->ncpus;
	ret = tracedat_stage_file(cfg->opt.output, tracemeta_meta(tm), &opts, cpus, h->ncpus, out);
	if (ret)
		snprintf(err, errlen, "writing %s: %s", cfg->opt.output, strerror(-ret));
out:
	for (int i = 0; i < ng; i++)
		free(vcpu_pids[i]);
	free(cpus);
	tracemeta_free(tm);
	return ret;
}
