// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `tsync-host record`: record the host and its guests at once into
 * trace.dat files that trace-cmd merges onto one corrected timeline.
 *
 * Order of operations: connect every guest and run one sync round per
 * guest CPU; set up the host's private instance (clock, buffer, events) and
 * its per-CPU streamers into temporary files; start tracing on every guest
 * (unknown events are refused there before any data flows) and open its
 * per-CPU data connections; start the periodic sync threads (guests sync
 * concurrently); run until COMMAND exits, --duration passes or a signal;
 * then final sync round, stop, drain, fetch metadata, and write the files
 * (atomically: a file that exists is complete).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <tracefs.h>

#include "common/streamer.h"
#include "common/cpu.h"
#include "common/instance.h"
#include "common/log.h"
#include "common/opt.h"
#include "common/stamp.h"
#include "common/timeutil.h"
#include "common/tsc2nsec.h"
#include "common/tracemeta.h"
#include "proto/tsync_record.h"
#include "host/agent_arg.h"
#include "host/commands.h"
#include "host/cancel.h"
#include "host/client.h"
#include "host/cpu_locks.h"
#include "host/guest.h"
#include "host/outfile.h"
#include "host/preflight.h"
#include "host/status.h"
#include "host/status_live.h"
#include "host/rec_signals.h"

#define MAX_GUESTS HOST_MAX_AGENTS
#define MAX_EVENTS 256
#define STR_(x) #x
#define STR(x) STR_(x)

struct rec_cfg {
	const char *clock;
	const char *output;
	const char *key_file;
	int interval_ms;
	uint32_t guest_max_mb;		/* cap of each guest's data; 0: none */
	double duration;
	int verbose;
	bool quiet;			/* no live status line */
	enum tsync_stamp_source source;
	int stamp_forced;
	/* host */
	struct tracemeta_event_spec events[MAX_EVENTS];
	int nevents;
	int file_version;		/* --file-version, 0: not given */
	const char *compression;	/* --compression, NULL: not given */
	struct tracedat_opts run_opts;	/* what every file written shares */
	struct tracedat_tsc2nsec tsc2nsec;
	uint32_t buffer_kb;
	/* guests */
	struct guest guests[MAX_GUESTS];
	struct tsync_trace_event *gevents[MAX_GUESTS];
	int nguests;
	char **command;
};

enum { O_EVENT = 1, O_FILTER, O_BUFKB, O_CLOCK, O_OUTPUT, O_AGENT, O_INTERVAL, O_DURATION,
       O_STAMP, O_KEYFILE, O_GUESTMAX, O_VERBOSE, O_QUIET, O_HELP, O_FILEVER, O_COMPRESSION };

static const char *const stamps[] = { "marker", "clock", "tsc", NULL };
static const char *const compressions[] = { "any", "none", "zstd", "zlib", NULL };

/* The options of `tsync-host record`, as trace-cmd record names those they
 * share; tsync-host(1) documents each (tests/e2e/manpages.sh checks the
 * defaults agree). -e, -f and -b after an -A apply to that guest. */
