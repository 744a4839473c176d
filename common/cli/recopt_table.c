// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rows of the trace-cmd record option parser (recopt.c): each row of
 * rec_opts[] is one option, whole: its names, type, default, range and
 * help (struct tsync_opt, common/cli/opt.h, which parses the words and
 * checks numbers, choices and repeats), where it is taken and what it
 * applies to after an -A (its rec_scope), the field of struct
 * tsync_recopt that keeps its value and how (its rec_kind), a check of
 * the text, and whether it is passed on to a guest's agent as option
 * words. The checks and setters the rows name are here too.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "common/base/trace_clock.h"
#include "common/cli/recopt_priv.h"
#include "common/clock/clock.h"
#include "proto/proto.h"

const struct rec_scope_info rec_scopes[] = {
	[SC_INST] = { S_HOST | S_GUEST | S_AGENT, false },
	[SC_HOST] = { S_HOST, false },
	[SC_RUN] = { S_HOST | S_GUEST, true },
	[SC_FORMAT] = { S_HOST | S_GUEST | S_AGENT, true },
	[SC_FILE] = { S_HOST | S_GUEST | S_AGENT, false },
	[SC_GUEST] = { S_GUEST | S_AGENT, false },
	[SC_VM] = { S_GUEST, false },
	[SC_CLOCK] = { S_HOST | S_GUEST | S_AGENT, false },
	[SC_SYNTAX] = { S_HOST | S_GUEST | S_AGENT, false },
};

static const char *const compressions[] = { "any", "none", "zstd", "zlib", NULL };
const char *const tsync_method_choices[] = { "auto", "probes", "kvm", "external", NULL };

static rec_check_fn check_tracer, check_module, check_option, check_cpumask,
		    check_name, check_clock, check_output, check_ts_offset;
static rec_set_fn set_filter, set_negate, set_verbose, set_not_agent;

#define F(field) offsetof(struct tsync_recopt, field)
#define GIVEN(field) (F(field) + 1)
#define STRV TSYNC_OPT_STRING
#define FLAG TSYNC_OPT_FLAG
#define UNSUP(s, l, t, why) \
	{ .o = { .short_name = (s), .name = (l), .type = (t), \
		 .flags = TSYNC_OPT_UNSUPPORTED | TSYNC_OPT_REPEAT, .help = (why) } }

/* The options of `tsync-host record`, in trace-cmd's names and meanings;
 * tsync-host(1) documents each (tests/e2e/manpages.sh checks that the
 * defaults agree). */
