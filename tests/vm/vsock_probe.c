// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsock_probe: checks that vsock loopback works on this kernel.
 *
 * Listens on vsock CID 1 (VMADDR_CID_LOCAL), PORT (default 5999); a forked
 * child connects to it and does ROUNDS (default 100) request/response
 * exchanges of 16-byte messages, each echoed by the parent with a changed
 * byte so a wrong or stale reply is caught. Prints the round-trip times.
 * Built static (gcc -static) to run inside the test guest without libraries.
 * Exit status: 0 ok, 77 vsock unsupported here (no AF_VSOCK or no loopback
 * transport), 1 failure. Every wait is bounded by a 10 s alarm.
 *
 * Usage: vsock_probe [PORT [ROUNDS]]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#ifndef VMADDR_CID_LOCAL
#define VMADDR_CID_LOCAL 1
#endif

#define MSG_LEN 16

/* Returns CLOCK_MONOTONIC in nanoseconds. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Reads exactly @len bytes; returns 0, or -1 on error or EOF. */
static int read_full(int fd, unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Writes exactly @len bytes; returns 0 or -1. */
static int write_full(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Fills a sockaddr_vm for @cid:@port. */
static void vm_addr(struct sockaddr_vm *a, unsigned int cid, unsigned int port)
{
	memset(a, 0, sizeof(*a));
	a->svm_family = AF_VSOCK;
	a->svm_cid = cid;
	a->svm_port = port;
}

/* Child: connects and runs the exchanges; returns the exit status. */
static int client(unsigned int port, int rounds)
{
	struct sockaddr_vm a;
	unsigned char msg[MSG_LEN], rep[MSG_LEN];
	long long min = -1, max = 0, sum = 0;
	int fd, i;

	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("vsock_probe: client socket");
		return 1;
	}
	vm_addr(&a, VMADDR_CID_LOCAL, port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("vsock_probe: connect to CID 1");
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		long long t0, dt;

		memset(msg, i & 0xff, sizeof(msg));
		t0 = now_ns();
		if (write_full(fd, msg, sizeof(msg)) || read_full(fd, rep, sizeof(rep))) {
			fprintf(stderr, "vsock_probe: exchange %d failed\n", i);
			return 1;
		}
		dt = now_ns() - t0;
		if (rep[0] != (unsigned char)(msg[0] + 1) ||
		    memcmp(rep + 1, msg + 1, sizeof(msg) - 1)) {
			fprintf(stderr, "vsock_probe: wrong reply in exchange %d\n", i);
			return 1;
		}
		if (min < 0 || dt < min)
			min = dt;
		if (dt > max)
			max = dt;
		sum += dt;
	}
	close(fd);
	fflush(stdout);
	printf("vsock_probe: %d exchanges over CID 1 port %u: rtt min %.1f us, "
	       "mean %.1f us, max %.1f us\n", rounds, port, min / 1e3,
	       sum / 1e3 / rounds, max / 1e3);
	fflush(stdout);
	return 0;
}

/* Parent: listens, forks the client, echoes its messages. */
int main(int argc, char **argv)
{
	unsigned int port = argc > 1 ? (unsigned int)atoi(argv[1]) : 5999;
	int rounds = argc > 2 ? atoi(argv[2]) : 100;
	struct sockaddr_vm a;
	unsigned char buf[MSG_LEN];
	int lfd, cfd, status, i;
	pid_t pid;

	alarm(10);
	lfd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (lfd < 0) {
		int err = errno;

		perror("vsock_probe: socket(AF_VSOCK)");
		return err == EAFNOSUPPORT ? 77 : 1;
	}
	vm_addr(&a, VMADDR_CID_LOCAL, port);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = errno;

		perror("vsock_probe: bind CID 1");
		return err == EADDRNOTAVAIL ? 77 : 1;
	}
	if (listen(lfd, 1) < 0) {
		perror("vsock_probe: listen");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("vsock_probe: fork");
		return 1;
	}
	if (pid == 0) {
		alarm(10);
		close(lfd);
		fflush(stdout);
		_exit(client(port, rounds));
	}
	cfd = accept(lfd, NULL, NULL);
	if (cfd < 0) {
		perror("vsock_probe: accept");
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		if (read_full(cfd, buf, sizeof(buf))) {
			fprintf(stderr, "vsock_probe: server read %d failed\n", i);
			return 1;
		}
		buf[0]++;
		if (write_full(cfd, buf, sizeof(buf))) {
			fprintf(stderr, "vsock_probe: server write %d failed\n", i);
			return 1;
		}
	}
	close(cfd);
	close(lfd);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
