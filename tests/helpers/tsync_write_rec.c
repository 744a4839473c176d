// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync_write_rec: writes one record to a trace_marker_raw file with a single
 * write(2), so tests can put tsync's records (proto/tsync_record.h) and
 * other users' raw_data records into a real ring buffer.
 *
 *   tsync_write_rec FILE round ROUND CPU PEER OFFSET ERR DELAY USED SENT
 *   tsync_write_rec FILE probe ROUND SEQ CPU DIR
 *   tsync_write_rec FILE raw ID [HEXBYTES]     (u32 id, then the bytes)
 *
 * Numbers are parsed with strtoll/strtoull base 0. Exits 0 on success, 1 on
 * a write error, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/tsync_record.h"

/* Prints usage and exits 2. */
static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: tsync_write_rec FILE round ROUND CPU PEER OFFSET ERR DELAY USED SENT\n"
		"       tsync_write_rec FILE probe ROUND SEQ CPU DIR\n"
		"       tsync_write_rec FILE raw ID [HEXBYTES]\n");
	exit(2);
}

/* Parses an unsigned number or exits 2. Returns it. */
static unsigned long long unum(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

/* Parses a signed number or exits 2. Returns it. */
static long long snum(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

/* Returns the value of hex digit @c or exits 2. */
static unsigned int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	usage();
	return 0;
}

/* Decodes the hex string @hex into @out (at most @max bytes) or exits 2.
 * Returns the number of bytes. */
static size_t unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = 0;

	if (strlen(hex) % 2)
		usage();
	for (; hex[0]; hex += 2) {
		if (n == max)
			usage();
		out[n++] = nibble(hex[0]) << 4 | nibble(hex[1]);
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned char buf[4096];
	size_t len;
	ssize_t w;
	int fd;

	if (argc < 3)
		usage();
	if (!strcmp(argv[2], "round") && argc == 11) {
		struct tsync_rec_round r;

		memset(&r, 0, sizeof(r));
		tsync_rec_hdr_init(&r.hdr, TSYNC_REC_ROUND, sizeof(r));
		r.round = unum(argv[3]);
		r.cpu = unum(argv[4]);
		/* NUL-padded, not necessarily terminated (all 32 bytes used) */
		memcpy(r.peer, argv[5], strnlen(argv[5], sizeof(r.peer)));
		r.offset_ns = snum(argv[6]);
		r.error_ns = unum(argv[7]);
		r.delay_ns = unum(argv[8]);
		r.used = unum(argv[9]);
		r.sent = unum(argv[10]);
		memcpy(buf, &r, sizeof(r));
		len = sizeof(r);
	} else if (!strcmp(argv[2], "probe") && argc == 7) {
		struct tsync_rec_probe p;

		memset(&p, 0, sizeof(p));
		tsync_rec_hdr_init(&p.hdr, TSYNC_REC_PROBE, sizeof(p));
		p.round = unum(argv[3]);
		p.seq = unum(argv[4]);
		p.cpu = unum(argv[5]);
		p.dir = unum(argv[6]);
		memcpy(buf, &p, sizeof(p));
		len = sizeof(p);
	} else if (!strcmp(argv[2], "raw") && (argc == 4 || argc == 5)) {
		unsigned int id = unum(argv[3]);

		memcpy(buf, &id, sizeof(id));
		len = sizeof(id);
		if (argc == 5)
			len += unhex(argv[4], buf + len, sizeof(buf) - len);
	} else {
		usage();
	}

	fd = open(argv[1], O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "tsync_write_rec: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	w = write(fd, buf, len);
	if (w != (ssize_t)len) {
		fprintf(stderr, "tsync_write_rec: write %s: %s\n", argv[1],
			w < 0 ? strerror(errno) : "short write");
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
