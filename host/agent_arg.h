/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The AGENT[@NAME] arguments of `tsync-host sync` and `tsync-host record`:
 * where an agent listens, and the name that its results and files carry.
 */
#ifndef TSYNC_HOST_AGENT_ARG_H
#define TSYNC_HOST_AGENT_ARG_H

#include <stddef.h>

#include "common/endpoint.h"

/* Most agents one command takes. */
#define HOST_MAX_AGENTS 16

struct host_agent_arg {
	struct tsync_endpoint ep;
	char name[64];
};

/*
 * Parses @arg, AGENT or AGENT@NAME (AGENT as tsync_endpoint_parse() with
 * TSYNC_EP_AGENT_SHORTHAND; NAME of letters, digits, '_', '-' and '.'),
 * into @out; without a NAME the name is "guest@index" (the caller checks
 * that names are unique). Returns 0 or -EINVAL with the reason in @err.
 */
int host_agent_arg_parse(const char *arg, int index, struct host_agent_arg *out,
			 char *err, size_t errlen);

#endif
