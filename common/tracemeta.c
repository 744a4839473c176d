// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace metadata collection from tracefs, per-CPU stats parsing, and event
 * selection (resolve specs, enable with filters). See tracemeta.h.
 */
#include "common/tracemeta.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

/* Reads a whole file into a malloc'd NUL-terminated buffer. */
static int read_path(const char *path, char **out, size_t *outlen)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap), *nb;
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* Reads @rel (relative to @inst's directory, or the top). 0 or -errno. */
static int inst_read(struct tracefs_instance *inst, const char *rel,
		     char **out, size_t *len)
{
	char *path = tracefs_instance_get_file(inst, rel);
	int ret;

	if (!path)
		return -ENOMEM;
	ret = read_path(path, out, len);
	tracefs_put_tracing_file(path);
	return ret;
}

/* Writes @str to @rel of @inst (truncating). Returns 0 or -errno. */
static int inst_write(struct tracefs_instance *inst, const char *rel,
		      const char *str)
{
	char *path = tracefs_instance_get_file(inst, rel);
	size_t len = strlen(str);
	ssize_t n;
	int fd, ret = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return -errno;
	n = write(fd, str, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* snprintf into @err if there is one. */
static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- metadata ---------------------------------------------------------- */

struct tracemeta {
	struct tracedat_meta meta;	/* view handed out */
	char *hp, *he, *kallsyms, *printk, *cmdlines, *uname, *clock;
	int nftrace;
	struct tracedat_text *ftrace;	/* data owned */
	int nsys;
	struct tracedat_system *sys;	/* names and formats owned */
};

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
	free(tm->hp);
	free(tm->he);
	free(tm->kallsyms);
	free(tm->printk);
	free(tm->cmdlines);
	free(tm->uname);
	free(tm->clock);
	free_texts(tm->ftrace, tm->nftrace);
	for (int i = 0; i < tm->nsys; i++) {
		free((char *)tm->sys[i].name);
		free_texts((struct tracedat_text *)tm->sys[i].formats,
			   tm->sys[i].nformats);
	}
	free(tm->sys);
	free(tm);
}

const struct tracedat_meta *tracemeta_meta(const struct tracemeta *tm)
{
	return &tm->meta;
}

int tracemeta_subbuf_size(struct tracefs_instance *inst)
{
	struct tep_handle *tep;
	char *hp;
	size_t len;
	int ret;

	ret = inst_read(inst, "events/header_page", &hp, &len);
	if (ret)
		return ret;
	tep = tep_alloc();
	if (!tep) {
		free(hp);
		return -ENOMEM;
	}
	if (tep_parse_header_page(tep, hp, len, (int)sizeof(long)))
		ret = -EINVAL;
	else
		ret = tep_get_sub_buffer_size(tep);
	if (ret == 0 || (ret > 0 && (ret & (ret - 1))))
		ret = -EINVAL;	/* not a usable page size */
	tep_free(tep);
	free(hp);
	return ret;
}

/* Appends the format of @sys:@ev to @arr/@n. Returns 0 or -errno. */
static int add_format(struct tracedat_text **arr, int *n, const char *sys,
		      const char *ev)
{
	struct tracedat_text *na;
	char *txt;
	int size = 0;

	txt = tracefs_event_file_read(NULL, sys, ev, "format", &size);
	if (!txt || size <= 0) {
		free(txt);
		return -ENOENT;
	}
	na = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));
	if (!na) {
		free(txt);
		return -ENOMEM;
	}
	*arr = na;
	na[*n].data = txt;
	na[*n].len = (size_t)size;
	(*n)++;
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
		ret = add_format(&tm->ftrace, &tm->nftrace, "ftrace", evs[i]);
	tracefs_list_free(evs);
	return ret;
}

/* Returns the index of system @name in @tm, adding it if needed. */
static int sys_index(struct tracemeta *tm, const char *name)
{
	struct tracedat_system *ns;
	char *dup;

	for (int i = 0; i < tm->nsys; i++)
		if (!strcmp(tm->sys[i].name, name))
			return i;
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

/* Reads the formats of the events listed in @inst's set_event. */
static int collect_enabled(struct tracemeta *tm, struct tracefs_instance *inst)
{
	char *list, *line, *save = NULL;
	int ret;

	ret = inst_read(inst, "set_event", &list, NULL);
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
		ret = add_format(&f, &s->nformats, line, colon + 1);
		s->formats = f;
	}
	free(list);
	return ret;
}

