// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace-cmd record option parser: each option's meaning as in
 * trace-cmd (-v negates every later -e, -f joined with &&, -P lists,
 * --module, -T), the scopes (host stops at -A and at COMMAND, a guest's
 * part stops at the next -A, an agent's part takes no -A and no operand,
 * whole-recording options refused after -A), trace-cmd options tsync does
 * not have refused by name, defaults only in the host scope.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/cli/recopt.h"
#include "proto/proto.h"

/* Splits @line at spaces into a writable argv (argv[0] "record"). */
struct args {
	char buf[1024];
	char *v[64];
	int n;
};

static void split(struct args *a, const char *line)
{
	char *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", line);
	a->n = 0;
	a->v[a->n++] = (char *)"record";
	for (char *t = strtok_r(a->buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		a->v[a->n++] = t;
	a->v[a->n] = NULL;
}

/* Parses @line in @scope into @r; returns the parse result, @err set. */
static int parse(struct tsync_recopt *r, enum tsync_recopt_scope scope, const char *line,
		 char *err, size_t errlen)
{
	struct args a;

	tsync_recopt_init(r);
	split(&a, line);
	err[0] = '\0';
	return tsync_recopt_parse(r, scope, a.n, a.v, NULL, err, errlen);
}

static void test_events_and_negation(void **state)
{
	struct tsync_recopt r;
	char err[256];
	int ret;

	(void)state;
	ret = parse(&r, TSYNC_RECOPT_HOST,
		    "-e sched -f prev_pid>0 -f next_pid>0 -v -e sched:sched_wakeup -e irq",
		    err, sizeof(err));
	assert_int_equal(ret, 12);
	assert_int_equal(r.nevents, 3);
	assert_string_equal(r.events[0].name, "sched");
	assert_string_equal(r.events[0].filter, "(prev_pid>0)&&(next_pid>0)");
	assert_false(r.events[0].negate);
	assert_string_equal(r.events[1].name, "sched:sched_wakeup");
	assert_null(r.events[1].filter);
	assert_true(r.events[1].negate);
	/* trace-cmd: -v stays in force for every later -e of the scope */
	assert_true(r.events[2].negate);
	tsync_recopt_free(&r);

	ret = parse(&r, TSYNC_RECOPT_HOST, "-a", err, sizeof(err));
	assert_int_equal(ret, 2);
	assert_int_equal(r.nevents, 1);
	assert_string_equal(r.events[0].name, "all");
	tsync_recopt_free(&r);

	ret = parse(&r, TSYNC_RECOPT_HOST, "-f x>1", err, sizeof(err));
	assert_int_equal(ret, TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "tsync-host record: invalid value 'x>1' for -f: "
			    "must follow an -e");
	tsync_recopt_free(&r);
}

static void test_function_tracer_options(void **state)
{
	struct tsync_recopt r;
	char err[256];

	(void)state;
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST,
			       "-p function_graph -l schedule* -l do_* -n do_idle -g vfs_read "
			       "--max-graph-depth 3 --module ext4 -l ext4_*", err, sizeof(err)), 17);
	assert_string_equal(r.inst.tracer, "function_graph");
	assert_int_equal(r.inst.funcs.n, 3);
	assert_string_equal(r.inst.funcs.v[0], "schedule*");
	assert_string_equal(r.inst.funcs.v[2], "ext4_*:mod:ext4");
	assert_int_equal(r.inst.notrace_funcs.n, 1);
	assert_string_equal(r.inst.graph_funcs.v[0], "vfs_read");
	assert_int_equal(r.inst.max_graph_depth, 3);
	tsync_recopt_free(&r);

	/* --module alone: all of the module's functions */
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "--module snd", err, sizeof(err)), 3);
	assert_int_equal(r.inst.funcs.n, 1);
	assert_string_equal(r.inst.funcs.v[0], "*:mod:snd");
	tsync_recopt_free(&r);

	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-p function -p nop", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "tsync-host record: -p given twice for the same target");
	tsync_recopt_free(&r);
}

/* Function filters from a peer: FUNC and FUNC:mod:MODULE only; the
 * kernel's function commands (triggers) refused with their name; the
 * host's own (trace-cmd's meaning) left to its kernel. */
