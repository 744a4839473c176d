// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd record options for one scope (see recopt.h), from one table.
 *
 * Each row of rec_opts[] is one option, whole: its names, type, default,
 * range and help (struct tsync_opt, common/cli/opt.h, which parses the
 * words and checks numbers, choices and repeats), where it is taken and
 * what it applies to after an -A (its rec_scope), the field of struct
 * tsync_recopt that keeps its value and how (its rec_kind), a check of
 * the text, and whether it is passed on to a guest's agent as option
 * words. Storing, freeing, the unset markers, the whole recording's
 * options given after an -A, the words for an agent and the usage's list
 * of instance options are all derived from the rows: an option is one
 * row, one field (here or in common/tracefs/instance_opts.h) and the line
 * that applies it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "proto/proto.h"

/* The scopes of recopt.h as bits. */
#define S_HOST	0x1
#define S_GUEST	0x2
#define S_AGENT	0x4

/* Where an option is taken, and what it is for after an -A. */
enum rec_scope {
	SC_INST,	/* an instance's: the host's before the first -A, that
			 * guest's after one, an agent's */
	SC_HOST,	/* the host's or tsync-host's own: before the first -A */
	SC_RUN,		/* the whole recording's, before or after an -A (after
			 * one it still is: tsync_recopt_take_run()) */
	SC_FORMAT,	/* the files' format: as SC_RUN; and an agent's, for the
			 * metadata it sends (tsync-host asks a trace-cmd agent
			 * for version 6 this way) */
	SC_FILE,	/* a file's own: the host's, that guest's after an -A;
			 * a trace-cmd host sends it to the agent, which writes
			 * it into its metadata */
	SC_GUEST,	/* a guest's only: after an -A, and an agent's */
	SC_VM,		/* a guest's for tsync-host only: after an -A, never
			 * an agent's */
	SC_CLOCK,	/* the whole recording's trace clock; a trace-cmd host
			 * sends its own to the agent */
	SC_SYNTAX,	/* -A, -h: the command line's own (the parser stops at
			 * -A, prints the usage for -h); an agent's words may
			 * not have them */
};

static const struct {
	unsigned int in;	/* the scopes it is accepted in */
	bool run;		/* after an -A: the whole recording's */
} scopes[] = {
	[SC_INST] = { S_HOST | S_GUEST | S_AGENT, false },
	[SC_HOST] = { S_HOST, false },
	[SC_RUN] = { S_HOST | S_GUEST, true },
	[SC_FORMAT] = { S_HOST | S_GUEST | S_AGENT, true },
	[SC_FILE] = { S_HOST | S_GUEST | S_AGENT, false },
	[SC_GUEST] = { S_GUEST | S_AGENT, false },
	[SC_VM] = { S_GUEST, false },
	[SC_CLOCK] = { S_HOST | S_AGENT, false },
	[SC_SYNTAX] = { S_HOST | S_GUEST | S_AGENT, false },
};

/* How a value is kept in its field (rec_opt.off). */
enum rec_kind {
	K_NONE,		/* no field of its own (its .set does what it means) */
	K_TRUE,		/* bool, true when given */
	K_INT,		/* int: the number, or the choice's index */
	K_U32,		/* uint32_t: the number */
	K_DOUBLE,	/* double */
	K_STR,		/* char *: a copy of the text */
	K_LIST,		/* struct tsync_instance_list: the text appended */
	K_PIDS,		/* inst.pids, inst.npids: PID[,PID...] appended */
	K_EVENTS,	/* events, nevents: one -e (negated after a -v) */
};

struct parse_ctx;
struct rec_opt;

/* Checks the text @s of an option; returns what to keep (@s, a part of
 * it, or @buf of @len filled), or NULL with @err set. */
typedef const char *rec_check_fn(const struct parse_ctx *c, const char *s, char *buf,
				  size_t len, char *err, size_t errlen);
/* Gives a value its meaning where storing it by kind does not: 0, or -1
 * with @err set. */
