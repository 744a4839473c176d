// SPDX-License-Identifier: GPL-2.0-or-later
/* The top tracefs instance's state around a borrow; see topstate.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/base/log.h"
#include "common/tracefs/topstate.h"

/* How a file is saved and written back. */
enum top_kind {
	TOP_LIST,	/* lines, each appended back; comments ('#') and
			 * "no pid" are the kernel's words for empty */
	TOP_VALUE,	/* one word */
	TOP_EVENTS,	/* set_event: a list, emptied through events/enable */
};

/* The files, in the order they are written back: filters and pids
 * before the tracer (a pid file written under a running function_graph
 * crashed a 6.1 kernel, Documentation/tracefs-instances.md), the events
 * after it. @reset: what tsync_topstate_clean() writes; @idle: the value
 * of an unused top instance (NULL for a list: empty). */
static const struct top_file {
	const char *file;
	enum top_kind kind;
	const char *reset, *idle;
} top_files[] = {
	{ "set_ftrace_filter", TOP_LIST, "", NULL },
	{ "set_ftrace_notrace", TOP_LIST, "", NULL },
	{ "set_graph_function", TOP_LIST, "", NULL },
	{ "set_graph_notrace", TOP_LIST, "", NULL },
	{ "set_event_pid", TOP_LIST, "", NULL },
	{ "set_ftrace_pid", TOP_LIST, "", NULL },
	{ "set_event_notrace_pid", TOP_LIST, "", NULL },
	{ "set_ftrace_notrace_pid", TOP_LIST, "", NULL },
	{ "options/event-fork", TOP_VALUE, "0", NULL },
	{ "options/function-fork", TOP_VALUE, "0", NULL },
	{ "max_graph_depth", TOP_VALUE, "0", "0" },
	{ "current_tracer", TOP_VALUE, "nop", "nop" },
	{ "set_event", TOP_EVENTS, NULL, NULL },
};
#define NTOP (sizeof(top_files) / sizeof(top_files[0]))

struct tsync_topstate {
	char *txt[NTOP];	/* as read; NULL: missing or unreadable */
};

/* True if line @l of a list file is the kernel's way to say "empty". */
static bool empty_line(const char *l)
{
	return !*l || *l == '#' || !strcmp(l, "no pid");
}

/* Counts the entries of list text @txt and copies the first into @first. */
static int list_count(const char *txt, char *first, size_t len)
{
	const char *p = txt;
	int n = 0;

	while (p && *p) {
		size_t l = strcspn(p, "\n");
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)(l < 255 ? l : 255), p);
		if (!empty_line(line) && !n++)
			snprintf(first, len, "%s", line);
		p += l + (p[l] == '\n');
	}
	return n;
}

/* The first word of @txt in @buf. */
static const char *first_word(const char *txt, char *buf, size_t len)
{
	size_t l = strcspn(txt, " \n");

	snprintf(buf, len, "%.*s", (int)(l < len - 1 ? l : len - 1), txt);
	return buf;
}

/* Returns the number of events in the top buffer (every CPU's stats). */
static long long buffer_entries(void)
{
	char *dir = tracefs_get_tracing_file("per_cpu");
	DIR *d = dir ? opendir(dir) : NULL;
	long long total = 0;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char file[300], *txt, *p;

		if (strncmp(e->d_name, "cpu", 3))
			continue;
		snprintf(file, sizeof(file), "per_cpu/%s/stats", e->d_name);
		txt = tracefs_instance_file_read(NULL, file, NULL);
		p = txt ? strstr(txt, "entries: ") : NULL;
		if (p)
			total += strtoll(p + 9, NULL, 10);
		free(txt);
	}
	if (d)
		closedir(d);
	tracefs_put_tracing_file(dir);
	return total;
}

