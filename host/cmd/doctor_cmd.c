// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `tsync-host doctor [GUEST]...`: checks the host, then each guest, and
 * prints one line per finding with its fix, or with --json one document
 * (host/cmd/json_out.h). Exits 1 when a finding fails (a recording could
 * not work), 0 when every finding is ok or warn, 2 on a usage error. The
 * checks: host/cmd/doctor.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "common/base/log.h"
#include "common/base/trace_clock.h"
#include "common/cli/opt.h"
#include "common/net/endpoint.h"
#include "host/cmd/commands.h"
#include "host/cmd/doctor.h"
#include "host/cmd/json_out.h"
#include "host/guest/agent_arg.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct doctor_cfg {
	struct host_agent_arg agents[HOST_MAX_AGENTS];
	int nagents;
	const char *clock;
	const char *output;
	const char *key_file;
	int timeout_ms;
	bool json;
};

enum { O_AGENT = 1, O_VM, O_CLOCK, O_OUTPUT, O_KEYFILE, O_TIMEOUT, O_JSON, O_HELP };

/* The options of `tsync-host doctor`; tsync-host(1) documents each. */
static const struct tsync_opt doctor_opts[] = {
	{ .id = O_AGENT, .short_name = 'A', .type = TSYNC_OPT_STRING, .arg = "GUEST",
	  .flags = TSYNC_OPT_REPEAT,
	  .help = "a guest's agent to check, AGENT[@NAME] as for sync; at most "
		  STR(HOST_MAX_AGENTS) " guests, -A or plain" },
	{ .id = O_VM, .name = "vm", .type = TSYNC_OPT_STRING, .arg = "VM",
	  .flags = TSYNC_OPT_REPEAT, .def_text = "a vsock guest's QEMU, by its CID",
	  .help = "the local QEMU process of the -A before it, a PID or its -name, for the "
		  "kvm method" },
	{ .id = O_CLOCK, .name = "clock", .short_name = 'C', .type = TSYNC_OPT_STRING,
	  .arg = "CLOCK", .def = "local", .help = "the trace clock to check on host and guests" },
	{ .id = O_OUTPUT, .name = "output", .short_name = 'o', .type = TSYNC_OPT_STRING,
	  .arg = "FILE", .def = "trace.dat",
	  .help = "the recording's output file: the free space of its directory is checked" },
	{ .id = O_KEYFILE, .name = "key-file", .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def_text = "no key", .help = "authenticate to the agents with this shared key" },
	{ .id = O_TIMEOUT, .name = "timeout", .type = TSYNC_OPT_INT, .arg = "MS", .def = "5000",
	  .min = 100, .max = 600000, .help = "connect and reply timeout per guest" },
	{ .id = O_JSON, .name = "json", .type = TSYNC_OPT_FLAG,
	  .help = "print JSON instead of one line per finding" },
	{ .id = O_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	{ 0 }
};

static const struct tsync_opt_cmd doctor_cmd = {
	.prog = "tsync-host doctor",
	.synopsis = "usage: tsync-host doctor [OPTIONS] [-A GUEST]... [GUEST]...\n"
		    "  GUEST                   an agent, as for sync: vsock:CID:PORT, tcp:HOST:PORT,\n"
		    "                          tcmd:..., a CID or HOST:PORT\n",
	.opts = doctor_opts,
};

/* Stores one option value into the struct doctor_cfg @ctx. */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct doctor_cfg *cfg = ctx;

	switch (o->id) {
	case O_AGENT:
		return host_agent_list_add(cfg->agents, &cfg->nagents, v->str, "guests", err,
					   errlen);
	case O_VM:
		return host_agent_list_vm(cfg->agents, cfg->nagents, v->str, err, errlen);
	case O_CLOCK:
		if (!tsync_trace_clock_name_ok(v->str))
			return snprintf(err, errlen, "not a trace clock name"), -1;
		cfg->clock = v->str;
		return 0;
	case O_OUTPUT: cfg->output = v->str; return 0;
	case O_KEYFILE: cfg->key_file = v->str; return 0;
	case O_TIMEOUT: cfg->timeout_ms = (int)v->num; return 0;
	case O_JSON: cfg->json = true; return 0;
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Parses the command line into @cfg or exits. */
static void parse_args(int argc, char **argv, struct doctor_cfg *cfg)
{
	char err[300];
	int first = tsync_opt_parse_or_exit(&doctor_cmd, argc, argv, set_opt, cfg);

	for (; first < argc; first++) {
		if (host_agent_list_add(cfg->agents, &cfg->nagents, argv[first], "guests", err,
					sizeof(err))) {
			fprintf(stderr, "tsync-host doctor: GUEST '%s': %s\n", argv[first], err);
			exit(2);
		}
	}
}

/* The directory of output file @file into @buf ("." for a bare name). */
static const char *out_dir(const char *file, char *buf, size_t len)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		return ".";
	if (slash == file)
		return "/";
	snprintf(buf, len, "%.*s", (int)(slash - file), file);
	return buf;
}

/* Prints @r's findings, one a line, under @scope; returns whether one
 * failed. */
static bool print_report(const char *scope, const struct doctor_report *r)
{
	bool failed = false;

	for (int i = 0; i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];

		failed = failed || f->status == DOCTOR_FAIL;
		printf("%s: %s: %s: %s%s%s\n", scope, f->check,
		       f->status == DOCTOR_FAIL ? "FAIL" : doctor_status_name(f->status), f->detail,
		       f->fix[0] ? "; fix: " : "", f->fix);
	}
	return failed;
}

