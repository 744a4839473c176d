// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One guest of `tsync-host record`: control session, periodic sync rounds,
 * per-CPU data receivers (socket -> checked pages -> temporary file,
 * host/guest/guest_rx.c), metadata, and the guest's trace.dat with its
 * TIME_SHIFT.
 *
 * Threads: during the recording only the sync thread uses the control
 * connection; each data receiver owns its socket and file. The main thread
 * touches the control connection again only after joining the sync thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/tsync_record.h"
#include "host/guest/agent_arg.h"
#include "host/guest/guest.h"
#include "host/guest/qemu.h"
#include "host/guest/guest_rx.h"

/* Connects, sets up the session and chooses the sync method; see guest.h. */
int guest_connect(struct guest *g, const struct peer_opts *o, const struct round_opts *ro)
{
	struct peer_opts po = *o;
	struct sync_target t;
	int ret;

	g->host_marker_fd = -1;
	/* the option words without argv[0] "record", for a dialect that
	 * takes them as the session opens */
	po.record = true;
	po.argc = g->argc ? g->argc - 1 : 0;
	po.argv = g->argc ? g->argv + 1 : NULL;
	/* what the hello offers: the methods usable before connecting */
	host_agent_target(&t, NULL, NULL, &g->ep, g->name, g->vm_pid);
	t.protocol = peer_dialect_name(g->dialect);
	po.methods = g->unsynced ? 0 : sync_method_offer(&t, ro);
	/* trace-cmd's dialect proposes kvm in its TRACE_REQ */
	po.kvm = !!(po.methods & TSYNC_METHOD_BIT(TSYNC_METHOD_KVM));
	ret = peer_open(g->dialect, &g->ep, &po, &g->peer, g->error, sizeof(g->error));
	if (ret)
		return g->status = ret;
	g->ncpus = peer_ncpus(g->peer);
	host_agent_target(&t, NULL, g->peer, &g->ep, g->name, g->vm_pid);
	ret = g->unsynced ? 0 : sync_method_open(&t, ro, &g->sm, g->error, sizeof(g->error));
	if (ret)
		return g->status = ret;
	if (g->sm && sync_method_fallback(g->sm)[0])
		log_warn("guest %s: method %s, not %s", g->name, sync_method_name(g->sm),
			 sync_method_fallback(g->sm));
	g->samples = calloc(g->ncpus, sizeof(*g->samples));
	g->rx = calloc(g->ncpus, sizeof(*g->rx));
	if (!g->samples || !g->rx)
		return g->status = -ENOMEM;
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		struct tsync_interval_cfg ic;

		tsync_interval_cfg_default(&ic);
		ret = tsync_interval_new(&ic, &g->samples[cpu].iv);
		if (ret)
			return g->status = ret;
	}
	return 0;
}

/* Checks that the agent can record; see guest.h. */
int guest_check_can_record(struct guest *g, const char *clock)
{
	int ret = peer_can_record(g->peer, clock, g->error, sizeof(g->error));

	return ret ? (g->status = ret) : 0;
}

/* Returns true once connected; see guest.h. */
bool guest_connected(const struct guest *g)
{
	return g->peer;
}

/* Returns the guest's trace id; see guest.h. */
uint64_t guest_trace_id(const struct guest *g)
{
	return g->peer ? peer_trace_id(g->peer) : 0;
}

/* Writes the round record of @r into the host's recorded instance, so the
 * host trace shows where and how well the clocks were aligned. */
static void write_round_record(const struct guest *g, const struct sync_result *r)
{
	struct tsync_rec_round rec = {
		.round = r->round,
		.cpu = r->cpu,
		.offset_ns = r->offset_ns,
		.error_ns = (uint64_t)r->error_ns,
		.delay_ns = r->probes.delay_ns > 0 ? (uint64_t)r->probes.delay_ns : 0,
		.used = r->probes.used,
		.sent = r->probes.sent,
	};

	if (g->host_marker_fd < 0)
		return;
	tsync_rec_hdr_init(&rec.hdr, TSYNC_REC_ROUND, sizeof(rec));
	memcpy(rec.peer, g->name, strnlen(g->name, sizeof(rec.peer) - 1));
	if (write(g->host_marker_fd, &rec, sizeof(rec)) != sizeof(rec))
		log_debug("round record: %s", strerror(errno));
}

