// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of trace-cmd's agent protocol codec (proto/tcmd.c). The byte
 * vectors are trace-cmd's own: the TRACE_REQ was captured from Debian's
 * trace-cmd 3.1.6 (`trace-cmd record -A 127.0.0.1:PORT --name localhost -d
 * -k --no-filter -e sched:sched_switch -o h.dat sleep 1`), the others are
 * laid out as trace-cmd's message code builds them (header, packed struct,
 * payload, big-endian). Every message is decoded from a heap buffer of
 * exactly its length, so ASan and valgrind see any read past the end.
 *
 * With TSYNC_PROTO_CORPUS=DIR set, test_corpus writes the fuzz seed corpus
 * into DIR/fuzz_tcmd/.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "proto/tcmd.h"

/* Captured from trace-cmd 3.1.6: TRACE_REQ, ARGS (9) + TSYNC_PROTOS. */
static const uint8_t req_captured[] = {
	0x00, 0x00, 0x00, 0x7c, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb7, 0x60, 0x41, 0xf7,
	0xe1, 0x84, 0xf4, 0x2b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4b,
	0x00, 0x00, 0x00, 0x09, '-', 'C', 0, 'l', 'o', 'c', 'a', 'l', 0,
	'-', 'd', 0, '-', 'k', 0, '-', '-', 'n', 'o', '-', 'f', 'i', 'l', 't',
	'e', 'r', 0, '-', 'e', 0, 's', 'c', 'h', 'e', 'd', ':', 's', 'c', 'h',
	'e', 'd', '_', 's', 'w', 'i', 't', 'c', 'h', 0, '-', 'o', 0, '/', 't',
	'm', 'p', '/', 't', 'c', 'a', 'g', 'e', 'n', 't', '/', 'h', '.', 'd',
	'a', 't', 0, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05,
	'p', 't', 'p', 0, 0,
};

static const char *const req_argv[] = {
	"-C", "local", "-d", "-k", "--no-filter", "-e", "sched:sched_switch",
	"-o", "/tmp/tcagent/h.dat",
};

/* TRACE_RESP as make_trace_resp() lays it out: 2 CPUs, ptp on 1503. */
static const uint8_t resp_bytes[] = {
	0x00, 0x00, 0x00, 0x3e, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x28,
	0x00, 0x00, 0x00, 0x00,				/* flags */
	0x00, 0x00, 0x00, 0x02,				/* cpus */
	0x00, 0x00, 0x10, 0x00,				/* page size */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,	/* trace id */
	'p', 't', 'p', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x05, 0xdf,				/* tsync port */
	'1', '5', '0', '1', 0, '1', '5', '0', '2', 0,
};

/* ptp OFFSET {be64 ts, be64 offset} and none PROBE (x86: little-endian). */
static const uint8_t offset_bytes[] = {
	0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x14,
	'p', 't', 'p', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x00, 0xe1, 0x61, 0x4b, 0xd0, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc, 0x18,
};

static const uint8_t cpu_probe_bytes[] = {
	0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x14,
	'n', 'o', 'n', 'e', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x00, 0x01,
	0x03, 0x00,
};

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Decodes @len bytes of @src from an exact-size heap copy; every
 * rejection must be -EBADMSG with a reason. The copy is returned in @keep
 * (for views into it) or freed. */
static int dec(const uint8_t *src, size_t len, struct tcmd_msg *m,
	       struct tcmd_err *e, uint8_t **keep)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, src, len);
	memset(e, 0, sizeof(*e));
	ret = tcmd_decode(copy, len, m, e);
	if (ret) {
		assert_int_equal(ret, -EBADMSG);
		assert_true(strlen(e->reason) > 0);
		assert_int_equal(m->cmd, 0);
	}
	if (keep)
		*keep = copy;
	else
		free(copy);
	return ret;
}

/* Expects @src to be rejected with a reason containing @what. */
static void reject(const uint8_t *src, size_t len, const char *what)
{
	struct tcmd_err e;
	struct tcmd_msg m;

	if (dec(src, len, &m, &e, NULL) != -EBADMSG)
		fail_msg("accepted, expected a rejection about '%s'", what);
	if (!strstr(e.reason, what))
		fail_msg("reason '%s' does not mention '%s'", e.reason, what);
}

