// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/pagecheck: synthetic guest ring-buffer pages, good
 * ones (every event kind, 64- and 32-bit layouts, the missed-events
 * flags) accepted and read back by libtraceevent's kbuffer as trace-cmd
 * would, and each fault refused with a reason that names it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <kbuffer.h>

#include "host/guest/pagecheck.h"

struct pg {
	uint8_t b[4096];
	size_t hdr, len;	/* header size, event bytes so far */
	unsigned int commit_size;
};

/* Starts a page with timestamp @ts and a commit field of @cs bytes. */
static void pg_init(struct pg *p, uint64_t ts, unsigned int cs)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b, &ts, 8);
	p->commit_size = cs;
	p->hdr = 8 + cs;
}

/* Appends an event header and @n bytes of @payload. */
static void pg_ev(struct pg *p, uint32_t type, uint32_t delta, const void *payload, size_t n)
{
	uint32_t h = type | (delta << 5);

	memcpy(p->b + p->hdr + p->len, &h, 4);
	memcpy(p->b + p->hdr + p->len + 4, payload, n);
	p->len += 4 + n;
}

/* Appends an event with a u32 argument (length, extend, stamp). */
static void pg_ev32(struct pg *p, uint32_t type, uint32_t delta, uint32_t arg, size_t extra)
{
	uint8_t buf[64] = { 0 };

	memcpy(buf, &arg, 4);
	pg_ev(p, type, delta, buf, 4 + extra);
}

/* Writes the commit field: the event bytes and @flags. */
static void pg_commit(struct pg *p, uint64_t flags)
{
	uint64_t c = p->len | flags;
	uint32_t c32 = (uint32_t)c;

	if (p->commit_size == 4)
		memcpy(p->b + 8, &c32, 4);
	else
		memcpy(p->b + 8, &c, 8);
}

/* Checks @p with a fresh format; returns page_check()'s result. */
static int check(struct pg *p, char *why, size_t len)
{
	static const char hp32[] = "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n";
	struct page_format f;

	assert_int_equal(page_format_init(&f, 4096, p->commit_size == 4 ? hp32 : NULL,
					  p->commit_size == 4 ? sizeof(hp32) - 1 : 0), 0);
	assert_int_equal(f.commit_size, p->commit_size);
	return page_check(p->b, &f, why, len);
}

/* Counts the data events kbuffer reads from @p; checks time order. */
static int kbuffer_count(struct pg *p)
{
	struct kbuffer *kb = kbuffer_alloc(p->commit_size == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8,
					   KBUFFER_ENDIAN_SAME_AS_HOST);
	unsigned long long ts, last = 0;
	int n = 0;

	assert_non_null(kb);
	assert_true(kbuffer_load_subbuffer(kb, p->b) >= 0);
	for (void *ev = kbuffer_read_event(kb, &ts); ev; ev = kbuffer_next_event(kb, &ts)) {
		assert_true(ts >= last);
		last = ts;
		n++;
	}
	kbuffer_free(kb);
	return n;
}

