/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsync-agent internals: the server context shared by its modules. */
#ifndef TSYNC_AGENT_H
#define TSYNC_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/acl.h"
#include "common/auth.h"
#include "common/endpoint.h"
#include "common/transport.h"

#define AGENT_MAX_LISTEN 8

/* Limits and policy, from the command line. */
struct agent_cfg {
	struct tsync_endpoint listen[AGENT_MAX_LISTEN];
	int nlisten;
	int max_sessions;	/* concurrent control sessions */
	int max_conns;		/* concurrent connections of any kind */
	int idle_timeout_ms;	/* a peer that sends nothing for this long */
	int io_timeout_ms;	/* deadline of one message once it started */
	uint32_t max_probes;	/* per sync round */
	uint32_t max_buffer_kb;	/* per-CPU buffer a host may ask for */
	uint32_t max_msg_kb;	/* largest message payload a host may send */
	struct tsync_acl *acl;	/* who may connect (common/acl.h); owned by main */
	struct tsync_key *key;	/* --key-file (common/auth.h) or NULL; owned by main */
	bool daemonize;
	const char *pidfile;
	int verbose;
};

struct agent;
struct agent_session;

/* Creates the agent: listens on every configured endpoint, removes stale
 * instances. Returns 0 and the agent in @out, or -errno (logged). */
int agent_create(const struct agent_cfg *cfg, struct agent **out);
/* Prints one "listening on ENDPOINT" line per listener to @fd (readiness
 * signal for scripts and tests). */
void agent_announce(const struct agent *a, int fd);
/* Serves until SIGTERM/SIGINT (delivered through @sigfd, a signalfd).
 * Returns 0 or -errno. */
int agent_run(struct agent *a, int sigfd);
/* Stops every connection, waits for their threads, frees @a. */
void agent_destroy(struct agent *a);

/* Marks the connection on @fd as past its HELLO: it is no longer evicted
 * to make room when --max-conns connections are open. */
void agent_conn_established(struct agent *a, int fd);

/* Returns the agent's configuration. */
const struct agent_cfg *agent_config(const struct agent *a);
/* Returns the guest's CPU count. */
int agent_ncpus(const struct agent *a);

/*
 * Session registry (agent/session.c). A control connection owns a session;
 * data connections find theirs by id and secret.
 */
/* Serves one control connection on @fd until it ends; closes nothing. */
void agent_serve_control(struct agent *a, int fd, const struct tsync_peer *peer,
			 uint16_t version);
/*
 * Data connections (agent/record.c), in two steps around HELLO_REPLY.
 * agent_data_claim() checks a data hello (session @session_id exists,
 * @secret matches, a trace is active, @cpu exists and has no stream yet)
 * and claims the CPU; it returns the session with a reference taken, or
 * NULL after logging the reason and sending ERROR on @fd.
 */
struct agent_session *agent_data_claim(struct agent *a, int fd,
				       const struct tsync_peer *peer,
				       uint64_t session_id, uint32_t cpu,
				       const uint8_t *secret);
/* Streams claimed @cpu of @s into @fd until the session stops the trace
 * (then EOF), releases the claim and the reference. @replied false (the
 * HELLO_REPLY could not be sent): only releases. */
void agent_serve_data(struct agent *a, int fd, const struct tsync_peer *peer,
		      struct agent_session *s, uint32_t cpu, bool replied);

/* Registry primitives used by session.c (implemented in server.c). */
int agent_session_register(struct agent *a, struct agent_session *s,
			   uint64_t *id);
void agent_session_unregister(struct agent *a, struct agent_session *s);
/* Finds the session @id, takes a reference; NULL if none. */
struct agent_session *agent_session_get(struct agent *a, uint64_t id);
void agent_session_put(struct agent *a, struct agent_session *s);

#endif
