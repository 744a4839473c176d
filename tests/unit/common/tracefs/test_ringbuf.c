// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tests of the ring buffer's page size (common/tracefs/ringbuf.c): known
 * answers for header_page texts of 64- and 32-bit kernels and of larger
 * sub-buffers, texts that give no usable size, and a real instance: a
 * fresh one has the system page size, and one whose sub-buffer was made
 * 8 KiB (kernels with buffer_subbuf_size_kb) has 8192, as the kernel's
 * own file says.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <tracefs.h>

#include "common/tracefs/ringbuf.h"
#include "tests/unit/tmp_fixture.h"

/* A header_page as the kernel prints it, for a data field at @off of @size. */
static void header_page(char *buf, size_t len, int commit, int off, int size)
{
	snprintf(buf, len,
		 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		 "\tfield: local_t commit;\toffset:8;\tsize:%d;\tsigned:1;\n"
		 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		 "\tfield: char data;\toffset:%d;\tsize:%d;\tsigned:0;\n",
		 commit, off, size);
}

static int size_of(const char *hp)
{
	return tsync_ringbuf_page_size_of(hp, strlen(hp));
}

static void test_known(void **state)
{
	char hp[512];
	size_t len;

	(void)state;
	header_page(hp, sizeof(hp), 8, 16, 4080);	/* x86_64, 4 KiB pages */
	assert_int_equal(size_of(hp), 4096);
	header_page(hp, sizeof(hp), 8, 16, 8176);	/* 8 KiB sub-buffers */
	assert_int_equal(size_of(hp), 8192);
	header_page(hp, sizeof(hp), 8, 16, 65520);	/* 64 KiB (arm64, ppc64) */
	assert_int_equal(size_of(hp), 65536);
	header_page(hp, sizeof(hp), 4, 12, 4084);	/* 32-bit commit field */
	assert_int_equal(size_of(hp), 4096);
	/* the length bounds the text: cut after "size:40", the data field
	 * reads 40 bytes (56 in all: no page size), not 4080 */
	header_page(hp, sizeof(hp), 8, 16, 4080);
	len = (size_t)(strstr(hp, "size:4080") - hp) + strlen("size:40");
	assert_int_equal(tsync_ringbuf_page_size_of(hp, len), -EINVAL);
	assert_int_equal(tsync_ringbuf_page_size_of(hp, strlen(hp)), 4096);
}

static void test_unusable(void **state)
{
	char hp[512];

	(void)state;
	assert_int_equal(tsync_ringbuf_page_size_of(NULL, 10), -EINVAL);
	assert_int_equal(tsync_ringbuf_page_size_of("x", 0), -EINVAL);
	header_page(hp, sizeof(hp), 8, 16, 4000);	/* not a power of two */
	assert_int_equal(size_of(hp), -EINVAL);
	assert_int_equal(size_of("no fields here\n"), -EINVAL);
}

/* A fresh private instance, removed by the teardown whatever happened. */
static int setup(void **state)
{
	char name[64];

	snprintf(name, sizeof(name), "tsync-test-ringbuf-%d", getpid());
	*state = tracefs_instance_create(name);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	fixture_instance_drop(*state);
	return 0;
}

static void test_instance(void **state)
{
	struct tracefs_instance *inst = *state;

	assert_int_equal(tsync_ringbuf_page_size(inst), getpagesize());
	assert_true(tsync_ringbuf_page_size(NULL) >= getpagesize());
	if (!tracefs_file_exists(inst, "buffer_subbuf_size_kb") || getpagesize() >= 8192) {
		printf("no buffer_subbuf_size_kb: the page size is fixed here\n");
		return;
	}
	/* a kernel may refuse it (6.18.44-fc here: EPERM): probed, not assumed */
	errno = 0;
	if (tracefs_instance_file_write(inst, "buffer_subbuf_size_kb", "8") <= 0) {
		printf("buffer_subbuf_size_kb refused (%s): the page size is fixed here\n",
		       strerror(errno));
		return;
	}
	assert_int_equal(tsync_ringbuf_page_size(inst), 8192);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_unusable),
	};
	const struct CMUnitTest real[] = {
		cmocka_unit_test_setup_teardown(test_instance, setup, teardown),
	};
	int ret = cmocka_run_group_tests(pure, NULL, NULL);

	if (access("/sys/kernel/tracing/instances", W_OK)) {
		fprintf(stderr, "tracefs instances not writable: real instance test skipped\n");
		return ret;
	}
	return ret | cmocka_run_group_tests(real, NULL, NULL);
}
