/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging with levels, to stderr or syslog.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/base/
 *   log.c, log.h                  logging with levels, to stderr or syslog
 *   errbuf.c, errbuf.h            the caller's error-message buffer
 *   io.c, io.h                    full read/write with deadlines
 *   timeutil.h                    monotonic now, deadlines
 *   cpu.c, cpu.h                  CPU lists, pinning, the real-time class
 *   maxkb.c, maxkb.h              trace-cmd record's -m KB for per-CPU data files
 *   trace_clock.c, trace_clock.h  kernel trace clock names and the trace_clock text
 *   version.h                     tsync's version
 */
#ifndef TSYNC_LOG_H
#define TSYNC_LOG_H

#include <stdbool.h>

enum tsync_log_level {
	TSYNC_LOG_ERR = 0,
	TSYNC_LOG_WARN,
	TSYNC_LOG_INFO,
	TSYNC_LOG_DEBUG,
};

/*
 * The log configuration is the one piece of process-wide state: it is set
 * once by main() before any thread starts (like openlog(3)) and only read
 * afterwards.
 */
void tsync_log_init(const char *ident, enum tsync_log_level level,
		    bool use_syslog);
/* Returns true when messages at @level are emitted (to skip costly
 * formatting of debug output). */
bool tsync_log_enabled(enum tsync_log_level level);
/* Emits one line at @level; a trailing newline is added if missing. */
void tsync_log(enum tsync_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)   tsync_log(TSYNC_LOG_ERR, __VA_ARGS__)
#define log_warn(...)  tsync_log(TSYNC_LOG_WARN, __VA_ARGS__)
#define log_info(...)  tsync_log(TSYNC_LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (tsync_log_enabled(TSYNC_LOG_DEBUG)) \
	tsync_log(TSYNC_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
