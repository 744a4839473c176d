// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `tsync-host sync`: measure, per guest CPU, the offset between the host's
 * and the guest's trace clocks, print a table or JSON, and with --rounds
 * the drift fitted over the rounds. Several agents are synced at once, a
 * thread each (rounds that share a host CPU take turns), and printed in
 * the order given. Every agent, whatever its protocol (host/peer/peer.h)
 * and the sync method that serves it (host/sync/sync.h), goes through the
 * same loop and prints the same table and JSON, with both named; what a
 * method does not learn (trace-cmd's agent estimates itself: no error
 * bound, delay or probes used; a method without probes: no probe columns)
 * prints as "-" in the table and null in JSON.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "common/base/cpu.h"
#include "common/clock/clock.h"
#include "common/base/log.h"
#include "common/base/trace_clock.h"
#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "host/guest/agent_arg.h"
#include "host/peer/peer.h"
#include "host/sync/sync.h"
#include "host/cmd/commands.h"
#include "host/cmd/cpu_locks.h"
#include "host/cmd/json_out.h"
#include "host/cmd/preflight.h"

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
	bool no_quickack;
	struct agent_clock_cfg host_clock;	/* the host's time daemon */
};

#define STR_(x) #x
#define STR(x) STR_(x)

enum { O_AGENT = 1, O_VM, O_CLOCK, O_LOOPS, O_CPUS, O_ROUNDS, O_INTERVAL, O_EST, O_STAMP, O_HOSTCPU,
       O_POLL, O_JSON, O_KEYFILE, O_NOQUICKACK, O_METHOD, O_CLOCKD, O_PTP4L, O_CHRONY,
       O_VERBOSE, O_HELP };

static const char *const estimators[] = { "robust", "fastest", "histogram", NULL };
static const char *const polls[] = { "sleep", "busy", "auto", NULL };

/* The options of `tsync-host sync`; tsync-host(1) documents each
 * (tests/e2e/manpages.sh checks the defaults agree). */
