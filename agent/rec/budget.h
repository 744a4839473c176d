/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's total budget of trace buffer memory (--max-trace-mb): what
 * every session's recording instance may take together, so that many
 * sessions cannot take the guest's memory even when each stays within
 * --max-buffer-kb. Thread-safe.
 */
#ifndef TSYNC_AGENT_BUDGET_H
#define TSYNC_AGENT_BUDGET_H

#include <stdint.h>

struct agent_budget;

/* Creates a budget of @total_kb KiB; NULL on ENOMEM. */
struct agent_budget *agent_budget_new(uint64_t total_kb);
/* Frees @b (NULL is fine). */
void agent_budget_free(struct agent_budget *b);
/* Sets @kb aside. Returns 0, or -ENOSPC with what is still free in
 * *@free_kb (if not NULL). */
int agent_budget_reserve(struct agent_budget *b, uint64_t kb, uint64_t *free_kb);
/* Gives back @kb set aside by agent_budget_reserve(). */
void agent_budget_release(struct agent_budget *b, uint64_t kb);
/* Returns the budget's size in KiB. */
uint64_t agent_budget_total(const struct agent_budget *b);

#endif
