// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_06_adaptive: offset error versus probes used, for the fixed rule
 * (339 probes a round, `--loops 339`) and the adaptive rule (stop when more
 * probes cannot help, at most 339; common/sync/round_stop.h), side by side in one
 * run, against a known truth.
 *
 * A tsync-agent runs in a time namespace whose CLOCK_MONOTONIC is shifted
 * by SHIFT_NS (tests/helpers/timens_exec), so `-C mono` with the clock
 * source must measure exactly -SHIFT_NS (host minus guest); with the marker
 * source the truth is 0 (trace buffers are not namespaced). A third rule,
 * a fixed count equal to the adaptive rule's floor (min_probes, 16), shows
 * what stopping early without looking costs. The probe loops of these
 * three run at a real-time priority on both ends (common/base/cpu.h); two
 * more rules, fixed 339 and adaptive marked "/n", run at normal priority
 * as before, to show what that changes in the same run.
 *
 * Rounds of the three rules are interleaved (rotating the order) on every
 * CPU, so all see the same machine; two phases: a quiet machine, and one
 * with a busy loop per CPU (the "both CPUs saturated").
 * For each phase, source and rule it prints probes per round (median,
 * mean), |offset - truth| (median, 90th percentile, worst), the median
 * error bound and round time, then each rule's ratios to fixed 339 (the
 * adaptive rule at normal priority: to fixed 339 at normal priority), the
 * median also as a difference in ns (the stamps come in steps of ~5 ns).
 * Never fails on timing; exits non-zero only when it cannot run.
 *
 * Usage: bench_06_adaptive [ROUNDS]  (per CPU, rule, phase and source;
 * default 60). BENCH06_RULE=MIN,NEAR,QUIET,PERMILLE,NS tries another
 * adaptive rule (struct tsync_stop_cfg) instead of the default;
 * BENCH06_PHASES=1 runs the quiet phase only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/base/cpu.h"
#include "common/net/endpoint.h"
#include "common/base/log.h"
#include "common/stamp/stamp.h"
#include "host/peer/client.h"
#include "tests/bench/bench_lib.h"

#define SHIFT_NS 12345678901LL
#define MAXP 339
#define NRULES 5

struct rule {
	const char *name;
	uint32_t nprobes;
	bool fixed;
	bool normal_prio;	/* probe loops not at a real-time priority */
};

/* The third is set to the adaptive rule's floor in main(); the last two
 * are the first two as they ran before probe loops were raised to a
 * real-time priority (common/base/cpu.h). */
static struct rule rules[NRULES] = {
	{ "fixed 339", MAXP, true, false },
	{ "adaptive", MAXP, false, false },
	{ "fixed min", 0, true, false },
	{ "fixed 339", MAXP, true, true },
	{ "adaptive", MAXP, false, true },
};

/* Returns the label of rule @k ("fixed N" for fixed counts, "/n" for
 * normal priority). */
static const char *rule_name(int k)
{
	static char names[NRULES][24];

	if (rules[k].fixed)
		snprintf(names[k], sizeof(names[k]), "fixed %u%s", rules[k].nprobes,
			 rules[k].normal_prio ? "/n" : "");
	else
		snprintf(names[k], sizeof(names[k]), "%s%s", rules[k].name,
			 rules[k].normal_prio ? "/n" : "");
	return names[k];
}

/* What one rule gathered in one phase. */
struct tally {
	int n;
	int64_t *probes, *err, *bound, *ms_us;
};

/* Runs @rounds rounds of every rule on every CPU, interleaved, into @t;
 * the adaptive rule is @sc (NULL: the default). */
