// SPDX-License-Identifier: GPL-2.0-or-later
/* Timestamp sources: trace markers, POSIX clocks, TSC; see stamp.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

#include "common/log.h"
#include "common/stamp.h"
#include "common/timeutil.h"
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
	/* marker kind */
	char *dir;			/* instance directory */
	const char *name;		/* points into dir */
	int marker_fd;
	int raw_id;			/* event id of ftrace/raw_data */
	int id_off;			/* offset of its id field */
	enum kbuffer_long_size lsize;
	size_t page_size;		/* ring-buffer sub-buffer size */
	int ncpu;
	struct stamp_cpu *cpus;
	pthread_mutex_t lock;		/* guards creation of cpus[] readers */
};

/* Trace clocks user space can read with clock_gettime(). */
static const struct {
	const char *name;
	clockid_t clk;
} posix_clocks[] = {
	{ "mono", CLOCK_MONOTONIC },
	{ "mono_raw", CLOCK_MONOTONIC_RAW },
	{ "boot", CLOCK_BOOTTIME },
	{ "tai", CLOCK_TAI },
};

/* Finds the POSIX clock of trace clock @name. Returns 0 or -EINVAL. */
static int posix_clock_of(const char *name, clockid_t *clk)
{
	size_t i;

	for (i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++) {
		if (!strcmp(name, posix_clocks[i].name)) {
			*clk = posix_clocks[i].clk;
			return 0;
		}
	}
	return -EINVAL;
}

/* Picks the default source of a clock; see stamp.h. */
enum tsync_stamp_source tsync_stamp_default(const char *clock_name)
{
	clockid_t clk;

