// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/guest_rx: a guest's per-CPU receivers fed over
 * socketpairs with synthetic ring-buffer pages. Good pages land in the
 * file in order; a bad page stops the whole guest (its other CPUs are
 * cut), keeping the pages before it; the guest's cap counts all its CPUs;
 * a stream ending inside a page drops the partial page; a stop keeps what
 * was already sent. Each wait is bounded by rx_join()'s deadline.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "common/base/timeutil.h"
#include "host/guest/guest_rx.h"

#define PS 4096

/* Fills @page with @n small events after timestamp @ts (64-bit layout). */
static void good_page(uint8_t *page, uint64_t ts, int n)
{
	uint64_t commit = 0;

	memset(page, 0, PS);
	memcpy(page, &ts, 8);
	for (int i = 0; i < n; i++) {
		uint32_t hdr = 4u | (10u << 5);

		memcpy(page + 16 + commit, &hdr, 4);
		page[16 + commit + 4] = (uint8_t)i;
		commit += 20;
	}
	memcpy(page + 8, &commit, 8);
}

struct rig {
	struct rx_group *grp;
	struct guest_rx *rx[2];
	int peer[2];		/* the test's ends: the "agent" */
};

/* Starts two receivers (CPUs 0 and 1) under a cap of @max bytes. */
static void rig_start(struct rig *r, uint64_t max)
{
	struct page_format f;
	char err[200];

	assert_int_equal(page_format_init(&f, PS, NULL, 0), 0);
	assert_int_equal(rx_group_new(&f, max, &r->grp), 0);
	for (int i = 0; i < 2; i++) {
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		r->peer[i] = sv[1];
		assert_int_equal(rx_start(r->grp, (uint32_t)i, NULL, sv[0], "/tmp", &r->rx[i],
					  err, sizeof(err)), 0);
	}
}

/* Sends @n good pages on CPU @cpu's stream, timestamps from @ts; with
 * @may_stop the receiver may have stopped and closed meanwhile (EPIPE). */
static void send_pages(struct rig *r, int cpu, int n, uint64_t ts, bool may_stop)
{
	uint8_t page[PS];

	for (int i = 0; i < n; i++) {
		ssize_t w;

		good_page(page, ts + (uint64_t)i * 1000, 3);
		w = send(r->peer[cpu], page, PS, MSG_NOSIGNAL);
		if (w < 0 && may_stop && errno == EPIPE)
			return;
		assert_int_equal(w, PS);
	}
}

/* Sends @n good pages to a receiver that is running. */
static void send_good(struct rig *r, int cpu, int n, uint64_t ts)
{
	send_pages(r, cpu, n, ts, false);
}

/* Returns the size of CPU @cpu's file. */
static off_t file_size(struct rig *r, int cpu)
{
	struct stat st;

	assert_int_equal(fstat(rx_file(r->rx[cpu]), &st), 0);
	return st.st_size;
}

/* Frees the rig. */
static void rig_free(struct rig *r)
{
	for (int i = 0; i < 2; i++) {
		rx_free(r->rx[i]);
		close(r->peer[i]);
	}
	rx_group_free(r->grp);
}

/* Good pages, then EOF: all written, in order, RX_EOF. */
static void test_good_eof(void **state)
{
	struct rig r;
	uint8_t page[PS], want[PS];

	(void)state;
	rig_start(&r, 0);
	send_good(&r, 0, 5, 1000000);
	send_good(&r, 1, 2, 1000000);
	shutdown(r.peer[0], SHUT_WR);
	shutdown(r.peer[1], SHUT_WR);
	assert_int_equal(rx_join(r.rx[0], tsync_deadline_ms(10000)), RX_EOF);
	assert_int_equal(rx_join(r.rx[1], tsync_deadline_ms(10000)), RX_EOF);
	assert_int_equal(file_size(&r, 0), 5 * PS);
	assert_int_equal(file_size(&r, 1), 2 * PS);
	assert_int_equal(rx_bytes(r.rx[0]), 5 * PS);
	assert_int_equal(pread(rx_file(r.rx[0]), page, PS, 4 * PS), PS);
	good_page(want, 1000000 + 4000, 3);
	assert_memory_equal(page, want, PS);
	assert_string_equal(rx_error(r.rx[0]), "");
	rig_free(&r);
}

