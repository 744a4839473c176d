// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The marker stamp source: each stamp is a struct tsync_rec_probe written
 * to trace_marker_raw of a private tracefs instance whose trace_clock is
 * the chosen clock; the kernel timestamps it. resolve() reads the records
 * back from that instance's per-CPU ring buffer (a consuming read of
 * per_cpu/cpuN/trace_pipe_raw) and fills the timestamps in. Works for
 * every trace clock (the only way for local, global, counter, perf,
 * uptime). See stamp.h for the instance and the threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kbuffer.h>
#include <tracefs.h>

#include "common/base/log.h"
#include "common/stamp/stamp_priv.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/ringbuf.h"
#include "proto/tsync_record.h"

/* Reader state of one CPU's ring buffer, created on first resolve. */
struct stamp_cpu {
	int fd;			/* per_cpu/cpuN/trace_pipe_raw, -1 if not open */
	struct kbuffer *kb;
	char *page;
};

struct stamp_marker {
	struct tsync_stamper base;
	struct tsync_instance *inst;	/* the private instance */
	int marker_fd;			/* its trace_marker_raw (owned by inst) */
	int raw_id;			/* event id of ftrace/raw_data */
	int id_off;			/* offset of its id field */
	enum kbuffer_long_size lsize;
	size_t page_size;		/* ring-buffer sub-buffer size */
	int ncpu;
	struct stamp_cpu *cpus;
	pthread_mutex_t lock;		/* guards creation of cpus[] readers */
	bool detached_close;		/* TSYNC_STAMP_DETACHED_CLOSE */
};

