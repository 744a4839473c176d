// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hvsock_mux: a stand-in for the host end of Firecracker's (and
 * cloud-hypervisor's) vsock device, for tests on a machine with neither
 * VMM. It follows the handshake of Firecracker's docs/vsock.md byte for
 * byte, as its muxer reads it:
 *
 *   - accepts on the Unix socket PATH (the VMM's uds_path);
 *   - reads the connect command: 10 bytes at once (the length of
 *     "connect 0\n"), then one byte at a time up to '\n' or 32 bytes; its
 *     first word must be "connect" in any case, its second a 32-bit
 *     decimal port;
 *   - connects to the "guest": the TCP port of 127.0.0.1 that --map maps
 *     that vsock port to (a tsync-agent listening there);
 *   - answers "OK <HOSTPORT>\n", HOSTPORT counting up from 1073741824 (2^30)
 *     as Firecracker's local ports do, then copies bytes both ways until
 *     either side closes;
 *   - a request it cannot parse, or a port with no map or nothing
 *     listening behind it, gets the connection closed without a word:
 *     what Firecracker does when nothing listens on the guest's port.
 *
 *   hvsock_mux [--mode MODE] [--map VPORT=TCPPORT]... PATH
 *
 *   --mode ok        the above (default)
 *   --mode refuse    reads the request, closes without an answer
 *   --mode midclose  reads the request, sends "OK 10" (no '\n'), closes
 *   --mode silent    reads the request, then says nothing until the peer
 *                    closes
 *   --mode garbage   reads the request, answers "ERR no such port\n"
 *
 * Prints "listening on PATH" on stdout when ready; logs each request on
 * stderr ("mux: CONNECT 8823: OK 1073741824 (tcp 127.0.0.1:41234)") so
 * tests can count connections. Runs until killed.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#define MAX_MAPS 16
#define REQ_MIN 10	/* "connect 0\n" */
#define REQ_MAX 32	/* Firecracker's buffer */

enum mode { M_OK, M_REFUSE, M_MIDCLOSE, M_SILENT, M_GARBAGE };

struct mux {
	enum mode mode;
	int nmaps;
	uint32_t vport[MAX_MAPS];
	uint16_t tport[MAX_MAPS];
	atomic_uint next_hostport;
};

struct conn {
	struct mux *m;
	int fd;
};

/* Reads exactly @len bytes; 0, or -1 on error or end of stream. */
static int read_exact(int fd, char *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes all of @buf; 0 or -1. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads and parses the connect command as Firecracker's muxer does
 * (read_local_stream_port). Returns 0 and the port, or -1. */
static int read_request(int fd, uint32_t *port)
{
	char buf[REQ_MAX + 1], *word, *save, *end;
	size_t len = REQ_MIN;
	unsigned long long v;

	if (read_exact(fd, buf, REQ_MIN))
		return -1;
	while (buf[len - 1] != '\n' && len < REQ_MAX) {
		if (read_exact(fd, &buf[len], 1))
			return -1;
		len++;
	}
	buf[len] = '\0';
	word = strtok_r(buf, " \t\n\r\v\f", &save);
	if (!word || strcasecmp(word, "connect"))
		return -1;
	word = strtok_r(NULL, " \t\n\r\v\f", &save);
	if (!word || !isdigit((unsigned char)word[word[0] == '+'])) /* Rust's u32 parse */
		return -1;
	errno = 0;
	v = strtoull(word, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*port = (uint32_t)v;
	return 0;
}

/* Connects to the TCP port vsock port @vport is mapped to; fd or -1. */
static int connect_guest(const struct mux *m, uint32_t vport, uint16_t *tport)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd;

	for (int i = 0; i < m->nmaps; i++) {
		if (m->vport[i] != vport)
			continue;
		*tport = m->tport[i];
		sin.sin_port = htons(m->tport[i]);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	return -1;
}

/* Copies bytes between @a and @b until both directions have ended. */
static void splice_both(int a, int b)
{
	struct pollfd p[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
	char buf[65536];
	int open_dirs = 2;

	while (open_dirs) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++) {
			int to = i ? a : b;
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || write_all(to, buf, (size_t)n)) {
				/* this direction ended: pass the end on */
				shutdown(to, SHUT_WR);
				p[i].fd = -1;
				open_dirs--;
			}
		}
	}
}

/* One host connection: the handshake, then the stream. */
static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct mux *m = c->m;
	char ok[32];
	uint32_t vport;
	uint16_t tport = 0;
	int g = -1;

	if (read_request(c->fd, &vport)) {
		fprintf(stderr, "mux: bad request: closed\n");
		goto out;
	}
	switch (m->mode) {
	case M_REFUSE:
		fprintf(stderr, "mux: CONNECT %u: refused (closed)\n", vport);
		goto out;
	case M_MIDCLOSE:
		fprintf(stderr, "mux: CONNECT %u: 'OK 10', closed\n", vport);
		write_all(c->fd, "OK 10", 5);
		goto out;
	case M_SILENT:
		fprintf(stderr, "mux: CONNECT %u: silent\n", vport);
		while (read(c->fd, ok, sizeof(ok)) > 0)
			;
		goto out;
	case M_GARBAGE:
		fprintf(stderr, "mux: CONNECT %u: garbage\n", vport);
		write_all(c->fd, "ERR no such port\n", 17);
		goto out;
	case M_OK:
		break;
	}
	g = connect_guest(m, vport, &tport);
	if (g < 0) {
		fprintf(stderr, "mux: CONNECT %u: nothing listens (closed)\n", vport);
		goto out;
	}
	snprintf(ok, sizeof(ok), "OK %u\n", atomic_fetch_add(&m->next_hostport, 1));
	fprintf(stderr, "mux: CONNECT %u: %.*s (tcp 127.0.0.1:%u)\n", vport,
		(int)strlen(ok) - 1, ok, tport);
	if (write_all(c->fd, ok, strlen(ok)) == 0)
		splice_both(c->fd, g);
out:
	if (g >= 0)
		close(g);
	close(c->fd);
	free(c);
	return NULL;
}

