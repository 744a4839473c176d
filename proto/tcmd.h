/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd's agent protocol ("v3" messages and the PTP time-sync
 * sub-messages): encoding and validating decoding, both directions. Pure
 * code: no I/O, no allocation, no globals. The byte layouts are described
 * in Documentation/protocol.md ("trace-cmd's agent protocol").
 *
 * Every message is a 12-byte header, a fixed per-command struct and a
 * payload, at most TCMD_MSG_MAX bytes in all:
 *
 *   be32 size (whole message)  be32 cmd  be32 cmd_size (struct bytes)
 *
 * A struct longer than this build knows is accepted and its extra bytes
 * skipped (trace-cmd does the same); a shorter one is refused. Decoded
 * messages point into the caller's buffer: keep it while using them.
 *
 * Encoders write one whole message into the caller's buffer, so a sender
 * can put it on the wire with one write. They return its length, -ENOSPC
 * if @cap is too small, or -EINVAL for values that cannot be sent (with no
 * reason: the caller chose them). Decoders return 0, or -EBADMSG with a
 * reason in @err (which may be NULL).
 */
#ifndef TSYNC_PROTO_TCMD_H
#define TSYNC_PROTO_TCMD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TCMD_MSG_MAX		8192u	/* whole message, header included */
#define TCMD_HDR_LEN		12u
#define TCMD_DATA_MAX		(TCMD_MSG_MAX - TCMD_HDR_LEN)	/* SEND_DATA */
#define TCMD_PNAME_LEN		16u	/* time-sync protocol name, NUL incl. */
#define TCMD_VSOCK_PORT		823u	/* trace-cmd's default agent port */

/* TRACE_REQ / TRACE_RESP flags. */
#define TCMD_FL_USE_FIFOS	0x1u

/* Time-sync protocol names. */
#define TCMD_PROTO_NONE		"none"	/* the generic PROBE/STOP messages */
#define TCMD_PROTO_PTP		"ptp"
#define TCMD_PROTO_KVM		"kvm"	/* KVM's TSC offsets (proto/tcmd_kvm.c) */

/* PTP: probes per sample, and the PROBES message's fixed layout. */
#define TCMD_PTP_LOOP		339u
#define TCMD_PTP_SAMPLES	(2u * TCMD_PTP_LOOP)
#define TCMD_PTP_PROBES_LEN	(8u + 12u * TCMD_PTP_SAMPLES)	/* 8144 */
/* PTP START flags. */
#define TCMD_PTP_FL_FASTEST	0x1u	/* use the fastest probe */
#define TCMD_PTP_FL_MARKER	0x2u	/* stamps from trace_marker_raw */

enum tcmd_cmd {
	TCMD_CLOSE = 0,
	TCMD_TINIT = 1,		/* `trace-cmd listen` only */
	TCMD_RINIT = 2,		/* `trace-cmd listen` only */
	TCMD_SEND_DATA = 3,
	TCMD_FIN_DATA = 4,
	TCMD_NOT_SUPP = 5,
	TCMD_TRACE_REQ = 6,
	TCMD_TRACE_RESP = 7,
	TCMD_CLOSE_RESP = 8,
	TCMD_TIME_SYNC = 9,
	TCMD_TRACE_PROXY = 10,
	TCMD_CONT = 11,
	TCMD_NR_CMDS
};

/* TIME_SYNC ids of proto "none": the host asks for one sample, or stops. */
enum tcmd_tsync_id {
	TCMD_TSYNC_PROBE = 1,	/* payload: native u16 CPU */
	TCMD_TSYNC_STOP = 2,
};

/* TIME_SYNC ids of proto "ptp". */
enum tcmd_ptp_id {
	TCMD_PTP_START = 1,	/* be32 series, be32 flags */
	TCMD_PTP_PROBE = 2,	/* be32 count */
	TCMD_PTP_PROBES = 3,	/* be32 series, be32 count, 678 samples */
	TCMD_PTP_OFFSET = 4,	/* be64 ts, be64 offset */
	TCMD_PTP_END = 5,
};

/* TIME_SYNC ids of proto "kvm": the guest's marker timestamp, then the
 * host's answer from KVM's debugfs. Both carry struct tcmd_kvm_msg as
 * TCMD_KVM_MSG_LEN bytes: four int64 in the sender's byte order
 * (trace-cmd sends its struct as it lies in memory), ts, offset,
 * scaling, frac; a REQUEST's last three are 0, a RESPONSE repeats ts. */
enum tcmd_kvm_id {
	TCMD_KVM_REQUEST = 1,
	TCMD_KVM_RESPONSE = 2,
};
#define TCMD_KVM_MSG_LEN	32u

