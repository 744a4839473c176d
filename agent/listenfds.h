/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's socket activation, the environment side (sd_listen_fds(3)):
 * LISTEN_PID names the process the sockets are for, LISTEN_FDS how many
 * there are from fd 3 on, LISTEN_FDNAMES (optional) their names,
 * colon-separated. Pure: main() reads and unsets the variables, and the
 * transport layer checks each fd (tsync_listener_adopt).
 *
 * Written by hand rather than with libsystemd's sd_listen_fds(): the
 * protocol is these three variables, and the static agent (`make
 * static-agent`) links Debian's .a files, among which is no libsystemd.a.
 */
#ifndef TSYNC_AGENT_LISTENFDS_H
#define TSYNC_AGENT_LISTENFDS_H

#include <stddef.h>
#include <sys/types.h>

#include "agent/conn/config.h"

/* The first inherited fd (SD_LISTEN_FDS_START). */
#define AGENT_LISTEN_FDS_START 3
/* A name is kept up to this many bytes (systemd allows 255; they are only
 * shown in logs). */
#define AGENT_FDNAME_MAX 64

/* What socket activation passed. */
struct agent_listen_fds {
	int n;					/* 0: not socket-activated */
	char names[AGENT_MAX_LISTEN][AGENT_FDNAME_MAX];	/* "" where unnamed */
};

/*
 * Parses the values of LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES (@pid,
 * @fds, @names; NULL where unset) for process @self into @out. Neither
 * LISTEN_PID nor LISTEN_FDS set: not socket-activated, 0 with @out->n 0.
 * Otherwise both must be there and right: LISTEN_PID this process,
 * LISTEN_FDS 1 to AGENT_MAX_LISTEN, LISTEN_FDNAMES (if set) one name per
 * fd. Returns 0, or -EINVAL with a one-line reason in @err.
 */
int agent_listen_fds_parse(const char *pid, const char *fds, const char *names, pid_t self,
			   struct agent_listen_fds *out, char *err, size_t errlen);

#endif