static void test_function_triggers(void **state)
{
	static const struct {
		const char *words;
		const char *err;	/* NULL: taken */
	} rows[] = {
		{ "-l vfs_read", NULL },
		{ "-l vfs_*", NULL },
		{ "-l !vfs_read", NULL },
		{ "-l vfs_read:mod:ext4", NULL },
		{ "-l *:mod:*", NULL },
		{ "-n do_idle:mod:m", NULL },
		{ "-l vfs_read:dump", "record options: invalid value 'vfs_read:dump' for -l: 'dump' "
		  "is a function trigger, which a guest's agent refuses: only FUNC or "
		  "FUNC:mod:MODULE" },
		{ "-l vfs_read:traceoff", "record options: invalid value 'vfs_read:traceoff' for "
		  "-l: 'traceoff' is a function trigger, which a guest's agent refuses: only "
		  "FUNC or FUNC:mod:MODULE" },
		{ "-n f:traceon:3", "record options: invalid value 'f:traceon:3' for -n: "
		  "'traceon' is a function trigger, which a guest's agent refuses: only FUNC "
		  "or FUNC:mod:MODULE" },
		{ "-g f:enable_event:sched:sched_switch", "record options: invalid value "
		  "'f:enable_event:sched:sched_switch' for -g: 'enable_event' is a function "
		  "trigger, which a guest's agent refuses: only FUNC or FUNC:mod:MODULE" },
		{ "-l f:snapshot", "record options: invalid value 'f:snapshot' for -l: 'snapshot' "
		  "is a function trigger, which a guest's agent refuses: only FUNC or "
		  "FUNC:mod:MODULE" },
		{ "-l :mod:ext4", "record options: invalid value ':mod:ext4' for -l: expected "
		  "FUNC or FUNC:mod:MODULE" },
		{ "-l f:mod:", "record options: invalid value 'f:mod:' for -l: expected FUNC or "
		  "FUNC:mod:MODULE" },
		{ "-l f:mod:m:dump", "record options: invalid value 'f:mod:m:dump' for -l: "
		  "expected FUNC or FUNC:mod:MODULE" },
		{ "-l f:", "record options: invalid value 'f:' for -l: expected FUNC or "
		  "FUNC:mod:MODULE" },
		{ "-l f\vg", "record options: invalid value 'f\vg' for -l: expected one "
		  "function name or glob" },
	};
	struct tsync_recopt r;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int ret = parse(&r, TSYNC_RECOPT_AGENT, rows[i].words, err, sizeof(err));

		if (!rows[i].err) {
			assert_int_equal(ret, 3);
		} else {
			assert_int_equal(ret, TSYNC_RECOPT_ERROR);
			assert_string_equal(err, rows[i].err);
		}
		tsync_recopt_free(&r);
	}
	/* a guest's part on tsync-host: refused before the agent is asked */
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "-l vfs_read:dump", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "tsync-host record: invalid value 'vfs_read:dump' for -l: "
			    "'dump' is a function trigger, which a guest's agent refuses: only "
			    "FUNC or FUNC:mod:MODULE");
	tsync_recopt_free(&r);
	/* the host's own: as trace-cmd, its kernel decides */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-l vfs_read:traceoff", err, sizeof(err)),
			 3);
	assert_string_equal(r.inst.funcs.v[0], "vfs_read:traceoff");
	tsync_recopt_free(&r);
}

static void test_instance_settings(void **state)
{
	struct tsync_recopt r;
	char err[256];

	(void)state;
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST,
			       "-P 12,34 -P 56 -c -T -O noirq-info -M 0x3 -b 2048 -i "
			       "--no-filter --cmdlines-size 1024 -d -k", err, sizeof(err)), 19);
	assert_int_equal(r.inst.npids, 3);
	assert_int_equal(r.inst.pids[0], 12);
	assert_int_equal(r.inst.pids[2], 56);
	assert_true(r.inst.follow_children);
	assert_int_equal(r.inst.options.n, 2);
	assert_string_equal(r.inst.options.v[0], "stacktrace");
	assert_string_equal(r.inst.options.v[1], "noirq-info");
	assert_string_equal(r.inst.cpumask, "3");
	assert_int_equal(r.inst.buffer_kb, 2048);
	assert_true(r.ignore_missing);
	assert_true(r.no_filter);
	assert_int_equal(r.inst.cmdlines_size, 1024);
	assert_true(r.disable_function && r.keep);
	tsync_recopt_free(&r);

	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-c", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "tsync-host record: -c can only be used with -F or -P");
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-P 1,x", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "expected process ids"));
	tsync_recopt_free(&r);
	/* pid 0 is the idle task: trace-cmd takes it (parity_values.sh) */
	assert_true(parse(&r, TSYNC_RECOPT_HOST, "-P 0,7", err, sizeof(err)) >= 0);
	assert_int_equal(r.inst.npids, 2);
	assert_int_equal(r.inst.pids[0], 0);
	assert_int_equal(r.inst.pids[1], 7);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-M 0", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "the mask selects no CPU"));
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-M xyz", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
}

