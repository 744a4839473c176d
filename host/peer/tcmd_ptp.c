// SPDX-License-Identifier: GPL-2.0-or-later
/* trace-cmd's PTP time sync, host side; theory of operation in tcmd_ptp.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "host/peer/tcmd_ptp.h"
#include "proto/tsync_record.h"

/* The guest's START, echoed; returns 0 or -errno. */
static int ptp_start(struct tcmd_conn *c, uint32_t cpu, uint32_t *series, char *err,
		     size_t errlen)
{
	uint8_t buf[64];
	struct tcmd_msg m = { 0 };
	int ret;

	ret = tcmd_conn_send(c, buf, tcmd_enc_tsync_probe(buf, sizeof(buf), (uint16_t)cpu), err,
			errlen);
	if (!ret)
		ret = tcmd_conn_recv_tsync(c, TCMD_PROTO_PTP, TCMD_PTP_START, &m, err, errlen);
	if (ret)
		return ret;
	*series = m.ts.start.series;
	return tcmd_conn_send(c, buf, tcmd_enc_ptp_start(buf, sizeof(buf), m.ts.start.series,
						    m.ts.start.flags), err, errlen);
}

#define TRIAL TCMD_PLACE_TRIAL
#define TIMED (2 * TRIAL + 2)	/* arrivals a trial times */

/* Slots from @from on were stamped on host CPU @cpu. */
struct run {
	int cpu;
	uint32_t from;
};

/* Where a sample stamps (struct tcmd_ptp_cpu) and what it saw of it. */
struct ptp_pin {
	struct tcmd_conn *c;
	struct tcmd_ptp_cpu *hc;
	int first;		/* the CPU it started on */
	bool trial;		/* tries hc->alt against @first */
	struct run runs[3];	/* first, second, kept */
	uint32_t nruns;
	int64_t arrival[TIMED];	/* of probes 1..TIMED, while it tries */
	char why[128];		/* why a move failed */
};

/* A probe's arrival stamp, taken the moment it is in. */
struct arrival {
	struct tsync_stamper *st;
	struct ptp_pin *pin;
	uint32_t round, seq, cpu;
	int64_t ts;
};

enum move { MOVED, BUSY, REFUSED };	/* REFUSED: cannot run on that CPU */

/* Moves @p's stamps to host CPU @to from probe @seq on, if @to's hold
 * can be had now and the thread pinned there; else stays. Returns enum
 * move (REFUSED with the reason in @p->why), or -errno with the reason
 * in @p->why when the thread could not be put back either. */
static int move_to(struct ptp_pin *p, int to, uint32_t seq)
{
	struct tcmd_ptp_cpu *hc = p->hc;
	int from = hc->cpu, ret, back;

	if (to == from)
		return MOVED;
	if (hc->trylock && !hc->trylock(hc->arg, to))
		return BUSY;
	ret = tsync_cpu_pin(to, NULL);
	if (ret) {
		snprintf(p->why, sizeof(p->why), "cannot move the host thread to CPU %d: %s",
			 to, strerror(-ret));
		if (hc->unlock)
			hc->unlock(hc->arg, to);
		back = tsync_cpu_pin(from, NULL);
		return back ? back : REFUSED;
	}
	if (hc->unlock)
		hc->unlock(hc->arg, from);
	hc->cpu = to;
	p->runs[p->nruns++] = (struct run){ .cpu = to, .from = seq - 1 };
	return MOVED;
}

/* The trial's step at probe @seq, just in (see tcmd_ptp.h): times it,
 * moves to the second CPU after the first's loops, keeps the faster
 * after the second's. Returns 0 or -errno. */
static int trial_step(struct ptp_pin *p, uint32_t seq)
{
	struct tcmd_ptp_cpu *hc = p->hc;
	int ret;

	p->arrival[seq - 1] = tsync_now_ns();
	if (seq == TRIAL + 1) {
		ret = move_to(p, hc->alt, seq);
		if (ret == MOVED)
			return 0;
		p->trial = false;	/* stays on the first CPU */
		if (ret == REFUSED) {	/* for good: @alt is not for us */
			log_debug("tcmd: %s: %s: the sample stays on host CPU %d", p->c->peer,
				  p->why, hc->cpu);
			hc->kept = hc->cpu;
			p->why[0] = '\0';
		}
		return ret < 0 ? ret : 0;
	}
	if (seq < TIMED)
		return 0;
	tcmd_place_loops(p->arrival, TRIAL + 1, &hc->seen[0]);
	tcmd_place_loops(p->arrival + TRIAL + 1, TRIAL + 1, &hc->seen[1]);
	hc->kept = tcmd_place_pick(&hc->seen[0], &hc->seen[1]) ? hc->alt : p->first;
	p->trial = false;
	/* a first CPU busy now or refusing: this sample ends on the second */
	ret = move_to(p, hc->kept, seq);
	if (ret == REFUSED)
		p->why[0] = '\0';
	return ret < 0 ? ret : 0;
}

