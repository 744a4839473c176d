/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest side of a sync round (theory of operation in round.c). */
#ifndef TSYNC_AGENT_ROUND_H
#define TSYNC_AGENT_ROUND_H

#include "agent/conn/control.h"

/* A round's result: the host ended the session inside it (BYE or ERROR
 * instead of a probe): clean up and close, nothing sent back. */
#define AGENT_ROUND_HOST_ENDED 1

/* Runs the guest side of one sync round that @start asks for. Returns 0
 * when the session can go on (also after a failed round that was
 * reported), AGENT_ROUND_HOST_ENDED, or -errno when the connection must
 * close. */
int agent_sync_round(struct agent_session *s, const struct tsync_msg *start);

#endif