/* Parses --mode's value; -1 if unknown. */
static int parse_mode(const char *s)
{
	static const char *const names[] = { "ok", "refuse", "midclose", "silent", "garbage" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* Parses --map VPORT=TCPPORT into @m; 0 or -1. */
static int parse_map(struct mux *m, const char *s)
{
	unsigned long v, t;
	char *end;

	if (m->nmaps >= MAX_MAPS)
		return -1;
	v = strtoul(s, &end, 10);
	if (end == s || *end != '=' || v > UINT32_MAX)
		return -1;
	s = end + 1;
	t = strtoul(s, &end, 10);
	if (end == s || *end || !t || t > 65535)
		return -1;
	m->vport[m->nmaps] = (uint32_t)v;
	m->tport[m->nmaps] = (uint16_t)t;
	m->nmaps++;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "map", required_argument, NULL, 'M' },
		{ 0 }
	};
	struct mux m = { .mode = M_OK };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int opt, l;

	atomic_init(&m.next_hostport, 1u << 30);
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'm' && parse_mode(optarg) >= 0)
			m.mode = (enum mode)parse_mode(optarg);
		else if (opt == 'M' && !parse_map(&m, optarg))
			continue;
		else
			goto usage;
	}
	if (optind != argc - 1 || strlen(argv[optind]) >= sizeof(sun.sun_path))
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	strcpy(sun.sun_path, argv[optind]);
	unlink(sun.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sun, sizeof(sun)) || listen(l, 64)) {
		perror("hvsock_mux: listen");
		return 1;
	}
	printf("listening on %s\n", sun.sun_path);
	fflush(stdout);
	for (;;) {
		struct conn *c;
		pthread_t th;
		int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("hvsock_mux: accept");
			return 1;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->m = &m;
		c->fd = fd;
		if (pthread_create(&th, NULL, conn_thread, c)) {
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(th);
	}
usage:
	fprintf(stderr, "usage: hvsock_mux [--mode ok|refuse|midclose|silent|garbage] "
		"[--map VPORT=TCPPORT]... PATH\n");
	return 2;
}
