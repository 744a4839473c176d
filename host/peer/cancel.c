// SPDX-License-Identifier: GPL-2.0-or-later
/* Cancelling the host's connections from another thread; see cancel.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "host/peer/cancel.h"

struct host_cancel {
	pthread_mutex_t lock;
	bool fired;
	int *fds;
	size_t n, cap;
};

/* Creates a canceller; see cancel.h. */
struct host_cancel *host_cancel_new(void)
{
	struct host_cancel *hc = calloc(1, sizeof(*hc));

	if (hc)
		pthread_mutex_init(&hc->lock, NULL);
	return hc;
}

/* Frees a canceller; see cancel.h. */
void host_cancel_free(struct host_cancel *hc)
{
	if (!hc)
		return;
	pthread_mutex_destroy(&hc->lock);
	free(hc->fds);
	free(hc);
}

/* Registers a connection; see cancel.h. */
int host_cancel_add(struct host_cancel *hc, int fd)
{
	int ret = 0;

	if (!hc)
		return 0;
	pthread_mutex_lock(&hc->lock);
	if (hc->fired) {
		shutdown(fd, SHUT_RDWR);
		ret = -ECANCELED;
	} else if (hc->n == hc->cap) {
		size_t cap = hc->cap ? hc->cap * 2 : 16;
		int *p = realloc(hc->fds, cap * sizeof(*p));

		if (p) {
			hc->fds = p;
			hc->cap = cap;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		hc->fds[hc->n++] = fd;
	pthread_mutex_unlock(&hc->lock);
	return ret;
}

/* Unregisters a connection; see cancel.h. */
void host_cancel_remove(struct host_cancel *hc, int fd)
{
	if (!hc)
		return;
	pthread_mutex_lock(&hc->lock);
	for (size_t i = 0; i < hc->n; i++) {
		if (hc->fds[i] == fd) {
			hc->fds[i] = hc->fds[--hc->n];
			break;
		}
	}
	pthread_mutex_unlock(&hc->lock);
}

/* Shuts every registered connection down; see cancel.h. */
void host_cancel_fire(struct host_cancel *hc)
{
	if (!hc)
		return;
	pthread_mutex_lock(&hc->lock);
	hc->fired = true;
	for (size_t i = 0; i < hc->n; i++)
		shutdown(hc->fds[i], SHUT_RDWR);
	pthread_mutex_unlock(&hc->lock);
}

/* Says whether the canceller fired; see cancel.h. */
bool host_cancel_fired(struct host_cancel *hc)
{
	bool fired;

	if (!hc)
		return false;
	pthread_mutex_lock(&hc->lock);
	fired = hc->fired;
	pthread_mutex_unlock(&hc->lock);
	return fired;
}