static const struct tsync_opt sync_opts[] = {
	{ .id = O_AGENT, .short_name = 'A', .type = TSYNC_OPT_STRING, .arg = "AGENT[@NAME]",
	  .flags = TSYNC_OPT_REPEAT,
	  .help = "an agent to sync, named NAME (default guestN, the agents counted from "
		  "0); at most " STR(HOST_MAX_AGENTS) " agents, -A or plain" },
	{ .id = O_VM, .name = "vm", .type = TSYNC_OPT_STRING, .arg = "VM",
	  .flags = TSYNC_OPT_REPEAT, .def_text = "a vsock guest's QEMU, by its CID",
	  .help = "the local QEMU process of the -A before it, a PID or its -name, for the "
		  "kvm method" },
	{ .id = O_CLOCK, .name = "clock", .short_name = 'C', .type = TSYNC_OPT_STRING,
	  .arg = "CLOCK", .def = "local", .help = "trace clock" },
	{ .id = O_LOOPS, .name = "loops", .type = TSYNC_OPT_INT, .arg = "N",
	  .min = 1, .max = TSYNC_MAX_PROBES,
	  .def_text = "adaptive, at most " STR(ROUND_DEFAULT_PROBES),
	  .help = "probes per CPU round, exactly; without it a round stops once more "
		  "probes cannot improve the estimate" },
	{ .id = O_CPUS, .name = "cpus", .type = TSYNC_OPT_STRING, .arg = "LIST",
	  .def_text = "all guest CPUs", .help = "guest CPUs to sync, e.g. 0-3,6" },
	{ .id = O_ROUNDS, .name = "rounds", .type = TSYNC_OPT_INT, .arg = "N", .def = "1",
	  .min = 1, .max = 1000000, .help = "rounds per CPU; more than 1 also fits the drift" },
	{ .id = O_INTERVAL, .name = "interval", .type = TSYNC_OPT_INT, .arg = "MS",
	  .def = "0", .min = 0, .max = 3600000, .help = "pause between rounds" },
	{ .id = O_EST, .name = "estimator", .type = TSYNC_OPT_CHOICE, .arg = "NAME",
	  .choices = estimators, .def = "robust", .help = "offset estimator" },
	{ .id = O_STAMP, .name = "stamp", .type = TSYNC_OPT_CHOICE, .arg = "SOURCE",
	  .choices = tsync_stamp_names, .def_text = "chosen from the clock",
	  .help = "timestamp source" },
	{ .id = O_HOSTCPU, .name = "host-cpu", .type = TSYNC_OPT_INT, .arg = "N",
	  .min = 0, .max = 65535, .def_text = "the guest CPU's number",	/* and < the host's CPUs */
	  .help = "pin the host thread to CPU N" },
	{ .id = O_POLL, .name = "poll", .type = TSYNC_OPT_CHOICE, .arg = "MODE",
	  .choices = polls, .def = "auto", .help = "how to wait for replies" },
	{ .id = O_JSON, .name = "json", .type = TSYNC_OPT_FLAG,
	  .help = "print JSON instead of a table" },
	{ .id = O_KEYFILE, .name = "key-file", .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def_text = "no key",
	  .help = "authenticate with this shared key; the agent must prove it holds it too" },
	{ .id = O_NOQUICKACK, .name = "no-quickack", .type = TSYNC_OPT_FLAG,
	  .help = "trace-cmd agents (tcmd:): do not re-arm TCP_QUICKACK; only to measure what "
		  "it saves" },
	{ .id = O_METHOD, .name = "tsync-method", .type = TSYNC_OPT_CHOICE, .arg = "METHOD",
	  .choices = tsync_method_choices, .def = "auto",
	  .help = "the sync method: auto (the best usable), probes, kvm or external (the "
		  "time daemons' bound)" },
	{ .id = O_CLOCKD, .name = "clock-daemon", .type = TSYNC_OPT_CHOICE, .arg = "DAEMON",
	  .choices = agent_clock_daemons, .def = "auto",
	  .help = "the host's time daemon, for the external method" },
	{ .id = O_PTP4L, .name = "ptp4l-socket", .type = TSYNC_OPT_STRING, .arg = "PATH",
	  .def = CLOCK_DEF_PTP4L_SOCKET, .help = "the host's ptp4l management socket" },
	{ .id = O_CHRONY, .name = "chrony-socket", .type = TSYNC_OPT_STRING, .arg = "PATH",
	  .def = CLOCK_DEF_CHRONY_SOCKET, .help = "the host's chronyd command socket" },
	{ .id = O_VERBOSE, .name = "verbose", .short_name = 'v', .type = TSYNC_OPT_FLAG,
	  .help = "debug logging" },
	{ .id = O_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	{ 0 }
};

static const struct tsync_opt_cmd sync_cmd = {
	.prog = "tsync-host sync",
	.synopsis = "usage: tsync-host sync [OPTIONS] [-A AGENT[@NAME]]... [AGENT]...\n"
		    "  AGENT                   vsock:CID:PORT, tcp:HOST:PORT, a bare CID (vsock,\n"
		    "                          port " STR(TSYNC_DEFAULT_PORT) ") or HOST:PORT (TCP)\n",
	.opts = sync_opts,
};

/* Stores one option value into the struct sync_cfg @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct sync_cfg *cfg = ctx;

	switch (o->id) {
	case O_AGENT:
		return host_agent_list_add(cfg->agents, &cfg->nagents, v->str, "agents", err,
					   errlen);
	case O_VM:
		return host_agent_list_vm(cfg->agents, cfg->nagents, v->str, err, errlen);
	case O_CLOCK:
		if (!tsync_trace_clock_name_ok(v->str))
			return snprintf(err, errlen, "not a trace clock name"), -1;
		cfg->round.clock = v->str;
		return 0;
	case O_LOOPS:
		cfg->round.nprobes = (uint32_t)v->num;
		cfg->round.fixed_count = true;
		return 0;
	case O_CPUS: cfg->cpus = v->str; return 0;
	case O_ROUNDS: cfg->rounds = (int)v->num; return 0;
	case O_INTERVAL: cfg->interval_ms = (int)v->num; return 0;
	case O_EST:
		return tsync_estimator_parse(v->str, &cfg->round.estimator) ?
		       snprintf(err, errlen, "unknown estimator"), -1 : 0;
	case O_STAMP:
		if (tsync_stamp_source_parse(v->str, &cfg->round.source))
			return snprintf(err, errlen, "unknown source"), -1;
		cfg->stamp_forced = 1;
		return 0;
	case O_HOSTCPU:
		if (v->num >= tsync_cpu_count())
			return snprintf(err, errlen, "the host has %d CPUs", tsync_cpu_count()), -1;
		cfg->round.host_cpu = (int)v->num;
		return 0;
	case O_POLL:	/* sleep, busy, auto */
		cfg->round.busy = v->num == 2 ? -1 : (int)v->num;
		return 0;
	case O_JSON: cfg->json = true; return 0;
	case O_KEYFILE: cfg->key_file = v->str; return 0;
	case O_NOQUICKACK: cfg->no_quickack = true; return 0;
	case O_METHOD: cfg->round.method = tsync_method_choices[v->num]; return 0;
	case O_CLOCKD: cfg->host_clock.daemon = agent_clock_daemons[v->num]; return 0;
	case O_PTP4L: cfg->host_clock.ptp4l_socket = v->str; return 0;
	case O_CHRONY: cfg->host_clock.chrony_server = v->str; return 0;
	case O_VERBOSE: cfg->verbose++; return 0;
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Parses the command line into @cfg or exits. */
static void parse_args(int argc, char **argv, struct sync_cfg *cfg)
{
	char err[300];
	int first;

	/* the defaults that are not values of an option */
	cfg->round.host_cpu = -1;			/* O_HOSTCPU */
	cfg->round.nprobes = ROUND_DEFAULT_PROBES;	/* O_LOOPS */
	agent_clock_cfg_init(&cfg->host_clock, NULL, NULL, NULL, 0);
	cfg->round.host_clock = &cfg->host_clock;
	first = tsync_opt_parse_or_exit(&sync_cmd, argc, argv, set_opt, cfg);
	for (; first < argc; first++) {
		if (host_agent_list_add(cfg->agents, &cfg->nagents, argv[first], "agents", err,
					sizeof(err))) {
			fprintf(stderr, "tsync-host sync: AGENT '%s': %s\n", argv[first], err);
			exit(2);
		}
	}
	if (!cfg->nagents) {
		fprintf(stderr, "tsync-host sync: missing AGENT\n");
		tsync_opt_usage(&sync_cmd, stderr);
		exit(2);
	}
	if (!cfg->stamp_forced)
		cfg->round.source = tsync_stamp_default(cfg->round.clock);
	/* an explicit clock source measures the clocks as the namespaces
	 * show them; the default is in trace clock terms */
	cfg->round.ns_clock = cfg->stamp_forced && cfg->round.source == TSYNC_STAMP_CLOCK;
}

/* Prints the bound or delay @v in @width columns, "-" when the protocol
 * does not learn it (ROUND_UNKNOWN). */
static void print_ns(FILE *out, int width, int64_t v)
{
	if (v < 0)
		fprintf(out, "%*s", width, "-");
	else
		fprintf(out, "%*lld", width, (long long)v);
}

/* Prints one table row. */
static void print_row(FILE *out, const struct sync_result *r)
{
	char used[16] = "-", sent[16] = "-";

	if (r->status) {
		fprintf(out, "%4u %6u  FAILED: %s\n", r->cpu, r->round, r->error);
		return;
	}
	if (r->probes.used)
		snprintf(used, sizeof(used), "%u", r->probes.used);
	if (r->probes.sent)
		snprintf(sent, sizeof(sent), "%u", r->probes.sent);
	fprintf(out, "%4u %6u %20lld ", r->cpu, r->round, (long long)r->offset_ns);
	print_ns(out, 10, r->error_ns);
	fputc(' ', out);
	print_ns(out, 10, r->probes.sent ? r->probes.delay_ns : SYNC_UNKNOWN);
	fprintf(out, " %5s/%-5s %9.3f\n", used, sent, r->round_ns / 1e6);
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
	/* ncpus >= 1: peer_open() refuses a session without CPUs */
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

/* Prints @text, or "-" for NULL. */
static const char *or_dash(const char *text)
{
	return text ? text : "-";
}

/* Prints the table's header line for agent @name (named with several),
 * synced by @m. */
static void print_header(FILE *out, const struct sync_cfg *cfg, const char *name,
			 const struct peer *p, const struct sync_method *m)
{
	struct sync_info in;
	char probes[32] = "no";

	sync_method_info(m, &cfg->round, &in);
	if (in.probes)
		snprintf(probes, sizeof(probes), "%s%u", in.adaptive ? "at most " : "", in.probes);
	fprintf(out, "%s%sagent %s (%s), protocol %s, method %s, %u CPUs, clock %s, stamps %s, "
		"estimator %s, %s probes\n"
	       "%4s %6s %20s %10s %10s %11s %9s\n", cfg->nagents > 1 ? name : "",
	       cfg->nagents > 1 ? ": " : "", peer_addr(p), peer_host(p), peer_name(p),
	       sync_method_name(m), peer_ncpus(p), cfg->round.clock, or_dash(in.stamp),
	       or_dash(in.estimator), probes,
	       "cpu", "round", "offset_ns", "error_ns", "delay_ns", "used/sent", "round_ms");
}

/*
 * Runs the rounds on every CPU of @cpulist into @res ([rounds][nlist]),
 * printing table rows. Returns 0 (@failed counts the failed rounds) or 1
 * when the connection broke (said why).
 */
static int run_rounds(FILE *out, const struct sync_cfg *cfg, const struct peer *p,
		      struct sync_method *m, const uint32_t *cpulist, uint32_t nlist,
		      struct sync_result *res, int *failed)
{
	for (int r = 0; r < cfg->rounds; r++) {
		if (r && cfg->interval_ms) {
			struct timespec ts = { cfg->interval_ms / 1000,
					       (cfg->interval_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		for (uint32_t i = 0; i < nlist; i++) {
			struct sync_result *rr = &res[(size_t)r * nlist + i];
			int ret = sync_method_sample(m, cpulist[i], &cfg->round, rr);

			if (rr->status)
				(*failed)++;
			if (!cfg->json)
				print_row(out, rr);
			if (ret) {
				fprintf(stderr, "tsync-host sync: %s: %s\n", peer_addr(p), rr->error);
				return 1;
			}
		}
	}
	return 0;
}

/* The JSON object of CPU @cpu: its last good sample @last (NULL: none),
 * the drift @ppm when @have_drift, and its rounds @res (@stride apart);
 * NULL when it cannot be allocated. */
static struct json_object *json_cpu(const struct sync_cfg *cfg, uint32_t cpu,
				    const struct sync_result *last, bool have_drift, double ppm,
				    const struct sync_result *res, size_t stride)
{
	struct json_object *rounds = json_object_new_array();
	struct host_json_kv kv[10];
	size_t n = 0;

	for (int r = 0; r < cfg->rounds; r++)
		if (host_json_append(rounds, host_json_sync_round(&res[(size_t)r * stride])))
			break;
	if (!rounds || json_object_array_length(rounds) != (size_t)cfg->rounds) {
		json_object_put(rounds);
		return NULL;
	}
	kv[n++] = (struct host_json_kv){ "cpu", host_json_int(cpu) };
	if (last) {
		const struct sync_probes *p = &last->probes;

		kv[n++] = (struct host_json_kv){ "offset_ns", host_json_int(last->offset_ns) };
		kv[n++] = (struct host_json_kv){ "error_ns", host_json_ns(last->error_ns) };
		kv[n++] = (struct host_json_kv){ "delay_ns",
			host_json_ns(p->sent ? p->delay_ns : SYNC_UNKNOWN) };
		kv[n++] = (struct host_json_kv){ "used", host_json_count(p->used) };
		kv[n++] = (struct host_json_kv){ "sent", host_json_int(p->sent) };
		kv[n++] = (struct host_json_kv){ "round_ms",
			host_json_fixed((double)last->round_ns / 1e6, 3) };
	}
	if (have_drift)
		kv[n++] = (struct host_json_kv){ "drift_ppm", host_json_fixed(ppm, 4) };
	kv[n++] = (struct host_json_kv){ "ok", host_json_bool(last != NULL) };
	kv[n++] = (struct host_json_kv){ "rounds", rounds };
	return host_json_object(kv, n);
}

/* CPU @cpu's result over the rounds @res (one per round, @stride apart):
 * appended to @cpus as its JSON object (with --json), or its drift line
 * printed with several rounds. Returns 0 or -ENOMEM. */
static int print_cpu(FILE *out, const struct sync_cfg *cfg, uint32_t cpu,
		     const struct sync_result *res, size_t stride, struct json_object *cpus)
{
	struct tsync_shift_sample *s = calloc((size_t)cfg->rounds, sizeof(*s));
	const struct sync_result *last = NULL;
	double ppm = 0;
	int n = 0, have_drift = 0, ret = 0;

	if (!s)
		return -ENOMEM;
	for (int r = 0; r < cfg->rounds; r++) {
		const struct sync_result *rr = &res[(size_t)r * stride];

		if (rr->status)
			continue;
		last = rr;
		s[n++] = (struct tsync_shift_sample){ rr->guest_ts, rr->offset_ns };
	}
	if (n >= 2 && !tsync_drift_fit(s, (size_t)n, &ppm, NULL, NULL))
		have_drift = 1;
	if (cfg->json) {
		ret = host_json_append(cpus, json_cpu(cfg, cpu, last, have_drift, ppm, res,
						      stride));
	} else if (cfg->rounds > 1) {
		if (have_drift)
			fprintf(out, "  cpu %u: %.4f ppm (%d rounds)\n", cpu, ppm, n);
		else
			fprintf(out, "  cpu %u: not enough successful rounds\n", cpu);
	}
	free(s);
	return ret;
}

/* The JSON object of agent @name, synced by @m, without its CPUs. */
static struct json_object *json_agent(const struct sync_cfg *cfg, const char *name,
				      const struct peer *p, const struct sync_method *m)
{
	struct sync_info in;

	sync_method_info(m, &cfg->round, &in);
	const struct host_json_kv kv[] = {
		{ "name", host_json_str(name) },
		{ "agent", host_json_str(peer_addr(p)) },
		{ "protocol", host_json_str(peer_name(p)) },
		{ "method", host_json_str(sync_method_name(m)) },
		{ "ncpus", host_json_int(peer_ncpus(p)) },
		{ "clock", host_json_str(cfg->round.clock) },
		{ "stamp", host_json_str(in.stamp) },
		{ "estimator", host_json_str(in.estimator) },
		{ "probes", host_json_int(in.probes) },
		{ "adaptive", host_json_bool(in.adaptive) },
		{ "fallback", host_json_str(sync_method_fallback(m)) },
		{ "clocks", host_json_str(sync_method_detail(m)) },
	};
	return host_json_object(kv, sizeof(kv) / sizeof(kv[0]));
}

/* Agent @name's results: its JSON object in *@obj (with --json), or the
 * drift per CPU fitted over the rounds printed. Returns 0 or -ENOMEM. */
static int print_results(FILE *out, const struct sync_cfg *cfg, const char *name,
			 const struct peer *p, const struct sync_method *m,
			 const uint32_t *cpulist, uint32_t nlist, const struct sync_result *res,
			 struct json_object **obj)
{
	struct json_object *cpus = NULL;
	int ret = 0;

	if (cfg->json) {
		cpus = json_object_new_array();
		*obj = json_agent(cfg, name, p, m);
		if (!cpus || !*obj)
			ret = -ENOMEM;
	} else if (cfg->rounds > 1) {
		fprintf(out, "drift over %d rounds:\n", cfg->rounds);
	}
	for (uint32_t i = 0; !ret && i < nlist; i++)
		ret = print_cpu(out, cfg, cpulist[i], &res[i], nlist, cpus);
	if (!ret && cfg->json) {
		ret = host_json_add(*obj, "cpus", cpus);
		cpus = NULL;
	} else if (!ret && sync_method_detail(m)[0]) {
		fprintf(out, "clocks: %s\n", sync_method_detail(m));
	}
	json_object_put(cpus);
	if (ret && cfg->json) {
		json_object_put(*obj);
		*obj = NULL;
	}
	return ret;
}

/*
 * Syncs the guest of session @c (agent @a): chooses its method, runs the
 * rounds, prints the table to @out or makes its JSON object in *@obj,
 * ends the session. Returns as sync_agent().
 */
static int sync_session(FILE *out, const struct sync_cfg *cfg, const struct host_agent_arg *a,
			struct peer *c, struct json_object **obj)
{
	struct sync_method *m = NULL;
	struct sync_result *res = NULL;
	uint32_t *cpulist = NULL, nlist = 0;
	struct sync_target t;
	char err[600];
	int ret, failed = 0;

	ret = select_cpus(cfg, peer_ncpus(c), &cpulist, &nlist);
	if (ret)
		return ret;
	if (!nlist || cfg->rounds < 1) {
		fprintf(stderr, "tsync-host sync: %s: no guest CPU to sync\n", a->name);
		ret = 2;
		goto out;
	}
	host_agent_target(&t, NULL, c, &a->ep, a->name, a->vm_pid);
	ret = sync_method_open(&t, &cfg->round, &m, err, sizeof(err));
	if (!ret && sync_method_fallback(m)[0])
		fprintf(stderr, "tsync-host sync: %s: method %s, not %s\n", a->name,
			sync_method_name(m), sync_method_fallback(m));
	res = ret ? NULL : calloc((size_t)nlist * (size_t)cfg->rounds, sizeof(*res));
	if (!res) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, ret ? err : "out of memory");
		ret = 1;
		goto out;
	}
	if (!cfg->json)
		print_header(out, cfg, a->name, c, m);
	ret = run_rounds(out, cfg, c, m, cpulist, nlist, res, &failed);
	if (ret)
		goto out;
	if (print_results(out, cfg, a->name, c, m, cpulist, nlist, res, obj)) {
		fprintf(stderr, "tsync-host sync: %s: out of memory\n", a->name);
		ret = 1;
		goto out;
	}
	ret = peer_finish(c, err, sizeof(err));
	if (ret)
		fprintf(stderr, "tsync-host sync: %s: ending the session: %s\n", a->name, err);
	ret = ret || failed ? 1 : 0;
	if (failed)
		fprintf(stderr, "tsync-host sync: %s: %d round(s) failed\n", a->name, failed);
out:
	sync_method_close(m);
	free(cpulist);
	free(res);
	return ret;
}

/*
 * Syncs agent @a: connects and checks what its protocol and its guest
 * allow, then sync_session(). Returns 0, 1 when it failed (said why on
 * stderr) or 2 for a --cpus it lacks or an option its protocol cannot
 * honour.
 */
static int sync_agent(FILE *out, const struct sync_cfg *cfg, const struct host_agent_arg *a,
		      const struct peer_opts *copts, struct json_object **obj)
{
	struct peer_opts po = *copts;
	struct sync_target t;
	struct peer *c = NULL;
	char err[1024];	/* an agent's reason and fix fit */
	int ret;

	if (peer_check(a->dialect, copts, &cfg->round, err, sizeof(err))) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, err);
		return 2;
	}
	/* what the hello offers: the methods usable before connecting */
	host_agent_target(&t, NULL, NULL, &a->ep, a->name, a->vm_pid);
	t.protocol = peer_dialect_name(a->dialect);
	po.methods = sync_method_offer(&t, &cfg->round);
	/* trace-cmd's dialect proposes kvm in its TRACE_REQ */
	po.kvm = !!(po.methods & TSYNC_METHOD_BIT(TSYNC_METHOD_KVM));
	ret = peer_open(a->dialect, &a->ep, &po, &c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, err);
		return 1;
	}
	if (host_preflight_guest(c, cfg->round.clock, err, sizeof(err))) {
		fprintf(stderr, "tsync-host sync: %s: %s\n", a->name, err);
		ret = 1;
	} else {
		ret = sync_session(out, cfg, a, c, obj);
	}
	peer_free(c);
	return ret;
}