/* The captured request decodes to trace-cmd's argv and protocols, and
 * our encoder writes the very same bytes. */
static void test_trace_req_captured(void **state)
{
	uint8_t buf[TCMD_MSG_MAX], *keep;
	static const char *const protos[] = { "ptp", NULL };
	struct tcmd_msg m;
	struct tcmd_err e;
	const char *s;
	size_t i = 0;
	ssize_t n;

	(void)state;
	assert_int_equal(dec(req_captured, sizeof(req_captured), &m, &e,
			     &keep), 0);
	assert_int_equal(m.cmd, TCMD_TRACE_REQ);
	assert_int_equal(m.req.flags, 0);
	assert_true(m.req.trace_id == 0xb76041f7e184f42bull);
	assert_true(m.req.has_args);
	assert_int_equal(m.req.args.count, 9);
	for (s = tcmd_strs_next(&m.req.args, NULL); s;
	     s = tcmd_strs_next(&m.req.args, s))
		assert_string_equal(s, req_argv[i++]);
	assert_int_equal(i, 9);
	assert_true(m.req.has_protos);
	assert_int_equal(m.req.protos.count, 1);
	assert_string_equal(tcmd_strs_next(&m.req.protos, NULL), "ptp");
	assert_null(tcmd_strs_next(&m.req.protos, tcmd_strs_next(&m.req.protos, NULL)));
	free(keep);

	n = tcmd_enc_trace_req(buf, sizeof(buf), 0, 0xb76041f7e184f42bull, 9,
			       req_argv, protos);
	assert_int_equal(n, sizeof(req_captured));
	assert_memory_equal(buf, req_captured, sizeof(req_captured));
	/* one byte short of room */
	assert_int_equal(tcmd_enc_trace_req(buf, sizeof(req_captured) - 1, 0, 1,
					    9, req_argv, protos), -ENOSPC);
}

/* Requests without parameters, or with an empty protocol list. */
static void test_trace_req_variants(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const bad_name[] = { "0123456789abcdef", NULL };
	uint8_t buf[256], *keep;
	struct tcmd_msg m;
	struct tcmd_err e;
	ssize_t n;

	(void)state;
	n = tcmd_enc_trace_req(buf, sizeof(buf), TCMD_FL_USE_FIFOS, 7, 0,
			       NULL, NULL);
	assert_int_equal(n, 28);
	assert_int_equal(dec(buf, (size_t)n, &m, &e, NULL), 0);
	assert_int_equal(m.req.flags, TCMD_FL_USE_FIFOS);
	assert_false(m.req.has_args);
	assert_false(m.req.has_protos);

	n = tcmd_enc_trace_req(buf, sizeof(buf), 0, 7, 0, NULL, none);
	assert_int_equal(n, 28 + 9);
	assert_int_equal(dec(buf, (size_t)n, &m, &e, &keep), 0);
	assert_true(m.req.has_protos);
	assert_int_equal(m.req.protos.count, 0);
	assert_null(tcmd_strs_next(&m.req.protos, NULL));
	free(keep);

	assert_int_equal(tcmd_enc_trace_req(buf, sizeof(buf), 0, 7, 0, NULL,
					    bad_name), -EINVAL);
	assert_int_equal(tcmd_enc_trace_req(buf, sizeof(buf), 0, 7, -1, NULL,
					    NULL), -EINVAL);
}

/* TRACE_PROXY: the request plus CPUs and siblings. */
static void test_trace_proxy(void **state)
{
	uint8_t buf[64] = { 0 };
	struct tcmd_msg m;
	struct tcmd_err e;

	(void)state;
	wr32(buf, 12 + 24);
	wr32(buf + 4, TCMD_TRACE_PROXY);
	wr32(buf + 8, 24);
	buf[12 + 15] = 5;		/* trace id 5 */
	wr32(buf + 12 + 16, 4);		/* cpus */
	wr32(buf + 12 + 20, 1);		/* siblings */
	assert_int_equal(dec(buf, 36, &m, &e, NULL), 0);
	assert_int_equal(m.cmd, TCMD_TRACE_PROXY);
	assert_true(m.req.trace_id == 5);
	assert_int_equal(m.req.cpus, 4);
	assert_int_equal(m.req.siblings, 1);
}

