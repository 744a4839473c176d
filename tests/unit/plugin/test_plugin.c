// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plugin_tsync.so tests: the real plugin, loaded by libtraceevent's own
 * tep_load_plugins() from $B (TRACEEVENT_PLUGIN_DIR), on handles that parsed
 * this kernel's real header_page and ftrace formats. Records are laid out as
 * the kernel lays out a raw_data event (common fields, id, buf), in exactly
 * malloc'd buffers so ASan/valgrind see any read past them, and formatted
 * with tep_print_event() as trace-cmd report does. Expected text is exact;
 * foreign and malformed records are also compared with a handle that has
 * the same system plugins but not ours.
 */
#include <dirent.h>
#include <link.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "proto/tsync_record.h"

#define TRACING "/sys/kernel/tracing"

/* One tep handle and what is needed to make records for it. */
struct th {
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	bool be;		/* file byte order is big-endian */
	int raw_id;		/* ftrace:raw_data event id */
	int type_off, type_size;	/* common_type */
	int id_off;		/* raw_data "id": where a payload starts */
};

enum {
	H_TSYNC = 1 << 0,	/* load plugin_tsync.so from $B */
	H_NOSYS = 1 << 1,	/* skip the system plugin directory */
	H_LOAD_FIRST = 1 << 2,	/* load plugins before parsing (trace-cmd) */
	H_BE = 1 << 3,		/* big-endian file */
};

static char plugin_dir[PATH_MAX];
static char home_dir[64];
static bool have_function_plugin;
static bool have_sys_tsync;	/* `make install` put a copy in the system dir */

/* Reads a whole file into a malloc'd NUL-terminated buffer (fails the test
 * if it cannot). Returns the buffer, its length in *len. */
static char *slurp(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	size_t r;

	assert_non_null(buf);
	if (!f) {
		free(buf);
		fail_msg("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			char *bigger = realloc(buf, cap * 2);

			assert_non_null(bigger);
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Parses the real header_page and ftrace formats into @h->tep. */
static void parse_formats(struct th *h)
{
	static const char *const events[] = { "raw_data", "print" };
	struct tep_format_field *f;
	struct tep_event *ev;
	char path[128];
	size_t len, i;
	char *buf;

	buf = slurp(TRACING "/events/header_page", &len);
	assert_int_equal(tep_parse_header_page(h->tep, buf, len, sizeof(long)), 0);
	free(buf);
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), TRACING "/events/ftrace/%s/format",
			 events[i]);
		buf = slurp(path, &len);
		assert_int_equal(tep_parse_event(h->tep, buf, len, "ftrace"), 0);
		free(buf);
	}
	ev = tep_find_event_by_name(h->tep, "ftrace", "raw_data");
	assert_non_null(ev);
	h->raw_id = ev->id;
	f = tep_find_common_field(ev, "common_type");
	assert_non_null(f);
	h->type_off = f->offset;
	h->type_size = f->size;
	f = tep_find_field(ev, "id");
	assert_non_null(f);
	assert_int_equal(f->size, 4);
	h->id_off = f->offset;
	f = tep_find_field(ev, "buf");
	assert_non_null(f);
	assert_int_equal(f->offset, h->id_off + 4);
}

