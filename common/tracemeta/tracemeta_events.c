// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Event selection: "-e" specs resolved against the kernel's events,
 * then enabled (with filters) in a tracefs instance. See tracemeta.h.
 */
#include "common/tracemeta/tracemeta.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/base/log.h"
#include "common/tracemeta/tracemeta_file.h"

enum sel_kind { SEL_ALL, SEL_SYSTEM, SEL_EVENT, SEL_FTRACE };

struct sel {
	enum sel_kind kind;
	char *sys, *ev, *filter;
	bool negate;
};

struct tracemeta_events {
	int n;
	struct sel *v;
	struct tracemeta_event_limits lim;	/* while resolving */
	size_t filter_bytes;
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
	struct sel *nv;
	struct sel *s;

	if (e->lim.max_selections && e->n >= e->lim.max_selections)
		return -E2BIG;
	if (filter) {
		e->filter_bytes += strlen(filter);
		if (e->lim.max_filter_bytes && e->filter_bytes > e->lim.max_filter_bytes)
			return -E2BIG;
	}
	nv = realloc(e->v, sizeof(*nv) * (size_t)(e->n + 1));
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

/*
 * True (with @err set) if ftrace event @ev is written by a tracer, not
 * enabled as an event: "-e ftrace:function" would record nothing. Those
 * always recorded (marker writes, trace_printk, -T's stacks) are fine.
 */
static bool tracer_event(const char *ev, char *err, size_t errlen)
{
	static const char *const recorded[] = { "print", "bprint", "bputs", "raw_data",
						"kernel_stack", "user_stack", NULL };

	if (strpbrk(ev, "*?["))
		return false;
	for (int i = 0; recorded[i]; i++)
		if (!strcmp(ev, recorded[i]))
			return false;
	if (!strncmp(ev, "func", 4))
		tsync_set_err(err, errlen, "'ftrace:%s' is not an event to enable: the %s tracer "
			      "writes it (-p %s)", ev, strncmp(ev, "funcgraph", 9) ?
			      "function" : "function_graph", strncmp(ev, "funcgraph", 9) ?
			      "function" : "function_graph");
	else
		tsync_set_err(err, errlen, "'ftrace:%s' is not an event to enable: a tracer "
			      "writes it (-p)", ev);
	return true;
}

/* True if @s has glob characters. */
static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * "SYS:EV": the events matching @ev (a glob; empty: all) of system @sys, or
 * of every system matching @sys when it is a glob, as trace-cmd globs
 * events/SYS/EV. Returns 0 or -errno with @err set (@spec names it).
 */
static int resolve_sys_ev(struct tracemeta_events *e, char **systems, const char *sys,
			  const char *ev, const char *filter, const char *spec, char *err,
			  size_t errlen)
{
	int ret = 0;

	if (!*ev)
		ev = "*";	/* trace-cmd: "sched:" is all of sched */
	if (!strcmp(sys, "ftrace") && tracer_event(ev, err, errlen))
		return -EINVAL;
	if (!is_glob(sys)) {
		if (!is_system(systems, sys)) {
			tsync_set_err(err, errlen, "unknown event '%s' (no system '%s')",
				      spec, sys);
			return -ENOENT;
		}
		ret = add_matching(e, sys, ev, filter);
	} else {
		/* the kernel's systems (ftrace, written by tracers, not among
		 * them): a glob cannot name a path of its own */
		for (int i = 0; systems[i] && ret >= 0; i++) {
			int n = fnmatch(sys, systems[i], 0) ? 0 :
				add_matching(e, systems[i], ev, filter);

			ret = n < 0 ? n : ret + n;
		}
	}
	if (ret == 0) {
		tsync_set_err(err, errlen, "unknown event '%s'", spec);
		return -ENOENT;
	}
	return ret < 0 ? ret : 0;
}

/*
 * A spec without ':': whole systems matching it and events of that name
 * (or glob) in every system, as trace-cmd takes them. Returns 0 or -errno
 * with @err set.
 */
static int resolve_name(struct tracemeta_events *e, char **systems, const char *spec,
			const char *filter, char *err, size_t errlen)
{
	int first = e->n, ret = 0;

	if (!is_glob(spec) && is_system(systems, spec))
		return add_sel(e, strcmp(spec, "ftrace") ? SEL_SYSTEM : SEL_FTRACE, spec, NULL,
			       filter);
	for (int i = 0; is_glob(spec) && systems[i] && !ret; i++)
		if (!fnmatch(spec, systems[i], 0))
			ret = add_sel(e, SEL_SYSTEM, systems[i], NULL, filter);
	if (ret)
		return ret;
	/* an event name alone, as trace-cmd accepts: look in every system */
	ret = add_matching(e, "ftrace", spec, filter);
	for (int i = 0; systems[i] && ret >= 0; i++) {
		int n = add_matching(e, systems[i], spec, filter);

		ret = n < 0 ? n : ret + n;
	}
	if (ret < 0)
		return ret;
	if (e->n == first) {
		tsync_set_err(err, errlen, "unknown event or system '%s'", spec);
		return -ENOENT;
	}
	return 0;
}

/* Resolves one spec into @e: "all", "SYS:EV", "SYS/EV" (trace-cmd takes
 * both), "SYS" or "EV", globs allowed in SYS and EV. Returns 0 or -errno
 * with @err set. */
static int resolve_one(struct tracemeta_events *e, char **systems,
		       const struct tracemeta_event_spec *sp, char *err,
		       size_t errlen)
{
	const char *spec = sp->spec, *sep;
	char sys[256];

	if (!spec || !*spec || strlen(spec) >= sizeof(sys) || strpbrk(spec, " \t\n") ||
	    strstr(spec, "..")) {
		tsync_set_err(err, errlen, "malformed event '%s'", spec ? spec : "");
		return -EINVAL;
	}
	if (!strcmp(spec, "all")) {
		if (sp->filter) {
			tsync_set_err(err, errlen, "a filter needs an event or a "
			       "system, not 'all'");
			return -EINVAL;
		}
		return add_sel(e, SEL_ALL, NULL, NULL, NULL);
	}
	/* one separator, ':' or '/' (not both, never a second one) */
	sep = strpbrk(spec, ":/");
	if (sep && (sep == spec || strpbrk(sep + 1, ":/") || (*sep == '/' && !sep[1]))) {
		tsync_set_err(err, errlen, "malformed event '%s'", spec);
		return -EINVAL;
	}
	if (!sep)
		return resolve_name(e, systems, spec, sp->filter, err, errlen);
	memcpy(sys, spec, (size_t)(sep - spec));
	sys[sep - spec] = '\0';
	return resolve_sys_ev(e, systems, sys, sep + 1, sp->filter, spec, err, errlen);
}

int tracemeta_resolve_events(const struct tracemeta_event_spec *specs, int n,
			     struct tracemeta_events **out, char *err,
			     size_t errlen)
{
	return tracemeta_resolve_events_limited(specs, n, NULL, out, err, errlen);
}

int tracemeta_resolve_events_limited(const struct tracemeta_event_spec *specs, int n,
				     const struct tracemeta_event_limits *lim,
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
		tsync_set_err(err, errlen, "cannot list the kernel's trace events "
		       "(is tracefs mounted?)");
		return -ENOENT;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		tracefs_list_free(systems);
		return -ENOMEM;
	}
	if (lim)
		e->lim = *lim;
	for (int i = 0; i < n && !ret; i++) {
		int first = e->n;

		ret = resolve_one(e, systems, &specs[i], err, errlen);
		if (ret == -ENOENT && specs[i].optional) {
			log_warn("%s (ignored: -i)", err);
			ret = 0;
		}
		for (int j = first; j < e->n; j++)
			e->v[j].negate = specs[i].negate;
	}
	tracefs_list_free(systems);
	if (ret == -E2BIG && e->filter_bytes > e->lim.max_filter_bytes &&
	    e->lim.max_filter_bytes)
		tsync_set_err(err, errlen, "the event selection's filters add up to more "
			      "than %zu bytes", e->lim.max_filter_bytes);
	else if (ret == -E2BIG)
		tsync_set_err(err, errlen, "the event selection expands to more than %d "
			      "events", e->lim.max_selections);
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
	ret = tm_inst_write(inst, rel, s->filter);
	if (!ret)
		return 0;
	/* the filter file now shows the kernel's parse error */
	if (!tm_inst_read(inst, rel, &why, NULL) && why) {
		for (nl = why; *nl; nl++)
			if (*nl == '\n')
				*nl = ' ';
	}
	tsync_set_err(err, errlen, "filter '%s' rejected for '%s': %s%s%s",
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
		if (s->filter && !s->negate) {
			ret = set_filter(inst, s, name, err, errlen);
			if (ret)
				return ret;
		}
		sel_path(s, "enable", rel, sizeof(rel));
		ret = tm_inst_write(inst, rel, s->negate ? "0" : "1");
		if (ret) {
			tsync_set_err(err, errlen, "cannot %s '%s': %s",
				      s->negate ? "disable" : "enable", name, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int tracemeta_disable_events(struct tracefs_instance *inst)
{
	return tm_inst_write(inst, "events/enable", "0");
}
