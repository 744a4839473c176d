// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd record options for one scope (see recopt.h): one option table
 * (common/opt), the scopes each option is allowed in, and the handler that
 * gives each value trace-cmd's meaning.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "proto/proto.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* Scopes an option is accepted in. */
#define S_HOST	0x1
#define S_GUEST	0x2
#define S_AGENT	0x4
#define S_INST	(S_HOST | S_GUEST | S_AGENT)	/* an instance's option */

enum {
	R_EVENT = 1, R_FILTER, R_NEGATE, R_ALL, R_TRACER, R_FUNC, R_NOTRACE, R_GRAPH,
	R_MODULE, R_DEPTH, R_PID, R_FILTER_CMD, R_CHILDREN, R_OPTION, R_STACKTRACE,
	R_CPUMASK, R_BUFKB, R_IGNORE, R_NOFILTER, R_CMDLINES, R_SLEEP, R_PRIO,
	R_VERBOSE, R_QUIET, R_NAME, R_DISABLE, R_KEEP, R_CLOCK, R_OUTPUT, R_USER,
	R_INTERVAL, R_FILEVER, R_COMPRESSION, R_AGENT, R_DURATION, R_STAMP,
	R_KEYFILE, R_GUESTMAX, R_HELP, R_TSOFFSET, R_MAXKB,
	R_UNSUPPORTED = 100,	/* and up: known, refused by opt.c */
};

static const char *const compressions[] = { "any", "none", "zstd", "zlib", NULL };

#define UNSUP(i, s, l, t, why) \
	{ .id = R_UNSUPPORTED + (i), .short_name = (s), .name = (l), .type = (t), \
	  .flags = TSYNC_OPT_UNSUPPORTED | TSYNC_OPT_REPEAT, .help = (why) }
#define STRV TSYNC_OPT_STRING
#define FLAG TSYNC_OPT_FLAG

/* The options of `tsync-host record`, in trace-cmd's names and meanings;
 * tsync-host(1) documents each (tests/e2e/manpages.sh checks that the
 * defaults agree). */
