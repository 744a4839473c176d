// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-agent's server: listeners (its own, and those systemd passed,
 * which every protocol is served on alike), the accept loop, one thread
 * per connection, and orderly shutdown. The connection table (conntab.c) and
 * the session registry (registry.c) are owned here and shared with the
 * connection threads through struct agent_ctx.
 *
 * Every connection starts with a HELLO saying what it is (control session or
 * data stream); until it arrives the connection is bounded by the idle
 * timeout, and a connection that says anything invalid is closed with a
 * logged reason while the agent keeps serving the others (hello.c).
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "agent/agent.h"
#include "agent/rec/budget.h"
#include "agent/conn/context.h"
#include "agent/conn/conntab.h"
#include "agent/hello.h"
#include "agent/conn/ratelimit.h"
#include "agent/rec/record.h"
#include "agent/conn/registry.h"
#include "agent/tcmd/tcmd_session.h"
#include "agent/conn/tracefs_check.h"
#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/tracefs/stale.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"

/* Built with AddressSanitizer (gcc's and clang's ways of saying so). */
#if defined(__SANITIZE_ADDRESS__)
#define TSYNC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSYNC_ASAN 1
#endif
#endif

/* How long shutdown waits for the connection threads. */
#define SHUTDOWN_WAIT_MS 10000

struct agent {
	struct agent_cfg cfg;
	struct agent_ctx ctx;		/* shared with the connection threads */
	struct agent_tracefs tracefs;	/* checked once, at start */
	struct tsync_listener *listeners[AGENT_MAX_LISTEN];
	int nlisteners;
};

/* What a connection thread gets. */
struct conn_job {
	struct agent_ctx *ctx;
	struct agent_conn *conn;
};

/* Removes the instances killed tsync programs left behind (agents and
 * hosts alike: one naming rule, one cleanup, common/tracefs/instance.h). */
static void cleanup_stale(void)
{
	int n = tsync_instance_cleanup_all_stale();

	if (n > 0)
		log_info("removed %d stale tracefs instance(s) left by killed tsync programs", n);
}

/* Checks tracefs once; says in one line what works without it. With it,
 * removes what killed agents left there. */
static void check_tracefs(struct agent *a)
{
	agent_tracefs_check(&a->tracefs);
	a->ctx.tracefs = &a->tracefs;
	if (a->tracefs.usable) {
		cleanup_stale();
		return;
	}
	log_warn("without tracefs: %s; fix: %s. Works: sync of the clocks %s. Refused: "
		 "recording, and sync with marker stamps (any other clock)", a->tracefs.why,
		 a->tracefs.fix, a->tracefs.clocks);
}

/* Returns the trace buffer budget in KiB: --max-trace-mb, by default a
 * quarter of the guest's memory. */
static uint64_t trace_budget_kb(const struct agent_cfg *cfg)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	if (cfg->max_trace_mb)
		return (uint64_t)cfg->max_trace_mb * 1024;
	if (pages <= 0 || psize <= 0)
		return 1024 * 1024;	/* 1 GiB if the kernel does not say */
	return (uint64_t)pages * (uint64_t)psize / 4 / 1024;
}

/* Frees @a and what it owns (its connection threads must be gone). */
static void agent_free(struct agent *a)
{
	for (int i = 0; i < a->nlisteners; i++)
		tsync_listener_close(a->listeners[i]);
	agent_conntab_free(a->ctx.conns);
	agent_registry_free(a->ctx.reg);
	agent_budget_free(a->ctx.budget);
	agent_ratelimit_free(a->ctx.rl);
	free(a);
}

/* Creates the agent and its listeners; see agent.h. */
int agent_create(const struct agent_cfg *cfg, struct agent **out)
{
	struct agent *a = calloc(1, sizeof(*a));
	char err[256], epstr[300];
	int ret;

	if (!a) {
		for (int i = 0; i < cfg->ninherited; i++)
			tsync_listener_close(cfg->inherited[i]);
		return -ENOMEM;
	}
	/* systemd's sockets first: they are ours from here on */
	for (int i = 0; i < cfg->ninherited; i++) {
		a->listeners[a->nlisteners++] = cfg->inherited[i];
		log_info("listening on %s (socket from systemd: fd %d%s%s)",
			 tsync_listener_name(cfg->inherited[i]),
			 tsync_listener_fd(cfg->inherited[i]),
			 cfg->inherited_name[i][0] ? ", " : "", cfg->inherited_name[i]);
	}
	a->cfg = *cfg;
	a->ctx.cfg = &a->cfg;
	a->ctx.ncpus = tsync_cpu_count();
	a->ctx.rl = agent_ratelimit_new();
	a->ctx.conns = agent_conntab_new(cfg->max_conns, a->ctx.rl);
	a->ctx.reg = agent_registry_new(cfg->max_sessions,
					((uint64_t)getpid() << 32) | 1);
	a->ctx.budget = agent_budget_new(trace_budget_kb(cfg));
	if (!a->ctx.rl || !a->ctx.conns || !a->ctx.reg || !a->ctx.budget) {
		ret = -ENOMEM;
		goto fail;
	}
	check_tracefs(a);
	for (int i = 0; i < cfg->nlisten; i++) {
		struct tsync_listener **l = &a->listeners[a->nlisteners];

		ret = tsync_listen(&cfg->listen[i], 256, l, err, sizeof(err));
		if (ret) {
			log_err("%s", err);
			goto fail;
		}
		a->nlisteners++;
		log_info("listening on %s (requested %s)", tsync_listener_name(*l),
			 tsync_endpoint_format(&cfg->listen[i], epstr, sizeof(epstr)));
	}
	*out = a;
	return 0;
fail:
	agent_free(a);
	return ret;
}

