// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_12_stop_replay: how many probes a round takes and why it stops,
 * and what stopping costs in error, for several stopping rules replayed on
 * the very same recorded rounds.
 *
 * A tsync-agent runs in a time namespace whose CLOCK_MONOTONIC is shifted
 * by SHIFT_NS (tests/helpers/timens_exec), so `-C mono` with the clock
 * source must measure exactly -SHIFT_NS; with the marker source the truth
 * is 0. Every round sends the full 339 probes (`--loops 339`, probe loops
 * at a real-time priority as sync and record run them) and keeps its
 * stamps and the round trips the live stopping rule would have seen
 * (struct round_probes). Each rule is then replayed on every round: the
 * stopper gets the recorded round trips one by one, and the round's
 * estimate is made from the probes before its stop, exactly as the live
 * round would have made it. So every rule is judged on the same probes,
 * and its error is compared with that of all 339 probes of the same round
 * (the baseline), which takes the machine's noise out of the comparison.
 *
 * Two phases, as bench_06_adaptive: a quiet machine, and one with a busy
 * loop per CPU. For each phase, source and rule it prints the probes per
 * round (10th, 50th, 90th percentile, mean), how the rounds stopped
 * (converged / at the ceiling), |offset - truth| (median, 90th
 * percentile), and the ratios to the baseline: probes (mean) and error
 * (median, 90th percentile).
 *
 * Usage: bench_12_stop_replay [ROUNDS]  (per CPU, phase and source;
 * default 40). BENCH12_RULE=MIN,NEAR,QUIET,PERMILLE,NS[,WIDEN][;...] adds
 * rules to try (struct tsync_stop_cfg; WIDEN 0 if not given); BENCH12_DUMP=FILE writes every round's probes
 * (phase, source, round, probe, rtt, t1, t2, t3, t4) for study;
 * BENCH12_PHASES=1 runs the quiet phase only. Never fails on timing; exits
 * non-zero only when it cannot run.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/net/endpoint.h"
#include "common/stamp/stamp.h"
#include "common/sync/estimate.h"
#include "common/sync/round_stop.h"
#include "host/peer/client.h"
#include "tests/bench/bench_lib.h"

#define SHIFT_NS 12345678901LL
#define MAXP 339
#define MAX_RULES 12
#define NPHASES 3
#define READER_WORK_NS 200000

static const char *const phase_names[NPHASES] = {
	"quiet machine", "busy loop on every CPU", "a reader woken after every round",
};

/* One recorded round. */
struct rec_round {
	struct tsync_probe_stamps host[MAXP], guest[MAXP];
	int64_t rtt[MAXP];
	uint32_t nhost, nguest;
};

/* A rule to replay: adaptive (cfg) or a fixed count. */
struct rule {
	char name[40];
	bool fixed;
	uint32_t nprobes;
	struct tsync_stop_cfg cfg;
};

/* Starts a child that reads lines from a pipe, as a terminal or `| grep`
 * reads sync's rows; returns its pid with the pipe's write end in *@fd. */
static pid_t start_reader(int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char buf[256];

		close(p[1]);
		/* a terminal renders what it reads: READER_WORK_NS of work a line */
		while (read(p[0], buf, sizeof(buf)) > 0) {
			int64_t t = tsync_now_ns();

			while (tsync_now_ns() - t < READER_WORK_NS)
				;
		}
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*fd = p[1];
	return pid;
}

/* Records @n rounds, cycling over the guest's CPUs, into @out: full ones,
 * or live ones under the default rule when @sc is set (their errors
 * against @truth and stop reasons into @err and @why). Returns how many
 * succeeded. */
static int record_rounds(struct tsync_client *c, unsigned int source, int n,
			 const struct tsync_stop_cfg *sc, int64_t truth, struct rec_round *out,
			 int64_t *err, enum tsync_stop_reason *why, int line_fd)
{
	uint32_t ncpus = client_session(c)->ncpus;
	struct round_result r;
	int got = 0;

	for (int i = 0; i < n; i++) {
		struct rec_round *x = &out[got];
		struct round_probes keep = { .cap = MAXP, .host = x->host, .guest = x->guest,
					     .rtt_ns = x->rtt };
		struct round_opts o = { .clock = "mono", .source = source, .nprobes = MAXP,
					.fixed_count = !sc, .stop = sc,
					.estimator = TSYNC_EST_ROBUST,
					.host_cpu = -1, .busy = -1, .keep = &keep,
					.ns_clock = source == TSYNC_STAMP_CLOCK };

		if (client_sync_round(c, (uint32_t)i % ncpus, &o, &r) || r.status) {
			printf("  round %d failed: %s\n", i, r.error);
			continue;
		}
		/* a line for the reader, as sync's rows go to a terminal */
		if (line_fd >= 0 && write(line_fd, "round done\n", 11) < 0)
			line_fd = -1;
		x->nhost = keep.nhost;
		x->nguest = keep.nguest;
		if (err)
			err[got] = llabs(r.est.offset_ns - truth);
		if (why)
			why[got] = r.stop;
		got++;
	}
	return got;
}

