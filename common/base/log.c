// SPDX-License-Identifier: GPL-2.0-or-later
/* Logging with levels, to stderr or syslog. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"

static struct {
	const char *ident;
	enum tsync_log_level level;
	bool syslog;
} log_cfg = { "tsync", TSYNC_LOG_INFO, false };

/* Sets the program name, the threshold and the destination. */
void tsync_log_init(const char *ident, enum tsync_log_level level,
		    bool use_syslog)
{
	log_cfg.ident = ident;
	log_cfg.level = level;
	log_cfg.syslog = use_syslog;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

/* Returns true if @level passes the configured threshold. */
bool tsync_log_enabled(enum tsync_log_level level)
{
	return level <= log_cfg.level;
}

/* Formats and emits one log line, in one write so threads don't interleave. */
void tsync_log(enum tsync_log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[1024];
	char line[1200];
	va_list ap;
	size_t n;
	int len;

	if (!tsync_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';

	if (log_cfg.syslog) {
		syslog(prio[level], "%s", msg);
		return;
	}
	len = snprintf(line, sizeof(line), "%s: %s%s%s\n", log_cfg.ident,
		       level == TSYNC_LOG_INFO ? "" : names[level],
		       level == TSYNC_LOG_INFO ? "" : ": ", msg);
	if (len > (int)sizeof(line))
		len = sizeof(line);
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}