/* Prints the readiness lines; see agent.h. */
void agent_announce(const struct agent *a, int fd)
{
	for (int i = 0; i < a->nlisteners; i++)
		dprintf(fd, "listening on %s\n", tsync_listener_name(a->listeners[i]));
}

/* Thread body of one connection: hello, then control or data. */
static void *conn_thread(void *arg)
{
	struct conn_job *job = arg;

	agent_handle_connection(job->ctx, job->conn);
	agent_conntab_remove(job->ctx->conns, job->conn);
	free(job);
	/* A session's metadata (kallsyms, formats: megabytes) was freed, but
	 * glibc keeps freed memory in the thread's arena: give it back, so
	 * that a guest's agent shrinks again when its sessions end. Not
	 * under AddressSanitizer, whose allocator is not glibc's: glibc's
	 * arenas are then set up by the first malloc_trim(), which races
	 * another thread's (seen: SEGV in mtrim with 16 sessions ending). */
#ifndef TSYNC_ASAN
	malloc_trim(0);
#endif
	return NULL;
}

/* Starts the thread of @job; returns 0 or the pthread error. */
static int start_thread(struct conn_job *job)
{
	pthread_attr_t attr;
	pthread_t th;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	ret = pthread_create(&th, &attr, conn_thread, job);
	pthread_attr_destroy(&attr);
	return ret;
}

/* Accepts one connection on @l and starts its thread. */
static void accept_one(struct agent *a, struct tsync_listener *l)
{
	struct conn_job *job;
	struct tsync_peer peer;
	int fd, ret;

	fd = tsync_accept(l, &peer);
	if (fd < 0) {
		if (fd != -EAGAIN && fd != -ECONNABORTED)
			log_warn("accept: %s", strerror(-fd));
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job || agent_check_peer(&a->ctx, fd, &peer) ||
	    agent_conntab_add(a->ctx.conns, fd, &peer, &job->conn)) {
		free(job);
		close(fd);
		return;
	}
	job->ctx = &a->ctx;
	ret = start_thread(job);
	if (ret) {
		log_err("%s: cannot start a thread: %s", peer.name, strerror(ret));
		agent_conntab_remove(a->ctx.conns, job->conn);	/* closes fd */
		free(job);
	}
}

/* Accepts a burst of connections on listener @i (bounded, so one listener
 * cannot starve the other or the signalfd): a client opening connections
 * faster than one per poll would otherwise overflow the backlog and wait
 * for SYN retransmits. */
static void accept_burst(struct agent *a, int i)
{
	struct pollfd lp = { .fd = tsync_listener_fd(a->listeners[i]), .events = POLLIN };

	for (int k = 0; k < 64; k++) {
		accept_one(a, a->listeners[i]);
		if (poll(&lp, 1, 0) <= 0 || !(lp.revents & POLLIN))
			break;
	}
}

/* The accept loop; see agent.h. */
int agent_run(struct agent *a, int sigfd)
{
	struct pollfd pfd[AGENT_MAX_LISTEN + 1];
	int n = a->nlisteners;

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = tsync_listener_fd(a->listeners[i]),
					  .events = POLLIN };
	pfd[n] = (struct pollfd){ .fd = sigfd, .events = POLLIN };

	for (;;) {
		int ret = poll(pfd, (nfds_t)n + 1, -1);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (pfd[n].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				log_info("signal %u: shutting down", si.ssi_signo);
			return 0;
		}
		for (int i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				accept_burst(a, i);
	}
}

/* Shuts every connection down, waits for the threads, frees @a. */
void agent_destroy(struct agent *a)
{
	int left;

	if (!a)
		return;
	for (int i = 0; i < a->nlisteners; i++)
		tsync_listener_close(a->listeners[i]);
	a->nlisteners = 0;
	agent_registry_stop(a->ctx.reg);
	agent_conntab_shutdown(a->ctx.conns);
	left = agent_conntab_wait_empty(a->ctx.conns, tsync_deadline_ms(SHUTDOWN_WAIT_MS));
	if (left) {
		/* Threads that did not finish still reference @a: leak it. */
		log_warn("%d connection thread(s) did not finish in time", left);
		return;
	}
	agent_free(a);
}
