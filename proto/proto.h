/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tsync wire protocol: message layouts, encoding and validating
 * decoding. Pure code: no I/O, no clocks, no globals. The byte layouts and
 * the rules are specified in Documentation/protocol.md.
 *
 * Every message is a 12-byte header followed by a payload:
 *
 *   be32 magic (TSYNC_MAGIC)  u8 version  u8 type  be16 flags  be32 length
 *
 * Payload fields are big-endian and explicitly sized. Strings are encoded
 * as be16 length (NUL included) + bytes, the last byte NUL, no other NUL,
 * printable ASCII. A decoder ignores payload bytes after the fields it
 * knows (so newer peers can append fields); encoders of this version never
 * emit any.
 *
 * Decoded messages own their variable parts (stamps, option words, CPU
 * stats, metadata bytes); tsync_msg_free() releases them. Messages built by hand
 * for encoding point to caller memory and must not be passed to
 * tsync_msg_free() unless those parts were malloc()ed.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): proto/
 *   proto.c, proto.h  tsync's wire protocol: message table, layouts, encoding, version
 *   decode.c          the validating decoder of everything a peer sends
 *   tcmd.c, tcmd.h    trace-cmd's agent protocol ("v3" messages, PTP sub-messages)
 *   tcmd_kvm.c        trace-cmd's kvm time-sync sub-messages (declared in tcmd.h)
 *   tcmd_tag.c        tsync-agent's name in trace-cmd's TRACE_RESP (declared in tcmd.h)
 *   tsync_record.h    tsync's own records in ftrace ring buffers (the plugin reads it)
 */
#ifndef TSYNC_PROTO_H
#define TSYNC_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define TSYNC_MAGIC			0x54535950u	/* "TSYP" */
#define TSYNC_HDR_LEN			12
#define TSYNC_MSG_MAX			(1u << 20)	/* payload bytes */
/* Maximum payload of the small fixed-layout messages (room to grow). */
#define TSYNC_SMALL_MAX			1024u

/*
 * Protocol versions this build speaks. The agent picks the highest version
 * both sides speak (tsync_proto_negotiate()), the host checks that choice
 * (tsync_proto_check_choice()), and both then refuse a message in another
 * version (tsync_decode_ctx.version). The encoders write version 1
 * layouts only: raising MAX means teaching them a new layout, and senders
 * then set tsync_msg.version (and the probe encoder its version) to the
 * negotiated one.
 */
#define TSYNC_PROTO_VERSION_MIN		1
#define TSYNC_PROTO_VERSION_MAX		1

/* Field limits. String limits count the terminating NUL. */
#define TSYNC_NAME_MAX			65	/* host/agent/system names */
#define TSYNC_CLOCK_NAME_MAX		32	/* trace clock names */
#define TSYNC_REASON_MAX		512	/* ERROR reason */
#define TSYNC_MAX_CLOCKS		32	/* clocks in SESSION_REPLY */
#define TSYNC_MAX_PROBES		4096	/* probes per sync round */
#define TSYNC_MAX_CPUS			8192	/* CPUs of one side */
#define TSYNC_MAX_ARGS			4096	/* option words in TRACE_START (1024
						 * events with a filter each) */
#define TSYNC_ARG_MAX			4096	/* one option word */

/* TRACE_START flags. */
#define TSYNC_TRACE_FL_ARGS		0x1u	/* the guest's record options follow */
#define TSYNC_SECRET_LEN		32
#define TSYNC_NONCE_LEN			32
#define TSYNC_MAC_LEN			32
/* Largest META_CHUNK data part an encoder may put in one message. */
#define TSYNC_META_CHUNK_MAX		(TSYNC_MSG_MAX - 4096u)

