// SPDX-License-Identifier: GPL-2.0-or-later
/* A record guest running trace-cmd's agent; see tcmd_guest.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/cpu.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/stamp/stamp.h"
#include "common/tracemeta/tracemeta.h"
#include "host/peer/tcmd_guest.h"
#include "host/peer/tcmd_meta.h"
#include "host/peer/tcmd_ptp.h"
#include "host/peer/tcmd_session.h"

#define FIXED_ARGS 7		/* -C CLOCK --file-version 6 -d -k --no-filter */
#define META_MAX TRACEMETA_MAX_TOTAL

/* The guest's words of a `sync` session: the least trace-cmd's agent
 * records, nothing but the nop tracer. */
static char *const sync_words[] = { "-p", "nop" };

struct tcmd_guest {
	struct tcmd_session *s;
	struct tsync_stamper *st;
	char clock[32];
	uint32_t round;
	int nhost;
	bool tcp;			/* the agent is reached over TCP */
	/* [guest CPUs]: the host CPU its samples stamp on, -1 not chosen yet
	 * (the next sample tries: tcmd_guest_round()) */
	int *kept;
	char opts[256];			/* the guest's option words, for messages */
	char addr[TSYNC_EP_HOST_MAX + 32];	/* the agent's address, for messages */
};

/* Builds the guest's argv (see tcmd_guest.h) into @argv, the guest's
 * words @words (@nwords); returns argc. */
static int make_argv(const struct tcmd_guest_opts *o, char *const *words, int nwords,
		     const char **argv)
{
	int n = 0;

	argv[n++] = "-C";
	argv[n++] = o->clock;
	argv[n++] = "--file-version";
	argv[n++] = "6";
	argv[n++] = "-d";
	argv[n++] = "-k";
	argv[n++] = "--no-filter";
	for (int i = 0; i < nwords; i++)
		argv[n++] = words[i];
	return n;
}

/* Joins the guest's option words @words (@nwords) into @t->opts (cut
 * with "..."). */
static void keep_opts(struct tcmd_guest *t, char *const *words, int nwords)
{
	size_t len = 0;

	for (int i = 0; i < nwords && len < sizeof(t->opts); i++)
		len += (size_t)snprintf(t->opts + len, sizeof(t->opts) - len, "%s%s",
					i ? " " : "", words[i]);
	if (len >= sizeof(t->opts))
		snprintf(t->opts + sizeof(t->opts) - 4, 4, "...");
}

/* Opens a guest; see tcmd_guest.h. */
int tcmd_guest_open(const struct tsync_endpoint *ep, const struct tcmd_guest_opts *o,
		    struct tcmd_guest **out, char *err, size_t errlen)
{
	char *const *words = o->record ? o->argv : sync_words;
	int nwords = o->record ? o->argc : (int)(sizeof(sync_words) / sizeof(sync_words[0]));
	const char **argv = calloc((size_t)FIXED_ARGS + (size_t)nwords + 1, sizeof(*argv));
	struct tcmd_guest *t = calloc(1, sizeof(*t));
	struct tcmd_session_opts so = {
		.connect_timeout_ms = o->connect_timeout_ms, .io_timeout_ms = o->io_timeout_ms,
		.quickack = o->quickack, .host_trace_id = o->host_trace_id, .argv = argv,
		.offer_kvm = o->kvm, .keep_tsync_agent = o->keep_tsync_agent,
	};
	int ret = -ENOMEM;

	if (!argv || !t) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(t->clock, sizeof(t->clock), "%s", o->clock);
	t->nhost = tsync_cpu_count();
	t->tcp = ep->kind == TSYNC_EP_TCP;
	tsync_endpoint_format(ep, t->addr, sizeof(t->addr));
	so.argc = make_argv(o, words, nwords, argv);
	keep_opts(t, words, nwords);
	ret = tsync_stamp_open(o->source, o->clock, "tcmd", TSYNC_STAMP_DETACHED_CLOSE, &t->st);
	if (ret) {
		snprintf(err, errlen, "timestamp source %s for clock %s: %s",
			 tsync_stamp_source_name(o->source), o->clock, strerror(-ret));
		goto fail;
	}
	ret = tcmd_session_open(ep, &so, &t->s, err, errlen);
	if (ret)
		goto fail;
	t->kept = malloc(t->s->ncpus * sizeof(*t->kept));
	if (!t->kept) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < t->s->ncpus; i++)
		t->kept[i] = -1;
	free(argv);
	*out = t;
	return 0;
fail:
	free(argv);
	tcmd_guest_free(t);
	return ret;
}

/* Accessors; see tcmd_guest.h. */
uint32_t tcmd_guest_ncpus(const struct tcmd_guest *t) { return t->s->ncpus; }
uint32_t tcmd_guest_page_size(const struct tcmd_guest *t) { return t->s->page_size; }
uint64_t tcmd_guest_trace_id(const struct tcmd_guest *t) { return t->s->guest_trace_id; }
const char *tcmd_guest_addr(const struct tcmd_guest *t) { return t->addr; }

bool tcmd_guest_kvm(const struct tcmd_guest *t) { return t->s->kvm; }

