// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `tsync-host sync`: measure, per guest CPU, the offset between the host's
 * and the guest's trace clocks, print a table or JSON, and with --rounds
 * the drift fitted over the rounds; one agent after the other.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cpu.h"
#include "common/log.h"
#include "common/stamp.h"
#include "common/timeutil.h"
#include "host/agent_arg.h"
#include "host/client.h"
#include "host/commands.h"

struct sync_cfg {
	struct host_agent_arg agents[HOST_MAX_AGENTS];
	int nagents;
	struct round_opts round;
	const char *cpus;
	int rounds;
	int interval_ms;
	bool json;
	const char *key_file;
	int stamp_forced;
	int verbose;
};

/* Prints usage to @f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: tsync-host sync [OPTIONS] [-A AGENT[@NAME]]... [AGENT]...\n"
"  AGENT                 vsock:CID:PORT, tcp:HOST:PORT, a bare CID (vsock,\n"
"                        port %d) or HOST:PORT (TCP)\n"
"  -A AGENT[@NAME]       an agent to sync, named NAME (default guestN, the\n"
"                        agents counted from 0); at most %d agents\n"
"  -C, --clock CLOCK     trace clock (default local)\n"
"      --loops N         probes per CPU round (default: until more probes\n"
"                        cannot improve the estimate, at most 339)\n"
"      --cpus LIST       guest CPUs to sync, e.g. 0-3,6 (default all)\n"
"      --rounds N        rounds per CPU (default 1); N>1 also fits the drift\n"
"      --interval MS     pause between rounds (default 0)\n"
"      --estimator NAME  robust (default), fastest or histogram\n"
"      --stamp SOURCE    marker, clock or tsc (default: from the clock)\n"
"      --host-cpu N      pin the host thread to CPU N (default: same\n"
"                        number as the guest CPU being synced)\n"
"      --poll MODE       wait for replies: sleep, busy or auto (default)\n"
"      --json            print JSON instead of a table\n"
"      --key-file FILE   authenticate with this shared key (and make the\n"
"                        agent prove it holds it too)\n"
"  -v, --verbose         debug logging\n", TSYNC_DEFAULT_PORT, HOST_MAX_AGENTS);
}

/* Exits with a usage error naming @opt and @val. */
static void __attribute__((noreturn)) bad_value(const char *opt, const char *val,
						 const char *what)
{
	fprintf(stderr, "tsync-host sync: invalid value '%s' for %s: %s\n", val, opt, what);
	exit(2);
}

/* Parses a non-negative int in [lo, hi] or exits. */
static long parse_range(const char *opt, const char *val, long lo, long hi)
{
	char *end;
	long v;
	char what[64];

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || *end || end == val || v < lo || v > hi) {
		snprintf(what, sizeof(what), "expected a number from %ld to %ld", lo, hi);
		bad_value(opt, val, what);
	}
	return v;
}

/* Parses "marker" / "clock" / "tsc" or exits. */
static enum tsync_stamp_source parse_source(const char *val)
{
	enum tsync_stamp_source src;

	if (tsync_stamp_source_parse(val, &src))
		bad_value("--stamp", val, "expected marker, clock or tsc");
	return src;
}

/* Adds the agent @arg (AGENT[@NAME]) to @cfg or exits. */
static void add_agent(struct sync_cfg *cfg, const char *arg)
{
	struct host_agent_arg *a = &cfg->agents[cfg->nagents];
	char err[300];

	if (cfg->nagents >= HOST_MAX_AGENTS)
		bad_value("AGENT", arg, "too many agents");
	if (host_agent_arg_parse(arg, cfg->nagents, a, err, sizeof(err))) {
		fprintf(stderr, "tsync-host sync: AGENT: %s\n", err);
		exit(2);
	}
	for (int i = 0; i < cfg->nagents; i++)
		if (!strcmp(cfg->agents[i].name, a->name))
			bad_value("AGENT", arg, "two agents with this name");
	cfg->nagents++;
}

