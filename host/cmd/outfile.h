/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names of the files `tsync-host record` writes, as trace-cmd record
 * names them: the host's file is -o FILE (default trace.dat); each
 * guest's is FILE with "-NAME" put before its extension (-o run.dat -A g
 * gives run-g.dat; the default gives trace-NAME.dat). An existing file is
 * overwritten, as trace-cmd does, but atomically and with the run's other
 * files or not at all (common/tracedat/tracedat.h, staged files; record's
 * rec_write_files()), so an interrupted or failed run leaves the previous
 * files whole.
 */
#ifndef TSYNC_HOST_OUTFILE_H
#define TSYNC_HOST_OUTFILE_H

#include <stddef.h>

/*
 * Writes the file name of guest @name for host output @output into @buf:
 * "-NAME" goes before the last '.' of the file name when it has one that
 * is not its first character, else at its end ("run" -> "run-NAME").
 * Unlike trace-cmd 3.1.6, a '.' in a directory name is not taken for the
 * extension. Returns 0, or -ENAMETOOLONG when @len is too small.
 */
int outfile_guest_path(const char *output, const char *name, char *buf, size_t len);

/*
 * Checks that the directory of @output exists and is a writable
 * directory, so that a recording does not run for nothing. Returns 0 or
 * -errno with one line in @err naming the directory and the fix.
 */
int outfile_check_dir(const char *output, char *err, size_t errlen);

#endif