/* Fixed payload lengths (the minimum of every message type). */
#define TSYNC_HELLO_LEN			84
#define TSYNC_HELLO_REPLY_LEN		72
#define TSYNC_AUTH_LEN			32
#define TSYNC_SYNC_READY_LEN		12
#define TSYNC_PROBE_LEN			8
#define TSYNC_SYNC_END_LEN		4
#define TSYNC_SYNC_RESULT_LEN		40
#define TSYNC_TRACE_STARTED_LEN		4
#define TSYNC_STREAM_END_LEN		12
#define TSYNC_STAMP_LEN			20	/* one SYNC_STAMPS entry */
#define TSYNC_CPU_STATS_LEN		36	/* one TRACE_STOPPED entry */
#define TSYNC_CLOCK_STATE_LEN		48	/* CLOCK_STATE's fixed fields */
/* A whole PROBE or PROBE_REPLY message, header included. */
#define TSYNC_PROBE_MSG_LEN		(TSYNC_HDR_LEN + TSYNC_PROBE_LEN)

/*
 * The message table: X(NAME, id, min payload, max payload). Used for the
 * type enum, names, and the length checks of encoder and decoder.
 * Minimums: fixed fields plus each string at its shortest (3 bytes: be16
 * length 1 and a NUL) and each count at zero.
 */
#define TSYNC_MSG_TYPES(X) \
	X(HELLO,	  1, TSYNC_HELLO_LEN,		TSYNC_SMALL_MAX) \
	X(HELLO_REPLY,	  2, TSYNC_HELLO_REPLY_LEN,	TSYNC_SMALL_MAX) \
	X(AUTH,		  3, TSYNC_AUTH_LEN,		TSYNC_SMALL_MAX) \
	X(ERROR,	  4, 4 + 3,			TSYNC_SMALL_MAX) \
	X(BYE,		  5, 0,				TSYNC_SMALL_MAX) \
	X(SESSION_REQ,	 16, 8 + 3,			TSYNC_SMALL_MAX) \
	X(SESSION_REPLY, 17, 60 + 3 + 3 + 2,		4096) \
	X(SYNC_START,	 32, 13 + 3,			TSYNC_SMALL_MAX) \
	X(SYNC_READY,	 33, TSYNC_SYNC_READY_LEN,	TSYNC_SMALL_MAX) \
	X(PROBE,	 34, TSYNC_PROBE_LEN,		TSYNC_SMALL_MAX) \
	X(PROBE_REPLY,	 35, TSYNC_PROBE_LEN,		TSYNC_SMALL_MAX) \
	X(SYNC_END,	 36, TSYNC_SYNC_END_LEN,	TSYNC_SMALL_MAX) \
	X(SYNC_STAMPS,	 37, 12,			TSYNC_MSG_MAX) \
	X(SYNC_RESULT,	 38, TSYNC_SYNC_RESULT_LEN,	TSYNC_SMALL_MAX) \
	X(TRACE_START,	 48, 8 + 3 + 4,			TSYNC_MSG_MAX) \
	X(TRACE_STARTED, 49, TSYNC_TRACE_STARTED_LEN,	TSYNC_SMALL_MAX) \
	X(TRACE_STOP,	 50, 0,				TSYNC_SMALL_MAX) \
	X(TRACE_STOPPED, 51, 4,				TSYNC_MSG_MAX) \
	X(STREAM_END,	 52, TSYNC_STREAM_END_LEN,	TSYNC_SMALL_MAX) \
	X(META_REQ,	 64, 0,				TSYNC_SMALL_MAX) \
	X(META_CHUNK,	 65, 1 + 3 + 4 + 4,		TSYNC_MSG_MAX) \
	X(META_END,	 66, 0,				TSYNC_SMALL_MAX) \
	X(CLOCK_REQ,	 80, 3,				TSYNC_SMALL_MAX) \
	X(CLOCK_STATE,	 81, TSYNC_CLOCK_STATE_LEN + 3 + 3,	TSYNC_SMALL_MAX)

enum tsync_msg_type {
#define TSYNC_X_ENUM(name, id, min, max) TSYNC_MSG_##name = id,
	TSYNC_MSG_TYPES(TSYNC_X_ENUM)
#undef TSYNC_X_ENUM
};

/*
 * Decoder/encoder rejections: distinct negative codes, below every -errno
 * so callers can tell them apart (tsync_perr_is_proto()). Functions may
 * also return -ENOMEM (decoder) or -ENOSPC (encoder buffer too small).
 */
