// SPDX-License-Identifier: GPL-2.0-or-later
/* The live status line's thread; see status_live.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "common/base/timeutil.h"
#include "common/tracemeta/tracemeta.h"
#include "host/guest/guest.h"
#include "host/guest/guest_rx.h"
#include "host/cmd/status.h"
#include "host/cmd/status_live.h"

#define STATUS_PERIOD_MS 1000

struct status_live {
	int fd;
	struct status_host host;
	const struct guest *guests;
	int nguests;
	struct status_src *src;		/* [1 + nguests] */
	int stop_fd;			/* eventfd: stop */
	pthread_t th;
	int64_t start_ns;
	bool written;			/* a line is on the terminal */
};

/* The host's numbers: its files' sizes and its ring buffers' stats. */
static void gather_host(const struct status_host *h, struct status_src *s)
{
	*s = (struct status_src){ .name = "host" };
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		struct tracemeta_stats st = { 0 };
		struct stat sb;

		if (h->files[cpu] >= 0 && fstat(h->files[cpu], &sb) == 0)
			s->bytes += (uint64_t)sb.st_size;
		if (tracemeta_read_stats(h->inst, cpu, &st, NULL) == 0) {
			s->events += st.read_events;
			s->lost += st.overrun + st.commit_overrun + st.dropped_events;
		}
	}
}

/* Guest @g's numbers: its receivers' counters and its last sync round. */
static void gather_guest(const struct guest *g, struct status_src *s)
{
	struct rx_counts c = { 0 };

	if (g->rxg)
		rx_group_counts(g->rxg, &c);
	*s = (struct status_src){ .name = g->name, .guest = true, .bytes = c.bytes,
				  .events = c.events, .lost = c.missed,
				  .lost_min = c.missed_min };
	s->rounds = atomic_load(&g->live_rounds);
	s->offset_ns = atomic_load(&g->live_offset_ns);
	s->error_ns = atomic_load(&g->live_error_ns);
}

/* Gathers, formats and writes one line. */
static void tick(struct status_live *s)
{
	char line[1024 + 8];
	struct winsize ws = { 0 };
	size_t n;

	gather_host(&s->host, &s->src[0]);
	for (int i = 0; i < s->nguests; i++)
		gather_guest(&s->guests[i], &s->src[1 + i]);
	if (ioctl(s->fd, TIOCGWINSZ, &ws) != 0)
		ws.ws_col = 0;
	line[0] = '\r';
	n = status_format(line + 1, 1024, tsync_now_ns() - s->start_ns, s->src, 1 + s->nguests,
			  ws.ws_col);
	/* erase what a longer line before left */
	memcpy(line + 1 + n, "\033[K", 3);
	if (write(s->fd, line, n + 4) > 0)
		s->written = true;
}

/* The thread: a line every STATUS_PERIOD_MS until stopped. */
static void *status_thread(void *arg)
{
	struct status_live *s = arg;
	struct pollfd pfd = { .fd = s->stop_fd, .events = POLLIN };

	for (;;) {
		int n = poll(&pfd, 1, STATUS_PERIOD_MS);

		if (n > 0 || (n < 0 && errno != EINTR))
			return NULL;
		if (n == 0)
			tick(s);
	}
}

/* Whether a status line is drawn; see status_live.h. */
bool status_live_wanted(int fd)
{
	return isatty(fd);
}

/* Starts the status line; see status_live.h. */
int status_live_start(int fd, const struct status_host *h, const struct guest *guests,
		      int nguests, struct status_live **out)
{
	struct status_live *s;
	int ret;

	*out = NULL;
	if (!status_live_wanted(fd))
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->src = calloc((size_t)nguests + 1, sizeof(*s->src));
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (!s->src || s->stop_fd < 0) {
		ret = s->src ? -errno : -ENOMEM;
		goto fail;
	}
	s->fd = fd;
	s->host = *h;
	s->guests = guests;
	s->nguests = nguests;
	s->start_ns = tsync_now_ns();
	ret = -pthread_create(&s->th, NULL, status_thread, s);
	if (ret)
		goto fail;
	*out = s;
	return 0;
fail:
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	free(s->src);
	free(s);
	return ret;
}

/* Stops the status line; see status_live.h. */
void status_live_stop(struct status_live *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	/* an eventfd write of 1 cannot fail short of a bug */
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(s->th, NULL);
	if (s->written && write(s->fd, "\r\033[K", 4) < 0)
		s->written = false;	/* nothing more to do about it */
	close(s->stop_fd);
	free(s->src);
	free(s);
}
