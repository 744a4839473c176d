// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tests of the splice forwarder and pipe sizing (common/stream/splice.c,
 * common/stream/pipe.c) with real pipes, files and loopback TCP sockets.
 *
 * The regression sweep sends messages of k * 8192 + r bytes through a
 * forwarder with an 8 KiB pipe; with the corrected flush each must arrive
 * within BOUND_MS, and with the flush turned off the r = 7372..8191 tails
 * must stall, which proves the sweep can fail.
 *
 * The bound is part of the contract, so it stays a time: a held tail
 * waits for TCP's 200 ms timer (measured 208-236 ms here), never less, so
 * any arrival under 150 ms proves the tail was not held. A loaded machine
 * can delay one delivery past that by scheduling, never make a stall
 * shorter; so a message that misses the bound is sent again (up to
 * MSG_TRIES times): a stall repeats for its length, a scheduling delay
 * does not. How fast messages arrive is measured by bench_03_splice.
 * Every other wait is for an event, with a deadline that only catches a
 * hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "common/base/io.h"
#include "common/base/log.h"
#include "common/stream/pipe.h"
#include "common/stream/splice.h"
#include "common/base/timeutil.h"
#include "tests/helpers/splice_rig.h"

#define BOUND_MS	150	/* a held tail takes >= 200 ms (see above) */
#define MSG_TRIES	5	/* sends of one length before it counts */
#define MSG_TIMEOUT_MS	10000	/* a stall is ~208 ms; a hang is a failure */
#define NOBODY		65534
#define MAX_HOLD	256	/* pipes the fallback test may hold */

/* Prints a latency row; -errno values as the error name. */
static void print_lat(const char *what, size_t len, int64_t ns, int tries)
{
	if (ns < 0)
		printf("  %-18s %8zu  error %s\n", what, len, strerror((int)-ns));
	else
		printf("  %-18s %8zu  %9.3f ms%s\n", what, len,
		       (double)ns / NSEC_PER_MSEC, tries > 1 ? "  (retried)" : "");
}

/*
 * Sends message @len through @r until it arrives within BOUND_MS, at most
 * @tries times (a stall is systematic and repeats; a scheduling delay on
 * a loaded machine does not). Returns the last latency or -errno;
 * *@used gets the number of attempts.
 */
static int64_t msg_fast(struct splice_rig *r, size_t len, uint32_t *tag,
			int tries, int *used)
{
	int64_t ns = -EINVAL;

	for (*used = 1; *used <= tries; (*used)++) {
		ns = splice_rig_msg(r, len, (*tag)++, MSG_TIMEOUT_MS);
		if (ns >= 0 && ns <= BOUND_MS * NSEC_PER_MSEC)
			break;
	}
	if (*used > tries)
		*used = tries;
	return ns;
}

/*
 * The flush-on sweep through a rig with @pipe_size: lengths k * @unit +
 * r * @unit / 8192. Returns the number of messages that missed BOUND_MS
 * (in each of MSG_TRIES sends), or -errno; *@got_pipe gets the pipe size.
 */
static int sweep_fast(size_t pipe_size, size_t unit, const char *label,
		      size_t *got_pipe)
{
	struct tsync_fwd_opts o = { .pipe_size = pipe_size, .name = label };
	struct tsync_fwd_stats st;
	struct splice_rig r;
	uint32_t tag = 1;
	int bad = 0, used, ret;
	int64_t ns;
	size_t len;

	ret = splice_rig_start(&r, &o);
	if (ret)
		return ret;
	printf("%s sweep, flush on (pipe asked %zu):\n", label, pipe_size);
	for (int k = 0; k < SPLICE_SWEEP_K; k++) {
		for (int i = 0; i < SPLICE_SWEEP_NR; i++) {
			len = k * unit + splice_sweep_r[i] * (unit / 8192);
			ns = msg_fast(&r, len, &tag, MSG_TRIES, &used);
			print_lat(label, len, ns, used);
			if (ns < 0 || ns > BOUND_MS * NSEC_PER_MSEC)
				bad++;
		}
	}
	splice_rig_join(&r);
	tsync_fwd_get_stats(r.fwd, &st);
	printf("  pipe %zu, flushes %llu, MORE writes %llu, splices %llu\n",
	       st.pipe_size, (unsigned long long)st.flushes,
	       (unsigned long long)st.more_writes,
	       (unsigned long long)st.splices);
	if (got_pipe)
		*got_pipe = st.pipe_size;
	ret = splice_rig_stop(&r);
	if (ret != TSYNC_FWD_STOPPED) {
		fprintf(stderr, "forwarder ended with %d, not STOPPED\n", ret);
		return -EPROTO;
	}
	return bad;
}