/* Makes a handle as described by @flags (H_*). */
static void th_open(struct th *h, int flags)
{
	struct trace_seq s;

	memset(h, 0, sizeof(*h));
	if (have_sys_tsync && !(flags & (H_TSYNC | H_NOSYS))) {
		print_message("plugin_tsync.so is installed in the system plugin "
			      "directory: no handle without it possible\n");
		skip();
	}
	if (flags & H_TSYNC)
		assert_int_equal(setenv("TRACEEVENT_PLUGIN_DIR", plugin_dir, 1), 0);
	else
		assert_int_equal(unsetenv("TRACEEVENT_PLUGIN_DIR"), 0);
	h->tep = tep_alloc();
	assert_non_null(h->tep);
	h->be = flags & H_BE;
	tep_set_file_bigendian(h->tep, h->be ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(h->tep, sizeof(long));
	tep_set_page_size(h->tep, 4096);
	if (flags & H_NOSYS)
		tep_set_flag(h->tep, TEP_DISABLE_SYS_PLUGINS);
	if (!(flags & H_LOAD_FIRST))
		parse_formats(h);
	h->plugins = tep_load_plugins(h->tep);
	if (flags & H_LOAD_FIRST)
		parse_formats(h);

	/* Make sure the plugin under test is (or is not) the one loaded. */
	trace_seq_init(&s);
	tep_print_plugins(&s, "", "\n", h->plugins);
	trace_seq_terminate(&s);
	if (flags & H_TSYNC)
		assert_non_null(strstr(s.buffer, "/plugin_tsync.so\n"));
	else
		assert_null(strstr(s.buffer, "plugin_tsync.so"));
	trace_seq_destroy(&s);
}

/* Unloads the plugins and frees the handle. */
static void th_close(struct th *h)
{
	tep_unload_plugins(h->plugins, h->tep);
	tep_free(h->tep);
	h->tep = NULL;
}

/* Stores the low @size bytes of @v at @p in the handle's byte order. */
static void put(const struct th *h, unsigned char *p, uint64_t v, int size)
{
	int i;

	for (i = 0; i < size; i++) {
		int shift = h->be ? 8 * (size - 1 - i) : 8 * i;

		p[i] = (unsigned char)(v >> shift);
	}
}

/*
 * Formats a raw_data event whose bytes from the id field on are @payload
 * (@len bytes, may be fewer than the id's 4) the way trace-cmd report prints
 * the event's info. Returns a malloc'd string.
 */
static char *fmt_raw(const struct th *h, const void *payload, size_t len)
{
	size_t size = h->id_off + len;
	unsigned char *data = calloc(1, size);
	struct tep_record rec;
	struct trace_seq s;
	char *out;

	assert_non_null(data);
	put(h, data + h->type_off, h->raw_id, h->type_size);
	memcpy(data + h->id_off, payload, len);
	memset(&rec, 0, sizeof(rec));
	rec.data = data;
	rec.size = size;
	rec.record_size = size;
	rec.cpu = 0;
	rec.ts = 1000;

	trace_seq_init(&s);
	tep_print_event(h->tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	out = strdup(s.buffer);
	assert_non_null(out);
	trace_seq_destroy(&s);
	free(data);
	return out;
}

/* Asserts that @payload formats to exactly @want on @h. */
static void expect(const struct th *h, const void *payload, size_t len,
		   const char *want)
{
	char *got = fmt_raw(h, payload, len);

	assert_string_equal(got, want);
	free(got);
}

/* Asserts that @payload formats the same on @a and @b; returns the text. */
static char *expect_same(const struct th *a, const struct th *b,
			 const void *payload, size_t len)
{
	char *ga = fmt_raw(a, payload, len);
	char *gb = fmt_raw(b, payload, len);

	assert_string_equal(ga, gb);
	free(gb);
	return ga;
}

/* Writes a tsync header at @p. */
static void put_hdr(const struct th *h, unsigned char *p, uint32_t magic,
		    uint8_t version, uint8_t type, uint16_t len)
{
	put(h, p + offsetof(struct tsync_rec_hdr, id), TSYNC_RAW_ID, 4);
	put(h, p + offsetof(struct tsync_rec_hdr, magic), magic, 4);
	put(h, p + offsetof(struct tsync_rec_hdr, version), version, 1);
	put(h, p + offsetof(struct tsync_rec_hdr, type), type, 1);
	put(h, p + offsetof(struct tsync_rec_hdr, len), len, 2);
}

/* Writes a valid round record at @p (sizeof(struct tsync_rec_round)). */
static void put_round(const struct th *h, unsigned char *p, uint32_t round,
		      uint32_t cpu, const char *peer, size_t peer_len,
		      int64_t off, uint64_t err, uint64_t delay, uint32_t used,
		      uint32_t sent)
{
	memset(p, 0, sizeof(struct tsync_rec_round));
	put_hdr(h, p, TSYNC_REC_MAGIC, TSYNC_REC_VERSION, TSYNC_REC_ROUND,
		sizeof(struct tsync_rec_round));
	put(h, p + offsetof(struct tsync_rec_round, round), round, 4);
	put(h, p + offsetof(struct tsync_rec_round, cpu), cpu, 4);
	put(h, p + offsetof(struct tsync_rec_round, offset_ns), (uint64_t)off, 8);
	put(h, p + offsetof(struct tsync_rec_round, error_ns), err, 8);
	put(h, p + offsetof(struct tsync_rec_round, delay_ns), delay, 8);
	put(h, p + offsetof(struct tsync_rec_round, used), used, 4);
	put(h, p + offsetof(struct tsync_rec_round, sent), sent, 4);
	memcpy(p + offsetof(struct tsync_rec_round, peer), peer, peer_len);
}

/* Writes a valid clock record at @p (sizeof(struct tsync_rec_clock)):
 * texts as given (NUL-padded; a full-length one unterminated). */
static void put_clock(const struct th *h, unsigned char *p, const char *peer, const char *daemon,
		      uint8_t synced, int32_t status, int64_t off, uint64_t bound,
		      uint16_t stratum, const char *master, const char *detail)
{
	memset(p, 0, sizeof(struct tsync_rec_clock));
	put_hdr(h, p, TSYNC_REC_MAGIC, TSYNC_REC_VERSION, TSYNC_REC_CLOCK,
		sizeof(struct tsync_rec_clock));
	put(h, p + offsetof(struct tsync_rec_clock, synced), synced, 1);
	put(h, p + offsetof(struct tsync_rec_clock, stratum), stratum, 2);
	put(h, p + offsetof(struct tsync_rec_clock, status), (uint32_t)status, 4);
	put(h, p + offsetof(struct tsync_rec_clock, offset_ns), (uint64_t)off, 8);
	put(h, p + offsetof(struct tsync_rec_clock, bound_ns), bound, 8);
	memcpy(p + offsetof(struct tsync_rec_clock, peer), peer,
	       strnlen(peer, TSYNC_REC_PEER_MAX));
	memcpy(p + offsetof(struct tsync_rec_clock, daemon), daemon,
	       strnlen(daemon, TSYNC_REC_DAEMON_MAX));
	memcpy(p + offsetof(struct tsync_rec_clock, master), master,
	       strnlen(master, TSYNC_REC_TEXT_MAX));
	memcpy(p + offsetof(struct tsync_rec_clock, detail), detail,
	       strnlen(detail, TSYNC_REC_TEXT_MAX));
}

/* Writes a valid probe record at @p (sizeof(struct tsync_rec_probe)). */
static void put_probe(const struct th *h, unsigned char *p, uint32_t round,
		      uint32_t seq, uint32_t cpu, uint8_t dir)
{
	memset(p, 0, sizeof(struct tsync_rec_probe));
	put_hdr(h, p, TSYNC_REC_MAGIC, TSYNC_REC_VERSION, TSYNC_REC_PROBE,
		sizeof(struct tsync_rec_probe));
	put(h, p + offsetof(struct tsync_rec_probe, round), round, 4);
	put(h, p + offsetof(struct tsync_rec_probe, seq), seq, 4);
	put(h, p + offsetof(struct tsync_rec_probe, cpu), cpu, 4);
	put(h, p + offsetof(struct tsync_rec_probe, dir), dir, 1);
}

/*
 * What Debian's plugin_function.so prints for a raw_data payload of @len
 * (>= 4) bytes on a little-endian, 8-byte-long handle: "# <id hex>" then
 * every byte after the id. Returns a malloc'd string.
 */
static char *function_text(const unsigned char *p, size_t len)
{
	char *out = malloc(32 + 3 * len);
	size_t i, n;

	assert_non_null(out);
	n = sprintf(out, "# %x", (unsigned)p[0] | (unsigned)p[1] << 8 |
		    (unsigned)p[2] << 16 | (unsigned)p[3] << 24);
	for (i = 4; i < len; i++)
		n += sprintf(out + n, " %02x", p[i]);
	return out;
}

static const char round_text[] = "tsync round 12 cpu 1 peer g offset "
	"-12345678901 ns err 180 ns delay 5200 ns used 33/339";

/* A round record prints in words, in both plugin load orders. */
static void test_round(void **state)
{
	unsigned char r[sizeof(struct tsync_rec_round)];
	const int orders[] = { 0, H_LOAD_FIRST };
	struct th h;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		th_open(&h, H_TSYNC | orders[i]);
		put_round(&h, r, 12, 1, "g", 1, -12345678901LL, 180, 5200, 33, 339);
		expect(&h, r, sizeof(r), round_text);
		th_close(&h);
	}
}

/* A clock record prints in words on both byte orders: the daemon's
 * state, an unknown bound, a read that failed, texts with spaces (kept in
 * the detail), control bytes as '?', a 64-byte master with no NUL; one
 * byte short it is someone else's record. */
static void test_clock(void **state)
{
	unsigned char c[sizeof(struct tsync_rec_clock) + 4];
	const int ends[] = { 0, H_BE };
	char master[TSYNC_REC_TEXT_MAX + 1], want[256];
	struct th h;
	char *got;

	(void)state;
	memset(master, 'm', TSYNC_REC_TEXT_MAX);
	master[TSYNC_REC_TEXT_MAX] = '\0';
	for (size_t i = 0; i < 2; i++) {
		th_open(&h, H_TSYNC | ends[i]);
		put_clock(&h, c, "g1", "ptp4l", 1, 0, -42, 1250, 1, "001122.fffe.334455",
			  "slave, port 1 SLAVE");
		expect(&h, c, sizeof(struct tsync_rec_clock),
		       "tsync clock peer g1 ptp4l synchronized offset -42 ns bound 1250 ns "
		       "stratum 1 master 001122.fffe.334455 (slave, port 1 SLAVE)");
		put_clock(&h, c, "host", "chrony", 0, -110, 0, TSYNC_REC_BOUND_UNKNOWN, 0,
			  "", "Not\tsynchronised");
		expect(&h, c, sizeof(struct tsync_rec_clock),
		       "tsync clock peer host chrony not synchronized (not read: error 110) "
		       "offset 0 ns bound unknown stratum 0 master - (Not?synchronised)");
		put_clock(&h, c, "h", "chrony", 1, 0, 7, 9, 3, master, "Normal");
		snprintf(want, sizeof(want), "tsync clock peer h chrony synchronized offset 7 ns "
			 "bound 9 ns stratum 3 master %s (Normal)", master);
		expect(&h, c, sizeof(c), want);		/* padded by the ring buffer */
		got = fmt_raw(&h, c, sizeof(struct tsync_rec_clock) - 1);
		assert_null(strstr(got, "tsync clock"));
		free(got);
		th_close(&h);
	}
}

/* The ring buffer pads events to 4 bytes: extra bytes after a record are
 * ignored. Extreme values print in full. */
static void test_round_padding_and_limits(void **state)
{
	unsigned char r[sizeof(struct tsync_rec_round) + 4];
	struct th h;

	(void)state;
	th_open(&h, H_TSYNC);
	memset(r, 0xee, sizeof(r));
	put_round(&h, r, 12, 1, "g", 1, -12345678901LL, 180, 5200, 33, 339);
	expect(&h, r, sizeof(r), round_text);

	put_round(&h, r, UINT32_MAX, UINT32_MAX, "host", 4, INT64_MIN,
		  UINT64_MAX, UINT64_MAX, UINT32_MAX, 0);
	expect(&h, r, sizeof(struct tsync_rec_round),
	       "tsync round 4294967295 cpu 4294967295 peer host offset "
	       "-9223372036854775808 ns err 18446744073709551615 ns delay "
	       "18446744073709551615 ns used 4294967295/0");
	th_close(&h);
}

/* Records in a big-endian file are read in the file's byte order; the same
 * bytes read as little-endian are not tsync's. */
static void test_round_bigendian(void **state)
{
	unsigned char r[sizeof(struct tsync_rec_round)];
	unsigned char p[sizeof(struct tsync_rec_probe)];
	struct th be, le;
	char *want;

	(void)state;
	th_open(&be, H_TSYNC | H_BE);
	put_round(&be, r, 12, 1, "g", 1, -12345678901LL, 180, 5200, 33, 339);
	expect(&be, r, sizeof(r), round_text);
	put_probe(&be, p, 12, 7, 1, TSYNC_DIR_GUEST_SEND);
	expect(&be, p, sizeof(p), "tsync probe 12/7 t3");
	th_close(&be);

	th_open(&le, H_TSYNC);
	if (have_function_plugin) {
		want = function_text(r, sizeof(r));
		expect(&le, r, sizeof(r), want);
		free(want);
	}
	want = fmt_raw(&le, r, sizeof(r));
	assert_null(strstr(want, "tsync"));
	free(want);
	th_close(&le);
}

/* Peer names: all 32 bytes used (no NUL), unprintable bytes, empty. */
static void test_peer_names(void **state)
{
	unsigned char r[sizeof(struct tsync_rec_round)];
	struct th h;

	(void)state;
	th_open(&h, H_TSYNC);
	put_round(&h, r, 1, 0, "abcdefghijklmnopqrstuvwxyz0123456789", 32,
		  5, 1, 2, 3, 4);
	expect(&h, r, sizeof(r), "tsync round 1 cpu 0 peer "
	       "abcdefghijklmnopqrstuvwxyz012345 offset 5 ns err 1 ns delay 2 ns used 3/4");
	put_round(&h, r, 1, 0, "a b\n\x7f\xff%s", 9, 5, 1, 2, 3, 4);
	expect(&h, r, sizeof(r), "tsync round 1 cpu 0 peer a?b???%s offset 5 ns "
	       "err 1 ns delay 2 ns used 3/4");
	put_round(&h, r, 1, 0, "\0junk", 5, 5, 1, 2, 3, 4);
	expect(&h, r, sizeof(r), "tsync round 1 cpu 0 peer - offset 5 ns err 1 ns "
	       "delay 2 ns used 3/4");
	th_close(&h);
}

/* Probe markers: compact by default, in full with tsync:probes=1. */
static void test_probes(void **state)
{
	static const char *const full[] = {
		"tsync probe round 12 seq 7 cpu 1 host-send",
		"tsync probe round 12 seq 7 cpu 1 guest-recv",
		"tsync probe round 12 seq 7 cpu 1 guest-send",
		"tsync probe round 12 seq 7 cpu 1 host-recv",
	};
	static const char *const compact[] = {
		"tsync probe 12/7 t1", "tsync probe 12/7 t2",
		"tsync probe 12/7 t3", "tsync probe 12/7 t4",
	};
	unsigned char p[sizeof(struct tsync_rec_probe)];
	struct th h;
	int d;

	(void)state;
	th_open(&h, H_TSYNC);
	for (d = 1; d <= 4; d++) {
		put_probe(&h, p, 12, 7, 1, d);
		expect(&h, p, sizeof(p), compact[d - 1]);
	}
	put_probe(&h, p, 12, 7, 1, 9);
	expect(&h, p, sizeof(p), "tsync probe 12/7 dir-9");

	/* As `trace-cmd report -O tsync:probes=1` after loading. */
	assert_int_equal(tep_plugin_add_option("tsync:probes", "1"), 0);
	for (d = 1; d <= 4; d++) {
		put_probe(&h, p, 12, 7, 1, d);
		expect(&h, p, sizeof(p), full[d - 1]);
	}
	put_probe(&h, p, 12, 7, 1, 0);
	expect(&h, p, sizeof(p), "tsync probe round 12 seq 7 cpu 1 dir-0");
	assert_int_equal(tep_plugin_add_option("tsync:probes", "0"), 0);
	put_probe(&h, p, 12, 7, 1, 2);
	expect(&h, p, sizeof(p), compact[1]);
	th_close(&h);
}

/* An option given before the plugin loads (how trace-cmd report -O works)
 * applies, once, to the loaded plugin. */
static void test_option_before_load(void **state)
{
	unsigned char p[sizeof(struct tsync_rec_probe)];
	struct th h;

	(void)state;
	assert_int_equal(tep_plugin_add_option("tsync:probes", "1"), 0);
	th_open(&h, H_TSYNC | H_LOAD_FIRST);
	put_probe(&h, p, 3, 4, 5, TSYNC_DIR_HOST_RECV);
	expect(&h, p, sizeof(p), "tsync probe round 3 seq 4 cpu 5 host-recv");
	th_close(&h);
	assert_int_equal(tep_plugin_add_option("tsync:probes", "0"), 0);
	th_open(&h, H_TSYNC | H_LOAD_FIRST);
	expect(&h, p, sizeof(p), "tsync probe 3/4 t4");
	th_close(&h);
}

static const unsigned char foreign[] = {
	0x34, 0x12, 0, 0, 'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'
};

/* Someone else's record prints exactly as without the plugin, with the
 * system plugins (Debian: plugin_function.so) and without them. */
static void test_foreign(void **state)
{
	struct th with, without;
	char *got;

	(void)state;
	th_open(&without, 0);	/* first: it may skip */
	th_open(&with, H_TSYNC);
	got = expect_same(&with, &without, foreign, sizeof(foreign));
	if (have_function_plugin)
		assert_string_equal(got, "# 1234 68 65 6c 6c 6f 20 77 6f 72 6c 64 21");
	free(got);
	th_close(&without);
	th_close(&with);

	/* No system plugins: the print fmt decides. Nothing else may hold
	 * plugin_function.so loaded now. */
	th_open(&with, H_TSYNC | H_NOSYS);
	th_open(&without, H_NOSYS);
	got = expect_same(&with, &without, foreign, sizeof(foreign));
	assert_string_equal(got, "id:1234 00000068");
	free(got);
	th_close(&without);
	th_close(&with);
}

/*
 * Malformed tsync records (short, wrong magic/version/type/length, garbage)
 * print exactly as without the plugin, in both fallback modes.
 */
static void test_malformed(void **state)
{
	unsigned char buf[sizeof(struct tsync_rec_round) + 8];
	const size_t R = sizeof(struct tsync_rec_round);
	const size_t P = sizeof(struct tsync_rec_probe);
	const int modes[] = { 0, H_NOSYS };
	struct th with, without;
	size_t m, i, n;
	char *got, *want;

	(void)state;
	for (m = 0; m < 2; m++) {
		th_open(&without, modes[m]);	/* first: it may skip */
		th_open(&with, H_TSYNC | modes[m]);
		for (i = 0; ; i++) {
			/* Each case starts from a valid round record. */
			memset(buf, 0, sizeof(buf));
			put_round(&with, buf, 12, 1, "g", 1, -1, 2, 3, 4, 5);
			n = R;
			switch (i) {
			case 0: n = 4; break;		/* id only */
			case 1: n = 8; break;		/* id + magic */
			case 2: n = sizeof(struct tsync_rec_hdr); break;
			case 3: n = R - 1; break;	/* one byte short */
			case 4: n = P; break;		/* round cut to probe size */
			case 5:
				put(&with, buf + 4, TSYNC_REC_MAGIC ^ 1, 4);
				break;
			case 6: buf[8] = TSYNC_REC_VERSION + 1; break;
			case 7: buf[8] = 0; break;
			case 8: buf[9] = 3; break;	/* unknown type */
			case 9: buf[9] = 0; break;
			case 10: put(&with, buf + 10, R + 1, 2); n = R + 1; break;
			case 11: put(&with, buf + 10, R - 4, 2); break;
			case 12: put(&with, buf + 10, P, 2); break;
			case 13:	/* probe type with a round's length */
				buf[9] = TSYNC_REC_PROBE;
				break;
			case 14:	/* tsync id, then garbage */
				for (n = 4; n < sizeof(buf); n++)
					buf[n] = (unsigned char)(n * 37 + 11);
				break;
			default:
				n = 0;
			}
			if (!n)
				break;
			if (modes[m] && n == 4) {
				/* Without the plugin the print fmt would
				 * read buf[0] past the record. */
				expect(&with, buf, n, "id:74737963 <no data>");
				continue;
			}
			got = expect_same(&with, &without, buf, n);
			assert_null(strstr(got, "tsync"));
			if (have_function_plugin && !modes[m]) {
				want = function_text(buf, n);
				assert_string_equal(got, want);
				free(want);
			}
			if (modes[m])	/* "id:%04x %08x", REC->id, buf[0] */
				assert_memory_equal(got, "id:74737963 ", 12);
			free(got);
		}
		assert_int_equal(i, 15);
		th_close(&without);
		th_close(&with);
	}
}

/*
 * Records too short to hold the id (the stock code would read past them)
 * and, with the print fmt, an id without data: a fixed text, no read past
 * the record (ASan/valgrind check that).
 */
static void test_truncated(void **state)
{
	unsigned char id[4] = { 0x63, 0x79, 0x73, 0x74 };
	struct th h;
	char want[64];

	(void)state;
	th_open(&h, H_TSYNC);
	if (have_function_plugin) {
		snprintf(want, sizeof(want), "# <truncated raw_data: %d bytes>",
			 h.id_off + 2);
		expect(&h, id, 2, want);
		snprintf(want, sizeof(want), "# <truncated raw_data: %d bytes>",
			 h.id_off);
		expect(&h, id, 0, want);
		expect(&h, id, 4, "# 74737963");
	}
	th_close(&h);

	th_open(&h, H_TSYNC | H_NOSYS);
	snprintf(want, sizeof(want), "# <truncated raw_data: %d bytes>",
		 h.id_off + 3);
	expect(&h, id, 3, want);
	expect(&h, id, 4, "id:74737963 <no data>");
	th_close(&h);
}

/* After the plugin is unloaded its handler is gone: the handle prints the
 * print fmt and does not call into the unloaded .so. */
static void test_unload(void **state)
{
	unsigned char r[sizeof(struct tsync_rec_round)];
	struct th h;

	(void)state;
	th_open(&h, H_TSYNC | H_NOSYS);
	put_round(&h, r, 12, 1, "g", 1, -12345678901LL, 180, 5200, 33, 339);
	expect(&h, r, sizeof(r), round_text);
	tep_unload_plugins(h.plugins, h.tep);
	h.plugins = NULL;
	expect(&h, r, sizeof(r), "id:74737963 0000004e");
	tep_free(h.tep);
}

/* Returns true if libtraceevent's system plugin directory holds @name,
 * with its path in @path (@n bytes). */
static bool sys_plugin_path(const char *name, char *path, size_t n)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu/traceevent/plugins",
		"/usr/lib/aarch64-linux-gnu/traceevent/plugins",
		"/usr/lib64/traceevent/plugins",
		"/usr/lib/traceevent/plugins",
	};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, n, "%s/%s", dirs[i], name);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

