// SPDX-License-Identifier: GPL-2.0-or-later
/* One job per guest at once; see par.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "host/cmd/par.h"

/* One job: its index, the shared function and context, its result. */
struct par_job {
	int (*fn)(void *ctx, int i);
	void *ctx;
	int i;
	int ret;
	bool started;		/* has a thread to join */
	pthread_t th;
};

/* Thread body: runs one job. */
static void *par_thread(void *arg)
{
	struct par_job *j = arg;

	j->ret = j->fn(j->ctx, j->i);
	return NULL;
}

/* Runs the jobs and waits for them; see par.h. */
int host_par_run(int n, int (*fn)(void *ctx, int i), void *ctx, int *rets)
{
	struct par_job *jobs;
	int failed = 0;

	if (n < 0 || !fn || !rets)
		return -EINVAL;
	jobs = calloc(n ? (size_t)n : 1, sizeof(*jobs));
	for (int i = 0; i < n; i++) {
		if (!jobs) {	/* no memory for the jobs: one after the other */
			rets[i] = fn(ctx, i);
			continue;
		}
		jobs[i] = (struct par_job){ .fn = fn, .ctx = ctx, .i = i };
		jobs[i].started = !pthread_create(&jobs[i].th, NULL, par_thread, &jobs[i]);
	}
	for (int i = 0; jobs && i < n; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
		else
			jobs[i].ret = fn(ctx, i);	/* no thread: run it here */
		rets[i] = jobs[i].ret;
	}
	for (int i = 0; i < n; i++)
		failed += rets[i] != 0;
	free(jobs);
	return failed;
}
