// SPDX-License-Identifier: GPL-2.0-or-later
/* Timestamp sources: trace markers, POSIX clocks, TSC; see stamp.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kbuffer.h>
#include <tracefs.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "common/base/trace_clock.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/tsync_record.h"

/* Reader state of one CPU's ring buffer, created on first resolve. */
struct stamp_cpu {
	int fd;			/* per_cpu/cpuN/trace_pipe_raw, -1 if not open */
	struct kbuffer *kb;
	char *page;
};

struct tsync_stamper {
	enum tsync_stamp_source source;
	clockid_t clk;			/* clock kind */
	int64_t clk_offset;		/* clock kind: subtracted from each stamp */
	/* marker kind */
	struct tsync_instance *inst;	/* the private instance */
	int marker_fd;			/* its trace_marker_raw (owned by inst) */
	int raw_id;			/* event id of ftrace/raw_data */
	int id_off;			/* offset of its id field */
	enum kbuffer_long_size lsize;
	size_t page_size;		/* ring-buffer sub-buffer size */
	int ncpu;
	struct stamp_cpu *cpus;
	pthread_mutex_t lock;		/* guards creation of cpus[] readers */
};

/* Picks the default source of a clock; see stamp.h. */
enum tsync_stamp_source tsync_stamp_default(const char *clock_name)
{
	clockid_t clk;

	if (!clock_name)
		return TSYNC_STAMP_MARKER;
	if (tsync_trace_clock_posix(clock_name, &clk) == 0)
		return TSYNC_STAMP_CLOCK;
	if (HAVE_TSC && tsync_trace_clock_is_tsc(clock_name))
		return TSYNC_STAMP_TSC;
	return TSYNC_STAMP_MARKER;
}

/* Checks a source against a clock; see stamp.h. */
int tsync_stamp_check(unsigned int source, const char *clock_name)
{
	if (!clock_name || !*clock_name)
		return -EINVAL;
	switch (source) {
	case TSYNC_STAMP_MARKER:
		return 0;
	case TSYNC_STAMP_CLOCK:
	case TSYNC_STAMP_TSC:
		/* possible exactly where it is the default */
		return tsync_stamp_default(clock_name) == source ? 0 : -EINVAL;
	}
	return -EINVAL;
}

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
 * the size of the ring-buffer page's commit field and the sub-buffer size
 * from the instance. Returns 0 or -errno.
 */
static int read_formats(struct tsync_stamper *s)
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

	ret = tracemeta_subbuf_size(inst);
	s->page_size = ret > 0 ? (size_t)ret : (size_t)getpagesize();
	return 0;
}

