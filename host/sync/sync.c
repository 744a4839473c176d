// SPDX-License-Identifier: GPL-2.0-or-later
/* The sync-method interface: the method list, the choice, the dispatch;
 * see sync.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/sync/sync.h"
#include "host/sync/sync_priv.h"

/* Every method, in any order (sync_pick() goes by rank). */
static const struct sync_method_ops *const methods[] = {
	&sync_kvm_ops,
	&sync_probes_ops,
	&sync_external_ops,
};

/* Most methods sync_pick() weighs. */
#define SYNC_MAX_METHODS 8

struct sync_method {
	const struct sync_method_ops *ops;
	void *state;
	struct sync_target t;		/* a copy: its pointees outlive the method */
	char fallback[512];		/* sync_method_fallback() */
};

/* Appends "NAME: why" for method @m to @buf (@len used). */
static void add_why(char *buf, size_t buflen, size_t *len, const char *sep,
		    const struct sync_method_ops *m, const char *why)
{
	if (*len < buflen)
		*len += (size_t)snprintf(buf + *len, buflen - *len, "%s%s: %s", sep, m->name,
					 why[0] ? why : "not usable");
}

/* Picks the best usable method; see sync_priv.h. */
int sync_pick(const struct sync_method_ops *const *list, size_t n, const struct sync_target *t,
	      const struct round_opts *o, const struct sync_method_ops **out, char *err,
	      size_t errlen)
{
	char why[SYNC_MAX_METHODS][256];
	bool asked[SYNC_MAX_METHODS] = { false };	/* not usable, and why */
	bool quiet[SYNC_MAX_METHODS] = { false };	/* -ENODEV: said only if none is */
	const struct sync_method_ops *best = NULL;
	size_t len = 0;
	int nwhy = 0, ret;

	if (n > SYNC_MAX_METHODS)
		n = SYNC_MAX_METHODS;
	for (size_t i = 0; i < n; i++) {
		if (best && list[i]->rank >= best->rank)
			continue;	/* cannot do better: not asked */
		why[i][0] = '\0';
		if (o->method && strcmp(o->method, "auto") && strcmp(o->method, list[i]->name)) {
			snprintf(why[i], sizeof(why[i]), "not asked for (--tsync-method %s)",
				 o->method);
			asked[i] = quiet[i] = true;
			continue;
		}
		ret = list[i]->usable(t, o, why[i], sizeof(why[i]));
		if (!ret) {
			best = list[i];
		} else {
			asked[i] = true;
			quiet[i] = ret == -ENODEV;
		}
	}
	if (errlen)
		err[0] = '\0';
	if (!best)
		len += (size_t)snprintf(err, errlen, "no sync method for %s", t->name);
	for (size_t i = 0; i < n; i++)
		if (asked[i] && (!best || (list[i]->rank < best->rank && !quiet[i])))
			add_why(err, errlen, &len, nwhy++ ? "; " : best ? "" : ": ", list[i],
				why[i]);
	if (!best)
		return -EOPNOTSUPP;
	*out = best;
	return 0;
}

/* Looks a method up by name; see sync.h. */
bool sync_method_named(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i]->name, name))
			return true;
	return false;
}

/* Opens the best usable method; see sync.h. */
int sync_method_open(const struct sync_target *t, const struct round_opts *o,
		     struct sync_method **out, char *err, size_t errlen)
{
	const size_t n = sizeof(methods) / sizeof(methods[0]);
	struct sync_method *m = calloc(1, sizeof(*m));
	int ret;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = sync_pick(methods, n, t, o, &m->ops, m->fallback, sizeof(m->fallback));
	if (ret)
		snprintf(err, errlen, "%s", m->fallback);
	else
		ret = m->ops->open(t, o, &m->state, err, errlen);
	if (ret) {
		free(m);
		return ret;
	}
	m->t = *t;
	*out = m;
	return 0;
}

/*
 * Method @m's source is gone for good (its sample said -ENOENT, @res->error
 * why): switches @m to the best method ranked after it, saying why in its
 * fallback. Returns 0, or -ENOENT when none is usable.
 */
