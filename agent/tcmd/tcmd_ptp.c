// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's PTP time sync, guest side (the PTP "server", which computes
 * the offset). One thread per session serves the time-sync connection:
 *
 *   host                               guest (this file)
 *   none PROBE(cpu)             --->   pins itself to cpu
 *                               <---   ptp START {series, FASTEST|MARKER}
 *   ptp START (echo)            --->
 *   339 times:                         stamp n GUEST_SEND
 *                               <---   ptp PROBE(n)
 *   stamp 'r' marker, echo      --->   ptp PROBE(n); stamp n GUEST_RECV
 *                               <---   ptp END
 *   ptp PROBES {host stamps}    --->   picks the probe with the shortest
 *                               <---   ptp OFFSET {ts, offset}   round trip
 *   ... none STOP               --->   thread ends
 *
 * offset = host stamp - (send + recv) / 2 and ts = that midpoint, both in
 * the session's trace clock: the host stores the pair in the guest file's
 * TIME_SHIFT. Stale host stamps are skipped and a sample never goes out
 * empty (tcmd_ptp_calc.h says why). The stamps come from common/stamp/stamp.h (markers in a private
 * instance of this session, or the clock itself), never from trace-cmd's
 * fixed clock_synch-* instances, so concurrent sessions cannot read each
 * other's markers. The series ids start at a random base per session for
 * the same reason on the host side, whose markers carry them.
 *
 * Each message is encoded whole and sent with one write (TCP_NODELAY is
 * set by the transport), but for the probes, which go in the two writes
 * trace-cmd makes of every message, so that the probe leaves as long after
 * its stamp as trace-cmd host's echo does after its own
 * (tcmd_conn_send_split() says why). A probe's stamps sit next to the
 * wire: t3 just before the writes of the already encoded probe, t2 as
 * soon as the echo's last byte is read, before it is decoded
 * (tcmd_conn_recv_stamped()), so this side adds no delay of its own to
 * either direction.
 * trace-cmd's host before 3.3 writes a message in two writes with Nagle
 * on; the connection sees its second write wait for our delayed ACK and
 * from then on re-arms TCP_QUICKACK after every message it sends or
 * receives (common/wire/tcmd_io.h; without it every probe took 45 ms
 * here, a sample 15 s). Against a host that sets TCP_NODELAY it never does.
 *
 * Every wait inside a sample is bounded by the I/O timeout; between
 * samples the host may be silent for the whole recording (trace-cmd's
 * default --tsync-interval 0), so that wait ends only with a message, a
 * close, the transport declaring the host gone (keepalive,
 * common/net/tcp.c), or tcmd_ptp_finish().
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/wire/tcmd_io.h"
#include "agent/tcmd/tcmd_ptp.h"
#include "common/sync/tcmd_ptp_calc.h"
#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
#include "proto/tsync_record.h"

struct tcmd_ptp {
	struct tcmd_ptp_cfg cfg;
	char peer[96];
	struct tsync_stamper *st;
	struct tcmd_ptp_est *est;	/* what earlier samples left */
	struct tcmd_conn conn;		/* on cfg.fd, TCP_QUICKACK where needed */
	pthread_t th;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* done changes */
	bool done;
	int result;			/* samples, or -errno */
	uint8_t out[TCMD_MSG_MAX];	/* send buffer */
	struct tsync_probe_stamps probes[TCMD_PTP_LOOP];	/* our stamps, t3 and t2 */
};

/* A stamp to take the moment a message is in (tcmd_conn_recv_stamped()). */
struct arrival {
	struct tcmd_ptp *p;
	uint32_t series, seq, cpu;
	int64_t *ts;
};

/* Takes the stamp of @arg, a struct arrival: GUEST_RECV. */
static int stamp_arrival(void *arg)
{
	struct arrival *a = arg;

	return tsync_stamp_take(a->p->st, a->series, a->seq, TSYNC_DIR_GUEST_RECV, a->cpu,
				a->ts);
}

/* Receives one message within the I/O timeout into @m and checks it is
 * ptp message @id; with @a, stamps its arrival first. Returns 0 or -errno
 * (logged). */