enum tsync_perr {
	TSYNC_PERR_BAD_MAGIC = -1000,	/* header magic is not TSYNC_MAGIC */
	TSYNC_PERR_BAD_VERSION,		/* header version not spoken here */
	TSYNC_PERR_UNKNOWN_TYPE,	/* type not in the table */
	TSYNC_PERR_TOO_SHORT,		/* payload below the type's minimum */
	TSYNC_PERR_TOO_LONG,		/* payload above type/global/ctx max */
	TSYNC_PERR_LENGTH_MISMATCH,	/* payload given != header length */
	TSYNC_PERR_TRUNCATED,		/* payload ends inside a field */
	TSYNC_PERR_COUNT_OVERFLOW,	/* count * element size > payload */
	TSYNC_PERR_COUNT_LIMIT,		/* count above its limit (or zero) */
	TSYNC_PERR_STRING_UNTERMINATED,	/* string's last byte is not NUL */
	TSYNC_PERR_STRING_EMBEDDED_NUL,	/* NUL before the end of a string */
	TSYNC_PERR_STRING_UNPRINTABLE,	/* byte outside 0x20..0x7e */
	TSYNC_PERR_STRING_TOO_LONG,	/* string longer than its field limit */
	TSYNC_PERR_STRING_EMPTY,	/* a name that must not be empty */
	TSYNC_PERR_BAD_CPU,		/* CPU number >= the session's CPUs */
	TSYNC_PERR_BAD_VALUE,		/* enum/range field out of range */
	TSYNC_PERR_NO_COMMON_VERSION,	/* version ranges do not overlap */
	TSYNC_PERR_UNEXPECTED,		/* valid message, not the one expected */
	TSYNC_PERR_PEER_ERROR,		/* the peer sent ERROR */
	TSYNC_PERR_LAST,
};

/*
 * ERROR codes on the wire (also the SYNC_READY status). Receivers accept
 * codes they do not know and show them as numbers.
 */
enum tsync_err_code {
	TSYNC_ERR_NONE = 0,
	TSYNC_ERR_PROTOCOL = 1,		/* malformed message */
	TSYNC_ERR_VERSION = 2,		/* no common protocol version */
	TSYNC_ERR_AUTH = 3,		/* authentication failed/required */
	TSYNC_ERR_UNEXPECTED = 4,	/* message not valid in this state */
	TSYNC_ERR_BAD_REQUEST = 5,	/* invalid value (clock, source...) */
	TSYNC_ERR_NO_CPU = 6,		/* CPU absent or unusable */
	TSYNC_ERR_BUSY = 7,		/* too many sessions, resource busy */
	TSYNC_ERR_LIMIT = 8,		/* request beyond a configured limit */
	TSYNC_ERR_UNSUPPORTED = 9,	/* feature not supported */
	TSYNC_ERR_NO_SESSION = 10,	/* data hello: unknown session/secret */
	TSYNC_ERR_INTERNAL = 11,	/* failure on the sender's side */
	TSYNC_ERR_TIMEOUT = 12,		/* peer too slow */
	TSYNC_ERR_NO_EVENT = 13,	/* unknown trace event */
	TSYNC_ERR_PERMISSION = 14,	/* not permitted */
};

/* HELLO kinds. */
enum tsync_conn_kind {
	TSYNC_CONN_CONTROL = 1,
	TSYNC_CONN_DATA = 2,
};

/* Capability bits (HELLO, HELLO_REPLY, SESSION_REPLY); unknown bits are
 * ignored. */
#define TSYNC_CAP_AUTH_HMAC	(1u << 0)	/* HMAC challenge-response */
#define TSYNC_CAP_TRACE		(1u << 1)	/* tracing control, streams */
#define TSYNC_CAP_STAMP_TSC	(1u << 2)	/* TSC stamp source */
/* HELLO: the host's sync method offer follows (tsync_hello.methods);
 * HELLO_REPLY: the agent's choice follows (tsync_hello_reply.method). */
#define TSYNC_CAP_SYNC_METHOD	(1u << 3)
#define TSYNC_CAP_CLOCK_STATE	(1u << 8)	/* CLOCK_REQ answered: the time
						 * daemon's discipline state */