static void run_phase(struct tsync_client *c, unsigned int source, int64_t truth,
		      int rounds, const struct tsync_stop_cfg *sc, struct tally *t)
{
	uint32_t ncpus = client_session(c)->ncpus;
	struct round_result r;

	for (int i = 0; i < rounds; i++) {
		for (uint32_t cpu = 0; cpu < ncpus; cpu++) {
			for (int k = 0; k < NRULES; k++) {
				int ri = (k + i) % NRULES;
				struct round_opts o = { .clock = "mono", .source = source,
							.nprobes = rules[ri].nprobes,
							.fixed_count = rules[ri].fixed,
							.stop = sc,
							.estimator = TSYNC_EST_ROBUST,
							.host_cpu = -1, .busy = -1,
							.normal_prio = rules[ri].normal_prio,
							/* measure the shift */
							.ns_clock = source == TSYNC_STAMP_CLOCK };
				struct tally *x = &t[ri];

				if (client_sync_round(c, cpu, &o, &r) || r.status) {
					printf("  %s cpu %u: round failed: %s\n", rule_name(ri),
					       cpu, r.error);
					continue;
				}
				x->probes[x->n] = r.est.sent;
				x->err[x->n] = llabs(r.est.offset_ns - truth);
				x->bound[x->n] = r.est.error_ns;
				x->ms_us[x->n] = r.round_ns / 1000;
				x->n++;
			}
		}
	}
}

/* Prints one phase's table and ratios. */
static void report(const char *phase, const char *src, struct tally *t)
{
	int64_t pm[NRULES], em[NRULES], e90[NRULES], ew[NRULES];
	double pmean[NRULES];

	printf("%s, %s source:\n", phase, src);
	printf("  %-12s %7s %7s %8s %8s %8s %9s %9s %7s\n", "rule", "probes", "(mean)",
	       "err med", "err p90", "worst", "bound med", "round us", "rounds");
	for (int k = 0; k < NRULES; k++) {
		struct tally *x = &t[k];

		pmean[k] = bench_mean(x->probes, x->n);
		pm[k] = bench_quant(x->probes, x->n, 0.5);
		em[k] = bench_quant(x->err, x->n, 0.5);
		e90[k] = bench_quant(x->err, x->n, 0.9);
		ew[k] = bench_quant(x->err, x->n, 1.0);
		printf("  %-12s %7lld %7.1f %8lld %8lld %8lld %9lld %9lld %7d\n", rule_name(k),
		       (long long)pm[k], pmean[k], (long long)em[k], (long long)e90[k],
		       (long long)ew[k], (long long)bench_quant(x->bound, x->n, 0.5),
		       (long long)bench_quant(x->ms_us, x->n, 0.5), x->n);
	}
	for (int k = 1; k < NRULES; k++) {
		/* the adaptive rule at normal priority against fixed 339 at
		 * normal priority; the rest against fixed 339 */
		int b = k == 4 ? 3 : 0;

		if (!t[b].n || !t[k].n || !pmean[b])
			continue;
		printf("  %-12s / %-11s: probes %.3fx (mean), error median %.2fx (%+lld ns), "
		       "p90 %.2fx, worst %.2fx\n", rule_name(k), rule_name(b), pmean[k] / pmean[b],
		       em[b] ? (double)em[k] / (double)em[b] : 0, (long long)(em[k] - em[b]),
		       e90[b] ? (double)e90[k] / (double)e90[b] : 0,
		       ew[b] ? (double)ew[k] / (double)ew[b] : 0);
	}
}

/* Allocates the tallies for @n rounds per rule. */
static int tally_alloc(struct tally *t, int n)
{
	memset(t, 0, NRULES * sizeof(*t));
	for (int k = 0; k < NRULES; k++) {
		t[k].n = 0;
		t[k].probes = calloc((size_t)n, sizeof(int64_t));
		t[k].err = calloc((size_t)n, sizeof(int64_t));
		t[k].bound = calloc((size_t)n, sizeof(int64_t));
		t[k].ms_us = calloc((size_t)n, sizeof(int64_t));
		if (!t[k].probes || !t[k].err || !t[k].bound || !t[k].ms_us)
			return -ENOMEM;
	}
	return 0;
}

