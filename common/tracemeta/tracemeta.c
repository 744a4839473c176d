// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace metadata: collected from tracefs, or rebuilt from parts received
 * from a peer. See tracemeta.h.
 */
#include "common/tracemeta/tracemeta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/base/cpu.h"
#include "common/base/errbuf.h"
#include "common/base/trace_clock.h"
#include "common/tracefs/ringbuf.h"
#include "common/tracemeta/tracemeta_file.h"
#include "common/tracemeta/tracemeta_stats.h"
#include "proto/proto.h"

/* Indexes of the single texts. */
enum { T_HP, T_HE, T_KALLSYMS, T_PRINTK, T_CMDLINES, T_UNAME, T_CLOCK, T_N };

/* The protocol's META_CHUNK kinds are the part kinds: keep them equal. */
_Static_assert((int)TRACEMETA_HEADER_PAGE == (int)TSYNC_META_HEADER_PAGE &&
	       (int)TRACEMETA_HEADER_EVENT == (int)TSYNC_META_HEADER_EVENT &&
	       (int)TRACEMETA_FTRACE_FORMAT == (int)TSYNC_META_FTRACE_FORMAT &&
	       (int)TRACEMETA_EVENT_FORMAT == (int)TSYNC_META_EVENT_FORMAT &&
	       (int)TRACEMETA_KALLSYMS == (int)TSYNC_META_KALLSYMS &&
	       (int)TRACEMETA_PRINTK == (int)TSYNC_META_PRINTK &&
	       (int)TRACEMETA_CMDLINES == (int)TSYNC_META_CMDLINES &&
	       (int)TRACEMETA_UNAME == (int)TSYNC_META_UNAME &&
	       (int)TRACEMETA_TRACE_CLOCK == (int)TSYNC_META_TRACE_CLOCK &&
	       (int)TRACEMETA_CPUSTAT == (int)TSYNC_META_CPUSTAT,
	       "tracemeta part kinds must match enum tsync_meta_kind");

struct tracemeta {
	struct tracedat_meta meta;	/* view handed out */
	struct tracedat_text text[T_N];	/* owned, NUL-terminated */
	unsigned int have;		/* bit per single text received */
	int nftrace;
	struct tracedat_text *ftrace;	/* data owned */
	int nsys;
	struct tracedat_system *sys;	/* names and formats owned */
	int nformats;			/* ftrace + event formats + cpustat */
	int ncpustat;
	struct tracedat_text *cpustat;	/* data owned */
	const char **cpustat_str;	/* view of cpustat for tracedat */
	size_t total;			/* bytes of all texts */
	struct tracedat_zpart kallsyms_z;	/* tracemeta_precompress() */
	unsigned int open_kind;		/* part continued by the next add */
	bool finished;
};

/* Returns the single-text index of part @kind, or -1. */
static int text_index(unsigned int kind)
{
	switch (kind) {
	case TRACEMETA_HEADER_PAGE:	return T_HP;
	case TRACEMETA_HEADER_EVENT:	return T_HE;
	case TRACEMETA_KALLSYMS:	return T_KALLSYMS;
	case TRACEMETA_PRINTK:		return T_PRINTK;
	case TRACEMETA_CMDLINES:	return T_CMDLINES;
	case TRACEMETA_UNAME:		return T_UNAME;
	case TRACEMETA_TRACE_CLOCK:	return T_CLOCK;
	default:			return -1;
	}
}

/* Frees an array of owned format texts. */
static void free_texts(struct tracedat_text *t, int n)
{
	for (int i = 0; t && i < n; i++)
		free((char *)t[i].data);
	free(t);
}

void tracemeta_free(struct tracemeta *tm)
{
	if (!tm)
		return;
	for (int i = 0; i < T_N; i++)
		free((char *)tm->text[i].data);
	free_texts(tm->ftrace, tm->nftrace);
	free_texts(tm->cpustat, tm->ncpustat);
	free(tm->cpustat_str);
	tracedat_zpart_free(&tm->kallsyms_z);
	for (int i = 0; i < tm->nsys; i++) {
		free((char *)tm->sys[i].name);
		free_texts((struct tracedat_text *)tm->sys[i].formats,
			   tm->sys[i].nformats);
	}
	free(tm->sys);
	free(tm);
}