static const struct tsync_opt rec_opts[] = {
	{ .id = R_EVENT, .short_name = 'e', .type = STRV, .arg = "EVENT",
	  .flags = TSYNC_OPT_REPEAT, .def_text = "no events",
	  .help = "record system:event, system or all" },
	{ .id = R_FILTER, .short_name = 'f', .type = STRV, .arg = "FILTER",
	  .flags = TSYNC_OPT_REPEAT, .help = "filter of the preceding -e (several: all must match)" },
	{ .id = R_NEGATE, .short_name = 'v', .type = FLAG,
	  .help = "the -e options after it disable events instead" },
	{ .id = R_ALL, .short_name = 'a', .type = FLAG, .help = "record all events (-e all)" },
	{ .id = R_TRACER, .short_name = 'p', .type = STRV, .arg = "TRACER",
	  .flags = TSYNC_OPT_SCOPED, .def_text = "nop",
	  .help = "tracer: function, function_graph, ..." },
	{ .id = R_FUNC, .short_name = 'l', .type = STRV, .arg = "FUNC",
	  .flags = TSYNC_OPT_REPEAT, .help = "trace only this function (glob)" },
	{ .id = R_NOTRACE, .short_name = 'n', .type = STRV, .arg = "FUNC",
	  .flags = TSYNC_OPT_REPEAT, .help = "do not trace this function (glob)" },
	{ .id = R_GRAPH, .short_name = 'g', .type = STRV, .arg = "FUNC",
	  .flags = TSYNC_OPT_REPEAT, .help = "function_graph: graph this function" },
	{ .id = R_MODULE, .name = "module", .type = STRV, .arg = "MODULE",
	  .flags = TSYNC_OPT_SCOPED, .help = "function filters only in MODULE" },
	{ .id = R_DEPTH, .name = "max-graph-depth", .type = TSYNC_OPT_INT, .arg = "N",
	  .flags = TSYNC_OPT_SCOPED, .min = 0, .max = INT_MAX,
	  .help = "function_graph: depth limit" },
	{ .id = R_PID, .short_name = 'P', .type = STRV, .arg = "PID[,PID]",
	  .flags = TSYNC_OPT_REPEAT, .help = "trace only these processes" },
	{ .id = R_FILTER_CMD, .short_name = 'F', .type = FLAG,
	  .help = "trace only COMMAND" },
	{ .id = R_CHILDREN, .short_name = 'c', .type = FLAG,
	  .help = "with -F or -P: their children too" },
	{ .id = R_OPTION, .short_name = 'O', .type = STRV, .arg = "OPTION",
	  .flags = TSYNC_OPT_REPEAT, .help = "set trace option (noOPTION clears it)" },
	{ .id = R_STACKTRACE, .short_name = 'T', .type = FLAG,
	  .help = "stack trace of every event (-O stacktrace)" },
	{ .id = R_CPUMASK, .short_name = 'M', .type = STRV, .arg = "CPUMASK",
	  .flags = TSYNC_OPT_SCOPED, .def_text = "all CPUs", .help = "trace these CPUs (hex)" },
	{ .id = R_BUFKB, .short_name = 'b', .type = TSYNC_OPT_INT, .arg = "KB",
	  .flags = TSYNC_OPT_SCOPED, .min = 0, .max = 16 * 1024 * 1024,
	  .def_text = "the kernel's default",
	  .help = "per-CPU buffer size in KiB (0: the default, as trace-cmd)" },
	{ .id = R_IGNORE, .short_name = 'i', .type = FLAG,
	  .help = "skip an -e that matches no event instead of failing" },
	{ .id = R_NOFILTER, .name = "no-filter", .type = FLAG,
	  .help = "also record tsync's own threads" },
	{ .id = R_CMDLINES, .name = "cmdlines-size", .type = TSYNC_OPT_INT, .arg = "N",
	  .flags = TSYNC_OPT_SCOPED, .min = 0, .max = 32768, .def_text = "the kernel's",
	  .help = "saved_cmdlines entries (pid to comm; 0: the kernel's)" },
	{ .id = R_SLEEP, .short_name = 's', .type = TSYNC_OPT_INT, .arg = "USECS",
	  .min = 0, .max = INT_MAX, .def = "50000",
	  .help = "the recorders look for new data every USECS (and at 10% fill)" },
	{ .id = R_PRIO, .short_name = 'r', .type = TSYNC_OPT_INT, .arg = "PRIO",
	  .min = 0, .max = 99,
	  .help = "run tsync-host's threads at SCHED_FIFO PRIO (0: normal priority)" },
	{ .id = R_VERBOSE, .name = "verbose", .type = STRV, .arg = "LEVEL",
	  .flags = TSYNC_OPT_OPTIONAL, .def_text = "info",
	  .help = "none, crit, err, warn, info, debug, all or 0-6; alone: info" },
	{ .id = R_QUIET, .name = "quiet", .short_name = 'q', .type = FLAG,
	  .help = "print only errors" },
	{ .id = R_NAME, .name = "name", .type = STRV, .arg = "NAME",
	  .flags = TSYNC_OPT_SCOPED, .help = "after -A: the guest's name" },
	{ .id = R_DISABLE, .short_name = 'd', .type = FLAG,
	  .help = "accepted: tsync never turns the function tracer on by itself" },
	{ .id = R_KEEP, .short_name = 'k', .type = FLAG,
	  .help = "accepted: tsync records in its own instance and leaves the top "
		  "instance as it is" },
	{ .id = R_CLOCK, .short_name = 'C', .type = STRV, .arg = "CLOCK",
	  .def = "local", .help = "trace clock of host and guests" },
	{ .id = R_OUTPUT, .short_name = 'o', .type = STRV, .arg = "FILE",
	  .def = "trace.dat",
	  .help = "host output; guests go to trace-NAME.dat beside it" },
	{ .id = R_USER, .name = "user", .type = STRV, .arg = "USER",
	  .help = "run COMMAND as USER" },
	{ .id = R_INTERVAL, .name = "tsync-interval", .type = TSYNC_OPT_INT, .arg = "MS",
	  .min = INT_MIN, .max = 3600000, .def_text = "adaptive",
	  .help = "sync every MS ms while recording; 0: only at the start and the end; "
		  "negative: none (guest files uncorrected); without it from 1 s up to 16 s "
		  "while the drift stays predictable" },
	{ .id = R_TSOFFSET, .name = "ts-offset", .type = STRV, .arg = "OFFSET",
	  .help = "add OFFSET (the clock's raw units) to the file's timestamps when read" },
	{ .id = R_MAXKB, .short_name = 'm', .type = TSYNC_OPT_INT, .arg = "KB",
	  .min = 0, .max = INT_MAX, .def_text = "no limit",
	  .help = "keep at most KB KiB of each CPU's data (the newest half to all of it)" },
	{ .id = R_FILEVER, .name = "file-version", .type = TSYNC_OPT_INT, .arg = "N",
	  .min = 6, .max = 7, .def_text = "7", .help = "trace.dat version" },
	{ .id = R_COMPRESSION, .name = "compression", .type = TSYNC_OPT_CHOICE,
	  .arg = "ALGO", .choices = compressions, .def_text = "zstd; none for version 6",
	  .help = "trace.dat compression; implies version 7" },
	{ .id = R_AGENT, .short_name = 'A', .type = STRV, .arg = "GUEST",
	  .flags = TSYNC_OPT_STOP,
	  .help = "record a guest (NAME@CID[:PORT], CID[:PORT], NAME, HOST:PORT), up to "
		  "16; the options after it apply to it" },
	{ .id = R_DURATION, .name = "duration", .type = TSYNC_OPT_DOUBLE, .arg = "SECONDS",
	  .min = 0, .max = 1e7, .def_text = "no limit", .help = "stop after SECONDS" },
	{ .id = R_STAMP, .name = "stamp", .type = TSYNC_OPT_CHOICE, .arg = "SOURCE",
	  .choices = tsync_stamp_names, .def_text = "chosen from the clock",
	  .help = "timestamp source" },
	{ .id = R_KEYFILE, .name = "key-file", .type = STRV, .arg = "FILE",
	  .def_text = "no key", .help = "authenticate to the agents with this shared key" },
	{ .id = R_GUESTMAX, .name = "guest-max-mb", .type = TSYNC_OPT_INT, .arg = "MB",
	  .def = "4096", .min = 0, .max = 16 * 1024 * 1024,
	  .help = "stop a guest that sends more than MB MiB of data; 0: no cap" },
	{ .id = R_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	/* trace-cmd's options that tsync does not have */
	UNSUP(1, 'R', NULL, STRV, "event triggers"),
	UNSUP(2, 'B', NULL, STRV, "extra instances: tsync records one instance per machine"),
	UNSUP(3, 'D', NULL, FLAG, "tsync does not switch ftrace_enabled off"),
	UNSUP(4, 'G', NULL, FLAG, "used by trace-cmd set only"),
	UNSUP(5, 'S', NULL, FLAG, "manual setup: tsync enables what the command line says"),
	UNSUP(6, 'H', NULL, STRV, "profile hooks"),
	UNSUP(7, 'K', NULL, FLAG, "tsync always starts from a fresh instance"),
	UNSUP(8, 'N', NULL, STRV, "recording to a listen server: use tsync-agent"),
	UNSUP(9, 'V', NULL, STRV, "recording to a listen server: use tsync-agent"),
	UNSUP(10, 't', NULL, FLAG, "recording to a listen server: use tsync-agent"),
	UNSUP(11, 0, "date", FLAG, "tsync synchronizes the clocks instead"),
	UNSUP(12, 0, "func-stack", FLAG, "function stack tracing"),
	UNSUP(13, 0, "nosplice", FLAG, "tsync always splices"),
	UNSUP(14, 0, "nofifos", FLAG, "profiling"),
	UNSUP(15, 0, "profile", FLAG, "profiling"),
	UNSUP(16, 0, "stderr", FLAG, "profiling"),
	UNSUP(17, 0, "by-comm", FLAG, "profiling"),
	UNSUP(19, 0, "debug", FLAG, "use --verbose=debug"),
	UNSUP(20, 0, "notimeout", FLAG, "every wait of tsync has a deadline"),
	UNSUP(21, 0, "proc-map", FLAG, "process memory maps"),
	UNSUP(22, 0, "fork", FLAG, "used by trace-cmd start only"),
	UNSUP(23, 0, "tsc2nsec", FLAG, "use -C x86-tsc"),
	UNSUP(24, 0, "poll", FLAG, "tsync always splices"),
	UNSUP(25, 0, "proxy", STRV, "recording through a proxy agent"),
	UNSUP(26, 0, "temp", STRV, "temporary files go beside the output"),
	UNSUP(27, 0, "subbuf-size", STRV, "sub-buffer size"),
	UNSUP(28, 0, "daemonize", FLAG, "run tsync-host in the background with your shell"),
	{ 0 }
};

static const struct tsync_opt_cmd rec_cmd = {
	.prog = "tsync-host record",
	.synopsis = "usage: tsync-host record [HOST OPTIONS] [-A GUEST [GUEST OPTIONS]]...\n"
		    "                         [[--] COMMAND [ARGS]]\n",
	.epilogue = "Recording stops when COMMAND exits, after --duration, or on SIGINT or\n"
		    "SIGTERM; a second SIGINT aborts without waiting for the data. After -A,\n"
		    "the options of one instance (-e -f -v -a -p -l -n -g --module\n"
		    "--max-graph-depth -P -c -O -T -M -b -i --no-filter --cmdlines-size -d -k),\n"
		    "--ts-offset and --name apply to that guest.\n",
	.opts = rec_opts,
	.stop_at_operand = true,
};

/* Returns the scopes option @id is accepted in. */
static unsigned int opt_scopes(int id)
{
	switch (id) {
	case R_EVENT: case R_FILTER: case R_NEGATE: case R_ALL: case R_TRACER:
	case R_FUNC: case R_NOTRACE: case R_GRAPH: case R_MODULE: case R_DEPTH:
	case R_PID: case R_CHILDREN: case R_OPTION: case R_STACKTRACE: case R_CPUMASK:
	case R_BUFKB: case R_IGNORE: case R_NOFILTER: case R_CMDLINES: case R_DISABLE:
	case R_KEEP:
		return S_INST;
	case R_NAME:
		return S_GUEST | S_AGENT;
	case R_TSOFFSET:
		/* written by tsync-host into each file; a trace-cmd host
		 * sends it to the agent, which writes it into its metadata */
		return S_HOST | S_GUEST | S_AGENT;
	case R_CLOCK:
		return S_HOST | S_AGENT;	/* a trace-cmd host sends its clock */
	case R_FILEVER: case R_COMPRESSION:
		/* the whole recording's after an -A; to an agent, the format of
		 * the metadata it sends (tsync-host asks a trace-cmd agent for
		 * version 6 this way) */
		return S_HOST | S_GUEST | S_AGENT;
	case R_AGENT:	/* it ends a guest's part (STOP) */
	case R_DURATION: case R_STAMP: case R_KEYFILE: case R_GUESTMAX:
	case R_OUTPUT: case R_USER: case R_INTERVAL:
	case R_MAXKB:
		/* the whole recording's wherever they are: tsync's own, and
		 * those trace-cmd's agent would refuse or take as the run's */
		return S_HOST | S_GUEST;
	}
	return S_HOST;
}

/* Parse state: the result and the scope. */
struct parse_ctx {
	struct tsync_recopt *r;
	unsigned int scope;
	bool negate;		/* a -v was seen in this scope */
};

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
static int add_filter(struct tsync_recopt *r, const char *f, char *err, size_t errlen)
{
	struct tsync_recopt_event *e;
	char *nf;

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

/* -P PID[,PID...]: appends the pids (decimal, > 0). */
static int add_pids(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
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
		nv = realloc(r->inst.pids, sizeof(*nv) * (size_t)(r->inst.npids + 1));
		if (!nv)
			return snprintf(err, errlen, "out of memory"), -1;
		r->inst.pids = nv;
		nv[r->inst.npids++] = (int)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* -l / -n / -g: a function glob, with ":mod:M" after a --module. */
static int add_func(struct tsync_recopt *r, struct tsync_instance_list *l, const char *f,
		    char *err, size_t errlen)
{
	char buf[512];

	if (!*f || strpbrk(f, " \t\n"))
		return snprintf(err, errlen, "expected one function name or glob"), -1;
	if (r->module && !strstr(f, ":mod:")) {
		if ((size_t)snprintf(buf, sizeof(buf), "%s:mod:%s", f, r->module) >= sizeof(buf))
			return snprintf(err, errlen, "too long"), -1;
		f = buf;
	}
	return list_add(l, f, err, errlen);
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
static int set_verbose(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
{
	r->verbose = tsync_recopt_verbose_level(s);
	if (r->verbose >= 0)
		return 0;
	return snprintf(err, errlen, "%s", TSYNC_RECOPT_VERBOSE_EXPECTED), -1;
}

/* -M: a hex CPU mask as trace-cmd takes it (commas allowed, as tracing_cpumask
 * prints). */
static int set_cpumask(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
{
	const char *p = s;

	if (!strncmp(p, "0x", 2) || !strncmp(p, "0X", 2))
		p += 2;
	if (!*p || strspn(p, "0123456789abcdefABCDEF,") != strlen(p) || strlen(p) > 1024)
		return snprintf(err, errlen, "expected a hexadecimal CPU mask"), -1;
	if (strspn(p, "0,") == strlen(p))
		return snprintf(err, errlen, "the mask selects no CPU"), -1;
	return set_str(&r->inst.cpumask, p, err, errlen);
}

/* -p: trace-cmd trims spaces around the tracer's name. */
static int set_tracer(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n || n >= 64 || strcspn(s, " \t/") < n)
		return snprintf(err, errlen, "not a tracer name"), -1;
	free(r->inst.tracer);
	r->inst.tracer = strndup(s, n);
	if (!r->inst.tracer)
		return snprintf(err, errlen, "out of memory"), -1;
	return 0;
}

/* -O: a trace option name, "noNAME" to clear it. */
static int add_option(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
{
	if (!*s || strlen(s) >= 64 || strcspn(s, " \t/=") != strlen(s))
		return snprintf(err, errlen, "not a trace option name"), -1;
	return list_add(&r->inst.options, s, err, errlen);
}

/* The options of one instance (see recopt.h); 1: not one of them. */
static int set_inst_opt(struct parse_ctx *c, int id, const struct tsync_opt_val *v,
			char *err, size_t errlen)
{
	struct tsync_recopt *r = c->r;

	switch (id) {
	case R_EVENT: return add_event(c, v->str, err, errlen);
	case R_FILTER: return add_filter(r, v->str, err, errlen);
	case R_NEGATE: c->negate = true; return 0;
	case R_ALL: return add_event(c, "all", err, errlen);
	case R_TRACER: return set_tracer(r, v->str, err, errlen);
	case R_FUNC: return add_func(r, &r->inst.funcs, v->str, err, errlen);
	case R_NOTRACE: return add_func(r, &r->inst.notrace_funcs, v->str, err, errlen);
	case R_GRAPH: return add_func(r, &r->inst.graph_funcs, v->str, err, errlen);
	case R_MODULE:
		if (!*v->str || strpbrk(v->str, " \t:"))
			return snprintf(err, errlen, "not a module name"), -1;
		return set_str(&r->module, v->str, err, errlen);
	case R_DEPTH: r->inst.max_graph_depth = (int)v->num; return 0;
	case R_PID: return add_pids(r, v->str, err, errlen);
	case R_CHILDREN: r->inst.follow_children = true; return 0;
	case R_OPTION: return add_option(r, v->str, err, errlen);
	case R_STACKTRACE: return list_add(&r->inst.options, "stacktrace", err, errlen);
	case R_CPUMASK: return set_cpumask(r, v->str, err, errlen);
	case R_BUFKB: r->inst.buffer_kb = (uint32_t)v->num; return 0;
	case R_IGNORE: r->ignore_missing = true; return 0;
	case R_NOFILTER: r->no_filter = true; return 0;
	case R_CMDLINES: r->inst.cmdlines_size = (int)v->num; return 0;
	case R_DISABLE: r->disable_function = true; return 0;
	case R_KEEP: r->keep = true; return 0;
	case R_NAME:
		if (!*v->str || strlen(v->str) >= 64 ||
		    strspn(v->str, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-.") != strlen(v->str))
			return snprintf(err, errlen, "a guest name is letters, digits, _ - ."), -1;
		return set_str(&r->name, v->str, err, errlen);
	}
	return 1;
}

/* --ts-offset: an integer as trace-cmd's reader takes it (strtoll, base 0),
 * kept as given: the OFFSET option holds the text. */
static int set_ts_offset(struct tsync_recopt *r, const char *s, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	(void)strtoll(s, &end, 0);
	if (errno || end == s || *end || isspace((unsigned char)*s) || strlen(s) > 40)
		return snprintf(err, errlen, "expected an integer (decimal, 0x hex or 0 octal)"), -1;
	return set_str(&r->ts_offset, s, err, errlen);
}

/* The options of the whole recording (HOST), and --ts-offset. */
static int set_host_opt(struct tsync_recopt *r, int id, const struct tsync_opt_val *v,
			char *err, size_t errlen)
{
	switch (id) {
	case R_FILTER_CMD: r->filter_command = true; return 0;
	case R_SLEEP: r->sleep_us = (int)v->num; return 0;
	case R_PRIO: r->rt_prio = (int)v->num; return 0;
	case R_VERBOSE: return set_verbose(r, v->str, err, errlen);
	case R_QUIET: r->quiet = true; return 0;
	case R_CLOCK:
		if (!*v->str || strlen(v->str) >= 32 || strpbrk(v->str, " \t/"))
			return snprintf(err, errlen, "not a trace clock name"), -1;
		return set_str(&r->clock, v->str, err, errlen);
	case R_OUTPUT:
		if (!*v->str)
			return snprintf(err, errlen, "empty file name"), -1;
		return set_str(&r->output, v->str, err, errlen);
	case R_USER: return set_str(&r->user, v->str, err, errlen);
	case R_INTERVAL:
		r->has_tsync_interval = true;
		r->tsync_interval_ms = (int)v->num;
		return 0;
	case R_FILEVER: r->file_version = (int)v->num; return 0;
	case R_COMPRESSION: return set_str(&r->compression, v->str, err, errlen);
	case R_TSOFFSET: return set_ts_offset(r, v->str, err, errlen);
	case R_MAXKB: r->max_kb = (uint32_t)v->num; return 0;
	case R_DURATION: r->duration = v->dbl; return 0;
	case R_STAMP: r->stamp = (int)v->num; return 0;
	case R_KEYFILE: return set_str(&r->key_file, v->str, err, errlen);
	case R_GUESTMAX:
		r->guest_max_mb = (uint32_t)v->num;
		r->has_guest_max_mb = !v->is_default;
		return 0;
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Stores one option value into the parse_ctx @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct parse_ctx *c = ctx;
	int ret;

	if (o->id == R_AGENT || o->id == R_HELP)	/* only in an AGENT scope */
		return snprintf(err, errlen, "not an option of a guest's recording"), -1;
	if (!(opt_scopes(o->id) & c->scope)) {
		if (c->scope == S_HOST)
			return snprintf(err, errlen, "only after an -A (for a guest)"), -1;
		return snprintf(err, errlen, "applies to the whole recording or to tsync-host "
				"itself: give it before the first -A"), -1;
	}
	ret = set_inst_opt(c, o->id, v, err, errlen);
	if (ret <= 0)
		return ret;
	return set_host_opt(c->r, o->id, v, err, errlen);
}

void tsync_recopt_init(struct tsync_recopt *r)
{
	*r = (struct tsync_recopt){ .inst.max_graph_depth = -1, .sleep_us = -1,
				    .verbose = TSYNC_RECOPT_LOG_UNSET, .stamp = -1 };
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
	for (int i = 0; i < r->nevents; i++) {
		free(r->events[i].name);
		free(r->events[i].filter);
	}
	free(r->events);
	free(r->inst.tracer);
	list_free(&r->inst.funcs);
	list_free(&r->inst.notrace_funcs);
	list_free(&r->inst.graph_funcs);
	list_free(&r->inst.options);
	free(r->module);
	free(r->inst.pids);
	free(r->inst.cpumask);
	free(r->name);
	free(r->clock);
	free(r->output);
	free(r->user);
	free(r->compression);
	free(r->key_file);
	free(r->ts_offset);
	tsync_recopt_init(r);
}

/* The table for @scope: HOST's, or a copy without defaults in @buf. */
static const struct tsync_opt *scope_table(enum tsync_recopt_scope scope,
					   struct tsync_opt *buf, size_t n)
{
	size_t i;

	if (scope == TSYNC_RECOPT_HOST)
		return rec_opts;
	for (i = 0; i + 1 < n && rec_opts[i].id; i++) {
		buf[i] = rec_opts[i];
		buf[i].def = NULL;
		if (buf[i].id == R_AGENT && scope == TSYNC_RECOPT_AGENT)
			buf[i].flags &= ~(unsigned int)TSYNC_OPT_STOP;
		if (buf[i].type == TSYNC_OPT_HELP && scope == TSYNC_RECOPT_AGENT)
			buf[i].type = TSYNC_OPT_FLAG;
	}
	buf[i] = (struct tsync_opt){ 0 };
	return buf;
}

int tsync_recopt_parse(struct tsync_recopt *r, enum tsync_recopt_scope scope,
		       int argc, char **argv, FILE *out, char *err, size_t errlen)
{
	struct tsync_opt buf[sizeof(rec_opts) / sizeof(rec_opts[0])];
	struct parse_ctx c = { .r = r };
	struct tsync_opt_cmd cmd = rec_cmd;
	int ret;

	c.scope = scope == TSYNC_RECOPT_HOST ? S_HOST :
		  scope == TSYNC_RECOPT_GUEST ? S_GUEST : S_AGENT;
	cmd.opts = scope_table(scope, buf, sizeof(buf) / sizeof(buf[0]));
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
	    !r->inst.graph_funcs.n && add_func(r, &r->inst.funcs, "*", err, errlen))
		return TSYNC_RECOPT_ERROR;
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

/* The words of a list option @opt for each entry of @l. */
static int list_argv(const char *opt, const struct tsync_instance_list *l, char ***v, int *n)
{
	int ret = 0;

	for (int i = 0; i < l->n && !ret; i++)
		ret = argv_add(v, n, opt, l->v[i]);
	return ret;
}

/* The number options of an instance. */
static int num_argv(const struct tsync_recopt *r, char ***v, int *n)
{
	char buf[32];
	int ret = 0;

	if (r->inst.max_graph_depth >= 0) {
		snprintf(buf, sizeof(buf), "%d", r->inst.max_graph_depth);
		ret = argv_add(v, n, "--max-graph-depth", buf);
	}
	if (!ret && r->inst.buffer_kb) {
		snprintf(buf, sizeof(buf), "%u", r->inst.buffer_kb);
		ret = argv_add(v, n, "-b", buf);
	}
	if (!ret && r->inst.cmdlines_size) {
		snprintf(buf, sizeof(buf), "%d", r->inst.cmdlines_size);
		ret = argv_add(v, n, "--cmdlines-size", buf);
	}
	for (int i = 0; i < r->inst.npids && !ret; i++) {
		snprintf(buf, sizeof(buf), "%d", r->inst.pids[i]);
		ret = argv_add(v, n, "-P", buf);
	}
	return ret;
}

int tsync_recopt_instance_argv(const struct tsync_recopt *r, char ***argv, int *argc)
{
	char **v = NULL;
	int n = 0, ret;

	ret = argv_add(&v, &n, "record", NULL);
	if (!ret)
		ret = events_argv(r, &v, &n);
	if (!ret && r->inst.tracer)
		ret = argv_add(&v, &n, "-p", r->inst.tracer);
	if (!ret)
		ret = list_argv("-l", &r->inst.funcs, &v, &n);
	if (!ret)
		ret = list_argv("-n", &r->inst.notrace_funcs, &v, &n);
	if (!ret)
		ret = list_argv("-g", &r->inst.graph_funcs, &v, &n);
	if (!ret)
		ret = list_argv("-O", &r->inst.options, &v, &n);
	if (!ret)
		ret = num_argv(r, &v, &n);
	if (!ret && r->inst.follow_children)
		ret = argv_add(&v, &n, "-c", NULL);
	if (!ret && r->inst.cpumask)
		ret = argv_add(&v, &n, "-M", r->inst.cpumask);
	if (!ret && r->ignore_missing)
		ret = argv_add(&v, &n, "-i", NULL);
	if (!ret && r->no_filter)
		ret = argv_add(&v, &n, "--no-filter", NULL);
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

bool tsync_recopt_plain_events(const struct tsync_recopt *r)
{
	for (int i = 0; i < r->nevents; i++)
		if (r->events[i].negate)
			return false;
	const struct tsync_instance_opts *o = &r->inst;

	return !o->tracer && !o->funcs.n && !o->notrace_funcs.n && !o->graph_funcs.n &&
	       o->max_graph_depth < 0 && !o->npids && !o->follow_children &&
	       !o->options.n && !o->cpumask && !r->ignore_missing && !r->no_filter &&
	       !o->cmdlines_size;
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
	tsync_opt_usage(&rec_cmd, f);
}