/* trace-cmd's kvm exchange, first half; see tcmd_guest.h. */
int tcmd_guest_kvm_request(struct tcmd_guest *t, uint32_t cpu, int64_t *ts, char *err,
			   size_t errlen)
{
	uint8_t buf[64];
	struct tcmd_msg m;
	int ret;

	if (cpu >= t->s->ncpus || cpu > UINT16_MAX) {
		snprintf(err, errlen, "no guest CPU %u", cpu);
		return -EINVAL;
	}
	ret = tcmd_conn_send(&t->s->ts, buf, tcmd_enc_tsync_probe(buf, sizeof(buf),
								  (uint16_t)cpu), err, errlen);
	if (!ret)
		ret = tcmd_conn_recv_tsync(&t->s->ts, TCMD_PROTO_KVM, TCMD_KVM_REQUEST, &m, err,
					   errlen);
	if (ret)
		return ret;
	*ts = m.ts.kvm.ts;
	return 0;
}

/* trace-cmd's kvm exchange, second half; see tcmd_guest.h. */
int tcmd_guest_kvm_answer(struct tcmd_guest *t, const struct tcmd_kvm_msg *a, char *err,
			  size_t errlen)
{
	uint8_t buf[64];

	return tcmd_conn_send(&t->s->ts, buf, tcmd_enc_kvm(buf, sizeof(buf), TCMD_KVM_RESPONSE,
							   a), err, errlen);
}

/* struct tcmd_ptp_cpu's trylock and unlock: the CPU locks of the
 * struct round_opts @arg. A sample never waits for a lock while the
 * agent's probe is in flight: one busy, it stays where it is. */
static bool lock_try(void *arg, int cpu)
{
	const struct round_opts *o = arg;

	return !pthread_mutex_trylock(&o->cpu_locks[cpu]);
}

static void lock_drop(void *arg, int cpu)
{
	const struct round_opts *o = arg;

	pthread_mutex_unlock(&o->cpu_locks[cpu]);
}

/* Takes one sample as a round; see tcmd_guest.h. */
int tcmd_guest_round(struct tcmd_guest *t, uint32_t cpu, const struct round_opts *o,
		     struct round_result *res)
{
	struct tcmd_ptp_cpu hc = { .cpu = -1, .alt = -1, .kept = -1,
				   .trylock = o->cpu_locks ? lock_try : NULL,
				   .unlock = o->cpu_locks ? lock_drop : NULL, .arg = (void *)o };
	struct tcmd_host_sample r;
	int ret;

	memset(res, 0, sizeof(*res));
	res->cpu = cpu;
	if (cpu >= t->s->ncpus) {
		snprintf(res->error, sizeof(res->error), "no guest CPU %u (the agent has %u)",
			 cpu, t->s->ncpus);
		return res->status = -EINVAL;
	}
	res->round_id = ++t->round;
	if (o->host_cpu >= 0) {
		hc.cpu = o->host_cpu;
	} else if (t->kept[cpu] >= 0) {
		hc.cpu = t->kept[cpu];
	} else {
		/* over TCP the first sample tries both (host/peer/tcmd_place.h);
		 * over vsock the guest CPU's number, the placement that passed
		 * check-vm's same-kernel alignment in the VM (the next one failed
		 * it once) */
		hc.cpu = round_host_cpu(o, cpu, t->nhost, 0);
		hc.alt = t->tcp && t->nhost > 1 ? round_host_cpu(o, cpu, t->nhost, 1) : -1;
		if (hc.alt < 0)
			t->kept[cpu] = hc.cpu;
	}
	res->host_cpu = hc.cpu;
	if (t->s->kvm) {	/* its agent waits for kvm's exchange, not PTP's */
		snprintf(res->error, sizeof(res->error), "the trace-cmd agent took kvm time "
			 "sync: it runs no PTP probes");
		return res->status = -EPROTONOSUPPORT;
	}
	if (o->cpu_locks)
		pthread_mutex_lock(&o->cpu_locks[hc.cpu]);
	ret = tcmd_ptp_sample(&t->s->ts, t->st, res->round_id, cpu, &hc, &r, res->error,
			      sizeof(res->error));
	/* the lock of the CPU it ended on (a move trades them) */
	if (o->cpu_locks)
		pthread_mutex_unlock(&o->cpu_locks[hc.cpu]);
	if (hc.kept >= 0)
		t->kept[cpu] = hc.kept;
	if (hc.seen[0].n && hc.seen[1].n) {
		log_debug("tcmd: %s round %u guest CPU %u: probes looped in %lld ns at the fastest "
			  "(median %lld) on host CPU %d, %lld ns (median %lld) on host CPU %d: "
			  "stamps on host CPU %d", t->addr, res->round_id, cpu,
			  (long long)hc.seen[0].min,
			  (long long)hc.seen[0].median, round_host_cpu(o, cpu, t->nhost, 0),
			  (long long)hc.seen[1].min, (long long)hc.seen[1].median, hc.alt,
			  hc.kept);
	}
	res->host_cpu = hc.cpu;
	res->est = (struct tsync_estimate){ .offset_ns = r.offset, .guest_ts = r.ts,
					    .error_ns = ROUND_UNKNOWN,
					    .delay_ns = ROUND_UNKNOWN, .sent = r.probes };
	res->round_ns = r.round_ns;
	res->stop = TSYNC_STOP_MAX;	/* the agent's count, always */
	res->status = ret;
	/* trace-cmd's agent answers TRACE_REQ before it parses the options:
	 * one it refuses ends its recorder, and the session, here */
	if (t->round == 1 && (ret == -EPIPE || ret == -ECONNRESET))
		snprintf(res->error, sizeof(res->error), "the trace-cmd agent ended the session "
			 "as it started: it refused a guest option (%s), its own output says "
			 "which", t->opts[0] ? t->opts : "none given");
	/* a sample trace-cmd's own host drops too: the session goes on */
	return ret == -ERANGE ? 0 : ret;
}