/* One agent's sync in its own thread; its table waits in a buffer, its
 * JSON object in obj. */
struct agent_job {
	const struct sync_cfg *cfg;
	const struct host_agent_arg *a;
	const struct peer_opts *copts;
	pthread_t th;
	char *buf;			/* what it printed (open_memstream) */
	size_t len;
	int ret;			/* sync_agent()'s */
	bool started;
	struct json_object *obj;	/* its JSON object; NULL: none */
};

/* Thread body: syncs one agent into its buffer. */
static void *agent_thread(void *arg)
{
	struct agent_job *j = arg;
	FILE *out = open_memstream(&j->buf, &j->len);

	if (!out) {
		fprintf(stderr, "tsync-host sync: %s: out of memory\n", j->a->name);
		j->ret = 1;
		return NULL;
	}
	j->ret = sync_agent(out, j->cfg, j->a, j->copts, &j->obj);
	if (fclose(out))
		j->ret = 1;
	return NULL;
}

/*
 * Syncs all agents at once, a thread each (rounds that share a host CPU
 * take turns, round_opts.cpu_locks), then prints their output in the
 * order given: their tables, or one JSON document {"agents": [...]} of
 * the agents that have an object. Returns the worst exit code.
 */
static int sync_agents(const struct sync_cfg *cfg, const struct peer_opts *copts)
{
	struct agent_job jobs[HOST_MAX_AGENTS] = { 0 };
	struct json_object *list = cfg->json ? json_object_new_array() : NULL;
	int ret = 0;

	for (int i = 0; i < cfg->nagents; i++) {
		jobs[i] = (struct agent_job){ .cfg = cfg, .a = &cfg->agents[i], .copts = copts };
		if (pthread_create(&jobs[i].th, NULL, agent_thread, &jobs[i])) {
			fprintf(stderr, "tsync-host sync: %s: cannot start a thread\n",
				cfg->agents[i].name);
			jobs[i].ret = 1;
		} else {
			jobs[i].started = true;
		}
	}
	for (int i = 0; i < cfg->nagents; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
		if (jobs[i].obj && host_json_append(list, jobs[i].obj))
			ret = 1;
		if (jobs[i].buf)
			fwrite(jobs[i].buf, 1, jobs[i].len, stdout);
		free(jobs[i].buf);
		if (jobs[i].ret > ret)
			ret = jobs[i].ret;
	}
	if (cfg->json) {
		const struct host_json_kv kv[] = { { "agents", list } };

		if (!list || host_json_print(stdout, host_json_object(kv, 1)))
			ret = 1;
	}
	return ret;
}

