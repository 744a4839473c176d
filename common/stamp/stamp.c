// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of stamp sources and everything asked of it; see stamp.h, and
 * stamp_priv.h for what a source implements.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/trace_clock.h"
#include "common/stamp/stamp_priv.h"

/* The sources: a row of TSYNC_STAMP_SOURCES each, with its ops. */
static const struct stamp_source sources[] = {
#define STAMP_X_ROW(name, NAME, id, cap) \
	{ #name, TSYNC_STAMP_##NAME, cap, &stamp_##name##_ops },
	TSYNC_STAMP_SOURCES(STAMP_X_ROW)
#undef STAMP_X_ROW
};

#define NSOURCES (sizeof(sources) / sizeof(sources[0]))

/* Longest list of clock names the texts below are made from. */
#define CLOCKS_MAX 16

/* Returns the row of @source, or NULL. */
static const struct stamp_source *source_row(unsigned int source)
{
	for (size_t i = 0; i < NSOURCES; i++)
		if (sources[i].id == source)
			return &sources[i];
	return NULL;
}

/* Returns true if this machine has the source of @r. */
static bool has(const struct stamp_source *r)
{
	return !r->ops->available || r->ops->available();
}

/* Returns true if the source of @r stamps in trace clock @clock. */
static bool fits(const struct stamp_source *r, const char *clock)
{
	return !r->ops->fits || r->ops->fits(clock);
}

/* Picks the default source of a clock; see stamp.h. */
enum tsync_stamp_source tsync_stamp_default(const char *clock_name)
{
	const struct stamp_source *any = NULL;

	for (size_t i = 0; i < NSOURCES; i++) {
		const struct stamp_source *r = &sources[i];

		if (!r->ops->fits) {
			if (!any && has(r))
				any = r;
		} else if (clock_name && *clock_name && has(r) && r->ops->fits(clock_name)) {
			return r->id;
		}
	}
	return any ? any->id : sources[0].id;
}

/* Checks a source against a clock; see stamp.h. */
int tsync_stamp_check(unsigned int source, const char *clock_name)
{
	const struct stamp_source *r = source_row(source);

	if (!r || !clock_name || !*clock_name)
		return -EINVAL;
	return has(r) && fits(r, clock_name) ? 0 : -EINVAL;
}

/* Returns the capability bits this machine's sources give; see stamp.h. */
uint32_t tsync_stamp_caps(void)
{
	uint32_t caps = 0;

	for (size_t i = 0; i < NSOURCES; i++)
		if (has(&sources[i]))
			caps |= sources[i].cap;
	return caps;
}

/* Says whether a source needs tracefs; see stamp.h. */
bool tsync_stamp_needs_tracefs(unsigned int source)
{
	const struct stamp_source *r = source_row(source);

	return !r || r->ops->tracefs;
}

/* Checks that the peer announced the source; see stamp.h. */
int tsync_stamp_peer_check(unsigned int source, uint32_t caps, char *err, size_t errlen)
{
	const struct stamp_source *r = source_row(source);

	if (!r || !(r->cap & ~caps))
		return 0;
	snprintf(err, errlen, "the agent cannot stamp with %s (it does not announce the "
		 "capability): use --stamp %s", r->ops->what,
		 tsync_stamp_source_name(tsync_stamp_default(NULL)));
	return -EOPNOTSUPP;
}

/*
 * Writes the @n names of @names to @buf as "a, b, c", or with @last (as
 * "or") between the last two: "a, b or c".
 */
static void join(const char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int n, const char *last,
		 char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n && off < len; i++) {
		if (i && i == n - 1 && last)
			off += (size_t)snprintf(buf + off, len - off, " %s %s", last, names[i]);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
						names[i]);
	}
}

/*
 * Lists into @names (at most @max) the clocks user space reads itself
 * (common/base/trace_clock.h) that the source of @r stamps. Returns the
 * count.
 */
