// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The doctor's guest checks; see doctor.h. Each goes through what `sync`
 * and `record` run: peer_open() (the protocol's hello and session),
 * host_preflight_guest() (the clock), peer_can_record() (the agent's
 * tracefs), sync_method_open() (kvm or probes, and why not kvm) and
 * sync_method_sample() (one round per guest CPU).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "common/stamp/stamp.h"
#include "host/cmd/doctor.h"
#include "host/cmd/json_out.h"
#include "host/cmd/preflight.h"
#include "host/peer/peer.h"
#include "host/sync/sync.h"

/* What one guest's checks learned, for its JSON object. */
struct guest_facts {
	const char *transport;
	const char *protocol;
	char version[32];
	struct json_object *clocks;
	char method[32];
	char *fallback;			/* why not a better method; NULL */
	int64_t delay_ns;		/* smallest round trip over the CPUs; -1 */
	int64_t error_ns;		/* largest error bound over the CPUs; -1 */
};

/* The transport's name of endpoint @ep ("tcp", "vsock", "hvsock"). */
static const char *transport_name(const struct tsync_endpoint *ep)
{
	const struct tsync_transport_ops *t = tsync_transport_ops(ep->kind);

	return t ? t->name : "?";
}

/* peer_open() failed with @ret and @err: a finding for reach (no
 * connection) or protocol (something answered, but not as asked). */
static void open_failed(const struct host_agent_arg *a, int ret, const char *err,
			struct doctor_report *r)
{
	char ep[300], fix[DOCTOR_TEXT_MAX];

	tsync_endpoint_format(&a->ep, ep, sizeof(ep));
	if (strstr(err, "cannot connect to")) {
		doctor_add(r, "reach", DOCTOR_FAIL, a->ep.kind == TSYNC_EP_VSOCK ?
			   "load vhost_vsock, start the guest with a vsock device and that CID, "
			   "and its agent" : "start the agent there, or check the address",
			   "%s", err);
		return;
	}
	doctor_add(r, "reach", DOCTOR_OK, NULL, "connected over %s", transport_name(&a->ep));
	/* bytes of another protocol, or a reset at HELLO (host/peer/client.c) */
	if (ret == TSYNC_PERR_BAD_MAGIC || ret == -ECONNRESET || ret == -EPIPE)
		snprintf(fix, sizeof(fix), "if trace-cmd's agent (trace-cmd agent) listens "
			 "there, give the guest as tcmd:%s; else check the port", ep);
	else if (ret == TSYNC_PERR_NO_COMMON_VERSION || ret == -EPROTONOSUPPORT)
		snprintf(fix, sizeof(fix), "version skew: install the same tsync version on "
			 "host and guest (or a trace-cmd agent that offers ptp time sync)");
	else
		snprintf(fix, sizeof(fix), "see the agent's log");
	/* the finding's own fix replaces one the message carries */
	doctor_add(r, "protocol", DOCTOR_FAIL, fix, "%.*s",
		   strstr(err, "; fix: ") ? (int)(strstr(err, "; fix: ") - err) : (int)strlen(err),
		   err);
}

/* The guest's clocks: as a JSON array into @g, and the clock check. */
static void check_clocks(struct peer *p, const struct doctor_guest_opts *o,
			 struct guest_facts *g, struct doctor_report *r)
{
	const char (*names)[TSYNC_CLOCK_NAME_MAX];
	uint32_t n = peer_clocks(p, &names);
	char err[DOCTOR_TEXT_MAX];

	g->clocks = json_object_new_array();
	for (uint32_t i = 0; i < n; i++)
		host_json_append(g->clocks, json_object_new_string_len(names[i],
						(int)strnlen(names[i], TSYNC_CLOCK_NAME_MAX)));
	if (host_preflight_guest(p, o->clock, err, sizeof(err)))
		doctor_add(r, "clocks", DOCTOR_FAIL, "choose a clock both offer with -C", "%s",
			   err);
	else
		doctor_add(r, "clocks", DOCTOR_OK, NULL, n ? "trace clock '%s' offered (of %u)" :
			   "trace clock '%s' (the agent lists none)", o->clock, n);
	if (peer_can_record(p, o->clock, err, sizeof(err))) {
		/* the agent's reason may end with its own fix: that one, once */
		char *fix = strstr(err, "; fix: ");

		if (fix)
			*fix = '\0';
		doctor_add(r, "tracefs", DOCTOR_FAIL, fix ? fix + strlen("; fix: ") :
			   "fix the guest's tracefs, or run its agent as root",
			   "the agent cannot record: %s", err);
	} else
		doctor_add(r, "tracefs", DOCTOR_OK, NULL, "the agent can record with clock '%s'",
			   o->clock);
}

/* One round per guest CPU with method @m: the floor and the bound. */
static void check_rounds(struct peer *p, struct sync_method *m, const struct round_opts *ro,
			 struct guest_facts *g, struct doctor_report *r)
{
	struct sync_result *res = calloc(1, sizeof(*res));
	uint32_t n = peer_ncpus(p), ok = 0;

	if (!res) {
		doctor_add(r, "sync", DOCTOR_FAIL, NULL, "out of memory");
		return;
	}
	for (uint32_t cpu = 0; cpu < n; cpu++) {
		int ret = sync_method_sample(m, cpu, ro, res);

		if (res->status) {
			doctor_add(r, "sync", DOCTOR_FAIL, "see the agent's log",
				   "round on CPU %u failed: %s", cpu, res->error);
			if (ret)
				break;
			continue;
		}
		ok++;
		if (res->probes.sent && (g->delay_ns < 0 || res->probes.delay_ns < g->delay_ns))
			g->delay_ns = res->probes.delay_ns;
		if (res->error_ns > g->error_ns)
			g->error_ns = res->error_ns;
	}
	if (ok == n) {
		char floor[64] = "unknown (the agent estimates)", bound[64] = "unknown";

		if (g->delay_ns >= 0)
			snprintf(floor, sizeof(floor), "%lld ns", (long long)g->delay_ns);
		if (g->error_ns >= 0)
			snprintf(bound, sizeof(bound), "at most %lld ns", (long long)g->error_ns);
		doctor_add(r, "sync", DOCTOR_OK, NULL, "%u CPUs synced by %s: round-trip floor "
			   "%s, error bound %s", n, sync_method_name(m), floor, bound);
	}
	free(res);
}

/* The sync method and a round per CPU. */
static void check_sync(struct peer *p, const struct host_agent_arg *a,
		       const struct doctor_guest_opts *o, struct guest_facts *g,
		       struct doctor_report *r)
{
	struct round_opts ro = {
		.clock = o->clock, .source = tsync_stamp_default(o->clock),
		.nprobes = ROUND_DEFAULT_PROBES, .host_cpu = -1, .busy = -1,
	};
	struct sync_method *m = NULL;
	struct sync_target t;
	char err[DOCTOR_TEXT_MAX];

	host_agent_target(&t, NULL, p, &a->ep, a->name, a->vm_pid);
	if (sync_method_open(&t, &ro, &m, err, sizeof(err))) {
		doctor_add(r, "method", DOCTOR_FAIL, NULL, "no sync method: %s", err);
		return;
	}
	snprintf(g->method, sizeof(g->method), "%s", sync_method_name(m));
	if (sync_method_fallback(m)[0]) {
		g->fallback = strdup(sync_method_fallback(m));
		doctor_add(r, "method", DOCTOR_OK, "for kvm: a local QEMU guest (--vm) and -C "
			   "x86-tsc", "method %s, not %s", g->method, sync_method_fallback(m));
	} else {
		doctor_add(r, "method", DOCTOR_OK, NULL, "method %s, the best there is", g->method);
	}
	check_rounds(p, m, &ro, g, r);
	sync_method_close(m);
}

/* The guest's JSON object from @g (consumes g->clocks). */
static struct json_object *guest_json(const struct host_agent_arg *a, struct guest_facts *g)
{
	char ep[300];

	tsync_endpoint_format(&a->ep, ep, sizeof(ep));
	const struct host_json_kv kv[] = {
		{ "name", host_json_str(a->name) },
		{ "agent", host_json_str(ep) },
		{ "transport", host_json_str(g->transport) },
		{ "protocol", host_json_str(g->protocol) },
		{ "version", host_json_str(g->version) },
		{ "clocks", g->clocks },
		{ "method", host_json_str(g->method) },
		{ "fallback", host_json_str(g->fallback) },
		{ "delay_ns", host_json_ns(g->delay_ns) },
		{ "error_ns", host_json_ns(g->error_ns) },
	};
	g->clocks = NULL;
	return host_json_object(kv, sizeof(kv) / sizeof(kv[0]));
}

/* Checks one guest; see doctor.h. */
struct json_object *doctor_guest(const struct host_agent_arg *a,
				 const struct doctor_guest_opts *o, struct doctor_report *r)
{
	struct peer_opts po = {
		.connect_timeout_ms = o->timeout_ms, .io_timeout_ms = o->timeout_ms,
		.host_name = "host", .key_file = o->key_file, .clock = o->clock,
		.source = tsync_stamp_default(o->clock),
		.host_trace_id = ((uint64_t)getpid() << 32) ^ (uint64_t)tsync_now_ns(),
	};
	struct guest_facts g = { .transport = transport_name(&a->ep), .delay_ns = -1,
				 .error_ns = -1 };
	struct json_object *obj;
	char err[DOCTOR_TEXT_MAX];
	struct peer *p = NULL;
	int ret;

	if (peer_check(a->dialect, &po, NULL, err, sizeof(err))) {
		doctor_add(r, "protocol", DOCTOR_FAIL, NULL, "%s", err);
		return guest_json(a, &g);
	}
	ret = peer_open(a->dialect, &a->ep, &po, &p, err, sizeof(err));
	if (ret) {
		open_failed(a, ret, err, r);
		return guest_json(a, &g);
	}
	g.protocol = peer_name(p);
	peer_version(p, g.version, sizeof(g.version));
	doctor_add(r, "reach", DOCTOR_OK, NULL, "connected over %s to %s", g.transport,
		   peer_addr(p));
	doctor_add(r, "protocol", DOCTOR_OK, NULL, "%s protocol %s, version %s (%s), %u CPUs",
		   strcmp(g.protocol, "tsync") ? "trace-cmd agent:" : "tsync-agent:", g.protocol,
		   g.version, peer_host(p), peer_ncpus(p));
	check_clocks(p, o, &g, r);
	check_sync(p, a, o, &g, r);
	if (peer_finish(p, err, sizeof(err)))
		doctor_add(r, "session", DOCTOR_WARN, NULL, "ending the session: %s", err);
	obj = guest_json(a, &g);
	free(g.fallback);
	peer_free(p);
	return obj;
}