static int recv_ptp(struct tcmd_ptp *p, uint32_t id, struct tcmd_msg *m, struct arrival *a)
{
	char err[200];
	int ret;

	ret = a ? tcmd_conn_recv_stamped(&p->conn, m, stamp_arrival, a, err, sizeof(err))
		: tcmd_conn_recv(&p->conn, m, err, sizeof(err));
	if (ret) {
		log_warn("%s: trace-cmd time sync: %s", p->peer, err);
		return ret;
	}
	if (m->cmd != TCMD_TIME_SYNC || strcmp(m->ts.proto, TCMD_PROTO_PTP) ||
	    m->ts.id != id) {
		log_warn("%s: trace-cmd time sync: expected ptp message %u, got %s %s/%u",
			 p->peer, id, tcmd_cmd_name(m->cmd),
			 m->cmd == TCMD_TIME_SYNC ? m->ts.proto : "-",
			 m->cmd == TCMD_TIME_SYNC ? m->ts.id : 0);
		return -EPROTO;
	}
	return 0;
}

/* Sends what an encoder wrote into p->out (quick ACKs re-armed after
 * it where the host needs them: common/wire/tcmd_io.h). */
static int send_out(struct tcmd_ptp *p, ssize_t len)
{
	return tcmd_conn_send(&p->conn, p->out, len, NULL, 0);
}

/* Runs the 339 probes of series @series on @cpu; probe n's stamps go to
 * p->probes[n-1] (GUEST_SEND into t3, GUEST_RECV into t2). Returns 0 or
 * -errno. */
static int probe_loop(struct tcmd_ptp *p, uint32_t series, uint32_t cpu)
{
	struct tcmd_msg m;
	int ret;

	for (uint32_t n = 1; n <= TCMD_PTP_LOOP; n++) {
		struct tsync_probe_stamps *g = &p->probes[n - 1];
		/* stamps next to the wire: encoded before the send's stamp, the
		 * echo stamped as soon as it is in (decoded after) */
		struct arrival a = { .p = p, .series = series, .seq = n, .cpu = cpu,
				     .ts = &g->t2 };
		ssize_t len = tcmd_enc_ptp_probe(p->out, sizeof(p->out), n);

		*g = (struct tsync_probe_stamps){ .seq = n };
		ret = tsync_stamp_take(p->st, series, n, TSYNC_DIR_GUEST_SEND, cpu, &g->t3);
		/* in trace-cmd's two writes: its host's echo leaves as late
		 * after its stamp (tcmd_conn_send_split()) */
		if (!ret)
			ret = tcmd_conn_send_split(&p->conn, p->out, len, NULL, 0);
		if (!ret)
			ret = recv_ptp(p, TCMD_PTP_PROBE, &m, &a);
		if (ret)
			return ret;
		if (m.ts.count != n) {
			log_warn("%s: trace-cmd time sync: probe %u answered as %u",
				 p->peer, n, m.ts.count);
			return -EPROTO;
		}
	}
	return 0;
}

