/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsync's own records inside ftrace ring buffers.
 *
 * tsync writes two kinds of records with trace_marker_raw, which the kernel
 * stores as ftrace "raw_data" events: field `id` (unsigned int, the first 4
 * bytes written) then `buf` (the rest). Both are in the writer's native byte
 * order, as the ring buffer is; trace.dat files are written in that order
 * too, and the plugin reads them with the file's endianness.
 *
 *   probe marker   one per timestamp of the marker timestamp source: which
 *                  round, which probe, which direction, which CPU.
 *   round record   one per sync round per CPU, written into the recorded
 *                  instances so users see in their timeline where and how
 *                  well the clocks were aligned.
 *   clock record   the writer's own time daemon as it was read for a
 *                  round of the external method (ptp4l or chrony: is it
 *                  synchronized, its offset and bound), so that each file
 *                  says what its clock's discipline was while it was
 *                  recorded.
 *
 * Records are recognized by id == TSYNC_RAW_ID *and* magic == TSYNC_REC_MAGIC
 * *and* a known version and type with the exact expected length; anything
 * else is someone else's raw_data and is printed as before.
 */
#ifndef TSYNC_RECORD_H
#define TSYNC_RECORD_H

#include <stdint.h>

#define TSYNC_RAW_ID		0x74737963u	/* "tsyc" */
#define TSYNC_REC_MAGIC		0x5453594eu	/* "TSYN" */
#define TSYNC_REC_VERSION	1

enum tsync_rec_type {
	TSYNC_REC_PROBE = 1,
	TSYNC_REC_ROUND = 2,
	TSYNC_REC_CLOCK = 3,
};

/* Directions of a probe timestamp (t1..t4 of the sync round). */
enum tsync_probe_dir {
	TSYNC_DIR_HOST_SEND = 1,	/* t1 */
	TSYNC_DIR_GUEST_RECV = 2,	/* t2 */
	TSYNC_DIR_GUEST_SEND = 3,	/* t3 */
	TSYNC_DIR_HOST_RECV = 4,	/* t4 */
};

struct tsync_rec_hdr {
	uint32_t id;		/* TSYNC_RAW_ID: the raw_data "id" field */
	uint32_t magic;		/* TSYNC_REC_MAGIC */
	uint8_t version;	/* TSYNC_REC_VERSION */
	uint8_t type;		/* enum tsync_rec_type */
	uint16_t len;		/* whole record length, header included */
} __attribute__((packed));

struct tsync_rec_probe {
	struct tsync_rec_hdr hdr;
	uint32_t round;		/* round id (unique per session) */
	uint32_t seq;		/* probe sequence number within the round */
	uint32_t cpu;		/* CPU being synced (guest CPU number) */
	uint8_t dir;		/* enum tsync_probe_dir */
	uint8_t pad[3];
} __attribute__((packed));

#define TSYNC_REC_PEER_MAX 32

struct tsync_rec_round {
	struct tsync_rec_hdr hdr;
	uint32_t round;		/* round id */
	uint32_t cpu;		/* guest CPU the round synced */
	int64_t offset_ns;	/* host minus guest */
	uint64_t error_ns;	/* error bound */
	uint64_t delay_ns;	/* smallest round-trip delay */
	uint32_t used;		/* probes used by the estimator */
	uint32_t sent;		/* probes sent */
	char peer[TSYNC_REC_PEER_MAX];	/* the other side's name, NUL-padded */
} __attribute__((packed));

#define TSYNC_REC_DAEMON_MAX 8
#define TSYNC_REC_TEXT_MAX 64
/* CLOCK's bound_ns when the daemon reports none. */
#define TSYNC_REC_BOUND_UNKNOWN UINT64_MAX

struct tsync_rec_clock {
	struct tsync_rec_hdr hdr;
	uint8_t synced;		/* 1: the daemon says it is synchronized */
	uint8_t pad;
	uint16_t stratum;	/* chrony: stratum; ptp4l: steps removed */
	int32_t status;		/* 0, or -errno why the daemon was not read */
	int64_t offset_ns;	/* the daemon's last offset from its reference */
	uint64_t bound_ns;	/* its bound, or TSYNC_REC_BOUND_UNKNOWN */
	char daemon[TSYNC_REC_DAEMON_MAX];	/* "ptp4l", "chrony", "none" */
	char peer[TSYNC_REC_PEER_MAX];		/* the round's other side */
	char master[TSYNC_REC_TEXT_MAX];	/* grandmaster / reference */
	char detail[TSYNC_REC_TEXT_MAX];	/* port state / leap status */
} __attribute__((packed));	/* every text NUL-padded, maybe unterminated */

/* Fills @h for a tsync record of @type that is @len bytes long. */
static inline void tsync_rec_hdr_init(struct tsync_rec_hdr *h,
				      enum tsync_rec_type type, uint16_t len)
{
	h->id = TSYNC_RAW_ID;
	h->magic = TSYNC_REC_MAGIC;
	h->version = TSYNC_REC_VERSION;
	h->type = type;
	h->len = len;
}

#endif
