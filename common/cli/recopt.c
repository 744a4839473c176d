// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd record options for one scope (see recopt.h), from one table.
 *
 * The table is rec_opts[] (recopt_table.c), one row per option.
 * Storing, freeing, the unset markers, the whole recording's options
 * given after an -A, the words for an agent and the usage's list of
 * instance options are all derived from the rows: an option is one row,
 * one field (here or in common/tracefs/instance_opts.h) and the line
 * that applies it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "common/cli/recopt_priv.h"

/* The usage's last lines: the instance options are the SC_INST rows'. */
#define EPILOGUE_HEAD "Recording stops when COMMAND exits, after --duration, or on SIGINT or " \
		      "SIGTERM; a second SIGINT aborts without waiting for the data. After " \
		      "-A, the options of one instance ("
#define EPILOGUE_TAIL "), --ts-offset, --name and --vm apply to that guest."
#define EPILOGUE_WIDTH 74
#define EPILOGUE_MAX 1024

static const struct tsync_opt_cmd rec_cmd = {
	.prog = "tsync-host record",
	.synopsis = "usage: tsync-host record [HOST OPTIONS] [-A GUEST [GUEST OPTIONS]]...\n"
		    "                         [[--] COMMAND [ARGS]]\n",
	.stop_at_operand = true,
};


/* Appends a copy of @s to @l. Returns 0 or -1 with @err set. */
static int list_add(struct tsync_instance_list *l, const char *s, char *err, size_t errlen)
{
	char **nv = realloc(l->v, sizeof(*nv) * (size_t)(l->n + 1));

	if (!nv || !(nv[l->n] = strdup(s))) {
		if (nv)
			l->v = nv;
		return snprintf(err, errlen, "out of memory"), -1;
	}
	l->v = nv;
	l->n++;
	return 0;
}

/* Replaces *@dst by a copy of @s. Returns 0 or -1 with @err set. */
static int set_str(char **dst, const char *s, char *err, size_t errlen)
{
	char *c = strdup(s);

	if (!c)
		return snprintf(err, errlen, "out of memory"), -1;
	free(*dst);
	*dst = c;
	return 0;
}

/* -e / -a: appends an event (negated after a -v). */
static int add_event(struct parse_ctx *c, const char *name, char *err, size_t errlen)
{
	struct tsync_recopt *r = c->r;
	struct tsync_recopt_event *nv;

	if (!*name || strspn(name, " \t") == strlen(name))
		return snprintf(err, errlen, "empty event name"), -1;
	nv = realloc(r->events, sizeof(*nv) * (size_t)(r->nevents + 1));
	if (!nv)
		return snprintf(err, errlen, "out of memory"), -1;
	r->events = nv;
	nv[r->nevents] = (struct tsync_recopt_event){ .name = strdup(name),
						       .negate = c->negate };
	if (!nv[r->nevents].name)
		return snprintf(err, errlen, "out of memory"), -1;
	r->nevents++;
	return 0;
}

