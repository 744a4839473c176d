/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Teardown steps several unit tests share: removing the temporary tree a
 * test built (a fake /proc, output files) and destroying the tracefs
 * instance it created, so that a failed test leaves nothing behind.
 */
#ifndef TSYNC_TEST_TMP_FIXTURE_H
#define TSYNC_TEST_TMP_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracefs.h>

/* Removes the tree @dir (nothing when @dir is empty): 0, or -1 and a line on stderr. */
static inline int fixture_rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	if (!dir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) == 0)
		return 0;
	fprintf(stderr, "cannot remove %s\n", dir);
	return -1;
}

/* Destroys and frees @inst when there is one. */
static inline void fixture_instance_drop(struct tracefs_instance *inst)
{
	if (!inst)
		return;
	tracefs_instance_destroy(inst);
	tracefs_instance_free(inst);
}

#endif