const struct rec_opt rec_opts[] = {
	{ .o = { .short_name = 'e', .type = STRV, .arg = "EVENT", .flags = TSYNC_OPT_REPEAT,
		 .def_text = "no events", .help = "record system:event, system or all" },
	  .scope = SC_INST, .kind = K_EVENTS, .off = F(events), .pass = true },
	{ .o = { .short_name = 'f', .type = STRV, .arg = "FILTER", .flags = TSYNC_OPT_REPEAT,
		 .help = "filter of the preceding -e (several: all must match)" },
	  .scope = SC_INST, .set = set_filter },
	{ .o = { .short_name = 'v', .type = FLAG,
		 .help = "the -e options after it disable events instead" },
	  .scope = SC_INST, .set = set_negate },
	{ .o = { .short_name = 'a', .type = FLAG, .help = "record all events (-e all)" },
	  .scope = SC_INST, .kind = K_EVENTS, .off = F(events), .fixed = "all" },
	{ .o = { .short_name = 'p', .type = STRV, .arg = "TRACER", .flags = TSYNC_OPT_SCOPED,
		 .def_text = "nop", .help = "tracer: function, function_graph, ..." },
	  .scope = SC_INST, .kind = K_STR, .off = F(inst.tracer), .check = check_tracer,
	  .pass = true },
	{ .o = { .short_name = 'l', .type = STRV, .arg = "FUNC", .flags = TSYNC_OPT_REPEAT,
		 .help = "trace only this function (glob)" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.funcs), .check = rec_check_func,
	  .pass = true },
	{ .o = { .short_name = 'n', .type = STRV, .arg = "FUNC", .flags = TSYNC_OPT_REPEAT,
		 .help = "do not trace this function (glob)" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.notrace_funcs), .check = rec_check_func,
	  .pass = true },
	{ .o = { .short_name = 'g', .type = STRV, .arg = "FUNC", .flags = TSYNC_OPT_REPEAT,
		 .help = "function_graph: graph this function" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.graph_funcs), .check = rec_check_func,
	  .pass = true },
	/* not passed on: the functions after it carry ":mod:M" */
	{ .o = { .name = "module", .type = STRV, .arg = "MODULE", .flags = TSYNC_OPT_SCOPED,
		 .help = "function filters only in MODULE" },
	  .scope = SC_INST, .kind = K_STR, .off = F(module), .check = check_module },
	{ .o = { .name = "max-graph-depth", .type = TSYNC_OPT_INT, .arg = "N",
		 .flags = TSYNC_OPT_SCOPED, .min = 0, .max = INT_MAX,
		 .help = "function_graph: depth limit" },
	  .scope = SC_INST, .kind = K_INT, .off = F(inst.max_graph_depth), .unset = -1,
	  .pass = true },
	{ .o = { .short_name = 'P', .type = STRV, .arg = "PID[,PID]", .flags = TSYNC_OPT_REPEAT,
		 .help = "trace only these processes" },
	  .scope = SC_INST, .kind = K_PIDS, .off = F(inst.pids), .pass = true },
	{ .o = { .short_name = 'F', .type = FLAG, .help = "trace only COMMAND" },
	  .scope = SC_HOST, .kind = K_TRUE, .off = F(filter_command) },
	{ .o = { .short_name = 'c', .type = FLAG, .help = "with -F or -P: their children too" },
	  .scope = SC_INST, .kind = K_TRUE, .off = F(inst.follow_children), .pass = true },
	{ .o = { .short_name = 'O', .type = STRV, .arg = "OPTION", .flags = TSYNC_OPT_REPEAT,
		 .help = "set trace option (noOPTION clears it)" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.options), .check = check_option,
	  .pass = true },
	/* passed on as the -O it is */
	{ .o = { .short_name = 'T', .type = FLAG,
		 .help = "stack trace of every event (-O stacktrace)" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.options), .fixed = "stacktrace" },
	{ .o = { .short_name = 'M', .type = STRV, .arg = "CPUMASK", .flags = TSYNC_OPT_SCOPED,
		 .def_text = "all CPUs", .help = "trace these CPUs (hex)" },
	  .scope = SC_INST, .kind = K_STR, .off = F(inst.cpumask), .check = check_cpumask,
	  .pass = true },
	{ .o = { .short_name = 'b', .type = TSYNC_OPT_INT, .arg = "KB",
		 .flags = TSYNC_OPT_SCOPED, .min = 0, .max = 16 * 1024 * 1024,
		 .def_text = "the kernel's default",
		 .help = "per-CPU buffer size in KiB (0: the default, as trace-cmd)" },
	  .scope = SC_INST, .kind = K_U32, .off = F(inst.buffer_kb), .pass = true },
	{ .o = { .short_name = 'i', .type = FLAG,
		 .help = "skip an -e that matches no event instead of failing" },
	  .scope = SC_INST, .kind = K_TRUE, .off = F(ignore_missing), .pass = true },
	{ .o = { .name = "no-filter", .type = FLAG, .help = "also record tsync's own threads" },
	  .scope = SC_INST, .kind = K_TRUE, .off = F(no_filter), .pass = true },
	{ .o = { .name = "cmdlines-size", .type = TSYNC_OPT_INT, .arg = "N",
		 .flags = TSYNC_OPT_SCOPED, .min = 0, .max = 32768, .def_text = "the kernel's",
		 .help = "saved_cmdlines entries (pid to comm; 0: the kernel's)" },
	  .scope = SC_INST, .kind = K_INT, .off = F(inst.cmdlines_size), .pass = true },
	{ .o = { .short_name = 's', .type = TSYNC_OPT_INT, .arg = "USECS", .min = 0,
		 /* TSYNC_STREAMER_LOOK_MS, in microseconds */
		 .max = INT_MAX, .def = "1000000",
		 .def_text = "1000000 with the status line or -m, else 0",
		 .help = "the recorders also look for new data every USECS "
			 "(0: only when woken at 10% fill)" },
	  .scope = SC_HOST, .kind = K_INT, .off = F(sleep_us), .unset = -1,
	  .given = GIVEN(sleep_given) },
	{ .o = { .short_name = 'r', .type = TSYNC_OPT_INT, .arg = "PRIO", .min = 0, .max = 99,
		 .help = "run tsync-host's threads at SCHED_FIFO PRIO (0: normal priority)" },
	  .scope = SC_HOST, .kind = K_INT, .off = F(rt_prio) },
	{ .o = { .name = "verbose", .type = STRV, .arg = "LEVEL", .flags = TSYNC_OPT_OPTIONAL,
		 .def_text = "info",
		 .help = "none, crit, err, warn, info, debug, all or 0-6; alone: info" },
	  .scope = SC_HOST, .kind = K_INT, .off = F(verbose), .unset = TSYNC_RECOPT_LOG_UNSET,
	  .set = set_verbose },
	{ .o = { .name = "quiet", .short_name = 'q', .type = FLAG, .help = "print only errors" },
	  .scope = SC_HOST, .kind = K_TRUE, .off = F(quiet) },
	{ .o = { .name = "borrow-top-in-use", .type = FLAG,
		 .help = "borrow the host's top tracefs instance even if someone uses it "
			 "(its buffer is lost)" },
	  .scope = SC_HOST, .kind = K_TRUE, .off = F(borrow_top_in_use) },
	{ .o = { .name = "name", .type = STRV, .arg = "NAME", .flags = TSYNC_OPT_SCOPED,
		 .help = "after -A: the guest's name" },
	  .scope = SC_GUEST, .kind = K_STR, .off = F(name), .check = check_name },
	{ .o = { .name = "vm", .type = STRV, .arg = "VM", .flags = TSYNC_OPT_SCOPED,
		 .help = "after -A: the guest's local QEMU process, a PID or its -name, for "
			 "the kvm sync method (found from the CID for a vsock guest)" },
	  .scope = SC_VM, .kind = K_STR, .off = F(vm) },
	{ .o = { .short_name = 'd', .type = FLAG,
		 .help = "accepted: tsync never turns the function tracer on by itself" },
	  .scope = SC_INST, .kind = K_TRUE, .off = F(disable_function) },
	{ .o = { .short_name = 'k', .type = FLAG,
		 .help = "accepted: tsync records in its own instance and leaves the top "
			 "instance as it is" },
	  .scope = SC_INST, .kind = K_TRUE, .off = F(keep) },
	{ .o = { .short_name = 'C', .type = STRV, .arg = "CLOCK", .def = "local",
		 .help = "trace clock of host and guests (after -A: the same one)" },
	  .scope = SC_CLOCK, .kind = K_STR, .off = F(clock), .check = check_clock,
	  .given = GIVEN(clock_given) },
	{ .o = { .short_name = 'o', .type = STRV, .arg = "FILE", .def = "trace.dat",
		 .help = "host output; guests go to trace-NAME.dat beside it" },
	  .scope = SC_RUN, .kind = K_STR, .off = F(output), .check = check_output },
	{ .o = { .name = "user", .type = STRV, .arg = "USER", .help = "run COMMAND as USER" },
	  .scope = SC_RUN, .kind = K_STR, .off = F(user) },
	{ .o = { .name = "tsync-interval", .type = TSYNC_OPT_INT, .arg = "MS", .min = INT_MIN,
		 .max = 3600000, .def_text = "adaptive",
		 .help = "sync every MS ms while recording; 0: only at the start and the "
			 "end; negative: none (guest files uncorrected); without it from 1 s "
			 "up to 16 s while the drift stays predictable" },
	  .scope = SC_RUN, .kind = K_INT, .off = F(tsync_interval_ms),
	  .given = GIVEN(has_tsync_interval) },
	{ .o = { .name = "ts-offset", .type = STRV, .arg = "OFFSET",
		 .help = "add OFFSET (the clock's raw units) to the file's timestamps when "
			 "read" },
	  .scope = SC_FILE, .kind = K_STR, .off = F(ts_offset), .check = check_ts_offset },
	{ .o = { .short_name = 'm', .type = TSYNC_OPT_INT, .arg = "KB", .min = 0,
		 .max = INT_MAX, .def_text = "no limit",
		 .help = "keep at most KB KiB of each CPU's data (the newest half to all of "
			 "it)" },
	  .scope = SC_RUN, .kind = K_U32, .off = F(max_kb) },
	{ .o = { .name = "file-version", .type = TSYNC_OPT_INT, .arg = "N", .min = 6, .max = 7,
		 .def_text = "7", .help = "trace.dat version" },
	  .scope = SC_FORMAT, .kind = K_INT, .off = F(file_version) },
	{ .o = { .name = "compression", .type = TSYNC_OPT_CHOICE, .arg = "ALGO",
		 .choices = compressions, .def_text = "zstd; none for version 6",
		 .help = "trace.dat compression; implies version 7" },
	  .scope = SC_FORMAT, .kind = K_STR, .off = F(compression) },
	{ .o = { .short_name = 'A', .type = STRV, .arg = "GUEST", .flags = TSYNC_OPT_STOP,
		 .help = "record a guest (NAME@CID[:PORT], CID[:PORT], NAME, HOST:PORT), up "
			 "to 16; the options after it apply to it" },
	  .scope = SC_SYNTAX, .set = set_not_agent },
	{ .o = { .name = "duration", .type = TSYNC_OPT_DOUBLE, .arg = "SECONDS", .min = 0,
		 .max = 1e7, .def_text = "no limit", .help = "stop after SECONDS" },
	  .scope = SC_RUN, .kind = K_DOUBLE, .off = F(duration) },
	{ .o = { .name = "stamp", .type = TSYNC_OPT_CHOICE, .arg = "SOURCE",
		 .choices = tsync_stamp_names, .def_text = "chosen from the clock",
		 .help = "timestamp source" },
	  .scope = SC_RUN, .kind = K_INT, .off = F(stamp), .unset = -1 },
	{ .o = { .name = "key-file", .type = STRV, .arg = "FILE", .def_text = "no key",
		 .help = "authenticate to the agents with this shared key" },
	  .scope = SC_RUN, .kind = K_STR, .off = F(key_file) },
	{ .o = { .name = "guest-max-mb", .type = TSYNC_OPT_INT, .arg = "MB", .def = "4096",
		 .min = 0, .max = 16 * 1024 * 1024,
		 .help = "stop a guest that sends more than MB MiB of data; 0: no cap" },
	  .scope = SC_RUN, .kind = K_U32, .off = F(guest_max_mb),
	  .given = GIVEN(has_guest_max_mb) },
	{ .o = { .name = "tsync-method", .type = TSYNC_OPT_CHOICE, .arg = "METHOD",
		 .choices = tsync_method_choices, .def_text = "auto",
		 .help = "the sync method: auto (the best usable), probes, kvm or external "
			 "(the time daemons' bound)" },
	  .scope = SC_RUN, .kind = K_STR, .off = F(tsync_method) },
	{ .o = { .name = "clock-daemon", .type = TSYNC_OPT_CHOICE, .arg = "DAEMON",
		 .choices = agent_clock_daemons, .def_text = CLOCK_DEF_DAEMON,
		 .help = "the host's time daemon, for the external method" },
	  .scope = SC_HOST, .kind = K_STR, .off = F(clock_daemon) },
	{ .o = { .name = "ptp4l-socket", .type = STRV, .arg = "PATH",
		 .def_text = CLOCK_DEF_PTP4L_SOCKET, .help = "the host's ptp4l management socket" },
	  .scope = SC_HOST, .kind = K_STR, .off = F(ptp4l_socket) },
	{ .o = { .name = "chrony-socket", .type = STRV, .arg = "PATH",
		 .def_text = CLOCK_DEF_CHRONY_SOCKET, .help = "the host's chronyd command socket" },
	  .scope = SC_HOST, .kind = K_STR, .off = F(chrony_socket) },
	{ .o = { .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP, .help = "this text" },
	  .scope = SC_SYNTAX, .set = set_not_agent },
	/* trace-cmd's options that tsync does not have */
	UNSUP('R', NULL, STRV, "event triggers"),
	UNSUP('B', NULL, STRV, "extra instances: tsync records one instance per machine"),
	UNSUP('D', NULL, FLAG, "tsync does not switch ftrace_enabled off"),
	UNSUP('G', NULL, FLAG, "used by trace-cmd set only"),
	UNSUP('S', NULL, FLAG, "manual setup: tsync enables what the command line says"),
	UNSUP('H', NULL, STRV, "profile hooks"),
	UNSUP('K', NULL, FLAG, "tsync always starts from a fresh instance"),
	UNSUP('N', NULL, STRV, "recording to a listen server: use tsync-agent"),
	UNSUP('V', NULL, STRV, "recording to a listen server: use tsync-agent"),
	UNSUP('t', NULL, FLAG, "recording to a listen server: use tsync-agent"),
	UNSUP(0, "date", FLAG, "tsync synchronizes the clocks instead"),
	UNSUP(0, "func-stack", FLAG, "function stack tracing"),
	UNSUP(0, "nosplice", FLAG, "tsync always splices"),
	UNSUP(0, "nofifos", FLAG, "profiling"),
	UNSUP(0, "profile", FLAG, "profiling"),
	UNSUP(0, "stderr", FLAG, "profiling"),
	UNSUP(0, "by-comm", FLAG, "profiling"),
	UNSUP(0, "debug", FLAG, "use --verbose=debug"),
	UNSUP(0, "notimeout", FLAG, "every wait of tsync has a deadline"),
	UNSUP(0, "proc-map", FLAG, "process memory maps"),
	UNSUP(0, "fork", FLAG, "used by trace-cmd start only"),
	UNSUP(0, "tsc2nsec", FLAG, "use -C x86-tsc"),
	UNSUP(0, "poll", FLAG, "tsync always splices"),
	UNSUP(0, "proxy", STRV, "recording through a proxy agent"),
	UNSUP(0, "temp", STRV, "temporary files go beside the output"),
	UNSUP(0, "subbuf-size", STRV, "sub-buffer size"),
	UNSUP(0, "daemonize", FLAG, "run tsync-host in the background with your shell"),
};
const size_t rec_nopts = sizeof(rec_opts) / sizeof(rec_opts[0]);
_Static_assert(sizeof(rec_opts) / sizeof(rec_opts[0]) <= REC_OPTS_MAX,
	       "rec_opts[] has more rows than REC_OPTS_MAX");