struct tcmd_kvm_msg {
	int64_t ts;		/* the guest's marker, its trace clock (x86-tsc) */
	int64_t offset;		/* RESPONSE: -tsc-offset */
	int64_t scaling;	/* RESPONSE: the ratio, or 1 */
	int64_t frac;		/* RESPONSE: the fraction bits, or 0 */
};

struct tcmd_err {
	char reason[160];
};

struct tcmd_hdr {
	uint32_t size;		/* whole message */
	uint32_t cmd;
	uint32_t cmd_size;
};

/*
 * A list of NUL-terminated strings inside a decoded message: @count
 * strings, back to back in @len bytes from @buf. tcmd_strs_next() walks it.
 */
struct tcmd_strs {
	const char *buf;
	uint32_t len;
	uint32_t count;
};

/* TRACE_REQ and TRACE_PROXY. */
struct tcmd_trace_req {
	uint32_t flags;			/* TCMD_FL_* */
	uint64_t trace_id;		/* the host's trace id */
	int has_args;
	struct tcmd_strs args;		/* argv for the guest's recorder */
	int has_protos;
	struct tcmd_strs protos;	/* time-sync protocols offered */
	uint32_t cpus, siblings;	/* TRACE_PROXY only */
};

struct tcmd_trace_resp {
	uint32_t flags;			/* TCMD_FL_* */
	uint32_t cpus;
	uint32_t page_size;
	uint64_t trace_id;		/* the agent's trace id */
	char proto[TCMD_PNAME_LEN];	/* "" = no time sync */
	uint32_t tsync_port;
	struct tcmd_strs ports;		/* decoded: @cpus decimal ports */
	/* decoded: the struct's bytes beyond the 40 known (trace-cmd skips
	 * them); tsync-agent puts TCMD_TSYNC_TAG there */
	const uint8_t *ext;
	uint32_t ext_len;
};

/* How tsync-agent names itself to a trace-cmd host, in TRACE_RESP's
 * struct beyond trace-cmd's fields (tcmd_resp_tag()), NUL-padded to
 * TCMD_TSYNC_TAG_LEN bytes: trace-cmd's hosts skip a longer struct. */
#define TCMD_TSYNC_TAG		"tsync-agent"
#define TCMD_TSYNC_TAG_LEN	16u

/* One PTP sample slot of PROBES. */
struct tcmd_ptp_sample {
	int64_t ts;
	uint32_t id;			/* probe count; 0 = empty slot */
};

struct tcmd_time_sync {
	char proto[TCMD_PNAME_LEN];
	uint32_t id;			/* enum tcmd_tsync_id / tcmd_ptp_id */
	const uint8_t *payload;		/* also for protocols not known here */
	uint32_t len;
	union {
		uint16_t cpu;				/* none PROBE */
		struct { uint32_t series, flags; } start;	/* ptp START */
		uint32_t count;				/* ptp PROBE */
		struct { uint32_t series, count; } probes;	/* ptp PROBES */
		struct { int64_t ts, offset; } offset;	/* ptp OFFSET */
		struct tcmd_kvm_msg kvm;		/* kvm REQUEST, RESPONSE */
	};
};

struct tcmd_msg {
	uint32_t cmd;			/* enum tcmd_cmd */
	const uint8_t *payload;		/* after the command struct */
	uint32_t payload_len;
	union {
		struct tcmd_trace_req req;	/* TRACE_REQ, TRACE_PROXY */
		struct tcmd_trace_resp resp;	/* TRACE_RESP */
		struct tcmd_time_sync ts;	/* TIME_SYNC */
		const char *reason;		/* NOT_SUPP: NULL or text */
	};
};

/* Returns the name of @cmd ("TRACE_REQ"), or "UNKNOWN". */
const char *tcmd_cmd_name(uint32_t cmd);
/* Returns the struct bytes of @cmd (0 for none or unknown commands). */
uint32_t tcmd_cmd_struct_len(uint32_t cmd);

/*
 * Decodes the header in the first TCMD_HDR_LEN bytes of @buf and checks
 * it: size within [header + struct, TCMD_MSG_MAX], a known command, its
 * struct within the message and not shorter than the command's. The
 * caller then reads @h->size bytes in all and calls tcmd_decode().
 */
int tcmd_hdr_decode(const uint8_t *buf, struct tcmd_hdr *h,
		    struct tcmd_err *err);
/*
 * Decodes the whole message in @buf (@len bytes, header included, which
 * must equal the header's size) into @m, checking every field: payload
 * sizes, counts, NUL termination, decimal ports, protocol name lengths.
 */
int tcmd_decode(const uint8_t *buf, size_t len, struct tcmd_msg *m,
		struct tcmd_err *err);

