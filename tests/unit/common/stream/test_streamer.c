// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tests of the per-CPU trace streamer (common/stream/streamer.c) against the real
 * tracefs: a private instance, N markers written to its trace_marker_raw
 * by a thread pinned to one CPU, that CPU's trace_pipe_raw streamed to a
 * loopback socket, and every marker decoded back from the received pages
 * with kbuffer: payload intact, none lost, none duplicated, and the tail
 * (the partial page flushed on stop) already sent by TCP when the stop
 * returns, not held back.
 *
 * No check depends on how fast the machine is: waits are for events or
 * conditions (each with a deadline, generous because it only catches a
 * hang), the tail is checked in the socket's unsent queue rather than by
 * its latency (printed for information; bench_05_record measures speed),
 * and the idle check measures CPU time, which load does not inflate.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <cmocka.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "common/stream/streamer.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "tests/helpers/splice_rig.h"

/* Deadline of a wait for something that takes milliseconds when all is
 * well: it only turns a hang into a failure, so a loaded machine never
 * reaches it. */
#define WAIT_MS		30000
#define MARKER_ID	0x7473744du	/* "Mtst" */
#define PAYLOAD		24

/* What a test writes to trace_marker_raw: id (the raw_data id field),
 * then the rest lands in the raw_data buf field. */
struct marker {
	uint32_t id;
	uint32_t seq;
	uint8_t payload[PAYLOAD];
} __attribute__((packed));

struct fixture {
	struct tracefs_instance *inst;
	char name[64];
	struct tep_handle *tep;
	int raw_type;		/* event id of ftrace/raw_data */
	int id_off;		/* offset of its "id" field */
	int buf_off;		/* offset of its "buf" field */
	int cpu;		/* the CPU markers are written on */
	/* the streamer under test, freed by teardown if a test failed
	 * (its open trace_pipe_raw would keep the instance busy) */
	struct tsync_streamer *s;
};

/* Receiver thread: reads the socket to EOF, noting when bytes arrived. */
struct receiver {
	int fd;
	uint8_t *buf;
	size_t len;		/* written by the thread, read atomically */
	size_t cap;
	int64_t last_ns;	/* time of the last read that got data */
	int ret;
	pthread_t thr;
};

/* Returns the CPU time (user + system) of the whole process in ns. */
static int64_t process_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* Payload byte @i of marker @seq. */
static uint8_t marker_byte(uint32_t seq, int i)
{
	return (uint8_t)(seq * 29u + (unsigned)i * 11u + 3u);
}

/* The receiver thread body; see struct receiver. */
static void *receiver_main(void *arg)
{
	struct receiver *r = arg;
	uint8_t *nb;
	ssize_t n;

	for (;;) {
		if (r->cap - r->len < 65536) {
			nb = realloc(r->buf, r->cap * 2 + 65536);
			if (!nb) {
				r->ret = -ENOMEM;
				break;
			}
			r->buf = nb;
			r->cap = r->cap * 2 + 65536;
		}
		n = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);
		if (n > 0) {
			r->last_ns = tsync_now_ns();
			__atomic_store_n(&r->len, r->len + (size_t)n,
					 __ATOMIC_RELEASE);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		r->ret = n < 0 ? -errno : 0;
		break;
	}
	return NULL;
}

/* Marker writer thread: pinned to one CPU, writes markers 0..n-1. */
struct writer {
	int fd;			/* trace_marker_raw */
	int cpu;
	uint32_t n;
	int ret;
	pthread_t thr;
};