/* -P PID[,PID...]: appends the pids (decimal, >= 0). */
static int add_pids(struct tsync_instance_opts *o, const char *s, char *err, size_t errlen)
{
	const char *p = s;

	do {
		char *end;
		long v;
		int *nv;

		errno = 0;
		v = strtol(p, &end, 10);
		/* 0 is the idle task, as trace-cmd takes it */
		if (errno || end == p || v < 0 || v > INT_MAX || (*end && *end != ','))
			return snprintf(err, errlen, "expected process ids separated by ','"), -1;
		nv = realloc(o->pids, sizeof(*nv) * (size_t)(o->npids + 1));
		if (!nv)
			return snprintf(err, errlen, "out of memory"), -1;
		o->pids = nv;
		nv[o->npids++] = (int)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* Keeps value @v of @ro in its field, as its kind says. */
static int store(struct parse_ctx *c, const struct rec_opt *ro, const struct tsync_opt_val *v,
		 char *err, size_t errlen)
{
	const char *s = ro->fixed ? ro->fixed : v->str;
	void *f = rec_field(c->r, ro);
	char buf[512];

	if (s && ro->check && !(s = ro->check(c, s, buf, sizeof(buf), err, errlen)))
		return -1;
	if (!s && (ro->kind == K_STR || ro->kind == K_LIST || ro->kind == K_PIDS ||
		   ro->kind == K_EVENTS))
		return snprintf(err, errlen, "needs a value"), -1;
	switch (ro->kind) {
	case K_NONE: return 0;
	case K_TRUE: *(bool *)f = true; return 0;
	case K_INT: *(int *)f = (int)v->num; return 0;
	case K_U32: *(uint32_t *)f = (uint32_t)v->num; return 0;
	case K_DOUBLE: *(double *)f = v->dbl; return 0;
	case K_STR: return set_str(f, s, err, errlen);
	case K_LIST: return list_add(f, s, err, errlen);
	case K_PIDS: return add_pids(&c->r->inst, s, err, errlen);
	case K_EVENTS: return add_event(c, s, err, errlen);
	}
	return snprintf(err, errlen, "not handled"), -1;
}

/* Stores one option value into the parse_ctx @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	const struct rec_opt *ro = &rec_opts[o->id - 1];
	struct parse_ctx *c = ctx;
	int ret;

	if (!(rec_scopes[ro->scope].in & c->scope)) {
		if (c->scope == S_HOST)
			return snprintf(err, errlen, "only after an -A (for a guest)"), -1;
		return snprintf(err, errlen, "applies to the whole recording or to tsync-host "
				"itself: give it before the first -A"), -1;
	}
	ret = ro->set ? ro->set(c, ro, v, err, errlen) : store(c, ro, v, err, errlen);
	if (!ret && ro->given && !v->is_default)
		*(bool *)((char *)c->r + ro->given - 1) = true;
	return ret;
}

void tsync_recopt_init(struct tsync_recopt *r)
{
	*r = (struct tsync_recopt){ 0 };
	for (size_t i = 0; i < rec_nopts; i++)
		if (rec_opts[i].kind == K_INT && rec_opts[i].unset)
			*(int *)rec_field(r, &rec_opts[i]) = rec_opts[i].unset;
}

/* True if an earlier row keeps its value in the field of row @i (-a and
 * -e, -T and -O): the field is that row's. */
static bool shared_field(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (rec_opts[j].kind == rec_opts[i].kind && rec_opts[j].off == rec_opts[i].off)
			return true;
	return false;
}

/* Frees the strings of @l. */
static void list_free(struct tsync_instance_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void tsync_recopt_free(struct tsync_recopt *r)
{
	for (size_t i = 0; i < rec_nopts; i++) {
		const struct rec_opt *ro = &rec_opts[i];
		void *f = rec_field(r, ro);

		if (shared_field(i))
			continue;
		if (ro->kind == K_STR)
			free(*(char **)f);
		else if (ro->kind == K_LIST)
			list_free(f);
	}
	/* the kinds with one fixed field each, freed once */
	free(r->inst.pids);
	for (int e = 0; e < r->nevents; e++) {
		free(r->events[e].name);
		free(r->events[e].filter);
	}
	free(r->events);
	tsync_recopt_init(r);
}

/* True if @ro was given in @r (a guest's part: no defaults). */
static bool is_given(const struct tsync_recopt *r, const struct rec_opt *ro)
{
	const void *f = rec_field(r, ro);

	if (ro->given)
		return *(const bool *)((const char *)r + ro->given - 1);
	switch (ro->kind) {
	case K_TRUE: return *(const bool *)f;
	case K_INT: return *(const int *)f != ro->unset;
	case K_U32: return *(const uint32_t *)f != 0;
	case K_DOUBLE: return *(const double *)f != 0;
	case K_STR: return *(char *const *)f != NULL;
	default: return false;
	}
}

void tsync_recopt_take_run(struct tsync_recopt *run, struct tsync_recopt *g)
{
	for (size_t i = 0; i < rec_nopts; i++) {
		const struct rec_opt *ro = &rec_opts[i];
		void *to = rec_field(run, ro), *from = rec_field(g, ro);
		size_t size = ro->kind == K_TRUE ? sizeof(bool) : ro->kind == K_INT ? sizeof(int) :
			      ro->kind == K_U32 ? sizeof(uint32_t) :
			      ro->kind == K_DOUBLE ? sizeof(double) : 0;

		if (!rec_scopes[ro->scope].run || !is_given(g, ro))
			continue;
		if (ro->kind == K_STR) {	/* the old one goes with @g */
			char *t = *(char **)to;

			*(char **)to = *(char **)from;
			*(char **)from = t;
		} else if (size) {
			memcpy(to, from, size);
		}
		if (ro->given)
			*(bool *)((char *)run + ro->given - 1) = true;
	}
}

/* The table for @scope in @buf (of REC_OPTS_MAX + 1): the rows' options with
 * their ids; without defaults but for HOST; in AGENT, -A does not stop
 * the parse and -h is an option like any other (set_not_agent()). */
static void scope_table(enum tsync_recopt_scope scope, struct tsync_opt *buf)
{
	size_t i;

	for (i = 0; i < rec_nopts; i++) {
		buf[i] = rec_opts[i].o;
		buf[i].id = (int)i + 1;
		if (scope == TSYNC_RECOPT_HOST)
			continue;
		buf[i].def = NULL;
		if (scope == TSYNC_RECOPT_AGENT) {
			buf[i].flags &= ~(unsigned int)TSYNC_OPT_STOP;
			if (buf[i].type == TSYNC_OPT_HELP)
				buf[i].type = TSYNC_OPT_FLAG;
		}
	}
	buf[i] = (struct tsync_opt){ 0 };
}

/* Writes the usage's last lines into @buf: the instance options are the
 * SC_INST rows', words wrapped at EPILOGUE_WIDTH. */
static void epilogue(char *buf, size_t len)
{
	char text[EPILOGUE_MAX], name[64];
	size_t off = (size_t)snprintf(text, sizeof(text), "%s", EPILOGUE_HEAD), at = 0, col = 0;
	bool first = true;

	for (size_t i = 0; i < rec_nopts && off < sizeof(text); i++) {
		if (rec_opts[i].scope != SC_INST ||
		    rec_opts[i].o.flags & TSYNC_OPT_UNSUPPORTED)
			continue;
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", first ? "" : " ",
					tsync_opt_name(&rec_opts[i].o, name, sizeof(name)));
		first = false;
	}
	if (off < sizeof(text))
		snprintf(text + off, sizeof(text) - off, "%s", EPILOGUE_TAIL);
	for (const char *w = text; *w && at + 2 < len;) {
		size_t n = strcspn(w, " ");

		if (col && col + 1 + n > EPILOGUE_WIDTH) {
			buf[at++] = '\n';
			col = 0;
		} else if (col) {
			buf[at++] = ' ';
			col++;
		}
		n = n < len - at - 2 ? n : len - at - 2;
		memcpy(buf + at, w, n);
		at += n;
		col += n;
		w += n;
		w += *w == ' ';
	}
	buf[at++] = '\n';
	buf[at] = '\0';
}

int tsync_recopt_parse(struct tsync_recopt *r, enum tsync_recopt_scope scope,
		       int argc, char **argv, FILE *out, char *err, size_t errlen)
{
	struct tsync_opt buf[REC_OPTS_MAX + 1];
	struct parse_ctx c = { .r = r };
	struct tsync_opt_cmd cmd = rec_cmd;
	char epi[EPILOGUE_MAX];
	int ret;

	c.scope = scope == TSYNC_RECOPT_HOST ? S_HOST :
		  scope == TSYNC_RECOPT_GUEST ? S_GUEST : S_AGENT;
	scope_table(scope, buf);
	cmd.opts = buf;
	epilogue(epi, sizeof(epi));
	cmd.epilogue = epi;
	if (scope == TSYNC_RECOPT_AGENT)
		cmd.prog = "record options";
	ret = tsync_opt_parse(&cmd, argc, argv, set_opt, &c, out, err, errlen);
	if (ret == TSYNC_OPT_HELP_SHOWN)
		return TSYNC_RECOPT_HELP;
	if (ret < 0)
		return TSYNC_RECOPT_ERROR;
	if (scope == TSYNC_RECOPT_AGENT && ret < argc) {
		snprintf(err, errlen, "%s: unexpected '%s' (no command runs on a guest)",
			 cmd.prog, argv[ret]);
		return TSYNC_RECOPT_ERROR;
	}
	/* trace-cmd: --module alone filters all of the module's functions */
	if (r->module && !r->inst.funcs.n && !r->inst.notrace_funcs.n &&
	    !r->inst.graph_funcs.n) {
		char fn[512];
		const char *f = rec_check_func(&c, "*", fn, sizeof(fn), err, errlen);

		if (!f || list_add(&r->inst.funcs, f, err, errlen))
			return TSYNC_RECOPT_ERROR;
	}
	if (r->inst.follow_children && !r->inst.npids && !r->filter_command) {
		snprintf(err, errlen, "%s: -c can only be used with -F or -P", cmd.prog);
		return TSYNC_RECOPT_ERROR;
	}
	return ret;
}

/* Appends the words @a [and @b] to the growing argv @v. 0 or -ENOMEM. */
static int argv_add(char ***v, int *n, const char *a, const char *b)
{
	char **nv = realloc(*v, sizeof(**v) * (size_t)(*n + 3));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(a)))
		return -ENOMEM;
	(*n)++;
	if (b) {
		if (!(nv[*n] = strdup(b)))
			return -ENOMEM;
		(*n)++;
	}
	nv[*n] = NULL;
	return 0;
}