static const struct tsync_opt rec_opts[] = {
	{ .id = O_EVENT, .short_name = 'e', .type = TSYNC_OPT_STRING, .arg = "EVENT",
	  .flags = TSYNC_OPT_REPEAT, .def_text = "no events",
	  .help = "system:event, system or all" },
	{ .id = O_FILTER, .short_name = 'f', .type = TSYNC_OPT_STRING, .arg = "FILTER",
	  .flags = TSYNC_OPT_REPEAT, .help = "filter for the preceding -e" },
	{ .id = O_BUFKB, .short_name = 'b', .type = TSYNC_OPT_INT, .arg = "KB",
	  .flags = TSYNC_OPT_SCOPED, .min = 1, .max = 16 * 1024 * 1024,
	  .def_text = "the kernel's default", .help = "per-CPU buffer size in KiB" },
	{ .id = O_CLOCK, .short_name = 'C', .type = TSYNC_OPT_STRING, .arg = "CLOCK",
	  .def = "local", .help = "trace clock of host and guests" },
	{ .id = O_OUTPUT, .short_name = 'o', .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def = "trace.dat",
	  .help = "host output; a guest's file is FILE with -NAME before the extension" },
	{ .id = O_AGENT, .short_name = 'A', .type = TSYNC_OPT_STRING, .arg = "AGENT[@NAME]",
	  .flags = TSYNC_OPT_REPEAT | TSYNC_OPT_NEW_SCOPE,
	  .help = "record a guest, up to " STR(MAX_GUESTS) "; -e, -f and -b after it "
		  "apply to it" },
	{ .id = O_INTERVAL, .name = "tsync-interval", .type = TSYNC_OPT_INT, .arg = "MS",
	  .min = 1, .max = 3600000, .def_text = "adaptive",
	  .help = "sync every MS ms while recording; without it from 1 s up to 16 s "
		  "while the drift stays predictable" },
	{ .id = O_FILEVER, .name = "file-version", .type = TSYNC_OPT_INT, .arg = "N",
	  .min = 6, .max = 7, .def = "7", .help = "trace.dat version" },
	{ .id = O_COMPRESSION, .name = "compression", .type = TSYNC_OPT_CHOICE,
	  .arg = "ALGO", .choices = compressions, .def_text = "zstd; none for version 6",
	  .help = "trace.dat compression; implies version 7" },
	{ .id = O_DURATION, .name = "duration", .type = TSYNC_OPT_DOUBLE, .arg = "SECONDS",
	  .min = 0, .max = 1e7, .def_text = "no limit", .help = "stop after SECONDS" },
	{ .id = O_STAMP, .name = "stamp", .type = TSYNC_OPT_CHOICE, .arg = "SOURCE",
	  .choices = stamps, .def_text = "chosen from the clock",
	  .help = "timestamp source" },
	{ .id = O_KEYFILE, .name = "key-file", .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def_text = "no key", .help = "authenticate to the agents with this shared key" },
	{ .id = O_GUESTMAX, .name = "guest-max-mb", .type = TSYNC_OPT_INT, .arg = "MB",
	  .def = "4096", .min = 0, .max = 16 * 1024 * 1024,
	  .help = "stop a guest that sends more than MB MiB of data; 0: no cap" },
	{ .id = O_VERBOSE, .name = "verbose", .short_name = 'v', .type = TSYNC_OPT_FLAG,
	  .help = "debug logging" },
	{ .id = O_QUIET, .name = "quiet", .short_name = 'q', .type = TSYNC_OPT_FLAG,
	  .help = "no live status line on the terminal" },
	{ .id = O_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	{ 0 }
};

static const struct tsync_opt_cmd rec_cmd = {
	.prog = "tsync-host record",
	.synopsis = "usage: tsync-host record [HOST OPTIONS] [-A AGENT[@NAME] [GUEST OPTIONS]]...\n"
		    "                         [-- COMMAND [ARGS]]\n",
	.epilogue = "Recording stops when COMMAND exits, after --duration, or on SIGINT or\n"
		    "SIGTERM; a second SIGINT aborts without waiting for the data.\n",
	.opts = rec_opts,
	.stop_at_operand = true,
};

/* -e: adds @name to the host's events or, after an -A, to guest @g's. */
static int add_event(struct rec_cfg *cfg, struct guest *g, const char *name,
		     char *err, size_t errlen)
{
	if (!g) {
		if (cfg->nevents >= MAX_EVENTS)
			return snprintf(err, errlen, "more than %d events", MAX_EVENTS), -1;
		cfg->events[cfg->nevents++] = (struct tracemeta_event_spec){ name, NULL };
		return 0;
	}
	if (g->nevents >= MAX_EVENTS)
		return snprintf(err, errlen, "more than %d events for %s", MAX_EVENTS,
				g->agent_str), -1;
	if (strlen(name) >= TSYNC_EVENT_NAME_MAX)
		return snprintf(err, errlen, "event name too long"), -1;
	snprintf(g->events[g->nevents].name, TSYNC_EVENT_NAME_MAX, "%s", name);
	g->events[g->nevents].filter = (char *)"";
	g->nevents++;
	return 0;
}

/* -A AGENT[@NAME]: adds a guest (the scope of the -e, -f, -b after it). */
static int add_guest(struct rec_cfg *cfg, char *arg, char *err, size_t errlen)
{
	struct host_agent_arg a;
	struct guest *g;

	if (cfg->nguests >= MAX_GUESTS)
		return snprintf(err, errlen, "at most %d guests", MAX_GUESTS), -1;
	if (host_agent_arg_parse(arg, cfg->nguests, &a, err, errlen))
		return -1;
	for (int i = 0; i < cfg->nguests; i++)
		if (!strcmp(cfg->guests[i].name, a.name))
			return snprintf(err, errlen, "two guests named '%s'", a.name), -1;
	g = &cfg->guests[cfg->nguests];
	cfg->gevents[cfg->nguests] = calloc(MAX_EVENTS, sizeof(struct tsync_trace_event));
	if (!cfg->gevents[cfg->nguests])
		return snprintf(err, errlen, "out of memory"), -1;
	g->events = cfg->gevents[cfg->nguests];
	cfg->nguests++;
	g->ep = a.ep;
	snprintf(g->name, sizeof(g->name), "%s", a.name);
	/* messages name the agent without its @NAME */
	g->agent_str = arg;
	if (strrchr(arg, '@'))
		*strrchr(arg, '@') = '\0';
	return 0;
}

/* Stores one option value into the struct rec_cfg @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct rec_cfg *cfg = ctx;
	struct guest *g = cfg->nguests ? &cfg->guests[cfg->nguests - 1] : NULL;

	switch (o->id) {
	case O_EVENT: return add_event(cfg, g, v->str, err, errlen);
	case O_FILTER:
		if (g ? !g->nevents : !cfg->nevents)
			return snprintf(err, errlen, "must follow an -e"), -1;
		if (strlen(v->str) >= TSYNC_FILTER_MAX)
			return snprintf(err, errlen, "filter too long"), -1;
		if (g ? *g->events[g->nevents - 1].filter : !!cfg->events[cfg->nevents - 1].filter)
			return snprintf(err, errlen, "a second -f for the same -e"), -1;
		if (g)
			g->events[g->nevents - 1].filter = (char *)v->str;
		else
			cfg->events[cfg->nevents - 1].filter = v->str;
		return 0;
	case O_BUFKB:
		*(g ? &g->buffer_kb : &cfg->buffer_kb) = (uint32_t)v->num;
		return 0;
	case O_CLOCK:
		if (!*v->str || strlen(v->str) >= TSYNC_CLOCK_NAME_MAX)
			return snprintf(err, errlen, "not a trace clock name"), -1;
		cfg->clock = v->str;
		return 0;
	case O_OUTPUT: cfg->output = v->str; return 0;
	case O_AGENT: return add_guest(cfg, (char *)v->str, err, errlen);
	case O_INTERVAL: cfg->interval_ms = (int)v->num; return 0;	/* 0: adaptive */
	case O_DURATION: cfg->duration = v->dbl; return 0;
	case O_STAMP:
		if (tsync_stamp_source_parse(v->str, &cfg->source))
			return snprintf(err, errlen, "unknown source"), -1;
		cfg->stamp_forced = 1;
		return 0;
	case O_KEYFILE: cfg->key_file = v->str; return 0;
	case O_GUESTMAX: cfg->guest_max_mb = (uint32_t)v->num; return 0;
	case O_VERBOSE: cfg->verbose++; return 0;
	case O_QUIET: cfg->quiet = true; return 0;
	case O_FILEVER: cfg->file_version = (int)v->num; return 0;
	case O_COMPRESSION: cfg->compression = v->str; return 0;
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Parses the command line into @cfg or exits. */
static void parse_args(int argc, char **argv, struct rec_cfg *cfg)
{
	int first = tsync_opt_parse_or_exit(&rec_cmd, argc, argv, set_opt, cfg);

	/* COMMAND, after "--" or not (as trace-cmd accepts both) */
	if (first < argc)
		cfg->command = argv + first;
	if (!cfg->stamp_forced)
		cfg->source = tsync_stamp_default(cfg->clock);
	/* the table allows only names and versions this accepts */
	tracedat_format_from_args(cfg->file_version, cfg->compression, &cfg->run_opts.format);
	cfg->run_opts.version = "tsync 0.1";
	/* x86-tsc timestamps print as nanoseconds with it, as trace-cmd's */
	if (!strcmp(cfg->clock, "x86-tsc") && tsync_tsc2nsec_read(&cfg->tsc2nsec) == 0)
		cfg->run_opts.tsc2nsec = &cfg->tsc2nsec;
}

struct host_rec {
	struct tsync_instance *ti;
	int ncpus;
	int *files;
	struct tsync_streamer **streamers;
	int marker_fd;
	struct tracemeta_events *events;
};

/* Creates and configures the host instance (tracing still off). */
static int host_instance(struct host_rec *h, const struct rec_cfg *cfg,
			 char *err, size_t errlen)
{
	int ret;

	/* Instances of killed recorders: their owner lock is free. */
	if (tsync_instance_cleanup_stale("tsync-host") > 0)
		log_info("removed instances of killed recorders");
	ret = tsync_instance_create("tsync-host", &h->ti);
	if (ret) {
		snprintf(err, errlen, "cannot create tracefs instance: %s", strerror(-ret));
		return ret;
	}
	if (tsync_instance_set_clock(h->ti, cfg->clock)) {
		snprintf(err, errlen, "trace clock '%s' not available on the host", cfg->clock);
		return -EINVAL;
	}
	if (cfg->buffer_kb && tsync_instance_set_buffer_kb(h->ti, cfg->buffer_kb)) {
		snprintf(err, errlen, "cannot set the host buffer to %u KiB", cfg->buffer_kb);
		return -EINVAL;
	}
	/* Wake the streamers at 10% fill, not the kernel's 50%: a streamer
	 * that is late then still has 90% of the buffer before events are
	 * lost (measured by bench_05_record on a loaded machine). */
	if (tsync_instance_set_buffer_percent(h->ti, 10))
		log_warn("cannot set buffer_percent of %s", tsync_instance_name(h->ti));
	if (cfg->nevents)
		return tsync_instance_enable_events(h->ti, h->events, err, errlen);
	return 0;
}

/* Creates the host instance and starts its streamers into temp files. */
static int host_start(struct host_rec *h, const struct rec_cfg *cfg, const char *dir,
		      char *err, size_t errlen)
{
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
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		h->files[cpu] = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (h->files[cpu] < 0) {
			ret = -errno;
			snprintf(err, errlen, "temporary file in %.200s: %s", dir, strerror(errno));
			return ret;
		}
		ret = tsync_streamer_start(tsync_instance_tracefs(h->ti), cpu, h->files[cpu],
					   NULL, &h->streamers[cpu]);
		if (ret) {
			snprintf(err, errlen, "streaming host CPU %d: %s", cpu, strerror(-ret));
			return ret;
		}
	}
	h->marker_fd = tsync_instance_marker_fd(h->ti);
	if (tsync_instance_start(h->ti)) {
		snprintf(err, errlen, "cannot turn tracing on in %s", tsync_instance_name(h->ti));
		return -EIO;
	}
	return 0;
}