	if (!clock_name)
		return TSYNC_STAMP_MARKER;
	if (posix_clock_of(clock_name, &clk) == 0)
		return TSYNC_STAMP_CLOCK;
	if (HAVE_TSC && !strcmp(clock_name, "x86-tsc"))
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

/* Writes string @val to @dir/@file. Returns 0 or -errno. */
static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	size_t len = strlen(val);
	ssize_t n;
	int fd, ret = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Reads @dir/@file into @buf (NUL-terminated). Returns length or -errno. */
static ssize_t read_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n, len = 0;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - (size_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			len = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* Returns true if @clock is already the trace clock of instance @dir. */
static bool clock_selected(const char *dir, const char *clock)
{
	char buf[512], want[80];

	if (read_file(dir, "trace_clock", buf, sizeof(buf)) <= 0)
		return false;
	snprintf(want, sizeof(want), "[%s]", clock);
	return strstr(buf, want) != NULL;
}

/*
 * Reads the event id of ftrace/raw_data and the offset of its "id" field,
 * and the size of the ring-buffer page's commit field, from the instance.
 * Returns 0 or -errno.
 */
static int read_formats(struct tsync_stamper *s)
{
	char buf[4096];
	const char *p;
	ssize_t n;

	n = read_file(s->dir, "events/ftrace/raw_data/format", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strstr(buf, "\nID: ");
	if (!p)
		return -EPROTO;
	s->raw_id = atoi(p + 5);
	p = strstr(buf, " id;\toffset:");
	if (!p)
		return -EPROTO;
	s->id_off = atoi(p + strlen(" id;\toffset:"));
	if (s->raw_id <= 0 || s->id_off < 0 || s->id_off > 64)
		return -EPROTO;

	s->lsize = sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4;
	n = read_file(tracefs_tracing_dir(), "events/header_page", buf, sizeof(buf));
	if (n > 0 && (p = strstr(buf, "commit;")) != NULL) {
		p = strstr(p, "size:");
		if (p)
			s->lsize = atoi(p + 5) == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8;
	}

	s->page_size = (size_t)getpagesize();
	n = read_file(s->dir, "buffer_subbuf_size_kb", buf, sizeof(buf));
	if (n > 0 && atoi(buf) > 0)
		s->page_size = (size_t)atoi(buf) * 1024;
	return 0;
}

/*
 * Creates the private instance "tsync-<tag>-<pid>-<n>" with mkdir, which
 * fails with EEXIST rather than sharing an instance another session made.
 * Returns 0 (s->dir set) or -errno.
 */
static int create_instance(struct tsync_stamper *s, const char *tag)
{
	const char *tdir = tracefs_tracing_dir();
	char path[PATH_MAX];
	int n;

	if (!tdir)
		return -ENODEV;
	for (n = 0; n < 10000; n++) {
		int len = snprintf(path, sizeof(path), "%s/instances/tsync-%s-%d-%d",
				   tdir, tag, (int)getpid(), n);

		if (len >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (mkdir(path, 0750) == 0) {
			s->dir = strdup(path);
			if (!s->dir) {
				rmdir(path);
				return -ENOMEM;
			}
			s->name = strrchr(s->dir, '/') + 1;
			return 0;
		}
		if (errno != EEXIST)
			return errno == ENOENT ? -ENODEV : -errno;
	}
	return -EEXIST;
}

/* Sets up the marker kind: instance, clock, buffer, writer. 0 or -errno. */
static int open_marker(struct tsync_stamper *s, const char *clock_name,
		       const char *tag)
{
	char kb[32];
	int ret, i;

	if (!tag_ok(tag))
		return -EINVAL;
	ret = create_instance(s, tag);
	if (ret)
		return ret;
	/* setting the clock resets the buffer (~30 ms): only if needed */
	ret = clock_selected(s->dir, clock_name) ? 0 :
	      write_file(s->dir, "trace_clock", clock_name);
	if (ret) {
		log_err("stamp: trace clock '%s' refused: %s", clock_name, strerror(-ret));
		return ret == -EINVAL ? -EINVAL : ret;
	}
	snprintf(kb, sizeof(kb), "%d", TSYNC_STAMP_BUFFER_KB);
	ret = write_file(s->dir, "buffer_size_kb", kb);
	if (!ret && read_file(s->dir, "tracing_on", kb, sizeof(kb)) > 0 && kb[0] != '1')
		ret = write_file(s->dir, "tracing_on", "1");
	if (!ret)
		ret = read_formats(s);
	if (ret)
		return ret;

	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/trace_marker_raw", s->dir);
		s->marker_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (s->marker_fd < 0)
			return -errno;
	}
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

/* Opens a timestamp source; see stamp.h. */
int tsync_stamp_open(unsigned int source, const char *clock_name,
		     const char *tag, struct tsync_stamper **out)
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
	if (s->source == TSYNC_STAMP_CLOCK)
		ret = posix_clock_of(clock_name, &s->clk);
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
	return s && s->source == TSYNC_STAMP_MARKER ? s->name : NULL;
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
		*ts = (int64_t)t.tv_sec * NSEC_PER_SEC + t.tv_nsec;
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
	rec.hdr.id = TSYNC_RAW_ID;
	rec.hdr.magic = TSYNC_REC_MAGIC;
	rec.hdr.version = TSYNC_REC_VERSION;
	rec.hdr.type = TSYNC_REC_PROBE;
	rec.hdr.len = sizeof(rec);
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
	char path[PATH_MAX];

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
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", s->dir, cpu);
	c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
	if (s->marker_fd >= 0)
		close(s->marker_fd);
	if (s->dir && rmdir(s->dir))
		log_warn("stamp: cannot remove instance %s: %s", s->dir,
			 strerror(errno));
	free(s->dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * Parses the owner pid from an instance name "...-<pid>-<n>". Returns the
 * pid (> 0) or -1.
 */
static long owner_pid(const char *name)
{
	const char *last = strrchr(name, '-'), *p;
	char *end;
	long pid;

	if (!last || !last[1] || last == name)
		return -1;
	for (p = last + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	for (p = last - 1; p > name && *p != '-'; p--)
		;
	if (*p != '-' || p + 1 == last)
		return -1;
	pid = strtol(p + 1, &end, 10);
	if (end != last || pid <= 0 || pid > INT_MAX)
		return -1;
	return pid;
}

/* Removes instances left by dead processes; see stamp.h. */
int tsync_stamp_cleanup_stale(const char *prefix)
{
	const char *tdir = tracefs_tracing_dir();
	char path[PATH_MAX];
	struct dirent *de;
	size_t plen;
	int removed = 0;
	DIR *d;

	if (!prefix || strncmp(prefix, "tsync-", 6))
		return -EINVAL;
	if (!tdir)
		return -ENODEV;
	plen = strlen(prefix);
	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		long pid;

		if (strncmp(de->d_name, prefix, plen))
			continue;
		pid = owner_pid(de->d_name);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", tdir, de->d_name);
		if (rmdir(path) == 0) {
			log_info("stamp: removed stale instance %s", de->d_name);
			removed++;
		} else if (errno != EBUSY && errno != ENOENT) {
			log_warn("stamp: cannot remove stale instance %s: %s",
				 de->d_name, strerror(errno));
		}
	}
	closedir(d);
	return removed;
}
