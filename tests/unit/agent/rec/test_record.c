// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the agent's recording (agent/rec/record.c) against the
 * real tracefs (skipped, exit 77, without root and tracefs): its states,
 * the claims of CPUs, streams ended by the stop (a trace-cmd session's)
 * and by their own thread (tsync's data connections), each CPU's figures
 * at the stop, and the refusals, after which nothing is left in tracefs or
 * taken from the budget.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent/conn/config.h"
#include "agent/conn/context.h"
#include "agent/rec/budget.h"
#include "agent/rec/record.h"
#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/cli/recopt.h"
#include "common/tracefs/instance.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/proto.h"

#define BUDGET_KB (64 * 1024)

struct fx {
	struct agent_cfg cfg;
	struct agent_ctx ctx;
	struct tsync_recopt opt;
	struct tracemeta_events *ev;
	char prefix[64];
};

static int setup(void **state)
{
	struct tracemeta_event_spec spec = { .spec = "sched:sched_switch" };
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	f->cfg = (struct agent_cfg){ .io_timeout_ms = 2000, .max_buffer_kb = 8192 };
	f->ctx.cfg = &f->cfg;
	f->ctx.ncpus = tsync_cpu_count();
	f->ctx.budget = agent_budget_new(BUDGET_KB);
	tsync_recopt_init(&f->opt);
	snprintf(f->prefix, sizeof(f->prefix), "tsync-tr%d", (int)getpid());
	*state = f;
	if (!f->ctx.budget || tracemeta_resolve_events(&spec, 1, &f->ev, err, sizeof(err)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tracemeta_events_free(f->ev);
	tsync_recopt_free(&f->opt);
	agent_budget_free(f->ctx.budget);
	free(f);
	return 0;
}

/* Returns true if an instance of @f's prefix exists. */
static bool instance_left(const struct fx *f)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ls -d /sys/kernel/tracing/instances/%s-* >/dev/null 2>&1",
		 f->prefix);
	return system(cmd) == 0;
}

/* Asserts that the whole budget is free again. */
static void budget_all_free(const struct fx *f)
{
	assert_int_equal(agent_budget_reserve(f->ctx.budget, BUDGET_KB, NULL), 0);
	agent_budget_release(f->ctx.budget, BUDGET_KB);
}

/* A reader of one end of a socketpair, to its EOF. */
struct drain {
	pthread_t th;
	int fd;
	uint64_t bytes;
};

static void *drain_run(void *arg)
{
	struct drain *d = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(d->fd, buf, sizeof(buf))) > 0)
		d->bytes += (uint64_t)n;
	return NULL;
}

/* A stream waited on by its own thread, as a data connection's. */
struct waiter {
	pthread_t th;
	struct agent_rec *r;
	uint32_t cpu;
	int fd, ret;
};

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;

	w->ret = agent_rec_stream(w->r, w->cpu, w->fd, "waiter", true);
	return NULL;
}

/*
 * IDLE -> READY -> ACTIVE -> STOPPED -> READY -> IDLE. CPUs are claimed
 * only while ACTIVE, once each and in range; a stream without a waiting
 * thread (CPU 0) and one with (CPU 1) both end at the stop with EOF, and
 * the stop's figures say as many bytes as arrived. Clearing removes the
 * instance and gives the budget back.
 */