/* A page with every kind of event is accepted and reads back whole. */
static void test_good(void **state)
{
	static const uint8_t d[16] = { 1, 2, 3 };
	char why[200] = "";
	struct pg p;

	(void)state;
	for (unsigned int cs = 4; cs <= 8; cs += 4) {
		pg_init(&p, 1000000, cs);
		pg_ev(&p, 4, 10, d, 16);		/* small data event */
		pg_ev32(&p, 30, 5, 3, 0);		/* time extend */
		pg_ev32(&p, 0, 7, 24, 20);		/* long data event */
		pg_ev32(&p, 31, 9, 4, 0);		/* absolute stamp, later */
		pg_ev32(&p, 29, 4, 12, 8);		/* discarded event */
		pg_ev(&p, 1, 0, d, 4);
		pg_commit(&p, 0);
		if (check(&p, why, sizeof(why)))
			fail_msg("commit size %u: %s", cs, why);
		assert_int_equal(kbuffer_count(&p), 3);
	}
	/* an empty page; a full one; missed events, counted after the data */
	pg_init(&p, 5, 8);
	pg_commit(&p, 0);
	assert_int_equal(check(&p, why, sizeof(why)), 0);
	pg_init(&p, 5, 8);
	while (p.len + 20 <= 4096 - 16 - 8)
		pg_ev(&p, 4, 1, d, 16);
	pg_commit(&p, (1ULL << 31) | (1ULL << 30));
	assert_int_equal(check(&p, why, sizeof(why)), 0);
	/* a page of a calendar clock (tai in 2026: past 2^59 ns), with a
	 * time extend: read as kbuffer reads it */
	pg_init(&p, 0x18ed53af569fd80bULL, 8);
	pg_ev(&p, 4, 10, d, 16);
	pg_ev32(&p, 30, 5, 3, 0);
	pg_ev(&p, 4, 1, d, 16);
	pg_commit(&p, 0);
	if (check(&p, why, sizeof(why)))
		fail_msg("a tai page: %s", why);
	assert_int_equal(kbuffer_count(&p), 2);
	/* the kernel's end-of-page padding: to the end of the page */
	pg_init(&p, 5, 8);
	pg_ev(&p, 4, 1, d, 16);
	pg_ev32(&p, 29, 1, 4096 - 16 - 20 - 4, 0);
	p.len = 4096 - 16;
	pg_commit(&p, 0);
	assert_int_equal(check(&p, why, sizeof(why)), 0);
	assert_int_equal(kbuffer_count(&p), 1);
}

/* page_check_count(): the data events kbuffer reads, and the missed
 * events the header flags (the stored count, or 1 without it). */
static void test_counts(void **state)
{
	static const uint8_t d[16] = { 1, 2, 3 };
	struct page_format f;
	struct page_counts c;
	uint64_t seven = 7;
	char why[200] = "";
	struct pg p;

	(void)state;
	assert_int_equal(page_format_init(&f, 4096, NULL, 0), 0);
	pg_init(&p, 1000000, 8);
	pg_ev(&p, 4, 10, d, 16);		/* data */
	pg_ev32(&p, 30, 5, 3, 0);		/* time extend: not an event */
	pg_ev32(&p, 0, 7, 24, 20);		/* long data */
	pg_ev32(&p, 29, 4, 12, 8);		/* discarded: not an event */
	pg_ev(&p, 1, 0, d, 4);			/* data */
	pg_commit(&p, 0);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), 0);
	assert_int_equal(c.events, 3);
	assert_int_equal(c.events, kbuffer_count(&p));
	assert_int_equal(c.missed, 0);
	pg_commit(&p, 1ULL << 31);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), 0);
	assert_int_equal(c.missed, 1);
	memcpy(p.b + p.hdr + p.len, &seven, sizeof(seven));
	pg_commit(&p, (1ULL << 31) | (1ULL << 30));
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), 0);
	assert_int_equal(c.events, 3);
	assert_int_equal(c.missed, 7);
	assert_false(c.missed_min);
	/* as a 64-bit kernel writes it: its int flag (1 << 31) sign-extended
	 * into the long commit field (seen from a guest that lost events) */
	pg_commit(&p, 0xffffffff80000000ULL | (1ULL << 30));
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), 0);
	assert_int_equal(c.missed, 7);
	pg_commit(&p, 0xffffffff80000000ULL);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), 0);
	assert_int_equal(c.missed, 1);
	assert_true(c.missed_min);
	assert_int_equal(kbuffer_count(&p), 3);
	/* other high bits, or the high bits without the flag, stay refused */
	pg_commit(&p, 0xfffffffe80000000ULL);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), -EBADMSG);
	pg_commit(&p, 0xffffffff00000000ULL);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), -EBADMSG);
	/* a bad page counts nothing */
	p.len = 4096;
	pg_commit(&p, 0);
	assert_int_equal(page_check_count(p.b, &f, &c, why, sizeof(why)), -EBADMSG);
	assert_int_equal(c.events, 0);
	assert_int_equal(c.missed, 0);
}

