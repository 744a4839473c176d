// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A guest CPU's data receiver; see guest_rx.h. Pages are read into a
 * buffer of RX_PAGES pages; each whole page is checked, and the checked
 * ones are written at once. A stop (the group's eventfd) ends the receiver
 * after it has taken what the socket holds already, for up to a second.
 *
 * Why a floor of free space: the guests' temporary files and the host's
 * share the output directory's file system, and the host's trace.dat is
 * written last. A guest that may fill the disk would cost the host its
 * file; so a guest stops when less than RX_RESERVE_MAX (or an eighth of a
 * small file system) is left, and the caller drops that guest's data
 * before writing the host's file. The floor is the group's, not each
 * receiver's: one lock hands out the bytes the receivers may write until
 * the next look at the free space (at most RX_SPACE_CHECK, never more than
 * is free above the floor, minus what was handed out and not yet written),
 * so N receivers cannot together write N checks' worth past the floor and
 * fill the disk under the host's own streamers (their temporary files sit
 * there too, and a full disk ends them).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/statvfs.h>

#include "common/base/errbuf.h"
#include "common/base/log.h"
#include "common/base/maxkb.h"
#include "common/base/timeutil.h"
#include "host/peer/peer.h"
#include "host/guest/guest_rx.h"

#define RX_PAGES		16
#define RX_RESERVE_MAX		(64ull << 20)
#define RX_SPACE_CHECK		(4ull << 20)	/* bytes between free-space checks */
#define RX_DRAIN_MS		1000

struct rx_group {
	struct page_format fmt;
	uint64_t max_bytes;
	uint64_t half;			/* -m: a half's bytes, or 0 */
	atomic_uint_fast64_t total;	/* bytes written by all receivers */
	atomic_uint_fast64_t trimmed;	/* -m: bytes given back again */
	atomic_uint_fast64_t events;	/* data events in the pages written */
	atomic_uint_fast64_t missed;	/* events the guest lost (page headers) */
	atomic_bool missed_min;		/* a page flagged a loss without its count */
	int stop_fd;			/* eventfd: stop */
	pthread_mutex_t space_lock;	/* guards the three below */
	uint64_t reserve;		/* free bytes to leave on the file system */
	uint64_t granted;		/* bytes writable before the next check */
	uint64_t pending;		/* bytes granted, not yet written */
};

struct guest_rx {
	struct rx_group *grp;
	struct peer *peer;		/* its streams close through it */
	uint32_t cpu;
	int sock, file;
	pthread_t th;
	bool running;
	atomic_int status;		/* enum rx_end or -errno */
	uint64_t bytes, pages;
	uint64_t events;		/* in the good pages received */
	uint64_t trimmed;		/* -m: bytes of the file given back */
	bool trim_failed;
	char error[200];
};

/* Creates a group; see guest_rx.h. */
int rx_group_new(const struct page_format *f, uint64_t max_bytes, struct rx_group **out)
{
	struct rx_group *grp = calloc(1, sizeof(*grp));

	if (!grp)
		return -ENOMEM;
	grp->fmt = *f;
	grp->max_bytes = max_bytes;
	atomic_init(&grp->total, 0);
	atomic_init(&grp->trimmed, 0);
	atomic_init(&grp->events, 0);
	atomic_init(&grp->missed, 0);
	atomic_init(&grp->missed_min, false);
	grp->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (grp->stop_fd < 0) {
		free(grp);
		return -errno;
	}
	pthread_mutex_init(&grp->space_lock, NULL);
	*out = grp;
	return 0;
}

/* -m for the group's receivers; see guest_rx.h. */
void rx_group_keep_newest(struct rx_group *grp, uint32_t max_kb)
{
	grp->half = tsync_maxkb_half(max_kb, grp->fmt.page_size);
}

/* Stops every receiver of the group; see guest_rx.h. */
void rx_group_stop(struct rx_group *grp)
{
	uint64_t one = 1;

	if (grp && write(grp->stop_fd, &one, sizeof(one)) < 0)
		perror("tsync-host: eventfd");
}

/* Frees a group; see guest_rx.h. */
void rx_group_free(struct rx_group *grp)
{
	if (!grp)
		return;
	close(grp->stop_fd);
	pthread_mutex_destroy(&grp->space_lock);
	free(grp);
}

/* Fails the receiver with @err and a reason; stops the guest. */
static int rx_fail(struct guest_rx *rx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rx_fail(struct guest_rx *rx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rx->error, sizeof(rx->error), fmt, ap);
	va_end(ap);
	rx_group_stop(rx->grp);
	return err;
}

/* Grants the group the bytes its receivers may write before the next check
 * of the free space (@len at least), keeping the floor; with @grp's lock
 * held. The free space counts what is written; the bytes granted and not
 * yet written are subtracted from it. Returns 0, or -ENOSPC with the free
 * bytes in @left. */
