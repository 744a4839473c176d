// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * linuxptp's management messages: the GETs pmc sends and the RESPONSEs
 * ptp4l answers, pure (see ptpmgmt.h for the layout).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock/ptpmgmt.h"

#define MSG_MANAGEMENT		0x0d
#define PTP_MAJOR		2
#define ACTION_GET		0
#define ACTION_RESPONSE		2
#define TLV_MANAGEMENT		1
#define TLV_ERROR_STATUS	2

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t get64(const uint8_t *p)
{
	return (int64_t)((uint64_t)get32(p) << 32 | get32(p + 4));
}

/* The size of the dataset of @id, as pmc's zeroed GET carries it; 0:
 * not one asked here. */
static size_t dataset_len(uint16_t id)
{
	switch (id) {
	case PTPMGMT_DEFAULT_DATA_SET:
		return 20;
	case PTPMGMT_CURRENT_DATA_SET:
		return 18;
	case PTPMGMT_PORT_DATA_SET:
		return 26;
	case PTPMGMT_TIME_STATUS_NP:
		return 50;
	default:
		return 0;
	}
}

size_t ptpmgmt_get(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq, uint32_t pid)
{
	size_t dlen = dataset_len(id), len = PTPMGMT_MSG_LEN + PTPMGMT_TLV_LEN + dlen;

	if (!dlen || cap < len)
		return 0;
	memset(buf, 0, len);
	buf[0] = MSG_MANAGEMENT;
	buf[1] = PTP_MAJOR;
	put16(buf + 2, (uint16_t)len);
	/* sourcePortIdentity: pmc puts its pid's high half in the clock
	 * identity's last two bytes and its low half in the port number */
	buf[26] = (uint8_t)(pid >> 24);
	buf[27] = (uint8_t)(pid >> 16);
	put16(buf + 28, (uint16_t)pid);
	put16(buf + 30, seq);
	buf[32] = 4;			/* control: management */
	buf[33] = 0x7f;
	memset(buf + 34, 0xff, 10);	/* every clock, every port */
	buf[46] = ACTION_GET;		/* boundary hops 0 (-b 0) */
	put16(buf + 48, TLV_MANAGEMENT);
	put16(buf + 50, (uint16_t)(2 + dlen));
	put16(buf + 52, id);
	return len;
}

int ptpmgmt_parse(const uint8_t *buf, size_t len, struct ptpmgmt_reply *r)
{
	size_t mlen, tlen;
	uint16_t type;

	memset(r, 0, sizeof(*r));
	if (len < PTPMGMT_MSG_LEN + PTPMGMT_TLV_LEN || (buf[0] & 0x0f) != MSG_MANAGEMENT ||
	    (buf[1] & 0x0f) != PTP_MAJOR || (buf[46] & 0x0f) != ACTION_RESPONSE)
		return -EBADMSG;
	mlen = get16(buf + 2);
	if (mlen > len || mlen < PTPMGMT_MSG_LEN + PTPMGMT_TLV_LEN)
		return -EBADMSG;
	r->port = get16(buf + 28);
	r->seq = get16(buf + 30);
	type = get16(buf + 48);
	tlen = get16(buf + 50);
	if (tlen < 2 || PTPMGMT_MSG_LEN + 4 + tlen > mlen)
		return -EBADMSG;
	if (type == TLV_ERROR_STATUS) {
		if (tlen < 8)
			return -EBADMSG;
		r->error = get16(buf + 52);
		r->id = get16(buf + 54);
		return r->error ? 0 : -EBADMSG;
	}
	if (type != TLV_MANAGEMENT)
		return -EBADMSG;
	r->id = get16(buf + 52);
	r->data = buf + 54;
	r->len = tlen - 2;
	return 0;
}

/* Checks that @r answers @id with a dataset of at least its size. */
static int check(const struct ptpmgmt_reply *r, uint16_t id)
{
	return r->id == id && !r->error && r->len >= dataset_len(id) ? 0 : -EBADMSG;
}

int ptpmgmt_default_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_default_ds *d)
{
	if (check(r, PTPMGMT_DEFAULT_DATA_SET))
		return -EBADMSG;
	d->nports = get16(r->data + 2);
	memcpy(d->clock_id, r->data + 10, sizeof(d->clock_id));
	return 0;
}

