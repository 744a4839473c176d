/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What several benchmarks share: starting a real tsync-agent in a time
 * namespace of its own, so that its CLOCK_MONOTONIC is off the host's by a
 * known shift (the truth a sync is checked against); quantiles and means;
 * busy loops that load every CPU; spawning a program, loopback ports, and
 * the top instance put back after trace-cmd.
 */
#ifndef TSYNC_BENCH_LIB_H
#define TSYNC_BENCH_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/net/endpoint.h"

/* Starts @b/tsync-agent under @b/helpers/timens_exec with CLOCK_MONOTONIC
 * shifted by @shift_ns, listening on a free loopback TCP port for 127.0.0.1
 * only, and waits for its "listening on" line. Returns the wrapper's pid
 * (kill it to stop the agent) with the announced endpoint in @ep, or -1
 * with nothing left running. */
pid_t bench_start_agent(const char *b, long long shift_ns, char *ep, size_t eplen);

/* bench_start_agent() with the endpoint parsed into @ep. */
pid_t bench_start_agent_ep(const char *b, long long shift_ns, struct tsync_endpoint *ep);

/* Waits (up to 10 s) until process @parent has no child: trace-cmd's
 * agent refuses a session while its child for the last one lives. */
void bench_wait_no_child(pid_t parent);

/* Opens the lock file @path (close-on-exec: an agent a benchmark starts,
 * and that outlives it, must not hold the lock) and takes it, waiting up
 * to @secs seconds; past that says so and goes on without it (a process
 * outside the benchmark's control holds it). Returns the fd, or -1. */
int bench_lock(const char *path, int secs);

/* The --name of a loopback guest, and so its file's name
 * (trace-BENCH_TCMD_GUEST.dat): a trace-cmd host connects the guest's data
 * ports to that name, so it is an address, which resolves without
 * /etc/hosts (tests/e2e/lib.inc's TCMD_GUEST). */
#define BENCH_TCMD_GUEST "127.0.0.1"

/* Most busy loops bench_start_busy() starts. */
#define BENCH_MAX_BUSY 64

/* Returns the @q-quantile (0..1) of @n values (sorts them; 0 for none). */
int64_t bench_quant(int64_t *v, int n, double q);

/* Returns the mean of @n values (0 for none). */
double bench_mean(const int64_t *v, int n);

/* Starts one busy loop per CPU, @ncpu of them (up to BENCH_MAX_BUSY),
 * their pids into @pids; returns how many. */
int bench_start_busy(pid_t *pids, int ncpu);

/* Kills and reaps the @n busy loops @pids. */
void bench_stop_busy(const pid_t *pids, int n);

/* Puts tracing_on back to 1 and clears set_event in the top instance, as
 * a trace-cmd run leaves them. */
void bench_restore_tracefs(void);
/* Returns a loopback TCP port free at the time of asking, or -1. */
int bench_free_port(void);
/* Returns true once something accepts connections on loopback @port. */
bool bench_listening(int port);
/* Runs @argv in @dir (NULL: here) in its own process group, with stdout
 * and stderr into @log and @env ("NAME=VALUE" or NULL) added; returns the
 * pid or -1. */
pid_t bench_spawn(char *const argv[], const char *dir, const char *log, const char *env);

#endif