/*
 * The sync methods a host offers in a control HELLO (CAP_SYNC_METHOD),
 * one row each, in the agent's order of preference: X(name, NAME, id).
 * name is the method's name (`sync` and `record` print it, and the host's
 * method table, host/sync/, names its methods so), id its wire value
 * (TSYNC_METHOD_<NAME>; never reused) and its bit (1 << id) in the offer.
 * Every host serves probes, so every offer has that bit.
 */
#define TSYNC_SYNC_METHODS(X) \
	X(kvm,    KVM,    1)	/* the host reads KVM's TSC offset and scaling */ \
	X(probes, PROBES, 0)	/* probe rounds on the control connection */

enum tsync_sync_method {
#define TSYNC_X_ENUM(name, NAME, id) TSYNC_METHOD_##NAME = id,
	TSYNC_SYNC_METHODS(TSYNC_X_ENUM)
#undef TSYNC_X_ENUM
};

/* The offer's bit of method @id. */
#define TSYNC_METHOD_BIT(id) (1u << (id))

/*
 * The timestamp sources of SYNC_START, one row each: X(name, NAME, id, cap).
 * name is the source's one name (--stamp, messages) and a C identifier:
 * common/stamp/stamp_<name>.c implements it, and common/stamp/stamp.c
 * builds its table of sources from these rows. id is its wire value
 * (TSYNC_STAMP_<NAME>; never reused), cap the capability bit an agent
 * announces when it has the source (0: every agent has it).
 */
#define TSYNC_STAMP_SOURCES(X) \
	X(marker, MARKER, 1, 0)			/* trace_marker_raw writes */ \
	X(clock,  CLOCK,  2, 0)			/* clock_gettime of the trace clock */ \
	X(tsc,    TSC,    3, TSYNC_CAP_STAMP_TSC)	/* rdtsc */

enum tsync_stamp_source {
#define TSYNC_X_ENUM(name, NAME, id, cap) TSYNC_STAMP_##NAME = id,
	TSYNC_STAMP_SOURCES(TSYNC_X_ENUM)
#undef TSYNC_X_ENUM
};

/* SYNC_START header flag: both ends on different CPUs, busy-poll. */
#define TSYNC_SYNC_F_BUSY 0x0001
/* SYNC_START header flag: CLOCK stamps as the agent's time namespace sees
 * the clock (what `--stamp clock` asks for). Without it, CLOCK stamps are
 * in the kernel trace clock's terms: the namespace's offset removed. */
#define TSYNC_SYNC_F_NS_CLOCK 0x0002
/* SYNC_START header flag: the host's probe loop runs at a real-time
 * priority (it sleeps between probes); the agent's should too, if it can. */
#define TSYNC_SYNC_F_RT 0x0004

/* META_CHUNK kinds. Receivers skip kinds they do not know. */
enum tsync_meta_kind {
	TSYNC_META_HEADER_PAGE = 1,
	TSYNC_META_HEADER_EVENT = 2,
	TSYNC_META_FTRACE_FORMAT = 3,	/* system "ftrace" formats */
	TSYNC_META_EVENT_FORMAT = 4,	/* one system's event formats */
	TSYNC_META_KALLSYMS = 5,
	TSYNC_META_PRINTK = 6,
	TSYNC_META_CMDLINES = 7,
	TSYNC_META_UNAME = 8,
	TSYNC_META_TRACE_CLOCK = 9,
	TSYNC_META_CPUSTAT = 10,	/* one per CPU, at the trace's stop */
};

struct tsync_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t len;		/* payload bytes */
};

/* Why a decode failed: the code and a human-readable reason. */
struct tsync_proto_err {
	int code;
	char reason[160];
};

/* What the decoder checks against; zero fields mean "default/unknown". */
struct tsync_decode_ctx {
	uint32_t ncpus;		/* CPUs of the CPU numbers' side; 0: unchecked */
	uint32_t max_probes;	/* 0: TSYNC_MAX_PROBES */
	uint32_t max_payload;	/* 0: TSYNC_MSG_MAX */
	uint8_t version;	/* negotiated version; 0: not yet (any spoken) */
};

