// SPDX-License-Identifier: GPL-2.0-or-later
/* Machine-wide tracefs settings with one owner; see global.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <tracefs.h>

#include "common/base/log.h"
#include "common/tracefs/global.h"

/* The step lock is held for microseconds: wait for it this long. */
#define STEP_TRIES 2000
#define STEP_WAIT_US 1000
#define VAL_MAX 64

struct tsync_global {
	char file[VAL_MAX];	/* the top-level tracefs file */
	char seen[VAL_MAX];	/* its value when taken */
	int hold_fd;		/* the file, LOCK_SH while we take part */
};

/* Takes the step lock: returns its fd, or -errno (-ENOENT: no
 * TSYNC_GLOBAL_DIR and it cannot be made). */
static int step_lock(void)
{
	int fd;

	if (mkdir(TSYNC_GLOBAL_DIR, 0700) && errno != EEXIST)
		return -errno;
	fd = open(TSYNC_GLOBAL_DIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < STEP_TRIES; i++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		if (errno != EWOULDBLOCK)
			break;
		usleep(STEP_WAIT_US);
	}
	close(fd);
	return -ETIMEDOUT;
}

/* Reads the first word of top-level @file into @buf. Returns 0 or -errno. */
static int read_value(const char *file, char *buf)
{
	char *txt = tracefs_instance_file_read(NULL, file, NULL);

	if (!txt)
		return errno ? -errno : -EIO;
	snprintf(buf, VAL_MAX, "%.*s", (int)strcspn(txt, " \n"), txt);
	free(txt);
	return 0;
}

/* The path of @file's original in @path. */
static void orig_path(const char *file, char *path, size_t len)
{
	snprintf(path, len, TSYNC_GLOBAL_DIR "/%.*s", VAL_MAX, file);
}

/* Reads @file's original into @buf: 0, or -ENOENT (none kept). */
static int orig_read(const char *file, char *buf)
{
	char path[320];
	FILE *f;
	int ret = -ENOENT;

	orig_path(file, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(buf, VAL_MAX, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		ret = *buf ? 0 : -ENOENT;
	}
	fclose(f);
	return ret;
}

/* Keeps @val as @file's original. Returns 0 or -errno. */
static int orig_write(const char *file, const char *val)
{
	char path[320], tmp[340];
	FILE *f;

	orig_path(file, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%.320s.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", val);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

/* Writes @val back to @file. Returns 0 or -errno (logged). */
static int write_back(const char *file, const char *val)
{
	int ret;

	errno = 0;
	if (tracefs_instance_file_write(NULL, file, val) >= 0)
		return 0;
	ret = errno ? -errno : -EIO;
	log_err("cannot write back %s: %s", file, strerror(-ret));
	return ret;
}

/* Takes part in @file; see global.h. */
int tsync_global_take(const char *file, struct tsync_global **out)
{
	struct tsync_global *g;
	char orig[VAL_MAX];
	int step, ret;

	if (!file || strchr(file, '/') || strlen(file) >= VAL_MAX)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	snprintf(g->file, sizeof(g->file), "%s", file);
	ret = read_value(file, g->seen);
	g->hold_fd = ret ? -1 : tracefs_instance_file_open(NULL, file, O_RDONLY | O_CLOEXEC);
	if (!ret && g->hold_fd < 0)
		ret = errno ? -errno : -ENOENT;
	if (ret) {
		free(g);
		return ret;
	}
	step = step_lock();
	if (step < 0) {		/* no shared record: write back what we saw */
		log_debug("%s: no %s (%s): its value is kept by this recording only",
			  file, TSYNC_GLOBAL_DIR, strerror(-step));
		*out = g;
		return 0;
	}
	/* alone: the value now is the original, unless a killed last
	 * user left its original behind (then the value now is its) */
	if (!flock(g->hold_fd, LOCK_EX | LOCK_NB) && orig_read(file, orig))
		ret = orig_write(file, g->seen);
	if (!ret && flock(g->hold_fd, LOCK_SH))
		ret = -errno;
	close(step);
	if (ret) {
		close(g->hold_fd);
		free(g);
		return ret;
	}
	*out = g;
	return 0;
}

/* Ends a part; see global.h. */
int tsync_global_release(struct tsync_global *g)
{
	char orig[VAL_MAX];
	int step, ret = 0;

	if (!g)
		return 0;
	step = step_lock();
	if (step < 0) {
		ret = write_back(g->file, g->seen);
	} else if (!flock(g->hold_fd, LOCK_EX | LOCK_NB)) {
		/* the last one: the original goes back */
		if (orig_read(g->file, orig))
			snprintf(orig, sizeof(orig), "%s", g->seen);
		ret = write_back(g->file, orig);
		if (!ret) {
			char path[320];

			orig_path(g->file, path, sizeof(path));
			unlink(path);
		}
	}
	close(g->hold_fd);
	if (step >= 0)
		close(step);
	free(g);
	return ret;
}

/* Writes back @file's original if nobody holds it; returns 1 when it
 * did, 0 or -errno. Step lock held. */
static int cleanup_one(const char *file)
{
	char orig[VAL_MAX], path[320];
	int fd, ret;

	if (orig_read(file, orig))
		return 0;
	fd = tracefs_instance_file_open(NULL, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB)) {	/* someone takes part: theirs */
		close(fd);
		return 0;
	}
	ret = write_back(file, orig);
	if (!ret) {
		orig_path(file, path, sizeof(path));
		unlink(path);
		log_info("wrote back %s %s, left changed by a killed tsync", file, orig);
		ret = 1;
	}
	close(fd);
	return ret;
}

/* Writes back what killed users left; see global.h. */
int tsync_global_cleanup(void)
{
	DIR *d = opendir(TSYNC_GLOBAL_DIR);
	struct dirent *e;
	int step, n = 0, r;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	step = step_lock();
	if (step < 0) {
		closedir(d);
		return step;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lock") ||
		    strchr(e->d_name, '.') || strlen(e->d_name) >= VAL_MAX)
			continue;
		r = cleanup_one(e->d_name);
		if (r > 0)
			n++;
	}
	close(step);
	closedir(d);
	return n;
}