static void test_host_defaults_and_globals(void **state)
{
	struct tsync_recopt r;
	char err[256];

	(void)state;
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "", err, sizeof(err)), 1);
	assert_string_equal(r.clock, "local");
	assert_string_equal(r.output, "trace.dat");
	assert_int_equal(r.guest_max_mb, 4096);
	assert_int_equal(r.sleep_us, 1000000);
	assert_false(r.sleep_given);	/* its default: the host decides */
	assert_false(r.has_tsync_interval);
	assert_int_equal(r.verbose, TSYNC_RECOPT_LOG_UNSET);
	assert_int_equal(r.stamp, -1);
	tsync_recopt_free(&r);

	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST,
			       "-C mono -o x.dat --tsync-interval 0 --file-version 6 "
			       "--compression zstd --user nobody -s 1000 -r 10 --verbose=debug -q "
			       "--duration 1.5 --stamp clock", err, sizeof(err)), 23);
	assert_string_equal(r.clock, "mono");
	assert_string_equal(r.output, "x.dat");
	assert_true(r.has_tsync_interval);
	assert_int_equal(r.tsync_interval_ms, 0);
	assert_int_equal(r.file_version, 6);
	assert_string_equal(r.compression, "zstd");
	assert_string_equal(r.user, "nobody");
	assert_int_equal(r.sleep_us, 1000);
	assert_true(r.sleep_given);
	assert_int_equal(r.rt_prio, 10);
	assert_int_equal(r.verbose, TSYNC_RECOPT_LOG_DEBUG);
	assert_true(r.quiet);
	assert_true(r.duration == 1.5);
	assert_string_equal(tsync_stamp_names[r.stamp], "clock");
	tsync_recopt_free(&r);

	/* --verbose alone is info, as trace-cmd; numbers above 6 are "all" */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--verbose", err, sizeof(err)), 2);
	assert_int_equal(r.verbose, TSYNC_RECOPT_LOG_INFO);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--verbose=9", err, sizeof(err)), 2);
	assert_int_equal(r.verbose, TSYNC_RECOPT_LOG_ALL);
	tsync_recopt_free(&r);
	/* trace-cmd takes a level by its first letters ("warning" is "warn",
	 * as its man page spells them) and a number of any size */
	{
		static const struct { const char *arg; int want; } lv[] = {
			{ "--verbose=warning", TSYNC_RECOPT_LOG_WARN },
			{ "--verbose=critical", TSYNC_RECOPT_LOG_CRIT },
			{ "--verbose=error", TSYNC_RECOPT_LOG_ERR },
			{ "--verbose=12", TSYNC_RECOPT_LOG_ALL },
			{ "--verbose=0", TSYNC_RECOPT_LOG_NONE },
		};

		for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
			assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, lv[i].arg, err,
					       sizeof(err)), 2);
			assert_int_equal(r.verbose, lv[i].want);
			tsync_recopt_free(&r);
		}
	}
	assert_true(parse(&r, TSYNC_RECOPT_HOST, "--verbose=bogus", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "expected none, crit, err, warn, info, debug, all"));
	tsync_recopt_free(&r);

	/* trace-cmd: a negative interval means no synchronization at all */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--tsync-interval -1", err, sizeof(err)), 3);
	assert_true(r.has_tsync_interval);
	assert_int_equal(r.tsync_interval_ms, -1);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--file-version 5", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--compression lz4", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
}

/* --ts-offset: kept as given for the OFFSET option (trace-cmd's reader
 * takes it with strtoll base 0); -m: KiB per CPU, once per recording. */
/* --vm: a guest's only (never the host's, never an agent's); -C given or
 * defaulted is told apart (record's default clock depends on it). */