struct tsync_hello {
	uint8_t ver_min, ver_max;	/* versions the sender speaks */
	uint8_t kind;			/* enum tsync_conn_kind */
	uint32_t caps;
	uint64_t session_id;		/* DATA only */
	uint32_t cpu;			/* DATA only: the stream's CPU */
	uint8_t secret[TSYNC_SECRET_LEN];	/* DATA only */
	uint8_t nonce[TSYNC_NONCE_LEN];	/* auth challenge (zero if unused) */
	uint32_t methods;		/* CAP_SYNC_METHOD: TSYNC_METHOD_BIT()s
					 * the host can serve; else 0 */
};

struct tsync_hello_reply {
	uint8_t version;		/* chosen version */
	uint8_t ver_min, ver_max;	/* versions the replier speaks */
	uint32_t caps;
	uint8_t nonce[TSYNC_NONCE_LEN];	/* auth: replier's challenge */
	uint8_t mac[TSYNC_MAC_LEN];	/* auth: answer to HELLO's nonce */
	uint8_t method;			/* CAP_SYNC_METHOD: the one it takes
					 * (enum tsync_sync_method); else 0 */
};

struct tsync_auth {
	uint8_t mac[TSYNC_MAC_LEN];	/* answer to HELLO_REPLY's nonce */
};

struct tsync_error {
	uint32_t code;			/* enum tsync_err_code */
	char reason[TSYNC_REASON_MAX];
};

struct tsync_session_req {
	uint64_t trace_id;		/* host trace id */
	char name[TSYNC_NAME_MAX];	/* host name */
};

struct tsync_session_reply {
	uint32_t ncpus;
	uint32_t page_size;		/* ring-buffer sub-buffer size */
	uint64_t trace_id;		/* guest trace id */
	uint32_t caps;
	uint64_t session_id;
	uint8_t secret[TSYNC_SECRET_LEN];
	char name[TSYNC_NAME_MAX];	/* agent host name */
	char clock[TSYNC_CLOCK_NAME_MAX];	/* current trace clock */
	uint32_t nclocks;
	char clocks[TSYNC_MAX_CLOCKS][TSYNC_CLOCK_NAME_MAX];
};

struct tsync_sync_start {
	uint32_t round_id;
	uint32_t cpu;			/* guest CPU */
	uint32_t nprobes;		/* 1..max_probes */
	uint8_t source;			/* enum tsync_stamp_source */
	char clock[TSYNC_CLOCK_NAME_MAX];
};

struct tsync_sync_ready {
	uint32_t round_id;
	uint32_t cpu;
	uint32_t status;		/* 0 or enum tsync_err_code */
};

/* PROBE and PROBE_REPLY. */
struct tsync_probe {
	uint32_t round_id;
	uint32_t seq;
};

struct tsync_sync_end {
	uint32_t round_id;
};

/*
 * The stamps of one probe, the one struct every user of them shares: each
 * field named by the direction it stamps (enum tsync_probe_dir in
 * proto/tsync_record.h): t1 host send, t2 guest receive, t3 guest send,
 * t4 host receive; ns in the trace clock of the side that took it, 0 =
 * not taken. The host stamps t1 and t4 into its own array; SYNC_STAMPS
 * carries the guest's seq, t2 and t3 (t1 and t4 are not on the wire: 0
 * when decoded); the estimator (common/sync/estimate.h) reads both arrays.
 */
struct tsync_probe_stamps {
	uint32_t seq;
	int64_t t1, t2, t3, t4;
};

struct tsync_sync_stamps {
	uint32_t round_id;
	uint32_t cpu;
	uint32_t count;
	struct tsync_probe_stamps *stamps;	/* seq, t2, t3 */
};

struct tsync_sync_result {
	uint32_t round_id;
	uint32_t cpu;
	int64_t offset_ns;		/* host minus guest */
	uint64_t error_ns;
	uint64_t delay_ns;
	uint32_t used;
	uint32_t sent;
};

/* The guest's settings are its trace-cmd record option words (events,
 * filters, buffer size and the rest): Documentation/protocol.md, 6.14. */
