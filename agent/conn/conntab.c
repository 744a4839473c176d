// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's table of open connections.
 *
 * Eviction policy: with --max-conns connections open, a new one gets in by
 * shutting down the oldest connection that has not authenticated (no
 * HELLO yet; on an agent with --key-file no valid AUTH yet; for a data
 * stream, no valid session secret yet) and has no bytes waiting. Such connections are what an attacker can open in
 * bulk at no cost; a host authenticates within a round trip, so it still
 * gets in while they are held.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "agent/conn/conntab.h"
#include "agent/conn/ratelimit.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"

struct agent_conn {
	int fd;
	struct tsync_peer peer;
	bool authenticated;	/* never evicted */
	bool evicted;		/* shut down to make room, thread still ending */
	struct agent_conn *next;
};

struct agent_conntab {
	pthread_mutex_t lock;
	pthread_cond_t empty;		/* signalled when n drops (MONOTONIC) */
	struct agent_conn *head;	/* newest first */
	int n;
	int nevicted;			/* of those, shut down and ending */
	int max;
	bool stopping;
	struct agent_ratelimit *rl;
};

/* Creates a table; see conntab.h. */
struct agent_conntab *agent_conntab_new(int max_conns, struct agent_ratelimit *rl)
{
	struct agent_conntab *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t)
		return NULL;
	t->max = max_conns;
	t->rl = rl;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->empty, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

/* Frees an empty table. */
void agent_conntab_free(struct agent_conntab *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->empty);
	free(t);
}

/* Returns @c's socket. */
int agent_conn_fd(const struct agent_conn *c)
{
	return c->fd;
}

/* Returns @c's peer. */
const struct tsync_peer *agent_conn_peer(const struct agent_conn *c)
{
	return &c->peer;
}

/* Shuts down the oldest evictable connection (see the top of this file)
 * to make room for @newcomer. Lock held; returns true if one was. */
static bool evict_one(struct agent_conntab *t, const struct tsync_peer *newcomer)
{
	struct agent_conn *oldest = NULL;

	/* Oldest first (the list is newest first). One whose bytes are
	 * already waiting is a host whose thread has not run yet: keep it. */
	for (struct agent_conn *c = t->head; c; c = c->next) {
		int pending = 0;

		if (c->authenticated || c->evicted)
			continue;
		if (ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0)
			continue;
		oldest = c;
	}
	if (!oldest)
		return false;
	oldest->evicted = true;
	t->nevicted++;
	shutdown(oldest->fd, SHUT_RDWR);
	agent_rl_warn(t->rl, AGENT_RL_CONNS, "%s: dropped: not authenticated and %d "
		      "connections open (--max-conns); room made for %s",
		      oldest->peer.name, t->max, newcomer->name);
	return true;
}

/* Adds a connection; see conntab.h. */
int agent_conntab_add(struct agent_conntab *t, int fd,
		      const struct tsync_peer *peer, struct agent_conn **out)
{
	struct agent_conn *c = calloc(1, sizeof(*c));
	int ret = 0;

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	c->peer = *peer;
	pthread_mutex_lock(&t->lock);
	if (t->stopping) {
		ret = -ESHUTDOWN;
	} else if (t->n - t->nevicted >= t->max && !evict_one(t, peer)) {
		agent_rl_warn(t->rl, AGENT_RL_CONNS, "%s: refused: %d connections open "
			      "(limit --max-conns)", peer->name, t->max);
		ret = -EBUSY;
	} else {
		c->next = t->head;
		t->head = c;
		t->n++;
	}
	pthread_mutex_unlock(&t->lock);
	if (ret) {
		free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* Removes, closes and frees @c. */
void agent_conntab_remove(struct agent_conntab *t, struct agent_conn *c)
{
	pthread_mutex_lock(&t->lock);
	for (struct agent_conn **pp = &t->head; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	t->n--;
	if (c->evicted)
		t->nevicted--;
	pthread_cond_broadcast(&t->empty);
	pthread_mutex_unlock(&t->lock);
	close(c->fd);
	free(c);
}

/* Marks @c authenticated; see conntab.h. */
void agent_conntab_authenticated(struct agent_conntab *t, struct agent_conn *c)
{
	pthread_mutex_lock(&t->lock);
	c->authenticated = true;
	pthread_mutex_unlock(&t->lock);
}

/* Shuts every connection down; see conntab.h. */
void agent_conntab_shutdown(struct agent_conntab *t)
{
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	/* shutdown() wakes threads blocked on these sockets; each thread then
	 * cleans up its own session (instances included) and exits. */
	for (struct agent_conn *c = t->head; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&t->lock);
}

/* Waits for the table to empty; see conntab.h. */
int agent_conntab_wait_empty(struct agent_conntab *t, int64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};
	int n;

	pthread_mutex_lock(&t->lock);
	while (t->n > 0)
		if (pthread_cond_timedwait(&t->empty, &t->lock, &ts) == ETIMEDOUT)
			break;
	n = t->n;
	pthread_mutex_unlock(&t->lock);
	return n;
}