/* Takes the stamp of @arg, a struct arrival: HOST_RECV, on the CPU the
 * sample is on after the trial's step. */
static int stamp_arrival(void *arg)
{
	struct arrival *a = arg;
	struct ptp_pin *p = a->pin;
	int ret;

	if (p->trial && a->seq <= TIMED && (ret = trial_step(p, a->seq)) < 0)
		return ret;
	return tsync_stamp_take(a->st, a->round, a->seq, TSYNC_DIR_HOST_RECV, a->cpu, &a->ts);
}

/* The probe loop until END: stamps and echoes each probe into @slots
 * (TCMD_PTP_LOOP of them); returns the count or -errno. The stamp is
 * taken as soon as a message is in and decoded, as trace-cmd's host takes
 * it after tracecmd_msg_recv_time_sync(), for the probe that must come
 * next (END gets one too, which nothing asks for), and the echo is
 * encoded before that, so the host adds no delay of its own between the
 * probe's stamp and the echo's departure. The
 * probe is read in the reads trace-cmd's host makes of it, so that it is
 * stamped as long after its first bytes came as trace-cmd's host stamps
 * it (tcmd_conn_recv_stamped_split()), and the echo goes in the two
 * writes trace-cmd makes of a message, as long after the stamp as
 * trace-cmd's host sends it (tcmd_conn_send_echo()), with no
 * TCP_QUICKACK re-arm between the stamp and the echo's last write. */
static int ptp_probes(struct tcmd_conn *c, struct tsync_stamper *st, struct ptp_pin *pin,
		      uint32_t round, uint32_t cpu, struct tsync_stamp_slot *slots, char *err,
		      size_t errlen)
{
	uint8_t buf[64];
	uint32_t n = 0;
	struct tcmd_msg m = { 0 };
	int ret;

	for (;;) {
		struct arrival a = { .st = st, .pin = pin, .round = round, .seq = n + 1,
				     .cpu = cpu };
		ssize_t len = tcmd_enc_ptp_probe(buf, sizeof(buf), n + 1);

		ret = tcmd_conn_recv_stamped_split(c, &m, stamp_arrival, &a, err, errlen);
		if (ret && pin->why[0])
			snprintf(err, errlen, "%s", pin->why);
		if (ret)
			return ret;
		if (m.cmd == TCMD_TIME_SYNC && !strcmp(m.ts.proto, TCMD_PROTO_PTP) &&
		    m.ts.id == TCMD_PTP_END)
			return (int)n;
		if (m.cmd != TCMD_TIME_SYNC || strcmp(m.ts.proto, TCMD_PROTO_PTP) ||
		    m.ts.id != TCMD_PTP_PROBE) {
			snprintf(err, errlen, "the trace-cmd agent sent %s instead of a PTP probe",
				 tcmd_cmd_name(m.cmd));
			return -EPROTO;
		}
		if (n >= TCMD_PTP_LOOP || m.ts.count != n + 1) {
			snprintf(err, errlen, "the trace-cmd agent sent probe %u after %u probes "
				 "(at most %u, counting from 1)", m.ts.count, n, TCMD_PTP_LOOP);
			return -EPROTO;
		}
		slots[n].seq = m.ts.count;
		slots[n].dir = TSYNC_DIR_HOST_RECV;
		slots[n].ts = a.ts;
		n++;
		/* in trace-cmd's two writes, as its agent sends the probe */
		ret = tcmd_conn_send_echo(c, buf, len, err, errlen);
		if (ret)
			return ret;
	}
}

/* Sends PROBES for @n stamped @slots and reads the guest's OFFSET into
 * @r. Returns 0 or -errno. */