/* Writes the host's time daemon state that @r was taken with (the
 * external method) into the host's recorded instance, so the host file
 * says what its clock's discipline was. */
static void write_clock_record(const struct guest *g, const struct sync_result *r)
{
	struct tsync_rec_clock rec;

	if (g->host_marker_fd < 0 || !r->has_host_clock)
		return;
	tsync_rec_clock_init(&rec, &r->host_clock, g->name);
	if (write(g->host_marker_fd, &rec, sizeof(rec)) != sizeof(rec))
		log_debug("clock record: %s", strerror(errno));
}

/* Appends the TIME_SHIFT sample of @r to @g's samples of its CPU. Returns
 * 0, or -ENOMEM, said: the file then lacks that sample, not the others. */
static int samples_push(struct guest *g, const struct sync_result *r)
{
	uint32_t cpu = r->cpu;
	struct guest_samples *gs = &g->samples[cpu];

	/* the changes the method saw: each cut drops what lies at or after
	 * it (the old relation's samples a change overtook, a cut a later
	 * one replaces) and goes in (room for it: the loop below) */
	for (uint32_t i = 0; i < r->ncut && i < SYNC_CUT_MAX; i++) {
		struct sync_result c = *r;

		while (gs->count && gs->s[gs->count - 1].ts >= r->cut[i].guest_ts)
			gs->count--;
		c.ncut = 0;
		c.guest_ts = r->cut[i].guest_ts;
		c.offset_ns = r->cut[i].offset_ns;
		c.scaling = 1;
		c.frac = 0;
		if (samples_push(g, &c))
			return -ENOMEM;
	}
	if (gs->count == gs->cap) {
		uint32_t cap = gs->cap ? gs->cap * 2 : 16;
		void *p = realloc(gs->s, cap * sizeof(*gs->s));

		if (!p) {
			log_err("%s: CPU %u: no memory for a TIME_SHIFT sample", g->name, cpu);
			return -ENOMEM;
		}
		gs->s = p;
		gs->cap = cap;
	}
	/* the method's own terms: host = (guest * scaling >> frac) + offset */
	gs->s[gs->count++] = (struct tracedat_ts_sample){ r->guest_ts, r->offset_ns, r->scaling,
							  r->frac };
	return 0;
}

/* Appends a TIME_SHIFT sample for CPU @cpu from sync result @r. One
 * without an error bound (SYNC_UNKNOWN: the agent estimated it) counts as
 * 0 for the adaptive interval and the live line, and leaves no round
 * record: it cannot say how well the clocks were aligned. */
static void add_sample(struct guest *g, const struct sync_result *r)
{
	struct guest_samples *gs = &g->samples[r->cpu];
	struct tsync_shift_sample s = { r->guest_ts, r->offset_ns };
	bool bounded = r->error_ns >= 0;
	int64_t bound = bounded ? r->error_ns : 0;

	write_clock_record(g, r);	/* synchronized or not: what it was */
	if (r->status) {
		gs->failed++;
		return;
	}
	if (samples_push(g, r))
		return;
	atomic_store(&g->live_offset_ns, s.offset_ns);
	atomic_store(&g->live_error_ns, bound);
	atomic_fetch_add(&g->live_rounds, 1);
	if (bounded)
		write_round_record(g, r);
	if (bound > gs->err_max)
		gs->err_max = bound;
	tsync_interval_add(gs->iv, &s, bound, NULL);
}

/* Runs one round per guest CPU; see guest.h. */
int guest_sync_all(struct guest *g, const struct round_opts *ro)
{
	for (uint32_t cpu = 0; g->sm && cpu < g->ncpus; cpu++) {
		const char *before = sync_method_name(g->sm);
		struct sync_result r;
		int ret = sync_method_sample(g->sm, cpu, ro, &r);

		if (strcmp(before, sync_method_name(g->sm)))
			log_warn("guest %s: method %s, %s", g->name, sync_method_name(g->sm),
				 sync_method_fallback(g->sm));

		if (r.status)
			log_warn("guest %s: round on CPU %u failed: %s", g->name, cpu, r.error);
		if (ret) {
			snprintf(g->error, sizeof(g->error), "sync: %s", r.error);
			return g->status = ret;
		}
		add_sample(g, &r);
	}
	return 0;
}

