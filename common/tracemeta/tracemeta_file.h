/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading and writing whole tracefs files, for the other tracemeta*.c
 * files (not part of the API). It calls nothing of the folder, so the
 * calls between the folder's files run one way: tracemeta.c ->
 * tracemeta_stats.c -> tracemeta_file.c, tracemeta_events.c ->
 * tracemeta_file.c.
 */
#ifndef TSYNC_TRACEMETA_FILE_H
#define TSYNC_TRACEMETA_FILE_H

#include <stddef.h>

struct tracefs_instance;

/* Reads a whole file into a malloc'd NUL-terminated buffer. 0 or -errno. */
int tm_read_path(const char *path, char **out, size_t *outlen);
/* Reads @rel of @inst (NULL = top) like tm_read_path(). 0 or -errno. */
int tm_inst_read(struct tracefs_instance *inst, const char *rel, char **out,
		 size_t *len);
/* Writes @str to @rel of @inst (truncating). Returns 0 or -errno. */
int tm_inst_write(struct tracefs_instance *inst, const char *rel,
		  const char *str);

#endif
