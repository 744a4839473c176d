// SPDX-License-Identifier: GPL-2.0-or-later
/* The signals of `tsync-host record`; see rec_signals.h for the phases. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "common/base/timeutil.h"
#include "host/peer/cancel.h"
#include "host/cmd/rec_signals.h"

struct rec_signals {
	pthread_mutex_t lock;
	pthread_t th;
	sigset_t mask;
	int sigfd;
	int quit_fd;		/* eventfd: the watcher ends */
	int stop_fd;		/* eventfd: the recording should end */
	struct host_cancel *hc;
	enum rec_phase phase;
	pid_t child;
	int child_fd;		/* pidfd of COMMAND: its exit wakes the main
				 * thread's wait, not the watcher (-1: SIGCHLD) */
	bool child_done;
	int child_status;
	int stops;		/* SIGINT/SIGTERM received while recording */
	bool aborted;
};

/* Wakes rec_signals_wait(). */
static void wake(struct rec_signals *s)
{
	uint64_t one = 1;

	if (write(s->stop_fd, &one, sizeof(one)) < 0)
		perror("tsync-host record: eventfd");
}

/* Reaps COMMAND if it has exited (lock held); true if it has. */
static bool child_reaped(struct rec_signals *s)
{
	if (s->child > 0 && !s->child_done &&
	    waitpid(s->child, &s->child_status, WNOHANG) == s->child)
		s->child_done = true;
	return s->child_done;
}

/* Aborts the run (lock held). */
static void abort_run(struct rec_signals *s)
{
	if (!s->aborted)
		fprintf(stderr, "tsync-host record: aborting\n");
	s->aborted = true;
	host_cancel_fire(s->hc);
	if (s->child > 0 && !s->child_done)
		kill(s->child, SIGTERM);
	wake(s);
}

/* Handles SIGINT or SIGTERM @sig (lock held). */
static void on_stop_signal(struct rec_signals *s, int sig)
{
	if (s->phase != REC_RECORDING || ++s->stops >= 2) {
		abort_run(s);
		return;
	}
	if (s->child > 0 && !s->child_done) {
		kill(s->child, SIGTERM);
		if (sig == SIGINT) {
			/* stop once the command has gone (its exit) */
			fprintf(stderr, "tsync-host record: stopping (press Ctrl-C again to abort)\n");
			return;
		}
	}
	wake(s);
}

/* Body of the watcher. */
static void *watch(void *arg)
{
	struct rec_signals *s = arg;
	struct pollfd pfd[2] = { { .fd = s->sigfd, .events = POLLIN },
				 { .fd = s->quit_fd, .events = POLLIN } };

	for (;;) {
		struct signalfd_siginfo si;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN) || read(s->sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		pthread_mutex_lock(&s->lock);
		if (si.ssi_signo == SIGCHLD) {
			if (!s->child_done && child_reaped(s))
				wake(s);
		} else {
			on_stop_signal(s, (int)si.ssi_signo);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/* Starts the watcher; see rec_signals.h. */
int rec_signals_start(struct host_cancel *hc, struct rec_signals **out)
{
	struct rec_signals *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->hc = hc;
	s->child = -1;
	s->child_fd = -1;
	sigemptyset(&s->mask);
	sigaddset(&s->mask, SIGINT);
	sigaddset(&s->mask, SIGTERM);
	sigaddset(&s->mask, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &s->mask, NULL);
	/* non-blocking: a signal the watcher's poll saw may be gone by its
	 * read (a SIGCHLD queued before rec_signals_child() stopped blocking
	 * it is then dropped), and a blocked read would never see quit_fd */
	s->sigfd = signalfd(-1, &s->mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->quit_fd = eventfd(0, EFD_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->sigfd < 0 || s->quit_fd < 0 || s->stop_fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = -pthread_create(&s->th, NULL, watch, s);
	if (ret)
		goto fail;
	*out = s;
	return 0;
fail:
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->quit_fd >= 0)
		close(s->quit_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return ret;
}

/* Returns the handled signals; see rec_signals.h. */
const sigset_t *rec_signals_mask(const struct rec_signals *s)
{
	return &s->mask;
}

/* Enters a phase; see rec_signals.h. */
void rec_signals_phase(struct rec_signals *s, enum rec_phase p)
{
	pthread_mutex_lock(&s->lock);
	s->phase = p;
	pthread_mutex_unlock(&s->lock);
}

/* Sets COMMAND's pid; see rec_signals.h. */
void rec_signals_child(struct rec_signals *s, pid_t child)
{
	pthread_mutex_lock(&s->lock);
	s->child = child;
	if (child > 0)
		s->child_fd = pidfd_open(child, 0);
	if (s->child_fd >= 0) {
		/* its exit wakes rec_signals_wait() directly: one wake-up in
		 * the trace, where the watcher's would be two (it, then the
		 * main thread). The kernel sends SIGCHLD to the thread that
		 * forked, and drops it there, unqueued, when that thread does
		 * not block it and its action is the default (ignore): so the
		 * watcher's signalfd is not even woken. */
		sigset_t c;

		sigemptyset(&c);
		sigaddset(&c, SIGCHLD);
		pthread_sigmask(SIG_UNBLOCK, &c, NULL);
	}
	/* it may have exited before its pid was known */
	if (child_reaped(s))
		wake(s);
	pthread_mutex_unlock(&s->lock);
}

/* Waits for the end of the recording; see rec_signals.h. */
bool rec_signals_wait(struct rec_signals *s, int64_t deadline)
{
	struct pollfd pfd[2] = { { .fd = s->stop_fd, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };

	pthread_mutex_lock(&s->lock);
	pfd[1].fd = s->child_fd;	/* -1: ignored by poll */
	pthread_mutex_unlock(&s->lock);
	while (deadline < 0 || tsync_now_ns() < deadline) {
		int ret = poll(pfd, 2, deadline < 0 ? -1 : tsync_remaining_ms(deadline));

		if (ret > 0 && pfd[1].revents) {
			pthread_mutex_lock(&s->lock);
			child_reaped(s);
			pthread_mutex_unlock(&s->lock);
		}
		if (ret > 0)
			break;
		if (ret < 0 && errno != EINTR)
			break;
	}
	return rec_signals_aborted(s);
}

/* Says whether the run was aborted; see rec_signals.h. */
bool rec_signals_aborted(struct rec_signals *s)
{
	bool ret;

	pthread_mutex_lock(&s->lock);
	ret = s->aborted;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Returns COMMAND's wait status; see rec_signals.h. */
int rec_signals_child_status(struct rec_signals *s)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	/* with a pidfd, an exit after the wait is seen only here */
	if (s->child_fd >= 0)
		child_reaped(s);
	ret = s->child_done ? s->child_status : 0;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Stops the watcher and frees it; see rec_signals.h. */
void rec_signals_free(struct rec_signals *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (write(s->quit_fd, &one, sizeof(one)) < 0)
		perror("tsync-host record: eventfd");
	pthread_join(s->th, NULL);
	close(s->sigfd);
	close(s->quit_fd);
	close(s->stop_fd);
	if (s->child_fd >= 0)
		close(s->child_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