/* Opens the data connection of @cpu and starts its receiver. */
static int start_rx(struct guest *g, uint32_t cpu, const char *dir)
{
	int sock, ret;

	ret = peer_stream_open(g->peer, cpu, &sock, g->error, sizeof(g->error));
	if (ret)
		return ret;
	return rx_start(g->rxg, cpu, g->peer, sock, dir, &g->rx[cpu], g->error,
			sizeof(g->error));
}

/* Sets up the receivers' group: the page layout from the metadata. */
static int start_rx_group(struct guest *g)
{
	const struct tracedat_meta *m = tracemeta_meta(g->meta);
	uint32_t psz = peer_page_size(g->peer);
	struct page_format f;
	int ret;

	ret = page_format_init(&f, psz, m->header_page.data, m->header_page.len);
	if (ret) {
		snprintf(g->error, sizeof(g->error), "agent's page size %u is not usable", psz);
		return ret;
	}
	ret = rx_group_new(&f, g->max_bytes, &g->rxg);
	if (!ret)
		rx_group_keep_newest(g->rxg, g->max_kb);
	return ret;
}

/* Fetches the metadata into g->meta (replacing what it held). */
static int fetch_meta(struct guest *g)
{
	struct tracemeta *tm;
	int ret = peer_meta(g->peer, &tm, g->error, sizeof(g->error));

	if (ret)
		return ret;
	tracemeta_free(g->meta);
	g->meta = tm;
	return 0;
}

/* Starts tracing; see guest.h. */
int guest_start_trace(struct guest *g, const char *clock)
{
	/* the settings as option words (argv[0] is not sent) */
	struct peer_trace_opts to = { .clock = clock, .nargs = (uint32_t)g->argc - 1,
				      .args = g->argv + 1 };
	uint32_t nstreams = g->ncpus;
	int ret;

	ret = peer_trace_start(g->peer, &to, &nstreams, g->error, sizeof(g->error));
	if (ret)
		return g->status = ret;
	if (nstreams != g->ncpus)
		log_warn("guest %s: streams %u CPUs of %u", g->name, nstreams, g->ncpus);
	return 0;
}

/* Fetches the metadata and starts the data receivers; see guest.h. */
int guest_start_rx(struct guest *g, const char *dir, enum tracedat_compress zip)
{
	int ret;

	if (g->status)
		return g->status;
	/* Metadata now as well as after stop: should the guest vanish
	 * mid-recording, what was received is still a readable file. And
	 * the page layout, which the receivers check, is in it. */
	ret = fetch_meta(g);
	if (!ret)
		ret = start_rx_group(g);
	if (ret) {
		if (!g->error[0] || ret == -ENOMEM)
			snprintf(g->error, sizeof(g->error), "metadata: %s", strerror(-ret));
		return g->status = ret;
	}
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		ret = start_rx(g, cpu, dir);
		if (ret)
			return g->status = ret;
	}
	/* the receivers run: now the tens of ms of zstd its kallsyms would
	 * cost the write (a failure leaves them to the write) */
	if (tracemeta_precompress(g->meta, zip))
		log_debug("guest %s: kallsyms is compressed at the write", g->name);
	return 0;
}

struct sync_thread_arg {
	struct guest *g;
	struct guest_sync_opts o;
};

/* Returns the sync thread's next wait in ms: @interval_ms (-1: none until
 * the final round), or when that is 0 the shortest adaptive interval of
 * the CPUs; either at most the method's longest exact wait (a scaled
 * vCPU's span, for kvm). */
static int next_wait_ms(const struct guest *g, int interval_ms)
{
	int64_t ns = INT64_MAX;

	for (uint32_t cpu = 0; !interval_ms && cpu < g->ncpus; cpu++)
		if (tsync_interval_now(g->samples[cpu].iv) < ns)
			ns = tsync_interval_now(g->samples[cpu].iv);
	return tsync_interval_wait_ms(interval_ms, ns, sync_method_max_interval_ns(g->sm));
}