static int rx_grant(struct rx_group *grp, int file, size_t len, uint64_t *left)
{
	struct statvfs vfs;
	uint64_t avail, room;

	if (fstatvfs(file, &vfs)) {
		grp->granted = len;	/* no way to tell: go on */
		return 0;
	}
	if (!grp->reserve) {
		grp->reserve = (uint64_t)vfs.f_blocks * vfs.f_frsize / 8;
		if (grp->reserve > RX_RESERVE_MAX)
			grp->reserve = RX_RESERVE_MAX;
	}
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	*left = avail;
	if (avail < grp->reserve + grp->pending + len)
		return -ENOSPC;
	room = avail - grp->reserve - grp->pending;
	grp->granted = room < RX_SPACE_CHECK ? room : RX_SPACE_CHECK;
	return 0;
}

/* Checks that writing @len more bytes stays within the cap and leaves the
 * file system its floor. Returns 0, -EFBIG or -ENOSPC. */
static int rx_room(struct guest_rx *rx, size_t len)
{
	struct rx_group *grp = rx->grp;
	uint64_t total = atomic_fetch_add(&grp->total, len) + len, left = 0;
	int ret = 0;

	/* with -m, what is given back does not count */
	total -= atomic_load(&grp->trimmed);
	if (grp->max_bytes && total > grp->max_bytes)
		return rx_fail(rx, -EFBIG, "the guest sent more than its cap of %llu MiB "
			       "(--guest-max-mb): stopped", (unsigned long long)(grp->max_bytes >> 20));
	pthread_mutex_lock(&grp->space_lock);
	if (grp->granted < len)
		ret = rx_grant(grp, rx->file, len, &left);
	if (!ret) {
		grp->granted -= len;
		grp->pending += len;
	}
	pthread_mutex_unlock(&grp->space_lock);
	if (ret)
		return rx_fail(rx, ret, "the output's file system is nearly full (%llu MiB "
			       "left, kept for the host's file): guest stopped",
			       (unsigned long long)(left >> 20));
	return 0;
}

/* Returns @len bytes granted by rx_room() once they are written (or not). */
static void rx_written(struct rx_group *grp, size_t len)
{
	pthread_mutex_lock(&grp->space_lock);
	grp->pending -= len;
	pthread_mutex_unlock(&grp->space_lock);
}

/* -m: gives back to the file system what is older than the data kept. */
static void rx_keep_newest(struct guest_rx *rx)
{
	uint64_t before = rx->trimmed;
	int ret;

	if (!rx->grp->half || rx->trim_failed)
		return;
	ret = tsync_maxkb_trim(rx->file, rx->bytes, rx->grp->half, &rx->trimmed);
	if (ret) {
		rx->trim_failed = true;
		log_warn("guest CPU %u: -m: cannot give the older data back (%s): the file "
			 "keeps only the newest, the disk holds it all", rx->cpu, strerror(-ret));
		return;
	}
	atomic_fetch_add(&rx->grp->trimmed, rx->trimmed - before);
}

/* Writes @len bytes of checked pages to the file. */
static int rx_write(struct guest_rx *rx, const uint8_t *p, size_t len)
{
	size_t granted = len;
	int ret = rx_room(rx, len);

	if (ret)
		return ret;
	while (len) {
		ssize_t n = write(rx->file, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = rx_fail(rx, -errno, "writing the guest's data: %s", strerror(errno));
			break;
		}
		p += n;
		len -= (size_t)n;
		rx->bytes += (uint64_t)n;
	}
	rx_written(rx->grp, granted);
	if (!ret)
		rx_keep_newest(rx);
	return ret;
}

/* Checks and writes the whole pages of @buf (@have bytes), keeping the
 * rest at its start. Returns 0 or the receiver's error. */
static int rx_pages(struct guest_rx *rx, uint8_t *buf, size_t *have)
{
	size_t ps = rx->grp->fmt.page_size, n = *have / ps, good = 0;
	struct page_counts pc, sum = { 0, 0, false };
	char why[160];
	int ret = 0;

	for (; good < n; good++) {
		if (page_check_count(buf + good * ps, &rx->grp->fmt, &pc, why, sizeof(why))) {
			ret = rx_fail(rx, -EBADMSG, "CPU %u page %llu: bad page from the agent: %s",
				      rx->cpu, (unsigned long long)(rx->pages + good), why);
			break;
		}
		sum.events += pc.events;
		sum.missed += pc.missed;
		sum.missed_min |= pc.missed_min;
	}
	if (good) {
		int wret = rx_write(rx, buf, good * ps);

		if (wret)
			return wret;
		atomic_fetch_add(&rx->grp->events, sum.events);
		atomic_fetch_add(&rx->grp->missed, sum.missed);
		if (sum.missed_min)
			atomic_store(&rx->grp->missed_min, true);
	}
	rx->pages += good;
	rx->events += sum.events;
	if (ret)
		return ret;
	memmove(buf, buf + n * ps, *have - n * ps);
	*have -= n * ps;
	return 0;
}

/* Waits for data or the stop; on the stop, starts the final drain. */
static void rx_wait(struct guest_rx *rx, bool *stopping, int64_t *drain_end)
{
	struct pollfd pfd[2] = { { .fd = rx->sock, .events = POLLIN },
				 { .fd = rx->grp->stop_fd, .events = POLLIN } };

	if (*stopping || poll(pfd, 2, -1) <= 0 || !(pfd[1].revents & POLLIN))
		return;
	*stopping = true;
	*drain_end = tsync_deadline_ms(RX_DRAIN_MS);
}