static void test_states(void **state)
{
	struct fx *f = *state;
	struct agent_rec_req q = { .opt = &f->opt, .clock = "mono", .buffer_kb = 512,
				   .events = f->ev };
	uint32_t ncpus = (uint32_t)f->ctx.ncpus, code = 0;
	struct tsync_cpu_stats *cs = calloc(ncpus, sizeof(*cs));
	struct tracemeta_opts mo = { .kallsyms = false };
	struct tracemeta_opts so = { .cpustat = true };
	struct tracemeta *tm = NULL;
	const struct tracemeta *m1 = NULL, *m2 = NULL;
	const char *hp, *const *st;
	struct drain d[2] = { 0 };
	struct waiter w = { 0 };
	struct agent_rec *r;
	char err[256], why[128];
	int sv[2][2];

	assert_non_null(cs);
	assert_int_equal(agent_rec_new(&f->ctx, f->prefix, "test", &r), 0);
	assert_string_equal(agent_rec_name(r), "");
	assert_int_equal(agent_rec_ncpus(r), ncpus);
	assert_int_equal(agent_rec_collect(r, NULL, NULL), -ENOENT);
	assert_int_equal(agent_rec_meta(r, &so, &m1), -ENOENT);
	assert_null(m1);
	assert_int_equal(agent_rec_marker(r), -ENOENT);
	assert_int_equal(agent_rec_stop(r, cs), -ENOENT);

	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)), 0);
	assert_int_equal(strncmp(agent_rec_name(r), f->prefix, strlen(f->prefix)), 0);
	assert_false(agent_rec_active(r));
	assert_int_equal(agent_rec_claim(r, 0, why, sizeof(why)), TSYNC_ERR_UNEXPECTED);
	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)), -EBUSY);
	assert_int_equal(code, TSYNC_ERR_UNEXPECTED);
	assert_int_equal(agent_budget_reserve(f->ctx.budget, BUDGET_KB, NULL), -ENOSPC);

	assert_int_equal(agent_rec_start(r, err, sizeof(err)), 0);
	assert_true(agent_rec_active(r));
	assert_true(agent_rec_marker(r) >= 0);
	assert_int_equal(agent_rec_claim(r, ncpus, why, sizeof(why)), TSYNC_ERR_NO_CPU);
	snprintf(err, sizeof(err), "cpu %u out of range (%u CPUs)", ncpus, ncpus);
	assert_string_equal(why, err);
	assert_int_equal(agent_rec_claim(r, 0, why, sizeof(why)), 0);
	assert_int_equal(agent_rec_claim(r, 0, why, sizeof(why)), TSYNC_ERR_BUSY);
	assert_string_equal(why, "cpu 0 already has a stream");
	agent_rec_unclaim(r, 0);
	assert_int_equal(agent_rec_claim(r, 0, why, sizeof(why)), 0);

	for (int i = 0; i < 2; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
		d[i].fd = sv[i][1];
		assert_int_equal(pthread_create(&d[i].th, NULL, drain_run, &d[i]), 0);
	}
	assert_int_equal(agent_rec_stream(r, 0, sv[0][0], "test", false), 0);
	if (ncpus > 1) {
		assert_int_equal(agent_rec_claim(r, 1, why, sizeof(why)), 0);
		w = (struct waiter){ .r = r, .cpu = 1, .fd = sv[1][0] };
		assert_int_equal(pthread_create(&w.th, NULL, waiter_run, &w), 0);
	} else {
		shutdown(sv[1][0], SHUT_WR);
	}
	/* the metadata while recording (the host's first META_REQ) */
	assert_int_equal(agent_rec_meta(r, &so, &m1), 0);
	assert_non_null(m1);
	hp = tracemeta_meta(m1)->header_page.data;
	for (int i = 0; i < 200; i++)
		usleep(1000);	/* some sched_switch events */

	assert_int_equal(agent_rec_stop(r, cs), 0);
	assert_false(agent_rec_active(r));
	if (ncpus > 1) {
		assert_int_equal(pthread_join(w.th, NULL), 0);
		assert_int_equal(w.ret, 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(d[i].th, NULL), 0);	/* EOF came */
		close(sv[i][0]);
		close(sv[i][1]);
	}
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		assert_int_equal(cs[cpu].cpu, cpu);
	assert_true(cs[0].bytes == d[0].bytes);
	assert_true(cs[0].bytes % 4096 == 0);
	if (ncpus > 1)
		assert_true(cs[1].bytes == d[1].bytes);
	assert_int_equal(agent_rec_claim(r, 0, why, sizeof(why)), TSYNC_ERR_UNEXPECTED);

	/* the one after the stop: the same, refreshed, not collected again */
	assert_int_equal(agent_rec_meta(r, &so, &m2), 0);
	assert_ptr_equal(m2, m1);
	assert_ptr_equal(tracemeta_meta(m2)->header_page.data, hp);
	assert_int_equal(tracemeta_cpustat(m2, &st), (int)ncpus);
	assert_int_equal(strncmp(st[0], "CPU: 0\n", 7), 0);

	/* the metadata of a stopped recording, then a new one in its place */
	assert_int_equal(agent_rec_collect(r, &mo, &tm), 0);
	assert_non_null(tm);
	tracemeta_free(tm);
	q.clock = NULL;
	q.buffer_kb = 0;	/* the default, counted against the budget */
	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)), 0);
	assert_int_equal(agent_budget_reserve(f->ctx.budget,
					      BUDGET_KB - (uint64_t)TSYNC_INSTANCE_DEFAULT_BUFFER_KB *
					      ncpus + 1, NULL), -ENOSPC);
	assert_int_equal(agent_rec_meta(r, &so, &m1), 0);
	agent_rec_clear(r);
	assert_int_equal(agent_rec_meta(r, &so, &m2), -ENOENT);
	assert_string_equal(agent_rec_name(r), "");
	assert_false(instance_left(f));
	budget_all_free(f);
	agent_rec_free(r);
	free(cs);
}

