// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pingpong_markers HOST_MARKER GUEST_MARKER N USEC
 *
 * Alternates marker writes between two trace_marker files ("ping i" into
 * the first, "pong i" into the second), N times, USEC microseconds apart:
 * the merged report of the two recorded files must show them strictly
 * alternating once the time offsets are applied.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Waits @us microseconds (nanosleep: the order test needs a gap, not a
 * precise one). */
static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	int a, b, n;
	long us;
	char buf[64];

	if (argc != 5) {
		fprintf(stderr, "usage: pingpong_markers HOST_MARKER GUEST_MARKER N USEC\n");
		return 2;
	}
	a = open(argv[1], O_WRONLY | O_CLOEXEC);
	b = open(argv[2], O_WRONLY | O_CLOEXEC);
	if (a < 0 || b < 0) {
		perror("open");
		return 1;
	}
	n = atoi(argv[3]);
	us = atol(argv[4]);
	for (int i = 0; i < n; i++) {
		int len = snprintf(buf, sizeof(buf), "ping %d", i);

		if (write(a, buf, (size_t)len) != len)
			return 1;
		pause_us(us);
		len = snprintf(buf, sizeof(buf), "pong %d", i);
		if (write(b, buf, (size_t)len) != len)
			return 1;
		pause_us(us);
	}
	return 0;
}
