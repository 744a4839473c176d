// SPDX-License-Identifier: GPL-2.0-or-later
/* Trace clock names and the trace_clock text; see trace_clock.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/base/trace_clock.h"

/* Trace clocks user space can read with clock_gettime(). */
static const struct {
	const char *name;
	clockid_t clk;
} posix_clocks[] = {
	{ "mono", CLOCK_MONOTONIC },
	{ "mono_raw", CLOCK_MONOTONIC_RAW },
	{ "boot", CLOCK_BOOTTIME },
	{ "tai", CLOCK_TAI },
};

/*
 * Finds the next word of @p (separated by blanks and newlines): sets
 * *@start and returns its length, 0 at the end.
 */
static size_t next_word(const char **p, const char **start)
{
	size_t n;

	*p += strspn(*p, " \t\n");
	*start = *p;
	n = strcspn(*p, " \t\n");
	*p += n;
	return n;
}

/* Splits trace_clock text; see trace_clock.h. */
int tsync_trace_clock_list(const char *text,
			   char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
			   int *selected)
{
	const char *p = text, *w;
	int count = 0;
	size_t n;

	if (selected)
		*selected = -1;
	while (p && count < max && (n = next_word(&p, &w)) > 0) {
		bool sel = n > 2 && w[0] == '[' && w[n - 1] == ']';

		if (sel) {
			w++;
			n -= 2;
		}
		if (n >= TSYNC_TRACE_CLOCK_NAME_MAX)
			continue;
		memcpy(names[count], w, n);
		names[count][n] = '\0';
		if (sel && selected)
			*selected = count;
		count++;
	}
	return count;
}

/* Copies the selected clock; see trace_clock.h. */
int tsync_trace_clock_selected(const char *text, char *out, size_t outlen)
{
	const char *b, *e;

	if (!text || !out || !outlen)
		return -EINVAL;
	b = strchr(text, '[');
	if (!b)
		return -EINVAL;
	e = strchr(b + 1, ']');
	if (!e || e == b + 1 || (size_t)(e - b - 1) >= outlen)
		return -EINVAL;
	memcpy(out, b + 1, (size_t)(e - b - 1));
	out[e - b - 1] = '\0';
	return 0;
}

/* Looks a clock up in trace_clock text; see trace_clock.h. */
bool tsync_trace_clock_offers(const char *text, const char *name)
{
	char names[64][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n = tsync_trace_clock_list(text, names, 64, NULL);

	for (int i = 0; name && i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Finds the POSIX clock of a trace clock; see trace_clock.h. */
int tsync_trace_clock_posix(const char *name, clockid_t *clk)
{
	for (size_t i = 0; name && i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++) {
		if (!strcmp(name, posix_clocks[i].name)) {
			*clk = posix_clocks[i].clk;
			return 0;
		}
	}
	return -EINVAL;
}

/* Lists the clocks user space reads itself; see trace_clock.h. */
int tsync_trace_clock_user_list(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
				bool tsc)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]) && n < max; i++)
		snprintf(names[n++], TSYNC_TRACE_CLOCK_NAME_MAX, "%s", posix_clocks[i].name);
	if (tsc && n < max)
		snprintf(names[n++], TSYNC_TRACE_CLOCK_NAME_MAX, "%s", "x86-tsc");
	return n;
}

/* Says whether a trace clock is the TSC; see trace_clock.h. */
bool tsync_trace_clock_is_tsc(const char *name)
{
	return name && !strcmp(name, "x86-tsc");
}

/* Checks a trace clock name; see trace_clock.h. */
bool tsync_trace_clock_name_ok(const char *name)
{
	return *name && strlen(name) < TSYNC_TRACE_CLOCK_NAME_MAX && !strpbrk(name, " \t/");
}
