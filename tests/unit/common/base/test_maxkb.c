// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's -m: the half size as trace-cmd computes it, the data kept
 * compared with a model of trace-cmd's two-file recorder (its
 * trace-recorder.c update_fd() and tracecmd_free_recorder(), one page per
 * write), and the trim on a real file: the blocks before the kept data
 * are given back, the kept bytes read back unchanged, the size stays.
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
#include <sys/stat.h>
#include <cmocka.h>

#include "common/base/maxkb.h"

#define PAGE 4096

static void test_half(void **state)
{
	(void)state;
	/* max = KB / 4 pages, halved, at least one page */
	assert_int_equal(tsync_maxkb_half(100, PAGE), 12 * PAGE);
	assert_int_equal(tsync_maxkb_half(8, PAGE), 1 * PAGE);
	assert_int_equal(tsync_maxkb_half(7, PAGE), 1 * PAGE);
	assert_int_equal(tsync_maxkb_half(1, PAGE), 1 * PAGE);
	assert_int_equal(tsync_maxkb_half(1024, PAGE), 128 * PAGE);
	assert_int_equal(tsync_maxkb_half(100, 8192), 6 * 8192);
	assert_int_equal(tsync_maxkb_half(0, PAGE), 0);
	assert_int_equal(tsync_maxkb_half(100, 0), 0);
	assert_int_equal(tsync_maxkb_half(100, 1000), 0);
	assert_int_equal(tsync_maxkb_keep_from(123456, 0), 0);
}

/* trace-cmd's recorder with -m, one page (numbered) per write: two files,
 * a switch when the current one reaches max/2 pages, the other emptied;
 * at the end the older one, then the current one. */
struct tc_model {
	int file[2][4096];
	int len[2];
	int cur, pages, max;
};

static void tc_write(struct tc_model *m, int page)
{
	m->file[m->cur][m->len[m->cur]++] = page;
	if (++m->pages < m->max)
		return;
	m->pages = 0;
	m->cur = !m->cur;
	m->len[m->cur] = 0;
}

static void test_keep_like_trace_cmd(void **state)
{
	static const uint32_t kbs[] = { 1, 8, 12, 40, 100 };
	struct tc_model *m = calloc(1, sizeof(*m));

	(void)state;
	assert_non_null(m);
	for (size_t k = 0; k < sizeof(kbs) / sizeof(kbs[0]); k++) {
		uint64_t half = tsync_maxkb_half(kbs[k], PAGE);

		memset(m, 0, sizeof(*m));
		m->max = (int)((kbs[k] / 4) >> 1) ? (int)((kbs[k] / 4) >> 1) : 1;
		for (int end = 1; end <= 300; end++) {
			int joined[8192], n = 0;
			uint64_t from;

			tc_write(m, end - 1);
			/* tracecmd_free_recorder(): older file, then current */
			for (int i = 0; i < m->len[!m->cur]; i++)
				joined[n++] = m->file[!m->cur][i];
			for (int i = 0; i < m->len[m->cur]; i++)
				joined[n++] = m->file[m->cur][i];
			from = tsync_maxkb_keep_from((uint64_t)end * PAGE, half);
			assert_int_equal(from % PAGE, 0);
			assert_int_equal(n, end - (int)(from / PAGE));
			for (int i = 0; i < n; i++)
				assert_int_equal(joined[i], (int)(from / PAGE) + i);
			/* never more than -m, at least half of it once written */
			assert_true((uint64_t)n * PAGE <= 2 * half);
			if ((uint64_t)end * PAGE >= half)
				assert_true((uint64_t)n * PAGE >= half);
		}
	}
	free(m);
}

static void test_trim_file(void **state)
{
	char path[] = "/tmp/tsync-maxkb-XXXXXX", page[PAGE], back[PAGE];
	uint64_t half = 8 * PAGE, done = 0, end = 0;
	int fd = mkstemp(path);
	struct stat st0, st1;
	int ret;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	for (int i = 0; i < 64; i++) {
		memset(page, 'a' + i % 26, sizeof(page));
		assert_int_equal(write(fd, page, sizeof(page)), sizeof(page));
		end += PAGE;
		if (i == 20) {	/* a trim on the way: up to the half before */
			ret = tsync_maxkb_trim(fd, end, half, &done);
			if (ret == -EOPNOTSUPP) {
				close(fd);
				skip();
			}
			assert_int_equal(ret, 0);
			assert_int_equal(done, 8 * PAGE);	/* 21 pages: k = 2 */
		}
	}
	assert_int_equal(fstat(fd, &st0), 0);
	assert_int_equal(tsync_maxkb_trim(fd, end, half, &done), 0);
	assert_int_equal(done, 56 * PAGE);	/* 64 pages: k = 8, keep from 7 halves */
	assert_int_equal(tsync_maxkb_trim(fd, end, half, &done), 0);	/* nothing more */
	assert_int_equal(fstat(fd, &st1), 0);
	assert_int_equal(st1.st_size, 64 * PAGE);
	/* the blocks of 56 pages are free again */
	assert_true(st1.st_blocks * 512 <= 8 * PAGE + 4 * PAGE);
	assert_true(st1.st_blocks < st0.st_blocks);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(pread(fd, back, PAGE, (off_t)i * PAGE), PAGE);
		memset(page, i < 56 ? 0 : 'a' + i % 26, sizeof(page));
		assert_memory_equal(back, page, PAGE);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_half),
		cmocka_unit_test(test_keep_like_trace_cmd),
		cmocka_unit_test(test_trim_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
