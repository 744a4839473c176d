// SPDX-License-Identifier: GPL-2.0-or-later
/* Filling the caller's error-message buffer; see errbuf.h. */
#include <stdarg.h>
#include <stdio.h>

#include "common/base/errbuf.h"

/* Formats @fmt into @err if there is one. */
void tsync_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
