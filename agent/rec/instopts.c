// SPDX-License-Identifier: GPL-2.0-or-later
/* The agent's own threads left out of a session's instance; see instopts.h. */
#include "agent/rec/instopts.h"
#include "common/base/log.h"
#include "common/tracefs/instance.h"

/* Leaves the agent's newer threads out of @ti; see instopts.h. */
void agent_instopts_hide_new(struct tsync_instance *ti, const struct agent_hide *hide,
			     const char *peer)
{
	if (hide->self && tsync_instance_hide_self(ti, hide->follow_new))
		log_warn("%s: new threads of the agent stay in %s", peer,
			 tsync_instance_name(ti));
}
