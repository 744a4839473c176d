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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdbool.h>
#include <tracefs.h>

#include "common/stream/streamer.h"
#include "common/base/cpu.h"
#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/clock/clock.h"
#include "common/cli/recopt.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "common/tracemeta/tsc2nsec.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/tsync_record.h"
#include "host/guest/agent_arg.h"
#include "host/cmd/commands.h"
#include "host/peer/cancel.h"
#include "host/peer/peer.h"
#include "host/cmd/cpu_locks.h"
#include "host/guest/guest.h"
#include "host/cmd/outfile.h"
#include "host/cmd/par.h"
#include "host/cmd/rec_host.h"
#include "host/cmd/phases.h"
#include "host/cmd/preflight.h"
#include "host/cmd/status.h"
#include "host/cmd/status_live.h"
#include "host/cmd/rec_signals.h"
#include "host/cmd/record_args.h"


/* One run of `record`: the configuration and everything it started. */
struct recorder {
	struct rec_cfg cfg;
	struct peer_opts po;		/* how every guest's session opens */
	struct round_opts ro;
	struct agent_clock_cfg host_clock;	/* the host's time daemon (external) */
	struct host_rec h;
	char dir[PATH_MAX];		/* where the output and temporary files go */
	uint64_t trace_id;
	struct host_cancel *cancel;	/* cuts every connection on abort */
	struct rec_signals *sig;	/* the signal watcher */
	int stop_fd;			/* eventfd: the sync threads' final round */
	pid_t child;
	int gate;			/* write end: closing it lets COMMAND run */
	pthread_mutex_t *cpu_locks;	/* [host CPUs]: one round per host CPU */
	struct status_live *status;	/* the live status line, or NULL */
	int ncpu_locks;
	struct rec_phases ph;		/* --verbose: where the time went */
};

/* Fills in what follows from the parsed options: ids, options, directory. */
static void rec_init(struct recorder *r)
{
	const char *slash = strrchr(r->cfg.opt.output, '/');

	if (getrandom(&r->trace_id, sizeof(r->trace_id), 0) != sizeof(r->trace_id))
		r->trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)tsync_now_ns();
	r->po = (struct peer_opts){ .connect_timeout_ms = 5000, .io_timeout_ms = 5000,
				    .host_trace_id = r->trace_id, .host_name = "host",
				    .key_file = r->cfg.opt.key_file, .clock = r->cfg.opt.clock,
				    .source = r->cfg.source, .record = true,
				    /* the benchmark's switch (tsync-host(1), ENVIRONMENT) */
				    .no_quickack = getenv("TSYNC_TCMD_NO_QUICKACK") != NULL };
	r->ro = (struct round_opts){ .clock = r->cfg.opt.clock, .source = r->cfg.source,
				     .nprobes = ROUND_DEFAULT_PROBES, .estimator = TSYNC_EST_ROBUST,
				     .host_cpu = -1, .busy = -1, .method = r->cfg.opt.tsync_method,
				     .ns_clock = r->cfg.stamp_forced &&
						 r->cfg.source == TSYNC_STAMP_CLOCK,
				     .host_clock = &r->host_clock };
	agent_clock_cfg_init(&r->host_clock, r->cfg.opt.clock_daemon, r->cfg.opt.ptp4l_socket,
			     r->cfg.opt.chrony_socket, 0);
	if (slash)
		snprintf(r->dir, sizeof(r->dir), "%.*s", (int)(slash - r->cfg.opt.output), r->cfg.opt.output);
	else
		snprintf(r->dir, sizeof(r->dir), ".");
	if (!*r->dir)
		snprintf(r->dir, sizeof(r->dir), "/");
	r->stop_fd = -1;
	r->child = -1;
	r->gate = -1;
}

/* Prints "guest NAME (AGENT): error" for @g. */
static void guest_error(const struct guest *g)
{
	fprintf(stderr, "tsync-host record: guest %s (%s): %s\n", g->name, g->agent_str, g->error);
}

/* Returns whether the guests are synced (trace-cmd's negative
 * --tsync-interval: no synchronization at all). */
static bool rec_synced(const struct rec_cfg *cfg)
{
	return !cfg->opt.has_tsync_interval || cfg->opt.tsync_interval_ms >= 0;
}

