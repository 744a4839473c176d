// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-agent names itself to a trace-cmd host (proto/tcmd.h): 16 bytes
 * "tsync-agent" after TRACE_RESP's 40-byte struct, cmd_size counting
 * them. trace-cmd's hosts (3.1.6 to 3.4) read the struct they know and
 * skip the rest, so they see a trace-cmd agent; tsync-host sees
 * tsync-agent and can speak tsync's own protocol with it instead.
 */
#include <errno.h>
#include <string.h>

#include "proto/tcmd.h"

#define RESP_STRUCT_LEN 40u

static uint32_t rd32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void wr32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* Appends the tag; see tcmd.h. */
ssize_t tcmd_resp_tag(uint8_t *buf, size_t cap, size_t len)
{
	const size_t at = TCMD_HDR_LEN + RESP_STRUCT_LEN;

	if (len < at || len > TCMD_MSG_MAX || rd32(buf) != len ||
	    rd32(buf + 4) != TCMD_TRACE_RESP || rd32(buf + 8) != RESP_STRUCT_LEN)
		return -EINVAL;
	if (len + TCMD_TSYNC_TAG_LEN > TCMD_MSG_MAX)
		return -EINVAL;
	if (len + TCMD_TSYNC_TAG_LEN > cap)
		return -ENOSPC;
	memmove(buf + at + TCMD_TSYNC_TAG_LEN, buf + at, len - at);
	memset(buf + at, 0, TCMD_TSYNC_TAG_LEN);
	memcpy(buf + at, TCMD_TSYNC_TAG, sizeof(TCMD_TSYNC_TAG) - 1);
	wr32(buf, (uint32_t)(len + TCMD_TSYNC_TAG_LEN));
	wr32(buf + 8, RESP_STRUCT_LEN + TCMD_TSYNC_TAG_LEN);
	return (ssize_t)(len + TCMD_TSYNC_TAG_LEN);
}

/* Whether a decoded TRACE_RESP carries the tag; see tcmd.h. */
int tcmd_resp_tagged(const struct tcmd_trace_resp *r)
{
	static const uint8_t tag[TCMD_TSYNC_TAG_LEN] = TCMD_TSYNC_TAG;

	return r->ext && r->ext_len >= TCMD_TSYNC_TAG_LEN &&
	       !memcmp(r->ext, tag, TCMD_TSYNC_TAG_LEN);
}