typedef int rec_set_fn(struct parse_ctx *c, const struct rec_opt *ro,
		       const struct tsync_opt_val *v, char *err, size_t errlen);

struct rec_opt {
	size_t off;		/* the field: offsetof(struct tsync_recopt, ...) */
	size_t given;		/* 1 + the offset of a bool set when the option
				 * is given (not defaulted), or 0 */
	const char *fixed;	/* a flag's value (-a: "all", -T: "stacktrace") */
	rec_check_fn *check;	/* K_STR, K_LIST: or NULL for any text */
	rec_set_fn *set;	/* instead of storing by kind, or NULL */
	struct tsync_opt o;	/* names, type, default, range, help; the id
				 * is set per parse (the row's index + 1) */
	enum rec_scope scope;
	enum rec_kind kind;
	int unset;		/* K_INT: the field's value until given */
	bool pass;		/* an agent gets it as option words
				 * (tsync_recopt_instance_argv()) */
};

/* Parse state: the result and the scope. */
struct parse_ctx {
	struct tsync_recopt *r;
	unsigned int scope;
	bool negate;		/* a -v was seen in this scope */
};

static const char *const compressions[] = { "any", "none", "zstd", "zlib", NULL };
/* --tsync-method: host/sync/sync.c's methods, and auto */
static const char *const tsync_methods[] = { "auto", "probes", "kvm", "external", NULL };

static rec_check_fn check_tracer, check_func, check_module, check_option, check_cpumask,
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
static const struct rec_opt rec_opts[] = {
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
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.funcs), .check = check_func,
	  .pass = true },
	{ .o = { .short_name = 'n', .type = STRV, .arg = "FUNC", .flags = TSYNC_OPT_REPEAT,
		 .help = "do not trace this function (glob)" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.notrace_funcs), .check = check_func,
	  .pass = true },
	{ .o = { .short_name = 'g', .type = STRV, .arg = "FUNC", .flags = TSYNC_OPT_REPEAT,
		 .help = "function_graph: graph this function" },
	  .scope = SC_INST, .kind = K_LIST, .off = F(inst.graph_funcs), .check = check_func,
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
		 .max = INT_MAX, .def = "0",
		 .help = "the recorders also look for new data every USECS "
			 "(0: only when woken at 10% fill)" },
	  .scope = SC_HOST, .kind = K_INT, .off = F(sleep_us), .unset = -1 },
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
		 .help = "trace clock of host and guests" },
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
		 .choices = tsync_methods, .def_text = "auto",
		 .help = "the sync method: auto (the best usable), probes, kvm or external "
			 "(the time daemons' bound)" },
	  .scope = SC_RUN, .kind = K_STR, .off = F(tsync_method) },
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
#define NOPTS (sizeof(rec_opts) / sizeof(rec_opts[0]))

/* The usage's last lines: the instance options are the SC_INST rows'. */
#define EPILOGUE_HEAD "Recording stops when COMMAND exits, after --duration, or on SIGINT or " \
		      "SIGTERM; a second SIGINT aborts without waiting for the data. After " \
		      "-A, the options of one instance ("
#define EPILOGUE_TAIL "), --ts-offset, --name and --vm apply to that guest."
#define EPILOGUE_WIDTH 74
#define EPILOGUE_MAX 1024

static const struct tsync_opt_cmd rec_cmd = {
	.prog = "tsync-host record",
	.synopsis = "usage: tsync-host record [HOST OPTIONS] [-A GUEST [GUEST OPTIONS]]...\n"
		    "                         [[--] COMMAND [ARGS]]\n",
	.stop_at_operand = true,
};

/* The field of @ro in @r. */
static void *field(const struct tsync_recopt *r, const struct rec_opt *ro)
{
	return (char *)r + ro->off;
}

/* Appends a copy of @s to @l. Returns 0 or -1 with @err set. */
static int list_add(struct tsync_instance_list *l, const char *s, char *err, size_t errlen)
{
	char **nv = realloc(l->v, sizeof(*nv) * (size_t)(l->n + 1));

	if (!nv || !(nv[l->n] = strdup(s))) {
		if (nv)
			l->v = nv;
		return snprintf(err, errlen, "out of memory"), -1;
	}
	l->v = nv;
	l->n++;
	return 0;
}