/* Connects, checks and syncs guest @i (a job of host_par_run()); 0 or 1. */
static int guest_setup(void *ctx, int i)
{
	struct recorder *r = ctx;
	struct rec_cfg *cfg = &r->cfg;
	struct guest *g = &cfg->guests[i];

	g->max_bytes = (uint64_t)cfg->opt.guest_max_mb << 20;
	g->max_kb = cfg->opt.max_kb;
	g->unsynced = !rec_synced(cfg);
	return guest_connect(g, &r->po, &r->ro) || guest_check_can_record(g, cfg->opt.clock) ||
	       host_preflight_guest(g->peer, cfg->opt.clock, g->error, sizeof(g->error)) ||
	       (!g->unsynced && guest_sync_all(g, &r->ro));
}

/* Starts guest @i's tracing (a job of host_par_run()); 0 or 1. */
static int guest_setup_trace(void *ctx, int i)
{
	struct recorder *r = ctx;

	return guest_start_trace(&r->cfg.guests[i], r->cfg.opt.clock) != 0;
}

/* Starts guest @i's receivers (a job of host_par_run()); 0 or 1. */
static int guest_setup_rx(void *ctx, int i)
{
	struct recorder *r = ctx;

	return guest_start_rx(&r->cfg.guests[i], r->dir,
			      tracedat_format_zip(&r->cfg.run_opts.format)) != 0;
}

/* Runs @fn for every guest at once (each guest's I/O has deadlines) and
 * says what failed. Returns 0 or 1. */
static int rec_each_guest(struct recorder *r, int (*fn)(void *ctx, int i))
{
	int rets[MAX_GUESTS], failed;

	failed = host_par_run(r->cfg.nguests, fn, r, rets);
	for (int i = 0; failed > 0 && i < r->cfg.nguests; i++)
		if (rets[i])
			guest_error(&r->cfg.guests[i]);
	return failed ? 1 : 0;
}

/* Connects and syncs every guest, starts the host's recording and then
 * the guests'. Guests start in parallel: N guests take about as long as
 * the slowest. Returns 0 or 1 (said why). */
static int rec_start_tracing(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;
	char err[512];

	/* the guests' sync threads share the host CPUs (see round_opts);
	 * rec_cleanup() frees them */
	r->ncpu_locks = host_cpu_locks_new(&r->cpu_locks);
	if (r->ncpu_locks < 0)
		r->ncpu_locks = 0;	/* rounds without locks: still correct */
	r->ro.cpu_locks = r->cpu_locks;
	if (rec_each_guest(r, guest_setup))
		return 1;
	rec_phase_mark(&r->ph, REC_PH_GUESTS);
	if (host_start(&r->h, cfg, r->dir, err, sizeof(err))) {
		fprintf(stderr, "tsync-host record: host: %s\n", err);
		return 1;
	}
	rec_phase_mark(&r->ph, REC_PH_HOST);
	return cfg->nguests ? rec_each_guest(r, guest_setup_trace) : 0;
}

/* Fetches the guests' metadata, starts their receivers (in parallel) and
 * their sync threads; the guests trace already. With COMMAND @running a
 * guest that fails (said why) fails the run at its end, as one that fails
 * later does: the host's file is still written. Returns 0 or 1 (said
 * why). */
static int rec_start_guests(struct recorder *r, bool running)
{
	struct rec_cfg *cfg = &r->cfg;
	bool sync = rec_synced(cfg);

	if (!cfg->nguests)
		return 0;
	if (rec_each_guest(r, guest_setup_rx) && !running)
		return 1;
	for (int i = 0; sync && i < cfg->nguests; i++) {
		if (cfg->guests[i].status)
			continue;
		/* trace-cmd's --tsync-interval 0: only at the start and the end */
		struct guest_sync_opts so = { .round = r->ro, .interval_ms =
					      !cfg->opt.has_tsync_interval ? 0 :
					      cfg->opt.tsync_interval_ms ?
					      cfg->opt.tsync_interval_ms : -1,
					      .stop_fd = r->stop_fd };

		cfg->guests[i].host_marker_fd = r->h.marker_fd;
		guest_start_sync_thread(&cfg->guests[i], &so);
	}
	return 0;
}

/* --user: the user's ids and groups, looked up before fork() (the child
 * may only make system calls). */
struct run_as {
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int ngroups;
};

