// SPDX-License-Identifier: GPL-2.0-or-later
/* KVM's offset writes of one VM, from a private tracefs instance (kvm_trace.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/sync/kvm_tsc.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/instance_opts.h"
#include "host/kvm/kvm_trace.h"

#define KVM_TRACE_PREFIX "tsync-kvm"
#define KVM_TRACE_SYSTEM "kvm"
#define KVM_TRACE_EVENT	 "kvm_write_tsc_offset"
/* Per CPU: an event is 32 bytes, and they are rare. */
#define KVM_TRACE_BUFFER_KB 64

struct kvm_trace {
	struct tsync_instance *ti;
	struct tep_handle *tep;
	struct tep_event *ev;
	struct tep_format_field *vcpu, *prev, *next;
	void (*cb)(const struct kvm_trace_event *e, void *ctx);	/* during a drain */
	void *ctx;
};

/* The threads of process @pid into *@tids (malloc'd) and *@n. */
static int list_threads(pid_t pid, int **tids, int *n)
{
	char path[64];
	int *v = NULL, cap = 0, cnt = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (cnt == cap) {
			int *nv = realloc(v, (size_t)(cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? 2 * cap : 32;
		}
		v[cnt++] = tid;
	}
	closedir(d);
	*tids = v;
	*n = cnt;
	return cnt ? 0 : -ESRCH;
}

/* Parses the event's format (and the ring buffer's header) into t->tep. */
static int parse_format(struct kvm_trace *t, char *why, size_t whylen)
{
	struct tracefs_instance *inst = tsync_instance_tracefs(t->ti);
	char *hp = NULL, *fmt;
	int size = 0, ret = 0;

	fmt = tracefs_instance_file_read(inst, "events/" KVM_TRACE_SYSTEM "/" KVM_TRACE_EVENT
					 "/format", &size);
	if (!fmt) {
		tsync_set_err(why, whylen, "no " KVM_TRACE_SYSTEM ":" KVM_TRACE_EVENT
			      " event in this kernel's tracefs");
		return -ENOENT;
	}
	t->tep = tep_alloc();
	if (!t->tep) {
		ret = -ENOMEM;
		goto out;
	}
	if (tep_parse_event(t->tep, fmt, (unsigned long)size, KVM_TRACE_SYSTEM)) {
		ret = -EPROTO;
		goto out;
	}
	hp = tracefs_instance_file_read(inst, "events/header_page", &size);
	if (!hp || tep_parse_header_page(t->tep, hp, size, (int)sizeof(long))) {
		ret = -EPROTO;
		goto out;
	}
	t->ev = tep_find_event_by_name(t->tep, KVM_TRACE_SYSTEM, KVM_TRACE_EVENT);
	t->vcpu = t->ev ? tep_find_field(t->ev, "vcpu_id") : NULL;
	t->prev = t->ev ? tep_find_field(t->ev, "previous_tsc_offset") : NULL;
	t->next = t->ev ? tep_find_field(t->ev, "next_tsc_offset") : NULL;
	if (!t->vcpu || !t->prev || !t->next)
		ret = -EPROTO;
out:
	if (ret == -EPROTO)
		tsync_set_err(why, whylen, KVM_TRACE_SYSTEM ":" KVM_TRACE_EVENT
			      "'s format is not the one known (vcpu_id, previous_tsc_offset, "
			      "next_tsc_offset)");
	else if (ret)
		tsync_set_err(why, whylen, "out of memory");
	free(fmt);
	free(hp);
	return ret;
}

/* The instance's settings: clock, buffer, the VM's threads, the event. */
static int setup(struct kvm_trace *t, pid_t pid, char *why, size_t whylen)
{
	struct tsync_instance_opts o = { .max_graph_depth = -1, .follow_children = true };
	char e[256] = "";
	int ret;

	ret = tsync_instance_set_clock(t->ti, KVM_TSC_CLOCK);
	if (ret) {
		tsync_set_err(why, whylen, "no " KVM_TSC_CLOCK " trace clock: %s", strerror(-ret));
		return ret == -EINVAL ? -ENOENT : ret;
	}
	ret = tsync_instance_set_buffer_kb(t->ti, KVM_TRACE_BUFFER_KB);
	if (!ret)
		ret = list_threads(pid, &o.pids, &o.npids);
	if (ret) {
		tsync_set_err(why, whylen, "the threads of process %d: %s", (int)pid,
			      strerror(-ret));
		return ret;
	}
	ret = tsync_instance_apply_opts(t->ti, &o, e, sizeof(e));
	free(o.pids);
	if (ret) {
		tsync_set_err(why, whylen, "%s", e[0] ? e : strerror(-ret));
		return ret;
	}
	ret = parse_format(t, why, whylen);
	if (ret)
		return ret;
	errno = 0;
	if (tracefs_event_enable(tsync_instance_tracefs(t->ti), KVM_TRACE_SYSTEM,
				 KVM_TRACE_EVENT)) {
		ret = errno ? -errno : -EIO;
		tsync_set_err(why, whylen, "cannot enable " KVM_TRACE_SYSTEM ":" KVM_TRACE_EVENT
			      ": %s", strerror(-ret));
		return ret;
	}
	ret = tsync_instance_start(t->ti);
	if (ret)
		tsync_set_err(why, whylen, "cannot start tracing: %s", strerror(-ret));
	return ret;
}

int kvm_trace_open(pid_t pid, struct kvm_trace **out, char *why, size_t whylen)
{
	struct kvm_trace *t = calloc(1, sizeof(*t));
	int ret;

	if (!t) {
		tsync_set_err(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = tsync_instance_create(KVM_TRACE_PREFIX, &t->ti);
	if (ret) {
		tsync_set_err(why, whylen, "no tracefs instance: %s", strerror(-ret));
		ret = ret == -ENOENT ? -ENODEV : ret;
		goto fail;
	}
	ret = setup(t, pid, why, whylen);
	if (ret)
		goto fail;
	*out = t;
	return 0;
fail:
	kvm_trace_close(t);
	return ret;
}

const char *kvm_trace_instance(const struct kvm_trace *t)
{
	return tsync_instance_name(t->ti);
}

/* One record of the drain: ours, decoded, to the caller. */
static int on_record(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct kvm_trace *t = ctx;
	unsigned long long v = 0, p = 0, n = 0;
	struct kvm_trace_event e;

	(void)cpu;
	if (ev != t->ev || tep_read_number_field(t->vcpu, rec->data, &v) ||
	    tep_read_number_field(t->prev, rec->data, &p) ||
	    tep_read_number_field(t->next, rec->data, &n))
		return 0;
	e = (struct kvm_trace_event){ .host_ts = rec->ts, .vcpu = (uint32_t)v,
				      .prev = (int64_t)p, .next = (int64_t)n,
				      .pid = tep_data_pid(t->tep, rec) };
	t->cb(&e, t->ctx);
	return 0;
}

int kvm_trace_drain(struct kvm_trace *t,
		    void (*cb)(const struct kvm_trace_event *e, void *ctx), void *ctx)
{
	int ret;

	t->cb = cb;
	t->ctx = ctx;
	errno = 0;
	ret = tracefs_iterate_raw_events(t->tep, tsync_instance_tracefs(t->ti), NULL, 0,
					 on_record, t);
	return ret < 0 ? (errno ? -errno : -EIO) : 0;
}

void kvm_trace_close(struct kvm_trace *t)
{
	if (!t)
		return;
	tsync_instance_destroy_detached(t->ti, NULL);	/* not waited for at exit */
	if (t->tep)
		tep_free(t->tep);
	free(t);
}
