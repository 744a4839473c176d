// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/tcmd_meta: a synthetic trace.dat v6 metadata stream
 * as trace-cmd's agent sends it (headers, formats, cmdlines, CPU count,
 * options up to option 0, no flyrecord) is read into a tracemeta; every
 * truncation, a version 7 header, a foreign byte order, data after the
 * options and a length past the end are refused with a reason. A wrong
 * saved-cmdlines length, which trace-cmd 3.1.6 sends when saved_cmdlines
 * changes while it copies it, is repaired where the text shows where it
 * ends.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/tracemeta/tracemeta.h"
#include "host/peer/tcmd_meta.h"

static const char HP[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char HE[] = "# compressed entry header\n\ttype_len    :    5 bits\n";
static const char PRINT[] = "name: print\nID: 5\nformat:\n\tfield:unsigned short common_type;"
			    "\toffset:0;\tsize:2;\tsigned:0;\n\nprint fmt: \"x\"\n";
static const char SWITCH[] = "name: sched_switch\nID: 300\nformat:\n\tfield:unsigned short "
			     "common_type;\toffset:0;\tsize:2;\tsigned:0;\n\nprint fmt: \"y\"\n";

struct buf {
	uint8_t b[4096];
	size_t n;
	size_t cpus_end;	/* where the options start */
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void u16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void str(struct buf *b, const char *s) { put(b, s, strlen(s) + 1); }

/* The metadata of a 2-CPU guest, as trace-cmd 3.1.6's agent writes it. */
static void build(struct buf *b, const char *version)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	static const char cmdl[] = "1 init\n42 bash\n";

	memset(b, 0, sizeof(*b));
	put(b, magic, sizeof(magic));
	str(b, version);
	put(b, "\0\10", 2);		/* little endian, long 8 */
	u32(b, 4096);
	str(b, "header_page");
	u64(b, strlen(HP));
	put(b, HP, strlen(HP));
	str(b, "header_event");
	u64(b, strlen(HE));
	put(b, HE, strlen(HE));
	u32(b, 1);
	u64(b, strlen(PRINT));
	put(b, PRINT, strlen(PRINT));
	u32(b, 1);
	str(b, "sched");
	u32(b, 1);
	u64(b, strlen(SWITCH));
	put(b, SWITCH, strlen(SWITCH));
	u32(b, 0);			/* kallsyms */
	u32(b, 0);			/* printk formats */
	u64(b, strlen(cmdl));
	put(b, cmdl, strlen(cmdl));
	u32(b, 2);			/* CPUs */
	b->cpus_end = b->n;
	str(b, "options  ");
	u16(b, 4);			/* TRACECLOCK, as 3.1.6 writes it */
	u32(b, 8);
	put(b, "[local]\n", 8);
	u16(b, 5);			/* UNAME */
	u32(b, 12);
	put(b, "Linux vm 6\0", 12);
	u16(b, 0);
}

/* Sets the saved cmdlines' length field to @n (the text stays). */
static void set_cmdlines_len(struct buf *b, uint64_t n)
{
	memcpy(b->b + b->cpus_end - 4 - strlen("1 init\n42 bash\n") - 8, &n, 8);
}

static int parse(const struct buf *b, size_t len, struct tracemeta **tm, char *err)
{
	uint32_t cpus = 0;

	*tm = NULL;
	return tcmd_meta_parse(b->b, len, 4096, "local", &cpus, tm, err, 300);
}

static void test_good(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	const struct tracedat_meta *m;
	uint32_t cpus = 0;
	char err[300] = "";

	(void)state;
	build(&b, "6");
	assert_int_equal(tcmd_meta_parse(b.b, b.n, 4096, "local", &cpus, &tm, err, sizeof(err)), 0);
	assert_int_equal(cpus, 2);
	m = tracemeta_meta(tm);
	assert_int_equal(m->header_page.len, strlen(HP));
	assert_int_equal(m->nftrace, 1);
	assert_int_equal(m->nsystems, 1);
	assert_string_equal(m->systems[0].name, "sched");
	assert_int_equal(m->cmdlines.len, strlen("1 init\n42 bash\n"));
	assert_string_equal(m->uname, "Linux vm 6");
	assert_non_null(strstr(m->trace_clock, "[local]"));
	assert_int_equal(m->page_size, 4096);
	tracemeta_free(tm);
}

/* Every cut is refused, but the one right after the CPU count (no
 * options block at all, which trace-cmd may send). */
static void test_truncated(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	char err[300];

	(void)state;
	build(&b, "6");
	for (size_t n = 0; n < b.n; n++) {
		int ret = parse(&b, n, &tm, err);

		if (n == b.cpus_end) {
			assert_int_equal(ret, 0);
			tracemeta_free(tm);
			continue;
		}
		if (ret != -EPROTO)
			print_error("cut at %zu of %zu (CPU count ends at %zu) parsed\n", n, b.n,
				    b.cpus_end);
		assert_int_equal(ret, -EPROTO);
		assert_null(tm);
	}
}

static void test_version7(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	char err[300];

	(void)state;
	build(&b, "7");
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
	assert_non_null(strstr(err, "--file-version"));
}

static void test_byte_order(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	char err[300];

	(void)state;
	build(&b, "6");
	b.b[12] = 1;	/* big endian */
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
	assert_non_null(strstr(err, "byte order"));
}

static void test_trailing(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	char err[300];

	(void)state;
	build(&b, "6");
	str(&b, "flyrecord");
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
	assert_non_null(strstr(err, "after the options"));
}

/* A header_page length far past the end. */
static void test_huge_length(void **state)
{
	struct buf b;
	struct tracemeta *tm;
	uint64_t big = UINT64_MAX - 4;
	char err[300];

	(void)state;
	build(&b, "6");
	memcpy(b.b + 18 + 12, &big, 8);
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
	assert_non_null(strstr(err, "header_page"));
}

/* trace-cmd 3.1.6 sends a wrong cmdlines length when saved_cmdlines
 * changes between its two reads: the text is taken up to the CPU count. */
static void test_cmdlines_race(void **state)
{
	static const int64_t delta[] = { 4, -3, 1, -1, 100 };
	size_t real = strlen("1 init\n42 bash\n");
	struct tracemeta *tm;
	struct buf b;
	char err[300];

	(void)state;
	for (size_t i = 0; i < sizeof(delta) / sizeof(delta[0]); i++) {
		build(&b, "6");
		set_cmdlines_len(&b, (uint64_t)((int64_t)real + delta[i]));
		assert_int_equal(parse(&b, b.n, &tm, err), 0);
		assert_int_equal(tracemeta_meta(tm)->cmdlines.len, real);
		tracemeta_free(tm);
		/* the same without options: the text ends at the CPU count */
		assert_int_equal(parse(&b, b.cpus_end, &tm, err), 0);
		assert_int_equal(tracemeta_meta(tm)->cmdlines.len, real);
		tracemeta_free(tm);
	}
	/* but not past a NUL or to a count that is no CPU count */
	build(&b, "6");
	set_cmdlines_len(&b, real + 4);
	b.b[b.cpus_end - 6] = '\0';
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
	build(&b, "6");
	set_cmdlines_len(&b, real + 4);
	memcpy(b.b + b.cpus_end - 4, "\xff\xff\0\0", 4);
	assert_int_equal(parse(&b, b.n, &tm, err), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_version7),
		cmocka_unit_test(test_byte_order),
		cmocka_unit_test(test_trailing),
		cmocka_unit_test(test_huge_length),
		cmocka_unit_test(test_cmdlines_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
