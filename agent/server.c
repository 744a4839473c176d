// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-agent's server: listeners, the accept loop, one thread per
 * connection, the session registry, and orderly shutdown.
 *
 * Every connection starts with a HELLO saying what it is (control session or
 * data stream); until it arrives the connection is bounded by the idle
 * timeout, and a connection that says anything invalid is closed with a
 * logged reason while the agent keeps serving the others.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include "agent/agent.h"
#include "agent/hello.h"
#include "agent/record.h"
#include "common/cpu.h"
#include "common/log.h"
#include "common/stamp.h"
#include "common/timeutil.h"

struct agent_conn {
	struct agent *agent;
	int fd;
	struct tsync_peer peer;
	bool established;	/* its HELLO arrived: never evicted */
	bool evicted;		/* shut down to make room, thread still ending */
	struct agent_conn *next;
};

struct agent_sess_ref {
	struct agent_session *s;
	uint64_t id;
	int refs;
	struct agent_sess_ref *next;
};

struct agent {
	struct agent_cfg cfg;
	struct tsync_listener *listeners[AGENT_MAX_LISTEN];
	int nlisteners;
	int ncpus;

	pthread_mutex_t lock;
	pthread_cond_t idle;		/* signalled when nconns drops */
	struct agent_conn *conns;	/* live connections, newest first */
	int nconns;
	int nevicted;			/* of those, shut down and ending */
	int nsessions;
	struct agent_sess_ref *sessions;
	uint64_t next_session_id;
	bool stopping;
};

/* Returns the configuration. */
const struct agent_cfg *agent_config(const struct agent *a)
{
	return &a->cfg;
}

/* Returns the guest CPU count. */
int agent_ncpus(const struct agent *a)
{
	return a->ncpus;
}

/* Creates the agent and its listeners; see agent.h. */
int agent_create(const struct agent_cfg *cfg, struct agent **out)
{
	struct agent *a = calloc(1, sizeof(*a));
	char err[256], epstr[300];
	int ret, n;

	if (!a)
		return -ENOMEM;
	a->cfg = *cfg;
	a->ncpus = tsync_cpu_count();
	a->next_session_id = ((uint64_t)getpid() << 32) | 1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->idle, NULL);

	n = agent_record_cleanup_stale();
	if (n > 0)
		log_info("removed %d stale recording instance(s) left by a killed agent", n);
	n = tsync_stamp_cleanup_stale("tsync-a");
	if (n > 0)
		log_info("removed %d stale tracefs instance(s) left by a killed agent", n);

	for (int i = 0; i < cfg->nlisten; i++) {
		ret = tsync_listen(&cfg->listen[i], 256, &a->listeners[i], err, sizeof(err));
		if (ret) {
			log_err("%s", err);
			goto fail;
		}
		a->nlisteners++;
		log_info("listening on %s (requested %s)",
			 tsync_listener_name(a->listeners[i]),
			 tsync_endpoint_format(&cfg->listen[i], epstr, sizeof(epstr)));
	}
	*out = a;
	return 0;
fail:
	for (int i = 0; i < a->nlisteners; i++)
		tsync_listener_close(a->listeners[i]);
	free(a);
	return ret;
}

/* Prints the readiness lines; see agent.h. */
void agent_announce(const struct agent *a, int fd)
{
	for (int i = 0; i < a->nlisteners; i++)
		dprintf(fd, "listening on %s\n", tsync_listener_name(a->listeners[i]));
}