/* Stops host tracing and its streamers. */
static void host_stop(struct host_rec *h)
{
	if (h->ti)
		tsync_instance_stop(h->ti);
	for (int cpu = 0; h->streamers && cpu < h->ncpus; cpu++) {
		if (!h->streamers[cpu])
			continue;
		int ret = tsync_streamer_stop(h->streamers[cpu]);

		if (ret)
			log_warn("host CPU %d stream: %s", cpu, strerror(-ret));
	}
}

/* Removes the host instance and frees everything. */
static void host_free(struct host_rec *h)
{
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
static int host_write(struct host_rec *h, const struct rec_cfg *cfg, uint64_t trace_id,
		      char *err, size_t errlen)
{
	struct tracedat_guest guests[MAX_GUESTS];
	int32_t *vcpu_pids[MAX_GUESTS] = { NULL };
	struct tracedat_cpu_data *cpus = calloc((size_t)h->ncpus, sizeof(*cpus));
	char **cpustat = calloc((size_t)h->ncpus, sizeof(char *));
	struct tracemeta_opts mo = { .kallsyms = true };
	struct tracemeta *tm = NULL;
	struct tracedat_opts opts = cfg->run_opts;
	int ng = 0, ret;

	if (!cpus || !cpustat) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < cfg->nguests; i++) {
		const struct guest *g = &cfg->guests[i];

		if (!g->client)
			continue;
		/* the host thread of each vCPU, for a local QEMU guest */
		vcpu_pids[ng] = calloc(g->ncpus ? g->ncpus : 1, sizeof(int32_t));
		if (vcpu_pids[ng])
			guest_vcpu_threads(g, vcpu_pids[ng], g->ncpus);
		guests[ng] = (struct tracedat_guest){ g->name, client_session(g->client)->trace_id,
						      g->ncpus, vcpu_pids[ng] };
		ng++;
	}
	opts.has_traceid = 1;
	opts.traceid = trace_id;
	opts.guests = guests;
	opts.nguests = ng;
	ret = tracemeta_collect(tsync_instance_tracefs(h->ti), &mo, &tm);
	if (ret) {
		snprintf(err, errlen, "host metadata: %s", strerror(-ret));
		goto out;
	}
	printf("host: %d CPUs, clock %s\n  %4s %12s %10s %10s %10s\n", h->ncpus, cfg->clock,
	       "cpu", "bytes", "entries", "lost", "dropped");
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		struct tracemeta_stats st = { 0 };
		struct stat sb;

		cpus[cpu].fd = h->files[cpu];
		if (fstat(h->files[cpu], &sb) == 0)
			cpus[cpu].size = (uint64_t)sb.st_size;
		tracemeta_read_stats(tsync_instance_tracefs(h->ti), cpu, &st, &cpustat[cpu]);
		printf("  %4d %12llu %10llu %10llu %10llu\n", cpu, (unsigned long long)cpus[cpu].size,
		       (unsigned long long)st.read_events,
		       (unsigned long long)(st.overrun + st.commit_overrun),
		       (unsigned long long)st.dropped_events);
		if (st.overrun || st.commit_overrun || st.dropped_events)
			printf("  WARNING: host CPU %d lost %llu events\n", cpu,
			       (unsigned long long)(st.overrun + st.commit_overrun + st.dropped_events));
	}
	opts.cpustat = (const char *const *)cpustat;
	opts.ncpustat = h->ncpus;
	ret = tracedat_write_file(cfg->output, tracemeta_meta(tm), &opts, cpus, h->ncpus);
	if (ret)
		snprintf(err, errlen, "writing %s: %s", cfg->output, strerror(-ret));
