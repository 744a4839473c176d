// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptp4l through its management socket, as `pmc -u -b 0` asks it: GET
 * DEFAULT_DATA_SET (this clock's identity, its ports), TIME_STATUS_NP
 * (the grandmaster and the offset from it), CURRENT_DATA_SET (steps
 * removed, mean path delay) and PORT_DATA_SET (each port's state; one
 * answer per port). The client socket is bound to an abstract address of
 * the kernel's choosing, where ptp4l sends its answers; every wait is
 * bounded by the read's deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/clock/clock.h"
#include "common/clock/ptpmgmt.h"
#include "common/base/timeutil.h"

/* Connects a datagram socket to @path, bound to an abstract address.
 * Returns the fd or -errno. */
static int ptp4l_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* an address length of the family alone: the kernel picks an
	 * abstract name (autobind) */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa.sun_family)) < 0)
		goto fail;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

/*
 * Sends the GET of @id with @seq and receives answers to it until @want of
 * them came (or one, for a dataset of the clock) or @deadline; calls @take
 * on each. Returns the number taken (> 0), -ETIMEDOUT with none, or -errno.
 */
static int ask(int fd, uint16_t id, uint16_t seq, unsigned int want, int64_t deadline,
	       int (*take)(const struct ptpmgmt_reply *r, struct ptpmgmt_view *v),
	       struct ptpmgmt_view *v)
{
	uint8_t buf[PTPMGMT_BUF_MAX];
	size_t len = ptpmgmt_get(buf, sizeof(buf), id, seq, (uint32_t)getpid());
	unsigned int got = 0;

	if (send(fd, buf, len, 0) != (ssize_t)len)
		return -errno;
	while (got < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct ptpmgmt_reply r;
		ssize_t n;
		int left = tsync_remaining_ms(deadline);

		if (left <= 0)
			break;
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			return -errno;
		if (!(p.revents & POLLIN))
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (ptpmgmt_parse(buf, (size_t)n, &r) || r.seq != seq || r.id != id)
			continue;	/* not the answer to this GET */
		if (r.error)
			return -EREMOTEIO;
		if (take(&r, v))
			return -EBADMSG;
		got++;
	}
	return got ? (int)got : -ETIMEDOUT;
}

static int take_default(const struct ptpmgmt_reply *r, struct ptpmgmt_view *v)
{
	return ptpmgmt_default_ds(r, &v->dds);
}

static int take_time(const struct ptpmgmt_reply *r, struct ptpmgmt_view *v)
{
	return ptpmgmt_time_status(r, &v->ts);
}

static int take_current(const struct ptpmgmt_reply *r, struct ptpmgmt_view *v)
{
	return ptpmgmt_current_ds(r, &v->cds);
}

static int take_port(const struct ptpmgmt_reply *r, struct ptpmgmt_view *v)
{
	if (v->nports >= PTPMGMT_MAX_PORTS)
		return 0;
	return ptpmgmt_port_ds(r, &v->ports[v->nports++]);
}

static int ptp4l_read(const struct agent_clock_cfg *cfg, int64_t deadline,
		      struct tsync_clock_state *out)
{
	struct ptpmgmt_view v;
	const char *what = "DEFAULT_DATA_SET";
	unsigned int nports;
	int fd, ret;

	memset(&v, 0, sizeof(v));
	fd = ptp4l_connect(cfg->ptp4l_socket);
	if (fd < 0) {
		snprintf(out->detail, sizeof(out->detail), "ptp4l: %s: %s", cfg->ptp4l_socket,
			 strerror(-fd));
		return fd;
	}
	ret = ask(fd, PTPMGMT_DEFAULT_DATA_SET, 1, 1, deadline, take_default, &v);
	if (ret < 0)
		goto out;
	what = "TIME_STATUS_NP";
	ret = ask(fd, PTPMGMT_TIME_STATUS_NP, 2, 1, deadline, take_time, &v);
	if (ret < 0)
		goto out;
	what = "CURRENT_DATA_SET";
	ret = ask(fd, PTPMGMT_CURRENT_DATA_SET, 3, 1, deadline, take_current, &v);
	if (ret < 0)
		goto out;
	what = "PORT_DATA_SET";
	nports = v.dds.nports < PTPMGMT_MAX_PORTS ? v.dds.nports : PTPMGMT_MAX_PORTS;
	ret = ask(fd, PTPMGMT_PORT_DATA_SET, 4, nports ? nports : 1, deadline, take_port, &v);
	if (ret < 0)
		goto out;
	ret = 0;
	ptpmgmt_state(&v, out);
out:
	if (ret)
		snprintf(out->detail, sizeof(out->detail), "ptp4l: %s: GET %s: %s",
			 cfg->ptp4l_socket, what, strerror(-ret));
	close(fd);
	return ret;
}

const struct clock_daemon_ops clock_ptp4l_ops = {
	.name = "ptp4l",
	.read = ptp4l_read,
};
