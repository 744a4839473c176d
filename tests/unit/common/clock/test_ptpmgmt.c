// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * linuxptp's management messages (common/clock/ptpmgmt.c): the GETs byte
 * for byte as Debian's pmc 3.1.1 wrote them (`pmc -u -b 0 'GET X'`,
 * captured on a socket standing in for ptp4l's; pid 5361, sequence 0),
 * the RESPONSEs ptp4l answers with, and the discipline state made of them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock/ptpmgmt.h"

/* Decodes hex @s into @buf; returns the bytes. */
static size_t unhex(const char *s, uint8_t *buf)
{
	size_t n = 0;
	unsigned int b;

	while (sscanf(s + 2 * n, "%2x", &b) == 1)
		buf[n++] = (uint8_t)b;
	return n;
}

/* pmc's GETs: the header (control 4, interval 0x7f), every port as
 * target, a zeroed dataset of the answer's size. */
static const char pmc_default[] =
	"0d02004a00000000000000000000000000000000000000000000000014f10000047f"
	"ffffffffffffffffffff000000000001001620000000000000000000000000000000000000000000";
static const char pmc_time[] =
	"0d02006800000000000000000000000000000000000000000000000014f10000047f"
	"ffffffffffffffffffff0000000000010034c00000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000";
static const char pmc_current[] =
	"0d02004800000000000000000000000000000000000000000000000014f10000047f"
	"ffffffffffffffffffff00000000000100142001000000000000000000000000000000000000";
static const char pmc_port[] =
	"0d02005000000000000000000000000000000000000000000000000014f10000047f"
	"ffffffffffffffffffff000000000001001c20040000000000000000000000000000000000000000000000"
	"000000";

static void test_get_bytes(void **state)
{
	static const struct { uint16_t id; const char *hex; } cases[] = {
		{ PTPMGMT_DEFAULT_DATA_SET, pmc_default },
		{ PTPMGMT_TIME_STATUS_NP, pmc_time },
		{ PTPMGMT_CURRENT_DATA_SET, pmc_current },
		{ PTPMGMT_PORT_DATA_SET, pmc_port },
	};
	uint8_t want[256], got[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = unhex(cases[i].hex, want);

		assert_int_equal(ptpmgmt_get(got, sizeof(got), cases[i].id, 0, 5361), n);
		assert_memory_equal(got, want, n);
	}
	assert_int_equal(ptpmgmt_get(got, sizeof(got), 0x2002, 0, 1), 0);	/* not asked */
	assert_int_equal(ptpmgmt_get(got, 60, PTPMGMT_TIME_STATUS_NP, 0, 1), 0);
}

/* Makes @get (hex) ptp4l's RESPONSE from port @port with @data. */
static size_t response(const char *get, uint16_t port, const uint8_t *data, size_t dlen,
		       uint8_t *buf)
{
	size_t n = unhex(get, buf);

	buf[28] = (uint8_t)(port >> 8);
	buf[29] = (uint8_t)port;
	buf[30] = 0;
	buf[31] = 7;				/* sequence 7 */
	buf[46] = 2;				/* RESPONSE */
	memcpy(buf + 54, data, dlen);
	(void)n;
	return PTPMGMT_MSG_LEN + PTPMGMT_TLV_LEN + dlen;
}

static const uint8_t gm[8] = { 0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 };

