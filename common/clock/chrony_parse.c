// SPDX-License-Identifier: GPL-2.0-or-later
/* `chronyc -c tracking`'s line, pure (see chrony_parse.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock/chrony_parse.h"

#define NFIELDS 14

/* Fields of the line that are used. */
enum { F_REFID, F_NAME, F_STRATUM, F_OFFSET = 4, F_DELAY = 10, F_DISP, F_LEAP = 13 };

/* Splits @buf at commas into @f (NFIELDS); returns how many there were. */
static int split(char *buf, char **f)
{
	int n = 0;
	char *p = buf;

	for (;;) {
		char *c = strchr(p, ',');

		if (n < NFIELDS)
			f[n] = p;
		n++;
		if (!c)
			return n;
		*c = '\0';
		p = c + 1;
	}
}

/* Parses seconds @s (finite, |s| < 1e6) into ns; returns 0 or -EBADMSG. */
static int seconds(const char *s, double *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || fabs(v) >= 1e6)
		return -EBADMSG;
	*ns = v * 1e9;
	return 0;
}

/* Says that field @name did not parse. */
static int bad(struct tsync_clock_state *out, const char *name)
{
	snprintf(out->detail, sizeof(out->detail), "chronyc tracking: bad %s", name);
	return -EBADMSG;
}

/* Copies @s into @dst (@len bytes), unprintable bytes as '?'. */
static void printable(char *dst, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		dst[i] = s[i] >= 0x20 && s[i] <= 0x7e ? s[i] : '?';
	dst[i] = '\0';
}

int chrony_parse_tracking(const char *line, struct tsync_clock_state *out)
{
	char buf[1024], *f[NFIELDS], *end;
	double off, delay, disp;
	unsigned long refid, stratum;
	size_t n = strcspn(line, "\n");

	out->source = TSYNC_CLOCK_SRC_CHRONY;
	out->synced = 0;
	out->bound_ns = TSYNC_CLOCK_BOUND_UNKNOWN;
	if (n >= sizeof(buf))
		return bad(out, "line (too long)");
	memcpy(buf, line, n);
	buf[n] = '\0';
	if (split(buf, f) != NFIELDS)
		return bad(out, "line (not 14 fields)");
	errno = 0;
	refid = strtoul(f[F_REFID], &end, 16);
	if (end == f[F_REFID] || *end || errno || refid > 0xffffffffUL)
		return bad(out, "reference ID");
	stratum = strtoul(f[F_STRATUM], &end, 10);
	if (end == f[F_STRATUM] || *end || stratum > 16)
		return bad(out, "stratum");
	if (seconds(f[F_OFFSET], &off))
		return bad(out, "system time offset");
	if (seconds(f[F_DELAY], &delay) || delay < 0)
		return bad(out, "root delay");
	if (seconds(f[F_DISP], &disp) || disp < 0)
		return bad(out, "root dispersion");
	out->stratum = (uint16_t)stratum;
	out->offset_ns = (int64_t)llround(off);
	printable(out->master, sizeof(out->master), f[F_NAME]);
	printable(out->detail, sizeof(out->detail), f[F_LEAP]);
	if (!strcmp(f[F_LEAP], "Not synchronised") || !refid || stratum >= 16)
		return 0;
	out->synced = 1;
	out->bound_ns = (uint64_t)llround(fabs(off) + disp + delay / 2);
	return 0;
}