/* Replays @ru on @x: returns the probes it would have sent, with its
 * stop reason in *@why and its error against @truth in *@err (-1: no
 * estimate). */
static uint32_t replay(const struct rule *ru, const struct rec_round *x, int64_t truth,
		       enum tsync_stop_reason *why, int64_t *err)
{
	struct tsync_stopper *s;
	struct tsync_estimate e;
	uint32_t n = x->nhost;

	*why = TSYNC_STOP_MAX;
	*err = -1;
	if (tsync_stopper_new(ru->fixed ? NULL : &ru->cfg, ru->fixed ? ru->nprobes : MAXP,
			      ru->fixed, &s))
		return 0;
	for (uint32_t i = 0; i < x->nhost; i++) {
		if (tsync_stopper_add(s, x->rtt[i])) {
			n = i + 1;
			break;
		}
	}
	*why = tsync_stopper_reason(s);
	tsync_stopper_free(s);
	if (!tsync_estimate_round(x->host, n, x->guest, x->nguest, TSYNC_EST_ROBUST, &e))
		*err = llabs(e.offset_ns - truth);
	return n;
}

/* Prints one phase's table: every rule replayed on the @n rounds @x. */
static void report(const char *phase, const char *src, const struct rule *rules, int nrules,
		   const struct rec_round *x, int n, int64_t truth)
{
	int64_t *probes = calloc((size_t)n, sizeof(int64_t));
	int64_t *err = calloc((size_t)n, sizeof(int64_t));
	int64_t base_med = 0, base_p90 = 0;
	double base_mean = 0;

	if (!probes || !err) {
		free(probes);
		free(err);
		return;
	}
	printf("%s, %s source, %d rounds:\n", phase, src, n);
	printf("  %-22s %5s %5s %5s %6s %5s %5s %8s %8s   %s\n", "rule", "p10", "p50", "p90",
	       "mean", "conv", "max", "err med", "err p90", "ratios to 339");
	for (int k = 0; k < nrules; k++) {
		int conv = 0, atmax = 0, m = 0;
		int64_t p10, p50, p90, emed, ep90;
		double pm;

		for (int i = 0; i < n; i++) {
			enum tsync_stop_reason why;
			int64_t e;
			uint32_t used = replay(&rules[k], &x[i], truth, &why, &e);

			if (e < 0)
				continue;
			probes[m] = used;
			err[m++] = e;
			conv += why == TSYNC_STOP_CONVERGED;
			atmax += why == TSYNC_STOP_MAX;
		}
		pm = bench_mean(probes, m);
		p10 = bench_quant(probes, m, 0.1);
		p50 = bench_quant(probes, m, 0.5);
		p90 = bench_quant(probes, m, 0.9);
		emed = bench_quant(err, m, 0.5);
		ep90 = bench_quant(err, m, 0.9);
		if (k == 0) {
			base_mean = pm;
			base_med = emed;
			base_p90 = ep90;
		}
		printf("  %-22s %5lld %5lld %5lld %6.1f %5d %5d %8lld %8lld", rules[k].name,
		       (long long)p10, (long long)p50, (long long)p90, pm, conv, atmax,
		       (long long)emed, (long long)ep90);
		if (k && base_mean > 0)
			printf("   probes %.3fx, err med %.2fx, p90 %.2fx", pm / base_mean,
			       base_med ? (double)emed / (double)base_med : 0,
			       base_p90 ? (double)ep90 / (double)base_p90 : 0);
		printf("\n");
	}
	free(probes);
	free(err);
}

/* Prints the row of the @n live rounds @y (their errors @err, stop
 * reasons @why), with ratios to the baseline of the replayed table
 * (other rounds of the same phase: not paired). */
