/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd's agent-protocol messages (proto/tcmd.h) on a connected
 * socket, for both programs (the host talking to a stock trace-cmd agent,
 * the agent serving a trace-cmd host), as common/wire/msgio.h is for
 * tsync's own protocol:
 *
 *  - every wait is bounded: a message must arrive whole within the
 *    connection's timeout, once its first byte came (tcmd_conn_recv_idle()
 *    waits for that first byte until a deadline of its own, or, where a
 *    peer may rightly be silent for hours, until a message, the peer's
 *    close, or the transport declaring the peer gone: TCP keepalive and
 *    TCP_USER_TIMEOUT, set on every socket by common/net/tcp.c, fail the
 *    socket within 50 s of the peer's last sign of life);
 *  - a receive reads the header first and checks it (proto/tcmd.h:
 *    size, command, struct) before reading on, so a peer announcing a bad
 *    size is refused without reading more; then the codec checks every
 *    field; a peer that speaks tsync's protocol where a trace-cmd message
 *    should be is named as such;
 *  - a send is one write of the whole encoded message.
 *
 * Delayed ACK: trace-cmd's agent (and host) before 3.3 write each message
 * in two write()s (header and command struct, then the payload) with
 * Nagle on. The second write waits until the first is acknowledged, and
 * a Linux receiver in "pingpong" mode delays that ACK up to 40 ms: every
 * PTP probe pays it. trace-cmd >= 3.3 sets TCP_NODELAY and needs nothing.
 * So with @quickack (TCP only) the connection watches for that peer: a
 * message whose rest has not come TCMD_ACK_STALL_MS after its first part
 * is one held back by our delayed ACK. Then TCP_QUICKACK is set at once
 * (which sends the pending ACK, so the rest follows) and from then on the
 * connection re-arms it after every read and every send (the kernel clears
 * it again on its own), so the first part is ACKed as it arrives (the
 * host's PTP probe loop only after its echo's last write:
 * tcmd_conn_send_echo()). A peer
 * that never stalls (TCP_NODELAY) never pays the setsockopt() (0.5-1 us a
 * probe here). TSYNC_TCMD_QUICKACK=always in the environment re-arms from
 * the start (the old behaviour, for benchmarks).
 * Documentation/trace-cmd-host.md has the measurement;
 * tests/bench/bench_09_tcmd.c and bench_10_tcmd_bias.c repeat it.
 *
 * Stamps: tcmd_conn_recv_stamped() calls a stamp function right after the
 * read that completes a message returns, before anything else (re-arming,
 * decoding), so a time-sync probe is stamped as close to its arrival as
 * the socket allows. Every receive waits inside recv() itself, for a
 * message's first bytes as for its rest, not in poll() and then recv():
 * the arrival wakes the read, as trace-cmd's own blocking read does.
 * SO_RCVTIMEO bounds that wait in slices (TCMD_ACK_STALL_MS while the
 * peer is watched for stalls, else half the timeout) and is set only when
 * the slice changes, so a probe's wait is the recv() alone: no system
 * call between its arrival and its stamp, nor between our reply and the
 * wait for the next probe, that trace-cmd does not make. On one machine
 * the peer often runs on the same CPU and waits for exactly those calls:
 * they were part of the measured trip, one way more than the other
 * (bias). A sender stamps just before tcmd_conn_send(), with the message
 * already encoded.
 *
 * Errors: 0, or -errno with a reason in @err naming the peer: -ETIMEDOUT
 * (silent peer), -EPIPE (closed), -EBADMSG (malformed: the codec's reason
 * as it is), -EPROTO (tsync's protocol, or an unexpected message).
 */
#ifndef TSYNC_TCMD_IO_H
#define TSYNC_TCMD_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/tcmd.h"

/* How long the rest of a message may lag its first part before the peer
 * is taken for one waiting for our delayed ACK (those wait >= 40 ms; a
 * TCP_NODELAY peer's parts come microseconds apart). */
#define TCMD_ACK_STALL_MS 5

struct tcmd_conn {
	int fd;
	const char *peer;	/* the other end, in messages: "the agent" */
	bool quickack;		/* TCP, watching for a peer that waits for our ACK */
	bool acking;		/* such a peer seen: re-arm TCP_QUICKACK after
				 * every read and send */
	int timeout_ms;		/* per message */
	bool nonblock;		/* O_NONBLOCK socket: waits in poll() */
	int64_t rcvtimeo_us;	/* SO_RCVTIMEO as last set; -1: not yet */
	int64_t deadline;	/* of the whole exchange (CLOCK_MONOTONIC ns); 0: none */
	uint8_t buf[TCMD_MSG_MAX];	/* the last message received */
};

/*
 * Sets up @c over connected socket @fd, whose other end @peer names in
 * messages; @quickack applies to TCP only. Returns 0 or -errno
 * (TCP_QUICKACK not settable).
 */
int tcmd_conn_init(struct tcmd_conn *c, int fd, const char *peer, bool quickack,
		   int timeout_ms);
/* Sets the deadline of a whole exchange (absolute CLOCK_MONOTONIC ns; 0:
 * none): until it is cleared every send and receive also ends by it, with
 * -ETIMEDOUT and a reason saying so, however promptly each message came. */
void tcmd_conn_set_deadline(struct tcmd_conn *c, int64_t deadline);
/* Closes the socket (fd -1 is fine). A connection over a socket someone
 * else owns (the agent's connection table) is simply not closed. */
void tcmd_conn_close(struct tcmd_conn *c);
/* Writes the @len bytes of one encoded message in one call (@len < 0: the
 * encoder's error, returned as is). Returns 0 or -errno with a reason in
 * @err. */
int tcmd_conn_send(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
		   size_t errlen);
/* tcmd_conn_send() by @deadline (absolute CLOCK_MONOTONIC ns) instead of
 * the timeout: one message of a longer exchange that has a deadline of
 * its own. */
int tcmd_conn_send_by(struct tcmd_conn *c, const uint8_t *msg, ssize_t len,
		      int64_t deadline, char *err, size_t errlen);
/*
 * tcmd_conn_send() in the two writes trace-cmd makes of every message
 * (the header and command struct, then the payload; one write if there is
 * no payload). For the probes and echoes of trace-cmd's PTP exchange
 * only: their stamps are taken before the send and after the receive, so
 * a side whose message leaves in one write has it out a write earlier
 * after its stamp than trace-cmd has, one way of the trip shorter than
 * the other, and against trace-cmd that is a bias of half a write (about
 * 0.8 us here, of opposite sign in the two directions) that cancels only
 * between two sides that send alike. Over TCP our sockets have
 * TCP_NODELAY: the second write leaves at once.
 */
int tcmd_conn_send_split(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
			 size_t errlen);
/*
 * tcmd_conn_send_split() for the host's PTP echo, which follows
 * tcmd_conn_recv_stamped_split() at once: TCP_QUICKACK (once the peer is
 * seen waiting for our ACKs) is re-armed once, after the last write, not
 * also after the probe's stamp and between the two writes. Only that one
 * matters: writing re-enters the delayed-ACK ("pingpong") mode the re-arm
 * leaves, so the one after the last write is what has the next probe's
 * first part ACKed as we read it, and with it the Nagle-held rest sent;
 * the others only lay a system call each between the probe's stamp and
 * the echo's departure, where trace-cmd's host has none, one way of the
 * measured trip longer than the other.
 */
int tcmd_conn_send_echo(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err,
			size_t errlen);
/* Reads one whole message into c->buf within the timeout and decodes it
 * into @m (valid until the next read). */
int tcmd_conn_recv(struct tcmd_conn *c, struct tcmd_msg *m, char *err, size_t errlen);
/*
 * tcmd_conn_recv() on a connection that may stay silent between messages:
 * waits for the first byte until @first (absolute CLOCK_MONOTONIC ns; -1:
 * no deadline: until the peer speaks or closes, the transport declares it
 * gone (see above), or the socket is shut down),
 * then the whole message must arrive within the timeout.
 */
int tcmd_conn_recv_idle(struct tcmd_conn *c, struct tcmd_msg *m, int64_t first,
			char *err, size_t errlen);
/* What tcmd_conn_recv_stamped() calls when a message's last byte is in:
 * returns 0 or -errno (which the receive returns, with "timestamp: ..."). */
typedef int (*tcmd_stamp_fn)(void *arg);
/* tcmd_conn_recv() calling @stamp(@arg) right after the read that completes
 * the message, before it is decoded (even if it then proves malformed). */
int tcmd_conn_recv_stamped(struct tcmd_conn *c, struct tcmd_msg *m, tcmd_stamp_fn stamp,
			   void *arg, char *err, size_t errlen);
/*
 * tcmd_conn_recv_stamped() reading the message in the reads trace-cmd's
 * own receive makes (tracecmd_msg_recv()): the header, then the command
 * struct, then the payload (a part that is empty is not read), where
 * tcmd_conn_recv_stamped() reads all after the header at once. For the
 * host's PTP probe loop only: trace-cmd's agent computes the offset from
 * the stamps the host takes between a probe's arrival and its echo, so
 * the host's path from the probe's first bytes to its stamp is part of
 * the measured trip, and it cancels against trace-cmd's host's only if
 * it is the same path: the same reads, each woken as the bytes it asks
 * for come (the agent writes the command struct and the payload in two
 * writes). It leaves re-arming TCP_QUICKACK to the echo sent next
 * (tcmd_conn_send_echo()).
 */
int tcmd_conn_recv_stamped_split(struct tcmd_conn *c, struct tcmd_msg *m, tcmd_stamp_fn stamp,
				 void *arg, char *err, size_t errlen);
/* Reads one message and checks it is TIME_SYNC of protocol @proto with id
 * @id; else -EPROTO with what came instead in @err. */
int tcmd_conn_recv_tsync(struct tcmd_conn *c, const char *proto, uint32_t id,
			 struct tcmd_msg *m, char *err, size_t errlen);

#endif
