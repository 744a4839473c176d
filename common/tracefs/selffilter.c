// SPDX-License-Identifier: GPL-2.0-or-later
/* Filters that leave our own threads out of the scheduler events that
 * name them; see selffilter.h. */
#include "common/tracefs/selffilter.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/base/log.h"

/* The events and the fields that name a task other than the emitter. */
static const char *const switch_fields[] = { "prev_pid", "next_pid" };
static const char *const wakeup_fields[] = { "pid" };
static const struct self_event {
	const char *name;
	const char *const *fields;
	int nfields;
} self_events[] = {
	{ "sched_switch", switch_fields, 2 },
	{ "sched_wakeup", wakeup_fields, 1 },
	{ "sched_waking", wakeup_fields, 1 },
	{ "sched_wakeup_new", wakeup_fields, 1 },
};
#define NSELF (sizeof(self_events) / sizeof(self_events[0]))

struct tsync_self_filter {
	bool read[NSELF];	/* the user's filter was looked at */
	char *user[NSELF];	/* and was this (NULL: none) */
	bool warned[NSELF];	/* "does not fit" said */
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Appends what printf would to @buf at *@off; false once it is full. */
static bool __attribute__((format(printf, 4, 5)))
put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off)
		return false;
	*off += (size_t)n;
	return true;
}

int tsync_self_filter_expr(int *tids, int n, const char *const *fields, int nfields,
			   const char *user, char *buf, size_t len)
{
	bool joined = user && *user;
	size_t off = 0;
	bool ok;

	if (n < 1 || !tids || nfields < 1 || !fields || !buf || !len)
		return -EINVAL;
	qsort(tids, (size_t)n, sizeof(*tids), cmp_int);
	if (tids[0] < 1)
		return -EINVAL;
	ok = !joined || put(buf, len, &off, "(%s)&&(", user);
	for (int f = 0; ok && f < nfields; f++) {
		for (int i = 0; ok && i < n;) {
			int j = i;

			while (j + 1 < n && tids[j + 1] <= tids[j] + 1)
				j++;
			ok = put(buf, len, &off, "%s", f || i ? "&&" : "");
			if (ok && tids[j] == tids[i])
				ok = put(buf, len, &off, "%s!=%d", fields[f], tids[i]);
			else if (ok)
				ok = put(buf, len, &off, "(%s<%d||%s>%d)", fields[f], tids[i],
					 fields[f], tids[j]);
			i = j + 1;
		}
	}
	if (ok && joined)
		ok = put(buf, len, &off, ")");
	return ok ? (int)off : -E2BIG;
}

/* The ids of /proc/self/task into *@out (malloc'd). Returns how many or
 * -errno. */
static int self_tids(int **out)
{
	DIR *dir = opendir("/proc/self/task");
	int *v = NULL, n = 0, cap = 0;
	struct dirent *d;

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		if (n == cap) {
			int *nv = realloc(v, (size_t)(cap ? cap * 2 : 32) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 32;
		}
		v[n++] = tid;
	}
	closedir(dir);
	*out = v;
	return n;
}

/* Whether @inst's event @ev (sched) is on ("1", also "1*"). */
static bool event_on(struct tracefs_instance *inst, const char *ev)
{
	char path[128], *val;
	bool on;

	snprintf(path, sizeof(path), "events/sched/%s/enable", ev);
	val = tracefs_instance_file_read(inst, path, NULL);
	on = val && val[0] == '1';
	free(val);
	return on;
}

/* The user's filter of event @i, read once into @st. Returns 0 or -errno. */
static int user_filter(struct tracefs_instance *inst, struct tsync_self_filter *st, size_t i)
{
	char path[128], *val, *nl;

	if (st->read[i])
		return 0;
	snprintf(path, sizeof(path), "events/sched/%s/filter", self_events[i].name);
	val = tracefs_instance_file_read(inst, path, NULL);
	if (!val)
		return errno ? -errno : -EIO;
	nl = strchr(val, '\n');
	if (nl)
		*nl = '\0';
	if (!strcmp(val, "none") || !*val) {
		free(val);
		val = NULL;
	}
	st->user[i] = val;
	st->read[i] = true;
	return 0;
}

/* Writes event @i's filter for @tids. Returns 0 or -errno. */
static int apply_one(struct tracefs_instance *inst, struct tsync_self_filter *st, size_t i,
		     int *tids, int n, char *buf, size_t len)
{
	const struct self_event *e = &self_events[i];
	char path[128];
	int ret;

	if (!event_on(inst, e->name))
		return 0;
	ret = user_filter(inst, st, i);
	if (!ret)
		ret = tsync_self_filter_expr(tids, n, e->fields, e->nfields, st->user[i], buf,
					     len);
	if (ret == -E2BIG) {
		if (!st->warned[i])
			log_warn("%s: %d threads of ours do not fit in a filter: switches and "
				 "wakeups that name them stay in the trace", e->name, n);
		st->warned[i] = true;
		return 0;
	}
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "events/sched/%s/filter", e->name);
	if (tracefs_instance_file_write(inst, path, buf) < 0)
		return errno ? -errno : -EIO;
	log_debug("%s filter: %s", e->name, buf);
	return 0;
}

int tsync_self_filter_apply(struct tracefs_instance *inst, struct tsync_self_filter **state)
{
	/* the kernel refuses a filter of a page or more */
	long page = sysconf(_SC_PAGESIZE);
	size_t len = page > 0 ? (size_t)page : 4096;
	int *tids = NULL, n, ret = 0;
	char *buf;

	if (!*state)
		*state = calloc(1, sizeof(**state));
	buf = malloc(len);
	n = *state && buf ? self_tids(&tids) : -ENOMEM;
	for (size_t i = 0; n > 0 && i < NSELF; i++) {
		int r = apply_one(inst, *state, i, tids, n, buf, len);

		if (r && !ret)
			ret = r;
	}
	free(tids);
	free(buf);
	return n < 0 ? n : ret;
}

void tsync_self_filter_free(struct tsync_self_filter *state)
{
	if (!state)
		return;
	for (size_t i = 0; i < NSELF; i++)
		free(state->user[i]);
	free(state);
}