/* @r's findings as a JSON array. */
static struct json_object *report_json(const struct doctor_report *r)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];
		const struct host_json_kv kv[] = {
			{ "check", host_json_str(f->check) },
			{ "status", host_json_str(doctor_status_name(f->status)) },
			{ "detail", host_json_str(f->detail) },
			{ "fix", host_json_str(f->fix) },
		};

		if (host_json_append(arr, host_json_object(kv, sizeof(kv) / sizeof(kv[0])))) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/* Whether a finding of @r failed. */
static bool report_failed(const struct doctor_report *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->f[i].status == DOCTOR_FAIL)
			return true;
	return false;
}

/* Checks every guest of @cfg, printing or collecting into @guests;
 * returns whether one failed. */
static bool check_guests(const struct doctor_cfg *cfg, struct json_object *guests)
{
	const struct doctor_guest_opts go = { .clock = cfg->clock, .key_file = cfg->key_file,
					      .timeout_ms = cfg->timeout_ms };
	struct doctor_report *r = malloc(sizeof(*r));
	bool failed = false;

	if (!r) {
		fprintf(stderr, "tsync-host doctor: out of memory\n");
		return true;
	}
	for (int i = 0; i < cfg->nagents; i++) {
		struct json_object *g;

		r->n = 0;
		g = doctor_guest(&cfg->agents[i], &go, r);
		failed = failed || report_failed(r);
		if (!cfg->json) {
			print_report(cfg->agents[i].name, r);
			json_object_put(g);
		} else if (host_json_add(g, "checks", report_json(r)) ||
			   host_json_append(guests, g)) {
			failed = true;
		}
	}
	free(r);
	return failed;
}

int host_cmd_doctor(int argc, char **argv)
{
	struct doctor_cfg cfg = { 0 };	/* defaults: doctor_opts[] */
	char clocks[TSYNC_MAX_CLOCKS][TSYNC_TRACE_CLOCK_NAME_MAX], dir[4096];
	struct json_object *guests = NULL, *doc;
	struct doctor_host_facts f;
	struct doctor_report host = { .n = 0 };
	bool failed;

	parse_args(argc, argv, &cfg);
	tsync_log_init("tsync-host", TSYNC_LOG_WARN, false);
	doctor_host_facts(&f, cfg.clock, out_dir(cfg.output, dir, sizeof(dir)), clocks);
	doctor_judge_host(&f, &host);
	failed = report_failed(&host);
	if (!cfg.json) {
		print_report("host", &host);
		failed = check_guests(&cfg, NULL) || failed;
		return failed ? 1 : 0;
	}
	guests = json_object_new_array();
	failed = check_guests(&cfg, guests) || failed;
	const struct host_json_kv kv[] = {
		{ "ok", host_json_bool(!failed) },
		{ "host", report_json(&host) },
		{ "guests", guests },
	};
	doc = host_json_object(kv, sizeof(kv) / sizeof(kv[0]));
	if (!doc || host_json_print(stdout, doc))
		return 1;
	return failed ? 1 : 0;
}
