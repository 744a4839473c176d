// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tests of buffer_percent's arming (common/tracefs/watermark.c) against
 * the real tracefs. A thread sleeps in poll() on one CPU's trace_pipe_raw
 * of a private instance (16 pages a CPU, buffer_percent 50) from before
 * tracing starts, as a recorder's reader does; markers pinned to that CPU
 * then fill 3 pages (far from the watermark), then 9 more (past it):
 *  - not armed (what a reader gets from the kernel alone): whether the
 *    poller wakes at 3 pages is printed; where it does (6.18 does: the
 *    kernel forgets the percentage of a poll on an empty buffer), that
 *    shows the armed check below can fail;
 *  - armed: the poller sleeps through the 3 pages and wakes past the
 *    watermark; nothing of the arming is left in the buffer (no marker
 *    of it is read back), tracing is off again and the thread's CPU
 *    affinity is what it was;
 *  - a tracing instance is refused (-EBUSY), and buffer_percent 0 arms
 *    nothing (poll wakes on any data there): what the buffer held is
 *    still there.
 * "Sleeps through" is a bounded look (SETTLE_MS: the kernel's wake-up
 * runs from irq_work within a tick, milliseconds); the waits for a wake
 * that must come have a deadline that only catches a hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <tracefs.h>

#include "common/base/timeutil.h"
#include "common/tracefs/ringbuf.h"
#include "common/tracefs/watermark.h"

#define WAIT_MS		30000
#define SETTLE_MS	300
#define TEXT		200

struct fixture {
	struct tracefs_instance *inst;
	char name[64];
	int cpu;		/* the CPU written and polled */
	int page;
};

/* The poller: sleeps in poll() until woken (or WAIT_MS). */
struct poller {
	int fd;
	pthread_t thr;
	_Atomic int tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool woken;
	short revents;
};

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct pollfd pf = { .fd = p->fd, .events = POLLIN };
	int n;

	p->tid = gettid();
	n = poll(&pf, 1, WAIT_MS);

	pthread_mutex_lock(&p->lock);
	p->woken = true;
	p->revents = n > 0 ? pf.revents : 0;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Waits until the poller sleeps (in its poll(): it does nothing else
 * before), so that it polls an empty buffer as a recorder's reader does. */
static void wait_sleeping(struct poller *p)
{
	int64_t deadline = tsync_deadline_ms(WAIT_MS);
	struct timespec tick = { 0, NSEC_PER_MSEC };

	for (;;) {
		char path[64], st[256], *rp;
		int fd, tid = p->tid;
		ssize_t n = -1;

		if (tid > 0) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
			if (fd >= 0)
				close(fd);
		}
		st[n > 0 ? n : 0] = '\0';
		/* "tid (comm) S ...": the state follows the last ')' */
		rp = strrchr(st, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'S')
			return;
		assert_true(tsync_now_ns() < deadline);
		nanosleep(&tick, NULL);
	}
}

/* The poller thread's voluntary context switches so far: one more each
 * time it goes to sleep again, also when poll() was woken in the kernel,
 * found nothing ready and slept on without returning. */
static long sleeps(struct poller *p)
{
	char path[64], st[2048], *v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)p->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, st, sizeof(st) - 1);
	close(fd);
	assert_true(n > 0);
	st[n] = '\0';
	v = strstr(st, "\nvoluntary_ctxt_switches:");
	assert_non_null(v);
	return atol(v + strlen("\nvoluntary_ctxt_switches:"));
}

/* True if the poller woke within @ms. */
static bool woken_within(struct poller *p, int ms)
{
	struct timespec until;
	bool w;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * NSEC_PER_MSEC;
	if (until.tv_nsec >= NSEC_PER_SEC) {
		until.tv_sec++;
		until.tv_nsec -= NSEC_PER_SEC;
	}
	pthread_mutex_lock(&p->lock);
	while (!p->woken && !pthread_cond_timedwait(&p->cond, &p->lock, &until))
		;
	w = p->woken;
	pthread_mutex_unlock(&p->lock);
	return w;
}