/* Returns true if @tag is a valid instance tag. */
static bool tag_ok(const char *tag)
{
	size_t i, n = tag ? strlen(tag) : 0;

	if (!n || n > TSYNC_STAMP_TAG_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = tag[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/*
 * Reads the event id of ftrace/raw_data and the offset of its "id" field,
 * the size of the ring-buffer page's commit field and the page size of the
 * instance (common/tracefs/ringbuf.h). Returns 0 or -errno.
 */
static int read_formats(struct stamp_marker *s)
{
	struct tracefs_instance *inst = tsync_instance_tracefs(s->inst);
	char *buf;
	const char *p;
	int ret = -EPROTO;

	buf = tracefs_instance_file_read(inst, "events/ftrace/raw_data/format", NULL);
	if (!buf)
		return errno ? -errno : -ENOENT;
	p = strstr(buf, "\nID: ");
	if (p)
		s->raw_id = atoi(p + 5);
	p = strstr(buf, " id;\toffset:");
	if (p)
		s->id_off = atoi(p + strlen(" id;\toffset:"));
	if (p && s->raw_id > 0 && s->id_off >= 0 && s->id_off <= 64)
		ret = 0;
	free(buf);
	if (ret)
		return ret;

	s->lsize = sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4;
	buf = tracefs_instance_file_read(NULL, "events/header_page", NULL);
	if (buf && (p = strstr(buf, "commit;")) != NULL) {
		p = strstr(p, "size:");
		if (p)
			s->lsize = atoi(p + 5) == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8;
	}
	free(buf);

	/* what one read of trace_pipe_raw returns */
	ret = tsync_ringbuf_page_size(inst);
	if (ret < 0)
		return ret;
	s->page_size = (size_t)ret;
	return 0;
}

/*
 * Gives @inst room for a round's stamps: the size a new instance has when
 * it is between TSYNC_STAMP_BUFFER_KB and TSYNC_STAMP_BUFFER_MAX_KB per
 * CPU (the kernel's default, 1408 KiB, is), else TSYNC_STAMP_BUFFER_KB.
 * A resize costs 8-20 ms whatever the size (measured here), at every
 * session's first round on both sides. 0 or -errno.
 */
static int size_buffer(struct tsync_instance *inst)
{
	ssize_t kb = tracefs_instance_get_buffer_size(tsync_instance_tracefs(inst), -1);

	if (kb >= TSYNC_STAMP_BUFFER_KB && kb <= TSYNC_STAMP_BUFFER_MAX_KB)
		return 0;
	return tsync_instance_set_buffer_kb(inst, TSYNC_STAMP_BUFFER_KB);
}

/* Sets up @s: instance, clock, buffer, writer. 0 or -errno. */
static int marker_setup(struct stamp_marker *s, const char *clock_name,
			const char *tag)
{
	char prefix[TSYNC_INSTANCE_PREFIX_MAX];
	int ret, i;

	if (!tag_ok(tag))
		return -EINVAL;
	snprintf(prefix, sizeof(prefix), "tsync-%s", tag);
	ret = tsync_instance_create(prefix, &s->inst);
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	ret = tsync_instance_set_clock(s->inst, clock_name);
	if (ret) {
		log_err("stamp: trace clock '%s' refused: %s", clock_name, strerror(-ret));
		return ret;
	}
	ret = size_buffer(s->inst);
	if (!ret)
		ret = tsync_instance_start(s->inst);
	if (!ret)
		ret = read_formats(s);
	if (ret)
		return ret;
	s->marker_fd = tsync_instance_marker_fd(s->inst);
	if (s->marker_fd < 0)
		return s->marker_fd;
	s->ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (s->ncpu <= 0)
		s->ncpu = 1;
	s->cpus = calloc((size_t)s->ncpu, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	for (i = 0; i < s->ncpu; i++)
		s->cpus[i].fd = -1;
	return 0;
}

/* Closes @s and removes its instance. */
static void marker_close(struct tsync_stamper *st)
{
	struct stamp_marker *s = (struct stamp_marker *)st;
	int i, go = -1;

	/* first: the remover takes copies of the readers' fds, so that their
	 * last close (which waits for the kernel's tracing lock, held by any
	 * instance's removal) is its, not ours */
	if (s->detached_close)
		tsync_instance_destroy_detached(s->inst, &go);
	for (i = 0; s->cpus && i < s->ncpu; i++) {
		if (s->cpus[i].fd >= 0)
			close(s->cpus[i].fd);
		if (s->cpus[i].kb)
			kbuffer_free(s->cpus[i].kb);
		free(s->cpus[i].page);
	}
	free(s->cpus);
	if (go >= 0)
		close(go);	/* ours are closed: the remover's go on */
	if (!s->detached_close)
		tsync_instance_destroy(s->inst);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Opens a marker source for @clock in an instance tagged @tag. */
static int marker_open(const char *clock, const char *tag, unsigned int flags,
		       struct tsync_stamper **out)
{
	struct stamp_marker *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->marker_fd = -1;
	s->detached_close = flags & TSYNC_STAMP_DETACHED_CLOSE;
	pthread_mutex_init(&s->lock, NULL);
	ret = marker_setup(s, clock, tag);
	if (ret) {
		marker_close(&s->base);
		return ret;
	}
	*out = &s->base;
	return 0;
}

/* Returns the name of the private instance. */
static const char *marker_instance(const struct tsync_stamper *st)
{
	const struct stamp_marker *s = (const struct stamp_marker *)st;

	return s->inst ? tsync_instance_name(s->inst) : NULL;
}

/* Writes the record of one stamp; its time comes with resolve(). */
static int marker_take(struct tsync_stamper *st, uint32_t round, uint32_t seq,
		       uint8_t dir, uint32_t cpu, int64_t *ts)
{
	struct stamp_marker *s = (struct stamp_marker *)st;
	struct tsync_rec_probe rec;
	ssize_t n;

	memset(&rec, 0, sizeof(rec));
	tsync_rec_hdr_init(&rec.hdr, TSYNC_REC_PROBE, sizeof(rec));
	rec.round = round;
	rec.seq = seq;
	rec.cpu = cpu;
	rec.dir = dir;
	*ts = 0;
	n = write(s->marker_fd, &rec, sizeof(rec));
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(rec) ? 0 : -EIO;
}

/* Returns the reader of @cpu, creating it on first use; NULL on error. */
static struct stamp_cpu *cpu_reader(struct stamp_marker *s, int cpu, int *err)
{
	struct stamp_cpu *c = &s->cpus[cpu];

	pthread_mutex_lock(&s->lock);
	if (c->fd >= 0)
		goto out;
	*err = -ENOMEM;
	if (!c->kb)
		c->kb = kbuffer_alloc(s->lsize, KBUFFER_ENDIAN_SAME_AS_HOST);
	if (!c->page)
		c->page = malloc(s->page_size);
	if (!c->kb || !c->page)
		goto fail;
	c->fd = tsync_ringbuf_open_cpu(tsync_instance_tracefs(s->inst), cpu);
	if (c->fd < 0) {
		*err = c->fd;
		c->fd = -1;
		goto fail;
	}
out:
	pthread_mutex_unlock(&s->lock);
	return c;
fail:
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Key of a slot or record: seq in the high bits, dir in the low byte. */
static uint64_t slot_key(uint32_t seq, uint8_t dir)
{
	return ((uint64_t)seq << 8) | dir;
}

/* Context of one resolve: slot indices sorted by key. */
struct resolve_ctx {
	struct tsync_stamp_slot *slots;
	uint32_t *order;
	size_t n;
};

/* Sorts the slot indices of @rc by key (shell sort: no comparator
 * context needed, n is a few hundred). */
static void sort_order(struct resolve_ctx *rc)
{
	size_t i, j;

	for (i = 0; i < rc->n; i++)
		rc->order[i] = (uint32_t)i;
	for (size_t gap = rc->n / 2; gap > 0; gap /= 2) {
		for (i = gap; i < rc->n; i++) {
			uint32_t v = rc->order[i];
			uint64_t kv = slot_key(rc->slots[v].seq, rc->slots[v].dir);

			for (j = i; j >= gap; j -= gap) {
				uint32_t u = rc->order[j - gap];

				if (slot_key(rc->slots[u].seq, rc->slots[u].dir) <= kv)
					break;
				rc->order[j] = u;
			}
			rc->order[j] = v;
		}
	}
}

/* Returns the slot for @key, or NULL. */
static struct tsync_stamp_slot *find_slot(struct resolve_ctx *rc, uint64_t key)
{
	size_t lo = 0, hi = rc->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct tsync_stamp_slot *sl = &rc->slots[rc->order[mid]];
		uint64_t k = slot_key(sl->seq, sl->dir);

		if (k == key)
			return sl;
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Matches the records of one ring-buffer page against the slots. */
static void scan_page(struct stamp_marker *s, struct kbuffer *kb, uint32_t round,
		      struct resolve_ctx *rc)
{
	unsigned long long ts;
	void *data;

	for (data = kbuffer_read_event(kb, &ts); data;
	     data = kbuffer_next_event(kb, &ts)) {
		struct tsync_rec_probe rec;
		struct tsync_stamp_slot *sl;
		uint16_t type;

		if (kbuffer_event_size(kb) < s->id_off + (int)sizeof(rec))
			continue;
		memcpy(&type, data, sizeof(type));
		if (type != s->raw_id)
			continue;
		memcpy(&rec, (char *)data + s->id_off, sizeof(rec));
		if (rec.hdr.id != TSYNC_RAW_ID || rec.hdr.magic != TSYNC_REC_MAGIC ||
		    rec.hdr.version != TSYNC_REC_VERSION ||
		    rec.hdr.type != TSYNC_REC_PROBE || rec.hdr.len != sizeof(rec) ||
		    rec.round != round)
			continue;
		sl = find_slot(rc, slot_key(rec.seq, rec.dir));
		if (sl && !sl->ts)
			sl->ts = (int64_t)ts;
	}
}

/* Reads back the stamps of @round written on @cpu into @slots. */
static int marker_resolve(struct tsync_stamper *st, int cpu, uint32_t round,
			  struct tsync_stamp_slot *slots, size_t n)
{
	struct stamp_marker *s = (struct stamp_marker *)st;
	struct resolve_ctx rc = { .slots = slots, .n = n };
	struct stamp_cpu *c;
	size_t i, missing = 0;
	int ret = 0;

	if (cpu < 0 || cpu >= s->ncpu)
		return -EINVAL;
	c = cpu_reader(s, cpu, &ret);
	if (!c)
		return ret;
	ret = 0;
	rc.order = malloc((n ? n : 1) * sizeof(*rc.order));
	if (!rc.order)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		slots[i].ts = 0;
	sort_order(&rc);

	for (;;) {
		ssize_t r = read(c->fd, c->page, s->page_size);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r < 0) {
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		if (kbuffer_load_subbuffer(c->kb, c->page) < 0) {
			ret = -EPROTO;
			goto out;
		}
		scan_page(s, c->kb, round, &rc);
	}
	for (i = 0; i < n; i++)
		missing += !slots[i].ts;
	if (missing) {
		log_debug("stamp: %zu of %zu markers of round %u missing on cpu %d",
			  missing, n, round, cpu);
		ret = -ENOENT;
	}
out:
	free(rc.order);
	return ret;
}

const struct stamp_source_ops stamp_marker_ops = {
	.what = "trace markers",
	.tracefs = true,
	.open = marker_open,
	.take = marker_take,
	.resolve = marker_resolve,
	.instance = marker_instance,
	.close = marker_close,
};
