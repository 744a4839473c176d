// SPDX-License-Identifier: GPL-2.0-or-later
/* The command line of `tsync-host record`; see record_args.h. */
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "host/cmd/record_args.h"

/* Exits 2 with @err (and 0 after --help) for a tsync_recopt_parse() result. */
static void parse_check(int ret, const char *err)
{
	if (ret == TSYNC_RECOPT_HELP)
		exit(0);
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		exit(2);
	}
}

/* The host's -e options as tracemeta specs (pointing into cfg->opt). */
static void host_events(struct rec_cfg *cfg)
{
	const struct tsync_recopt *o = &cfg->opt;

	if (o->nevents > MAX_EVENTS) {
		fprintf(stderr, "tsync-host record: more than %d events\n", MAX_EVENTS);
		exit(2);
	}
	for (int i = 0; i < o->nevents; i++)
		cfg->events[i] = (struct tracemeta_event_spec){
			.spec = o->events[i].name, .filter = o->events[i].filter,
			.negate = o->events[i].negate, .optional = o->ignore_missing };
	cfg->nevents = o->nevents;
}

/* Checks that a guest's -e options fit its agent's option words. */
static int guest_events(const struct tsync_recopt *o, char *err, size_t errlen)
{
	if (o->nevents > MAX_EVENTS)
		return snprintf(err, errlen, "more than %d events", MAX_EVENTS), -1;
	for (int i = 0; i < o->nevents; i++) {
		const struct tsync_recopt_event *e = &o->events[i];

		if (strlen(e->name) >= TSYNC_ARG_MAX)
			return snprintf(err, errlen, "event name too long"), -1;
		if (e->filter && strlen(e->filter) >= TSYNC_ARG_MAX)
			return snprintf(err, errlen, "filter too long"), -1;
	}
	return 0;
}

/* -A @arg and the options after it (@argv from its value on): adds a
 * guest. Returns the index in @argv where its options end, or exits. */
static int add_guest(struct rec_cfg *cfg, int argc, char **argv, int at)
{
	struct tsync_recopt *o = &cfg->gopt[cfg->nguests];
	struct host_agent_arg a;
	const char *val;
	struct guest *g;
	char err[512];
	int next, end;

	val = tsync_recopt_agent_value(argc, argv, at, &next);
	if (!val)
		return fprintf(stderr, "tsync-host record: option '-A' needs a value\n"), exit(2), 0;
	if (cfg->nguests >= MAX_GUESTS)
		return fprintf(stderr, "tsync-host record: at most %d guests\n", MAX_GUESTS),
		       exit(2), 0;
	if (host_agent_arg_parse(val, cfg->nguests, &a, err, sizeof(err)))
		return fprintf(stderr, "tsync-host record: invalid value '%s' for -A: %s\n", val,
			       err), exit(2), 0;
	tsync_recopt_init(o);
	/* argv[next - 1] (the -A's value) stands in for a program name */
	end = tsync_recopt_parse(o, TSYNC_RECOPT_GUEST, argc - (next - 1), argv + next - 1,
				 stdout, err, sizeof(err));
	parse_check(end, err);
	end += next - 1;
	if (o->max_kb && cfg->opt.max_kb)	/* as trace-cmd */
		return fprintf(stderr, "tsync-host record: -m can only be specified once\n"),
		       exit(2), 0;
	tsync_recopt_take_run(&cfg->opt, o);
	g = &cfg->guests[cfg->nguests];
	g->ep = a.ep;
	g->dialect = a.dialect;
	snprintf(g->name, sizeof(g->name), "%s", o->name ? o->name : a.name);
	for (int i = 0; i < cfg->nguests; i++)
		if (!strcmp(cfg->guests[i].name, g->name))
			return fprintf(stderr, "tsync-host record: two guests named '%s' (--name "
				       "NAME after -A names one)\n", g->name), exit(2), 0;
	g->agent_str = val;
	g->ts_offset = o->ts_offset;
	if (o->vm && host_agent_vm(NULL, o->vm, &g->vm_pid, err, sizeof(err)))
		return fprintf(stderr, "tsync-host record: guest %s: %s\n", g->name, err),
		       exit(2), 0;
	/* the guest's instance settings, as option words for either agent */
	if (guest_events(o, err, sizeof(err)))
		return fprintf(stderr, "tsync-host record: guest %s: %s\n", g->name, err),
		       exit(2), 0;
	if (tsync_recopt_instance_argv(o, &g->argv, &g->argc))
		return fprintf(stderr, "tsync-host record: out of memory\n"), exit(2), 0;
	cfg->nguests++;
	return end;
}

/* True if argv[@at] is an -A (not COMMAND's first word after "--"). */
static bool at_agent(int argc, char **argv, int at)
{
	return at < argc && !strncmp(argv[at], "-A", 2) && strcmp(argv[at - 1], "--");
}

/* Maps trace-cmd's --verbose levels and -q onto ours. */
static int log_level(const struct tsync_recopt *o)
{
	return o->quiet ? TSYNC_LOG_ERR : tsync_recopt_log_level(o->verbose);
}