/* -f: filter of the last -e; a second one is ANDed, as trace-cmd does. */
static int set_filter(struct parse_ctx *c, const struct rec_opt *ro,
		      const struct tsync_opt_val *v, char *err, size_t errlen)
{
	struct tsync_recopt *r = c->r;
	const char *f = v->str;
	struct tsync_recopt_event *e;
	char *nf;

	(void)ro;
	if (!r->nevents)
		return snprintf(err, errlen, "must follow an -e"), -1;
	e = &r->events[r->nevents - 1];
	if (e->filter) {
		nf = malloc(strlen(e->filter) + strlen(f) + 5);
		if (nf)
			sprintf(nf, "%s&&(%s)", e->filter, f);
	} else {
		nf = malloc(strlen(f) + 3);
		if (nf)
			sprintf(nf, "(%s)", f);
	}
	if (!nf)
		return snprintf(err, errlen, "out of memory"), -1;
	free(e->filter);
	e->filter = nf;
	return 0;
}

/* -v: the -e options after it disable events (trace-cmd: until the end of
 * the scope). */
static int set_negate(struct parse_ctx *c, const struct rec_opt *ro,
		      const struct tsync_opt_val *v, char *err, size_t errlen)
{
	(void)ro, (void)v, (void)err, (void)errlen;
	c->negate = true;
	return 0;
}