static void test_vm_and_clock_given(void **state)
{
	struct tsync_recopt r;
	char err[256];

	(void)state;
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "--vm 1234", err, sizeof(err)), 3);
	assert_string_equal(r.vm, "1234");
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--vm 1234", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "--vm 1234", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-e sched", err, sizeof(err)), 3);
	assert_string_equal(r.clock, "local");
	assert_false(r.clock_given);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-C local", err, sizeof(err)), 3);
	assert_true(r.clock_given);
	tsync_recopt_free(&r);
}

static void test_ts_offset_and_max_kb(void **state)
{
	static const char *const good[] = { "1000000000", "-5", "0x10", "010", "+7" };
	static const char *const bad[] = { "", "1.5", "12abc", "0x", "99999999999999999999",
					   " 5", "five" };
	struct tsync_recopt r;
	char err[256], line[64];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(line, sizeof(line), "--ts-offset=%s", good[i]);
		assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, line, err, sizeof(err)), 2);
		assert_string_equal(r.ts_offset, good[i]);
		tsync_recopt_free(&r);
		/* after an -A it is that guest's */
		assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, line, err, sizeof(err)), 2);
		assert_string_equal(r.ts_offset, good[i]);
		tsync_recopt_free(&r);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "--ts-offset=%s", bad[i]);
		assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, line, err, sizeof(err)),
				 TSYNC_RECOPT_ERROR);
		assert_non_null(strstr(err, "expected an integer"));
		tsync_recopt_free(&r);
	}
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "", err, sizeof(err)), 1);
	assert_null(r.ts_offset);
	assert_int_equal(r.max_kb, 0);
	tsync_recopt_free(&r);

	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-m 100", err, sizeof(err)), 3);
	assert_int_equal(r.max_kb, 100);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "-m 64", err, sizeof(err)), 3);
	assert_int_equal(r.max_kb, 64);
	tsync_recopt_free(&r);
	/* trace-cmd: "-m can only be specified once" */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-m 100 -m 200", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "given twice"));
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-m -1", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	/* a trace-cmd host sends --ts-offset to the agent, which writes it into
	 * its metadata as trace-cmd's agent does; -m is no option of the
	 * instance an agent records: tsync-host writes the files */
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "--ts-offset 5", err, sizeof(err)), 3);
	assert_string_equal(r.ts_offset, "5");
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-m 5", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
}

static void test_scopes(void **state)
{
	struct tsync_recopt r;
	struct args a;
	char err[256];
	int at, next;
	const char *val;

	(void)state;
	/* host stops at -A; the guest part at the next -A, then COMMAND */
	split(&a, "-e sched -A vm1@3 -e irq --name one -b 100 -Avm2 -e kvm -- sleep 1");
	tsync_recopt_init(&r);
	at = tsync_recopt_parse(&r, TSYNC_RECOPT_HOST, a.n, a.v, NULL, err, sizeof(err));
	assert_int_equal(at, 3);
	val = tsync_recopt_agent_value(a.n, a.v, at, &next);
	assert_string_equal(val, "vm1@3");
	assert_int_equal(next, 5);
	tsync_recopt_free(&r);

	tsync_recopt_init(&r);
	at = tsync_recopt_parse(&r, TSYNC_RECOPT_GUEST, a.n - (next - 1), a.v + next - 1,
				NULL, err, sizeof(err));
	assert_int_equal(at, 7);	/* relative: "-Avm2" */
	assert_string_equal(r.events[0].name, "irq");
	assert_string_equal(r.name, "one");
	assert_int_equal(r.inst.buffer_kb, 100);
	assert_null(r.clock);		/* no host defaults in a guest scope */
	assert_null(r.output);
	at += next - 1;
	val = tsync_recopt_agent_value(a.n, a.v, at, &next);
	assert_string_equal(val, "vm2");
	assert_int_equal(next, at + 1);
	tsync_recopt_free(&r);

	tsync_recopt_init(&r);
	at = tsync_recopt_parse(&r, TSYNC_RECOPT_GUEST, a.n - (next - 1), a.v + next - 1,
				NULL, err, sizeof(err));
	assert_string_equal(a.v[next - 1 + at], "sleep");
	tsync_recopt_free(&r);

	/* -C after -A is the guest's (trace-cmd's meaning), kept as given for
	 * tsync-host to compare with the recording's; not passed on as words */
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "-C mono", err, sizeof(err)), 3);
	assert_string_equal(r.clock, "mono");
	assert_true(r.clock_given);
	tsync_recopt_free(&r);
	/* options trace-cmd would pass on to the guest are refused after -A;
	 * the whole recording's that a guest has no use for are taken */
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "-q", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_GUEST, "-o x.dat --duration 2 --guest-max-mb 0",
			       err, sizeof(err)), 7);
	assert_string_equal(r.output, "x.dat");
	assert_true(r.duration == 2);
	assert_true(r.has_guest_max_mb);
	assert_int_equal(r.guest_max_mb, 0);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-o x.dat", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--name x", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "only after an -A"));
	tsync_recopt_free(&r);

	/* an agent's argv: no -A, no operand, no host options */
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-e sched -p function -C local",
			       err, sizeof(err)), 7);
	assert_string_equal(r.clock, "local");
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-A 3", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "not an option of a guest's recording"));
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-e sched ls", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "record options: unexpected 'ls' (no command runs on a guest)");
	tsync_recopt_free(&r);
	assert_int_equal(parse(&r, TSYNC_RECOPT_AGENT, "-h", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	tsync_recopt_free(&r);

	/* -A glued into a cluster of flags */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "-iA 3", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_non_null(strstr(err, "must be a word of its own"));
	tsync_recopt_free(&r);
}

static void test_unsupported(void **state)
{
	static const char *const lines[][2] = {
		{ "-B foo", "-B" }, { "-e sched -R stacktrace", "-R" },
		{ "--date", "--date" }, { "--proxy 3", "--proxy" }, { "-N host:1", "-N" },
		{ "--tsc2nsec", "--tsc2nsec" },
	};
	struct tsync_recopt r;
	char err[256], want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		for (int s = TSYNC_RECOPT_HOST; s <= TSYNC_RECOPT_AGENT; s++) {
			assert_int_equal(parse(&r, s, lines[i][0], err, sizeof(err)),
					 TSYNC_RECOPT_ERROR);
			snprintf(want, sizeof(want), "option %s is not supported: ", lines[i][1]);
			assert_non_null(strstr(err, want));
			tsync_recopt_free(&r);
		}
	}
	/* and an option trace-cmd does not have either */
	assert_int_equal(parse(&r, TSYNC_RECOPT_HOST, "--frobnicate", err, sizeof(err)),
			 TSYNC_RECOPT_ERROR);
	assert_string_equal(err, "tsync-host record: unknown option '--frobnicate'");
	tsync_recopt_free(&r);
}