/* The writer thread body; see struct writer. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct marker m = { .id = MARKER_ID };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		w->ret = -errno;
		return NULL;
	}
	for (uint32_t i = 0; i < w->n; i++) {
		m.seq = i;
		for (int j = 0; j < PAYLOAD; j++)
			m.payload[j] = marker_byte(i, j);
		if (write(w->fd, &m, sizeof(m)) != (ssize_t)sizeof(m)) {
			w->ret = -errno;
			return NULL;
		}
	}
	return NULL;
}

/* Creates the private instance and parses the raw_data format. */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct tep_format_field *fid, *fbuf;
	const char *systems[] = { "ftrace", NULL };
	struct tep_event *ev;
	cpu_set_t set;

	if (!fx)
		return -1;
	*state = fx;
	if (!tracefs_tracing_dir() || access("/sys/kernel/tracing/instances", W_OK))
		return 0;	/* the tests skip */
	snprintf(fx->name, sizeof(fx->name), "tsync-test-streamer-%d", (int)getpid());
	fx->inst = tracefs_instance_create(fx->name);
	if (!fx->inst)
		return -1;
	fx->tep = tracefs_local_events_system(NULL, systems);
	if (!fx->tep)
		return -1;
	ev = tep_find_event_by_name(fx->tep, "ftrace", "raw_data");
	if (!ev)
		return -1;
	fid = tep_find_field(ev, "id");
	fbuf = tep_find_field(ev, "buf");
	if (!fid || !fbuf)
		return -1;
	fx->raw_type = ev->id;
	fx->id_off = fid->offset;
	fx->buf_off = fbuf->offset;
	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (fx->cpu = 0; !CPU_ISSET(fx->cpu, &set); fx->cpu++)
		;
	return 0;
}

/* Removes the instance, always. */
static int teardown(void **state)
{
	struct fixture *fx = *state;

	tsync_streamer_free(fx->s);
	if (fx->inst) {
		if (tracefs_instance_destroy(fx->inst))
			fprintf(stderr, "cannot remove instance %s\n", fx->name);
		tracefs_instance_free(fx->inst);
	}
	tep_free(fx->tep);
	free(fx);
	return 0;
}

/*
 * Decodes @len received bytes as whole ring-buffer pages of @page bytes
 * and counts each test marker in @seen (n entries). Returns the number of
 * bad records (wrong id, payload, length or seq), or -1 if the stream is
 * not whole pages or a page cannot be loaded.
 */
static int decode(struct fixture *fx, const uint8_t *data, size_t len,
		  size_t page, uint8_t *seen, uint32_t n, int *missed)
{
	struct kbuffer *kbuf = tep_kbuffer(fx->tep);
	unsigned long long ts;
	const struct marker *m;
	void *pg = malloc(page);
	int bad = 0, type, size;
	uint8_t *rec;

	if (!kbuf || !pg || len % page)
		goto fail;
	for (size_t off = 0; off < len; off += page) {
		memcpy(pg, data + off, page);
		if (kbuffer_load_subbuffer(kbuf, pg) < 0)
			goto fail;
		if (kbuffer_missed_events(kbuf))
			(*missed)++;
		for (rec = kbuffer_read_event(kbuf, &ts); rec;
		     rec = kbuffer_next_event(kbuf, &ts)) {
			type = *(uint16_t *)rec;
			if (type != fx->raw_type)
				continue;
			size = kbuffer_event_size(kbuf);
			/* the id field, then buf: seq and payload */
			m = (const struct marker *)(rec + fx->id_off);
			if (fx->buf_off != fx->id_off + 4 ||
			    size < fx->id_off + (int)sizeof(*m) ||
			    m->id != MARKER_ID || m->seq >= n) {
				bad++;
				continue;
			}
			for (int j = 0; j < PAYLOAD; j++) {
				if (m->payload[j] != marker_byte(m->seq, j)) {
					bad++;
					break;
				}
			}
			if (seen[m->seq] < 255)
				seen[m->seq]++;
		}
	}
	free(pg);
	kbuffer_free(kbuf);
	return bad;
fail:
	free(pg);
	kbuffer_free(kbuf);
	return -1;
}