struct tsync_trace_start {
	uint32_t flags;			/* TSYNC_TRACE_FL_*; the agent refuses an
					 * unknown bit with ERROR UNSUPPORTED */
	char clock[TSYNC_CLOCK_NAME_MAX];
	uint32_t nargs;			/* with TSYNC_TRACE_FL_ARGS: trace-cmd record */
	char **args;			/* options of the guest (decoded: one allocation) */
};

struct tsync_trace_started {
	uint32_t ncpus;			/* streams the agent will open */
};

struct tsync_cpu_stats {
	uint32_t cpu;
	uint64_t bytes, entries, overrun, dropped;
};

struct tsync_trace_stopped {
	uint32_t count;
	struct tsync_cpu_stats *cpus;
};

struct tsync_stream_end {
	uint32_t cpu;
	uint64_t bytes;
};

struct tsync_meta_chunk {
	uint8_t kind;			/* enum tsync_meta_kind (non-zero) */
	char system[TSYNC_NAME_MAX];	/* EVENT_FORMAT: system; else "" */
	uint32_t more;			/* non-zero: more chunks of this part */
	uint32_t len;
	uint8_t *data;
};

/*
 * CLOCK_REQ: the host asks for the agent's time daemon state, and for the
 * relation of trace clock @clock to CLOCK_REALTIME (the clock the
 * daemons discipline).
 */
struct tsync_clock_req {
	char clock[TSYNC_CLOCK_NAME_MAX];
};

/* The time daemons an agent reads (CLOCK_STATE source); wire values. */
enum tsync_clock_source {
	TSYNC_CLOCK_SRC_NONE = 0,	/* none found or none asked for */
	TSYNC_CLOCK_SRC_PTP4L = 1,	/* linuxptp's ptp4l, management socket */
	TSYNC_CLOCK_SRC_CHRONY = 2,	/* chronyd, through chronyc */
};
#define TSYNC_CLOCK_SRC_MAX		TSYNC_CLOCK_SRC_CHRONY
/* CLOCK_STATE bound_ns: the daemon reports none. */
#define TSYNC_CLOCK_BOUND_UNKNOWN	UINT64_MAX
#define TSYNC_CLOCK_TEXT_MAX		128	/* master and detail strings */

/*
 * CLOCK_STATE: the agent's answer. The daemon's view of the machine's
 * CLOCK_REALTIME against its reference, and one reading of the asked
 * trace clock against CLOCK_REALTIME (in the kernel trace clock's terms:
 * a time namespace's offset removed).
 */
struct tsync_clock_state {
	uint8_t source;			/* enum tsync_clock_source */
	uint8_t synced;			/* 1: the daemon says it is synchronized */
	uint16_t stratum;		/* chrony: stratum; ptp4l: steps removed */
	int32_t status;			/* 0, or -errno why the daemon was not read */
	int64_t offset_ns;		/* the daemon's last offset from its reference */
	uint64_t bound_ns;		/* its error bound; TSYNC_CLOCK_BOUND_UNKNOWN */
	int64_t clock_ns;		/* the trace clock, read between ... */
	int64_t realtime_ns;		/* ... two CLOCK_REALTIME readings: their middle */
	uint64_t read_ns;		/* ... and their distance (0: not read) */
	char master[TSYNC_CLOCK_TEXT_MAX];	/* grandmaster identity / reference */
	char detail[TSYNC_CLOCK_TEXT_MAX];	/* port state / leap status, or why not */
};

/* Returns the name of a CLOCK_STATE source ("ptp4l"), or "unknown". */
const char *tsync_clock_source_name(unsigned int source);

struct tsync_rec_clock;		/* proto/tsync_record.h */
/* Fills clock record @rec (proto/tsync_record.h) from @st, a time
 * daemon's state, read for a round with @peer; texts cut to fit. */
void tsync_rec_clock_init(struct tsync_rec_clock *rec, const struct tsync_clock_state *st,
			  const char *peer);

