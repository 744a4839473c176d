// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pingpong_net: a ping-pong over TCP with a trace marker written on each
 * side just before each send and just after each receive, for the VM
 * causality test (tests/vm/test-record-causality.sh).
 *
 *   pingpong_net serve PORT INSTANCES_DIR PREFIX
 *       listens on 0.0.0.0:PORT, accepts one connection, then writes into
 *       the trace_marker of the one instance in INSTANCES_DIR whose name
 *       starts with PREFIX (the agent's recording instance):
 *       "ping-recv I" just after receiving ping I, "pong-send I" just
 *       before sending pong I. Prints "serving PORT" once listening.
 *   pingpong_net client IPV4 PORT MARKER N
 *       connects to IPV4:PORT and writes into MARKER (a trace_marker file)
 *       "ping-send I" just before sending ping I and "pong-recv I" just
 *       after receiving pong I, for I = 0..N-1.
 *
 * TCP_NODELAY on both ends; every wait bounded (10 s per message, 300 s in
 * all). Built static so the same binary runs in the guest. Exit 0 on
 * success, 1 on any error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Reads or writes exactly @len bytes; returns 0, or -1 on error or EOF. */
static int xfer(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes "@what @i" to the marker fd; returns 0 or -1. */
static int mark(int mfd, const char *what, uint32_t i)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "%s %u", what, i);

	return write(mfd, buf, (size_t)len) == len ? 0 : -1;
}

/* Sets TCP_NODELAY and 10 s send/receive timeouts; returns 0 or -1. */
static int tune(int fd)
{
	struct timeval tv = { 10, 0 };
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

/* Opens the trace_marker of the instance in @dir named @prefix*; returns
 * the fd or -1. */
static int open_instance_marker(const char *dir, const char *prefix)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "%s/%s/trace_marker", dir, de->d_name);
			found++;
		}
	}
	closedir(d);
	if (found != 1) {
		fprintf(stderr, "pingpong_net: %d instances named %s* in %s\n",
			found, prefix, dir);
		return -1;
	}
	fprintf(stderr, "pingpong_net: marking into %s\n", path);
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* The guest side; returns the exit status. */
static int serve(int port, const char *dir, const char *prefix)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int lfd, fd, mfd, one = 1;
	uint32_t i, n = 0, msg;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1)) {
		perror("pingpong_net: listen");
		return 1;
	}
	printf("serving %d\n", port);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || tune(fd)) {
		perror("pingpong_net: accept");
		return 1;
	}
	mfd = open_instance_marker(dir, prefix);
	if (mfd < 0) {
		perror("pingpong_net: marker");
		return 1;
	}
	/* tell the client the marker is open: it starts pinging then */
	msg = UINT32_MAX;
	if (xfer(fd, &msg, sizeof(msg), 1))
		return 1;
	for (;;) {
		if (xfer(fd, &i, sizeof(i), 0))
			break; /* the client closed: done */
		if (mark(mfd, "ping-recv", i) || mark(mfd, "pong-send", i) ||
		    xfer(fd, &i, sizeof(i), 1)) {
			perror("pingpong_net: serve");
			return 1;
		}
		n++;
	}
	printf("served %u pings\n", n);
	return 0;
}

/* The host side; returns the exit status. */
static int client(const char *host, const char *port, const char *marker, uint32_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	uint32_t i, msg;
	int fd, mfd;

	mfd = open(marker, O_WRONLY | O_CLOEXEC);
	if (mfd < 0) {
		perror(marker);
		return 1;
	}
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "pingpong_net: %s is not an IPv4 address\n", host);
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || tune(fd) || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("pingpong_net: connect");
		return 1;
	}
	if (xfer(fd, &msg, sizeof(msg), 0) || msg != UINT32_MAX) {
		fprintf(stderr, "pingpong_net: the server did not start\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (mark(mfd, "ping-send", i) || xfer(fd, &i, sizeof(i), 1) ||
		    xfer(fd, &msg, sizeof(msg), 0) || mark(mfd, "pong-recv", i)) {
			perror("pingpong_net: client");
			return 1;
		}
		if (msg != i) {
			fprintf(stderr, "pingpong_net: pong %u for ping %u\n", msg, i);
			return 1;
		}
	}
	close(fd);
	printf("%u ping-pongs done\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(300);
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]), argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4], (uint32_t)atoi(argv[5]));
	fprintf(stderr, "usage: pingpong_net serve PORT INSTANCES_DIR PREFIX\n"
			"       pingpong_net client HOST PORT MARKER N\n");
	return 1;
}
