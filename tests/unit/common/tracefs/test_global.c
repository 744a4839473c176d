// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The machine-wide saved_cmdlines_size (--cmdlines-size) has one owner:
 * two recordings that overlap give the original back whichever ends
 * first, and one killed while it had changed it gets it back at the next
 * stale cleanup. Needs tracefs (root); skipped without it.
 */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <tracefs.h>

#include "common/tracefs/instance.h"
#include "common/tracefs/stale.h"
#include "common/tracefs/instance_opts.h"

#define FILE_ "saved_cmdlines_size"
/* sizes other than @n, within the kernel's 32768; the kernel rounds up
 * to fill its pages (128 and 256 read back as 6552, and so does 8192 as
 * 19659 when that is the size): above 16000, two small ones */
#define SMALLER(n) ((n) > 16000 ? 128 : (n) + 16)
#define BIGGER(n) ((n) > 16000 ? 256 : (n) * 3)

static int size_now(void)
{
	char *txt = tracefs_instance_file_read(NULL, FILE_, NULL);
	int n;

	assert_non_null(txt);
	n = atoi(txt);
	free(txt);
	return n;
}

/* A private instance whose recording set saved_cmdlines_size to @n. */
static struct tsync_instance *with_size(int n)
{
	struct tsync_instance_opts o = { .max_graph_depth = -1, .cmdlines_size = n };
	struct tsync_instance *ti;
	char prefix[64], err[256];

	snprintf(prefix, sizeof(prefix), "tsync-tglob%d", (int)getpid());
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	if (tsync_instance_apply_opts(ti, &o, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(size_now() >= n);	/* the kernel rounds up to its pages */
	return ti;
}

static void need_tracefs(void)
{
	if (access("/sys/kernel/tracing/" FILE_, W_OK)) {
		printf("skipped: no tracefs\n");
		skip();
	}
}

/* First in, first out: the second's size stays until it ends, then the
 * original comes back (it used to be the first one's size, for good). */
static void test_overlap(void **state)
{
	struct tsync_instance *a, *b;
	int before, bsize;

	(void)state;
	need_tracefs();
	before = size_now();
	a = with_size(SMALLER(before));
	b = with_size(BIGGER(before));
	bsize = size_now();
	assert_int_equal(tsync_instance_destroy(a), 0);
	assert_int_equal(size_now(), bsize);		/* b still records with it */
	assert_int_equal(tsync_instance_destroy(b), 0);
	assert_int_equal(size_now(), before);

	/* last in, first out too */
	a = with_size(SMALLER(before));
	b = with_size(BIGGER(before));
	assert_int_equal(tsync_instance_destroy(b), 0);
	assert_int_equal(tsync_instance_destroy(a), 0);
	assert_int_equal(size_now(), before);
}

/* A recording killed with the size changed: the next stale cleanup puts
 * the original back (and a recording taking part meanwhile keeps it). */
static void test_killed(void **state)
{
	int before, status;
	pid_t pid;

	(void)state;
	need_tracefs();
	before = size_now();
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		with_size(BIGGER(before));
		kill(getpid(), SIGKILL);	/* nothing given back */
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_not_equal(size_now(), before);
	assert_true(tsync_instance_cleanup_all_stale() >= 0);
	assert_int_equal(size_now(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_killed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