/* Parses the command line into @cfg or exits. */
static void parse_args(int argc, char **argv, struct sync_cfg *cfg)
{
	enum { O_LOOPS = 256, O_CPUS, O_ROUNDS, O_INTERVAL, O_EST, O_STAMP, O_JSON,
	       O_HOSTCPU, O_POLL, O_KEYFILE };
	static const struct option opts[] = {
		{ "clock", required_argument, NULL, 'C' },
		{ "loops", required_argument, NULL, O_LOOPS },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "estimator", required_argument, NULL, O_EST },
		{ "stamp", required_argument, NULL, O_STAMP },
		{ "host-cpu", required_argument, NULL, O_HOSTCPU },
		{ "poll", required_argument, NULL, O_POLL },
		{ "json", no_argument, NULL, O_JSON },
		{ "key-file", required_argument, NULL, O_KEYFILE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "C:A:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (!*optarg || strlen(optarg) >= TSYNC_CLOCK_NAME_MAX)
				bad_value("-C", optarg, "not a trace clock name");
			cfg->round.clock = optarg;
			break;
		case O_LOOPS:
			cfg->round.nprobes = (uint32_t)parse_range("--loops", optarg, 1, TSYNC_MAX_PROBES);
			cfg->round.fixed_count = true;
			break;
		case 'A': add_agent(cfg, optarg); break;
		case O_CPUS: cfg->cpus = optarg; break;
		case O_ROUNDS: cfg->rounds = (int)parse_range("--rounds", optarg, 1, 1000000); break;
		case O_INTERVAL: cfg->interval_ms = (int)parse_range("--interval", optarg, 0, 3600000); break;
		case O_EST:
			if (tsync_estimator_parse(optarg, &cfg->round.estimator))
				bad_value("--estimator", optarg, "expected robust, fastest or histogram");
			break;
		case O_STAMP:
			cfg->round.source = parse_source(optarg);
			cfg->stamp_forced = 1;
			break;
		case O_HOSTCPU:
			cfg->round.host_cpu = (int)parse_range("--host-cpu", optarg, 0,
							       tsync_cpu_count() - 1);
			break;
		case O_POLL:
			if (!strcmp(optarg, "sleep"))
				cfg->round.busy = 0;
			else if (!strcmp(optarg, "busy"))
				cfg->round.busy = 1;
			else if (!strcmp(optarg, "auto"))
				cfg->round.busy = -1;
			else
				bad_value("--poll", optarg, "expected sleep, busy or auto");
			break;
		case O_JSON: cfg->json = true; break;
		case O_KEYFILE: cfg->key_file = optarg; break;
		case 'v': cfg->verbose++; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	for (; optind < argc; optind++)
		add_agent(cfg, argv[optind]);
	if (!cfg->nagents) {
		fprintf(stderr, "tsync-host sync: missing AGENT\n");
		usage(stderr);
		exit(2);
	}
	if (!cfg->stamp_forced)
		cfg->round.source = tsync_stamp_default(cfg->round.clock);
	/* an explicit clock source measures the clocks as the namespaces
	 * show them; the default is in trace clock terms */
	cfg->round.ns_clock = cfg->stamp_forced && cfg->round.source == TSYNC_STAMP_CLOCK;
}

/* Prints one table row. */
static void print_row(const struct round_result *r)
{
	if (r->status) {
		printf("%4u %6u  FAILED: %s\n", r->cpu, r->round_id, r->error);
		return;
	}
	printf("%4u %6u %20lld %10lld %10lld %5u/%-5u %9.3f\n", r->cpu, r->round_id,
	       (long long)r->est.offset_ns, (long long)r->est.error_ns,
	       (long long)r->est.delay_ns, r->est.used, r->est.sent, r->round_ns / 1e6);
}

/* Prints one round as a JSON object. */
static void print_json_round(const struct round_result *r, bool last)
{
	printf("      {\"round\": %u, \"cpu\": %u, \"host_cpu\": %d, ", r->round_id, r->cpu,
	       r->host_cpu);
	if (r->status) {
		printf("\"ok\": false, \"error\": \"");
		for (const char *p = r->error; *p; p++)
			if (*p == '"' || *p == '\\')
				printf("\\%c", *p);
			else if ((unsigned char)*p >= 0x20)
				putchar(*p);
		printf("\"}%s\n", last ? "" : ",");
		return;
	}
	printf("\"ok\": true, \"offset_ns\": %lld, \"error_ns\": %lld, \"delay_ns\": %lld, "
	       "\"used\": %u, \"valid\": %u, \"sent\": %u, \"stop\": \"%s\", "
	       "\"guest_ts\": %lld, \"round_ms\": %.3f}%s\n",
	       (long long)r->est.offset_ns, (long long)r->est.error_ns,
	       (long long)r->est.delay_ns, r->est.used, r->est.valid, r->est.sent,
	       tsync_stop_reason_name(r->stop), (long long)r->est.guest_ts,
	       r->round_ns / 1e6, last ? "" : ",");
}

/*
 * Makes the list of guest CPUs to sync (--cpus, or all @ncpus) in
 * @list/@nlist. Returns 0, or the exit code after saying why.
 */
static int select_cpus(const struct sync_cfg *cfg, uint32_t ncpus, uint32_t **list,
		       uint32_t *nlist)
{
	char err[300];
	int n;

	if (cfg->cpus) {
		n = tsync_cpu_list_parse(cfg->cpus, ncpus, list, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "tsync-host sync: --cpus: %s (guest)\n", err);
			return n == -ENOMEM ? 1 : 2;
		}
		*nlist = (uint32_t)n;
		return 0;
	}
	/* ncpus >= 1: client_open() refuses a session without CPUs */
	*list = calloc(ncpus, sizeof(**list));	// NOLINT(clang-analyzer-optin.portability.UnixAPI)
	if (!*list) {
		fprintf(stderr, "tsync-host sync: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < ncpus; i++)
		(*list)[i] = i;
	*nlist = ncpus;
	return 0;
}

/* Prints the table's header line for agent @name (named with several). */
static void print_header(const struct sync_cfg *cfg, const char *name,
			 const struct tsync_client *c)
{
	printf("%s%sagent %s (%s), %u CPUs, clock %s, stamps %s, estimator %s, %s%u probes\n"
	       "%4s %6s %20s %10s %10s %11s %9s\n", cfg->nagents > 1 ? name : "",
	       cfg->nagents > 1 ? ": " : "", client_peer(c),
	       client_session(c)->name, client_session(c)->ncpus, cfg->round.clock,
	       tsync_stamp_source_name(cfg->round.source),
	       tsync_estimator_name(cfg->round.estimator),
	       cfg->round.fixed_count ? "" : "at most ", cfg->round.nprobes,
	       "cpu", "round", "offset_ns", "error_ns", "delay_ns", "used/sent", "round_ms");
}

/*
 * Runs the rounds on every CPU of @cpulist into @res ([rounds][nlist]),
 * printing table rows. Returns 0 (@failed counts the failed rounds) or 1
 * when the connection broke (said why).
 */
static int run_rounds(const struct sync_cfg *cfg, struct tsync_client *c,
		      const uint32_t *cpulist, uint32_t nlist, struct round_result *res,
		      int *failed)
{
	for (int r = 0; r < cfg->rounds; r++) {
		if (r && cfg->interval_ms) {
			struct timespec ts = { cfg->interval_ms / 1000,
					       (cfg->interval_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		for (uint32_t i = 0; i < nlist; i++) {
			struct round_result *rr = &res[(size_t)r * nlist + i];
			int ret = client_sync_round(c, cpulist[i], &cfg->round, rr);

			if (rr->status)
				(*failed)++;
			if (!cfg->json)
				print_row(rr);
			if (ret) {
				fprintf(stderr, "tsync-host sync: %s: %s\n", client_peer(c), rr->error);
				return 1;
			}
		}
	}
	return 0;
}

/* Prints CPU @cpu's result over the rounds @res (one per round, @stride
 * apart): its JSON object, or with several rounds its drift line. */
static void print_cpu(const struct sync_cfg *cfg, uint32_t cpu, const struct round_result *res,
		      size_t stride, bool last_cpu)
{
	struct tsync_shift_sample *s = calloc((size_t)cfg->rounds, sizeof(*s));
	const struct round_result *last = NULL;
	double ppm = 0;
	int n = 0, have_drift = 0;

	for (int r = 0; s && r < cfg->rounds; r++) {
		const struct round_result *rr = &res[(size_t)r * stride];

		if (rr->status)
			continue;
		last = rr;
		tsync_estimate_shift_sample(&rr->est, &s[n++]);
	}
	if (n >= 2 && !tsync_drift_fit(s, (size_t)n, &ppm, NULL, NULL))
		have_drift = 1;
	if (cfg->json) {
		printf("    {\"cpu\": %u, ", cpu);
		if (last)
			printf("\"offset_ns\": %lld, \"error_ns\": %lld, \"delay_ns\": %lld, "
			       "\"used\": %u, \"sent\": %u, \"round_ms\": %.3f, ",
			       (long long)last->est.offset_ns, (long long)last->est.error_ns,
			       (long long)last->est.delay_ns, last->est.used, last->est.sent,
			       last->round_ns / 1e6);
		if (have_drift)
			printf("\"drift_ppm\": %.4f, ", ppm);
		printf("\"ok\": %s,\n     \"rounds\": [\n", last ? "true" : "false");
		for (int r = 0; r < cfg->rounds; r++)
			print_json_round(&res[(size_t)r * stride], r == cfg->rounds - 1);
		printf("    ]}%s\n", last_cpu ? "" : ",");
	} else if (cfg->rounds > 1) {
		if (have_drift)
			printf("  cpu %u: %.4f ppm (%d rounds)\n", cpu, ppm, n);
		else
			printf("  cpu %u: not enough successful rounds\n", cpu);
	}
	free(s);
}

/* Prints agent @name's JSON object or the drift per CPU, fitted over the
 * rounds. */
static void print_results(const struct sync_cfg *cfg, const char *name,
			  const struct tsync_client *c, const uint32_t *cpulist, uint32_t nlist,
			  const struct round_result *res)
{
	if (cfg->json) {
		printf("{\n  \"name\": \"%s\", \"agent\": \"%s\", \"clock\": \"%s\", "
		       "\"stamp\": \"%s\", \"estimator\": \"%s\", \"probes\": %u, "
		       "\"adaptive\": %s,\n  \"cpus\": [\n",
		       name, client_peer(c), cfg->round.clock, tsync_stamp_source_name(cfg->round.source),
		       tsync_estimator_name(cfg->round.estimator), cfg->round.nprobes,
		       cfg->round.fixed_count ? "false" : "true");
	} else if (cfg->rounds > 1) {
		printf("drift over %d rounds:\n", cfg->rounds);
	}
	for (uint32_t i = 0; i < nlist; i++)
		print_cpu(cfg, cpulist[i], &res[i], nlist, i + 1 == nlist);
	if (cfg->json)
		printf("  ]\n}\n");
}

/*
 * Syncs agent @a: connects, runs the rounds, prints the table or its JSON
 * object (after a comma when *@nprinted, which counts the objects).
 * Returns 0, 1 when it failed (said why) or 2 for a --cpus it lacks.
 */
static int sync_agent(const struct sync_cfg *cfg, const struct host_agent_arg *a,
		      const struct client_opts *copts, int *nprinted)
{
	struct tsync_client *c = NULL;
	struct round_result *res = NULL;
	uint32_t *cpulist = NULL, nlist = 0;
	char err[300];
	int ret, failed = 0;

	ret = client_open(&a->ep, copts, &c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, err);
		return 1;
	}
	ret = select_cpus(cfg, client_session(c)->ncpus, &cpulist, &nlist);
	if (ret)
		goto out;
	if (!nlist || cfg->rounds < 1) {
		fprintf(stderr, "tsync-host sync: %s: no guest CPU to sync\n", a->name);
		ret = 2;
		goto out;
	}
	res = calloc((size_t)nlist * (size_t)cfg->rounds, sizeof(*res));
	if (!res) {
		fprintf(stderr, "tsync-host sync: out of memory\n");
		ret = 1;
		goto out;
	}
	if (!cfg->json)
		print_header(cfg, a->name, c);
	ret = run_rounds(cfg, c, cpulist, nlist, res, &failed);
	if (ret)
		goto out;
	if (cfg->json && (*nprinted)++)
		printf(",\n");
	print_results(cfg, a->name, c, cpulist, nlist, res);
	ret = failed ? 1 : 0;
	if (failed)
		fprintf(stderr, "tsync-host sync: %s: %d round(s) failed\n", a->name, failed);
out:
	client_close(c);
	free(cpulist);
	free(res);
	return ret;
}

int host_cmd_sync(int argc, char **argv)
{
	struct sync_cfg cfg = {
		.round = { .clock = "local", .nprobes = 339, .host_cpu = -1, .busy = -1,
			   .estimator = TSYNC_EST_ROBUST },
		.rounds = 1,
	};
	struct client_opts copts = { .connect_timeout_ms = 5000, .io_timeout_ms = 5000 };
	int ret = 0, nprinted = 0;

	parse_args(argc, argv, &cfg);
	tsync_log_init("tsync-host", cfg.verbose ? TSYNC_LOG_DEBUG : TSYNC_LOG_INFO, false);
	copts.host_name = "host";
	copts.key_file = cfg.key_file;
	copts.host_trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)tsync_now_ns();

	/* one agent: its object alone, as before several were possible */
	if (cfg.json && cfg.nagents > 1)
		printf("{\"agents\": [\n");
	for (int i = 0; i < cfg.nagents; i++) {
		int r = sync_agent(&cfg, &cfg.agents[i], &copts, &nprinted);

		if (r > ret)
			ret = r;
	}
	if (cfg.json && cfg.nagents > 1)
		printf("]}\n");
	return ret;
}