/*
 * A function filter from a peer (a guest's part, an agent's words): the
 * kernel reads "FUNC:COMMAND[:ARG...]" in set_ftrace_filter as a function
 * command, and all but "mod" are triggers run on every call of FUNC
 * (traceoff, dump, snapshot, enable_event, ...: they act on the whole
 * machine's tracing). Only FUNC and FUNC:mod:MODULE are taken; 0, or -1
 * with @err set.
 */
static int peer_func(const char *f, char *err, size_t errlen)
{
	const char *colon = strchr(f, ':'), *module;
	size_t n;

	if (!colon)
		return 0;
	module = colon + sizeof(":mod:") - 1;
	if (colon > f && !strncmp(colon, ":mod:", sizeof(":mod:") - 1) && *module &&
	    !strchr(module, ':'))
		return 0;
	n = strcspn(colon + 1, ":");
	if (colon == f || !n || !strncmp(colon, ":mod:", sizeof(":mod:") - 1))
		return snprintf(err, errlen, "expected FUNC or FUNC:mod:MODULE"), -1;
	return snprintf(err, errlen, "'%.*s' is a function trigger, which a guest's agent "
			"refuses: only FUNC or FUNC:mod:MODULE", (int)(n > 32 ? 32 : n),
			colon + 1), -1;
}