/* One sample for @cpu (the host's none/PROBE). Returns 0 or -errno. */
static int sample(struct tcmd_ptp *p, uint32_t cpu)
{
	uint32_t series = ++p->cfg.series;
	struct tcmd_ptp_result res;
	struct tsync_cpu_mask old;
	struct tcmd_msg m;
	int ret;

	ret = tsync_cpu_pin((int)cpu, &old);
	if (ret) {
		log_warn("%s: trace-cmd time sync: cannot run on cpu %u: %s", p->peer,
			 cpu, strerror(-ret));
		return ret;
	}
	ret = send_out(p, tcmd_enc_ptp_start(p->out, sizeof(p->out), series,
					     TCMD_PTP_FL_FASTEST | TCMD_PTP_FL_MARKER));
	if (!ret)
		ret = recv_ptp(p, TCMD_PTP_START, &m, NULL);
	if (!ret)
		ret = probe_loop(p, series, cpu);
	if (!ret)
		ret = send_out(p, tcmd_enc_ptp_end(p->out, sizeof(p->out)));
	if (!ret)
		ret = recv_ptp(p, TCMD_PTP_PROBES, &m, NULL);
	if (!ret) {
		/* -ENOENT: some stamps were not found; those probes are skipped */
		int r = tsync_stamp_resolve_probes(p->st, (int)cpu, series, p->probes,
						   TCMD_PTP_LOOP, TSYNC_DIR_GUEST_SEND,
						   TSYNC_DIR_GUEST_RECV);

		if (r && r != -ENOENT)
			log_warn("%s: trace-cmd time sync: stamps of cpu %u: %s", p->peer,
				 cpu, strerror(-r));
		ret = tcmd_ptp_est_sample(p->est, cpu, p->probes, &m.ts, &res);
	}
	if (ret == -ENODATA)
		log_warn("%s: trace-cmd time sync: cpu %u: no usable probe and no earlier "
			 "offset to repeat: time sync ends", p->peer, cpu);
	else if (!ret && res.repeated)
		log_warn("%s: trace-cmd time sync: cpu %u: no usable probe (%d host stamps "
			 "stale): the last offset, %lld ns, repeated", p->peer, cpu,
			 res.stale, (long long)res.offset);
	if (!ret) {
		log_debug("%s: trace-cmd time sync: cpu %u series %u: offset %lld ns at %lld "
			  "(%d probes, %d stale)", p->peer, cpu, series,
			  (long long)res.offset, (long long)res.ts, res.used, res.stale);
		ret = send_out(p, tcmd_enc_ptp_offset(p->out, sizeof(p->out), res.ts,
						      res.offset));
	}
	tsync_cpu_unpin(&old);
	return ret;
}

/*
 * One sample of trace-cmd's kvm exchange for @cpu, as trace-cmd's guest
 * sends it: pinned to @cpu, a marker stamped in the session's clock
 * (x86-tsc), its timestamp in a kvm REQUEST; the host's RESPONSE carries
 * KVM's offset and scaling for the vCPU (the host keeps them: logged
 * only). Returns 0 or -errno.
 */
static int kvm_sample(struct tcmd_ptp *p, uint32_t cpu)
{
	uint32_t series = ++p->cfg.series;
	struct tsync_stamp_slot slot = { .seq = 1, .dir = TSYNC_DIR_GUEST_SEND };
	struct tcmd_kvm_msg k = { 0 };
	struct tsync_cpu_mask old;
	struct tcmd_msg m;
	char err[200];
	int ret;

	ret = tsync_cpu_pin((int)cpu, &old);
	if (ret) {
		log_warn("%s: trace-cmd time sync: cannot run on cpu %u: %s", p->peer, cpu,
			 strerror(-ret));
		return ret;
	}
	ret = tsync_stamp_take(p->st, series, 1, TSYNC_DIR_GUEST_SEND, cpu, &slot.ts);
	if (!ret && tsync_stamp_deferred(p->st))
		ret = tsync_stamp_resolve(p->st, (int)cpu, series, &slot, 1);
	tsync_cpu_unpin(&old);
	/* trace-cmd sends 0 for a marker it did not find: the host drops it */
	k.ts = ret ? 0 : slot.ts;
	ret = send_out(p, tcmd_enc_kvm(p->out, sizeof(p->out), TCMD_KVM_REQUEST, &k));
	if (!ret)
		ret = tcmd_conn_recv_tsync(&p->conn, TCMD_PROTO_KVM, TCMD_KVM_RESPONSE, &m, err,
					   sizeof(err));
	if (ret) {
		log_warn("%s: trace-cmd time sync: kvm: %s", p->peer, ret == -EINVAL ?
			 "cannot encode the request" : err);
		return ret;
	}
	log_debug("%s: trace-cmd time sync: kvm cpu %u: offset %lld * %lld >> %lld at %lld",
		  p->peer, cpu, (long long)m.ts.kvm.offset, (long long)m.ts.kvm.scaling,
		  (long long)m.ts.kvm.frac, (long long)k.ts);
	return 0;
}