/* Looks up @user into @ra. Returns 0 or -1 (said why). */
static int run_as_lookup(const char *user, struct run_as *ra)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) || !res) {
		fprintf(stderr, "tsync-host record: --user %s: no such user\n", user);
		return -1;
	}
	ra->uid = pw.pw_uid;
	ra->gid = pw.pw_gid;
	ra->ngroups = (int)(sizeof(ra->groups) / sizeof(ra->groups[0]));
	if (getgrouplist(user, pw.pw_gid, ra->groups, &ra->ngroups) < 0) {
		fprintf(stderr, "tsync-host record: --user %s: more than %d groups\n", user,
			ra->ngroups);
		return -1;
	}
	return 0;
}

/* The child: waits until the parent has set up the filters for it, drops
 * -r's priority and --user's privileges, runs COMMAND. */
static void child_exec(struct recorder *r, const int gate[2], const struct run_as *ra)
{
	const char *slash = strrchr(r->cfg.command[0], '/');
	struct sched_param sp = { 0 };
	char c;

	close(gate[1]);		/* else the read below never sees EOF */
	pthread_sigmask(SIG_UNBLOCK, rec_signals_mask(r->sig), NULL);
	if (r->cfg.opt.rt_prio)
		sched_setscheduler(0, SCHED_OTHER, &sp);
	/* the name exec gives COMMAND, now: the switch that wakes us at the
	 * gate is traced, and trace-cmd report names a pid after the first
	 * switch into it, so COMMAND's events would all say "tsync-host" */
	prctl(PR_SET_NAME, slash ? slash + 1 : r->cfg.command[0]);
	while (read(gate[0], &c, 1) < 0 && errno == EINTR)
		;
	close(gate[0]);
	if (ra && (setgroups((size_t)ra->ngroups, ra->groups) || setgid(ra->gid) ||
		   setuid(ra->uid))) {
		fprintf(stderr, "tsync-host record: --user %s: %s\n", r->cfg.opt.user,
			strerror(errno));
		_exit(127);
	}
	execvp(r->cfg.command[0], r->cfg.command);
	fprintf(stderr, "tsync-host record: %s: %s\n", r->cfg.command[0], strerror(errno));
	_exit(127);
}

/*
 * Forks COMMAND, if one was given, before anything is traced: it waits
 * at a gate until rec_release_command(). Forked then, it is not among
 * the threads of ours left out of the trace (it would inherit that), and
 * -F can trace it from the first event on. Returns 0 or 1 (said why).
 */
static int rec_fork_command(struct recorder *r)
{
	const struct tsync_recopt *o = &r->cfg.opt;
	struct run_as ra;
	int gate[2];

	if (!r->cfg.command)
		return 0;
	if ((o->user && run_as_lookup(o->user, &ra)) || pipe2(gate, O_CLOEXEC))
		return 1;
	r->child = fork();
	if (r->child == 0)
		child_exec(r, gate, o->user ? &ra : NULL);
	close(gate[0]);
	if (r->child < 0) {
		fprintf(stderr, "tsync-host record: fork: %s\n", strerror(errno));
		close(gate[1]);
		return 1;
	}
	r->gate = gate[1];
	if (o->filter_command)
		r->h.only_pid = r->child;
	return 0;
}

/* Lets COMMAND run (it was forked at the start). */
static void rec_release_command(struct recorder *r)
{
	if (r->gate < 0)
		return;
	close(r->gate);
	r->gate = -1;
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
	rec_phase_mark(&r->ph, REC_PH_FINAL_SYNC);
	host_stop(&r->h);
	rec_phase_mark(&r->ph, REC_PH_STOPPED);
	for (int i = 0; i < cfg->nguests; i++)
		if (guest_stop_trace(&cfg->guests[i], 30000))
			guest_error(&cfg->guests[i]);
	rec_phase_mark(&r->ph, REC_PH_GUESTS_STOPPED);
	host_remove_start(&r->h);
}

/* A guest that no sync round succeeded on fails the run (its file is
 * written all the same): its events stay in its own clock, which
 * trace-cmd report would merge as if it were the host's. Some CPUs only
 * (offline ones, say) is a warning. Returns 1 for a failure, else 0. */