/* -l / -n / -g: see recopt_priv.h. */
const char *rec_check_func(const struct parse_ctx *c, const char *f, char *buf,
			   size_t len, char *err, size_t errlen)
{
	const char *module = c->r->module;
	bool space = false;

	for (const char *p = f; *p; p++)	/* the kernel splits words at any */
		space |= isspace((unsigned char)*p) != 0;
	if (!*f || space)
		return snprintf(err, errlen, "expected one function name or glob"), NULL;
	if (c->scope != S_HOST && peer_func(f, err, errlen))
		return NULL;
	if (!module || strstr(f, ":mod:"))
		return f;
	if ((size_t)snprintf(buf, len, "%s:mod:%s", f, module) >= len)
		return snprintf(err, errlen, "too long"), NULL;
	return buf;
}

/* --module: a module's name. */
static const char *check_module(const struct parse_ctx *c, const char *s, char *buf,
				size_t len, char *err, size_t errlen)
{
	(void)c, (void)buf, (void)len;
	if (!*s || strpbrk(s, " \t:"))
		return snprintf(err, errlen, "not a module name"), NULL;
	return s;
}

/* Reads trace-cmd's --verbose LEVEL; see recopt.h. */
int tsync_recopt_verbose_level(const char *s)
{
	static const char *const names[] = { "none", "crit", "err", "warn", "info", "debug",
					     "all", NULL };

	if (!s)
		return TSYNC_RECOPT_LOG_INFO;
	if (isdigit((unsigned char)s[0])) {
		unsigned long n = strtoul(s, NULL, 10);	/* ULONG_MAX when huge */

		return n > TSYNC_RECOPT_LOG_ALL ? TSYNC_RECOPT_LOG_ALL : (int)n;
	}
	for (int i = 0; names[i]; i++)
		if (!strncmp(s, names[i], strlen(names[i])))
			return i;
	return -EINVAL;
}