/*
 * Refusals, each with its code and reason, leaving nothing behind: a
 * buffer over --max-buffer-kb, over the budget (--max-trace-mb), a clock
 * the kernel lacks, a rejected filter.
 */
static void test_refusals(void **state)
{
	struct fx *f = *state;
	struct tracemeta_event_spec bad = { .spec = "sched:sched_switch",
					    .filter = "no_such_field == 1" };
	struct agent_rec_req q = { .opt = &f->opt, .events = f->ev };
	struct tracemeta_events *bad_ev = NULL;
	struct agent_rec *r;
	char err[256];
	uint32_t code;

	assert_int_equal(agent_rec_new(&f->ctx, f->prefix, "test", &r), 0);
	q.buffer_kb = f->cfg.max_buffer_kb + 1;
	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)), -EINVAL);
	assert_int_equal(code, TSYNC_ERR_LIMIT);
	assert_non_null(strstr(err, "above the agent's limit of 8192 KiB (--max-buffer-kb)"));
	assert_int_equal(agent_rec_check_buffer(&f->ctx, 8192, err, sizeof(err)), 0);

	f->cfg.max_buffer_kb = BUDGET_KB;
	q.buffer_kb = BUDGET_KB;	/* for every CPU: over the budget */
	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)),
			 f->ctx.ncpus > 1 ? -ENOSPC : 0);
	if (f->ctx.ncpus > 1) {
		assert_int_equal(code, TSYNC_ERR_LIMIT);
		assert_non_null(strstr(err, "(--max-trace-mb)"));
	}
	agent_rec_clear(r);
	f->cfg.max_buffer_kb = 8192;
	budget_all_free(f);

	q.buffer_kb = 0;
	q.clock = "no_such_clock";
	assert_int_equal(agent_rec_setup(r, &q, &code, err, sizeof(err)), -EINVAL);
	assert_int_equal(code, TSYNC_ERR_INTERNAL);
	assert_string_equal(err, "trace clock 'no_such_clock': not a clock of this kernel");
	assert_false(instance_left(f));
	budget_all_free(f);

	q.clock = NULL;
	assert_int_equal(tracemeta_resolve_events(&bad, 1, &bad_ev, err, sizeof(err)), 0);
	q.events = bad_ev;
	assert_true(agent_rec_setup(r, &q, &code, err, sizeof(err)) < 0);
	assert_int_equal(code, TSYNC_ERR_BAD_REQUEST);
	assert_memory_equal(err, "filter ", 7);
	assert_false(instance_left(f));
	budget_all_free(f);
	assert_int_equal(agent_rec_start(r, err, sizeof(err)), -ENOENT);	/* not READY */
	tracemeta_events_free(bad_ev);
	agent_rec_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};
	struct stat st;

	if (geteuid() != 0 || stat("/sys/kernel/tracing/instances", &st) ||
	    access("/sys/kernel/tracing/instances", W_OK)) {
		fprintf(stderr, "needs root and tracefs at /sys/kernel/tracing\n");
		return 77;
	}
	tsync_log_init("test_record", TSYNC_LOG_WARN, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