static int ptp_finish(struct tcmd_conn *c, uint32_t series, const struct tsync_stamp_slot *slots,
		      uint32_t n, struct tcmd_host_sample *r, char *err, size_t errlen)
{
	struct tcmd_ptp_sample *s = calloc(TCMD_PTP_SAMPLES, sizeof(*s));
	uint8_t *buf = malloc(TCMD_MSG_MAX);
	struct tcmd_msg m = { 0 };
	int ret = -ENOMEM;

	if (!s || !buf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		s[i] = (struct tcmd_ptp_sample){ .ts = slots[i].ts, .id = slots[i].seq };
	ret = tcmd_conn_send(c, buf, tcmd_enc_ptp_probes(buf, TCMD_MSG_MAX, series, n, s), err,
			errlen);
	if (!ret)
		ret = tcmd_conn_recv_tsync(c, TCMD_PROTO_PTP, TCMD_PTP_OFFSET, &m, err, errlen);
	if (ret)
		goto out;
	r->ts = m.ts.offset.ts;
	r->offset = m.ts.offset.offset;
	/* trace-cmd's agent leaves both 0 when no probe was usable; an
	 * offset of 0 at a time is a measurement (one kernel, a good one) */
	if (!r->ts) {
		snprintf(err, errlen, "the trace-cmd agent found no usable probe (offset %lld "
			 "at %lld)", (long long)r->offset, (long long)r->ts);
		ret = -ERANGE;
	}
out:
	free(s);
	free(buf);
	return ret;
}

/* Run @i of @pin's, as slots [*from, *to) of @n. */
static void run_span(const struct ptp_pin *pin, uint32_t i, uint32_t n, uint32_t *from,
		     uint32_t *to)
{
	*to = i + 1 < pin->nruns ? pin->runs[i + 1].from : n;
	if (*to > n)
		*to = n;
	*from = pin->runs[i].from < *to ? pin->runs[i].from : *to;
}

/* Copies the slots of @pin's runs on host CPU @cpu between @slots and
 * @tmp (to @tmp if @out, back otherwise); returns how many. */
static uint32_t gather(const struct ptp_pin *pin, int cpu, struct tsync_stamp_slot *slots,
		       uint32_t n, struct tsync_stamp_slot *tmp, bool out)
{
	uint32_t k = 0, from, to;

	for (uint32_t i = 0; i < pin->nruns; i++) {
		if (pin->runs[i].cpu != cpu)
			continue;
		run_span(pin, i, n, &from, &to);
		for (uint32_t j = from; j < to; j++, k++) {
			if (out)
				tmp[k] = slots[j];
			else
				slots[j] = tmp[k];
		}
	}
	return k;
}

/* Reads back the marker stamps of @n @slots from the ring buffer of the
 * CPU each was written on (@pin's runs), every CPU's in one resolve, as a
 * resolve consumes what its CPU holds; returns 0 or -errno with a reason
 * in @err. */
static int resolve(struct tsync_stamper *st, const struct ptp_pin *pin, uint32_t round,
		   struct tsync_stamp_slot *slots, uint32_t n, char *err, size_t errlen)
{
	struct tsync_stamp_slot *tmp = calloc(n ? n : 1, sizeof(*tmp));
	int ret = 0;

	if (!tmp) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < pin->nruns && !ret; i++) {
		int cpu = pin->runs[i].cpu;
		bool seen = false;
		uint32_t k;

		for (uint32_t j = 0; j < i; j++)
			seen = seen || pin->runs[j].cpu == cpu;
		if (seen)
			continue;
		k = gather(pin, cpu, slots, n, tmp, true);
		if (k)
			ret = tsync_stamp_resolve(st, cpu, round, tmp, k);
		gather(pin, cpu, slots, n, tmp, false);
	}
	free(tmp);
	if (ret)
		snprintf(err, errlen, "reading the host's stamps back: %s", strerror(-ret));
	return ret;
}

/* Takes one sample; see tcmd_ptp.h. */
int tcmd_ptp_sample(struct tcmd_conn *c, struct tsync_stamper *st, uint32_t round,
		    uint32_t cpu, struct tcmd_ptp_cpu *hc, struct tcmd_host_sample *r,
		    char *err, size_t errlen)
{
	struct tsync_stamp_slot *slots = calloc(TCMD_PTP_LOOP, sizeof(*slots));
	struct ptp_pin pin = { .c = c, .hc = hc, .first = hc->cpu,
			       .trial = hc->alt >= 0 && hc->alt != hc->cpu,
			       .runs = { { .cpu = hc->cpu } }, .nruns = 1 };
	int64_t t0 = tsync_now_ns();
	struct tsync_cpu_mask old;
	uint32_t series = 0;
	int ret, n = 0;

	memset(r, 0, sizeof(*r));
	hc->kept = -1;
	memset(hc->seen, 0, sizeof(hc->seen));
	r->cpu = cpu;
	r->host_cpu = hc->cpu;
	if (!slots) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = tsync_cpu_pin(hc->cpu, &old);
	if (ret) {
		snprintf(err, errlen, "cannot pin the host thread to CPU %d: %s", hc->cpu,
			 strerror(-ret));
		goto out;
	}
	/* the whole sample by twice the I/O timeout, as tsync's own round */
	tcmd_conn_set_deadline(c, tsync_deadline_ms(2 * (int64_t)c->timeout_ms));
	ret = ptp_start(c, cpu, &series, err, errlen);
	if (!ret)
		ret = n = ptp_probes(c, st, &pin, round, cpu, slots, err, errlen);
	if (ret >= 0)
		ret = resolve(st, &pin, round, slots, (uint32_t)n, err, errlen);
	tsync_cpu_unpin(&old);
	r->host_cpu = hc->cpu;
	if (!ret)
		ret = ptp_finish(c, series, slots, (uint32_t)n, r, err, errlen);
	r->probes = n > 0 ? (uint32_t)n : 0;
	r->round_ns = tsync_now_ns() - t0;
out:
	tcmd_conn_set_deadline(c, 0);
	free(slots);
	return ret;
}

/* Ends time sync; see tcmd_ptp.h. */
int tcmd_ptp_stop(struct tcmd_conn *c, char *err, size_t errlen)
{
	uint8_t buf[64];

	return tcmd_conn_send(c, buf, tcmd_enc_tsync_stop(buf, sizeof(buf)), err, errlen);
}