/* Maps trace-cmd's level onto tsync's; see recopt.h. */
enum tsync_log_level tsync_recopt_log_level(int verbose)
{
	switch (verbose) {
	case TSYNC_RECOPT_LOG_NONE: case TSYNC_RECOPT_LOG_CRIT: case TSYNC_RECOPT_LOG_ERR:
		return TSYNC_LOG_ERR;
	case TSYNC_RECOPT_LOG_WARN: return TSYNC_LOG_WARN;
	case TSYNC_RECOPT_LOG_DEBUG: case TSYNC_RECOPT_LOG_ALL: return TSYNC_LOG_DEBUG;
	}
	return TSYNC_LOG_INFO;
}

/* --verbose[=LEVEL]: trace-cmd's levels; alone: info. */
static int set_verbose(struct parse_ctx *c, const struct rec_opt *ro,
		       const struct tsync_opt_val *v, char *err, size_t errlen)
{
	int *level = rec_field(c->r, ro);

	*level = tsync_recopt_verbose_level(v->str);
	if (*level >= 0)
		return 0;
	return snprintf(err, errlen, "%s", TSYNC_RECOPT_VERBOSE_EXPECTED), -1;
}

/* -A, -h in an agent's words (elsewhere the parser stops at -A, and -h
 * prints the usage). */