/* Body of the sync thread: rounds every interval, a final one at stop. */
static void *sync_thread(void *arg)
{
	struct sync_thread_arg *a = arg;
	struct guest *g = a->g;
	struct pollfd pfd = { .fd = a->o.stop_fd, .events = POLLIN };

	for (;;) {
		int ret = poll(&pfd, 1, next_wait_ms(g, a->o.interval_ms));

		if (ret < 0 && errno == EINTR)
			continue;
		if (guest_sync_all(g, &a->o.round))
			break;	/* connection broken: g->status says why */
		if (ret > 0)
			break;	/* that was the final round */
	}
	free(a);
	return NULL;
}

/* Starts the periodic sync thread; see guest.h. */
int guest_start_sync_thread(struct guest *g, const struct guest_sync_opts *o)
{
	struct sync_thread_arg *a = malloc(sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	a->g = g;
	a->o = *o;
	g->sync_interval_ms = o->interval_ms;
	ret = pthread_create(&g->sync_thread, NULL, sync_thread, a);
	if (ret) {
		free(a);
		return -ret;
	}
	g->sync_running = true;
	return 0;
}

/* Waits for the sync thread; see guest.h. */
void guest_join_sync_thread(struct guest *g)
{
	if (g->sync_running)
		pthread_join(g->sync_thread, NULL);
	g->sync_running = false;
}

/* Judges how CPU @cpu's receiver ended (@how, rx_join()): bad data, the
 * cap or a full disk fail the guest (the first one says why); a cut or a
 * broken stream is a warning. */
static void rx_ended(struct guest *g, uint32_t cpu, int how)
{
	struct guest_rx *rx = g->rx[cpu];

	if (how == -EBADMSG || how == -EFBIG || how == -ENOSPC) {
		if (how == -ENOSPC)
			g->disk_full = true;
		if (!g->data_status) {
			g->data_status = how;
			g->data_error = rx_error(rx);
		}
		return;
	}
	if (how != RX_EOF)
		log_warn("guest %s: CPU %u stream ended with %s after %llu bytes", g->name, cpu,
			 how < 0 ? rx_error(rx) : "a cut", (unsigned long long)rx_bytes(rx));
	else if (rx_error(rx)[0])
		log_warn("guest %s: CPU %u: %s", g->name, cpu, rx_error(rx));
}

/* Stops tracing, ends the streams, fetches metadata; see guest.h. */
int guest_stop_trace(struct guest *g, int timeout_ms)
{
	struct tracemeta *tm;
	int64_t deadline;
	int ret;

	memset(g->stop_t, 0, sizeof(g->stop_t));
	g->stop_t[GUEST_STOP_BEGIN] = tsync_now_ns();
	if (!g->status) {
		ret = peer_trace_stop(g->peer, timeout_ms, &g->stopped, g->error,
				      sizeof(g->error));
		if (ret)
			g->status = ret;
		else
			g->stop_t[GUEST_STOP_STOPPED] = tsync_now_ns();
	}
	/* The agent closes each stream after its final flush: EOF ends the
	 * receivers. The wait starts now, not before TRACE_STOP, so that a
	 * slow stop on a loaded guest does not eat the time of the tail.
	 * When the agent is gone, they end with an error; they are cut at
	 * the deadline otherwise. */
	deadline = tsync_deadline_ms(timeout_ms);
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++)
		if (g->rx[cpu])
			rx_ended(g, cpu, rx_join(g->rx[cpu], deadline));
	g->stop_t[GUEST_STOP_DRAINED] = tsync_now_ns();
	/* the end of the agent's recording, with the final metadata when
	 * the dialect sends it then (the guest's statistics at its stop) */
	if (!g->status) {
		ret = peer_wait(g->peer, &tm, g->error, sizeof(g->error));
		if (ret) {
			log_warn("guest %s: %s", g->name, g->error);
			g->status = ret;
		} else {
			g->stop_t[GUEST_STOP_META] = tsync_now_ns();
			if (tm) {
				/* kallsyms comes again: its compressed section too */
				tracemeta_take_precompressed(tm, g->meta);
				tracemeta_free(g->meta);
				g->meta = tm;
			}
		}
	}
	/* the data's fault says most about what went wrong */
	if (g->data_status) {
		g->status = g->data_status;
		snprintf(g->error, sizeof(g->error), "%s", g->data_error);
	}
	return g->status;
}

