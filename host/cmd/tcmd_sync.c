// SPDX-License-Identifier: GPL-2.0-or-later
/* `tsync-host sync` against a stock trace-cmd agent; see tcmd_sync.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/cpu.h"
#include "common/base/io.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "host/peer/tcmd_ptp.h"
#include "host/peer/tcmd_session.h"
#include "host/cmd/tcmd_sync.h"
#include "proto/proto.h"

#define META_MAX (256u << 20)	/* metadata read and dropped at the end */

/* Prints one sample as a table row or a JSON object. */
static void print_sample(const struct tcmd_sync_opts *o, int round,
			 const struct tcmd_ptp_result *r, bool first)
{
	if (o->json)
		printf("%s    {\"cpu\": %u, \"round\": %d, \"host_cpu\": %d, \"offset_ns\": %lld, "
		       "\"guest_ts\": %lld, \"probes\": %u, \"round_ms\": %.3f}", first ? "" : ",\n",
		       r->cpu, round, r->host_cpu, (long long)r->offset, (long long)r->ts,
		       r->probes, r->round_ns / 1e6);
	else
		printf("%4u %6d %20lld %20lld %7u %9.3f\n", r->cpu, round, (long long)r->offset,
		       (long long)r->ts, r->probes, r->round_ns / 1e6);
	fflush(stdout);
}

/* Runs the rounds over @cpus; returns 0 or 1 after saying why. A sample
 * the agent found no usable probe for (-ERANGE: trace-cmd's own host
 * drops it too) is said and counted in @failed, and the rounds go on, as
 * failed rounds do with tsync's agents. */