static int set_not_agent(struct parse_ctx *c, const struct rec_opt *ro,
			 const struct tsync_opt_val *v, char *err, size_t errlen)
{
	(void)c, (void)ro, (void)v;
	return snprintf(err, errlen, "not an option of a guest's recording"), -1;
}

/* -M: a hex CPU mask as trace-cmd takes it (commas allowed, as tracing_cpumask
 * prints); kept without its "0x". */
static const char *check_cpumask(const struct parse_ctx *c, const char *s, char *buf,
				 size_t len, char *err, size_t errlen)
{
	const char *p = s;

	(void)c, (void)buf, (void)len;
	if (!strncmp(p, "0x", 2) || !strncmp(p, "0X", 2))
		p += 2;
	if (!*p || strspn(p, "0123456789abcdefABCDEF,") != strlen(p) || strlen(p) > 1024)
		return snprintf(err, errlen, "expected a hexadecimal CPU mask"), NULL;
	if (strspn(p, "0,") == strlen(p))
		return snprintf(err, errlen, "the mask selects no CPU"), NULL;
	return p;
}

/* -p: trace-cmd trims spaces around the tracer's name. */
static const char *check_tracer(const struct parse_ctx *c, const char *s, char *buf,
				size_t len, char *err, size_t errlen)
{
	size_t n;

	(void)c;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n || n >= 64 || n >= len || strcspn(s, " \t/") < n)
		return snprintf(err, errlen, "not a tracer name"), NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/* -O: a trace option name, "noNAME" to clear it. */
static const char *check_option(const struct parse_ctx *c, const char *s, char *buf,
				size_t len, char *err, size_t errlen)
{
	(void)c, (void)buf, (void)len;
	if (!*s || strlen(s) >= 64 || strcspn(s, " \t/=") != strlen(s))
		return snprintf(err, errlen, "not a trace option name"), NULL;
	return s;
}

/* --name: a guest's name. */
static const char *check_name(const struct parse_ctx *c, const char *s, char *buf,
			      size_t len, char *err, size_t errlen)
{
	(void)c, (void)buf, (void)len;
	if (!*s || strlen(s) >= 64 ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
	    strlen(s))
		return snprintf(err, errlen, "a guest name is letters, digits, _ - ."), NULL;
	return s;
}

/* -C: a trace clock's name. */
static const char *check_clock(const struct parse_ctx *c, const char *s, char *buf,
			       size_t len, char *err, size_t errlen)
{
	(void)c, (void)buf, (void)len;
	if (!tsync_trace_clock_name_ok(s))
		return snprintf(err, errlen, "not a trace clock name"), NULL;
	return s;
}

/* -o: a file name. */
static const char *check_output(const struct parse_ctx *c, const char *s, char *buf,
				size_t len, char *err, size_t errlen)
{
	(void)c, (void)buf, (void)len;
	if (!*s)
		return snprintf(err, errlen, "empty file name"), NULL;
	return s;
}

/* --ts-offset: an integer as trace-cmd's reader takes it (strtoll, base 0),
 * kept as given: the OFFSET option holds the text. */
static const char *check_ts_offset(const struct parse_ctx *c, const char *s, char *buf,
				   size_t len, char *err, size_t errlen)
{
	char *end;

	(void)c, (void)buf, (void)len;
	errno = 0;
	(void)strtoll(s, &end, 0);
	if (errno || end == s || *end || isspace((unsigned char)*s) || strlen(s) > 40)
		return snprintf(err, errlen, "expected an integer (decimal, 0x hex or 0 octal)"),
		       NULL;
	return s;
}