/* Returns the string after @prev in @s (the first if @prev is NULL), or
 * NULL after the last. */
const char *tcmd_strs_next(const struct tcmd_strs *s, const char *prev);
/* Fills @ports with the @r->cpus ports of a decoded TRACE_RESP; returns 0,
 * or -ENOSPC if @n is smaller. */
int tcmd_resp_ports(const struct tcmd_trace_resp *r, uint32_t *ports,
		    size_t n);
/* Reads sample slot @i (< TCMD_PTP_SAMPLES) of a decoded ptp PROBES. */
void tcmd_ptp_sample_get(const struct tcmd_time_sync *t, unsigned int i,
			 struct tcmd_ptp_sample *s);

/* CLOSE, FIN_DATA, CLOSE_RESP, CONT and a bare NOT_SUPP. */
ssize_t tcmd_enc_simple(uint8_t *buf, size_t cap, uint32_t cmd);
/* NOT_SUPP with @reason (NULL: none) as its payload, cut to fit; trace-cmd
 * ignores the payload, tsync shows it. */
ssize_t tcmd_enc_not_supp(uint8_t *buf, size_t cap, const char *reason);
/* SEND_DATA with 1..TCMD_DATA_MAX bytes. */
ssize_t tcmd_enc_send_data(uint8_t *buf, size_t cap, const void *data,
			   size_t len);
/*
 * TRACE_REQ: @argc strings of @argv as ARGS (none if @argc is 0) and the
 * NULL-terminated @protos as TSYNC_PROTOS (none if NULL).
 */
ssize_t tcmd_enc_trace_req(uint8_t *buf, size_t cap, uint32_t flags,
			   uint64_t trace_id, int argc,
			   const char *const *argv, const char *const *protos);
/* TRACE_RESP from @r (its @ports ignored) and @r->cpus @ports. */
ssize_t tcmd_enc_trace_resp(uint8_t *buf, size_t cap,
			    const struct tcmd_trace_resp *r,
			    const uint32_t *ports);
/*
 * Appends TCMD_TSYNC_TAG to the struct of the TRACE_RESP of @len bytes
 * in @buf (from tcmd_enc_trace_resp()), moving its ports after it.
 * Returns the new length, -ENOSPC, or -EINVAL if @buf holds no TRACE_RESP
 * of @len bytes with a struct of trace-cmd's length.
 */
ssize_t tcmd_resp_tag(uint8_t *buf, size_t cap, size_t len);
/* Returns 1 if decoded TRACE_RESP @r carries TCMD_TSYNC_TAG, else 0. */
int tcmd_resp_tagged(const struct tcmd_trace_resp *r);
/* TIME_SYNC of @proto (< TCMD_PNAME_LEN chars), @id, any payload. */
ssize_t tcmd_enc_time_sync(uint8_t *buf, size_t cap, const char *proto,
			   uint32_t id, const void *payload, size_t len);
/* The typed TIME_SYNC messages. */
ssize_t tcmd_enc_tsync_probe(uint8_t *buf, size_t cap, uint16_t cpu);
ssize_t tcmd_enc_tsync_stop(uint8_t *buf, size_t cap);
ssize_t tcmd_enc_ptp_start(uint8_t *buf, size_t cap, uint32_t series,
			   uint32_t flags);
ssize_t tcmd_enc_ptp_probe(uint8_t *buf, size_t cap, uint32_t count);
ssize_t tcmd_enc_ptp_end(uint8_t *buf, size_t cap);
ssize_t tcmd_enc_ptp_offset(uint8_t *buf, size_t cap, int64_t ts,
			    int64_t offset);
/*
 * kvm REQUEST or RESPONSE (@id) carrying @k. -EINVAL for another id, a
 * negative ts, or a RESPONSE whose scaling is below 1 or frac outside
 * 0..63.
 */
ssize_t tcmd_enc_kvm(uint8_t *buf, size_t cap, uint32_t id, const struct tcmd_kvm_msg *k);
/* Decodes and checks the payload of a kvm TIME_SYNC (tcmd_decode() calls
 * it): exactly TCMD_KVM_MSG_LEN bytes, a known id, the values as
 * tcmd_enc_kvm() takes them. Returns 0 or -EBADMSG with @err. */
int tcmd_dec_kvm(struct tcmd_time_sync *t, struct tcmd_err *err);
/* PROBES: @count as sent, and all TCMD_PTP_SAMPLES slots of @samples. */
ssize_t tcmd_enc_ptp_probes(uint8_t *buf, size_t cap, uint32_t series,
			    uint32_t count,
			    const struct tcmd_ptp_sample *samples);

#endif