/*
 * trace-cmd's default on KVM: with no -C, when every guest is synced and
 * a method of its own clock (kvm: x86-tsc) can serve each of them, the
 * whole recording runs on that clock (and TSC2NSEC then makes reports
 * show nanoseconds). Says so in cfg->clock_why for the summary.
 */
static void default_clock(struct rec_cfg *cfg)
{
	const char *want = NULL;
	char why[256];
	char *c;

	if (cfg->opt.clock_given || !cfg->nguests ||
	    (cfg->opt.has_tsync_interval && cfg->opt.tsync_interval_ms < 0))
		return;
	for (int i = 0; i < cfg->nguests; i++)
		if (cfg->gopt[i].clock_given)	/* a clock was chosen after an -A */
			return;
	for (int i = 0; i < cfg->nguests; i++) {
		const struct guest *g = &cfg->guests[i];
		struct sync_target t;
		const char *c1;

		host_agent_target(&t, NULL, NULL, &g->ep, g->name, g->vm_pid);
		t.protocol = peer_dialect_name(g->dialect);
		c1 = sync_method_clock(&t, why, sizeof(why));
		if (!c1 || (want && strcmp(want, c1))) {
			log_debug("guest %s: clock %s stays: %s", g->name, cfg->opt.clock,
				  c1 ? "the guests want different clocks" : why);
			return;
		}
		want = c1;
	}
	if (!want)
		return;
	c = strdup(want);
	if (!c)
		return;
	free(cfg->opt.clock);
	cfg->opt.clock = c;
	snprintf(cfg->clock_why, sizeof(cfg->clock_why), "no -C: every guest synced exactly "
		 "on it, as trace-cmd chooses");
}

/*
 * A -C after an -A: trace-cmd gives that guest's instance the clock; tsync
 * records host and guests on one clock, so it takes the recording's own
 * and refuses another with the reason. Exits 2 on a different one.
 */
static void guest_clocks(const struct rec_cfg *cfg)
{
	for (int i = 0; i < cfg->nguests; i++) {
		const char *c = cfg->gopt[i].clock;

		if (!cfg->gopt[i].clock_given || !strcmp(c, cfg->opt.clock))
			continue;
		fprintf(stderr, "tsync-host record: guest %s: -C %s: host and guests record on "
			"one clock, here %s: give -C %s before the first -A\n",
			cfg->guests[i].name, c, cfg->opt.clock, c);
		exit(2);
	}
}

/* Parses the command line into @cfg or exits; see record_args.h. */
void rec_parse_args(int argc, char **argv, struct rec_cfg *cfg)
{
	char err[512];
	int at;

	tsync_recopt_init(&cfg->opt);
	at = tsync_recopt_parse(&cfg->opt, TSYNC_RECOPT_HOST, argc, argv, stdout, err,
				sizeof(err));
	parse_check(at, err);
	while (at_agent(argc, argv, at))
		at = add_guest(cfg, argc, argv, at);
	/* what a guest's protocol cannot do (--key-file to a trace-cmd agent) */
	for (int i = 0; i < cfg->nguests; i++) {
		struct peer_opts po = { .key_file = cfg->opt.key_file };

		if (peer_check(cfg->guests[i].dialect, &po, NULL, err, sizeof(err))) {
			fprintf(stderr, "tsync-host record: guest %s: %s\n", cfg->guests[i].name,
				err);
			exit(2);
		}
	}
	/* COMMAND, after "--" or not (as trace-cmd accepts both) */
	if (at < argc)
		cfg->command = argv + at;
	if (cfg->opt.filter_command && !cfg->command) {
		fprintf(stderr, "tsync-host record: -F needs a COMMAND\n");
		exit(2);
	}
	if (cfg->opt.user && !cfg->command)
		fprintf(stderr, "tsync-host record: warning: --user %s is ignored, no command "
			"is specified\n", cfg->opt.user);
	if (cfg->opt.user && !getpwnam(cfg->opt.user)) {
		fprintf(stderr, "tsync-host record: --user %s: no such user\n", cfg->opt.user);
		exit(2);
	}
	host_events(cfg);
	default_clock(cfg);
	guest_clocks(cfg);
	cfg->stamp_forced = cfg->opt.stamp >= 0;
	if (cfg->stamp_forced)
		tsync_stamp_source_parse(tsync_stamp_names[cfg->opt.stamp], &cfg->source);
	else
		cfg->source = tsync_stamp_default(cfg->opt.clock);
	cfg->verbose = log_level(&cfg->opt);
	/* the parser allows only names and versions this accepts */
	tracedat_format_from_args(cfg->opt.file_version, cfg->opt.compression,
				  &cfg->run_opts.format);
	cfg->run_opts.version = "tsync 0.1";
	/* x86-tsc timestamps print as nanoseconds with it, as trace-cmd's */
	if (!strcmp(cfg->opt.clock, "x86-tsc") && tsync_tsc2nsec_read(&cfg->tsc2nsec) == 0)
		cfg->run_opts.tsc2nsec = &cfg->tsc2nsec;
}