/* Replaces *@dst by a copy of @s. Returns 0 or -1 with @err set. */
static int set_str(char **dst, const char *s, char *err, size_t errlen)
{
	char *c = strdup(s);

	if (!c)
		return snprintf(err, errlen, "out of memory"), -1;
	free(*dst);
	*dst = c;
	return 0;
}

/* -e / -a: appends an event (negated after a -v). */
static int add_event(struct parse_ctx *c, const char *name, char *err, size_t errlen)
{
	struct tsync_recopt *r = c->r;
	struct tsync_recopt_event *nv;

	if (!*name || strspn(name, " \t") == strlen(name))
		return snprintf(err, errlen, "empty event name"), -1;
	nv = realloc(r->events, sizeof(*nv) * (size_t)(r->nevents + 1));
	if (!nv)
		return snprintf(err, errlen, "out of memory"), -1;
	r->events = nv;
	nv[r->nevents] = (struct tsync_recopt_event){ .name = strdup(name),
						       .negate = c->negate };
	if (!nv[r->nevents].name)
		return snprintf(err, errlen, "out of memory"), -1;
	r->nevents++;
	return 0;
}

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

/* -P PID[,PID...]: appends the pids (decimal, >= 0). */
static int add_pids(struct tsync_instance_opts *o, const char *s, char *err, size_t errlen)
{
	const char *p = s;

	do {
		char *end;
		long v;
		int *nv;

		errno = 0;
		v = strtol(p, &end, 10);
		/* 0 is the idle task, as trace-cmd takes it */
		if (errno || end == p || v < 0 || v > INT_MAX || (*end && *end != ','))
			return snprintf(err, errlen, "expected process ids separated by ','"), -1;
		nv = realloc(o->pids, sizeof(*nv) * (size_t)(o->npids + 1));
		if (!nv)
			return snprintf(err, errlen, "out of memory"), -1;
		o->pids = nv;
		nv[o->npids++] = (int)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* -l / -n / -g: a function glob, with ":mod:M" after a --module. */
static const char *check_func(const struct parse_ctx *c, const char *f, char *buf,
			      size_t len, char *err, size_t errlen)
{
	const char *module = c->r->module;

	if (!*f || strpbrk(f, " \t\n"))
		return snprintf(err, errlen, "expected one function name or glob"), NULL;
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
	int *level = field(c->r, ro);

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
	if (!*s || strlen(s) >= 32 || strpbrk(s, " \t/"))
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

/* Keeps value @v of @ro in its field, as its kind says. */
static int store(struct parse_ctx *c, const struct rec_opt *ro, const struct tsync_opt_val *v,
		 char *err, size_t errlen)
{
	const char *s = ro->fixed ? ro->fixed : v->str;
	void *f = field(c->r, ro);
	char buf[512];

	if (s && ro->check && !(s = ro->check(c, s, buf, sizeof(buf), err, errlen)))
		return -1;
	if (!s && (ro->kind == K_STR || ro->kind == K_LIST || ro->kind == K_PIDS ||
		   ro->kind == K_EVENTS))
		return snprintf(err, errlen, "needs a value"), -1;
	switch (ro->kind) {
	case K_NONE: return 0;
	case K_TRUE: *(bool *)f = true; return 0;
	case K_INT: *(int *)f = (int)v->num; return 0;
	case K_U32: *(uint32_t *)f = (uint32_t)v->num; return 0;
	case K_DOUBLE: *(double *)f = v->dbl; return 0;
	case K_STR: return set_str(f, s, err, errlen);
	case K_LIST: return list_add(f, s, err, errlen);
	case K_PIDS: return add_pids(&c->r->inst, s, err, errlen);
	case K_EVENTS: return add_event(c, s, err, errlen);
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Stores one option value into the parse_ctx @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	const struct rec_opt *ro = &rec_opts[o->id - 1];
	struct parse_ctx *c = ctx;
	int ret;

	if (!(scopes[ro->scope].in & c->scope)) {
		if (c->scope == S_HOST)
			return snprintf(err, errlen, "only after an -A (for a guest)"), -1;
		return snprintf(err, errlen, "applies to the whole recording or to tsync-host "
				"itself: give it before the first -A"), -1;
	}
	ret = ro->set ? ro->set(c, ro, v, err, errlen) : store(c, ro, v, err, errlen);
	if (!ret && ro->given && !v->is_default)
		*(bool *)((char *)c->r + ro->given - 1) = true;
	return ret;
}

void tsync_recopt_init(struct tsync_recopt *r)
{
	*r = (struct tsync_recopt){ 0 };
	for (size_t i = 0; i < NOPTS; i++)
		if (rec_opts[i].kind == K_INT && rec_opts[i].unset)
			*(int *)field(r, &rec_opts[i]) = rec_opts[i].unset;
}

/* True if an earlier row keeps its value in the field of row @i (-a and
 * -e, -T and -O): the field is that row's. */
static bool shared_field(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (rec_opts[j].kind == rec_opts[i].kind && rec_opts[j].off == rec_opts[i].off)
			return true;
	return false;
}

/* Frees the strings of @l. */
static void list_free(struct tsync_instance_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void tsync_recopt_free(struct tsync_recopt *r)
{
	for (size_t i = 0; i < NOPTS; i++) {
		const struct rec_opt *ro = &rec_opts[i];
		void *f = field(r, ro);

		if (shared_field(i))
			continue;
		if (ro->kind == K_STR)
			free(*(char **)f);
		else if (ro->kind == K_LIST)
			list_free(f);
	}
	/* the kinds with one fixed field each, freed once */
	free(r->inst.pids);
	for (int e = 0; e < r->nevents; e++) {
		free(r->events[e].name);
		free(r->events[e].filter);
	}
	free(r->events);
	tsync_recopt_init(r);
}

/* True if @ro was given in @r (a guest's part: no defaults). */
static bool is_given(const struct tsync_recopt *r, const struct rec_opt *ro)
{
	const void *f = field(r, ro);

	if (ro->given)
		return *(const bool *)((const char *)r + ro->given - 1);
	switch (ro->kind) {
	case K_TRUE: return *(const bool *)f;
	case K_INT: return *(const int *)f != ro->unset;
	case K_U32: return *(const uint32_t *)f != 0;
	case K_DOUBLE: return *(const double *)f != 0;
	case K_STR: return *(char *const *)f != NULL;
	default: return false;
	}
}

void tsync_recopt_take_run(struct tsync_recopt *run, struct tsync_recopt *g)
{
	for (size_t i = 0; i < NOPTS; i++) {
		const struct rec_opt *ro = &rec_opts[i];
		void *to = field(run, ro), *from = field(g, ro);
		size_t size = ro->kind == K_TRUE ? sizeof(bool) : ro->kind == K_INT ? sizeof(int) :
			      ro->kind == K_U32 ? sizeof(uint32_t) :
			      ro->kind == K_DOUBLE ? sizeof(double) : 0;

		if (!scopes[ro->scope].run || !is_given(g, ro))
			continue;
		if (ro->kind == K_STR) {	/* the old one goes with @g */
			char *t = *(char **)to;

			*(char **)to = *(char **)from;
			*(char **)from = t;
		} else if (size) {
			memcpy(to, from, size);
		}
		if (ro->given)
			*(bool *)((char *)run + ro->given - 1) = true;
	}
}

/* The table for @scope in @buf (of NOPTS + 1): the rows' options with
 * their ids; without defaults but for HOST; in AGENT, -A does not stop
 * the parse and -h is an option like any other (set_not_agent()). */
static void scope_table(enum tsync_recopt_scope scope, struct tsync_opt *buf)
{
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		buf[i] = rec_opts[i].o;
		buf[i].id = (int)i + 1;
		if (scope == TSYNC_RECOPT_HOST)
			continue;
		buf[i].def = NULL;
		if (scope == TSYNC_RECOPT_AGENT) {
			buf[i].flags &= ~(unsigned int)TSYNC_OPT_STOP;
			if (buf[i].type == TSYNC_OPT_HELP)
				buf[i].type = TSYNC_OPT_FLAG;
		}
	}
	buf[i] = (struct tsync_opt){ 0 };
}

/* Writes the usage's last lines into @buf: the instance options are the
 * SC_INST rows', words wrapped at EPILOGUE_WIDTH. */
static void epilogue(char *buf, size_t len)
{
	char text[EPILOGUE_MAX], name[64];
	size_t off = (size_t)snprintf(text, sizeof(text), "%s", EPILOGUE_HEAD), at = 0, col = 0;
	bool first = true;

	for (size_t i = 0; i < NOPTS && off < sizeof(text); i++) {
		if (rec_opts[i].scope != SC_INST ||
		    rec_opts[i].o.flags & TSYNC_OPT_UNSUPPORTED)
			continue;
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", first ? "" : " ",
					tsync_opt_name(&rec_opts[i].o, name, sizeof(name)));
		first = false;
	}
	if (off < sizeof(text))
		snprintf(text + off, sizeof(text) - off, "%s", EPILOGUE_TAIL);
	for (const char *w = text; *w && at + 2 < len;) {
		size_t n = strcspn(w, " ");

		if (col && col + 1 + n > EPILOGUE_WIDTH) {
			buf[at++] = '\n';
			col = 0;
		} else if (col) {
			buf[at++] = ' ';
			col++;
		}
		n = n < len - at - 2 ? n : len - at - 2;
		memcpy(buf + at, w, n);
		at += n;
		col += n;
		w += n;
		w += *w == ' ';
	}
	buf[at++] = '\n';
	buf[at] = '\0';
}

int tsync_recopt_parse(struct tsync_recopt *r, enum tsync_recopt_scope scope,
		       int argc, char **argv, FILE *out, char *err, size_t errlen)
{
	struct tsync_opt buf[NOPTS + 1];
	struct parse_ctx c = { .r = r };
	struct tsync_opt_cmd cmd = rec_cmd;
	char epi[EPILOGUE_MAX];
	int ret;

	c.scope = scope == TSYNC_RECOPT_HOST ? S_HOST :
		  scope == TSYNC_RECOPT_GUEST ? S_GUEST : S_AGENT;
	scope_table(scope, buf);
	cmd.opts = buf;
	epilogue(epi, sizeof(epi));
	cmd.epilogue = epi;
	if (scope == TSYNC_RECOPT_AGENT)
		cmd.prog = "record options";
	ret = tsync_opt_parse(&cmd, argc, argv, set_opt, &c, out, err, errlen);
	if (ret == TSYNC_OPT_HELP_SHOWN)
		return TSYNC_RECOPT_HELP;
	if (ret < 0)
		return TSYNC_RECOPT_ERROR;
	if (scope == TSYNC_RECOPT_AGENT && ret < argc) {
		snprintf(err, errlen, "%s: unexpected '%s' (no command runs on a guest)",
			 cmd.prog, argv[ret]);
		return TSYNC_RECOPT_ERROR;
	}
	/* trace-cmd: --module alone filters all of the module's functions */
	if (r->module && !r->inst.funcs.n && !r->inst.notrace_funcs.n &&
	    !r->inst.graph_funcs.n) {
		char fn[512];
		const char *f = check_func(&c, "*", fn, sizeof(fn), err, errlen);

		if (!f || list_add(&r->inst.funcs, f, err, errlen))
			return TSYNC_RECOPT_ERROR;
	}
	if (r->inst.follow_children && !r->inst.npids && !r->filter_command) {
		snprintf(err, errlen, "%s: -c can only be used with -F or -P", cmd.prog);
		return TSYNC_RECOPT_ERROR;
	}
	return ret;
}

/* Appends the words @a [and @b] to the growing argv @v. 0 or -ENOMEM. */
static int argv_add(char ***v, int *n, const char *a, const char *b)
{
	char **nv = realloc(*v, sizeof(**v) * (size_t)(*n + 3));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(a)))
		return -ENOMEM;
	(*n)++;
	if (b) {
		if (!(nv[*n] = strdup(b)))
			return -ENOMEM;
		(*n)++;
	}
	nv[*n] = NULL;
	return 0;
}

/* The -e words of @r: enabled ones with their -f, then -v and the others. */
static int events_argv(const struct tsync_recopt *r, char ***v, int *n)
{
	int ret = 0;

	for (int neg = 0; neg < 2 && !ret; neg++) {
		bool said = false;

		for (int i = 0; i < r->nevents && !ret; i++) {
			const struct tsync_recopt_event *e = &r->events[i];

			if (e->negate != neg)
				continue;
			if (neg && !said) {
				ret = argv_add(v, n, "-v", NULL);
				said = true;
			}
			if (!ret)
				ret = argv_add(v, n, "-e", e->name);
			/* the joined filter, one -f: the parser joins no further */
			if (!ret && e->filter && !neg)
				ret = argv_add(v, n, "-f", e->filter);
		}
	}
	return ret;
}

/* The words that give an agent the value of @ro in @r (none if unset). */
static int opt_argv(const struct tsync_recopt *r, const struct rec_opt *ro, char ***v, int *n)
{
	const void *f = field(r, ro);
	char name[64], num[32];
	int ret = 0;

	tsync_opt_name(&ro->o, name, sizeof(name));
	switch (ro->kind) {
	case K_TRUE:
		return *(const bool *)f ? argv_add(v, n, name, NULL) : 0;
	case K_INT:
		snprintf(num, sizeof(num), "%d", *(const int *)f);
		return *(const int *)f != ro->unset ? argv_add(v, n, name, num) : 0;
	case K_U32:
		snprintf(num, sizeof(num), "%u", *(const uint32_t *)f);
		return *(const uint32_t *)f ? argv_add(v, n, name, num) : 0;
	case K_STR:
		return *(char *const *)f ? argv_add(v, n, name, *(char *const *)f) : 0;
	case K_LIST: {
		const struct tsync_instance_list *l = f;

		for (int i = 0; i < l->n && !ret; i++)
			ret = argv_add(v, n, name, l->v[i]);
		return ret;
	}
	case K_PIDS:
		for (int i = 0; i < r->inst.npids && !ret; i++) {
			snprintf(num, sizeof(num), "%d", r->inst.pids[i]);
			ret = argv_add(v, n, name, num);
		}
		return ret;
	case K_EVENTS:
		return events_argv(r, v, n);
	default:
		return 0;
	}
}

int tsync_recopt_instance_argv(const struct tsync_recopt *r, char ***argv, int *argc)
{
	char **v = NULL;
	int n = 0, ret;

	ret = argv_add(&v, &n, "record", NULL);
	for (size_t i = 0; i < NOPTS && !ret; i++)
		if (rec_opts[i].pass)
			ret = opt_argv(r, &rec_opts[i], &v, &n);
	if (ret) {
		tsync_recopt_argv_free(v, n);
		return ret;
	}
	*argv = v;
	*argc = n;
	return 0;
}

void tsync_recopt_argv_free(char **argv, int argc)
{
	for (int i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

const char *tsync_recopt_agent_value(int argc, char **argv, int at, int *next)
{
	if (at >= argc || strncmp(argv[at], "-A", 2))
		return NULL;
	if (argv[at][2]) {
		*next = at + 1;
		return argv[at] + 2;
	}
	if (at + 1 >= argc)
		return NULL;
	*next = at + 2;
	return argv[at + 1];
}

void tsync_recopt_usage(FILE *f)
{
	struct tsync_opt buf[NOPTS + 1];
	struct tsync_opt_cmd cmd = rec_cmd;
	char epi[EPILOGUE_MAX];

	scope_table(TSYNC_RECOPT_HOST, buf);
	cmd.opts = buf;
	epilogue(epi, sizeof(epi));
	cmd.epilogue = epi;
	tsync_opt_usage(&cmd, f);
}