/* Serves none/PROBE requests until STOP; returns samples or -errno. */
static int serve(struct tcmd_ptp *p)
{
	struct tcmd_msg m;
	char err[200];
	int n = 0, ret;

	for (;;) {
		ret = tcmd_conn_recv_idle(&p->conn, &m, -1, err, sizeof(err));
		if (ret) {
			log_warn("%s: trace-cmd time sync ended: %s", p->peer, err);
			return ret;
		}
		if (m.cmd != TCMD_TIME_SYNC || strcmp(m.ts.proto, TCMD_PROTO_NONE)) {
			log_warn("%s: trace-cmd time sync: unexpected %s", p->peer,
				 tcmd_cmd_name(m.cmd));
			return -EPROTO;
		}
		if (m.ts.id == TCMD_TSYNC_STOP)
			return n;
		if (m.ts.cpu >= p->cfg.ncpus) {
			log_warn("%s: trace-cmd time sync: cpu %u out of range (%d CPUs)",
				 p->peer, m.ts.cpu, p->cfg.ncpus);
			return -EINVAL;
		}
		ret = p->cfg.kvm ? kvm_sample(p, m.ts.cpu) : sample(p, m.ts.cpu);
		if (ret)
			return ret;
		n++;
	}
}

/* Thread body. */
static void *ptp_thread(void *arg)
{
	struct tcmd_ptp *p = arg;
	int ret = serve(p);

	if (ret < 0)	/* the host waits for an answer: let it see the end now */
		shutdown(p->cfg.fd, SHUT_RDWR);

	pthread_mutex_lock(&p->lock);
	p->result = ret;
	p->done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Starts the PTP server; see tcmd_ptp.h. */
int tcmd_ptp_start(const struct tcmd_ptp_cfg *cfg, struct tcmd_ptp **out)
{
	pthread_condattr_t ca;
	struct tcmd_ptp *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	snprintf(p->peer, sizeof(p->peer), "%s", cfg->peer);
	p->cfg.peer = p->peer;
	/* the session's port table owns the socket: never tcmd_conn_close()d */
	if (tcmd_conn_init(&p->conn, cfg->fd, "the host", true, cfg->io_timeout_ms))
		log_warn("%s: trace-cmd time sync: TCP_QUICKACK not settable", p->peer);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->est = tcmd_ptp_est_new(cfg->ncpus);
	if (!p->est) {
		tcmd_ptp_free(p);
		return -ENOMEM;
	}
	ret = tsync_stamp_open(tsync_stamp_default(cfg->clock), cfg->clock, cfg->tag, 0,
			       &p->st);
	if (ret) {
		log_err("%s: trace-cmd time sync: no timestamp source for clock %s: %s",
			p->peer, cfg->clock, strerror(-ret));
		tcmd_ptp_free(p);
		return ret;
	}
	ret = pthread_create(&p->th, NULL, ptp_thread, p);
	if (ret) {
		log_err("%s: trace-cmd time sync: cannot start a thread: %s", p->peer,
			strerror(ret));
		tcmd_ptp_free(p);
		return -ret;
	}
	p->started = true;
	*out = p;
	return 0;
}

/* Waits for the host's STOP, then ends the thread; see tcmd_ptp.h. */
int tcmd_ptp_finish(struct tcmd_ptp *p, int64_t deadline)
{
	struct timespec ts = { .tv_sec = deadline / NSEC_PER_SEC,
			       .tv_nsec = deadline % NSEC_PER_SEC };

	if (!p->started)
		return p->result;
	pthread_mutex_lock(&p->lock);
	while (!p->done)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
			break;
	if (!p->done) {
		log_warn("%s: trace-cmd time sync: no STOP in time", p->peer);
		p->result = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&p->lock);
	shutdown(p->cfg.fd, SHUT_RDWR);	/* wakes a thread still waiting */
	pthread_join(p->th, NULL);
	p->started = false;
	return p->result;
}

/* Frees @p; see tcmd_ptp.h. */
void tcmd_ptp_free(struct tcmd_ptp *p)
{
	if (!p)
		return;
	if (p->started)
		tcmd_ptp_finish(p, tsync_now_ns());
	tsync_stamp_close(p->st);
	tcmd_ptp_est_free(p->est);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