/* Each fault is refused with its reason. */
static void test_bad(void **state)
{
	static const uint8_t d[16];
	char why[200];
	struct pg p;

	(void)state;
#define BAD(needle) do {							\
		why[0] = 0;							\
		assert_int_equal(check(&p, why, sizeof(why)), -EBADMSG);	\
		if (!strstr(why, needle))					\
			fail_msg("'%s' does not say '%s'", why, needle);	\
	} while (0)
	/* commit length past the page (the review's segfault in kbuffer) */
	pg_init(&p, 5, 8);
	pg_ev(&p, 4, 1, d, 16);
	p.len = 4096;
	pg_commit(&p, 0);
	BAD("does not fit");
	/* missed count stored, but no room left for it */
	pg_init(&p, 5, 8);
	p.len = 4096 - 16 - 4;
	pg_commit(&p, 1ULL << 30);
	BAD("does not fit");
	/* unknown flag bits */
	pg_init(&p, 5, 8);
	pg_commit(&p, 1ULL << 40);
	BAD("unknown flag");
	/* an event running past the commit length */
	pg_init(&p, 5, 8);
	pg_ev(&p, 4, 1, d, 16);
	p.len -= 4;
	pg_commit(&p, 0);
	BAD("runs past");
	/* a length field past it */
	pg_init(&p, 5, 8);
	pg_ev(&p, 0, 1, d, 0);
	pg_commit(&p, 0);
	BAD("length field crosses");
	/* a data length below its own size, or huge */
	pg_init(&p, 5, 8);
	pg_ev32(&p, 0, 1, 2, 0);
	pg_commit(&p, 0);
	BAD("bad length 2");
	pg_init(&p, 5, 8);
	pg_ev32(&p, 0, 1, 0xfffffff0u, 0);
	pg_commit(&p, 0);
	BAD("bad length");
	/* an absolute timestamp before the page's */
	pg_init(&p, 1ULL << 40, 8);
	pg_ev(&p, 4, 1, d, 16);
	pg_ev32(&p, 31, 0, 1, 0);
	pg_commit(&p, 0);
	BAD("time goes back");
	/* an absolute timestamp in a page past 2^59 ns, which readers
	 * merge differently */
	pg_init(&p, 0x18ed53af569fd80bULL, 8);
	pg_ev(&p, 4, 1, d, 16);
	pg_ev32(&p, 31, 0, 1, 0);
	pg_commit(&p, 0);
	BAD("absolute timestamp in a page past 2^59 ns");
	/* a padding without its length field, or with a length that would
	 * send kbuffer backwards (fuzz_pagecheck found kbuffer reads it even
	 * with delta 0) */
	pg_init(&p, 5, 8);
	pg_ev(&p, 4, 1, d, 16);
	pg_ev(&p, 29, 0, d, 0);
	pg_commit(&p, 0);
	BAD("length field crosses");
	pg_init(&p, 5, 8);
	pg_ev32(&p, 29, 0, 0xffffffffu, 0);
	pg_commit(&p, 0);
	BAD("bad length");
	/* an unaligned padding length (kbuffer would go on mid-event) */
	pg_init(&p, 5, 8);
	pg_ev32(&p, 29, 1, 58, 60);
	pg_commit(&p, 0);
	BAD("bad length 58");
	/* a commit length that is not a whole event header */
	pg_init(&p, 5, 8);
	pg_ev(&p, 4, 1, d, 16);
	p.len += 2;
	pg_commit(&p, 0);
	BAD("crosses the commit length");
#undef BAD
}

/* Page sizes must be powers of two in range; header_page sets the long. */
static void test_format(void **state)
{
	struct page_format f;

	(void)state;
	assert_int_equal(page_format_init(&f, 4000, NULL, 0), -EINVAL);
	assert_int_equal(page_format_init(&f, 32, NULL, 0), -EINVAL);
	assert_int_equal(page_format_init(&f, 2u << 20, NULL, 0), -EINVAL);
	assert_int_equal(page_format_init(&f, 8192, "garbage", 7), 0);
	assert_int_equal(f.commit_size, 8);
	assert_int_equal(f.page_size, 8192);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