/* Returns "sysname nodename release machine" (trace-cmd's UNAME text). */
static char *uname_text(void)
{
	struct utsname u;
	char *s = NULL;

	if (uname(&u))
		return NULL;
	if (asprintf(&s, "%s %s %s %s", u.sysname, u.nodename, u.release,
		     u.machine) < 0)
		return NULL;
	return s;
}

int tracemeta_collect(struct tracefs_instance *inst,
		      const struct tracemeta_opts *opts, struct tracemeta **out)
{
	struct tracemeta *tm = calloc(1, sizeof(*tm));
	struct tracedat_meta *m;
	size_t hpl, hel, pl = 0, cl = 0, kl = 0;
	int ret;

	if (!tm)
		return -ENOMEM;
	m = &tm->meta;
	ret = inst_read(inst, "events/header_page", &tm->hp, &hpl);
	if (!ret)
		ret = inst_read(inst, "events/header_event", &tm->he, &hel);
	if (!ret)
		ret = tracemeta_subbuf_size(inst);
	if (ret < 0)
		goto fail;
	m->page_size = (uint32_t)ret;
	ret = collect_ftrace(tm);
	if (!ret)
		ret = collect_enabled(tm, inst);
	if (!ret)
		ret = inst_read(NULL, "printk_formats", &tm->printk, &pl);
	if (!ret)
		ret = inst_read(NULL, "saved_cmdlines", &tm->cmdlines, &cl);
	if (!ret)
		ret = inst_read(inst, "trace_clock", &tm->clock, NULL);
	if (!ret && opts && opts->kallsyms)
		ret = read_path("/proc/kallsyms", &tm->kallsyms, &kl);
	if (ret)
		goto fail;
	tm->uname = uname_text();
	if (!tm->uname) {
		ret = -ENOMEM;
		goto fail;
	}
	m->header_page = (struct tracedat_text){ tm->hp, hpl };
	m->header_event = (struct tracedat_text){ tm->he, hel };
	m->nftrace = tm->nftrace;
	m->ftrace_formats = tm->ftrace;
	m->nsystems = tm->nsys;
	m->systems = tm->sys;
	m->kallsyms = (struct tracedat_text){ tm->kallsyms, kl };
	m->printk_formats = (struct tracedat_text){ tm->printk, pl };
	m->cmdlines = (struct tracedat_text){ tm->cmdlines, cl };
	m->uname = tm->uname;
	m->trace_clock = tm->clock;
	*out = tm;
	return 0;
fail:
	tracemeta_free(tm);
	return ret;
}

/* ---- stats ------------------------------------------------------------- */

/* Parses an unsigned decimal filling [s, e). Returns 0 or -EINVAL. */
static int parse_u64(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return -EINVAL;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* Parses "S.UUUUUU" (ns result) or a raw count. Returns 0 or -EINVAL. */
static int parse_ts(const char *s, const char *e, uint64_t *out)
{
	const char *dot = memchr(s, '.', (size_t)(e - s));
	uint64_t sec, us;

	if (!dot)
		return parse_u64(s, e, out);
	if (parse_u64(s, dot, &sec) || e - dot - 1 != 6 ||
	    parse_u64(dot + 1, e, &us) || sec > UINT64_MAX / 1000000000u - 1)
		return -EINVAL;
	*out = sec * 1000000000u + us * 1000u;
	return 0;
}

int tracemeta_parse_stats(const char *text, size_t len,
			  struct tracemeta_stats *out)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned int bit;
		bool ts;
	} keys[] = {
#define K(k, f, b, t) { k, offsetof(struct tracemeta_stats, f), b, t }
		K("entries", entries, TRACEMETA_ST_ENTRIES, false),
		K("overrun", overrun, TRACEMETA_ST_OVERRUN, false),
		K("commit overrun", commit_overrun, TRACEMETA_ST_COMMIT_OVERRUN, false),
		K("bytes", bytes, TRACEMETA_ST_BYTES, false),
		K("oldest event ts", oldest_event_ts, TRACEMETA_ST_OLDEST_TS, true),
		K("now ts", now_ts, TRACEMETA_ST_NOW_TS, true),
		K("dropped events", dropped_events, TRACEMETA_ST_DROPPED, false),
		K("read events", read_events, TRACEMETA_ST_READ, false),
#undef K
	};
	const char *p = text, *end = text + len;

	if (!text || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));

		if (colon) {
			const char *v = colon + 1, *ve = le;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' ||
					  ve[-1] == '\r'))
				ve--;
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
				uint64_t *dst;

				if (strlen(keys[i].key) != (size_t)(colon - p) ||
				    memcmp(keys[i].key, p, (size_t)(colon - p)))
					continue;
				dst = (uint64_t *)((char *)out + keys[i].off);
				if ((keys[i].ts ? parse_ts(v, ve, dst) :
						  parse_u64(v, ve, dst)))
					return -EINVAL;
				out->have |= keys[i].bit;
				break;
			}
		}
		p = le + 1;
	}
	if (!(out->have & TRACEMETA_ST_ENTRIES) ||
	    !(out->have & TRACEMETA_ST_OVERRUN))
		return -EINVAL;
	return 0;
}