struct tracemeta *tracemeta_new(void)
{
	return calloc(1, sizeof(struct tracemeta));
}

const struct tracedat_meta *tracemeta_meta(const struct tracemeta *tm)
{
	return &tm->meta;
}

int tracemeta_precompress(struct tracemeta *tm, enum tracedat_compress kind)
{
	int ret;

	tracedat_zpart_free(&tm->kallsyms_z);
	tm->meta.kallsyms_z = NULL;
	if (kind == TRACEDAT_COMPRESS_NONE || !tm->meta.kallsyms.len)
		return 0;
	ret = tracedat_precompress_kallsyms(&tm->meta, kind, &tm->kallsyms_z);
	if (!ret)
		tm->meta.kallsyms_z = &tm->kallsyms_z;
	return ret;
}

bool tracemeta_take_precompressed(struct tracemeta *to, struct tracemeta *from)
{
	const struct tracedat_text *a = &to->meta.kallsyms, *b = &from->meta.kallsyms;

	if (!from->kallsyms_z.data || to->kallsyms_z.data || !a->len || a->len != b->len ||
	    memcmp(a->data, b->data, a->len))
		return false;
	to->kallsyms_z = from->kallsyms_z;
	to->kallsyms_z.raw = a->data;
	to->meta.kallsyms_z = &to->kallsyms_z;
	from->kallsyms_z = (struct tracedat_zpart){ 0 };
	from->meta.kallsyms_z = NULL;
	return true;
}

int tracemeta_cpustat(const struct tracemeta *tm, const char *const **out)
{
	*out = tm->cpustat_str;
	return tm->cpustat_str ? tm->ncpustat : 0;
}

/* Appends @len bytes to @t, keeping it NUL-terminated. 0 or -errno. */
static int text_append(struct tracemeta *tm, struct tracedat_text *t,
		       const void *data, size_t len)
{
	char *nd;

	if (len > TRACEMETA_MAX_TEXT - t->len ||
	    len > TRACEMETA_MAX_TOTAL - tm->total)
		return -E2BIG;
	nd = realloc((char *)t->data, t->len + len + 1);
	if (!nd)
		return -ENOMEM;
	if (len)
		memcpy(nd + t->len, data, len);
	t->len += len;
	nd[t->len] = '\0';
	t->data = nd;
	tm->total += len;
	return 0;
}

/* Adds an empty format text to @arr/@n. Returns it or NULL. */
static struct tracedat_text *new_format(struct tracemeta *tm,
					struct tracedat_text **arr, int *n)
{
	struct tracedat_text *na;

	if (tm->nformats >= TRACEMETA_MAX_FORMATS)
		return NULL;
	na = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));
	if (!na)
		return NULL;
	*arr = na;
	na[*n] = (struct tracedat_text){ NULL, 0 };
	tm->nformats++;
	return &na[(*n)++];
}

/* Returns the index of system @name, adding it if needed, or -errno. */
static int sys_index(struct tracemeta *tm, const char *name)
{
	struct tracedat_system *ns;
	char *dup;

	for (int i = 0; i < tm->nsys; i++)
		if (!strcmp(tm->sys[i].name, name))
			return i;
	if (tm->nsys >= TRACEMETA_MAX_SYSTEMS)
		return -E2BIG;
	dup = strdup(name);
	ns = dup ? realloc(tm->sys, sizeof(*ns) * (size_t)(tm->nsys + 1)) : NULL;
	if (!ns) {
		free(dup);
		return -ENOMEM;
	}
	tm->sys = ns;
	ns[tm->nsys] = (struct tracedat_system){ .name = dup };
	return tm->nsys++;
}