/* Reads the metadata; see tcmd_guest.h. */
int tcmd_guest_meta(struct tcmd_guest *t, struct tracemeta **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	uint32_t cpus = 0;
	size_t len = 0;
	int ret;

	ret = tcmd_session_meta(t->s, META_MAX, &buf, &len, err, errlen);
	if (!ret)
		ret = tcmd_meta_parse(buf, len, t->s->page_size, t->clock, &cpus, out, err,
				      errlen);
	free(buf);
	if (!ret && cpus != t->s->ncpus) {
		snprintf(err, errlen, "the trace-cmd agent's metadata has %u CPUs, its reply %u",
			 cpus, t->s->ncpus);
		tracemeta_free(*out);
		*out = NULL;
		ret = -EPROTO;
	}
	return ret;
}

/* Connects a stream; see tcmd_guest.h. */
int tcmd_guest_stream(struct tcmd_guest *t, uint32_t cpu, int *fd, char *err, size_t errlen)
{
	return tcmd_session_stream(t->s, cpu, fd, err, errlen);
}

/* Stops the recording; see tcmd_guest.h. */
int tcmd_guest_stop(struct tcmd_guest *t, char *err, size_t errlen)
{
	int ret = tcmd_session_close(t->s, err, errlen);

	return ret ? ret : tcmd_ptp_stop(&t->s->ts, err, errlen);
}

/* Waits for the end; see tcmd_guest.h. */
int tcmd_guest_wait_closed(struct tcmd_guest *t, char *err, size_t errlen)
{
	return tcmd_session_wait_closed(t->s, err, errlen);
}

/* Reads the CPU streams @fds (@n, closed here) to their end by
 * @deadline, dropping the bytes (the nop tracer writes next to nothing).
 * Returns 0 or -errno. */
static int drain(int *fds, uint32_t n, int64_t deadline, char *err, size_t errlen)
{
	const size_t sinklen = 65536;
	char *sink = malloc(sinklen);
	int ret = sink ? 0 : -ENOMEM;

	if (ret)
		snprintf(err, errlen, "out of memory");
	for (uint32_t i = 0; !ret && i < n; i++) {
		while (!ret && fds[i] >= 0) {
			ssize_t k;

			ret = tsync_wait_readable(fds[i], deadline);
			if (ret <= 0) {
				ret = ret ? ret : -ETIMEDOUT;
				snprintf(err, errlen, "the stream of CPU %u did not end: %s", i,
					 strerror(-ret));
				break;
			}
			ret = 0;
			k = read(fds[i], sink, sinklen);
			if (k <= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(sink);
	return ret;
}

/* Ends a `sync` session; see tcmd_guest.h. */
int tcmd_guest_finish(struct tcmd_guest *t, char *err, size_t errlen)
{
	struct tcmd_session *s = t->s;
	int *fds = calloc(s->ncpus, sizeof(*fds));
	uint8_t *meta = NULL;
	uint32_t nfd = 0;
	size_t len;
	int ret = fds ? 0 : -ENOMEM;

	if (ret)
		snprintf(err, errlen, "out of memory");
	if (!ret)
		ret = tcmd_session_meta(s, META_MAX, &meta, &len, err, errlen);
	free(meta);
	for (; !ret && nfd < s->ncpus; nfd++)
		ret = tcmd_session_stream(s, nfd, &fds[nfd], err, errlen);
	if (ret && nfd)
		nfd--;	/* the failed one holds no socket */
	if (!ret)
		ret = tcmd_session_close(s, err, errlen);
	if (!ret)
		ret = tcmd_ptp_stop(&s->ts, err, errlen);
	if (fds) {
		int r = drain(fds, nfd, tsync_deadline_ms(s->timeout_ms), err, errlen);

		ret = ret ? ret : r;
	}
	free(fds);
	if (!ret)
		ret = tcmd_session_wait_closed(s, err, errlen);
	return ret;
}

/* Frees a guest; see tcmd_guest.h. */
void tcmd_guest_free(struct tcmd_guest *t)
{
	if (!t)
		return;
	tcmd_session_free(t->s);
	tsync_stamp_close(t->st);
	free(t->kept);
	free(t);
}