/* Formats the stop split; see guest.h. */
void guest_stop_split(const int64_t t[GUEST_STOP_N], char *buf, size_t len)
{
	static const char *const span[GUEST_STOP_N] = {
		[GUEST_STOP_STOPPED] = "agent's stop",
		[GUEST_STOP_DRAINED] = "streams' ends",
		[GUEST_STOP_META] = "final metadata",
	};
	int64_t prev = t[GUEST_STOP_BEGIN];
	size_t off = 0;
	int n;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = GUEST_STOP_BEGIN + 1; prev && i < GUEST_STOP_N; i++) {
		if (!t[i])
			continue;
		n = snprintf(buf + off, len - off, "%s%s %.1f", off ? ", " : "", span[i],
			     (double)(t[i] - prev) / 1e6);
		if (n < 0 || (size_t)n >= len - off)
			return;	/* cut: terminated by snprintf */
		off += (size_t)n;
		prev = t[i];
	}
	if (off && prev)
		snprintf(buf + off, len - off, "; total %.1f ms",
			 (double)(prev - t[GUEST_STOP_BEGIN]) / 1e6);
}

/* Writes the guest's trace.dat; see guest.h. */
int guest_write_file(struct guest *g, const char *path, uint64_t host_trace_id,
		     const struct tracedat_opts *run, struct tracedat_staged *out)
{
	struct tracedat_cpu_data *cpus = calloc(g->ncpus, sizeof(*cpus));
	struct tracedat_ts_cpu *ts = calloc(g->ncpus, sizeof(*ts));
	struct tracedat_time_shift shift = {
		.peer_traceid = host_trace_id,
		.flags = TRACEDAT_TSYNC_INTERPOLATE,
		.ncpu = g->ncpus,
		.cpus = ts,
	};
	struct tracedat_opts opts = {
		.has_traceid = 1,
		.traceid = guest_trace_id(g),
		.time_shift = &shift,
		.version = run->version,
		.format = run->format,
		.tsc2nsec = run->tsc2nsec,
		.ts_offset = g->ts_offset,
	};
	int ret;

	if (!cpus || !ts) {
		ret = -ENOMEM;
		goto out;
	}
	if (!g->meta) {
		snprintf(g->error, sizeof(g->error), "no metadata from the agent: cannot write %s", path);
		ret = -ENODATA;
		goto out;
	}
	if (g->data_dropped) {
		snprintf(g->error, sizeof(g->error), "not writing %s: its data was dropped to keep "
			 "the host's file (the disk filled up)", path);
		ret = -ENOSPC;
		goto out;
	}
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		struct stat st;
		struct guest_rx *rx = g->rx[cpu];

		cpus[cpu].fd = rx ? rx_file(rx) : -1;
		/* -m: only the newest data, from where it is kept */
		cpus[cpu].offset = rx ? (off_t)rx_keep_from(rx) : 0;
		if (rx && fstat(rx_file(rx), &st) == 0 && st.st_size >= cpus[cpu].offset)
			cpus[cpu].size = (uint64_t)(st.st_size - cpus[cpu].offset);
		ts[cpu].count = g->samples[cpu].count;
		ts[cpu].samples = g->samples[cpu].s;
	}
	/* trace-cmd writes both only after a time sync */
	if (g->unsynced) {
		opts.time_shift = NULL;
		opts.tsc2nsec = NULL;
	}
	/* the guest's ring-buffer stats at its stop (an older agent sends none) */
	opts.ncpustat = tracemeta_cpustat(g->meta, &opts.cpustat);
	ret = tracedat_stage_file(path, tracemeta_meta(g->meta), &opts, cpus, (int)g->ncpus, out);
	if (ret)
		snprintf(g->error, sizeof(g->error), "writing %s: %s", path, strerror(-ret));
out:
	free(cpus);
	free(ts);
	return ret;
}