out:
	for (int cpu = 0; cpustat && cpu < h->ncpus; cpu++)
		free(cpustat[cpu]);
	for (int i = 0; i < ng; i++)
		free(vcpu_pids[i]);
	free(cpustat);
	free(cpus);
	tracemeta_free(tm);
	return ret;
}

/* One run of `record`: the configuration and everything it started. */
struct recorder {
	struct rec_cfg cfg;
	struct client_opts co;
	struct round_opts ro;
	struct host_rec h;
	char dir[PATH_MAX];		/* where the output and temporary files go */
	uint64_t trace_id;
	struct host_cancel *cancel;	/* cuts every connection on abort */
	struct rec_signals *sig;	/* the signal watcher */
	int stop_fd;			/* eventfd: the sync threads' final round */
	pid_t child;
	pthread_mutex_t *cpu_locks;	/* [host CPUs]: one round per host CPU */
	struct status_live *status;	/* the live status line, or NULL */
	int ncpu_locks;
};

/* Fills in what follows from the parsed options: ids, options, directory. */
static void rec_init(struct recorder *r)
{
	const char *slash = strrchr(r->cfg.output, '/');

	if (getrandom(&r->trace_id, sizeof(r->trace_id), 0) != sizeof(r->trace_id))
		r->trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)tsync_now_ns();
	r->co = (struct client_opts){ .connect_timeout_ms = 5000, .io_timeout_ms = 5000,
				      .host_trace_id = r->trace_id, .host_name = "host",
				      .key_file = r->cfg.key_file };
	r->ro = (struct round_opts){ .clock = r->cfg.clock, .source = r->cfg.source,
				     .nprobes = ROUND_DEFAULT_PROBES, .estimator = TSYNC_EST_ROBUST,
				     .host_cpu = -1, .busy = -1,
				     .ns_clock = r->cfg.stamp_forced &&
						 r->cfg.source == TSYNC_STAMP_CLOCK };
	if (slash)
		snprintf(r->dir, sizeof(r->dir), "%.*s", (int)(slash - r->cfg.output), r->cfg.output);
	else
		snprintf(r->dir, sizeof(r->dir), ".");
	if (!*r->dir)
		snprintf(r->dir, sizeof(r->dir), "/");
	r->stop_fd = -1;
	r->child = -1;
}