struct tsync_msg {
	uint8_t type;			/* enum tsync_msg_type */
	uint8_t version;		/* header version; 0 encodes as MIN */
	uint16_t flags;			/* header flags (none defined yet) */
	union {
		struct tsync_hello hello;
		struct tsync_hello_reply hello_reply;
		struct tsync_auth auth;
		struct tsync_error error;
		struct tsync_session_req session_req;
		struct tsync_session_reply session_reply;
		struct tsync_sync_start sync_start;
		struct tsync_sync_ready sync_ready;
		struct tsync_probe probe;	/* PROBE, PROBE_REPLY */
		struct tsync_sync_end sync_end;
		struct tsync_sync_stamps sync_stamps;
		struct tsync_sync_result sync_result;
		struct tsync_trace_start trace_start;
		struct tsync_trace_started trace_started;
		struct tsync_trace_stopped trace_stopped;
		struct tsync_stream_end stream_end;
		struct tsync_meta_chunk meta_chunk;
		struct tsync_clock_req clock_req;
		struct tsync_clock_state clock_state;
	};
};

/* Returns the name of message type @type ("HELLO"), or "UNKNOWN". */
const char *tsync_msg_name(unsigned int type);
/* Returns 1 if @type is in the message table, else 0. */
int tsync_msg_type_known(unsigned int type);
/* Returns the minimum/maximum payload of @type (0 for unknown types). */
uint32_t tsync_msg_min_len(unsigned int type);
uint32_t tsync_msg_max_len(unsigned int type);
/* Returns a short name for a TSYNC_PERR_* code or strerror(-code). */
const char *tsync_perr_name(int code);
/* Returns 1 if @code is a TSYNC_PERR_* code (not a -errno). */
int tsync_perr_is_proto(int code);
/* Returns the name of a wire error code ("VERSION"), or "UNKNOWN". */
const char *tsync_err_name(uint32_t code);
/* Returns the name of a stamp source / META kind, or "unknown". */
const char *tsync_stamp_source_name(unsigned int source);
/* Parses a stamp source name (a row of TSYNC_STAMP_SOURCES) into @out, the
 * inverse of tsync_stamp_source_name(). Returns 0 or -EINVAL. */
int tsync_stamp_source_parse(const char *name, enum tsync_stamp_source *out);
/* Returns 1 if @source is a row of TSYNC_STAMP_SOURCES, else 0. */
int tsync_stamp_source_known(unsigned int source);
/* Returns the capability bit an agent announces for @source (0: none
 * needed, or an unknown source). */
uint32_t tsync_stamp_source_cap(unsigned int source);
/* The names of the stamp sources in TSYNC_STAMP_SOURCES order,
 * NULL-terminated: the choices of --stamp. */
extern const char *const tsync_stamp_names[];
const char *tsync_meta_kind_name(unsigned int kind);

/* Zeroes @m and sets its type. */
void tsync_msg_init(struct tsync_msg *m, uint8_t type);
/*
 * Makes @m an ERROR message with @code and a reason formatted from @fmt
 * (truncated to fit, unprintable bytes replaced by '?').
 */