static int fall_back(struct sync_method *m, const struct round_opts *o,
		     const struct sync_result *res)
{
	const struct sync_method_ops *rest[SYNC_MAX_METHODS], *next;
	const size_t n = sizeof(methods) / sizeof(methods[0]);
	char why[512], err[256];	/* the rest's reasons: not said */
	void *state;
	size_t k = 0;

	for (size_t i = 0; i < n && k < SYNC_MAX_METHODS; i++)
		if (methods[i]->rank > m->ops->rank)
			rest[k++] = methods[i];
	if (sync_pick(rest, k, &m->t, o, &next, why, sizeof(why)) ||
	    next->open(&m->t, o, &state, err, sizeof(err)))
		return -ENOENT;
	snprintf(m->fallback, sizeof(m->fallback), "%s: stopped: %.400s", m->ops->name,
		 res->error);
	m->ops->close(m->state);
	m->ops = next;
	m->state = state;
	return 0;
}

/* The method's name and facts; see sync.h. */
const char *sync_method_name(const struct sync_method *m)
{
	return m->ops->name;
}

const char *sync_method_fallback(const struct sync_method *m)
{
	return m->fallback;
}

void sync_method_info(const struct sync_method *m, const struct round_opts *o,
		      struct sync_info *info)
{
	*info = (struct sync_info){ 0 };
	if (m->ops->info)
		m->ops->info(m->state, o, info);
}

/* One sample; see sync.h. */
int sync_method_sample(struct sync_method *m, uint32_t cpu, const struct round_opts *o,
		       struct sync_result *res)
{
	int ret;

	memset(res, 0, sizeof(*res));
	res->cpu = cpu;
	res->host_cpu = -1;
	ret = m->ops->sample(m->state, cpu, o, res);
	if (ret != -ENOENT || fall_back(m, o, res))
		return ret;
	memset(res, 0, sizeof(*res));
	res->cpu = cpu;
	res->host_cpu = -1;
	return m->ops->sample(m->state, cpu, o, res);
}

/* The clock a method of its own clock wants; see sync.h. */
const char *sync_method_clock(const struct sync_target *t, char *why, size_t whylen)
{
	const size_t n = sizeof(methods) / sizeof(methods[0]);
	const struct sync_method_ops *best = NULL;

	if (whylen)
		why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		struct round_opts o = { .clock = methods[i]->clock };

		if (!methods[i]->clock || (best && methods[i]->rank >= best->rank))
			continue;
		if (!methods[i]->usable(t, &o, why, whylen))
			best = methods[i];
	}
	return best ? best->clock : NULL;
}

/* The methods the host can offer a guest; see sync.h. */
uint32_t sync_method_offer(const struct sync_target *t, const struct round_opts *o)
{
	uint32_t offer = 0;
	char why[256];
	uint8_t id;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!tsync_method_parse(methods[i]->name, &id) && id != TSYNC_METHOD_PROBES &&
		    !methods[i]->usable(t, o, why, sizeof(why)))
			offer |= TSYNC_METHOD_BIT(id);
	return offer;
}

/* The changes a method saw; see sync.h. */
void sync_method_changes(const struct sync_method *m, struct sync_changes *c)
{
	*c = (struct sync_changes){ 0 };
	if (m->ops->changes)
		m->ops->changes(m->state, c);
}

/* What a method knows beyond its samples; see sync.h. */
const char *sync_method_detail(const struct sync_method *m)
{
	return m->ops->detail ? m->ops->detail(m->state) : "";
}

/* The interval cap of a method; see sync.h. */
int64_t sync_method_max_interval_ns(const struct sync_method *m)
{
	return m && m->ops->max_interval_ns ? m->ops->max_interval_ns(m->state) : INT64_MAX;
}

/* Closes a method; see sync.h. */
void sync_method_close(struct sync_method *m)
{
	if (!m)
		return;
	m->ops->close(m->state);
	free(m);
}