/* Prints "guest NAME (AGENT): error" for @g. */
static void guest_error(const struct guest *g)
{
	fprintf(stderr, "tsync-host record: guest %s (%s): %s\n", g->name, g->agent_str, g->error);
}

/* Connects and syncs every guest, starts the host's recording and then
 * the guests' (with their sync threads). Returns 0 or 1 (said why). */
static int rec_start(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;
	char err[512];

	/* the guests' sync threads share the host CPUs (see round_opts);
	 * rec_cleanup() frees them */
	r->ncpu_locks = host_cpu_locks_new(&r->cpu_locks);
	if (r->ncpu_locks < 0)
		r->ncpu_locks = 0;	/* rounds without locks: still correct */
	r->ro.cpu_locks = r->cpu_locks;
	for (int i = 0; i < cfg->nguests; i++) {
		struct guest *g = &cfg->guests[i];

		g->max_bytes = (uint64_t)cfg->guest_max_mb << 20;
		if (guest_connect(g, &r->co) || guest_check_can_record(g, cfg->clock) ||
		    preflight_guest_clock(client_session(g->client), cfg->clock, g->error,
					  sizeof(g->error)) ||
		    guest_sync_all(g, &r->ro)) {
			guest_error(g);
			return 1;
		}
	}
	if (host_start(&r->h, cfg, r->dir, err, sizeof(err))) {
		fprintf(stderr, "tsync-host record: host: %s\n", err);
		return 1;
	}
	for (int i = 0; i < cfg->nguests; i++) {
		if (guest_start_trace(&cfg->guests[i], r->dir, cfg->clock)) {
			guest_error(&cfg->guests[i]);
			return 1;
		}
	}
	for (int i = 0; i < cfg->nguests; i++) {
		struct guest_sync_opts so = { .round = r->ro, .interval_ms = cfg->interval_ms,
					      .stop_fd = r->stop_fd };

		cfg->guests[i].host_marker_fd = r->h.marker_fd;
		guest_start_sync_thread(&cfg->guests[i], &so);
	}
	return 0;
}