/* Malformed requests, each with its reason. */
static void test_trace_req_rejects(void **state)
{
	uint8_t b[sizeof(req_captured) + 16];

	(void)state;
	/* ARGS announces one argument more than it holds */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b + 36, 10);
	reject(b, sizeof(req_captured), "announced");
	/* ARGS announces fewer: strings left over */
	wr32(b + 36, 8);
	reject(b, sizeof(req_captured), "after the 8 strings");
	/* an argument without its NUL: the ARGS length cut by one */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b + 32, 0x4a);
	reject(b, sizeof(req_captured), "string 8 is not NUL-terminated");
	/* parameter length beyond the message */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b + 32, 0x4c + 20);
	reject(b, sizeof(req_captured), "claims");
	/* ARGS shorter than its argc */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b + 32, 2);
	reject(b, sizeof(req_captured), "below its be32 argc");
	/* protocol list without its final empty name */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b + 0x73, 4);
	wr32(b, sizeof(req_captured) - 1);
	reject(b, sizeof(req_captured) - 1, "empty name");
	/* trailing bytes after the last parameter */
	memcpy(b, req_captured, sizeof(req_captured));
	wr32(b, sizeof(req_captured) + 3);
	memset(b + sizeof(req_captured), 0, 3);
	reject(b, sizeof(req_captured) + 3, "after the last parameter");
	/* a parameter twice */
	memcpy(b, req_captured, sizeof(req_captured));
	memcpy(b + sizeof(req_captured), req_captured + 0x6f, 13);
	wr32(b, sizeof(req_captured) + 13);
	reject(b, sizeof(req_captured) + 13, "twice");
	/* an over-long protocol name */
	{
		uint8_t p[12 + 16 + 8 + 18] = { 0 };

		wr32(p, sizeof(p));
		wr32(p + 4, TCMD_TRACE_REQ);
		wr32(p + 8, 16);
		wr32(p + 28, 1);
		wr32(p + 32, 18);
		memset(p + 36, 'x', 16);
		reject(p, sizeof(p), "limit 15");
	}
}

/* ARGS with no argument is refused (trace-cmd refuses it too). */
static void test_args_empty(void **state)
{
	uint8_t b[12 + 16 + 8 + 4] = { 0 };

	(void)state;
	wr32(b, sizeof(b));
	wr32(b + 4, TCMD_TRACE_REQ);
	wr32(b + 8, 16);
	wr32(b + 32, 4);
	reject(b, sizeof(b), "ARGS with 0 arguments");
}

/*
 * The command table of Documentation/protocol.md section 10 matches the
 * code: every "| `NAME` | id | struct |" row.
 */
static void test_doc_table(void **state)
{
	FILE *f = fopen("Documentation/protocol.md", "r");
	char line[512], name[64];
	unsigned int id, st, rows = 0;

	(void)state;
	if (!f) {
		fail_msg("Documentation/protocol.md: %s (run from the tree's top)",
			 strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "| `%63[A-Z_]` | %u | %u |", name, &id, &st) != 3)
			continue;
		if (strcmp(tcmd_cmd_name(id), name) || tcmd_cmd_struct_len(id) != st)
			fail_msg("doc says %s %u struct %u, code says %s struct %u",
				 name, id, st, tcmd_cmd_name(id),
				 tcmd_cmd_struct_len(id));
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, TCMD_NR_CMDS);
}

/* Unknown parameters and longer structs are skipped (forward compatible). */
static void test_forward_compat(void **state)
{
	uint8_t b[12 + 20 + 8 + 3 + 13];
	struct tcmd_msg m;
	struct tcmd_err e;

	(void)state;
	memset(b, 0, sizeof(b));
	wr32(b, sizeof(b));
	wr32(b + 4, TCMD_TRACE_REQ);
	wr32(b + 8, 20);			/* 4 struct bytes more */
	b[12 + 15] = 9;
	wr32(b + 32, 77);			/* unknown parameter */
	wr32(b + 36, 3);
	memcpy(b + 43, req_captured + 0x6f, 13);	/* TSYNC_PROTOS ptp */
	assert_int_equal(dec(b, sizeof(b), &m, &e, NULL), 0);
	assert_true(m.req.trace_id == 9);
	assert_false(m.req.has_args);
	assert_true(m.req.has_protos);
	assert_int_equal(m.req.protos.count, 1);
}