/* Pipe sizing: exact small sizes, the default, and fallback from a size
 * the kernel refuses (above fs.pipe-max-size). */
static void test_pipe_sizing(void **state)
{
	int fds[2];
	long got;

	(void)state;
	got = tsync_pipe_open(fds, 8192, "test 8k");
	assert_int_equal(got, 8192);
	assert_int_equal(fcntl(fds[0], F_GETPIPE_SZ), 8192);
	assert_true(fcntl(fds[0], F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fds[1], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	close(fds[1]);

	got = tsync_pipe_open(fds, 0, "test default");
	printf("default: %ld bytes\n", got);
	assert_true(got >= TSYNC_PIPE_MIN_SIZE && got <= TSYNC_PIPE_DEFAULT_SIZE);
	assert_int_equal(fcntl(fds[0], F_GETPIPE_SZ), got);
	close(fds[0]);
	close(fds[1]);

	/* 4 MiB is above fs.pipe-max-size (1 MiB) for everyone here
	 * without CAP_SYS_RESOURCE: the fallback halves until granted. */
	got = tsync_pipe_open(fds, 4 << 20, "test 4M");
	printf("asked 4 MiB: %ld bytes\n", got);
	assert_true(got >= TSYNC_PIPE_MIN_SIZE);
	assert_int_equal(fcntl(fds[0], F_GETPIPE_SZ), got);
	close(fds[0]);
	close(fds[1]);
}

/* The regression sweep with an 8 KiB pipe and the flush: no stall. */
static void test_sweep_8k_flush(void **state)
{
	size_t pipe = 0;

	(void)state;
	assert_int_equal(sweep_fast(8192, 8192, "8k", &pipe), 0);
	assert_int_equal(pipe, 8192);
}

/*
 * The same sweep with the flush turned off must stall on every r in
 * 7372..8191: the test above would catch a forwarder without the flush.
 */
static void test_sweep_8k_noflush_stalls(void **state)
{
	struct tsync_fwd_opts o = { .pipe_size = 8192, .name = "8k-noflush",
				    .test_no_flush = true };
	struct tsync_fwd_stats st;
	struct splice_rig r;
	int missing = 0, stalls = 0, tries;
	uint32_t tag = 1;
	int64_t ns = 0;
	size_t len, rr;

	(void)state;
	assert_int_equal(splice_rig_start(&r, &o), 0);
	printf("8k sweep, flush OFF:\n");
	for (int k = 0; k < SPLICE_SWEEP_K; k++) {
		for (int i = 0; i < SPLICE_SWEEP_NR; i++) {
			rr = splice_sweep_r[i];
			len = k * 8192 + rr;
			/* An expected stall is retried up to 3 times in case
			 * the tail arrived split over two reads. */
			for (tries = 1; tries <= 3; tries++) {
				ns = splice_rig_msg(&r, len, tag++, MSG_TIMEOUT_MS);
				if (ns < 0 || !splice_sweep_stalls(rr) ||
				    ns > BOUND_MS * NSEC_PER_MSEC)
					break;
			}
			print_lat("8k-noflush", len, ns, tries);
			assert_true(ns >= 0);
			if (ns > BOUND_MS * NSEC_PER_MSEC)
				stalls++;
			if (splice_sweep_stalls(rr) && ns <= BOUND_MS * NSEC_PER_MSEC)
				missing++;
		}
	}
	splice_rig_join(&r);
	tsync_fwd_get_stats(r.fwd, &st);
	printf("  stalls %d, expected stalls not seen %d, flushes %llu\n",
	       stalls, missing, (unsigned long long)st.flushes);
	splice_rig_stop(&r);
	assert_int_equal(st.flushes, 0);
	assert_int_equal(missing, 0);
}

/* The sweep with 64 KiB pipes, at 8 KiB and at 64 KiB granularity. */
static void test_sweep_64k(void **state)
{
	(void)state;
	assert_int_equal(sweep_fast(65536, 8192, "64k", NULL), 0);
	assert_int_equal(sweep_fast(65536, 65536, "64k-scaled", NULL), 0);
}

/* The sweep with 1 MiB pipes, at 8 KiB and at 1 MiB granularity. */
static void test_sweep_1m(void **state)
{
	(void)state;
	assert_int_equal(sweep_fast(1 << 20, 8192, "1m", NULL), 0);
	assert_int_equal(sweep_fast(1 << 20, 1 << 20, "1m-scaled", NULL), 0);
}

/* The sweep in the read/write fallback mode (no splice, no MORE). */
static void test_sweep_copy_mode(void **state)
{
	struct tsync_fwd_opts o = { .pipe_size = 8192, .name = "copy",
				    .test_force_copy = true };
	struct tsync_fwd_stats st;
	struct splice_rig r;
	uint32_t tag = 1;
	int used, bad = 0;
	int64_t ns;
	size_t len;

	(void)state;
	assert_int_equal(splice_rig_start(&r, &o), 0);
	for (int k = 0; k < SPLICE_SWEEP_K; k++) {
		for (int i = 0; i < SPLICE_SWEEP_NR; i++) {
			len = k * 8192 + splice_sweep_r[i];
			ns = msg_fast(&r, len, &tag, MSG_TRIES, &used);
			print_lat("copy", len, ns, used);
			if (ns < 0 || ns > BOUND_MS * NSEC_PER_MSEC)
				bad++;
		}
	}
	splice_rig_join(&r);
	tsync_fwd_get_stats(r.fwd, &st);
	splice_rig_stop(&r);
	assert_int_equal(bad, 0);
	assert_true(st.copy_mode);
	assert_int_equal(st.splices, 0);
	assert_int_equal(st.bytes_in, st.bytes_out);
}

/*
 * Child of test_unpriv_pipe_fallback, as uid 65534: holds @nhold pipes
 * of 1 MiB (64 here: fs.pipe-user-pages-soft is 64 MiB), so a new pipe
 * comes up at 8 KiB and cannot grow. The forwarder asks for its default 1 MiB, must
 * end up with 8 KiB, and the sweep must still be stall-free. Returns the
 * exit status: 0 pass, 1 fail, 2 setup error.
 */
static int unpriv_child(int nhold)
{
	struct tsync_fwd_opts o = { .name = "unpriv" };
	struct tsync_fwd_stats st;
	int hold[MAX_HOLD][2], held = 0, bad = 0, used, ret;
	struct splice_rig r;
	uint32_t tag = 1;
	int64_t ns;
	size_t len;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
		perror("drop to uid 65534");
		return 2;
	}
	for (int i = 0; i < nhold; i++) {
		if (pipe2(hold[i], O_CLOEXEC)) {
			perror("pipe2");
			return 2;
		}
		if (fcntl(hold[i][1], F_SETPIPE_SZ, 1 << 20) == 1 << 20)
			held++;
	}
	printf("uid %d holds %d of %d pipes at 1 MiB\n", (int)getuid(), held, nhold);
	ret = splice_rig_start(&r, &o);
	if (ret) {
		fprintf(stderr, "rig: %s\n", strerror(-ret));
		return 2;
	}
	for (int k = 0; k < SPLICE_SWEEP_K; k++) {
		for (int i = 0; i < SPLICE_SWEEP_NR; i++) {
			len = k * 8192 + splice_sweep_r[i];
			ns = msg_fast(&r, len, &tag, MSG_TRIES, &used);
			print_lat("unpriv", len, ns, used);
			if (ns < 0 || ns > BOUND_MS * NSEC_PER_MSEC)
				bad++;
		}
	}
	/* a bigger transfer through the small pipe completes intact */
	ns = splice_rig_msg(&r, 4 << 20, tag++, 10000);
	print_lat("unpriv-4MiB", 4 << 20, ns, 1);
	if (ns < 0)
		bad++;
	splice_rig_join(&r);
	tsync_fwd_get_stats(r.fwd, &st);
	splice_rig_stop(&r);
	printf("unpriv: pipe %zu bytes, flushes %llu, %d bad\n", st.pipe_size,
	       (unsigned long long)st.flushes, bad);
	if (st.pipe_size != 8192) {
		fprintf(stderr, "pipe is %zu bytes, expected the 8 KiB "
			"fallback\n", st.pipe_size);
		return 1;
	}
	for (int i = 0; i < nhold; i++) {
		close(hold[i][0]);
		close(hold[i][1]);
	}
	return bad ? 1 : 0;
}

/* Runs unpriv_child() in a forked child that drops root (tests run as
 * root) and checks its exit status, killing it after 60 s. */
static void test_unpriv_pipe_fallback(void **state)
{
	struct pollfd pfd;
	int status, pidfd, nhold;
	long long soft = 0;
	FILE *fp;
	pid_t pid;

	(void)state;
	if (getuid() != 0)
		skip();
	/* as many 1 MiB pipes as the soft limit allows (64 here) */
	fp = fopen("/proc/sys/fs/pipe-user-pages-soft", "r");
	if (fp) {
		if (fscanf(fp, "%lld", &soft) != 1)
			soft = 0;
		fclose(fp);
	}
	nhold = (int)(soft * 4096 / (1 << 20));
	printf("fs.pipe-user-pages-soft %lld: holding %d pipes of 1 MiB\n",
	       soft, nhold);
	if (nhold <= 0 || nhold > MAX_HOLD)
		skip();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int code = unpriv_child(nhold);

		fflush(stdout);
		_exit(code);
	}
	pidfd = pidfd_open(pid, 0);
	assert_true(pidfd >= 0);
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(pidfd);
		fail_msg("the unprivileged child did not finish within 60 s");
	}
	close(pidfd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A sender thread: @len bytes of pattern @tag (or counting words) to fd,
 * giving up at @deadline, then shutdown(SHUT_WR). */
struct sender {
	int fd;
	uint64_t len;
	uint32_t tag;
	bool words;		/* 64-bit little-endian offset/8 pattern */
	int64_t deadline;
	int ret;
	pthread_t thr;
};

/* Fills @buf (@n bytes, @off a multiple of 8 for words) with the pattern
 * of stream offset @off. */
static void fill_pattern(const struct sender *s, uint8_t *buf, size_t n,
			 uint64_t off)
{
	if (s->words) {
		for (size_t i = 0; i < n; i += 8) {
			uint64_t w = (off + i) / 8;

			memcpy(buf + i, &w, n - i < 8 ? n - i : 8);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			buf[i] = splice_pat(s->tag, off + i);
	}
}

/* The sender thread body; see struct sender. */
static void *sender_main(void *arg)
{
	struct sender *s = arg;
	size_t chunk = 1 << 20, n;
	uint64_t off = 0, done;
	struct pollfd pfd;
	uint8_t *buf = malloc(chunk);
	ssize_t w;

	s->ret = buf ? 0 : -ENOMEM;
	fcntl(s->fd, F_SETFL, O_NONBLOCK);
	while (!s->ret && off < s->len) {
		n = s->len - off < chunk ? (size_t)(s->len - off) : chunk;
		fill_pattern(s, buf, n, off);
		for (done = 0; done < n;) {
			w = send(s->fd, buf + done, n - done, MSG_NOSIGNAL);
			if (w > 0) {
				done += (size_t)w;
				continue;
			}
			if (w < 0 && errno != EAGAIN && errno != EINTR) {
				s->ret = -errno;
				break;
			}
			pfd.fd = s->fd;
			pfd.events = POLLOUT;
			poll(&pfd, 1, tsync_remaining_ms(s->deadline));
			if (tsync_now_ns() >= s->deadline) {
				s->ret = -ETIMEDOUT;
				break;
			}
		}
		off += n;
	}
	shutdown(s->fd, SHUT_WR);
	free(buf);
	return NULL;
}

/* Starts a sender thread; returns 0 or -errno. */
static int sender_start(struct sender *s, int fd, uint64_t len, bool words,
			int timeout_ms)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->len = len;
	s->tag = 7;
	s->words = words;
	s->deadline = tsync_deadline_ms(timeout_ms);
	return -pthread_create(&s->thr, NULL, sender_main, s);
}

/* Checks @n received bytes at stream offset @off against the word
 * pattern; returns true if they match. */
static bool check_words(const uint8_t *buf, size_t n, uint64_t off)
{
	size_t i = 0;
	uint64_t w;

	for (; i < n && (off + i) % 8; i++) {
		w = (off + i) / 8;
		if (buf[i] != (uint8_t)(w >> (8 * ((off + i) % 8))))
			return false;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, buf + i, 8);
		if (w != (off + i) / 8)
			return false;
	}
	for (; i < n; i++) {
		w = (off + i) / 8;
		if (buf[i] != (uint8_t)(w >> (8 * ((off + i) % 8))))
			return false;
	}
	return true;
}