/* Starts COMMAND, if one was given, with the signals unblocked. */
static void rec_fork_command(struct recorder *r)
{
	if (!r->cfg.command)
		return;
	r->child = fork();
	if (r->child == 0) {
		pthread_sigmask(SIG_UNBLOCK, rec_signals_mask(r->sig), NULL);
		execvp(r->cfg.command[0], r->cfg.command);
		fprintf(stderr, "tsync-host record: %s: %s\n", r->cfg.command[0], strerror(errno));
		_exit(127);
	}
	rec_signals_child(r->sig, r->child);
}

/* Wakes the sync threads for their final round (and stops them). */
static void rec_signal_stop(struct recorder *r)
{
	uint64_t one = 1;

	if (r->stop_fd >= 0 && write(r->stop_fd, &one, sizeof(one)) < 0)
		log_warn("eventfd: %s", strerror(errno));
}

/* Final sync rounds (tracing still on), then stops host and guests and
 * drains their streams. */
static void rec_stop(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;

	rec_signal_stop(r);
	for (int i = 0; i < cfg->nguests; i++) {
		guest_join_sync_thread(&cfg->guests[i]);
		cfg->guests[i].host_marker_fd = -1;
	}
	host_stop(&r->h);
	for (int i = 0; i < cfg->nguests; i++)
		if (guest_stop_trace(&cfg->guests[i], 30000))
			guest_error(&cfg->guests[i]);
}

/* Writes the host's file, then each guest's. Returns the exit code. */
static int rec_write(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;
	char err[512], gpath[PATH_MAX + 64];
	int failed = 0, status;

	/* A guest that filled the disk must not cost the host its file. */
	for (int i = 0; i < cfg->nguests; i++)
		if (guest_drop_if_disk_full(&cfg->guests[i]))
			fprintf(stderr, "tsync-host record: guest %s: the disk filled up: its data "
				"is dropped so that the host's file can be written\n",
				cfg->guests[i].name);
	if (host_write(&r->h, cfg, r->trace_id, err, sizeof(err))) {
		fprintf(stderr, "tsync-host record: %s\n", err);
		failed++;
	} else {
		printf("  wrote %s\n", cfg->output);
	}
	for (int i = 0; i < cfg->nguests; i++) {
		struct guest *g = &cfg->guests[i];

		guest_print_summary(g);
		if (g->status)
			failed++;
		if (outfile_guest_path(cfg->output, g->name, gpath, sizeof(gpath))) {
			fprintf(stderr, "tsync-host record: guest %s: file name too long\n", g->name);
			failed++;
		} else if (guest_write_file(g, gpath, r->trace_id, &cfg->run_opts)) {
			fprintf(stderr, "tsync-host record: guest %s: %s\n", g->name, g->error);
			failed++;
		} else {
			printf("  wrote %s\n", gpath);
		}
	}
	status_print_legend(stdout);
	status = rec_signals_child_status(r->sig);
	if (!failed && r->child > 0 && WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "tsync-host record: command exited with %d\n", WEXITSTATUS(status));
	return failed ? 1 : 0;
}