/* TRACE_RESP: trace-cmd's layout both ways. */
static void test_trace_resp(void **state)
{
	struct tcmd_trace_resp r = {
		.cpus = 2, .page_size = 4096, .trace_id = 0x1122334455667788ull,
		.proto = "ptp", .tsync_port = 1503,
	};
	static const uint32_t ports[] = { 1501, 1502 };
	uint8_t buf[128], *keep;
	uint32_t got[2];
	struct tcmd_msg m;
	struct tcmd_err e;
	ssize_t n;

	(void)state;
	n = tcmd_enc_trace_resp(buf, sizeof(buf), &r, ports);
	assert_int_equal(n, sizeof(resp_bytes));
	assert_memory_equal(buf, resp_bytes, sizeof(resp_bytes));
	assert_int_equal(dec(resp_bytes, sizeof(resp_bytes), &m, &e, &keep), 0);
	assert_int_equal(m.cmd, TCMD_TRACE_RESP);
	assert_int_equal(m.resp.cpus, 2);
	assert_int_equal(m.resp.page_size, 4096);
	assert_true(m.resp.trace_id == 0x1122334455667788ull);
	assert_string_equal(m.resp.proto, "ptp");
	assert_int_equal(m.resp.tsync_port, 1503);
	assert_int_equal(tcmd_resp_ports(&m.resp, got, 1), -ENOSPC);
	assert_int_equal(tcmd_resp_ports(&m.resp, got, 2), 0);
	assert_int_equal(got[0], 1501);
	assert_int_equal(got[1], 1502);
	free(keep);
	assert_int_equal(tcmd_enc_trace_resp(buf, 40, &r, ports), -ENOSPC);
	r.tsync_port = 0;
	assert_int_equal(tcmd_enc_trace_resp(buf, sizeof(buf), &r, ports),
			 -EINVAL);
	r.proto[0] = 0;		/* no time sync: port 0 is fine */
	assert_true(tcmd_enc_trace_resp(buf, sizeof(buf), &r, ports) > 0);
	r.cpus = 0;
	assert_int_equal(tcmd_enc_trace_resp(buf, sizeof(buf), &r, ports),
			 -EINVAL);
}

static void test_trace_resp_rejects(void **state)
{
	uint8_t b[sizeof(resp_bytes) + 8];

	(void)state;
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	b[52] = 'x';				/* "1x01" */
	reject(b, sizeof(resp_bytes), "not a decimal");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	wr32(b + 16, 3);			/* 3 CPUs, 2 ports */
	reject(b, sizeof(resp_bytes), "3 strings announced");
	wr32(b + 16, 1);			/* 1 CPU, 2 ports */
	reject(b, sizeof(resp_bytes), "after the 1 strings");
	wr32(b + 16, 0);
	reject(b, sizeof(resp_bytes), "0 CPUs");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	wr32(b + 20, 4095);
	reject(b, sizeof(resp_bytes), "page size");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	memset(b + 32, 'p', 16);		/* proto without NUL */
	reject(b, sizeof(resp_bytes), "not NUL-terminated");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	wr32(b + 48, 0);
	reject(b, sizeof(resp_bytes), "port 0");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	b[sizeof(resp_bytes) - 1] = '3';	/* last port unterminated */
	reject(b, sizeof(resp_bytes), "not NUL-terminated");
	memcpy(b, resp_bytes, sizeof(resp_bytes));
	memcpy(b + 52, "99999999999", 10);	/* 11 digits: 10 + cut */
	b[62] = 0;
	wr32(b + 16, 1);
	reject(b, 63, "header says");
}