int tracemeta_read_stats(struct tracefs_instance *inst, int cpu,
			 struct tracemeta_stats *out, char **cpustat)
{
	char rel[64], *text;
	size_t len;
	int ret;

	if (cpu < 0 || !out)
		return -EINVAL;
	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	ret = inst_read(inst, rel, &text, &len);
	if (ret)
		return ret;
	ret = tracemeta_parse_stats(text, len, out);
	if (!ret && cpustat && asprintf(cpustat, "CPU: %d\n%s", cpu, text) < 0)
		ret = -ENOMEM;
	free(text);
	return ret;
}

/* ---- event selection --------------------------------------------------- */

enum sel_kind { SEL_ALL, SEL_SYSTEM, SEL_EVENT, SEL_FTRACE };

struct sel {
	enum sel_kind kind;
	char *sys, *ev, *filter;
};

struct tracemeta_events {
	int n;
	struct sel *v;
};

void tracemeta_events_free(struct tracemeta_events *ev)
{
	if (!ev)
		return;
	for (int i = 0; i < ev->n; i++) {
		free(ev->v[i].sys);
		free(ev->v[i].ev);
		free(ev->v[i].filter);
	}
	free(ev->v);
	free(ev);
}

int tracemeta_events_count(const struct tracemeta_events *ev)
{
	return ev ? ev->n : 0;
}

/* Appends a selection (strings copied). Returns 0 or -ENOMEM. */
static int add_sel(struct tracemeta_events *e, enum sel_kind kind,
		   const char *sys, const char *ev, const char *filter)
{
	struct sel *nv = realloc(e->v, sizeof(*nv) * (size_t)(e->n + 1));
	struct sel *s;

	if (!nv)
		return -ENOMEM;
	e->v = nv;
	s = &nv[e->n];
	*s = (struct sel){ .kind = kind };
	s->sys = sys ? strdup(sys) : NULL;
	s->ev = ev ? strdup(ev) : NULL;
	s->filter = filter ? strdup(filter) : NULL;
	if ((sys && !s->sys) || (ev && !s->ev) || (filter && !s->filter)) {
		free(s->sys);
		free(s->ev);
		free(s->filter);
		return -ENOMEM;
	}
	e->n++;
	return 0;
}

/*
 * Returns true when @name is a system: in @list (NULL-terminated, from
 * tracefs_event_systems(), which leaves out "ftrace" as it has no enable
 * file) or "ftrace".
 */