void tsync_msg_set_error(struct tsync_msg *m, uint32_t code,
			 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Frees the decoder-allocated parts of @m and clears their pointers. */
void tsync_msg_free(struct tsync_msg *m);

/*
 * Returns in @len the encoded size of @m (header included) after checking
 * that @m is valid to send. Returns 0 or a TSYNC_PERR_* code.
 */
int tsync_msg_size(const struct tsync_msg *m, size_t *len);
/*
 * Encodes @m (header + payload) into @buf of @cap bytes; @len gets the
 * bytes written. Returns 0, -ENOSPC if @cap is too small, or a TSYNC_PERR_*
 * code if @m is not valid to send (too long a string, count over limit,
 * unprintable name...). Never allocates.
 */
int tsync_msg_encode(const struct tsync_msg *m, uint8_t *buf, size_t cap,
		     size_t *len);
/*
 * Hot path: writes a whole PROBE or PROBE_REPLY (@type) message into @buf
 * (TSYNC_PROBE_MSG_LEN bytes). Returns TSYNC_PROBE_MSG_LEN.
 */
size_t tsync_probe_encode(uint8_t *buf, uint8_t type, uint32_t round_id,
			  uint32_t seq);

/*
 * Decodes and checks a 12-byte header from @buf (@len bytes available):
 * magic, version, known type, payload length within the type's limits and
 * TSYNC_MSG_MAX. Returns 0 or a TSYNC_PERR_* code with @err filled (@err
 * may be NULL).
 */
int tsync_hdr_decode(const uint8_t *buf, size_t len, struct tsync_hdr *hdr,
		     struct tsync_proto_err *err);
/*
 * Checks a header that tsync_hdr_decode() accepted against what this
 * receiver allows (@ctx, may be NULL): the payload limit, and once a
 * version was negotiated (@ctx->version) that the message carries it
 * (HELLO, HELLO_REPLY and an ERROR in the base version excepted). Returns
 * 0, TSYNC_PERR_TOO_LONG or TSYNC_PERR_BAD_VERSION with @err filled (@err
 * may be NULL).
 */
int tsync_hdr_check_ctx(const struct tsync_hdr *hdr,
			const struct tsync_decode_ctx *ctx,
			struct tsync_proto_err *err);
/*
 * Decodes the payload (@len bytes, which must equal @hdr->len) of the
 * message @hdr announced into @m, checking every field (and CPU numbers
 * and probe counts against @ctx, which may be NULL). On success @m may own
 * allocations (tsync_msg_free()). On failure @m holds nothing to free and
 * the return is a TSYNC_PERR_* code (or -ENOMEM) with @err filled.
 */
int tsync_msg_decode(const struct tsync_hdr *hdr, const uint8_t *payload,
		     size_t len, const struct tsync_decode_ctx *ctx,
		     struct tsync_msg *m, struct tsync_proto_err *err);

/*
 * Version negotiation (pure): picks the highest version in both
 * [@our_min, @our_max] and [@peer_min, @peer_max] into @chosen and returns
 * 0; else returns TSYNC_PERR_NO_COMMON_VERSION and, if @reply is not NULL,
 * makes it an ERROR (TSYNC_ERR_VERSION) whose reason names both ranges.
 */
int tsync_proto_negotiate(uint8_t our_min, uint8_t our_max, uint8_t peer_min,
			  uint8_t peer_max, uint8_t *chosen,
			  struct tsync_msg *reply);
/*
 * The host's check of HELLO_REPLY @r: the agent's range must overlap ours
 * (else TSYNC_PERR_NO_COMMON_VERSION) and its chosen version must be the
 * one tsync_proto_negotiate() picks from both ranges (else
 * TSYNC_PERR_BAD_VALUE). Returns 0, or the code with a reason naming both
 * ranges in @err.
 */
int tsync_proto_check_choice(uint8_t our_min, uint8_t our_max,
			     const struct tsync_hello_reply *r, char *err,
			     size_t errlen);
/* Returns the name of sync method @id ("kvm"), or "unknown". */
const char *tsync_method_name(unsigned int id);
/* Parses a sync method name into its id @out. Returns 0 or -EINVAL. */
int tsync_method_parse(const char *name, uint8_t *out);
/* Returns 1 if @id is a row of TSYNC_SYNC_METHODS, else 0. */
int tsync_method_known(unsigned int id);
/*
 * The agent's choice (pure): the first method in TSYNC_SYNC_METHODS order
 * whose bit is in both the host's @offer and the agent's @can (probes is
 * always possible). Returns its id.
 */
uint8_t tsync_method_pick(uint32_t offer, uint32_t can);
/*
 * The host's check of HELLO_REPLY @r against the control HELLO @h it
 * sent: with CAP_SYNC_METHOD in both, @r's method must be in @h's offer
 * (else TSYNC_PERR_BAD_VALUE with a reason in @err); without it in @r the
 * agent did not negotiate (an agent that predates the field), and probes
 * it is. Returns 0 with the method in *@method, or the code.
 */
int tsync_proto_check_method(const struct tsync_hello *h, const struct tsync_hello_reply *r,
			     uint8_t *method, char *err, size_t errlen);

/*
 * Checks that received @m is of @type. Returns 0; TSYNC_PERR_PEER_ERROR if
 * it is an ERROR (reason "peer error CODE: text" in @err); else
 * TSYNC_PERR_UNEXPECTED ("expected X, got Y").
 */
int tsync_msg_expect(const struct tsync_msg *m, uint8_t type, char *err,
		     size_t errlen);

#endif
