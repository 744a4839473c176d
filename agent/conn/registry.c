// SPDX-License-Identifier: GPL-2.0-or-later
/* The agent's session registry; see registry.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "agent/conn/registry.h"

struct reg_entry {
	struct agent_session *s;
	uint64_t id;
	int refs;
	bool removing;		/* no new references */
	bool tcmd;		/* a trace-cmd session (its own cap) */
	struct reg_entry *next;
};

struct agent_registry {
	pthread_mutex_t lock;
	pthread_cond_t released;	/* a reference was dropped */
	struct reg_entry *head;
	int n, max;
	int ntcmd, max_tcmd;	/* trace-cmd sessions: at most half of max */
	uint64_t next_id;
	bool stopping;
};

/* Creates a registry; see registry.h. */
struct agent_registry *agent_registry_new(int max_sessions, uint64_t first_id)
{
	struct agent_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->max = max_sessions;
	r->max_tcmd = max_sessions / 2 > 0 ? max_sessions / 2 : 1;
	r->next_id = first_id;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->released, NULL);
	return r;
}

/* Frees an empty registry. */
void agent_registry_free(struct agent_registry *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->released);
	free(r);
}

/* Registers a session of either kind; see registry.h. */
static int add(struct agent_registry *r, struct agent_session *s, bool tcmd, uint64_t *id)
{
	struct reg_entry *e = calloc(1, sizeof(*e));
	int ret = 0;

	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	if (r->stopping) {
		ret = -ESHUTDOWN;
	} else if (r->n >= r->max || (tcmd && r->ntcmd >= r->max_tcmd)) {
		ret = -EBUSY;
	} else {
		e->s = s;
		e->tcmd = tcmd;
		r->ntcmd += tcmd;
		e->id = r->next_id++;
		e->refs = 1;
		e->next = r->head;
		r->head = e;
		r->n++;
		*id = e->id;
	}
	pthread_mutex_unlock(&r->lock);
	if (ret)
		free(e);
	return ret;
}

/* Registers a tsync session; see registry.h. */
int agent_registry_add(struct agent_registry *r, struct agent_session *s, uint64_t *id)
{
	return add(r, s, false, id);
}

/* Registers a trace-cmd session; see registry.h. */
int agent_registry_add_tcmd(struct agent_registry *r, struct agent_session *s,
			    uint64_t *id)
{
	return add(r, s, true, id);
}

/* Unregisters @s once no data connection uses it; see registry.h. */
void agent_registry_remove(struct agent_registry *r, struct agent_session *s)
{
	struct reg_entry *e, **pp;

	pthread_mutex_lock(&r->lock);
	for (e = r->head; e && e->s != s; e = e->next)
		;
	if (e) {
		/* From now on nobody finds it: data connections that keep
		 * arriving cannot hold the session up for good. */
		e->removing = true;
		e->refs--;
		while (e->refs > 0)
			pthread_cond_wait(&r->released, &r->lock);
		/* Look for the link again: sessions registered during the
		 * wait were pushed in front of it. */
		for (pp = &r->head; *pp != e; pp = &(*pp)->next)
			;
		*pp = e->next;
		r->n--;
		r->ntcmd -= e->tcmd;
		free(e);
	}
	pthread_mutex_unlock(&r->lock);
}

/* Finds a session by id and takes a reference. */
struct agent_session *agent_registry_get(struct agent_registry *r, uint64_t id)
{
	struct agent_session *s = NULL;

	pthread_mutex_lock(&r->lock);
	for (struct reg_entry *e = r->head; e; e = e->next) {
		if (e->id == id && !e->removing) {
			e->refs++;
			s = e->s;
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return s;
}

/* Drops a reference taken by agent_registry_get(). */
void agent_registry_put(struct agent_registry *r, struct agent_session *s)
{
	pthread_mutex_lock(&r->lock);
	for (struct reg_entry *e = r->head; e; e = e->next) {
		if (e->s == s) {
			e->refs--;
			break;
		}
	}
	pthread_cond_broadcast(&r->released);
	pthread_mutex_unlock(&r->lock);
}

/* Refuses new sessions; see registry.h. */
void agent_registry_stop(struct agent_registry *r)
{
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_mutex_unlock(&r->lock);
}
