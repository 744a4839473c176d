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
			/* stop once the command has gone (SIGCHLD) */
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
			if (s->child > 0 && !s->child_done &&
			    waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
				s->child_done = true;
				wake(s);
			}
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
	sigemptyset(&s->mask);
	sigaddset(&s->mask, SIGINT);
	sigaddset(&s->mask, SIGTERM);
	sigaddset(&s->mask, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &s->mask, NULL);
	s->sigfd = signalfd(-1, &s->mask, SFD_CLOEXEC);
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
	pthread_mutex_unlock(&s->lock);
	/* it may have exited before its pid was known */
	if (child > 0)
		kill(getpid(), SIGCHLD);
}

/* Waits for the end of the recording; see rec_signals.h. */
bool rec_signals_wait(struct rec_signals *s, int64_t deadline)
{
	struct pollfd pfd = { .fd = s->stop_fd, .events = POLLIN };

	while (deadline < 0 || tsync_now_ns() < deadline) {
		int ret = poll(&pfd, 1, deadline < 0 ? -1 : tsync_remaining_ms(deadline));

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
	pthread_mutex_destroy(&s->lock);
	free(s);
}
