/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel trace clocks: the one parser of the tracefs trace_clock text
 * ("local [global] counter ...", the selected clock in brackets) and the
 * one table of what tsync knows about a clock beyond its name (the POSIX
 * clock user space reads it with, whether it is the TSC). Pure: no I/O;
 * common/tracefs/instance.h reads the text from tracefs.
 */
#ifndef TSYNC_TRACE_CLOCK_H
#define TSYNC_TRACE_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Longest clock name kept (with NUL); longer words are not clock names. */
#define TSYNC_TRACE_CLOCK_NAME_MAX 32

/*
 * Splits trace_clock text @text into at most @max names (brackets
 * removed) in @names. Sets *@selected (may be NULL) to the index of the
 * bracketed one, or -1. Words too long for a name are skipped. Returns
 * the number of names (0 for NULL text).
 */
int tsync_trace_clock_list(const char *text,
			   char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
			   int *selected);

/*
 * Copies the selected clock of trace_clock text @text into @out. Returns
 * 0, or -EINVAL when there is none, it is empty or does not fit @outlen.
 */
int tsync_trace_clock_selected(const char *text, char *out, size_t outlen);

/* Returns true if trace_clock text @text offers clock @name. */
bool tsync_trace_clock_offers(const char *text, const char *name);

/*
 * Finds the POSIX clock user space reads trace clock @name with (mono,
 * mono_raw, boot, tai). Returns 0 with *@clk, or -EINVAL.
 */
int tsync_trace_clock_posix(const char *name, clockid_t *clk);

/*
 * Lists into @names (at most @max) the trace clocks user space can read
 * without tracefs: the POSIX ones of tsync_trace_clock_posix() and, with
 * @tsc, x86-tsc. Returns the count.
 */
int tsync_trace_clock_user_list(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
				bool tsc);

/* Returns true if trace clock @name counts TSC cycles (x86-tsc). */
bool tsync_trace_clock_is_tsc(const char *name);
/* Returns true if @name can be a trace clock's name (what -C takes):
 * not empty, shorter than TSYNC_TRACE_CLOCK_NAME_MAX, no blank or '/'. */
bool tsync_trace_clock_name_ok(const char *name);

#endif
