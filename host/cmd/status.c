// SPDX-License-Identifier: GPL-2.0-or-later
/* The live status line and the summary legend; see status.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/cmd/status.h"

/* Writes @v bytes as "999 B", "12.3 KiB" ... "1.0 TiB" into @buf. */
static void human_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v / 1024;
	int u = 0;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return;
	}
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", d, unit[u]);
}

/* Writes a count as "999", "45.6k", "1.2M", "3.4G" into @buf. */
static void human_count(uint64_t v, char *buf, size_t len)
{
	static const char unit[] = "kMGTP";
	double d = (double)v / 1000;
	int u = 0;

	if (v < 1000) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1000 && u < 4) {
		d /= 1000;
		u++;
	}
	snprintf(buf, len, "%.1f%c", d, unit[u]);
}

/* Appends @s's part of the line at @off; returns the new offset. */
static size_t format_src(char *buf, size_t len, size_t off, const struct status_src *s)
{
	char b[32], e[32];

	if (off >= len)
		return off;
	human_bytes(s->bytes, b, sizeof(b));
	human_count(s->events, e, sizeof(e));
	off += (size_t)snprintf(buf + off, len - off, " | %s %s %s ev lost %" PRIu64 "%s",
				s->name, b, e, s->lost, s->lost_min ? "+" : "");
	if (!s->guest || off >= len)
		return off;
	if (!s->rounds)
		return off + (size_t)snprintf(buf + off, len - off, " off -");
	return off + (size_t)snprintf(buf + off, len - off, " off %" PRId64 " err %" PRId64 " ns",
				      s->offset_ns, s->error_ns);
}

/* Formats the status line; see status.h. */
size_t status_format(char *buf, size_t len, int64_t elapsed_ns, const struct status_src *src,
		     int n, int width)
{
	int64_t sec = elapsed_ns > 0 ? elapsed_ns / 1000000000 : 0;
	size_t off;

	if (!len)
		return 0;
	off = (size_t)snprintf(buf, len, "%" PRId64 ":%02d:%02d", sec / 3600,
			       (int)(sec / 60 % 60), (int)(sec % 60));
	for (int i = 0; i < n; i++)
		off = format_src(buf, len, off, &src[i]);
	if (off >= len)
		off = len - 1;
	/* a line longer than the terminal wraps, and \r then cannot
	 * overwrite it: cut it one column short of the width */
	if (width > 1 && off >= (size_t)width)
		off = (size_t)width - 1;
	buf[off] = '\0';
	return off;
}

/* Prints the legend of the summary tables; see status.h. */
void status_print_legend(FILE *f)
{
	fputs("columns: bytes and entries (events) recorded per CPU; lost: events the ring "
	      "buffer\n"
	      "  overwrote before they were read (the reader fell behind: a bigger -b helps);\n"
	      "  dropped: events the kernel discarded because the ring buffer was full;\n"
	      "  samples: successful sync rounds; offset range: host clock minus guest clock\n",
	      f);
}