/* Writes @pages pages' worth of markers on the fixture's CPU. */
static void fill(struct fixture *fx, int pages)
{
	int fd = tracefs_instance_file_open(fx->inst, "trace_marker", O_WRONLY | O_CLOEXEC);
	char text[TEXT];
	cpu_set_t one, saved;

	assert_true(fd >= 0);
	memset(text, 'w', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\n';
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	CPU_ZERO(&one);
	CPU_SET(fx->cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	for (int i = 0; i < pages * fx->page / TEXT; i++)
		assert_int_equal(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	close(fd);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	cpu_set_t set;

	if (!fx)
		return -1;
	*state = fx;
	if (!tracefs_tracing_dir() || access("/sys/kernel/tracing/instances", W_OK))
		return 0;	/* the tests skip */
	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (fx->cpu = 0; !CPU_ISSET(fx->cpu, &set); fx->cpu++)
		;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* A fresh instance for one test: 16 pages a CPU, tracing off. */
static void fresh(struct fixture *fx, const char *tag)
{
	char kb[32];

	snprintf(fx->name, sizeof(fx->name), "tsync-test-watermark-%s-%d", tag, (int)getpid());
	fx->inst = tracefs_instance_create(fx->name);
	assert_non_null(fx->inst);
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	fx->page = tsync_ringbuf_page_size(fx->inst);
	assert_true(fx->page > 0);
	snprintf(kb, sizeof(kb), "%d", 16 * fx->page / 1024);
	assert_true(tracefs_instance_file_write(fx->inst, "buffer_size_kb", kb) > 0);
	assert_true(tracefs_instance_file_write(fx->inst, "buffer_percent", "50") > 0);
}

static void gone(struct fixture *fx)
{
	tracefs_trace_off(fx->inst);
	if (tracefs_instance_destroy(fx->inst))
		fprintf(stderr, "cannot remove instance %s\n", fx->name);
	tracefs_instance_free(fx->inst);
	fx->inst = NULL;
}

/* One run: arms (@arm) or not, then the poller, 3 pages, 9 more. Returns
 * whether the poller woke at 3 pages; checks it wakes past the
 * watermark. @fd_out: the descriptor, left open for checks (closed by
 * the caller). */
static bool early_wake(struct fixture *fx, bool arm, int *fd_out)
{
	struct poller p = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	int fds[CPU_SETSIZE];
	long before;
	bool early;

	for (int i = 0; i <= fx->cpu; i++)
		fds[i] = -1;
	p.fd = fds[fx->cpu] = tsync_ringbuf_open_cpu(fx->inst, fx->cpu);
	assert_true(p.fd >= 0);
	if (arm) {
		assert_int_equal(tsync_watermark_arm(fx->inst, fds, fx->cpu + 1), 1);
		assert_int_equal(tracefs_trace_is_on(fx->inst), 0);
	}
	assert_int_equal(pthread_create(&p.thr, NULL, poller_main, &p), 0);
	wait_sleeping(&p);
	before = sleeps(&p);
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	fill(fx, 3);
	/* woken, returned or slept again (the kernel's poll loop) */
	early = woken_within(&p, SETTLE_MS) || sleeps(&p) != before;
	fill(fx, 9);
	assert_true(woken_within(&p, WAIT_MS));
	assert_true(p.revents & POLLIN);
	pthread_join(p.thr, NULL);
	*fd_out = p.fd;
	return early;
}

static void test_arm(void **state)
{
	struct fixture *fx = *state;
	char page[65536];
	cpu_set_t before, after;
	bool kernel_early, armed_early;
	ssize_t n;
	int fd;

	if (access("/sys/kernel/tracing/instances", W_OK))
		skip();
	fresh(fx, "plain");
	kernel_early = early_wake(fx, false, &fd);
	close(fd);
	gone(fx);
	printf("a poller of an empty buffer, not armed, woke at 3 of 16 pages "
	       "(buffer_percent 50): %s\n", kernel_early ? "yes (this kernel)" : "no");

	fresh(fx, "armed");
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	armed_early = early_wake(fx, true, &fd);
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
	assert_false(armed_early);
	if (!kernel_early)
		printf("this kernel records the percentage of every poll(): the arming "
		       "changes nothing here, and the check above is not exercised\n");
	/* what is read back is the test's markers only, none of the arming */
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	while ((n = read(fd, page, (size_t)fx->page)) > 0)
		assert_null(memmem(page, (size_t)n, "arming", 6));
	close(fd);
	gone(fx);
}

static void test_refusals(void **state)
{
	struct fixture *fx = *state;
	int fds[CPU_SETSIZE];
	char page[65536];
	ssize_t n;

	if (access("/sys/kernel/tracing/instances", W_OK))
		skip();
	fresh(fx, "refuse");
	for (int i = 0; i <= fx->cpu; i++)
		fds[i] = -1;
	fds[fx->cpu] = tsync_ringbuf_open_cpu(fx->inst, fx->cpu);
	assert_true(fds[fx->cpu] >= 0);
	assert_int_equal(tsync_watermark_arm(NULL, fds, fx->cpu + 1), -EINVAL);
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	assert_int_equal(tsync_watermark_arm(fx->inst, fds, fx->cpu + 1), -EBUSY);
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	/* buffer_percent 0: nothing done, so a marker written before is
	 * still there to read */
	assert_true(tracefs_instance_file_write(fx->inst, "buffer_percent", "0") > 0);
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	fill(fx, 1);
	assert_int_equal(tracefs_trace_off(fx->inst), 0);
	assert_int_equal(tsync_watermark_arm(fx->inst, fds, fx->cpu + 1), 0);
	assert_int_equal(tracefs_trace_is_on(fx->inst), 0);
	n = read(fds[fx->cpu], page, (size_t)fx->page);
	assert_true(n > 0);
	assert_non_null(memmem(page, (size_t)n, "www", 3));
	close(fds[fx->cpu]);
	gone(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm),
		cmocka_unit_test(test_refusals),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, setup, teardown);
}
