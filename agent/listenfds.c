// SPDX-License-Identifier: GPL-2.0-or-later
/* systemd's socket activation, the environment side; see listenfds.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/listenfds.h"

/* Parses all of @s as a decimal number up to @max; 0 or -1. */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

/* Writes @s to @buf (@len bytes) with control characters as '?', so that a
 * value shown in a reason keeps it one line; returns @buf. */
static const char *shown(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", s);
	for (char *c = buf; *c; c++)
		if (iscntrl((unsigned char)*c))
			*c = '?';
	return buf;
}

/* Splits LISTEN_FDNAMES @names into @out->names; 0 or -EINVAL. */
static int parse_names(const char *names, struct agent_listen_fds *out, char *err,
		       size_t errlen)
{
	const char *p = names;
	int count = 0;

	for (;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);

		if (count < out->n) {
			char *dst = out->names[count];

			snprintf(dst, AGENT_FDNAME_MAX, "%.*s", (int)len, p);
			for (char *c = dst; *c; c++)
				if (iscntrl((unsigned char)*c))
					*c = '?';
		}
		count++;
		if (!colon)
			break;
		p = colon + 1;
	}
	if (count != out->n) {
		snprintf(err, errlen, "socket activation: LISTEN_FDNAMES has %d name%s for "
			 "LISTEN_FDS=%d socket%s", count, count == 1 ? "" : "s", out->n,
			 out->n == 1 ? "" : "s");
		return -EINVAL;
	}
	return 0;
}

/* Parses the socket activation variables; see listenfds.h. */
int agent_listen_fds_parse(const char *pid, const char *fds, const char *names, pid_t self,
			   struct agent_listen_fds *out, char *err, size_t errlen)
{
	unsigned long long v;
	char buf[64];

	memset(out, 0, sizeof(*out));
	if (!pid && !fds)
		return 0;
	if (!pid || !fds) {
		snprintf(err, errlen, "socket activation: %s is set but %s is not", pid ?
			 "LISTEN_PID" : "LISTEN_FDS", pid ? "LISTEN_FDS" : "LISTEN_PID");
		return -EINVAL;
	}
	if (parse_num(pid, 0x7fffffff, &v) || !v) {
		snprintf(err, errlen, "socket activation: LISTEN_PID='%s' is not a process id",
			 shown(pid, buf, sizeof(buf)));
		return -EINVAL;
	}
	if ((pid_t)v != self) {
		snprintf(err, errlen, "socket activation: LISTEN_PID=%llu is not this process "
			 "(pid %d): the sockets were passed to another one", v, (int)self);
		return -EINVAL;
	}
	if (parse_num(fds, 1000000, &v)) {
		snprintf(err, errlen, "socket activation: LISTEN_FDS='%s' is not a number of "
			 "sockets", shown(fds, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (!v) {
		snprintf(err, errlen, "socket activation: LISTEN_FDS=0: no socket was passed");
		return -EINVAL;
	}
	if (v > AGENT_MAX_LISTEN) {
		snprintf(err, errlen, "socket activation: LISTEN_FDS=%llu: at most %d sockets",
			 v, AGENT_MAX_LISTEN);
		return -EINVAL;
	}
	out->n = (int)v;
	if (names && parse_names(names, out, err, errlen)) {
		out->n = 0;
		return -EINVAL;
	}
	return 0;
}