static int never_synced(const struct guest *g)
{
	uint32_t first = 0, n = guest_cpus_never_synced(g, &first);

	if (!n)
		return 0;
	if (n < g->ncpus) {
		log_warn("guest %s: no sync round succeeded on %u of %u CPUs (CPU %u first): "
			 "their events are not corrected to the host's clock", g->name, n,
			 g->ncpus, first);
		return 0;
	}
	fprintf(stderr, "tsync-host record: guest %s: no sync round succeeded on any of its %u "
		"CPUs: its events are not corrected to the host's clock\n", g->name, g->ncpus);
	return 1;
}

/* The guests' files, written while the host's is. */
struct guest_files {
	struct recorder *r;
	pthread_t thr;
	int rets[MAX_GUESTS];	/* 0, -ENAMETOOLONG (no path) or the error */
	char path[MAX_GUESTS][PATH_MAX + 64];
	struct tracedat_staged staged[MAX_GUESTS];
};

/* Writes guest @i's file (a job of host_par_run()); 0 or -errno. */
static int guest_file_job(void *ctx, int i)
{
	struct guest_files *gf = ctx;
	struct recorder *r = gf->r;

	if (outfile_guest_path(r->cfg.opt.output, r->cfg.guests[i].name, gf->path[i],
			       sizeof(gf->path[i])))
		return -ENAMETOOLONG;
	return guest_write_file(&r->cfg.guests[i], gf->path[i], r->trace_id,
				&r->cfg.run_opts, &gf->staged[i]);
}

/* The guests' files at once, in a thread of their own. */
static void *guest_files_main(void *arg)
{
	struct guest_files *gf = arg;

	host_par_run(gf->r->cfg.nguests, guest_file_job, gf, gf->rets);
	return NULL;
}

/* Where a run's files go when one of them could not be written. */
#define PARTIAL_SUFFIX ".partial"

/*
 * Renames the staged files over the earlier ones, or, when @whole is
 * false (a file of the run could not be written), beside them with
 * PARTIAL_SUFFIX: the earlier set stays as it was, never half replaced
 * (a new host file beside an old guest's would not belong together).
 * Says each file written. Returns the number of failures.
 */
static int rec_commit_files(struct recorder *r, struct tracedat_staged *host,
			    struct guest_files *gf, bool whole)
{
	const char *suffix = whole ? NULL : PARTIAL_SUFFIX;
	int failed = 0;

	if (!whole)
		fprintf(stderr, "tsync-host record: not every file of the run could be written: "
			"the earlier files are left as they were; what was written gets the "
			"suffix %s\n", PARTIAL_SUFFIX);
	if (host->tmp) {
		if (tracedat_commit_file(host, suffix))
			failed++;
		else
			printf("  wrote %s%s\n", r->cfg.opt.output, suffix ? suffix : "");
	}
	for (int i = 0; i < r->cfg.nguests; i++) {
		if (!gf->staged[i].tmp)
			continue;
		if (tracedat_commit_file(&gf->staged[i], suffix))
			failed++;
		else
			printf("  wrote %s%s\n", gf->path[i], suffix ? suffix : "");
	}
	return failed;
}

/*
 * Writes the host's file and, at the same time, each guest's, all under
 * temporary names; then says what was written, the host first, and
 * renames the set (rec_commit_files()). A guest with no file to write
 * (no metadata: its agent failed) does not stop the others; a file the
 * disk or the file system refused does. Returns the number of failures.
 */
static int rec_write_files(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;
	struct guest_files *gf = calloc(1, sizeof(*gf));
	struct tracedat_staged host = { 0 };
	bool threaded, whole = true;
	char err[512];
	int failed = 0;

	if (!gf)
		return 1;
	gf->r = r;
	threaded = cfg->nguests && !pthread_create(&gf->thr, NULL, guest_files_main, gf);
	if (host_write(&r->h, cfg, r->trace_id, &r->ph, &host, err, sizeof(err))) {
		fprintf(stderr, "tsync-host record: %s\n", err);
		failed++;
		whole = false;
	}
	rec_phase_mark(&r->ph, REC_PH_HOST_FILE);
	if (threaded)
		pthread_join(gf->thr, NULL);
	else
		guest_files_main(gf);
	for (int i = 0; i < cfg->nguests; i++) {
		struct guest *g = &cfg->guests[i];

		guest_print_summary(g);
		if (g->status)
			failed++;
		else
			failed += never_synced(g);
		if (gf->rets[i] == -ENAMETOOLONG) {
			fprintf(stderr, "tsync-host record: guest %s: file name too long\n", g->name);
			failed++;
		} else if (gf->rets[i]) {
			fprintf(stderr, "tsync-host record: guest %s: %s\n", g->name, g->error);
			failed++;
			whole &= gf->rets[i] == -ENODATA;
		}
	}
	failed += rec_commit_files(r, &host, gf, whole);
	free(gf);
	return failed;
}