/* The PTP and generic TIME_SYNC messages against trace-cmd's layouts. */
static void test_time_sync(void **state)
{
	struct tcmd_ptp_sample *samples, s;
	uint8_t buf[TCMD_MSG_MAX], *keep;
	struct tcmd_msg m;
	struct tcmd_err e;
	ssize_t n;
	int i;

	(void)state;
	n = tcmd_enc_ptp_offset(buf, sizeof(buf), 968000000000ll, -1000);
	assert_int_equal(n, sizeof(offset_bytes));
	assert_memory_equal(buf, offset_bytes, sizeof(offset_bytes));
	assert_int_equal(dec(offset_bytes, sizeof(offset_bytes), &m, &e, NULL), 0);
	assert_int_equal(m.ts.id, TCMD_PTP_OFFSET);
	assert_true(m.ts.offset.ts == 968000000000ll);
	assert_true(m.ts.offset.offset == -1000);

	n = tcmd_enc_tsync_probe(buf, sizeof(buf), 3);
	assert_int_equal(n, sizeof(cpu_probe_bytes));
	assert_int_equal(dec(buf, (size_t)n, &m, &e, NULL), 0);
	assert_string_equal(m.ts.proto, "none");
	assert_int_equal(m.ts.id, TCMD_TSYNC_PROBE);
	assert_int_equal(m.ts.cpu, 3);
	if (*(const uint8_t *)&(uint16_t){ 1 })	/* little-endian host */
		assert_memory_equal(buf, cpu_probe_bytes, sizeof(cpu_probe_bytes));

	n = tcmd_enc_tsync_stop(buf, sizeof(buf));
	assert_int_equal(n, 32);
	assert_int_equal(dec(buf, 32, &m, &e, NULL), 0);
	assert_int_equal(m.ts.id, TCMD_TSYNC_STOP);

	n = tcmd_enc_ptp_start(buf, sizeof(buf), 4, TCMD_PTP_FL_FASTEST |
			       TCMD_PTP_FL_MARKER);
	assert_int_equal(n, 40);
	assert_int_equal(buf[39], 3);
	assert_int_equal(dec(buf, 40, &m, &e, NULL), 0);
	assert_int_equal(m.ts.start.series, 4);
	assert_int_equal(m.ts.start.flags, 3);

	n = tcmd_enc_ptp_probe(buf, sizeof(buf), 339);
	assert_int_equal(n, 36);
	assert_int_equal(dec(buf, 36, &m, &e, NULL), 0);
	assert_int_equal(m.ts.count, 339);

	n = tcmd_enc_ptp_end(buf, sizeof(buf));
	assert_int_equal(n, 32);
	assert_int_equal(dec(buf, 32, &m, &e, NULL), 0);
	assert_int_equal(m.ts.id, TCMD_PTP_END);

	/* PROBES: the 8144-byte payload, 8176 bytes on the wire */
	samples = calloc(TCMD_PTP_SAMPLES, sizeof(*samples));
	assert_non_null(samples);
	for (i = 0; i < (int)TCMD_PTP_LOOP; i++) {
		samples[i].ts = 1000000 + i;
		samples[i].id = (uint32_t)i + 1;
	}
	n = tcmd_enc_ptp_probes(buf, sizeof(buf), 2, TCMD_PTP_LOOP, samples);
	assert_int_equal(n, 12 + 20 + 8144);
	assert_int_equal(dec(buf, (size_t)n, &m, &e, &keep), 0);
	assert_int_equal(m.ts.probes.series, 2);
	assert_int_equal(m.ts.probes.count, 339);
	tcmd_ptp_sample_get(&m.ts, 338, &s);
	assert_true(s.ts == 1000338);
	assert_int_equal(s.id, 339);
	tcmd_ptp_sample_get(&m.ts, 339, &s);
	assert_true(s.ts == 0);
	assert_int_equal(s.id, 0);
	free(keep);
	assert_int_equal(tcmd_enc_ptp_probes(buf, sizeof(buf), 2, 679, samples),
			 -EINVAL);
	assert_int_equal(tcmd_enc_ptp_probes(buf, 8000, 2, 1, samples), -ENOSPC);
	free(samples);

	/* another protocol's payload is passed through */
	n = tcmd_enc_time_sync(buf, sizeof(buf), "other", 7, "abc", 3);
	assert_int_equal(dec(buf, (size_t)n, &m, &e, NULL), 0);
	assert_string_equal(m.ts.proto, "other");
	assert_int_equal(m.ts.len, 3);
	assert_int_equal(tcmd_enc_time_sync(buf, sizeof(buf), "", 1, NULL, 0),
			 -EINVAL);
	assert_int_equal(tcmd_enc_time_sync(buf, sizeof(buf),
					    "0123456789abcdef", 1, NULL, 0),
			 -EINVAL);
}