/* Body of a receiver: socket -> checked pages -> file. */
static void *rx_thread(void *arg)
{
	struct guest_rx *rx = arg;
	size_t cap = RX_PAGES * rx->grp->fmt.page_size, have = 0;
	uint8_t *buf = malloc(cap);
	bool stopping = false;
	int64_t drain_end = 0;
	int ret = -ENOMEM;

	while (buf) {
		ssize_t n;

		rx_wait(rx, &stopping, &drain_end);
		n = recv(rx->sock, buf + have, cap - have, MSG_DONTWAIT);
		if (n > 0) {
			have += (size_t)n;
			ret = rx_pages(rx, buf, &have);
			if (ret)
				break;
			if (stopping && tsync_now_ns() > drain_end) {
				ret = RX_CUT;
				break;
			}
		} else if (n == 0) {
			ret = RX_EOF;
			if (have)	/* a stream cut inside a page */
				snprintf(rx->error, sizeof(rx->error),
					 "the stream ended inside a page: %zu bytes dropped", have);
			break;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (stopping) {
				ret = RX_CUT;
				break;
			}
		} else if (errno != EINTR) {
			ret = -errno;
			snprintf(rx->error, sizeof(rx->error), "%s", strerror(errno));
			break;
		}
	}
	free(buf);
	/* Not reading any more: tell the agent at once (a close with data
	 * unread resets the connection), so that it does not block writing
	 * to a stream nobody reads. */
	peer_stream_close(rx->peer, rx->sock);
	atomic_store(&rx->status, ret);
	return NULL;
}

/* Starts a receiver; see guest_rx.h. */
int rx_start(struct rx_group *grp, uint32_t cpu, struct peer *p, int sock,
	     const char *dir, struct guest_rx **out, char *err, size_t errlen)
{
	struct guest_rx *rx = calloc(1, sizeof(*rx));
	int ret;

	if (!rx) {
		peer_stream_close(p, sock);
		return -ENOMEM;
	}
	rx->grp = grp;
	rx->peer = p;
	rx->cpu = cpu;
	rx->sock = sock;
	atomic_init(&rx->status, RX_RUNNING);
	rx->file = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (rx->file < 0) {
		ret = -errno;
		tsync_set_err(err, errlen, "temporary file in %s: %s", dir, strerror(errno));
		goto fail;
	}
	ret = -pthread_create(&rx->th, NULL, rx_thread, rx);
	if (ret) {
		close(rx->file);
		goto fail;
	}
	rx->running = true;
	*out = rx;
	return 0;
fail:
	peer_stream_close(p, sock);
	free(rx);
	return ret;
}

/* Waits for the receiver, cutting it at @deadline; see guest_rx.h. */
int rx_join(struct guest_rx *rx, int64_t deadline)
{
	struct timespec ts;
	int64_t left = deadline - tsync_now_ns();

	if (!rx->running)
		return atomic_load(&rx->status);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (left < 0)
		left = 0;
	ts.tv_sec += left / NSEC_PER_SEC;
	ts.tv_nsec += left % NSEC_PER_SEC;
	if (ts.tv_nsec >= NSEC_PER_SEC) {
		ts.tv_sec++;
		ts.tv_nsec -= NSEC_PER_SEC;
	}
	if (pthread_timedjoin_np(rx->th, NULL, &ts)) {
		rx_group_stop(rx->grp);
		pthread_join(rx->th, NULL);
	}
	rx->running = false;
	return atomic_load(&rx->status);
}

/* Accessors; see guest_rx.h. */
const char *rx_error(const struct guest_rx *rx)
{
	return rx->error;
}

uint64_t rx_bytes(const struct guest_rx *rx)
{
	return rx->bytes;
}

uint64_t rx_events(const struct guest_rx *rx)
{
	return rx->events;
}

int rx_file(const struct guest_rx *rx)
{
	return rx->file;
}

uint64_t rx_keep_from(const struct guest_rx *rx)
{
	return tsync_maxkb_keep_from(rx->bytes, rx->grp->half);
}

/* Empties the file; see guest_rx.h. */
void rx_drop_data(struct guest_rx *rx)
{
	if (ftruncate(rx->file, 0))
		perror("tsync-host: ftruncate");
	rx->bytes = 0;
	rx->trimmed = 0;
}

/* Stops and frees a receiver; see guest_rx.h. */
void rx_free(struct guest_rx *rx)
{
	if (!rx)
		return;
	if (rx->running) {
		rx_group_stop(rx->grp);
		pthread_join(rx->th, NULL);
	}
	close(rx->file);
	free(rx);
}

/* Reads the group's counters; see guest_rx.h. */
void rx_group_counts(const struct rx_group *grp, struct rx_counts *c)
{
	c->bytes = atomic_load(&grp->total);
	c->events = atomic_load(&grp->events);
	c->missed = atomic_load(&grp->missed);
	c->missed_min = atomic_load(&grp->missed_min);
}