/* Returns true if socket @fd would not take more data now (POLLOUT off). */
static bool sock_full(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	return poll(&pfd, 1, 0) == 0;
}

/*
 * Waits until the whole rig is backed up: the sink @r->b and the sender's
 * socket both full, so the forwarder's pipe is full between them. Polls
 * every millisecond (the sockets offer no "became full" event) until
 * @deadline; returns true once backed up.
 */
static bool wait_backed_up(const struct splice_rig *r, int64_t deadline)
{
	struct timespec tick = { 0, NSEC_PER_MSEC };

	while (!(sock_full(r->b) && sock_full(r->snd))) {
		if (tsync_now_ns() >= deadline)
			return false;
		nanosleep(&tick, NULL);
	}
	return true;
}

/*
 * The EAGAIN pitfall: 1 GiB through an 8 KiB pipe while the receiver
 * does not read at first, so the sink fills, the pipe fills, and the
 * source splice says EAGAIN with data still queued. A forwarder that took
 * that EAGAIN for "source drained" would wait forever; this one must
 * complete, intact, before the deadline (which only catches a hang: the
 * transfer takes 5-15 s here, loaded or not).
 */
static void test_eagain_pitfall_1gib(void **state)
{
	const uint64_t total = 1ull << 30;
	struct tsync_fwd_opts o = { .pipe_size = 8192, .name = "1gib" };
	struct timespec tick = { 0, NSEC_PER_MSEC };
	struct tsync_fwd_stats st;
	struct splice_rig r;
	struct sender s;
	struct pollfd pfd;
	size_t bufsz = 1 << 20;
	uint8_t *buf = malloc(bufsz);
	int64_t t0, t1, deadline;
	uint64_t got = 0;
	bool ok = true, backed_up;
	ssize_t n;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(splice_rig_start(&r, &o), 0);
	t0 = tsync_now_ns();
	deadline = tsync_deadline_ms(180000);
	assert_int_equal(sender_start(&s, r.snd, total, true, 180000), 0);
	/* slow at first: nothing until everything is backed up, then 200
	 * small reads 1 ms apart (the pace of a slow reader: any pace must
	 * pass, a loaded machine only makes it slower) */
	backed_up = wait_backed_up(&r, deadline);
	for (int i = 0; i < 200 && ok; i++) {
		n = recv(r.rcv, buf, 1024, MSG_DONTWAIT);
		if (n > 0) {
			ok = check_words(buf, (size_t)n, got);
			got += (uint64_t)n;
		}
		nanosleep(&tick, NULL);
	}
	while (ok && tsync_now_ns() < deadline) {
		n = recv(r.rcv, buf, bufsz, MSG_DONTWAIT);
		if (n > 0) {
			ok = check_words(buf, (size_t)n, got);
			got += (uint64_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			break;
		pfd.fd = r.rcv;
		pfd.events = POLLIN;
		poll(&pfd, 1, tsync_remaining_ms(deadline));
	}
	t1 = tsync_now_ns();
	pthread_join(s.thr, NULL);
	splice_rig_join(&r);
	tsync_fwd_get_stats(r.fwd, &st);
	printf("1 GiB via 8 KiB pipe: %llu bytes in %.3f s (%.0f MB/s incl. "
	       "the slow start), backed up %d, forwarder %d, sender %d, "
	       "forwarder CPU %.3f s\n", (unsigned long long)got,
	       (double)(t1 - t0) / NSEC_PER_SEC,
	       (double)got / 1e6 / ((double)(t1 - t0) / NSEC_PER_SEC),
	       backed_up, r.result, s.ret, (double)r.cpu_ns / NSEC_PER_SEC);
	splice_rig_stop(&r);
	free(buf);
	assert_true(backed_up);
	assert_true(ok);
	assert_int_equal(s.ret, 0);
	assert_int_equal(r.result, TSYNC_FWD_EOF);
	assert_true(got == total);
	assert_true(st.bytes_in == total && st.bytes_out == total);
	assert_int_equal(st.pipe_size, 8192);
}

/* Creates an unlinked temporary file opened with @flags (plus O_RDWR
 * semantics through a second fd for reading back); returns the fd. */
static int tmpfile_fd(int flags, int *rfd)
{
	char path[] = "/tmp/tsync-test-splice-XXXXXX";
	int fd = mkstemp(path);

	*rfd = -1;
	if (fd < 0)
		return -errno;
	close(fd);
	fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	*rfd = open(path, O_RDONLY | O_CLOEXEC);
	unlink(path);
	return fd;
}

/* Reads back @len bytes of pattern @tag from @fd; returns true if equal. */
static bool file_has_pattern(int fd, size_t len, uint32_t tag)
{
	uint8_t *buf = malloc(len + 1);
	ssize_t n;
	bool ok;

	if (!buf)
		return false;
	n = pread(fd, buf, len + 1, 0);
	ok = n == (ssize_t)len;
	for (size_t i = 0; ok && i < len; i++)
		ok = buf[i] == splice_pat(tag, i);
	free(buf);
	return ok;
}

/* A sink that refuses splice (a file opened O_APPEND gives EINVAL): the
 * forwarder falls back to read/write and everything still arrives. */
static void test_copy_fallback_on_einval(void **state)
{
	const size_t len = 3 * 100000 + 7;
	struct tsync_fwd_stats st;
	struct tsync_fwd *f;
	struct sender s;
	int snd, a, sink, rfd;

	(void)state;
	assert_int_equal(splice_tcp_pair(&snd, &a), 0);
	sink = tmpfile_fd(O_APPEND, &rfd);
	assert_true(sink >= 0 && rfd >= 0);
	assert_int_equal(tsync_fwd_new(a, sink, NULL, &f), 0);
	assert_int_equal(sender_start(&s, snd, len, false, 10000), 0);
	assert_int_equal(tsync_fwd_run(f, -1, tsync_deadline_ms(10000)),
			 TSYNC_FWD_EOF);
	pthread_join(s.thr, NULL);
	tsync_fwd_get_stats(f, &st);
	tsync_fwd_free(f);
	assert_int_equal(s.ret, 0);
	assert_true(st.copy_mode);
	assert_int_equal(st.bytes_in, len);
	assert_int_equal(st.bytes_out, len);
	assert_true(file_has_pattern(rfd, len, 7));
	close(snd);
	close(a);
	close(sink);
	close(rfd);
}

/* Writes @len bytes of pattern 7 into @fd from a forked child (the
 * parent forwards meanwhile); returns the child's pid or -errno. */
static pid_t fork_writer(int fd, int other, size_t len)
{
	uint8_t *buf;
	size_t done = 0;
	ssize_t w;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid < 0 ? -errno : pid;
	close(other);
	buf = malloc(len);
	if (!buf)
		_exit(1);
	for (size_t i = 0; i < len; i++)
		buf[i] = splice_pat(7, i);
	while (done < len) {
		w = write(fd, buf + done, len - done);
		if (w <= 0)
			_exit(1);
		done += (size_t)w;
	}
	_exit(0);
}

/* A pipe as the source and a regular file as the sink, both spliced. */
static void test_pipe_to_file(void **state)
{
	const size_t len = (1 << 20) + 12345;
	struct tsync_fwd_stats st;
	struct tsync_fwd *f;
	int p[2], sink, rfd, status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	sink = tmpfile_fd(0, &rfd);
	assert_true(sink >= 0 && rfd >= 0);
	pid = fork_writer(p[1], p[0], len);
	assert_true(pid > 0);
	close(p[1]);
	assert_int_equal(tsync_fwd_new(p[0], sink, NULL, &f), 0);
	assert_int_equal(tsync_fwd_run(f, -1, tsync_deadline_ms(10000)),
			 TSYNC_FWD_EOF);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tsync_fwd_get_stats(f, &st);
	tsync_fwd_free(f);
	assert_false(st.copy_mode);
	assert_int_equal(st.bytes_in, len);
	assert_int_equal(st.bytes_out, len);
	assert_int_equal(st.flushes, 0);	/* a file sink is never flushed */
	assert_true(file_has_pattern(rfd, len, 7));
	close(p[0]);
	close(sink);
	close(rfd);
}

/* A sink whose peer is gone: an error (not EOF), and no SIGPIPE death
 * (this test binary does not ignore SIGPIPE). */
static void test_sink_gone_is_error(void **state)
{
	struct tsync_fwd *f;
	struct sender s;
	int snd, a, b, rcv, ret;

	(void)state;
	assert_int_equal(splice_tcp_pair(&snd, &a), 0);
	assert_int_equal(splice_tcp_pair(&b, &rcv), 0);
	close(rcv);
	assert_int_equal(tsync_fwd_new(a, b, NULL, &f), 0);
	assert_int_equal(sender_start(&s, snd, 8 << 20, false, 5000), 0);
	ret = tsync_fwd_run(f, -1, tsync_deadline_ms(5000));
	printf("sink gone: %d (%s)\n", ret, strerror(-ret));
	assert_true(ret == -EPIPE || ret == -ECONNRESET);
	close(a);	/* lets the sender fail instead of waiting 5 s */
	pthread_join(s.thr, NULL);
	tsync_fwd_free(f);
	close(snd);
	close(b);
}

/* Deadline, stop fd, drain, and end of stream as distinct results. */
static void test_deadline_stop_drain_eof(void **state)
{
	struct tsync_fwd *f;
	int snd, a, b, rcv, efd;
	uint64_t one = 1;
	int64_t t0, el;
	char buf[50000];
	ssize_t n;

	(void)state;
	assert_int_equal(splice_tcp_pair(&snd, &a), 0);
	assert_int_equal(splice_tcp_pair(&b, &rcv), 0);
	assert_int_equal(tsync_fwd_new(a, b, NULL, &f), 0);
	assert_int_equal(tsync_fwd_run(f, -1, -1), -EINVAL);

	/* idle source: the deadline ends the call, not before it; the upper
	 * bound only tells "ended by the deadline" from "hung", with room
	 * for a loaded machine to wake us late */
	t0 = tsync_now_ns();
	assert_int_equal(tsync_fwd_run(f, -1, tsync_deadline_ms(100)), -ETIMEDOUT);
	el = tsync_now_ns() - t0;
	assert_true(el >= 99 * NSEC_PER_MSEC && el < 10 * NSEC_PER_SEC);

	/* stop fd */
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(tsync_fwd_run(f, efd, -1), TSYNC_FWD_STOPPED);

	/* drain: what is there now is moved, then IDLE (not EOF) */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(send(snd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	/* the data may still be in flight on loopback; wait for it */
	assert_int_equal(tsync_wait_readable(a, tsync_deadline_ms(5000)), 1);
	assert_int_equal(tsync_fwd_drain(f, tsync_deadline_ms(5000)), TSYNC_FWD_IDLE);
	n = recv(rcv, buf, sizeof(buf), MSG_WAITALL);
	assert_int_equal(n, (ssize_t)sizeof(buf));

	/* end of stream */
	shutdown(snd, SHUT_WR);
	assert_int_equal(tsync_fwd_run(f, -1, tsync_deadline_ms(5000)),
			 TSYNC_FWD_EOF);
	tsync_fwd_free(f);
	close(efd);
	close(snd);
	close(a);
	close(b);
	close(rcv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_sizing),
		cmocka_unit_test(test_sweep_8k_flush),
		cmocka_unit_test(test_sweep_8k_noflush_stalls),
		cmocka_unit_test(test_sweep_64k),
		cmocka_unit_test(test_sweep_1m),
		cmocka_unit_test(test_sweep_copy_mode),
		cmocka_unit_test(test_unpriv_pipe_fallback),
		cmocka_unit_test(test_eagain_pitfall_1gib),
		cmocka_unit_test(test_copy_fallback_on_einval),
		cmocka_unit_test(test_pipe_to_file),
		cmocka_unit_test(test_sink_gone_is_error),
		cmocka_unit_test(test_deadline_stop_drain_eof),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	tsync_log_init("test_splice", TSYNC_LOG_DEBUG, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