/* Returns true if libtraceevent's system plugin directory holds @name. */
static bool sys_plugin_installed(const char *name)
{
	char path[256];

	return sys_plugin_path(name, path, sizeof(path));
}

/* Writes @len bytes of @buf to @path (fails the test if it cannot). */
static void write_file(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* dl_iterate_phdr callback: returns 1 for a loaded plugin_function.so. */
static int function_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	(void)data;
	return slash && strcmp(slash + 1, "plugin_function.so") == 0;
}

/* Prints the first *.so name that readdir gives for @dir into @out. */
static void first_so(const char *dir, char *out, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t len;

	assert_non_null(d);
	out[0] = '\0';
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0) {
			snprintf(out, n, "%s", e->d_name);
			break;
		}
	}
	closedir(d);
}

/*
 * Loaded before plugin_function.so from the same directory, the plugin
 * still wins: it has libtraceevent load it again, after every other
 * directory, from the tsync-last/ link beside it. Without the link it
 * loses (the order problem it solves). The directory is a
 * TEP_PLUGIN_FIRST one on tmpfs (/dev/shm), which lists the newest file
 * first, holding copies of both plugins; plugins load before the formats
 * are parsed, as in trace-cmd.
 */
static void test_loaded_before_function(void **state)
{
	char dir[] = "/dev/shm/tsync-test-plugin-XXXXXX";
	char fn_path[512], path[PATH_MAX + 64], first[64];
	unsigned char r[sizeof(struct tsync_rec_round)];
	int with_link;
	size_t len;
	char *buf, *want;
	struct th h;

	(void)state;
	if (!have_function_plugin || !sys_plugin_path("plugin_function.so", fn_path,
						       sizeof(fn_path)))
		skip();
	if (dl_iterate_phdr(function_loaded, NULL)) {
		print_message("plugin_function.so already loaded\n");
		skip();
	}
	if (!mkdtemp(dir)) {
		print_message("mkdtemp %s: %s\n", dir, strerror(errno));
		skip();
	}
	buf = slurp(fn_path, &len);
	snprintf(path, sizeof(path), "%s/plugin_function.so", dir);
	write_file(path, buf, len);
	free(buf);
	snprintf(path, sizeof(path), "%s/plugin_tsync.so", plugin_dir);
	buf = slurp(path, &len);
	snprintf(path, sizeof(path), "%s/plugin_tsync.so", dir);
	write_file(path, buf, len);
	free(buf);
	first_so(dir, first, sizeof(first));

	for (with_link = 0; with_link < 2 && !strcmp(first, "plugin_tsync.so"); with_link++) {
		if (with_link) {
			snprintf(path, sizeof(path), "%s/tsync-last", dir);
			assert_int_equal(mkdir(path, 0755), 0);
			snprintf(path, sizeof(path), "%s/tsync-last/plugin_tsync.so", dir);
			assert_int_equal(symlink("../plugin_tsync.so", path), 0);
		}
		memset(&h, 0, sizeof(h));
		assert_int_equal(unsetenv("TRACEEVENT_PLUGIN_DIR"), 0);
		h.tep = tep_alloc();
		assert_non_null(h.tep);
		tep_set_file_bigendian(h.tep, TEP_LITTLE_ENDIAN);
		tep_set_long_size(h.tep, sizeof(long));
		tep_set_page_size(h.tep, 4096);
		tep_set_flag(h.tep, TEP_DISABLE_SYS_PLUGINS);
		assert_int_equal(tep_add_plugin_path(h.tep, dir, TEP_PLUGIN_FIRST), 0);
		h.plugins = tep_load_plugins(h.tep);
		parse_formats(&h);
		put_round(&h, r, 12, 1, "g", 1, -12345678901LL, 180, 5200, 33, 339);
		want = with_link ? strdup(round_text) : function_text(r, sizeof(r));
		assert_non_null(want);
		expect(&h, r, sizeof(r), want);
		free(want);
		th_close(&h);
	}

	snprintf(path, sizeof(path), "%s/tsync-last/plugin_tsync.so", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/tsync-last", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/plugin_tsync.so", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/plugin_function.so", dir);
	unlink(path);
	rmdir(dir);
	if (strcmp(first, "plugin_tsync.so")) {
		print_message("%s lists %s first, not plugin_tsync.so\n", dir, first);
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: later tests may leave plugin_function.so loaded */
		cmocka_unit_test(test_loaded_before_function),
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_round_padding_and_limits),
		cmocka_unit_test(test_round_bigendian),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_peer_names),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_option_before_load),
		cmocka_unit_test(test_foreign),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unload),
	};
	const char *b = getenv("B");
	char so[PATH_MAX + 32];
	int ret;

	if (!realpath(b && *b ? b : "build", plugin_dir)) {
		fprintf(stderr, "test_plugin: build dir: %s\n", strerror(errno));
		return 1;
	}
	snprintf(so, sizeof(so), "%s/plugin_tsync.so", plugin_dir);
	if (access(so, R_OK)) {
		fprintf(stderr, "test_plugin: %s: %s\n", so, strerror(errno));
		return 1;
	}
	/* No plugin from ~/.local (make install-user-plugin) may interfere. */
	snprintf(home_dir, sizeof(home_dir), "/tmp/tsync-test-plugin-XXXXXX");
	if (!mkdtemp(home_dir)) {
		perror("test_plugin: mkdtemp");
		return 1;
	}
	setenv("HOME", home_dir, 1);
	have_function_plugin = sys_plugin_installed("plugin_function.so");
	have_sys_tsync = sys_plugin_installed("plugin_tsync.so");
	tep_set_loglevel(TEP_LOG_NONE);	/* "overriding event" notices */

	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(home_dir);
	return ret;
}
