// SPDX-License-Identifier: GPL-2.0-or-later
/* The per-host-CPU round locks; see cpu_locks.h. */
#include <errno.h>
#include <stdlib.h>

#include "common/base/cpu.h"
#include "host/cmd/cpu_locks.h"

/* Makes one lock per host CPU; see cpu_locks.h. */
int host_cpu_locks_new(pthread_mutex_t **out)
{
	int n = tsync_cpu_count();
	pthread_mutex_t *l = calloc((size_t)n, sizeof(*l));

	if (!l)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		pthread_mutex_init(&l[i], NULL);
	*out = l;
	return n;
}

/* Destroys and frees the locks; see cpu_locks.h. */
void host_cpu_locks_free(pthread_mutex_t *locks, int n)
{
	for (int i = 0; locks && i < n; i++)
		pthread_mutex_destroy(&locks[i]);
	free(locks);
}