/* Writes @n markers on the fixture's CPU from a pinned thread. */
static void write_markers(struct fixture *fx, uint32_t n)
{
	struct writer w = { .cpu = fx->cpu, .n = n };
	char *path = tracefs_instance_get_file(fx->inst, "trace_marker_raw");

	assert_non_null(path);
	w.fd = open(path, O_WRONLY | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	assert_true(w.fd >= 0);
	assert_int_equal(pthread_create(&w.thr, NULL, writer_main, &w), 0);
	pthread_join(w.thr, NULL);
	close(w.fd);
	assert_int_equal(w.ret, 0);
}

/*
 * Waits until the streamer has sent at least @min bytes and the receiver
 * has read all it sent. The streamer offers no event to wait on (its
 * counter is updated at least every poll_ms), so this polls every 5 ms,
 * until WAIT_MS. Returns the bytes sent.
 */
static uint64_t wait_streamed(struct tsync_streamer *s, struct receiver *rx,
			      uint64_t min)
{
	int64_t deadline = tsync_deadline_ms(WAIT_MS);
	struct timespec tick = { 0, 5 * NSEC_PER_MSEC };
	uint64_t sent;

	for (;;) {
		sent = tsync_streamer_bytes(s);
		if (sent >= min &&
		    __atomic_load_n(&rx->len, __ATOMIC_ACQUIRE) == sent)
			return sent;
		if (tsync_now_ns() >= deadline)
			return sent;
		nanosleep(&tick, NULL);
	}
}

/* Returns the bytes queued in socket @fd that TCP has not sent yet. */
static int unsent_bytes(int fd)
{
	int n = -1;

	if (ioctl(fd, SIOCOUTQNSD, &n))
		return -errno;
	return n;
}

/*
 * One run: writes @n markers on the fixture's CPU while the streamer
 * runs, checks that full pages flow before the stop, stops, and checks
 * everything arrived whole, once, and nothing was held back in the socket
 * when the stop returned.
 */
static void run_markers(struct fixture *fx, uint32_t n, const char *percent)
{
	struct receiver rx = { 0 };
	uint64_t before, after;
	int64_t t_stop, tail_ns;
	int snd, rcv, bad, missed = 0, lost = 0, dup = 0, ret, unsent;
	int64_t cpu0, idle_cpu;
	uint8_t *seen;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long long kb;

	if (!fx->inst)
		skip();
	if (!tracefs_instance_file_read_number(fx->inst, "buffer_subbuf_size_kb", &kb))
		page = (size_t)kb * 1024;
	assert_int_equal(tracefs_instance_file_write(fx->inst, "buffer_percent",
						     percent), (int)strlen(percent));
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	assert_int_equal(splice_tcp_pair(&snd, &rcv), 0);
	rx.fd = rcv;
	assert_int_equal(pthread_create(&rx.thr, NULL, receiver_main, &rx), 0);
	assert_int_equal(tsync_streamer_start(fx->inst, fx->cpu, snd, NULL, &fx->s), 0);

	write_markers(fx, n);

	/* Full pages stream while tracing runs (not only at stop): wait for
	 * most of them, i.e. all but a few pages' worth of markers, and for
	 * the receiver to have read them (so its window is open at stop). */
	before = wait_streamed(fx->s, &rx, (uint64_t)n * 44 / 2);

	/* Idle with a partial page in the buffer: poll may say readable
	 * (buffer_percent 0) while splice cannot take it; the streamer must
	 * not spin. This sleep is the idle period being observed, not a wait
	 * for something: whole-process CPU time over it is asserted, and a
	 * loaded machine lengthens the period without adding to our CPU. */
	cpu0 = process_cpu_ns();
	usleep(300000);
	idle_cpu = process_cpu_ns() - cpu0;

	t_stop = tsync_now_ns();
	ret = tsync_streamer_stop(fx->s);
	/* Whatever TCP has not sent when the stop returns is held back: with
	 * SPLICE_F_MORE left on it would wait ~200 ms for TCP's timer. On
	 * loopback a push transmits at once, and the receiver's window is
	 * open (it had read everything before the idle period). */
	unsent = unsent_bytes(snd);
	after = tsync_streamer_bytes(fx->s);
	shutdown(snd, SHUT_WR);
	pthread_join(rx.thr, NULL);
	tail_ns = rx.last_ns - t_stop;
	tsync_streamer_free(fx->s);
	fx->s = NULL;
	close(snd);
	close(rcv);

	seen = calloc(n, 1);
	assert_non_null(seen);
	bad = decode(fx, rx.buf, rx.len, page, seen, n, &missed);
	for (uint32_t i = 0; i < n; i++) {
		lost += seen[i] == 0;
		dup += seen[i] > 1;
	}
	printf("buffer_percent %s: %u markers, %zu bytes (%zu pages) received; "
	       "%llu bytes before stop, %llu after, %d unsent at stop; tail "
	       "arrived %.3f ms after stop; bad %d lost %d dup %d missed-pages "
	       "%d; CPU while idle %.1f ms / 300 ms\n", percent, n,
	       rx.len, rx.len / page, (unsigned long long)before,
	       (unsigned long long)after, unsent,
	       (double)tail_ns / NSEC_PER_MSEC, bad, lost, dup, missed,
	       (double)idle_cpu / NSEC_PER_MSEC);
	free(seen);
	free(rx.buf);
	assert_int_equal(ret, 0);
	assert_int_equal(rx.ret, 0);
	assert_true(before > 0);		/* pages moved while running */
	assert_true(after > before);		/* the partial page at stop */
	assert_true(after == rx.len);
	assert_int_equal(bad, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(dup, 0);
	assert_int_equal(missed, 0);
	assert_int_equal(unsent, 0);		/* the tail was not held */
	/* a spinning streamer burns the whole period (300 ms); one that
	 * waits wakes every poll_ms for microseconds */
	assert_true(idle_cpu < 30 * NSEC_PER_MSEC);
}

/* Default buffer_percent (poll readiness only at the watermark). */
static void test_streamer_markers(void **state)
{
	run_markers(*state, 3001, "50");
}

/* buffer_percent 0: poll says readable on a partial page that splice
 * cannot take; the streamer must neither spin nor lose anything. */
static void test_streamer_markers_bp0(void **state)
{
	run_markers(*state, 2003, "0");
}

/* A regular file as the sink (how the host records its own CPUs): every
 * marker lands in the file as whole pages, the partial one included. */
static void test_streamer_to_file(void **state)
{
	struct fixture *fx = *state;
	char path[] = "/tmp/tsync-test-streamer-XXXXXX";
	const uint32_t n = 1501;
	int fd, bad, missed = 0, lost = 0, dup = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *data, *seen;
	long long kb;
	off_t len;

	if (!fx->inst)
		skip();
	if (!tracefs_instance_file_read_number(fx->inst, "buffer_subbuf_size_kb", &kb))
		page = (size_t)kb * 1024;
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(tsync_streamer_start(fx->inst, fx->cpu, fd, NULL, &fx->s), 0);
	write_markers(fx, n);
	assert_int_equal(tsync_streamer_stop(fx->s), 0);
	len = lseek(fd, 0, SEEK_END);
	assert_true(len > 0 && (uint64_t)len == tsync_streamer_bytes(fx->s));
	tsync_streamer_free(fx->s);
	fx->s = NULL;
	data = malloc((size_t)len);
	seen = calloc(n, 1);
	assert_true(data && seen);
	assert_int_equal(pread(fd, data, (size_t)len, 0), len);
	close(fd);
	bad = decode(fx, data, (size_t)len, page, seen, n, &missed);
	for (uint32_t i = 0; i < n; i++) {
		lost += seen[i] == 0;
		dup += seen[i] > 1;
	}
	printf("to file: %u markers, %lld bytes; bad %d lost %d dup %d\n", n,
	       (long long)len, bad, lost, dup);
	free(data);
	free(seen);
	assert_int_equal(bad, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(dup, 0);
	assert_int_equal(missed, 0);
}

/* A streamer with nothing recorded stops promptly and sends nothing. */
static void test_streamer_empty(void **state)
{
	struct fixture *fx = *state;
	struct tsync_streamer *s;
	int snd, rcv;
	int64_t t0;
	char c;

	if (!fx->inst)
		skip();
	assert_int_equal(splice_tcp_pair(&snd, &rcv), 0);
	assert_int_equal(tsync_streamer_start(fx->inst, fx->cpu, snd, NULL, &fx->s), 0);
	s = fx->s;
	t0 = tsync_now_ns();
	assert_int_equal(tsync_streamer_stop(s), 0);
	/* The stop is prompt (it takes microseconds): it must not wait for
	 * the final flush's 5 s deadline. 4 s leaves a loaded machine room. */
	assert_true(tsync_now_ns() - t0 < 4000 * NSEC_PER_MSEC);
	assert_int_equal(tsync_streamer_bytes(s), 0);
	assert_int_equal(tsync_streamer_stop(s), 0);	/* idempotent */
	tsync_streamer_free(s);
	fx->s = NULL;
	shutdown(snd, SHUT_WR);
	assert_int_equal(recv(rcv, &c, 1, 0), 0);
	assert_true(tsync_streamer_start(fx->inst, 100000, snd, NULL, &s) < 0);
	close(snd);
	close(rcv);
}

/* Voluntary context switches of the whole process over 500 ms, a
 * streamer of an idle CPU running with @poll_ms. */
static long idle_switches(struct fixture *fx, int poll_ms)
{
	struct tsync_streamer_opts o = { .poll_ms = poll_ms };
	struct rusage r0, r1;
	int snd, rcv;

	assert_int_equal(splice_tcp_pair(&snd, &rcv), 0);
	assert_int_equal(tsync_streamer_start(fx->inst, fx->cpu, snd, &o, &fx->s), 0);
	getrusage(RUSAGE_SELF, &r0);
	/* the idle period being observed, not a wait for something */
	usleep(500000);
	getrusage(RUSAGE_SELF, &r1);
	assert_int_equal(tsync_streamer_stop(fx->s), 0);
	assert_int_equal(tsync_streamer_bytes(fx->s), 0);
	tsync_streamer_free(fx->s);
	fx->s = NULL;
	close(snd);
	close(rcv);
	return r1.ru_nvcsw - r0.ru_nvcsw;
}

/* TSYNC_STREAMER_NO_POLL: a quiet CPU costs no wake-ups (the kernel wakes
 * the thread at buffer_percent or the stop), where a 50 ms look wakes it
 * about 10 times in the same 500 ms (which shows the count can fail). */
static void test_streamer_no_poll(void **state)
{
	struct fixture *fx = *state;
	long polled, quiet;

	if (!fx->inst)
		skip();
	assert_int_equal(tracefs_trace_on(fx->inst), 0);
	polled = idle_switches(fx, 50);
	quiet = idle_switches(fx, TSYNC_STREAMER_NO_POLL);
	printf("voluntary switches in 500 ms idle: polling every 50 ms %ld, no poll %ld\n",
	       polled, quiet);
	assert_true(polled >= 5);
	/* the main thread's sleep and the streamer's start */
	assert_true(quiet <= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streamer_empty),
		cmocka_unit_test(test_streamer_no_poll),
		cmocka_unit_test(test_streamer_markers),
		cmocka_unit_test(test_streamer_markers_bp0),
		cmocka_unit_test(test_streamer_to_file),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	tsync_log_init("test_streamer", TSYNC_LOG_DEBUG, false);
	return cmocka_run_group_tests(tests, setup, teardown);
}