/* The words an agent gets read back into the same settings. */
static void test_instance_argv(void **state)
{
	struct tsync_recopt r, back;
	char err[256], **v;
	int n;

	(void)state;
	assert_true(parse(&r, TSYNC_RECOPT_GUEST,
			  "-e sched -f a>1 -f b>2 -v -e sched:sched_switch -p function_graph "
			  "--module ext4 -l ext4_* -n x -g y --max-graph-depth 2 -P 5,6 -c -T -O noirq-info "
			  "-M ff -b 512 -i --no-filter --cmdlines-size 300 --name g1 --duration 3",
			  err, sizeof(err)) > 0);
	assert_int_equal(tsync_recopt_instance_argv(&r, &v, &n), 0);
	assert_string_equal(v[0], "record");
	assert_null(v[n]);
	tsync_recopt_init(&back);
	assert_int_equal(tsync_recopt_parse(&back, TSYNC_RECOPT_AGENT, n, v, NULL, err,
					    sizeof(err)), n);
	assert_int_equal(back.nevents, 2);
	assert_string_equal(back.events[0].name, "sched");
	assert_string_equal(back.events[0].filter, "((a>1)&&(b>2))");
	assert_true(back.events[1].negate);
	assert_string_equal(back.inst.tracer, "function_graph");
	assert_string_equal(back.inst.funcs.v[0], "ext4_*:mod:ext4");
	assert_string_equal(back.inst.notrace_funcs.v[0], "x:mod:ext4");
	assert_int_equal(back.inst.max_graph_depth, 2);
	assert_int_equal(back.inst.npids, 2);
	assert_true(back.inst.follow_children && back.ignore_missing && back.no_filter);
	assert_int_equal(back.inst.options.n, 2);
	assert_string_equal(back.inst.cpumask, "ff");
	assert_int_equal(back.inst.buffer_kb, 512);
	assert_int_equal(back.inst.cmdlines_size, 300);
	assert_null(back.name);		/* not an instance setting */
	assert_true(back.duration == 0);
	tsync_recopt_argv_free(v, n);
	tsync_recopt_free(&back);
	tsync_recopt_free(&r);

	/* events, filters and a buffer size: the words, known */
	assert_true(parse(&r, TSYNC_RECOPT_GUEST, "-e sched -f x>1 -b 64 --name g", err,
			  sizeof(err)) > 0);
	assert_int_equal(tsync_recopt_instance_argv(&r, &v, &n), 0);
	{
		static const char *const want[] = { "record", "-e", "sched", "-f", "(x>1)",
						    "-b", "64" };

		assert_int_equal(n, 7);
		for (int i = 0; i < n; i++)
			assert_string_equal(v[i], want[i]);
	}
	tsync_recopt_argv_free(v, n);
	tsync_recopt_free(&r);
}

