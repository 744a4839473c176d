/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filling the caller's error-message buffer that many functions take. */
#ifndef TSYNC_ERRBUF_H
#define TSYNC_ERRBUF_H

#include <stddef.h>

/* Formats @fmt into @err (@errlen bytes) if @err is not NULL. */
void tsync_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