static bool is_system(char **list, const char *name)
{
	if (!strcmp(name, "ftrace"))
		return true;
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

/*
 * Adds the events of system @sys matching @pat (exact or glob). Returns
 * the number added, or -errno.
 */
static int add_matching(struct tracemeta_events *e, const char *sys,
			const char *pat, const char *filter)
{
	char **evs = tracefs_system_events(NULL, sys);
	bool ftrace = !strcmp(sys, "ftrace");
	int n = 0, ret = 0;

	for (int i = 0; evs && evs[i] && !ret; i++) {
		if (fnmatch(pat, evs[i], 0))
			continue;
		ret = add_sel(e, ftrace ? SEL_FTRACE : SEL_EVENT, sys, evs[i],
			      filter);
		n++;
	}
	tracefs_list_free(evs);
	return ret ? ret : n;
}

/* Resolves one spec into @e. Returns 0 or -errno with @err set. */
static int resolve_one(struct tracemeta_events *e, char **systems,
		       const struct tracemeta_event_spec *sp, char *err,
		       size_t errlen)
{
	const char *spec = sp->spec, *colon;
	char sys[256];
	int ret = 0;

	if (!spec || !*spec || strlen(spec) >= sizeof(sys) ||
	    strpbrk(spec, "/ \t\n")) {
		seterr(err, errlen, "malformed event '%s'", spec ? spec : "");
		return -EINVAL;
	}
	if (!strcmp(spec, "all")) {
		if (sp->filter) {
			seterr(err, errlen, "a filter needs an event or a "
			       "system, not 'all'");
			return -EINVAL;
		}
		return add_sel(e, SEL_ALL, NULL, NULL, NULL);
	}
	colon = strchr(spec, ':');
	if (colon) {
		memcpy(sys, spec, (size_t)(colon - spec));
		sys[colon - spec] = '\0';
		if (!sys[0] || !colon[1] || strchr(colon + 1, ':')) {
			seterr(err, errlen, "malformed event '%s'", spec);
			return -EINVAL;
		}
		if (!is_system(systems, sys)) {
			seterr(err, errlen, "unknown event '%s' (no system '%s')",
			       spec, sys);
			return -ENOENT;
		}
		ret = add_matching(e, sys, colon + 1, sp->filter);
		if (ret == 0) {
			seterr(err, errlen, "unknown event '%s'", spec);
			return -ENOENT;
		}
		return ret < 0 ? ret : 0;
	}
	if (is_system(systems, spec))
		return add_sel(e, strcmp(spec, "ftrace") ? SEL_SYSTEM :
			       SEL_FTRACE, spec, NULL, sp->filter);
	/* an event name alone, as trace-cmd accepts: look in every system */
	ret = add_matching(e, "ftrace", spec, sp->filter);
	for (int i = 0; systems[i] && ret >= 0; i++) {
		int n = add_matching(e, systems[i], spec, sp->filter);

		ret = n < 0 ? n : ret + n;
	}
	if (ret < 0)
		return ret;
	if (!ret) {
		seterr(err, errlen, "unknown event or system '%s'", spec);
		return -ENOENT;
	}
	return 0;
}

int tracemeta_resolve_events(const struct tracemeta_event_spec *specs, int n,
			     struct tracemeta_events **out, char *err,
			     size_t errlen)
{
	struct tracemeta_events *e;
	char **systems;
	int ret = 0;

	if (n < 0 || (n && !specs) || !out)
		return -EINVAL;
	systems = tracefs_event_systems(NULL);
	if (!systems) {
		seterr(err, errlen, "cannot list the kernel's trace events "
		       "(is tracefs mounted?)");
		return -ENOENT;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		tracefs_list_free(systems);
		return -ENOMEM;
	}
	for (int i = 0; i < n && !ret; i++)
		ret = resolve_one(e, systems, &specs[i], err, errlen);
	tracefs_list_free(systems);
	if (ret) {
		tracemeta_events_free(e);
		return ret;
	}
	*out = e;
	return 0;
}

/* Builds "events[/SYS[/EV]]/@file" for a selection. */
static void sel_path(const struct sel *s, const char *file, char *buf,
		     size_t len)
{
	if (s->kind == SEL_ALL)
		snprintf(buf, len, "events/%s", file);
	else if (!s->ev)
		snprintf(buf, len, "events/%s/%s", s->sys, file);
	else
		snprintf(buf, len, "events/%s/%s/%s", s->sys, s->ev, file);
}

/* Writes a selection's filter; on rejection @err gets the kernel's say. */
static int set_filter(struct tracefs_instance *inst, const struct sel *s,
		      const char *name, char *err, size_t errlen)
{
	char rel[600], *why = NULL, *nl;
	int ret;

	sel_path(s, "filter", rel, sizeof(rel));
	ret = inst_write(inst, rel, s->filter);
	if (!ret)
		return 0;
	/* the filter file now shows the kernel's parse error */
	if (!inst_read(inst, rel, &why, NULL)) {
		for (nl = why; *nl; nl++)
			if (*nl == '\n')
				*nl = ' ';
	}
	seterr(err, errlen, "filter '%s' rejected for '%s': %s%s%s",
	       s->filter, name, strerror(-ret), why ? ": " : "",
	       why ? why : "");
	free(why);
	return ret;
}

int tracemeta_enable_events(struct tracefs_instance *inst,
			    const struct tracemeta_events *ev, char *err,
			    size_t errlen)
{
	char rel[600], name[512];
	int ret;

	if (!ev)
		return -EINVAL;
	for (int i = 0; i < ev->n; i++) {
		const struct sel *s = &ev->v[i];

		if (s->kind == SEL_FTRACE)
			continue;	/* markers: always recorded */
		if (s->kind == SEL_ALL)
			snprintf(name, sizeof(name), "all");
		else
			snprintf(name, sizeof(name), "%s%s%s", s->sys,
				 s->ev ? ":" : "", s->ev ? s->ev : "");
		if (s->filter) {
			ret = set_filter(inst, s, name, err, errlen);
			if (ret)
				return ret;
		}
		sel_path(s, "enable", rel, sizeof(rel));
		ret = inst_write(inst, rel, "1");
		if (ret) {
			seterr(err, errlen, "cannot enable '%s': %s", name,
			       strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int tracemeta_disable_events(struct tracefs_instance *inst)
{
	return inst_write(inst, "events/enable", "0");
}