static int run(const struct host_agent_arg *a, const struct tcmd_sync_opts *o,
	       struct tcmd_session *s, struct tsync_stamper *st, const uint32_t *cpus,
	       uint32_t n, int *failed)
{
	int nhost = tsync_cpu_count();
	uint32_t round = 0;
	char err[300];
	int ret, printed = 0;

	for (int r = 0; r < o->rounds; r++) {
		if (r && o->interval_ms) {
			struct timespec ts = { o->interval_ms / 1000,
					       (o->interval_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		for (uint32_t i = 0; i < n; i++) {
			struct tcmd_ptp_result res;
			int hc = o->host_cpu >= 0 ? o->host_cpu : (int)(cpus[i] % (uint32_t)nhost);

			ret = tcmd_ptp_sample(&s->ts, st, ++round, cpus[i], hc, &res, err,
					      sizeof(err));
			if (ret) {
				fprintf(stderr, "tsync-host sync: %s: CPU %u: %s\n", a->name,
					cpus[i], err);
				if (ret != -ERANGE)
					return 1;
				(*failed)++;
				continue;
			}
			print_sample(o, r, &res, !printed++);
		}
	}
	return 0;
}

/* Reads the CPU streams @fds (@n, closed here) to their end, dropping
 * the bytes (the nop tracer writes next to nothing). Returns 0 or -errno. */
static int drain(struct tcmd_session *s, int *fds, uint32_t n, char *err, size_t errlen)
{
	int64_t deadline = tsync_deadline_ms(s->timeout_ms);
	static char sink[65536];
	int ret = 0;

	for (uint32_t i = 0; i < n; i++) {
		while (!ret && fds[i] >= 0) {
			ssize_t k;

			ret = tsync_wait_readable(fds[i], deadline);
			if (ret <= 0) {
				ret = ret ? ret : -ETIMEDOUT;
				snprintf(err, errlen, "the stream of CPU %u did not end: %s", i,
					 strerror(-ret));
				break;
			}
			ret = 0;
			k = read(fds[i], sink, sizeof(sink));
			if (k <= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

/* Ends the session as trace-cmd's host does: the agent's metadata read
 * (and dropped), the CPU streams connected (the agent's recorders wait
 * for them), CLOSE, STOP, the streams read to their end, then CLOSE_RESP.
 * Returns 0 or 1. */
static int finish(const struct host_agent_arg *a, struct tcmd_session *s)
{
	int *fds = calloc(s->ncpus, sizeof(*fds));
	uint8_t *meta = NULL;
	uint32_t nfd = 0;
	size_t len;
	char err[300] = "out of memory";
	int ret = fds ? 0 : -ENOMEM;

	if (!ret)
		ret = tcmd_session_meta(s, META_MAX, &meta, &len, err, sizeof(err));
	free(meta);
	for (; !ret && nfd < s->ncpus; nfd++)
		ret = tcmd_session_stream(s, nfd, &fds[nfd], err, sizeof(err));
	if (ret && nfd)
		nfd--;	/* the failed one holds no socket */
	if (!ret)
		ret = tcmd_session_close(s, err, sizeof(err));
	if (!ret)
		ret = tcmd_ptp_stop(&s->ts, err, sizeof(err));
	if (fds) {
		int r = drain(s, fds, nfd, err, sizeof(err));

		ret = ret ? ret : r;
	}
	free(fds);
	if (!ret)
		ret = tcmd_session_wait_closed(s, err, sizeof(err));
	if (ret)
		fprintf(stderr, "tsync-host sync: %s: ending the session: %s\n", a->name, err);
	return ret ? 1 : 0;
}

/* Opens the stamps and the session; 0 or 1 after saying why. */
static int open_all(const struct host_agent_arg *a, const struct tcmd_sync_opts *o,
		    struct tsync_stamper **st, struct tcmd_session **s)
{
	/* the least trace-cmd's agent records: nothing but the nop tracer */
	const char *argv[] = { "-C", o->clock, "--file-version", "6", "-d", "-k",
			       "--no-filter", "-p", "nop" };
	struct tcmd_session_opts so = {
		.connect_timeout_ms = o->connect_timeout_ms, .io_timeout_ms = o->io_timeout_ms,
		.quickack = o->quickack, .host_trace_id = o->host_trace_id,
		.argc = (int)(sizeof(argv) / sizeof(argv[0])), .argv = argv,
	};
	char err[300];
	int ret;

	ret = tsync_stamp_open(o->source, o->clock, "tcmd", 0, st);
	if (ret) {
		fprintf(stderr, "tsync-host sync: timestamp source %s for clock %s: %s\n",
			tsync_stamp_source_name(o->source), o->clock, strerror(-ret));
		return 1;
	}
	ret = tcmd_session_open(&a->ep, &so, s, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, err);
		return 1;
	}
	return 0;
}

/* Syncs one trace-cmd agent; see tcmd_sync.h. */
int tcmd_sync_agent(const struct host_agent_arg *a, const struct tcmd_sync_opts *o)
{
	struct tsync_stamper *st = NULL;
	struct tcmd_session *s = NULL;
	uint32_t *cpus = NULL, n;
	char err[300];
	int ret, failed = 0;

	ret = open_all(a, o, &st, &s);
	if (ret)
		goto out;
	if (o->cpus) {
		int k = tsync_cpu_list_parse(o->cpus, s->ncpus, &cpus, err, sizeof(err));

		if (k <= 0) {
			fprintf(stderr, "tsync-host sync: --cpus: %s (guest)\n",
				k ? err : "no CPU");
			ret = 2;
			goto out;
		}
		n = (uint32_t)k;
	} else {
		cpus = calloc(s->ncpus, sizeof(*cpus));	// NOLINT(clang-analyzer-optin.portability.UnixAPI)
		if (!cpus) {
			ret = 1;
			goto out;
		}
		for (n = 0; n < s->ncpus; n++)
			cpus[n] = n;
	}
	if (o->json)
		printf("{\"name\": \"%s\", \"agent\": \"trace-cmd\", \"clock\": \"%s\", "
		       "\"stamp\": \"%s\", \"quickack\": %s, \"cpus\": %u, \"samples\": [\n",
		       a->name, o->clock, tsync_stamp_source_name(o->source),
		       o->quickack ? "true" : "false", s->ncpus);
	else
		printf("agent %s (trace-cmd agent, PTP), %u CPUs, clock %s, stamps %s%s\n"
		       "%4s %6s %20s %20s %7s %9s\n", a->name, s->ncpus, o->clock,
		       tsync_stamp_source_name(o->source), o->quickack ? "" : ", no quick ACK",
		       "cpu", "round", "offset_ns", "guest_ts", "probes", "round_ms");
	ret = run(a, o, s, st, cpus, n, &failed);
	if (o->json)
		printf("\n  ]}\n");
	if (!ret)
		ret = finish(a, s);
	if (!ret && failed) {
		fprintf(stderr, "tsync-host sync: %s: %d sample(s) failed\n", a->name, failed);
		ret = 1;
	}
out:
	free(cpus);
	tcmd_session_free(s);
	tsync_stamp_close(st);
	return ret;
}
