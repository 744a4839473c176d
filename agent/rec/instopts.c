// SPDX-License-Identifier: GPL-2.0-or-later
/* A host's record options applied to a session's instance; see instopts.h. */
#include <string.h>

#include "agent/rec/instopts.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/instance_opts.h"
#include "common/base/log.h"
#include "common/cli/recopt.h"

/* Applies @o to @ti; see instopts.h. */
int agent_instopts_apply(struct tsync_instance *ti, const struct tsync_recopt *o,
			 const char *peer, struct agent_hide *hide, char *err,
			 size_t errlen)
{
	int ret = tsync_instance_apply_opts(ti, &o->inst, err, errlen);

	if (ret)
		return ret;
	hide->self = !o->no_filter;
	/* event-fork leaves the threads the agent starts later out at once;
	 * it would also make -P follow children, which only -c asks for */
	hide->follow_new = !o->inst.npids || o->inst.follow_children;
	if (hide->self) {
		ret = tsync_instance_hide_self(ti, hide->follow_new);
		if (ret)
			log_warn("%s: the agent's threads stay in %s: %s", peer,
				 tsync_instance_name(ti), strerror(-ret));
	}
	return tsync_instance_apply_tracer(ti, &o->inst, err, errlen);
}

/* Leaves the agent's newer threads out of @ti; see instopts.h. */
void agent_instopts_hide_new(struct tsync_instance *ti, const struct agent_hide *hide,
			     const char *peer)
{
	if (hide->self && tsync_instance_hide_self(ti, hide->follow_new))
		log_warn("%s: new threads of the agent stay in %s", peer,
			 tsync_instance_name(ti));
}