/* Ends COMMAND and every thread, frees everything. */
static void rec_cleanup(struct recorder *r)
{
	status_live_stop(r->status);
	if (r->child > 0 && r->sig && waitpid(r->child, NULL, WNOHANG) == 0)
		kill(r->child, SIGTERM);
	rec_signal_stop(r);
	for (int i = 0; i < r->cfg.nguests; i++) {
		guest_join_sync_thread(&r->cfg.guests[i]);
		guest_free(&r->cfg.guests[i]);
		free(r->cfg.gevents[i]);
	}
	host_stop(&r->h);
	host_free(&r->h);
	host_cpu_locks_free(r->cpu_locks, r->ncpu_locks);
	rec_signals_free(r->sig);
	host_cancel_free(r->cancel);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
}

/* Starts the live status line on a terminal (host/status_live.h). */
static void rec_status_start(struct recorder *r)
{
	struct status_host sh = { tsync_instance_tracefs(r->h.ti), r->h.files, r->h.ncpus };
	int ret = status_live_start(STDERR_FILENO, &sh, r->cfg.guests, r->cfg.nguests,
				    &r->status);

	if (ret)
		log_warn("no status line: %s", strerror(-ret));
}

/* Prints that the run was aborted; returns its exit code. */
static int rec_aborted(void)
{
	fprintf(stderr, "tsync-host record: aborted\n");
	return 130;
}

/* Records from start to end once everything is set; returns the exit code. */
static int rec_run(struct recorder *r)
{
	int64_t deadline = r->cfg.duration > 0 ?
			   tsync_now_ns() + (int64_t)(r->cfg.duration * 1e9) : -1;

	if (rec_start(r))
		return rec_signals_aborted(r->sig) ? rec_aborted() : 1;
	rec_signals_phase(r->sig, REC_RECORDING);
	rec_fork_command(r);
	fprintf(stderr, "tsync-host record: recording%s\n",
		r->cfg.command ? "" : r->cfg.duration > 0 ? "" : " (Ctrl-C to stop)");
	if (!r->cfg.quiet)
		rec_status_start(r);
	if (rec_signals_wait(r->sig, deadline))
		return rec_aborted();
	status_live_stop(r->status);
	r->status = NULL;
	rec_signals_phase(r->sig, REC_STOPPING);
	rec_stop(r);
	if (rec_signals_aborted(r->sig))
		return rec_aborted();
	return rec_write(r);
}

int host_cmd_record(int argc, char **argv)
{
	/* interval_ms 0: adaptive unless --tsync-interval */
	struct recorder rec = { 0 };	/* option defaults: rec_opts[] */
	struct recorder *r = &rec;
	char err[512];
	int ret;

	parse_args(argc, argv, &r->cfg);
	tsync_log_init("tsync-host", r->cfg.verbose ? TSYNC_LOG_DEBUG : TSYNC_LOG_INFO, false);
	rec_init(r);

	/* What cannot work (host/preflight.h) and the host's events are
	 * checked before anything starts. */
	if (host_preflight("record", true, r->cfg.clock, r->cfg.source, r->cfg.stamp_forced,
			   err, sizeof(err)) ||
	    outfile_check_dir(r->cfg.output, err, sizeof(err)) ||
	    (r->cfg.nevents && tracemeta_resolve_events(r->cfg.events, r->cfg.nevents,
							&r->h.events, err, sizeof(err)))) {
		fprintf(stderr, "tsync-host record: %s\n", err);
		rec_cleanup(r);
		return 2;
	}
	r->cancel = host_cancel_new();
	r->co.cancel = r->cancel;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	ret = r->cancel && r->stop_fd >= 0 ? rec_signals_start(r->cancel, &r->sig) : -ENOMEM;
	if (ret || r->stop_fd < 0) {
		fprintf(stderr, "tsync-host record: %s\n", strerror(ret ? -ret : errno));
		ret = 1;
	} else {
		ret = rec_run(r);
	}
	rec_cleanup(r);
	return ret;
}