/* The -e words of @r: enabled ones with their -f, then -v and the others. */
static int events_argv(const struct tsync_recopt *r, char ***v, int *n)
{
	int ret = 0;

	for (int neg = 0; neg < 2 && !ret; neg++) {
		bool said = false;

		for (int i = 0; i < r->nevents && !ret; i++) {
			const struct tsync_recopt_event *e = &r->events[i];

			if (e->negate != neg)
				continue;
			if (neg && !said) {
				ret = argv_add(v, n, "-v", NULL);
				said = true;
			}
			if (!ret)
				ret = argv_add(v, n, "-e", e->name);
			/* the joined filter, one -f: the parser joins no further */
			if (!ret && e->filter && !neg)
				ret = argv_add(v, n, "-f", e->filter);
		}
	}
	return ret;
}

/* The words that give an agent the value of @ro in @r (none if unset). */
static int opt_argv(const struct tsync_recopt *r, const struct rec_opt *ro, char ***v, int *n)
{
	const void *f = rec_field(r, ro);
	char name[64], num[32];
	int ret = 0;

	tsync_opt_name(&ro->o, name, sizeof(name));
	switch (ro->kind) {
	case K_TRUE:
		return *(const bool *)f ? argv_add(v, n, name, NULL) : 0;
	case K_INT:
		snprintf(num, sizeof(num), "%d", *(const int *)f);
		return *(const int *)f != ro->unset ? argv_add(v, n, name, num) : 0;
	case K_U32:
		snprintf(num, sizeof(num), "%u", *(const uint32_t *)f);
		return *(const uint32_t *)f ? argv_add(v, n, name, num) : 0;
	case K_STR:
		return *(char *const *)f ? argv_add(v, n, name, *(char *const *)f) : 0;
	case K_LIST: {
		const struct tsync_instance_list *l = f;

		for (int i = 0; i < l->n && !ret; i++)
			ret = argv_add(v, n, name, l->v[i]);
		return ret;
	}
	case K_PIDS:
		for (int i = 0; i < r->inst.npids && !ret; i++) {
			snprintf(num, sizeof(num), "%d", r->inst.pids[i]);
			ret = argv_add(v, n, name, num);
		}
		return ret;
	case K_EVENTS:
		return events_argv(r, v, n);
	default:
		return 0;
	}
}