/* A bad page on CPU 1 stops the guest: CPU 1 fails with the page named,
 * CPU 0 (still streaming) is cut; pages before the bad one are kept. */
static void test_bad_page_stops_guest(void **state)
{
	struct rig r;
	uint8_t page[PS];

	(void)state;
	rig_start(&r, 0);
	send_good(&r, 0, 3, 5000);
	send_good(&r, 1, 2, 5000);
	good_page(page, 9000, 3);
	memset(page + 8, 0xff, 8);		/* commit: flags and length garbage */
	assert_int_equal(write(r.peer[1], page, PS), PS);
	assert_int_equal(rx_join(r.rx[1], tsync_deadline_ms(10000)), -EBADMSG);
	assert_non_null(strstr(rx_error(r.rx[1]), "CPU 1 page 2"));
	assert_int_equal(file_size(&r, 1), 2 * PS);
	/* the other CPU's stream is still open: the group stop cuts it */
	assert_int_equal(rx_join(r.rx[0], tsync_deadline_ms(10000)), RX_CUT);
	assert_int_equal(file_size(&r, 0), 3 * PS);
	rig_free(&r);
}

/* The cap counts the pages of all the guest's CPUs. */
static void test_cap(void **state)
{
	struct rig r;
	int how0, how1;

	(void)state;
	rig_start(&r, 6 * PS);
	/* the first receiver over the cap stops the guest and closes its
	 * streams: the later sends may find them closed */
	send_pages(&r, 0, 4, 1, true);
	send_pages(&r, 1, 4, 1, true);
	how0 = rx_join(r.rx[0], tsync_deadline_ms(10000));
	how1 = rx_join(r.rx[1], tsync_deadline_ms(10000));
	/* one of them went over; the other was cut or went over too */
	assert_true(how0 == -EFBIG || how1 == -EFBIG);
	assert_true(how0 == -EFBIG || how0 == RX_CUT);
	assert_true(how1 == -EFBIG || how1 == RX_CUT);
	assert_true(file_size(&r, 0) + file_size(&r, 1) <= 6 * PS);
	assert_non_null(strstr(rx_error(r.rx[how0 == -EFBIG ? 0 : 1]), "cap of 0 MiB"));
	rig_free(&r);
}

/* A stream ending inside a page: the whole pages are kept, the partial
 * one is dropped and said so. */
static void test_partial_page(void **state)
{
	struct rig r;
	uint8_t page[PS];

	(void)state;
	rig_start(&r, 0);
	send_good(&r, 0, 2, 1);
	good_page(page, 99999, 3);
	assert_int_equal(write(r.peer[0], page, 100), 100);
	shutdown(r.peer[0], SHUT_WR);
	assert_int_equal(rx_join(r.rx[0], tsync_deadline_ms(10000)), RX_EOF);
	assert_int_equal(file_size(&r, 0), 2 * PS);
	assert_non_null(strstr(rx_error(r.rx[0]), "100 bytes dropped"));
	/* CPU 1 never sent anything: the deadline cuts it */
	assert_int_equal(rx_join(r.rx[1], tsync_deadline_ms(50)), RX_CUT);
	assert_int_equal(file_size(&r, 1), 0);
	rig_free(&r);
}

/* rx_drop_data() empties the file (space given back for the host). */
static void test_drop(void **state)
{
	struct rig r;

	(void)state;
	rig_start(&r, 0);
	send_good(&r, 0, 3, 1);
	shutdown(r.peer[0], SHUT_WR);
	assert_int_equal(rx_join(r.rx[0], tsync_deadline_ms(10000)), RX_EOF);
	rx_drop_data(r.rx[0]);
	assert_int_equal(file_size(&r, 0), 0);
	assert_int_equal(rx_bytes(r.rx[0]), 0);
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_eof),
		cmocka_unit_test(test_bad_page_stops_guest),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_partial_page),
		cmocka_unit_test(test_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