static void test_parse_datasets(void **state)
{
	uint8_t buf[256], d[64] = { 0 };
	struct ptpmgmt_reply r;
	struct ptpmgmt_time_status ts;
	struct ptpmgmt_current_ds cds;
	struct ptpmgmt_port_ds pds;
	struct ptpmgmt_default_ds dds;
	size_t n;

	(void)state;
	/* TIME_STATUS_NP: master_offset -1500, gmPresent 1, gmIdentity */
	memset(d, 0, sizeof(d));
	memcpy(d, "\xff\xff\xff\xff\xff\xff\xfa\x24", 8);
	d[41] = 1;
	memcpy(d + 42, gm, 8);
	n = response(pmc_time, 0, d, 50, buf);
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(r.seq, 7);
	assert_int_equal(r.id, PTPMGMT_TIME_STATUS_NP);
	assert_int_equal(r.len, 50);
	assert_int_equal(ptpmgmt_time_status(&r, &ts), 0);
	assert_int_equal(ts.master_offset_ns, -1500);
	assert_int_equal(ts.gm_present, 1);
	assert_memory_equal(ts.gm_id, gm, 8);
	assert_int_equal(ptpmgmt_current_ds(&r, &cds), -EBADMSG);	/* another id */
	/* CURRENT_DATA_SET: steps 1, offset -2.5 ns << 16, delay 3000 ns << 16 */
	memset(d, 0, sizeof(d));
	d[1] = 1;
	memcpy(d + 2, "\xff\xff\xff\xff\xff\xfd\x80\x00", 8);
	memcpy(d + 10, "\x00\x00\x00\x00\x0b\xb8\x00\x00", 8);
	n = response(pmc_current, 0, d, 18, buf);
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(ptpmgmt_current_ds(&r, &cds), 0);
	assert_int_equal(cds.steps_removed, 1);
	assert_int_equal(cds.offset_ns, -2);
	assert_int_equal(cds.delay_ns, 3000);
	/* PORT_DATA_SET of port 1: SLAVE */
	memset(d, 0, sizeof(d));
	d[9] = 1;
	d[10] = PTPMGMT_PS_SLAVE;
	n = response(pmc_port, 1, d, 26, buf);
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(r.port, 1);
	assert_int_equal(ptpmgmt_port_ds(&r, &pds), 0);
	assert_int_equal(pds.port, 1);
	assert_int_equal(pds.state, PTPMGMT_PS_SLAVE);
	/* DEFAULT_DATA_SET: 1 port, clock identity */
	memset(d, 0, sizeof(d));
	d[3] = 1;
	memcpy(d + 10, gm, 8);
	n = response(pmc_default, 0, d, 20, buf);
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(ptpmgmt_default_ds(&r, &dds), 0);
	assert_int_equal(dds.nports, 1);
	assert_memory_equal(dds.clock_id, gm, 8);
}

/* ptp4l 3.1.1's answer to pmc_default, as it sent it (-S, one port):
 * pmc prints clockIdentity a6fed2.fffe.a4edff, numberPorts 1. */
static void test_ptp4l_default_ds(void **state)
{
	static const char hex[] =
		"0d02004a00000000000000000000000000000000a6fed2fffea4edff00000000047f"
		"000000000000000014f1000002000001001620000100000180f8feffff80a6fed2fffea4edff0000";
	uint8_t buf[128];
	size_t n = unhex(hex, buf);
	struct ptpmgmt_reply r;
	struct ptpmgmt_default_ds dds;
	char id[32];

	(void)state;
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(r.seq, 0);
	assert_int_equal(r.id, PTPMGMT_DEFAULT_DATA_SET);
	assert_int_equal(ptpmgmt_default_ds(&r, &dds), 0);
	assert_int_equal(dds.nports, 1);
	ptpmgmt_clock_id_text(dds.clock_id, id, sizeof(id));
	assert_string_equal(id, "a6fed2.fffe.a4edff");
}

