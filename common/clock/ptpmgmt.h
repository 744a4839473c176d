/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linuxptp's management messages, as pmc sends them to ptp4l's UNIX
 * socket (`pmc -u -b 0 'GET TIME_STATUS_NP'`): IEEE 1588 management
 * messages, GET and its RESPONSE, with linuxptp's own TIME_STATUS_NP.
 * Debian has no library for this (linuxptp ships only programs), so the
 * encoding is here, pure: no I/O, byte for byte what pmc writes (its
 * GETs carry a zeroed dataset of the answer's size). All fields are
 * big-endian; TimeInterval values are ns scaled by 2^16.
 *
 *   header (34)  u8 transportSpecific|messageType (0x0d)  u8 version (2)
 *                be16 messageLength  u8 domain  u8 0  2 flags  s64 correction
 *                be32 0  sourcePortIdentity (8 + be16)  be16 sequenceId
 *                u8 control (4)  s8 logMessageInterval (0x7f)
 *   management   targetPortIdentity (all ones: every port)  u8 startingBoundaryHops
 *   (14)         u8 boundaryHops  u8 action (GET 0, RESPONSE 2)  u8 0
 *   TLV          be16 type (1 MANAGEMENT, 2 MANAGEMENT_ERROR_STATUS)  be16 length
 *                be16 managementId, data (ERROR_STATUS: be16 error, be16 id, 4 bytes)
 */
#ifndef TSYNC_COMMON_PTPMGMT_H
#define TSYNC_COMMON_PTPMGMT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define PTPMGMT_HDR_LEN			34
#define PTPMGMT_MSG_LEN			48	/* header and management fields */
#define PTPMGMT_TLV_LEN			6	/* type, length, managementId */
#define PTPMGMT_BUF_MAX			1500	/* linuxptp's message buffer */

/* The managementIds asked (linuxptp's MID_*). */
#define PTPMGMT_DEFAULT_DATA_SET	0x2000
#define PTPMGMT_CURRENT_DATA_SET	0x2001
#define PTPMGMT_PORT_DATA_SET		0x2004
#define PTPMGMT_TIME_STATUS_NP		0xC000

/* Port states (IEEE 1588; 10 is linuxptp's GRAND_MASTER). */
#define PTPMGMT_PS_MASTER		6
#define PTPMGMT_PS_SLAVE		9
#define PTPMGMT_PS_GRAND_MASTER		10

#define PTPMGMT_MAX_PORTS		16	/* ports whose state is read */

/* A RESPONSE, pointing into the buffer it was parsed from. */
struct ptpmgmt_reply {
	uint16_t seq;
	uint16_t id;			/* managementId */
	uint16_t error;			/* ERROR_STATUS's managementErrorId; 0: none */
	uint16_t port;			/* sourcePortIdentity's port number */
	const uint8_t *data;		/* the dataset, @len bytes */
	size_t len;
};

struct ptpmgmt_default_ds {
	uint16_t nports;
	uint8_t clock_id[8];
};

struct ptpmgmt_current_ds {
	uint16_t steps_removed;
	int64_t offset_ns;		/* offsetFromMaster */
	int64_t delay_ns;		/* meanPathDelay */
};

struct ptpmgmt_port_ds {
	uint16_t port;
	uint8_t state;
};

struct ptpmgmt_time_status {
	int64_t master_offset_ns;
	int64_t ingress_ns;
	int32_t gm_present;
	uint8_t gm_id[8];
};

/* What one reading of ptp4l gathered. */
struct ptpmgmt_view {
	struct ptpmgmt_default_ds dds;
	struct ptpmgmt_current_ds cds;
	struct ptpmgmt_time_status ts;
	struct ptpmgmt_port_ds ports[PTPMGMT_MAX_PORTS];
	unsigned int nports;		/* of ports[] */
};

/*
 * Writes into @buf (@cap bytes) the GET of managementId @id with sequence
 * number @seq from a client whose sourcePortIdentity pmc derives from its
 * process id @pid. Returns the length, or 0 if @id is not one of the
 * above or @cap is too small.
 */
size_t ptpmgmt_get(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq, uint32_t pid);

/*
 * Parses a message of @len bytes into @r: a management RESPONSE with a
 * MANAGEMENT or MANAGEMENT_ERROR_STATUS TLV. Returns 0, -EBADMSG when it
 * is no such message or a length does not hold.
 */
int ptpmgmt_parse(const uint8_t *buf, size_t len, struct ptpmgmt_reply *r);

/* Decode the dataset of @r (its id checked). Return 0 or -EBADMSG. */
int ptpmgmt_default_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_default_ds *d);
int ptpmgmt_current_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_current_ds *d);
int ptpmgmt_port_ds(const struct ptpmgmt_reply *r, struct ptpmgmt_port_ds *d);
int ptpmgmt_time_status(const struct ptpmgmt_reply *r, struct ptpmgmt_time_status *d);

/*
 * Turns @v into the daemon part of @out (source, synced, offset, bound,
 * stratum, master, detail): synchronized when a port is SLAVE with the
 * grandmaster present (bound: |master offset| + mean path delay, the
 * whole delay for an asymmetry nobody measured), or when this clock is
 * the grandmaster and a port is MASTER (bound 0: it is the reference).
 */
void ptpmgmt_state(const struct ptpmgmt_view *v, struct tsync_clock_state *out);

/* Returns the name of port state @state ("SLAVE"), or "UNKNOWN". */
const char *ptpmgmt_port_state_name(unsigned int state);

/* Writes clock identity @id as pmc prints it: "001122.fffe.334455". */
void ptpmgmt_clock_id_text(const uint8_t id[8], char *buf, size_t len);

#endif
