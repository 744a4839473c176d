/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's session registry: control sessions by id, each with a
 * reference count so that a data connection can use a session while its
 * control thread ends. Thread-safe. The registry never looks inside a
 * session (agent/conn/control.h owns struct agent_session).
 *
 * Slots: --max-sessions in all, of which trace-cmd sessions may hold at
 * most half (at least one). A trace-cmd session's control connection is
 * silent for the whole recording, so silence cannot cut it (its peer's
 * disappearance is found by the transport, common/net/tcp.c); the cap
 * keeps any number of such sessions, live or abandoned, from taking the
 * slots of tsync's own hosts.
 */
#ifndef TSYNC_AGENT_REGISTRY_H
#define TSYNC_AGENT_REGISTRY_H

#include <stdint.h>

struct agent_registry;
struct agent_session;

/* Creates a registry for at most @max_sessions sessions, ids counting up
 * from @first_id; NULL on ENOMEM. */
struct agent_registry *agent_registry_new(int max_sessions, uint64_t first_id);
/* Frees @r; no session may be registered. */
void agent_registry_free(struct agent_registry *r);

/* Registers @s with a new id (in @id) and one reference, the control
 * thread's. Returns 0, -EBUSY at --max-sessions, -ESHUTDOWN once the
 * agent stops, or -ENOMEM. */
int agent_registry_add(struct agent_registry *r, struct agent_session *s,
		       uint64_t *id);
/* agent_registry_add() for a trace-cmd session: -EBUSY also when
 * trace-cmd sessions hold half of --max-sessions already. */
int agent_registry_add_tcmd(struct agent_registry *r, struct agent_session *s,
			    uint64_t *id);
/* Drops the control thread's reference, waits until no data connection
 * holds one, and unregisters @s. */
void agent_registry_remove(struct agent_registry *r, struct agent_session *s);
/* Finds the session @id and takes a reference; NULL if there is none (or
 * it is being removed). */
struct agent_session *agent_registry_get(struct agent_registry *r, uint64_t id);
/* Drops a reference taken by agent_registry_get(). */
void agent_registry_put(struct agent_registry *r, struct agent_session *s);
/* Refuses new sessions from now on. */
void agent_registry_stop(struct agent_registry *r);

#endif