/* The vCPU threads of a local QEMU guest; see guest.h. */
int guest_vcpu_threads(const struct guest *g, int32_t *pids, uint32_t n)
{
	struct host_qemu_guest *q = calloc(1, sizeof(*q));
	int found, known = 0;

	for (uint32_t i = 0; i < n; i++)
		pids[i] = -1;
	if (!q)
		return 0;
	/* CIDs 0-2 are not a VM's (any, hypervisor, host); 1 is loopback */
	if (g->ep.kind == TSYNC_EP_VSOCK)
		found = g->ep.cid > 2 && host_qemu_find(NULL, NULL, g->ep.cid, q) == 0;
	else
		found = host_qemu_find(NULL, g->name, 0, q) == 0;
	for (uint32_t i = 0; found && i < n && i < (uint32_t)q->nvcpu &&
			     i < HOST_QEMU_MAX_VCPUS; i++) {
		if (q->vcpu_tid[i] > 0) {
			pids[i] = (int32_t)q->vcpu_tid[i];
			known++;
		}
	}
	if (found)
		log_debug("guest %s: QEMU %d, %d of %u vCPU threads known", g->name,
			  (int)q->pid, known, n);
	free(q);
	return known;
}

/* Prints how many sync rounds ran per CPU, and why at that pace. */
static void print_sync_summary(const struct guest *g)
{
	struct tsync_interval_stats st, sum = { 0 };
	uint32_t lo = UINT32_MAX, hi = 0;

	if (!g->ncpus || !g->samples)
		return;
	if (g->unsynced) {
		printf("  sync: none (negative --tsync-interval): the guest's file is not "
		       "corrected to the host's clock\n");
		return;
	}
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		uint32_t n;

		tsync_interval_stats(g->samples[cpu].iv, &st);
		n = st.rounds + g->samples[cpu].failed;
		lo = n < lo ? n : lo;
		hi = n > hi ? n : hi;
		sum.grown += st.grown;
		sum.tightened += st.tightened;
		if (st.longest_ns > sum.longest_ns)
			sum.longest_ns = st.longest_ns;
		if (st.worst_miss_ns > sum.worst_miss_ns)
			sum.worst_miss_ns = st.worst_miss_ns;
	}
	if (g->sync_interval_ms < 0) {
		printf("  sync: %u..%u rounds per CPU, at the start and the end "
		       "(--tsync-interval 0)\n", lo, hi);
		return;
	}
	if (g->sync_interval_ms) {
		printf("  sync: %u..%u rounds per CPU, every %d ms (--tsync-interval)\n", lo, hi,
		       g->sync_interval_ms);
		return;
	}
	printf("  sync: %u..%u rounds per CPU, adaptive interval up to %.0f s: lengthened %u "
	       "times (the drift fit predicted the new sample within its error bound), "
	       "shortened %u times", lo, hi, sum.longest_ns / 1e9, sum.grown, sum.tightened);
	if (sum.tightened)
		printf(" (a sample off the prediction by up to %lld ns)",
		       (long long)sum.worst_miss_ns);
	printf("\n");
}

/* The CPUs no round succeeded on; see guest.h. */
uint32_t guest_cpus_never_synced(const struct guest *g, uint32_t *first)
{
	uint32_t n = 0;

	if (g->unsynced || !g->samples)
		return 0;
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		if (g->samples[cpu].count)
			continue;
		if (!n++)
			*first = cpu;
	}
	return n;
}

/* The summary's lines of the clock relation changes @m saw. */
static void print_changes(const struct sync_method *m)
{
	struct sync_changes c;
	uint32_t n;

	sync_method_changes(m, &c);
	n = c.at_event + c.at_reading;
	if (n)
		printf("  method %s: %u change%s of a CPU's offset or scaling seen: %u cut "
		       "where kvm:kvm_write_tsc_offset put it, %u at the sync after it\n",
		       sync_method_name(m), n, n == 1 ? "" : "s", c.at_event, c.at_reading);
	if (c.unconfirmed)
		printf("  method %s: %u kvm:kvm_write_tsc_offset write%s debugfs never showed: "
		       "not used\n", sync_method_name(m), c.unconfirmed,
		       c.unconfirmed == 1 ? "" : "s");
}