int tsync_recopt_instance_argv(const struct tsync_recopt *r, char ***argv, int *argc)
{
	char **v = NULL;
	int n = 0, ret;

	ret = argv_add(&v, &n, "record", NULL);
	for (size_t i = 0; i < rec_nopts && !ret; i++)
		if (rec_opts[i].pass)
			ret = opt_argv(r, &rec_opts[i], &v, &n);
	if (ret) {
		tsync_recopt_argv_free(v, n);
		return ret;
	}
	*argv = v;
	*argc = n;
	return 0;
}

void tsync_recopt_argv_free(char **argv, int argc)
{
	for (int i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

const char *tsync_recopt_agent_value(int argc, char **argv, int at, int *next)
{
	if (at >= argc || strncmp(argv[at], "-A", 2))
		return NULL;
	if (argv[at][2]) {
		*next = at + 1;
		return argv[at] + 2;
	}
	if (at + 1 >= argc)
		return NULL;
	*next = at + 2;
	return argv[at + 1];
}

void tsync_recopt_usage(FILE *f)
{
	struct tsync_opt buf[REC_OPTS_MAX + 1];
	struct tsync_opt_cmd cmd = rec_cmd;
	char epi[EPILOGUE_MAX];

	scope_table(TSYNC_RECOPT_HOST, buf);
	cmd.opts = buf;
	epilogue(epi, sizeof(epi));
	cmd.epilogue = epi;
	tsync_opt_usage(&cmd, f);
}