/* Writes the files (host/cmd/rec_host.h, guest.h). Returns the exit code. */
static int rec_write(struct recorder *r)
{
	struct rec_cfg *cfg = &r->cfg;
	char err[512];
	int failed = 0, status;

	/* A guest that filled the disk must not cost the host its file. */
	for (int i = 0; i < cfg->nguests; i++)
		if (guest_drop_if_disk_full(&cfg->guests[i]))
			fprintf(stderr, "tsync-host record: guest %s: the disk filled up: its data "
				"is dropped so that the host's file can be written\n",
				cfg->guests[i].name);
	failed = rec_write_files(r);
	rec_phase_mark(&r->ph, REC_PH_END);
	/* --verbose asked for (info is the default level): where the time went */
	if (r->cfg.opt.verbose != TSYNC_RECOPT_LOG_UNSET) {
		rec_phases_format(&r->ph, err, sizeof(err));
		log_info("time (ms): %s", err);
		for (int i = 0; i < cfg->nguests; i++) {
			guest_stop_split(cfg->guests[i].stop_t, err, sizeof(err));
			if (err[0])
				log_info("guest %s: stop (ms): %s", cfg->guests[i].name, err);
		}
	}
	status_print_legend(stdout);
	/* COMMAND's failure is the run's (a Ctrl-C that ended it is not) */
	status = rec_signals_child_status(r->sig);
	/* a child runs only for a COMMAND; the analyzer cannot see that */
	if (!r->cfg.command || r->child <= 0)
		return failed ? 1 : 0;
	if (WIFEXITED(status) && WEXITSTATUS(status)) {
		fprintf(stderr, "tsync-host record: command '%s' exited with status %d\n",
			r->cfg.command[0], WEXITSTATUS(status));
		failed++;
	} else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGINT &&
		   WTERMSIG(status) != SIGTERM) {
		fprintf(stderr, "tsync-host record: command '%s' was killed by signal %d (%s)\n",
			r->cfg.command[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
		failed++;
	}
	return failed ? 1 : 0;
}

/* Ends COMMAND and every thread, frees everything. */
static void rec_cleanup(struct recorder *r)
{
	status_live_stop(r->status);
	if (r->gate >= 0) {	/* COMMAND never ran: it must not now */
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
		close(r->gate);
		r->gate = -1;
		r->child = -1;
	}
	if (r->child > 0 && r->sig && waitpid(r->child, NULL, WNOHANG) == 0)
		kill(r->child, SIGTERM);
	rec_signal_stop(r);
	for (int i = 0; i < r->cfg.nguests; i++) {
		guest_join_sync_thread(&r->cfg.guests[i]);
		guest_free(&r->cfg.guests[i]);
		tsync_recopt_argv_free(r->cfg.guests[i].argv, r->cfg.guests[i].argc);
		tsync_recopt_free(&r->cfg.gopt[i]);
	}
	tsync_recopt_free(&r->cfg.opt);
	host_stop(&r->h);
	host_free(&r->h);
	host_cpu_locks_free(r->cpu_locks, r->ncpu_locks);
	rec_signals_free(r->sig);
	host_cancel_free(r->cancel);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
}

/* Starts the live status line on a terminal (host/cmd/status_live.h). */
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

/* Lets COMMAND go and says the recording runs. */
static void rec_go(struct recorder *r)
{
	rec_signals_phase(r->sig, REC_RECORDING);
	rec_phase_mark(&r->ph, REC_PH_ARMED);
	rec_release_command(r);
	fprintf(stderr, "tsync-host record: recording%s\n",
		r->cfg.command ? "" : r->cfg.opt.duration > 0 ? "" : " (Ctrl-C to stop)");
}

/* Whether the list of our threads must be updated with the forks no longer
 * followed before COMMAND runs (event-fork would make -P and -F follow
 * children); with -c, COMMAND's children are followed (COMMAND is not
 * among ours). Without -P and -F, or with -c, the forks were followed
 * from the start and may stay so. */
static bool rec_unfollow(const struct recorder *r)
{
	return !r->cfg.opt.no_filter && (r->cfg.opt.inst.npids || r->h.only_pid) &&
	       !r->cfg.opt.inst.follow_children;
}

/* Whether a guest's agent turns its tracing on only once its streams
 * are open (trace-cmd's): COMMAND then waits for them. */
static bool rec_streams_first(const struct recorder *r)
{
	for (int i = 0; i < r->cfg.nguests; i++)
		if (r->cfg.guests[i].peer && peer_traces_on_streams(r->cfg.guests[i].peer))
			return true;
	return false;
}

/* Records from start to end once everything is set; returns the exit code. */
static int rec_run(struct recorder *r)
{
	int64_t deadline = r->cfg.opt.duration > 0 ?
			   tsync_now_ns() + (int64_t)(r->cfg.opt.duration * 1e9) : -1;
	bool early;

	if (rec_fork_command(r))
		return 1;
	if (rec_start_tracing(r))
		return rec_signals_aborted(r->sig) ? rec_aborted() : 1;
	/* COMMAND runs as soon as the host and the guests trace; the guests'
	 * metadata and receivers start meanwhile (their data waits in the
	 * guests' buffers). Not so with -P or -F without -c, which wait for
	 * the update of our threads, nor with a trace-cmd agent, which
	 * traces only once its streams are open. */
	early = !rec_unfollow(r) && !rec_streams_first(r);
	if (early)
		rec_go(r);
	if (rec_start_guests(r, early))
		return rec_signals_aborted(r->sig) ? rec_aborted() : 1;
	if (early && r->cfg.nguests)
		r->ph.guests_on = tsync_now_ns();
	if (!r->cfg.opt.quiet)
		rec_status_start(r);
	/* every thread of ours runs: the last update of the list */
	if (r->h.ti && rec_unfollow(r) && tsync_instance_hide_self(r->h.ti, false))
		log_warn("could not update the list of tsync-host's threads");
	/* the guests' sync and data threads and the status line's, started
	 * since the host's tracing began: their switches and wakeups too */
	else if (!r->cfg.opt.no_filter && r->h.ti && (r->cfg.nguests || r->status) &&
		 !rec_unfollow(r) && tsync_instance_filter_self(r->h.ti))
		log_warn("could not update the filters of tsync-host's threads");
	if (!early)
		rec_go(r);
	if (rec_signals_wait(r->sig, deadline))
		return rec_aborted();
	rec_phase_mark(&r->ph, REC_PH_CMD_END);
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
	struct recorder rec = { 0 };	/* option defaults: common/cli/recopt.c */
	struct recorder *r = &rec;
	char err[512];
	int ret;

	rec_parse_args(argc, argv, &r->cfg);
	rec_phase_mark(&r->ph, REC_PH_BEGIN);
	tsync_log_init("tsync-host", r->cfg.verbose, false);
	/* -q: no summaries nor live status line (errors still go to stderr) */
	if (r->cfg.opt.quiet && !freopen("/dev/null", "w", stdout))
		return 1;
	/* -r: every thread of ours (created from here) at this priority */
	if (r->cfg.opt.rt_prio) {
		struct sched_param sp = { .sched_priority = r->cfg.opt.rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			fprintf(stderr, "tsync-host record: warning: -r %d: %s\n",
				r->cfg.opt.rt_prio, strerror(errno));
	}
	rec_init(r);

	/* What cannot work (host/cmd/preflight.h) and the host's events are
	 * checked before anything starts. */
	if (host_preflight("record", true, r->cfg.opt.clock, r->cfg.source, r->cfg.stamp_forced,
			   err, sizeof(err)) ||
	    outfile_check_dir(r->cfg.opt.output, err, sizeof(err)) ||
	    (r->cfg.nevents && tracemeta_resolve_events(r->cfg.events, r->cfg.nevents,
							&r->h.events, err, sizeof(err)))) {
		fprintf(stderr, "tsync-host record: %s\n", err);
		rec_cleanup(r);
		return 2;
	}
	rec_phase_mark(&r->ph, REC_PH_CHECKED);
	r->cancel = host_cancel_new();
	r->po.cancel = r->cancel;
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