int host_cmd_sync(int argc, char **argv)
{
	struct sync_cfg cfg = { 0 };	/* defaults: sync_opts[] */
	struct peer_opts copts = { .connect_timeout_ms = 5000, .io_timeout_ms = 5000 };
	pthread_mutex_t *locks = NULL;
	struct json_object *obj = NULL;
	int ret = 0, nlocks;
	char err[600];

	parse_args(argc, argv, &cfg);
	if (host_preflight("sync", false, cfg.round.clock, cfg.round.source, cfg.stamp_forced,
			   err, sizeof(err))) {
		fprintf(stderr, "tsync-host sync: %s\n", err);
		return 2;
	}
	tsync_log_init("tsync-host", cfg.verbose ? TSYNC_LOG_DEBUG : TSYNC_LOG_INFO, false);
	copts.host_name = "host";
	copts.key_file = cfg.key_file;
	copts.clock = cfg.round.clock;
	copts.source = cfg.round.source;
	copts.no_quickack = cfg.no_quickack;
	copts.host_trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)tsync_now_ns();

	/* one agent: its rows as they come, its object alone */
	if (cfg.nagents == 1) {
		ret = sync_agent(stdout, &cfg, &cfg.agents[0], &copts, &obj);
		if (obj && host_json_print(stdout, obj))
			ret = 1;
		return ret;
	}
	nlocks = host_cpu_locks_new(&locks);
	if (nlocks < 0) {
		fprintf(stderr, "tsync-host sync: out of memory\n");
		return 1;
	}
	cfg.round.cpu_locks = locks;
	ret = sync_agents(&cfg, &copts);
	host_cpu_locks_free(locks, nlocks);
	return ret;
}