/* Prints the per-CPU summary; see guest.h. */
void guest_print_summary(const struct guest *g)
{
	printf("guest %s (%s): %u CPUs, protocol %s, method %s%s%s\n", g->name, g->agent_str,
	       g->ncpus, peer_dialect_name(g->dialect), g->sm ? sync_method_name(g->sm) : "none",
	       g->status ? ", ERROR: " : "", g->status ? g->error : "");
	if (g->sm && sync_method_fallback(g->sm)[0])
		printf("  method %s, not %s\n", sync_method_name(g->sm),
		       sync_method_fallback(g->sm));
	if (g->sm && sync_method_detail(g->sm)[0])
		printf("  clocks: %s\n", sync_method_detail(g->sm));
	if (g->sm)
		print_changes(g->sm);
	printf("  %4s %12s %10s %10s %10s %8s %24s %10s\n", "cpu", "bytes", "entries",
	       "lost", "dropped", "samples", "offset range (ns)", "drift ppm");
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		const struct guest_samples *gs = &g->samples[cpu];
		const struct tsync_cpu_stats *st = NULL;
		int64_t lo = 0, hi = 0;
		double ppm = 0;
		char drift[32] = "-";

		for (uint32_t i = 0; i < g->stopped.count; i++)
			if (g->stopped.cpus[i].cpu == cpu)
				st = &g->stopped.cpus[i];
		for (uint32_t i = 0; i < gs->count; i++) {
			if (!i || gs->s[i].offset < lo)
				lo = gs->s[i].offset;
			if (!i || gs->s[i].offset > hi)
				hi = gs->s[i].offset;
		}
		if (gs->count >= 2) {
			struct tsync_shift_sample *ss = calloc(gs->count, sizeof(*ss));

			if (ss) {
				for (uint32_t i = 0; i < gs->count; i++)
					ss[i] = (struct tsync_shift_sample){ gs->s[i].ts, gs->s[i].offset };
				if (!tsync_drift_fit(ss, gs->count, &ppm, NULL, NULL))
					snprintf(drift, sizeof(drift), "%.3f", ppm);
				free(ss);
			}
		}
		printf("  %4u %12llu %10llu %10llu %10llu %8u %11lld..%-12lld %10s\n", cpu,
		       /* what its file holds (-m: the newest only) */
		       (unsigned long long)(g->rx && g->rx[cpu] ? rx_bytes(g->rx[cpu]) -
					    rx_keep_from(g->rx[cpu]) : 0),
		       /* the agent's count; trace-cmd's sends none: what came */
		       (unsigned long long)(st ? st->entries : g->rx && g->rx[cpu] ?
					    rx_events(g->rx[cpu]) : 0),
		       (unsigned long long)(st ? st->overrun : 0),
		       (unsigned long long)(st ? st->dropped : 0), gs->count,
		       (long long)lo, (long long)hi, drift);
		if (st && (st->overrun || st->dropped))
			printf("  WARNING: guest %s CPU %u lost %llu events (overrun %llu, dropped %llu)\n",
			       g->name, cpu, (unsigned long long)(st->overrun + st->dropped),
			       (unsigned long long)st->overrun, (unsigned long long)st->dropped);
		if (gs->failed)
			printf("  WARNING: guest %s CPU %u: %u sync round(s) failed\n", g->name, cpu,
			       gs->failed);
	}
	print_sync_summary(g);
}

/* Drops the data of a guest that filled the disk; see guest.h. */
bool guest_drop_if_disk_full(struct guest *g)
{
	if (!g->disk_full || g->data_dropped)
		return false;
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++)
		if (g->rx[cpu])
			rx_drop_data(g->rx[cpu]);
	g->data_dropped = true;
	return true;
}

/* Frees everything; see guest.h. */
void guest_free(struct guest *g)
{
	for (uint32_t cpu = 0; g->rx && cpu < g->ncpus; cpu++)
		rx_free(g->rx[cpu]);
	free(g->rx);
	rx_group_free(g->rxg);
	for (uint32_t cpu = 0; g->samples && cpu < g->ncpus; cpu++) {
		free(g->samples[cpu].s);
		tsync_interval_free(g->samples[cpu].iv);
	}
	free(g->samples);
	free(g->stopped.cpus);
	tracemeta_free(g->meta);
	sync_method_close(g->sm);
	g->sm = NULL;
	peer_free(g->peer);
	g->peer = NULL;
}