/* Says in @why whether top file @f, read as @txt, is in use. */
static bool file_in_use(const struct top_file *f, const char *txt, char *why, size_t len)
{
	char first[256] = "", word[64];
	int n;

	if (f->kind == TOP_VALUE) {
		if (!f->idle || !strcmp(first_word(txt, word, sizeof(word)), f->idle))
			return false;
		return tsync_set_err(why, len, "%s is %s", f->file, word), true;
	}
	n = list_count(txt, first, sizeof(first));
	if (!n)
		return false;
	if (f->kind == TOP_EVENTS)
		tsync_set_err(why, len, "%d event%s enabled (%s%s)", n, n > 1 ? "s" : "",
			      first, n > 1 ? ", ..." : "");
	else
		tsync_set_err(why, len, "%s holds %s%s", f->file, first, n > 1 ? " ..." : "");
	return true;
}

/* Tells whether the top instance is in use; see topstate.h. */
bool tsync_topstate_in_use(char *why, size_t whylen)
{
	char dummy[8];
	long long n;

	if (!why) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	for (size_t i = 0; i < NTOP; i++) {
		char *txt = tracefs_instance_file_read(NULL, top_files[i].file, NULL);
		bool used = txt && file_in_use(&top_files[i], txt, why, whylen);

		free(txt);
		if (used)
			return true;
	}
	n = buffer_entries();
	if (n > 0)
		return tsync_set_err(why, whylen, "its buffer holds %lld events", n), true;
	return false;
}

/* Saves the state; see topstate.h. */
int tsync_topstate_save(struct tsync_topstate **out)
{
	struct tsync_topstate *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < NTOP; i++)
		st->txt[i] = tracefs_instance_file_read(NULL, top_files[i].file, NULL);
	*out = st;
	return 0;
}

/* Cleans the top instance; see topstate.h. */
void tsync_topstate_clean(void)
{
	int fd;

	tracefs_trace_off(NULL);
	tracefs_instance_file_write(NULL, "events/enable", "0");
	for (size_t i = 0; i < NTOP; i++)
		if (top_files[i].reset && tracefs_file_exists(NULL, top_files[i].file))
			tracefs_instance_file_write(NULL, top_files[i].file, top_files[i].reset);
	fd = tracefs_instance_file_open(NULL, "trace", O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
}

/* Writes list text @txt back into @file, one line at a time. Returns 0
 * or the first -errno. */
static int list_restore(const char *file, const char *txt)
{
	const char *p = txt;
	int ret = 0;

	while (*p) {
		size_t l = strcspn(p, "\n");
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(l < 511 ? l : 511), p);
		p += l + (p[l] == '\n');
		if (empty_line(line))
			continue;
		errno = 0;
		if (tracefs_instance_file_append(NULL, file, line) < 0 && !ret) {
			ret = errno ? -errno : -EIO;
			log_err("cannot write back '%s' to the top instance's %s: %s", line,
				file, strerror(-ret));
		}
	}
	return ret;
}

/* Writes the state back; see topstate.h. */
int tsync_topstate_restore(struct tsync_topstate *st)
{
	int ret = 0, r;

	if (!st)
		return 0;
	for (size_t i = 0; i < NTOP; i++) {
		const struct top_file *f = &top_files[i];
		char word[256];

		if (!st->txt[i])
			continue;
		if (f->kind != TOP_VALUE) {
			r = list_restore(f->file, st->txt[i]);
		} else {
			errno = 0;
			r = tracefs_instance_file_write(NULL, f->file,
							first_word(st->txt[i], word,
								   sizeof(word))) < 0 ?
			    (errno ? -errno : -EIO) : 0;
			if (r)
				log_err("cannot write back %s of the top tracefs instance: %s",
					f->file, strerror(-r));
		}
		if (r && !ret)
			ret = r;
	}
	tsync_topstate_free(st);
	return ret;
}

/* Frees the state; see topstate.h. */
void tsync_topstate_free(struct tsync_topstate *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < NTOP; i++)
		free(st->txt[i]);
	free(st);
}