static int clocks_of(const struct stamp_source *r, char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX],
		     int max)
{
	char all[CLOCKS_MAX][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n = tsync_trace_clock_user_list(all, CLOCKS_MAX, true), k = 0;

	for (int i = 0; i < n && k < max; i++)
		if (fits(r, all[i]))
			memcpy(names[k++], all[i], sizeof(all[i]));
	return k;
}

/* Describes the clocks a source stamps; see stamp.h. */
void tsync_stamp_clocks_text(unsigned int source, char *buf, size_t len)
{
	const struct stamp_source *r = source_row(source);
	char names[CLOCKS_MAX][TSYNC_TRACE_CLOCK_NAME_MAX];
	size_t off;

	if (!r || !r->ops->fits) {
		snprintf(buf, len, "every trace clock");
		return;
	}
	join((const char (*)[TSYNC_TRACE_CLOCK_NAME_MAX])names,
	     clocks_of(r, names, CLOCKS_MAX), "and", buf, len);
	off = strlen(buf);
	if (r->ops->only_on && off < len)
		snprintf(buf + off, len - off, ", on %s", r->ops->only_on);
}

/* Lists the clocks stamped without tracefs here; see stamp.h. */
int tsync_stamp_user_clocks(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max)
{
	char all[CLOCKS_MAX][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n = tsync_trace_clock_user_list(all, CLOCKS_MAX, true), k = 0;

	for (int i = 0; i < n && k < max; i++) {
		for (size_t j = 0; j < NSOURCES; j++) {
			const struct stamp_source *r = &sources[j];

			if (!r->ops->tracefs && has(r) && fits(r, all[i])) {
				memcpy(names[k++], all[i], sizeof(all[i]));
				break;
			}
		}
	}
	return k;
}

/* Writes the clocks stamped without tracefs here; see stamp.h. */
void tsync_stamp_user_clocks_text(const char *last, char *buf, size_t len)
{
	char names[CLOCKS_MAX][TSYNC_TRACE_CLOCK_NAME_MAX];

	join((const char (*)[TSYNC_TRACE_CLOCK_NAME_MAX])names,
	     tsync_stamp_user_clocks(names, CLOCKS_MAX), last, buf, len);
}

/* Writes the sources that need no tracefs here; see stamp.h. */
void tsync_stamp_user_sources_text(char *buf, size_t len)
{
	char names[NSOURCES][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n = 0;

	for (size_t i = 0; i < NSOURCES; i++)
		if (!sources[i].ops->tracefs && has(&sources[i]))
			snprintf(names[n++], sizeof(names[0]), "%s", sources[i].name);
	join((const char (*)[TSYNC_TRACE_CLOCK_NAME_MAX])names, n, "or", buf, len);
}

/* Opens a timestamp source; see stamp.h. */
int tsync_stamp_open(unsigned int source, const char *clock_name,
		     const char *tag, unsigned int flags,
		     struct tsync_stamper **out)
{
	const struct stamp_source *r = source_row(source);
	int ret;

	if (!out)
		return -EINVAL;
	ret = tsync_stamp_check(source, clock_name);
	if (ret)
		return ret;
	ret = r->ops->open(clock_name, tag, flags, out);
	if (ret)
		return ret;
	(*out)->src = r;
	return 0;
}

/* Returns the source of an open stamper; see stamp.h. */
enum tsync_stamp_source tsync_stamp_source_of(const struct tsync_stamper *s)
{
	return s->src->id;
}

/* Says whether an open source stamps at resolve(); see stamp.h. */
bool tsync_stamp_deferred(const struct tsync_stamper *s)
{
	return s->src->ops->resolve != NULL;
}

/* Returns the instance name; see stamp.h. */
const char *tsync_stamp_instance(const struct tsync_stamper *s)
{
	return s && s->src->ops->instance ? s->src->ops->instance(s) : NULL;
}

/* Takes a timestamp; see stamp.h. */
int tsync_stamp_take(struct tsync_stamper *s, uint32_t round, uint32_t seq,
		     uint8_t dir, uint32_t cpu, int64_t *ts)
{
	return s->src->ops->take(s, round, seq, dir, cpu, ts);
}

/* Reads back deferred timestamps; see stamp.h. */
int tsync_stamp_resolve(struct tsync_stamper *s, int cpu, uint32_t round,
			struct tsync_stamp_slot *slots, size_t n)
{
	if (!s || (n && !slots))
		return -EINVAL;
	if (!s->src->ops->resolve)
		return 0;
	return s->src->ops->resolve(s, cpu, round, slots, n);
}

/* Closes a source; see stamp.h. */
void tsync_stamp_close(struct tsync_stamper *s)
{
	if (s)
		s->src->ops->close(s);
}
