// SPDX-License-Identifier: GPL-2.0-or-later
/* A host's record options and their event selection, bounded and
 * de-duplicated; see evsel.h. */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/rec/evsel.h"
#include "common/cli/recopt.h"

/*
 * Copies the distinct (name, filter, negation) triples of @o's events
 * into @specs; returns how many, or -ENOMEM. @keys holds the hash keys
 * ("name\x1f[!]filter") and is freed by the caller.
 */
static int distinct_specs(const struct tsync_recopt *o, struct tracemeta_event_spec *specs,
			  char **keys)
{
	struct hsearch_data tab = { 0 };
	int count = 0;

	if (!hcreate_r((size_t)o->nevents * 2 + 1, &tab))
		return -ENOMEM;
	for (int i = 0; i < o->nevents; i++) {
		const struct tsync_recopt_event *ev = &o->events[i];
		ENTRY e = { 0 }, *found;

		if (asprintf(&keys[i], "%s\x1f%s%s", ev->name, ev->negate ? "!" : "",
			     ev->filter ? ev->filter : "") < 0) {
			keys[i] = NULL;
			count = -ENOMEM;
			break;
		}
		e.key = keys[i];
		if (hsearch_r(e, FIND, &found, &tab))
			continue;	/* seen already */
		if (!hsearch_r(e, ENTER, &found, &tab)) {
			count = -ENOMEM;
			break;
		}
		specs[count++] = (struct tracemeta_event_spec){
			.spec = ev->name, .filter = ev->filter, .negate = ev->negate,
			.optional = o->ignore_missing };
	}
	hdestroy_r(&tab);
	return count;
}

static const struct tracemeta_event_limits lim = {
	.max_selections = AGENT_MAX_SELECTIONS,
	.max_filter_bytes = AGENT_MAX_FILTER_BYTES,
};

/* The ERROR code of a tracemeta_resolve_events*() result (0: none). */
static int resolve_code(int ret, char *err, size_t errlen)
{
	if (!ret)
		return 0;
	if (!err[0])	/* never an ERROR without a reason */
		snprintf(err, errlen, "cannot resolve the event selection: %s", strerror(-ret));
	switch (ret) {
	case -ENOENT:
		return TSYNC_ERR_NO_EVENT;
	case -EINVAL:
		return TSYNC_ERR_BAD_REQUEST;
	case -E2BIG:
		return TSYNC_ERR_LIMIT;
	default:
		return TSYNC_ERR_INTERNAL;
	}
}

/* Resolves the -e options of a host's record options; see evsel.h. */
int agent_events_resolve(const struct tsync_recopt *o, struct tracemeta_events **out,
			 char *err, size_t errlen)
{
	size_t n = o->nevents ? (size_t)o->nevents : 1;
	struct tracemeta_event_spec *specs = calloc(n, sizeof(*specs));
	char **keys = calloc(n, sizeof(*keys));
	int ret, count;

	err[0] = '\0';
	count = specs && keys ? distinct_specs(o, specs, keys) : -ENOMEM;
	ret = count < 0 ? count :
	      tracemeta_resolve_events_limited(specs, count, &lim, out, err, errlen);
	for (int i = 0; keys && i < o->nevents; i++)
		free(keys[i]);
	free(keys);
	free(specs);
	return resolve_code(ret, err, errlen);
}

/* Parses a host's record option words; see evsel.h. */
int agent_recopt_words(int n, const char *const *words, struct tsync_recopt *o,
		       char *err, size_t errlen)
{
	char **av = calloc((size_t)n + 2, sizeof(*av));
	int ret;

	if (!av)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	av[0] = (char *)"record";	/* skipped by the parser, as a program name */
	for (int i = 0; i < n; i++)
		av[i + 1] = (char *)words[i];
	ret = tsync_recopt_parse(o, TSYNC_RECOPT_AGENT, n + 1, av, NULL, err, errlen);
	free(av);
	return ret < 0 ? -EINVAL : 0;
}

/* Parses the option words of a TRACE_START; see evsel.h. */
int agent_trace_args(const struct tsync_trace_start *rq, struct tsync_recopt *o,
		     struct tsync_trace_start *out, char *err, size_t errlen)
{
	int ret;

	*out = *rq;
	ret = agent_recopt_words((int)rq->nargs, (const char *const *)rq->args, o, err,
				 errlen);
	if (ret)
		return ret == -ENOMEM ? TSYNC_ERR_INTERNAL : TSYNC_ERR_BAD_REQUEST;
	if (o->file_version || o->compression || o->ts_offset) {
		/* only an agent that writes the metadata file (trace-cmd's
		 * protocol) has a format to choose and an OFFSET to write */
		snprintf(err, errlen, "--file-version, --compression and --ts-offset shape "
			 "the files tsync-host writes: give them to tsync-host");
		return TSYNC_ERR_BAD_REQUEST;
	}
	if (o->clock && rq->clock[0] && strcmp(o->clock, rq->clock)) {
		snprintf(err, errlen, "two trace clocks: '%s' and -C %s", rq->clock, o->clock);
		return TSYNC_ERR_BAD_REQUEST;
	}
	if (o->clock)
		snprintf(out->clock, sizeof(out->clock), "%s", o->clock);
	return 0;
}