/* Returns true for a usable system name: [A-Za-z0-9_-], 1..64 chars. */
static bool valid_system(const char *s)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++)
		if (!(s[n] == '_' || s[n] == '-' || (s[n] >= '0' && s[n] <= '9') ||
		      (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z')))
			return false;
	return n > 0 && n < 65 && strcmp(s, "ftrace");
}

/* Returns the text an add of @kind/@system writes to (new or open). */
static int part_target(struct tracemeta *tm, unsigned int kind,
		       const char *system, bool cont, struct tracedat_text **t)
{
	int idx = text_index(kind);
	struct tracedat_system *s;
	struct tracedat_text *f;

	if (idx >= 0) {
		if (!cont && (tm->have & (1u << idx)))
			return -EPROTO;	/* sent twice */
		tm->have |= 1u << idx;
		*t = &tm->text[idx];
		return 0;
	}
	if (kind == TRACEMETA_FTRACE_FORMAT) {
		*t = cont ? &tm->ftrace[tm->nftrace - 1] :
			    new_format(tm, &tm->ftrace, &tm->nftrace);
		return *t ? 0 : -E2BIG;
	}
	if (kind == TRACEMETA_CPUSTAT) {
		*t = cont ? &tm->cpustat[tm->ncpustat - 1] :
			    new_format(tm, &tm->cpustat, &tm->ncpustat);
		return *t ? 0 : -E2BIG;
	}
	/* TRACEMETA_EVENT_FORMAT */
	if (!valid_system(system))
		return -EPROTO;
	if (cont) {
		s = &tm->sys[tm->nsys - 1];
		if (strcmp(s->name, system))
			return -EPROTO;	/* a continuation of another system */
	} else {
		idx = sys_index(tm, system);
		if (idx < 0)
			return idx;
		s = &tm->sys[idx];
		/* keep the open system last so continuations find it */
		if (idx != tm->nsys - 1) {
			struct tracedat_system tmp = *s;

			memmove(s, s + 1, sizeof(*s) * (size_t)(tm->nsys - 1 - idx));
			tm->sys[tm->nsys - 1] = tmp;
			s = &tm->sys[tm->nsys - 1];
		}
	}
	f = (struct tracedat_text *)s->formats;
	if (cont) {
		*t = &f[s->nformats - 1];
		return 0;
	}
	*t = new_format(tm, &f, &s->nformats);
	s->formats = f;
	return *t ? 0 : -E2BIG;
}

int tracemeta_add_part(struct tracemeta *tm, unsigned int kind,
		       const char *system, const void *data, size_t len,
		       bool more)
{
	struct tracedat_text *t;
	bool cont;
	int ret;

	if (!tm || tm->finished || (len && !data) || kind == 0)
		return -EINVAL;
	if (kind > TRACEMETA_CPUSTAT)
		return 0;	/* a newer peer's kind: skipped */
	cont = tm->open_kind != 0;
	if (cont && kind != tm->open_kind)
		return -EPROTO;	/* parts must not interleave */
	ret = part_target(tm, kind, system, cont, &t);
	if (!ret)
		ret = text_append(tm, t, data, len);
	if (ret)
		return ret;
	tm->open_kind = more ? kind : 0;
	return 0;
}

/* Returns true when @t is a C string (no NUL inside). */
static bool is_cstring(const struct tracedat_text *t)
{
	return !t->data || strlen(t->data) == t->len;
}

/* Returns true when a trace_clock text has a selected "[clock]". */
static bool has_selected_clock(const char *s)
{
	char clock[64];

	return tsync_trace_clock_selected(s, clock, sizeof(clock)) == 0;
}

int tracemeta_finish(struct tracemeta *tm, uint32_t page_size)
{
	struct tracedat_meta *m;
	int ret;

	if (!tm || tm->finished)
		return -EINVAL;
	if (tm->open_kind || !tm->text[T_HP].len || !tm->text[T_HE].len ||
	    !is_cstring(&tm->text[T_UNAME]) || !is_cstring(&tm->text[T_CLOCK]) ||
	    (tm->text[T_CLOCK].data && !has_selected_clock(tm->text[T_CLOCK].data)))
		return -EPROTO;
	for (int i = 0; i < tm->nftrace; i++)
		if (!tm->ftrace[i].len)
			return -EPROTO;
	for (int i = 0; i < tm->ncpustat; i++)
		if (!tm->cpustat[i].len || !is_cstring(&tm->cpustat[i]))
			return -EPROTO;
	if (tm->ncpustat > 0) {
		tm->cpustat_str = calloc((size_t)(unsigned int)tm->ncpustat, sizeof(char *));
		if (!tm->cpustat_str)
			return -ENOMEM;
		for (int i = 0; i < tm->ncpustat; i++)
			tm->cpustat_str[i] = tm->cpustat[i].data;
	}
	for (int i = 0; i < tm->nsys; i++)
		for (int j = 0; j < tm->sys[i].nformats; j++)
			if (!tm->sys[i].formats[j].len)
				return -EPROTO;
	if (!page_size) {
		ret = tsync_ringbuf_page_size_of(tm->text[T_HP].data,
						 tm->text[T_HP].len);
		if (ret < 0)
			return ret;
		page_size = (uint32_t)ret;
	}
	if (page_size < 1024 || page_size > (1u << 24) ||
	    (page_size & (page_size - 1)))
		return -EINVAL;
	m = &tm->meta;
	m->page_size = page_size;
	m->header_page = tm->text[T_HP];
	m->header_event = tm->text[T_HE];
	m->nftrace = tm->nftrace;
	m->ftrace_formats = tm->ftrace;
	m->nsystems = tm->nsys;
	m->systems = tm->sys;
	m->kallsyms = tm->text[T_KALLSYMS];
	m->printk_formats = tm->text[T_PRINTK];
	m->cmdlines = tm->text[T_CMDLINES];
	m->uname = tm->text[T_UNAME].data;
	m->trace_clock = tm->text[T_CLOCK].data;
	tm->finished = true;
	return 0;
}

/* Emits one part in chunks of at most @max bytes (nothing if empty). */
static int emit(unsigned int kind, const char *sys,
		const struct tracedat_text *t, size_t max, tracemeta_part_cb cb,
		void *ctx)
{
	size_t off = 0;
	int ret;

	if (!t->len)
		return 0;
	do {
		size_t n = t->len - off > max ? max : t->len - off;

		ret = cb(ctx, kind, sys, t->data + off, n, off + n < t->len);
		off += n;
	} while (!ret && off < t->len);
	return ret;
}

int tracemeta_foreach_part(const struct tracemeta *tm, size_t max_chunk,
			   tracemeta_part_cb cb, void *ctx)
{
	static const unsigned int tail[] = {
		TRACEMETA_KALLSYMS, TRACEMETA_PRINTK, TRACEMETA_CMDLINES,
		TRACEMETA_UNAME, TRACEMETA_TRACE_CLOCK,
	};
	int ret;

	if (!tm || !tm->finished || !max_chunk || !cb)
		return -EINVAL;
	ret = emit(TRACEMETA_HEADER_PAGE, "", &tm->text[T_HP], max_chunk, cb, ctx);
	if (!ret)
		ret = emit(TRACEMETA_HEADER_EVENT, "", &tm->text[T_HE], max_chunk,
			   cb, ctx);
	for (int i = 0; !ret && i < tm->nftrace; i++)
		ret = emit(TRACEMETA_FTRACE_FORMAT, "", &tm->ftrace[i], max_chunk,
			   cb, ctx);
	for (int i = 0; !ret && i < tm->nsys; i++)
		for (int j = 0; !ret && j < tm->sys[i].nformats; j++)
			ret = emit(TRACEMETA_EVENT_FORMAT, tm->sys[i].name,
				   &tm->sys[i].formats[j], max_chunk, cb, ctx);
	for (size_t i = 0; !ret && i < sizeof(tail) / sizeof(tail[0]); i++)
		ret = emit(tail[i], "", &tm->text[text_index(tail[i])],
			   max_chunk, cb, ctx);
	for (int i = 0; !ret && i < tm->ncpustat; i++)
		ret = emit(TRACEMETA_CPUSTAT, "", &tm->cpustat[i], max_chunk, cb, ctx);
	return ret;
}

/* Stores a malloc'd NUL-terminated text (taking it) as single text @idx. */
static void set_text(struct tracemeta *tm, int idx, char *data, size_t len)
{
	free((char *)tm->text[idx].data);
	tm->text[idx] = (struct tracedat_text){ data, len };
	tm->have |= 1u << idx;
	tm->total += len;
}

/* Reads @rel of @inst into single text @idx. Returns 0 or -errno. */
static int read_text(struct tracemeta *tm, struct tracefs_instance *inst,
		     const char *rel, int idx)
{
	char *buf;
	size_t len;
	int ret = tm_inst_read(inst, rel, &buf, &len);

	if (!ret)
		set_text(tm, idx, buf, len);
	return ret;
}

/* Appends the format of @sys:@ev to @arr/@n. Returns 0 or -errno. */
static int add_format(struct tracemeta *tm, struct tracedat_text **arr,
		      int *n, const char *sys, const char *ev)
{
	struct tracedat_text *t;
	char *txt;
	int size = 0;

	txt = tracefs_event_file_read(NULL, sys, ev, "format", &size);
	if (!txt || size <= 0) {
		free(txt);
		return -ENOENT;
	}
	t = new_format(tm, arr, n);
	if (!t) {
		free(txt);
		return -ENOMEM;
	}
	t->data = txt;
	t->len = (size_t)size;
	tm->total += (size_t)size;
	return 0;
}

/* Reads every events/ftrace/ * /format. Returns 0 or -errno. */
static int collect_ftrace(struct tracemeta *tm)
{
	char **evs = tracefs_system_events(NULL, "ftrace");
	int ret = 0;

	if (!evs)
		return -ENOENT;
	for (int i = 0; evs[i] && !ret; i++)
		ret = add_format(tm, &tm->ftrace, &tm->nftrace, "ftrace", evs[i]);
	tracefs_list_free(evs);
	return ret;
}

/* Reads the formats of the events listed in @inst's set_event. */
static int collect_enabled(struct tracemeta *tm, struct tracefs_instance *inst)
{
	char *list, *line, *save = NULL;
	int ret;

	ret = tm_inst_read(inst, "set_event", &list, NULL);
	if (ret)
		return ret;
	for (line = strtok_r(list, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		struct tracedat_system *s;
		struct tracedat_text *f;
		int idx;

		if (!colon || colon == line || !colon[1])
			continue;
		*colon = '\0';
		if (!strcmp(line, "ftrace"))
			continue;	/* already in the ftrace formats */
		idx = sys_index(tm, line);
		if (idx < 0) {
			ret = idx;
			break;
		}
		s = &tm->sys[idx];
		f = (struct tracedat_text *)s->formats;
		ret = add_format(tm, &f, &s->nformats, line, colon + 1);
		s->formats = f;
	}
	free(list);
	return ret;
}

/* Stores "sysname nodename release machine" (trace-cmd's UNAME text). */
static int collect_uname(struct tracemeta *tm)
{
	struct utsname u;
	char *s = NULL;
	int n;

	if (uname(&u))
		return -errno;
	n = asprintf(&s, "%s %s %s %s", u.sysname, u.nodename, u.release,
		     u.machine);
	if (n < 0)
		return -ENOMEM;
	set_text(tm, T_UNAME, s, (size_t)n);
	return 0;
}

/* Reads every CPU's stats of @inst as CPUSTAT texts. Returns 0 or -errno. */
static int collect_cpustat(struct tracemeta *tm, struct tracefs_instance *inst)
{
	int n = tsync_cpu_count();

	for (int cpu = 0; cpu < n; cpu++) {
		struct tracemeta_stats st;
		struct tracedat_text *t;
		char *txt = NULL;

		if (tracemeta_read_stats(inst, cpu, &st, &txt))
			continue;	/* an offline CPU has no stats */
		t = new_format(tm, &tm->cpustat, &tm->ncpustat);
		if (!t) {
			free(txt);
			return -E2BIG;
		}
		*t = (struct tracedat_text){ txt, strlen(txt) };
		tm->total += t->len;
	}
	return 0;
}

int tracemeta_refresh_cmdlines(struct tracemeta *tm)
{
	size_t old = tm->text[T_CMDLINES].len;
	int ret = read_text(tm, NULL, "saved_cmdlines", T_CMDLINES);

	if (ret)
		return ret;
	tm->total -= old;
	if (tm->finished)
		tm->meta.cmdlines = tm->text[T_CMDLINES];
	return 0;
}

/* Stores @n CPUSTAT texts (taken) in place of @tm's, with their view when
 * @tm is finished. Returns 0 or -ENOMEM (then @tm keeps its old ones and
 * the texts are freed). */
static int replace_cpustat(struct tracemeta *tm, struct tracedat_text *t, int n)
{
	const char **view = NULL;

	if (tm->finished && n > 0) {
		view = calloc((size_t)(unsigned int)n, sizeof(char *));
		if (!view) {
			free_texts(t, n);
			return -ENOMEM;
		}
		for (int i = 0; i < n; i++)
			view[i] = t[i].data;
	}
	for (int i = 0; i < tm->ncpustat; i++)
		tm->total -= tm->cpustat[i].len;
	for (int i = 0; i < n; i++)
		tm->total += t[i].len;
	free_texts(tm->cpustat, tm->ncpustat);
	free(tm->cpustat_str);
	tm->nformats += n - tm->ncpustat;
	tm->cpustat = t;
	tm->ncpustat = n;
	tm->cpustat_str = view;
	return 0;
}

/* Reads single text @idx again from @rel of @inst (NULL: the top
 * instance), keeping the old one on failure. Returns 0 or -errno. */
static int reread_text(struct tracemeta *tm, struct tracefs_instance *inst,
		       const char *rel, int idx)
{
	size_t old = tm->text[idx].len;
	int ret = read_text(tm, inst, rel, idx);

	if (!ret)
		tm->total -= old;
	return ret;
}

int tracemeta_refresh(struct tracemeta *tm, struct tracefs_instance *inst,
		      const struct tracemeta_opts *opts)
{
	struct tracemeta fresh = { .finished = false };
	int ret;

	if (!tm || !tm->finished)
		return -EINVAL;
	if (opts && opts->cpustat) {
		ret = collect_cpustat(&fresh, inst);
		if (!ret)
			ret = replace_cpustat(tm, fresh.cpustat, fresh.ncpustat);
		else
			free_texts(fresh.cpustat, fresh.ncpustat);
		if (ret)
			return ret;
	}
	ret = reread_text(tm, NULL, "printk_formats", T_PRINTK);
	if (!ret)
		ret = reread_text(tm, NULL, "saved_cmdlines", T_CMDLINES);
	tm->meta.printk_formats = tm->text[T_PRINTK];
	tm->meta.cmdlines = tm->text[T_CMDLINES];
	return ret;
}

int tracemeta_collect(struct tracefs_instance *inst,
		      const struct tracemeta_opts *opts, struct tracemeta **out)
{
	struct tracemeta *tm = tracemeta_new();
	char *ks = NULL;
	size_t kl = 0;
	int ret;

	if (!tm)
		return -ENOMEM;
	ret = read_text(tm, inst, "events/header_page", T_HP);
	if (!ret)
		ret = read_text(tm, inst, "events/header_event", T_HE);
	if (!ret)
		ret = collect_ftrace(tm);
	if (!ret)
		ret = collect_enabled(tm, inst);
	if (!ret)
		ret = read_text(tm, NULL, "printk_formats", T_PRINTK);
	if (!ret)
		ret = read_text(tm, NULL, "saved_cmdlines", T_CMDLINES);
	if (!ret)
		ret = read_text(tm, inst, "trace_clock", T_CLOCK);
	if (!ret)
		ret = collect_uname(tm);
	if (!ret && opts && opts->cpustat)
		ret = collect_cpustat(tm, inst);
	if (!ret && opts && opts->kallsyms) {
		ret = tm_read_path("/proc/kallsyms", &ks, &kl);
		if (!ret)
			set_text(tm, T_KALLSYMS, ks, kl);
	}
	if (!ret)
		/* the page size of the header_page read above: the one
		 * tsync_ringbuf_page_size() would read, in the same text */
		ret = tracemeta_finish(tm, 0);
	if (ret) {
		tracemeta_free(tm);
		return ret;
	}
	*out = tm;
	return 0;
}