static void report_live(const struct rec_round *y, int n, int64_t *err,
			const enum tsync_stop_reason *why, const struct rule *base,
			const struct rec_round *x, int nx, int64_t truth)
{
	int64_t *probes = calloc((size_t)(n + nx), sizeof(int64_t)), *berr;
	int conv = 0, atmax = 0, m = 0;
	int64_t emed, ep90, bmed, bp90;
	double pm;

	if (!probes)
		return;
	berr = probes + n;
	for (int i = 0; i < n; i++) {
		probes[i] = y[i].nhost;
		conv += why[i] == TSYNC_STOP_CONVERGED;
		atmax += why[i] == TSYNC_STOP_MAX;
	}
	for (int i = 0; i < nx; i++) {
		enum tsync_stop_reason w;

		replay(base, &x[i], truth, &w, &berr[m]);
		m += berr[m] >= 0;
	}
	pm = bench_mean(probes, n);
	emed = bench_quant(err, n, 0.5);
	ep90 = bench_quant(err, n, 0.9);
	bmed = bench_quant(berr, m, 0.5);
	bp90 = bench_quant(berr, m, 0.9);
	printf("  %-22s %5lld %5lld %5lld %6.1f %5d %5d %8lld %8lld   probes %.3fx, "
	       "err med %.2fx, p90 %.2fx (not paired)\n", "adaptive (default) live",
	       (long long)bench_quant(probes, n, 0.1), (long long)bench_quant(probes, n, 0.5),
	       (long long)bench_quant(probes, n, 0.9), pm, conv, atmax, (long long)emed,
	       (long long)ep90, pm / MAXP, bmed ? (double)emed / (double)bmed : 0,
	       bp90 ? (double)ep90 / (double)bp90 : 0);
	free(probes);
}

/* What the real command's rounds did. */
struct cmd_stats {
	int n, conv, atmax;
	int64_t probes[2 * 4096], err[2 * 4096];
};

/* Returns the number after "@key": in @obj (up to @end), or -1 if absent. */
static long long json_num(const char *obj, const char *end, const char *key)
{
	const char *k = strstr(obj, key);

	if (!k || k > end)
		return -1;
	k += strlen(key);
	while (*k == ' ' || *k == ':' || *k == '"')
		k++;
	return strtoll(k, NULL, 10);
}

/* Reads the per-round objects of sync --json in @path into @st. */
static void parse_sync_json(const char *path, int64_t truth, struct cmd_stats *st)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t len;
	char *p;

	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	for (p = strstr(buf, "{\"round\""); p && st->n < (int)(sizeof(st->probes) / 8);
	     p = strstr(p + 1, "{\"round\"")) {
		const char *end = strchr(p, '}');
		const char *stop = strstr(p, "\"stop\"");

		if (!end || json_num(p, end, "\"sent\"") < 0)
			break;
		st->probes[st->n] = json_num(p, end, "\"sent\"");
		st->err[st->n] = llabs(json_num(p, end, "\"offset_ns\"") - truth);
		if (stop && stop < end) {
			const char *v = strchr(stop + strlen("\"stop\""), '"');

			if (v && v < end) {
				st->conv += !strncmp(v + 1, "converged", 9);
				st->atmax += !strncmp(v + 1, "max", 3);
			}
		}
		st->n++;
	}
}

/*
 * Runs the real `tsync-host sync -v --json -C mono --stamp clock --rounds
 * @rounds` (with --loops 339 when @fixed) against @ep, its JSON to a file
 * and its log read line by line through a pipe, as a terminal or `| grep`
 * reads it; fills @st from the JSON. Returns 0 or -1.
 */
static int run_sync_cmd(const char *b, const char *ep, int rounds, bool fixed, int64_t truth,
			struct cmd_stats *st)
{
	char host[512], nr[16], path[] = "/tmp/bench12-XXXXXX", line[512];
	int fd = mkstemp(path), p[2];
	FILE *log;
	pid_t pid;