static void test_parse_rejects(void **state)
{
	uint8_t buf[256], d[64] = { 0 };
	struct ptpmgmt_reply r;
	size_t n = response(pmc_time, 0, d, 50, buf);

	(void)state;
	assert_int_equal(ptpmgmt_parse(buf, n - 1, &r), -EBADMSG);	/* shorter than its length */
	assert_int_equal(ptpmgmt_parse(buf, 40, &r), -EBADMSG);
	buf[46] = 0;						/* a GET, not a RESPONSE */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), -EBADMSG);
	buf[46] = 2;
	buf[0] = 0x0b;						/* an announce */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), -EBADMSG);
	buf[0] = 0x0d;
	buf[1] = 0x01;						/* PTP version 1 */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), -EBADMSG);
	buf[1] = 0x12;						/* 2.1 is fine */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	buf[51] = 0xff;						/* a TLV past the message */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), -EBADMSG);
	buf[51] = 0x10;						/* a shorter dataset */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(r.len, 14);
	{
		struct ptpmgmt_time_status ts;

		assert_int_equal(ptpmgmt_time_status(&r, &ts), -EBADMSG);
	}
	/* MANAGEMENT_ERROR_STATUS: NOT_SUPPORTED (6) for TIME_STATUS_NP */
	buf[49] = 2;
	buf[51] = 8;
	memcpy(buf + 52, "\x00\x06\xc0\x00", 4);
	assert_int_equal(ptpmgmt_parse(buf, n, &r), 0);
	assert_int_equal(r.error, 6);
	assert_int_equal(r.id, PTPMGMT_TIME_STATUS_NP);
	buf[49] = 3;						/* another TLV */
	assert_int_equal(ptpmgmt_parse(buf, n, &r), -EBADMSG);
}

/* A view of a slave one step from grandmaster gm. */
static void slave_view(struct ptpmgmt_view *v)
{
	memset(v, 0, sizeof(*v));
	v->dds.nports = 1;
	memcpy(v->dds.clock_id, "\x0a\x0b\x0c\xff\xfe\x0d\x0e\x0f", 8);
	v->ts.master_offset_ns = -1500;
	v->ts.gm_present = 1;
	memcpy(v->ts.gm_id, gm, 8);
	v->cds.steps_removed = 1;
	v->cds.delay_ns = 3000;
	v->nports = 1;
	v->ports[0].port = 1;
	v->ports[0].state = PTPMGMT_PS_SLAVE;
}

static void test_state(void **state)
{
	struct ptpmgmt_view v;
	struct tsync_clock_state s;

	(void)state;
	slave_view(&v);
	memset(&s, 0, sizeof(s));
	ptpmgmt_state(&v, &s);
	assert_int_equal(s.source, TSYNC_CLOCK_SRC_PTP4L);
	assert_int_equal(s.synced, 1);
	assert_int_equal(s.offset_ns, -1500);
	assert_int_equal(s.bound_ns, 4500);
	assert_int_equal(s.stratum, 1);
	assert_string_equal(s.master, "001122.fffe.334455");
	assert_string_equal(s.detail, "port 1 SLAVE");
	/* the grandmaster itself */
	memcpy(v.dds.clock_id, gm, 8);
	v.ports[0].state = PTPMGMT_PS_MASTER;
	v.cds.steps_removed = 0;
	ptpmgmt_state(&v, &s);
	assert_int_equal(s.synced, 1);
	assert_int_equal(s.bound_ns, 0);
	assert_int_equal(s.offset_ns, 0);
	assert_string_equal(s.detail, "grandmaster, port 1 MASTER");
	/* still listening */
	slave_view(&v);
	v.ports[0].state = 4;
	ptpmgmt_state(&v, &s);
	assert_int_equal(s.synced, 0);
	assert_true(s.bound_ns == TSYNC_CLOCK_BOUND_UNKNOWN);
	assert_string_equal(s.detail, "not synchronized: port state LISTENING");
	/* SLAVE, yet the grandmaster went away */
	slave_view(&v);
	v.ts.gm_present = 0;
	ptpmgmt_state(&v, &s);
	assert_int_equal(s.synced, 0);
	/* a MASTER port of a clock that is not the grandmaster */
	slave_view(&v);
	v.ports[0].state = PTPMGMT_PS_MASTER;
	ptpmgmt_state(&v, &s);
	assert_int_equal(s.synced, 0);
	assert_string_equal(ptpmgmt_port_state_name(77), "UNKNOWN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_bytes),
		cmocka_unit_test(test_parse_datasets),
		cmocka_unit_test(test_ptp4l_default_ds),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