static void test_time_sync_rejects(void **state)
{
	struct tcmd_ptp_sample *zero;
	uint8_t b[TCMD_MSG_MAX];
	ssize_t n;

	(void)state;
	n = tcmd_enc_ptp_probe(b, sizeof(b), 1);
	wr32(b, (uint32_t)n - 1);		/* 3-byte PROBE */
	reject(b, (size_t)n - 1, "payload is 3 bytes, expected 4");
	n = tcmd_enc_ptp_start(b, sizeof(b), 1, 3);
	wr32(b + 28, 9);
	reject(b, (size_t)n, "unknown message 9");
	n = tcmd_enc_tsync_probe(b, sizeof(b), 0);
	wr32(b + 28, 5);
	reject(b, (size_t)n, "none: unknown message 5");
	n = tcmd_enc_ptp_end(b, sizeof(b));
	b[12 + 15] = 'x';
	memset(b + 12, 'x', 16);
	reject(b, (size_t)n, "not NUL-terminated");
	n = tcmd_enc_ptp_end(b, sizeof(b));
	memset(b + 12, 0, 16);
	reject(b, (size_t)n, "empty protocol name");
	zero = calloc(TCMD_PTP_SAMPLES, sizeof(*zero));
	assert_non_null(zero);
	n = tcmd_enc_ptp_probes(b, sizeof(b), 1, 0, zero);
	free(zero);
	assert_true(n > 0);
	wr32(b + 36, 679);
	reject(b, (size_t)n, "count 679 above 678");
	wr32(b + 36, 1);
	wr32(b, (uint32_t)n - 12);		/* short PROBES */
	reject(b, (size_t)n - 12, "expected 8144");
}

/* Headers: sizes, commands, struct sizes. */
static void test_header_rejects(void **state)
{
	uint8_t b[TCMD_MSG_MAX + 4];
	struct tcmd_hdr h;
	struct tcmd_err e;

	(void)state;
	memset(b, 0, sizeof(b));
	wr32(b, 11);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "below the 12-byte header"));
	wr32(b, TCMD_MSG_MAX + 1);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "above the limit of 8192"));
	wr32(b, 12);
	wr32(b + 4, TCMD_NR_CMDS);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "unknown command 12"));
	wr32(b + 4, TCMD_CLOSE);
	wr32(b + 8, 1);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "does not fit"));
	wr32(b, 12 + 8);
	wr32(b + 4, TCMD_TRACE_REQ);
	wr32(b + 8, 8);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), -EBADMSG);
	assert_non_null(strstr(e.reason, "TRACE_REQ: struct size 8, needs 16"));
	wr32(b + 8, 0xffffffffu);
	assert_int_equal(tcmd_hdr_decode(b, &h, NULL), -EBADMSG);
	/* the largest message is fine */
	wr32(b, TCMD_MSG_MAX);
	wr32(b + 4, TCMD_SEND_DATA);
	wr32(b + 8, 0);
	assert_int_equal(tcmd_hdr_decode(b, &h, &e), 0);
	assert_int_equal(h.size, TCMD_MSG_MAX);
	/* whole-message checks */
	reject(b, 5, "shorter than its header");
	reject(b, TCMD_MSG_MAX - 1, "header says 8192 bytes, got 8191");
}