	if (fd < 0)
		return -1;
	if (pipe(p)) {
		close(fd);
		unlink(path);
		return -1;
	}
	snprintf(host, sizeof(host), "%s/tsync-host", b);
	snprintf(nr, sizeof(nr), "%d", rounds);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		dup2(p[1], 2);
		close(p[0]);
		if (fixed)
			execl(host, host, "sync", "-v", "--json", "-C", "mono", "--stamp", "clock",
			      "--rounds", nr, "--loops", "339", ep, (char *)NULL);
		else
			execl(host, host, "sync", "-v", "--json", "-C", "mono", "--stamp", "clock",
			      "--rounds", nr, ep, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(fd);
	log = pid > 0 ? fdopen(p[0], "r") : NULL;
	while (log && fgets(line, sizeof(line), log))
		;
	if (log)
		fclose(log);
	else
		close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	memset(st, 0, sizeof(*st));
	parse_sync_json(path, truth, st);
	unlink(path);
	return st->n ? 0 : -1;
}

/* Prints the real command's rows: fixed 339 and the default rule. */
static void report_cmd(const char *b, const char *ep, int rounds)
{
	static struct cmd_stats fx, ad;
	int64_t fmed, amed;
	double fm, am;

	if (run_sync_cmd(b, ep, rounds, true, -SHIFT_NS, &fx) ||
	    run_sync_cmd(b, ep, rounds, false, -SHIFT_NS, &ad)) {
		printf("  tsync-host sync did not run\n");
		return;
	}
	fm = bench_mean(fx.probes, fx.n);
	am = bench_mean(ad.probes, ad.n);
	fmed = bench_quant(fx.err, fx.n, 0.5);
	amed = bench_quant(ad.err, ad.n, 0.5);
	printf("tsync-host sync -v --json -C mono --stamp clock --rounds %d, its log read\n"
	       "through a pipe (as a terminal reads it), %d and %d rounds:\n", rounds, fx.n, ad.n);
	printf("  %-22s %5s %5s %5s %6s %5s %5s %8s %8s\n", "rule", "p10", "p50", "p90",
	       "mean", "conv", "max", "err med", "err p90");
	printf("  %-22s %5lld %5lld %5lld %6.1f %5d %5d %8lld %8lld\n", "fixed 339 (--loops)",
	       (long long)bench_quant(fx.probes, fx.n, 0.1), (long long)bench_quant(fx.probes, fx.n, 0.5),
	       (long long)bench_quant(fx.probes, fx.n, 0.9), fm, fx.conv, fx.atmax, (long long)fmed,
	       (long long)bench_quant(fx.err, fx.n, 0.9));
	printf("  %-22s %5lld %5lld %5lld %6.1f %5d %5d %8lld %8lld   probes %.3fx, err med "
	       "%.2fx (not paired)\n", "adaptive (default)",
	       (long long)bench_quant(ad.probes, ad.n, 0.1), (long long)bench_quant(ad.probes, ad.n, 0.5),
	       (long long)bench_quant(ad.probes, ad.n, 0.9), am, ad.conv, ad.atmax, (long long)amed,
	       (long long)bench_quant(ad.err, ad.n, 0.9), fm > 0 ? am / fm : 0,
	       fmed ? (double)amed / (double)fmed : 0);
}

/* Writes the rounds to @f for study. */
static void dump(FILE *f, int phase, const char *src, const struct rec_round *x, int n)
{
	for (int i = 0; i < n; i++)
		for (uint32_t j = 0; j < x[i].nhost && j < x[i].nguest; j++)
			fprintf(f, "%d %s %d %u %lld %lld %lld %lld %lld\n", phase, src, i, j,
				(long long)x[i].rtt[j], (long long)x[i].host[j].t1,
				(long long)x[i].guest[j].t2, (long long)x[i].guest[j].t3,
				(long long)x[i].host[j].t4);
}

/* Fills @rules: the baseline, the default rule, fixed counts, and the
 * rule of BENCH12_RULE if set. Returns how many, or -1 on a bad rule. */
static int make_rules(struct rule *rules)
{
	static const uint32_t fixed[] = { MAXP, 16, 32, 85 };
	const char *env = getenv("BENCH12_RULE");
	int n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		rules[n].fixed = true;
		rules[n].nprobes = fixed[i];
		snprintf(rules[n].name, sizeof(rules[n].name), "fixed %u", fixed[i]);
		n++;
		if (i == 0) {
			rules[n].fixed = false;
			tsync_stop_cfg_default(&rules[n].cfg);
			snprintf(rules[n].name, sizeof(rules[n].name), "adaptive (default)");
			n++;
		}
	}
	/* rules to try: MIN,NEAR,QUIET,PERMILLE,NS[,WIDEN][;...] */
	while (env && *env && n < MAX_RULES) {
		struct tsync_stop_cfg *c = &rules[n].cfg;

		rules[n].fixed = false;
		c->widen_after = 0;
		if (sscanf(env, "%u,%u,%u,%u,%ld,%u", &c->min_probes, &c->near, &c->quiet,
			   &c->tol_permille, &c->tol_min_ns, &c->widen_after) < 5)
			return -1;
		snprintf(rules[n].name, sizeof(rules[n].name), "adaptive %u,%u,%u,%u,%ld,%u",
			 c->min_probes, c->near, c->quiet, c->tol_permille, (long)c->tol_min_ns,
			 c->widen_after);
		n++;
		env = strchr(env, ';');
		env = env ? env + 1 : NULL;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	const char *dump_path = getenv("BENCH12_DUMP"), *phases = getenv("BENCH12_PHASES");
	int rounds = argc > 1 ? atoi(argv[1]) : 40, nphases = phases ? atoi(phases) : NPHASES + 1;
	struct client_opts co = { .connect_timeout_ms = 2000, .io_timeout_ms = 5000,
				  .host_name = "bench" };
	static const struct { const char *name; unsigned int source; int64_t truth; } src[] = {
		{ "clock", TSYNC_STAMP_CLOCK, -SHIFT_NS },
		{ "marker", TSYNC_STAMP_MARKER, 0 },
	};
	struct rule rules[MAX_RULES];
	struct tsync_client *c;
	struct tsync_endpoint ep;
	struct rec_round *x, *y;
	int64_t *lerr;
	enum tsync_stop_reason *lwhy;
	pid_t agent, busy[BENCH_MAX_BUSY];
	FILE *df = NULL;
	char err[256], ep_text[128];
	int nrules, ret = 0;

	signal(SIGPIPE, SIG_IGN);
	tsync_log_init("bench_12_stop_replay", TSYNC_LOG_WARN, false);
	nrules = make_rules(rules);
	if (rounds < 1 || rounds > 10000 || nrules < 0) {
		fprintf(stderr, "usage: bench_12_stop_replay [ROUNDS]; "
			"BENCH12_RULE=MIN,NEAR,QUIET,PERMILLE,NS[,WIDEN][;...]\n");
		return 2;
	}
	x = calloc((size_t)rounds, sizeof(*x));
	y = calloc((size_t)rounds, sizeof(*y));
	lerr = calloc((size_t)rounds, sizeof(*lerr));
	lwhy = calloc((size_t)rounds, sizeof(*lwhy));
	if (!x || !y || !lerr || !lwhy)
		goto out;
	if (dump_path && !(df = fopen(dump_path, "w"))) {
		perror(dump_path);
		free(x);
		return 1;
	}
	agent = bench_start_agent(b, SHIFT_NS, ep_text, sizeof(ep_text));
	if (agent < 0 || tsync_endpoint_parse(ep_text, 0, &ep, err, sizeof(err)) ||
	    client_open(&ep, &co, &c, err, sizeof(err))) {
		fprintf(stderr, "bench_12_stop_replay: cannot start or reach the agent from %s\n", b);
		if (agent > 0) {
			kill(agent, SIGTERM);
			waitpid(agent, NULL, 0);
		}
		ret = 1;
		goto out;
	}
	printf("%d rounds of %d probes per phase and source, against an agent in a time\n"
	       "namespace; every rule replayed on the same rounds; |offset - truth| in ns;\n"
	       "conv/max: rounds that stopped converged / at the ceiling\n", rounds, MAXP);
	for (int phase = 0; phase < nphases && phase < NPHASES; phase++) {
		for (size_t s = 0; s < sizeof(src) / sizeof(src[0]); s++) {
			int64_t t = src[s].truth;
			int nb = 0, n, nl, lfd = -1;
			pid_t reader = -1;

			/* warm-up */
			record_rounds(c, src[s].source, 1, NULL, t, x, NULL, NULL, -1);
			if (phase == 1)
				nb = bench_start_busy(busy, tsync_cpu_count());
			if (phase == 2)
				reader = start_reader(&lfd);
			n = record_rounds(c, src[s].source, rounds, NULL, t, x, NULL, NULL, lfd);
			nl = record_rounds(c, src[s].source, rounds, &rules[1].cfg, t, y, lerr, lwhy,
					   lfd);
			bench_stop_busy(busy, nb);
			if (reader > 0) {
				close(lfd);
				waitpid(reader, NULL, 0);
			}
			report(phase_names[phase], src[s].name, rules, nrules, x, n, t);
			report_live(y, nl, lerr, lwhy, &rules[0], x, n, t);
			if (df) {
				dump(df, phase, src[s].name, x, n);
				dump(df, phase + 10, src[s].name, y, nl);
			}
		}
	}
	if (nphases > NPHASES)
		report_cmd(b, ep_text, rounds);
	client_close(c);
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
out:
	if (df)
		fclose(df);
	free(x);
	free(y);
	free(lerr);
	free(lwhy);
	return ret;
}
