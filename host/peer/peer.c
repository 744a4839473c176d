// SPDX-License-Identifier: GPL-2.0-or-later
/* The peer interface: the dialect table and the dispatch; see peer.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/tracefs/stale.h"
#include "host/peer/peer.h"
#include "host/peer/peer_priv.h"

/* The dialects, by AGENT prefix; the one without a prefix last. */
static const struct peer_ops *const dialects[] = {
	&peer_tcmd_ops,
	&peer_tsync_ops,
};

/* Picks the dialect of an AGENT; see peer.h. */
const struct peer_ops *peer_dialect(const char *arg, const char **rest)
{
	const size_t n = sizeof(dialects) / sizeof(dialects[0]);

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(dialects[i]->prefix);

		if (!strncmp(arg, dialects[i]->prefix, len)) {
			*rest = arg + len;
			return dialects[i];
		}
	}
	*rest = arg;	/* not reached: the last dialect has no prefix */
	return dialects[n - 1];
}

/* The dialect's facts, and the calls, dispatched; see peer.h. */
const char *peer_dialect_name(const struct peer_ops *d)
{
	return d->name;
}

uint16_t peer_dialect_port(const struct peer_ops *d)
{
	return d->default_port;
}

int peer_check(const struct peer_ops *d, const struct peer_opts *o, const struct round_opts *ro,
	       char *err, size_t errlen)
{
	return d->check ? d->check(o, ro, err, errlen) : 0;
}

int peer_open(const struct peer_ops *d, const struct tsync_endpoint *ep,
	      const struct peer_opts *o, struct peer **out, char *err, size_t errlen)
{
	/* instances of killed tsync programs (a killed host's marker
	 * instance of either dialect): their owner lock is free */
	if (tsync_instance_cleanup_all_stale() > 0)
		log_debug("removed stale tracefs instances of killed tsync programs");
	return d->open(ep, o, out, err, errlen);
}

const char *peer_name(const struct peer *p) { return p->ops->name; }
const char *peer_addr(const struct peer *p) { return p->ops->addr(p); }
const char *peer_host(const struct peer *p) { return p->ops->host(p); }
void peer_version(const struct peer *p, char *buf, size_t len) { p->ops->version(p, buf, len); }
uint32_t peer_ncpus(const struct peer *p) { return p->ops->ncpus(p); }
uint32_t peer_page_size(const struct peer *p) { return p->ops->page_size(p); }
uint64_t peer_trace_id(const struct peer *p) { return p->ops->trace_id(p); }
const char *peer_estimator(const struct peer *p) { return p->ops->estimator; }
uint32_t peer_fixed_probes(const struct peer *p) { return p->ops->fixed_probes; }

int peer_takes_method(const struct peer *p, const char *name, char *why, size_t whylen)
{
	return p->ops->takes_method ? p->ops->takes_method(p, name, why, whylen) : 0;
}

uint32_t peer_clocks(const struct peer *p, const char (**names)[TSYNC_CLOCK_NAME_MAX])
{
	return p->ops->clocks(p, names);
}

bool peer_traces_on_streams(const struct peer *p)
{
	return p->ops->traces_on_streams;
}

bool peer_kvm_exchange(const struct peer *p)
{
	return p->ops->kvm && p->ops->kvm(p);
}

int peer_kvm_request(struct peer *p, uint32_t cpu, int64_t *guest_ts, char *err,
		     size_t errlen)
{
	if (!peer_kvm_exchange(p))
		return snprintf(err, errlen, "no kvm exchange with this agent"), -EOPNOTSUPP;
	return p->ops->kvm_request(p, cpu, guest_ts, err, errlen);
}

int peer_kvm_answer(struct peer *p, const struct peer_kvm_answer *a, char *err,
		    size_t errlen)
{
	if (!peer_kvm_exchange(p))
		return snprintf(err, errlen, "no kvm exchange with this agent"), -EOPNOTSUPP;
	return p->ops->kvm_answer(p, a, err, errlen);
}

int peer_can_record(struct peer *p, const char *clock, char *err, size_t errlen)
{
	return p->ops->can_record(p, clock, err, errlen);
}

int peer_round(struct peer *p, uint32_t cpu, const struct round_opts *o,
	       struct round_result *res)
{
	return p->ops->round(p, cpu, o, res);
}

int peer_clock_state(struct peer *p, const char *clock, struct tsync_clock_state *out,
		     char *err, size_t errlen)
{
	if (!p->ops->clock_state) {
		snprintf(err, errlen, "%s agents do not report their time daemon",
			 p->ops->name);
		return -EOPNOTSUPP;
	}
	return p->ops->clock_state(p, clock, out, err, errlen);
}

int peer_trace_start(struct peer *p, const struct peer_trace_opts *o, uint32_t *nstreams,
		     char *err, size_t errlen)
{
	return p->ops->trace_start(p, o, nstreams, err, errlen);
}

int peer_meta(struct peer *p, struct tracemeta **out, char *err, size_t errlen)
{
	return p->ops->meta(p, out, err, errlen);
}

int peer_stream_open(struct peer *p, uint32_t cpu, int *fd, char *err, size_t errlen)
{
	return p->ops->stream_open(p, cpu, fd, err, errlen);
}

void peer_stream_close(struct peer *p, int fd)
{
	if (p)
		p->ops->stream_close(p, fd);
	else
		close(fd);
}

int peer_trace_stop(struct peer *p, int timeout_ms, struct tsync_trace_stopped *st,
		    char *err, size_t errlen)
{
	return p->ops->trace_stop(p, timeout_ms, st, err, errlen);
}

int peer_wait(struct peer *p, struct tracemeta **meta, char *err, size_t errlen)
{
	*meta = NULL;
	return p->ops->wait(p, meta, err, errlen);
}

int peer_finish(struct peer *p, char *err, size_t errlen)
{
	return p->ops->finish(p, err, errlen);
}

void peer_free(struct peer *p)
{
	if (p)
		p->ops->free(p);
}