/* The simple messages, SEND_DATA and NOT_SUPP. */
static void test_simple(void **state)
{
	static const uint32_t cmds[] = { TCMD_CLOSE, TCMD_FIN_DATA,
		TCMD_CLOSE_RESP, TCMD_CONT, TCMD_NOT_SUPP };
	static const uint8_t close_bytes[] = { 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t buf[TCMD_MSG_MAX], data[TCMD_DATA_MAX], *keep;
	struct tcmd_msg m;
	struct tcmd_err e;
	ssize_t n;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		n = tcmd_enc_simple(buf, sizeof(buf), cmds[i]);
		assert_int_equal(n, 12);
		assert_int_equal(dec(buf, 12, &m, &e, NULL), 0);
		assert_int_equal(m.cmd, cmds[i]);
	}
	assert_int_equal(tcmd_enc_simple(buf, sizeof(buf), TCMD_CLOSE), 12);
	assert_memory_equal(buf, close_bytes, 12);
	assert_int_equal(tcmd_enc_simple(buf, 11, TCMD_CLOSE), -ENOSPC);
	assert_int_equal(tcmd_enc_simple(buf, 64, TCMD_TRACE_REQ), -EINVAL);
	assert_string_equal(tcmd_cmd_name(TCMD_TIME_SYNC), "TIME_SYNC");
	assert_string_equal(tcmd_cmd_name(99), "UNKNOWN");

	/* CLOSE with a payload is refused */
	wr32(buf, 14);
	reject(buf, 14, "CLOSE carries 2 unexpected payload bytes");

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	n = tcmd_enc_send_data(buf, sizeof(buf), data, sizeof(data));
	assert_int_equal(n, TCMD_MSG_MAX);
	assert_int_equal(dec(buf, (size_t)n, &m, &e, &keep), 0);
	assert_int_equal(m.payload_len, TCMD_DATA_MAX);
	assert_memory_equal(m.payload, data, TCMD_DATA_MAX);
	free(keep);
	assert_int_equal(tcmd_enc_send_data(buf, sizeof(buf), data,
					    TCMD_DATA_MAX + 1), -EINVAL);
	assert_int_equal(tcmd_enc_send_data(buf, sizeof(buf), data, 0), -EINVAL);
	wr32(buf, 12);
	wr32(buf + 4, TCMD_SEND_DATA);
	wr32(buf + 8, 0);
	reject(buf, 12, "SEND_DATA without data");

	n = tcmd_enc_not_supp(buf, sizeof(buf), "option -p is not supported");
	assert_int_equal(dec(buf, (size_t)n, &m, &e, &keep), 0);
	assert_string_equal(m.reason, "option -p is not supported");
	free(keep);
	assert_int_equal(tcmd_enc_not_supp(buf, sizeof(buf), NULL), 12);
	assert_int_equal(dec(buf, 12, &m, &e, NULL), 0);
	assert_null(m.reason);
	/* an empty reason is no reason */
	wr32(buf, 13);
	buf[12] = 0;
	assert_int_equal(dec(buf, 13, &m, &e, NULL), 0);
	assert_null(m.reason);
	n = tcmd_enc_not_supp(buf, sizeof(buf), "ab");
	buf[n - 1] = 'c';
	reject(buf, (size_t)n, "NUL-terminated");
}

/* Writes the seed corpus of fuzz_tcmd when TSYNC_PROTO_CORPUS is set. */
static void test_corpus(void **state)
{
	const char *dir = getenv("TSYNC_PROTO_CORPUS");
	struct { const char *name; const uint8_t *p; size_t n; } seeds[] = {
		{ "trace_req", req_captured, sizeof(req_captured) },
		{ "trace_resp", resp_bytes, sizeof(resp_bytes) },
		{ "ptp_offset", offset_bytes, sizeof(offset_bytes) },
		{ "none_probe", cpu_probe_bytes, sizeof(cpu_probe_bytes) },
	};
	char path[4096];
	size_t i;
	FILE *f;

	(void)state;
	if (!dir)
		skip();
	snprintf(path, sizeof(path), "%s/fuzz_tcmd", dir);
	mkdir(path, 0755);
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(path, sizeof(path), "%s/fuzz_tcmd/%s", dir,
			 seeds[i].name);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(seeds[i].p, 1, seeds[i].n, f),
				 seeds[i].n);
		fclose(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_req_captured),
		cmocka_unit_test(test_trace_req_variants),
		cmocka_unit_test(test_trace_proxy),
		cmocka_unit_test(test_trace_req_rejects),
		cmocka_unit_test(test_forward_compat),
		cmocka_unit_test(test_args_empty),
		cmocka_unit_test(test_doc_table),
		cmocka_unit_test(test_trace_resp),
		cmocka_unit_test(test_trace_resp_rejects),
		cmocka_unit_test(test_time_sync),
		cmocka_unit_test(test_time_sync_rejects),
		cmocka_unit_test(test_header_rejects),
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