int ptpmgmt_current_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_current_ds *d)
{
	if (check(r, PTPMGMT_CURRENT_DATA_SET))
		return -EBADMSG;
	d->steps_removed = get16(r->data);
	/* TimeInterval: ns << 16, truncated toward 0 here */
	d->offset_ns = get64(r->data + 2) / 65536;
	d->delay_ns = get64(r->data + 10) / 65536;
	return 0;
}

int ptpmgmt_port_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_port_ds *d)
{
	if (check(r, PTPMGMT_PORT_DATA_SET))
		return -EBADMSG;
	d->port = get16(r->data + 8);
	d->state = r->data[10];
	return 0;
}

int ptpmgmt_time_status(const struct ptpmgmt_reply *r, struct ptpmgmt_time_status *d)
{
	if (check(r, PTPMGMT_TIME_STATUS_NP))
		return -EBADMSG;
	d->master_offset_ns = get64(r->data);
	d->ingress_ns = get64(r->data + 8);
	/* then rate offset, phase change (4 + 4), time base (2), last
	 * phase change (12) */
	d->gm_present = (int32_t)get32(r->data + 38);
	memcpy(d->gm_id, r->data + 42, sizeof(d->gm_id));
	return 0;
}

const char *ptpmgmt_port_state_name(unsigned int state)
{
	static const char *const names[] = {
		"UNKNOWN", "INITIALIZING", "FAULTY", "DISABLED", "LISTENING", "PRE_MASTER",
		"MASTER", "PASSIVE", "UNCALIBRATED", "SLAVE", "GRAND_MASTER",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN";
}

void ptpmgmt_clock_id_text(const uint8_t id[8], char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x%02x.%02x%02x.%02x%02x%02x", id[0], id[1], id[2], id[3],
		 id[4], id[5], id[6], id[7]);
}

/* Returns the index of the first port of @v in @state, or -1. */
static int port_in(const struct ptpmgmt_view *v, uint8_t state)
{
	for (unsigned int i = 0; i < v->nports; i++)
		if (v->ports[i].state == state)
			return (int)i;
	return -1;
}

void ptpmgmt_state(const struct ptpmgmt_view *v, struct tsync_clock_state *out)
{
	int slave = port_in(v, PTPMGMT_PS_SLAVE);
	int master = port_in(v, PTPMGMT_PS_MASTER);
	bool own_gm = !memcmp(v->ts.gm_id, v->dds.clock_id, sizeof(v->dds.clock_id));
	int64_t delay = v->cds.delay_ns > 0 ? v->cds.delay_ns : 0;

	if (master < 0)
		master = port_in(v, PTPMGMT_PS_GRAND_MASTER);
	out->source = TSYNC_CLOCK_SRC_PTP4L;
	out->stratum = v->cds.steps_removed;
	out->offset_ns = v->ts.master_offset_ns;
	out->bound_ns = TSYNC_CLOCK_BOUND_UNKNOWN;
	ptpmgmt_clock_id_text(v->ts.gm_id, out->master, sizeof(out->master));
	if (slave >= 0 && v->ts.gm_present) {
		out->synced = 1;
		out->bound_ns = (uint64_t)llabs(v->ts.master_offset_ns) + (uint64_t)delay;
		snprintf(out->detail, sizeof(out->detail), "port %u SLAVE",
			 v->ports[slave].port);
	} else if (slave < 0 && master >= 0 && own_gm) {
		out->synced = 1;
		out->offset_ns = 0;
		out->bound_ns = 0;
		snprintf(out->detail, sizeof(out->detail), "grandmaster, port %u %s",
			 v->ports[master].port, ptpmgmt_port_state_name(v->ports[master].state));
	} else {
		out->synced = 0;
		snprintf(out->detail, sizeof(out->detail), "not synchronized: %s%s",
			 v->nports ? "port state " : "no port answered",
			 v->nports ? ptpmgmt_port_state_name(v->ports[0].state) : "");
		if (slave >= 0)
			snprintf(out->detail, sizeof(out->detail),
				 "not synchronized: SLAVE without a grandmaster");
	}
}