/* Frees the tallies. */
static void tally_free(struct tally *t)
{
	for (int k = 0; k < NRULES; k++) {
		free(t[k].probes);
		free(t[k].err);
		free(t[k].bound);
		free(t[k].ms_us);
	}
	memset(t, 0, NRULES * sizeof(*t));
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	int rounds = argc > 1 ? atoi(argv[1]) : 60;
	struct client_opts co = { .connect_timeout_ms = 2000, .io_timeout_ms = 5000,
				  .host_name = "bench" };
	static const struct { const char *name; unsigned int source; int64_t truth; } src[] = {
		{ "clock", TSYNC_STAMP_CLOCK, -SHIFT_NS },
		{ "marker", TSYNC_STAMP_MARKER, 0 },
	};
	struct tsync_client *c;
	struct tsync_endpoint ep;
	struct tally t[NRULES];
	pid_t agent, busy[BENCH_MAX_BUSY];
	struct tsync_stop_cfg rule, *sc = NULL;
	const char *env = getenv("BENCH06_RULE");
	char err[256];
	int ret = 0;

	signal(SIGPIPE, SIG_IGN);
	tsync_log_init("bench_06_adaptive", TSYNC_LOG_WARN, false);
	if (rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: bench_06_adaptive [ROUNDS]\n");
		return 2;
	}
	tsync_stop_cfg_default(&rule);
	if (env) {
		if (sscanf(env, "%u,%u,%u,%u,%ld", &rule.min_probes, &rule.near, &rule.quiet,
			   &rule.tol_permille, &rule.tol_min_ns) != 5) {
			fprintf(stderr, "BENCH06_RULE: MIN,NEAR,QUIET,PERMILLE,NS\n");
			return 2;
		}
		sc = &rule;
	}
	rules[2].nprobes = rule.min_probes;
	printf("adaptive rule: min %u probes, %u near the floor (within %u/1000 or %ld ns,\n"
	       "x n/%u after %u probes), floor still for %u probes, at most %d probes\n",
	       rule.min_probes, rule.near, rule.tol_permille, (long)rule.tol_min_ns,
	       rule.widen_after, rule.widen_after, rule.quiet, MAXP);
	agent = bench_start_agent_ep(b, SHIFT_NS, &ep);
	if (agent < 0) {
		fprintf(stderr, "bench_06_adaptive: cannot start the agent from %s\n", b);
		return 1;
	}
	if (client_open(&ep, &co, &c, err, sizeof(err))) {
		fprintf(stderr, "bench_06_adaptive: %s\n", err);
		kill(agent, SIGTERM);
		waitpid(agent, NULL, 0);
		return 1;
	}
	printf("sync rounds against an agent in a time namespace (mono shifted by %lld ns),\n"
	       "%d rounds per rule, CPU, phase and source; |offset - truth| in ns:\n",
	       SHIFT_NS, rounds);
	const char *phases = getenv("BENCH06_PHASES");
	int nphases = phases ? atoi(phases) : 2;

	for (int phase = 0; phase < nphases && phase < 2 && !ret; phase++) {
		for (size_t s = 0; s < sizeof(src) / sizeof(src[0]) && !ret; s++) {
			int nb = 0;

			ret = tally_alloc(t, rounds * (int)client_session(c)->ncpus);
			if (!ret) {
				struct round_opts w = { .clock = "mono", .source = src[s].source,
							.nprobes = MAXP, .fixed_count = true,
							.host_cpu = -1, .busy = -1,
							.ns_clock = src[s].source == TSYNC_STAMP_CLOCK };
				struct round_result r;

				/* warm-up (a marker instance is created once) */
				client_sync_round(c, 0, &w, &r);
				if (phase)
					nb = bench_start_busy(busy, tsync_cpu_count());
				run_phase(c, src[s].source, src[s].truth, rounds, sc, t);
				bench_stop_busy(busy, nb);
				report(phase ? "busy loop on every CPU" : "quiet machine",
				       src[s].name, t);
			}
			tally_free(t);
		}
	}
	client_close(c);
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	return ret ? 1 : 0;
}
