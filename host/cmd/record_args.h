/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command line of `tsync-host record`: the host's part and each -A's
 * part parsed by common/recopt, the guests' agents read by host/agent_arg,
 * the whole recording's options gathered, into one configuration.
 */
#ifndef TSYNC_HOST_RECORD_ARGS_H
#define TSYNC_HOST_RECORD_ARGS_H

#include "common/cli/recopt.h"
#include "common/stamp/stamp.h"
#include "common/tracedat/tracedat.h"
#include "common/tracemeta/tracemeta.h"
#include "common/tracemeta/tsc2nsec.h"
#include "host/guest/agent_arg.h"
#include "host/guest/guest.h"

#define MAX_GUESTS HOST_MAX_AGENTS
#define MAX_EVENTS 256

struct rec_cfg {
	struct tsync_recopt opt;	/* the host's part and the whole run's */
	enum tsync_stamp_source source;
	int stamp_forced;
	int verbose;			/* TSYNC_LOG_* */
	/* host */
	struct tracemeta_event_spec events[MAX_EVENTS];
	int nevents;
	struct tracedat_opts run_opts;	/* what every file written shares */
	struct tracedat_tsc2nsec tsc2nsec;
	char clock_why[128];		/* why the clock was chosen, when -C was not
					 * given and it is not the default */
	/* guests */
	struct guest guests[MAX_GUESTS];
	struct tsync_recopt gopt[MAX_GUESTS];	/* each guest's part */
	int nguests;
	char **command;
};

/* Parses @argv (argv[0] "record") into @cfg (zeroed); prints the reason
 * and exits 2 on a usage error, 0 after --help. */
void rec_parse_args(int argc, char **argv, struct rec_cfg *cfg);

#endif