/* Sets up the marker kind: instance, clock, buffer, writer. 0 or -errno. */
static int open_marker(struct tsync_stamper *s, const char *clock_name,
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
	ret = tsync_instance_set_buffer_kb(s->inst, TSYNC_STAMP_BUFFER_KB);
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

/*
 * Reads this process's time-namespace offset of POSIX clock @clk into
 * *@off (ns): "monotonic" applies to CLOCK_MONOTONIC and _RAW, "boottime"
 * to CLOCK_BOOTTIME, nothing to CLOCK_TAI. No file (a kernel without time
 * namespaces) means no offset. The file shows the namespace this process's
 * children get, which is its own unless it called unshare(CLONE_NEWTIME)
 * itself, which tsync never does. Returns 0 or -errno.
 */
static int timens_offset(clockid_t clk, int64_t *off)
{
	const char *want = clk == CLOCK_BOOTTIME ? "boottime" :
			   clk == CLOCK_MONOTONIC || clk == CLOCK_MONOTONIC_RAW ?
			   "monotonic" : NULL;
	int want_id = clk == CLOCK_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
	long long sec, nsec;
	char name[32];
	FILE *f;

	*off = 0;
	if (!want)
		return 0;
	f = fopen("/proc/self/timens_offsets", "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	/* "monotonic <sec> <nsec>"; older kernels print the clock id */
	while (fscanf(f, "%31s %lld %lld", name, &sec, &nsec) == 3) {
		if (!strcmp(name, want) ||
		    (name[0] >= '0' && name[0] <= '9' && atoi(name) == want_id)) {
			*off = sec * NSEC_PER_SEC + nsec;
			break;
		}
	}
	fclose(f);
	if (*off)
		log_debug("stamp: time namespace offset %lld ns removed from clock %d",
			  (long long)*off, (int)clk);
	return 0;
}

/* Whether rdtsc stamps are possible here; see stamp.h. */
bool tsync_stamp_tsc_available(void)
{
	return HAVE_TSC;
}

/* Opens a timestamp source; see stamp.h. */
int tsync_stamp_open(unsigned int source, const char *clock_name,
		     const char *tag, unsigned int flags,
		     struct tsync_stamper **out)
{
	struct tsync_stamper *s;
	int ret;

	if (!out)
		return -EINVAL;
	ret = tsync_stamp_check(source, clock_name);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->source = source == TSYNC_STAMP_CLOCK ? TSYNC_STAMP_CLOCK :
		  source == TSYNC_STAMP_TSC ? TSYNC_STAMP_TSC : TSYNC_STAMP_MARKER;
	s->marker_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (s->source == TSYNC_STAMP_CLOCK) {
		ret = tsync_trace_clock_posix(clock_name, &s->clk);
		if (!ret && !(flags & TSYNC_STAMP_NS_CLOCK))
			ret = timens_offset(s->clk, &s->clk_offset);
	}
	else if (s->source == TSYNC_STAMP_MARKER)
		ret = open_marker(s, clock_name, tag);
	if (ret) {
		tsync_stamp_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

/* Returns the source of an open stamper; see stamp.h. */
enum tsync_stamp_source tsync_stamp_source_of(const struct tsync_stamper *s)
{
	return s->source;
}

/* Returns the marker instance name; see stamp.h. */
const char *tsync_stamp_instance(const struct tsync_stamper *s)
{
	return s && s->inst ? tsync_instance_name(s->inst) : NULL;
}

/* Returns the TSC now, ordered after earlier loads (as rdtsc_ordered). */
static inline int64_t read_tsc(void)
{
#if HAVE_TSC
	_mm_lfence();
	return (int64_t)__rdtsc();
#else
	return 0;
#endif
}

/* Takes a timestamp; see stamp.h. */
int tsync_stamp_take(struct tsync_stamper *s, uint32_t round, uint32_t seq,
		     uint8_t dir, uint32_t cpu, int64_t *ts)
{
	struct timespec t;
	struct tsync_rec_probe rec;
	ssize_t n;

	switch (s->source) {
	case TSYNC_STAMP_CLOCK:
		if (clock_gettime(s->clk, &t))
			return -errno;
		*ts = (int64_t)t.tv_sec * NSEC_PER_SEC + t.tv_nsec - s->clk_offset;
		return 0;
	case TSYNC_STAMP_TSC:
		*ts = read_tsc();
		return 0;
	case TSYNC_STAMP_MARKER:
		break;
	default:
		return -EINVAL;
	}
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
static struct stamp_cpu *cpu_reader(struct tsync_stamper *s, int cpu, int *err)
{
	struct stamp_cpu *c = &s->cpus[cpu];
	char path[64];

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
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	c->fd = tracefs_instance_file_open(tsync_instance_tracefs(s->inst), path,
					   O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		*err = -errno;
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
static void scan_page(struct tsync_stamper *s, struct kbuffer *kb, uint32_t round,
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

/* Reads back marker timestamps; see stamp.h. */
int tsync_stamp_resolve(struct tsync_stamper *s, int cpu, uint32_t round,
			struct tsync_stamp_slot *slots, size_t n)
{
	struct resolve_ctx rc = { .slots = slots, .n = n };
	struct stamp_cpu *c;
	size_t i, missing = 0;
	int ret = 0;

	if (!s || (n && !slots))
		return -EINVAL;
	if (s->source != TSYNC_STAMP_MARKER)
		return 0;
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

/* Closes a source and removes its instance; see stamp.h. */
void tsync_stamp_close(struct tsync_stamper *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->cpus && i < s->ncpu; i++) {
		if (s->cpus[i].fd >= 0)
			close(s->cpus[i].fd);
		if (s->cpus[i].kb)
			kbuffer_free(s->cpus[i].kb);
		free(s->cpus[i].page);
	}
	free(s->cpus);
	tsync_instance_destroy(s->inst);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
