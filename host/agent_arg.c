// SPDX-License-Identifier: GPL-2.0-or-later
/* AGENT[@NAME] arguments; see agent_arg.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/errbuf.h"
#include "host/agent_arg.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."

/* Parses one AGENT[@NAME]; see agent_arg.h. */
int host_agent_arg_parse(const char *arg, int index, struct host_agent_arg *out,
			 char *err, size_t errlen)
{
	const char *at = strrchr(arg, '@');
	char ep[256], why[256];
	size_t eplen = at ? (size_t)(at - arg) : strlen(arg);

	if (eplen >= sizeof(ep)) {
		tsync_set_err(err, errlen, "agent address too long: %.40s...", arg);
		return -EINVAL;
	}
	memcpy(ep, arg, eplen);
	ep[eplen] = '\0';
	if (at) {
		if (!at[1] || strlen(at + 1) >= sizeof(out->name) ||
		    strspn(at + 1, NAME_CHARS) != strlen(at + 1)) {
			tsync_set_err(err, errlen, "invalid guest name '%s' (letters, digits, _ - .)",
				      at + 1);
			return -EINVAL;
		}
		snprintf(out->name, sizeof(out->name), "%s", at + 1);
	} else {
		snprintf(out->name, sizeof(out->name), "guest%d", index);
	}
	if (tsync_endpoint_parse(ep, TSYNC_EP_AGENT_SHORTHAND, &out->ep, why, sizeof(why))) {
		tsync_set_err(err, errlen, "%s", why);
		return -EINVAL;
	}
	return 0;
}
