// SPDX-License-Identifier: GPL-2.0-or-later
/* The agent's total trace buffer budget; see budget.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "agent/rec/budget.h"

struct agent_budget {
	pthread_mutex_t lock;
	uint64_t total_kb, used_kb;
};

/* Creates a budget; see budget.h. */
struct agent_budget *agent_budget_new(uint64_t total_kb)
{
	struct agent_budget *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->total_kb = total_kb;
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

/* Frees @b. */
void agent_budget_free(struct agent_budget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* Sets @kb aside if it fits; see budget.h. */
int agent_budget_reserve(struct agent_budget *b, uint64_t kb, uint64_t *free_kb)
{
	int ret = 0;

	pthread_mutex_lock(&b->lock);
	if (kb > b->total_kb - b->used_kb) {
		ret = -ENOSPC;
		if (free_kb)
			*free_kb = b->total_kb - b->used_kb;
	} else {
		b->used_kb += kb;
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/* Gives @kb back. */
void agent_budget_release(struct agent_budget *b, uint64_t kb)
{
	pthread_mutex_lock(&b->lock);
	b->used_kb -= kb <= b->used_kb ? kb : b->used_kb;
	pthread_mutex_unlock(&b->lock);
}

/* Returns the budget's size. */
uint64_t agent_budget_total(const struct agent_budget *b)
{
	return b->total_kb;
}