/* Thread body of one connection: hello, then control or data. */
static void *conn_thread(void *arg)
{
	struct agent_conn *c = arg;
	struct agent *a = c->agent;

	agent_handle_connection(a, c->fd, &c->peer);

	pthread_mutex_lock(&a->lock);
	for (struct agent_conn **pp = &a->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	a->nconns--;
	if (c->evicted)
		a->nevicted--;
	pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
	close(c->fd);
	free(c);
	return NULL;
}

/* Marks the connection on @fd as past its hello; see agent.h. */
void agent_conn_established(struct agent *a, int fd)
{
	pthread_mutex_lock(&a->lock);
	for (struct agent_conn *c = a->conns; c; c = c->next) {
		if (c->fd == fd) {
			c->established = true;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

/*
 * With --max-conns connections open, makes room for a new one by shutting
 * down the oldest connection that has not sent a byte yet (its thread then
 * ends on its own). Connections that idle without a hello are what an
 * attacker can open in bulk; a host sends its hello right away, so it
 * still gets in while they are held. Called with the lock held; returns
 * true if one was evicted.
 */
static bool evict_one(struct agent *a, const struct tsync_peer *newcomer)
{
	struct agent_conn *oldest = NULL;

	/* Oldest first (the list is newest first). One whose bytes are
	 * already waiting is a host whose thread has not run yet: keep it. */
	for (struct agent_conn *c = a->conns; c; c = c->next) {
		int pending = 0;

		if (c->established || c->evicted)
			continue;
		if (ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0)
			continue;
		oldest = c;
	}
	if (!oldest)
		return false;
	oldest->evicted = true;
	a->nevicted++;
	shutdown(oldest->fd, SHUT_RDWR);
	log_warn("%s: dropped: no hello yet and %d connections open (--max-conns); "
		 "room made for %s", oldest->peer.name, a->cfg.max_conns, newcomer->name);
	return true;
}

/* Accepts one connection on @l and starts its thread. */
static void accept_one(struct agent *a, struct tsync_listener *l)
{
	struct agent_conn *c;
	pthread_attr_t attr;
	pthread_t th;
	int fd, ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	fd = tsync_accept(l, &c->peer);
	if (fd < 0) {
		if (fd != -EAGAIN && fd != -ECONNABORTED)
			log_warn("accept: %s", strerror(-fd));
		free(c);
		return;
	}
	c->agent = a;
	c->fd = fd;
	ret = agent_check_peer(a, &c->peer);
	if (ret) {
		close(fd);
		free(c);
		return;
	}

	pthread_mutex_lock(&a->lock);
	if (a->nconns - a->nevicted >= a->cfg.max_conns && !evict_one(a, &c->peer)) {
		pthread_mutex_unlock(&a->lock);
		log_warn("%s: refused: %d connections open (limit --max-conns)",
			 c->peer.name, a->cfg.max_conns);
		close(fd);
		free(c);
		return;
	}
	c->next = a->conns;
	a->conns = c;
	a->nconns++;
	pthread_mutex_unlock(&a->lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	ret = pthread_create(&th, &attr, conn_thread, c);
	pthread_attr_destroy(&attr);
	if (ret) {
		log_err("%s: cannot start a thread: %s", c->peer.name, strerror(ret));
		pthread_mutex_lock(&a->lock);
		for (struct agent_conn **pp = &a->conns; *pp; pp = &(*pp)->next) {
			if (*pp == c) {
				*pp = c->next;
				break;
			}
		}
		a->nconns--;
		pthread_mutex_unlock(&a->lock);
		close(fd);
		free(c);
	}
}

/* The accept loop; see agent.h. */
int agent_run(struct agent *a, int sigfd)
{
	struct pollfd pfd[AGENT_MAX_LISTEN + 1];
	int n = a->nlisteners;

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = tsync_listener_fd(a->listeners[i]),
					  .events = POLLIN };
	pfd[n] = (struct pollfd){ .fd = sigfd, .events = POLLIN };

	for (;;) {
		int ret = poll(pfd, (nfds_t)n + 1, -1);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (pfd[n].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				log_info("signal %u: shutting down", si.ssi_signo);
			return 0;
		}
		/* Drain a burst of connections per wake-up (bounded, so one
		 * listener cannot starve the other or the signalfd): a client
		 * opening connections faster than one per poll would otherwise
		 * overflow the backlog and wait for SYN retransmits. */
		for (int i = 0; i < n; i++) {
			struct pollfd lp = { .fd = pfd[i].fd, .events = POLLIN };

			if (!(pfd[i].revents & POLLIN))
				continue;
			for (int k = 0; k < 64; k++) {
				accept_one(a, a->listeners[i]);
				if (poll(&lp, 1, 0) <= 0 || !(lp.revents & POLLIN))
					break;
			}
		}
	}
}

/* Shuts every connection down, waits for the threads, frees @a. */
void agent_destroy(struct agent *a)
{
	int64_t deadline = tsync_deadline_ms(10000);
	struct timespec ts;

	if (!a)
		return;
	for (int i = 0; i < a->nlisteners; i++)
		tsync_listener_close(a->listeners[i]);

	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	/* shutdown() wakes threads blocked on these sockets; each thread then
	 * cleans up its own session (instances included) and exits. */
	for (struct agent_conn *c = a->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (a->nconns > 0 && tsync_now_ns() < deadline) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&a->idle, &a->lock, &ts);
	}
	if (a->nconns)
		log_warn("%d connection thread(s) did not finish in time", a->nconns);
	pthread_mutex_unlock(&a->lock);
	/* Threads that did not finish still reference @a: leak it then. */
	if (a->nconns)
		return;
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->idle);
	free(a);
}

/* Registers a new control session; see agent.h. */
int agent_session_register(struct agent *a, struct agent_session *s,
			   uint64_t *id)
{
	struct agent_sess_ref *r = calloc(1, sizeof(*r));
	int ret = 0;

	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&a->lock);
	if (a->stopping) {
		ret = -ESHUTDOWN;
	} else if (a->nsessions >= a->cfg.max_sessions) {
		ret = -EBUSY;
	} else {
		r->s = s;
		r->id = a->next_session_id++;
		r->refs = 1;
		r->next = a->sessions;
		a->sessions = r;
		a->nsessions++;
		*id = r->id;
	}
	pthread_mutex_unlock(&a->lock);
	if (ret)
		free(r);
	return ret;
}

/* Unregisters @s and waits until no data connection uses it. */
void agent_session_unregister(struct agent *a, struct agent_session *s)
{
	struct agent_sess_ref *r, **pp;

	pthread_mutex_lock(&a->lock);
	for (r = a->sessions; r && r->s != s; r = r->next)
		;
	if (r) {
		r->refs--;
		while (r->refs > 0)
			pthread_cond_wait(&a->idle, &a->lock);
		/* Look for the link again: sessions registered during the
		 * wait were pushed in front of it. */
		for (pp = &a->sessions; *pp != r; pp = &(*pp)->next)
			;
		*pp = r->next;
		a->nsessions--;
		free(r);
	}
	pthread_mutex_unlock(&a->lock);
}

/* Finds a session by id and takes a reference. */
struct agent_session *agent_session_get(struct agent *a, uint64_t id)
{
	struct agent_session *s = NULL;

	pthread_mutex_lock(&a->lock);
	for (struct agent_sess_ref *r = a->sessions; r; r = r->next) {
		if (r->id == id && r->refs > 0) {
			r->refs++;
			s = r->s;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return s;
}

/* Drops a reference taken by agent_session_get(). */
void agent_session_put(struct agent *a, struct agent_session *s)
{
	pthread_mutex_lock(&a->lock);
	for (struct agent_sess_ref *r = a->sessions; r; r = r->next) {
		if (r->s == s) {
			r->refs--;
			break;
		}
	}
	pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
}
