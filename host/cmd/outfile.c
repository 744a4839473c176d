// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output file names and the output directory check (see outfile.h).
 */
#include "host/cmd/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_guest_path(const char *output, const char *name, char *buf, size_t len)
{
	const char *slash = strrchr(output, '/');
	const char *base = slash ? slash + 1 : output;
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - output) : strlen(output);
	int n;

	n = snprintf(buf, len, "%.*s-%s%s", (int)stem, output, name, output + stem);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int outfile_check_dir(const char *output, char *err, size_t errlen)
{
	const char *slash = strrchr(output, '/');
	char dir[4096];
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == output)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - output), output);
	if (stat(dir, &st)) {
		int e = errno;

		if (e == ENOENT)
			snprintf(err, errlen, "-o %s: directory %s does not exist "
				 "(create it: mkdir -p %s)", output, dir, dir);
		else
			snprintf(err, errlen, "-o %s: directory %s: %s", output, dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "-o %s: %s is not a directory (choose another -o)",
			 output, dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		int e = errno;

		snprintf(err, errlen, "-o %s: cannot write in directory %s: %s "
			 "(choose another -o)", output, dir, strerror(e));
		return -e;
	}
	return 0;
}