/* The whole recording's options given after an -A go to the host's part
 * (each replacing the host's); the instance's stay the guest's. */
static void test_take_run(void **state)
{
	struct tsync_recopt h, g;
	char err[256];

	(void)state;
	assert_int_equal(parse(&h, TSYNC_RECOPT_HOST, "-o h.dat --duration 1 -e sched", err,
			       sizeof(err)), 7);
	assert_int_equal(parse(&g, TSYNC_RECOPT_GUEST,
			       "-e irq -b 64 -o g.dat --tsync-interval 0 --guest-max-mb 0 "
			       "--stamp tsc -m 32 --file-version 6 --compression none "
			       "--key-file k --user u --ts-offset 5 --name n", err, sizeof(err)),
			 27);
	tsync_recopt_take_run(&h, &g);
	assert_string_equal(h.output, "g.dat");
	assert_string_equal(g.output, "h.dat");	/* freed with the guest's part */
	assert_true(h.duration == 1);		/* not given after the -A */
	assert_true(h.has_tsync_interval);
	assert_int_equal(h.tsync_interval_ms, 0);
	assert_true(h.has_guest_max_mb);
	assert_int_equal(h.guest_max_mb, 0);
	assert_string_equal(tsync_stamp_names[h.stamp], "tsc");
	assert_int_equal(h.max_kb, 32);
	assert_int_equal(h.file_version, 6);
	assert_string_equal(h.compression, "none");
	assert_string_equal(h.key_file, "k");
	assert_string_equal(h.user, "u");
	/* the guest's own */
	assert_int_equal(h.nevents, 1);
	assert_string_equal(h.events[0].name, "sched");
	assert_int_equal(h.inst.buffer_kb, 0);
	assert_null(h.ts_offset);
	assert_null(h.name);
	assert_string_equal(g.ts_offset, "5");
	assert_string_equal(g.name, "n");
	tsync_recopt_free(&g);

	/* what the guest's part does not give stays the host's */
	assert_int_equal(parse(&g, TSYNC_RECOPT_GUEST, "-e irq", err, sizeof(err)), 3);
	tsync_recopt_take_run(&h, &g);
	assert_string_equal(h.output, "g.dat");
	assert_int_equal(h.stamp, 2);
	assert_int_equal(h.guest_max_mb, 0);
	tsync_recopt_free(&g);
	tsync_recopt_free(&h);
}

static void test_usage(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	tsync_recopt_usage(f);
	fclose(f);
	assert_non_null(strstr(text, "  -A GUEST"));
	assert_non_null(strstr(text, "  -v "));
	assert_non_null(strstr(text, "--verbose[=LEVEL]"));
	/* refused options are not offered */
	assert_null(strstr(text, "--date"));
	assert_null(strstr(text, "  -R "));
	assert_non_null(strstr(text, "  --ts-offset OFFSET"));
	assert_non_null(strstr(text, "  -m KB"));
	/* the instance options after -A: the table's (and wrapped as ever) */
	assert_non_null(strstr(text, "After -A,\nthe options of one instance (-e -f -v -a -p -l "
			       "-n -g --module\n--max-graph-depth -P -c -O -T -M -b -i "
			       "--no-filter --cmdlines-size -d -k),\n--ts-offset, --name and "
			       "--vm apply to that guest.\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_and_negation),
		cmocka_unit_test(test_function_tracer_options),
		cmocka_unit_test(test_function_triggers),
		cmocka_unit_test(test_instance_settings),
		cmocka_unit_test(test_host_defaults_and_globals),
		cmocka_unit_test(test_vm_and_clock_given),
		cmocka_unit_test(test_ts_offset_and_max_kb),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_instance_argv),
		cmocka_unit_test(test_take_run),
		cmocka_unit_test(test_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
