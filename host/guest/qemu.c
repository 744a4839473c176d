// SPDX-License-Identifier: GPL-2.0-or-later
/* Local QEMU guests from /proc: name, CID, pid and vCPU threads (qemu.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/guest/qemu.h"

#define CMDLINE_MAX (256 * 1024)

/* Reads up to @len bytes of the file @path (a /proc file: several reads).
 * Returns the count or -1. */
static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (got < len && (n = read(fd, buf + got, len - got)) > 0)
		got += (size_t)n;
	close(fd);
	return n < 0 ? -1 : (ssize_t)got;
}

/* Returns the value of key @key ("guest=") in the comma list @opts, copied
 * into @buf, or NULL. QEMU escapes a comma in a value as ",,". */
static const char *opt_value(const char *opts, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p = opts;

	while (p && *p) {
		if (!strncmp(p, key, klen)) {
			size_t n = 0;

			for (p += klen; *p && n + 1 < len; p++) {
				if (*p == ',' && p[1] != ',')
					break;
				if (*p == ',')
					p++;
				buf[n++] = *p;
			}
			buf[n] = '\0';
			return buf;
		}
		/* next key: skip to an unescaped comma */
		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == ',')
				p++;
			p++;
		}
		if (*p)
			p++;
	}
	return NULL;
}

/* -name VALUE: "guest=NAME,..." or "NAME,..." (QEMU's legacy form). */
static void parse_name(const char *v, struct host_qemu_guest *out)
{
	char buf[sizeof(out->name)];

	if (opt_value(v, "guest=", buf, sizeof(buf))) {
		snprintf(out->name, sizeof(out->name), "%s", buf);
		return;
	}
	snprintf(out->name, sizeof(out->name), "%.*s", (int)strcspn(v, ","), v);
	if (strchr(out->name, '='))	/* another key first, no guest= */
		out->name[0] = '\0';
}

int host_qemu_parse_cmdline(const char *buf, size_t len, struct host_qemu_guest *out)
{
	const char *end = buf + len, *w = buf, *base;
	char cid[32];

	if (!len || buf[len - 1] != '\0')
		return -ENOENT;
	base = strrchr(w, '/');
	base = base ? base + 1 : w;
	if (strncmp(base, "qemu", 4) && !strstr(base, "kvm"))
		return -ENOENT;
	out->name[0] = '\0';
	out->cid = 0;
	for (w += strlen(w) + 1; w < end; w += strlen(w) + 1) {
		const char *next = w + strlen(w) + 1;
		const char *val = next < end ? next : NULL;

		/* QEMU takes "-opt" and "--opt" alike */
		if (w[0] == '-' && w[1] == '-')
			w++;
		if (!strcmp(w, "-name") && val) {
			parse_name(val, out);
		} else if (!strcmp(w, "-device") && val && strstr(val, "vhost-vsock") &&
			   opt_value(strchr(val, ',') ? strchr(val, ',') + 1 : "", "guest-cid=",
				     cid, sizeof(cid))) {
			char *e;
			unsigned long v = strtoul(cid, &e, 0);

			if (!*e && v > 2 && v < UINT_MAX)
				out->cid = (unsigned int)v;
		}
	}
	return 0;
}

/* Reads the vCPU threads of @out->pid from @proc/PID/task/TID/comm. */
static void read_vcpus(const char *proc, struct host_qemu_guest *out)
{
	char path[PATH_MAX], comm[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)out->pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char *e;
		long tid = strtol(d->d_name, &e, 10);
		unsigned int cpu;
		char kind[8];
		ssize_t n;

		if (*e || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%ld/comm", proc, (int)out->pid, tid);
		n = read_file(path, comm, sizeof(comm) - 1);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		/* "CPU 3/KVM\n", "CPU 0/TCG\n" */
		if (sscanf(comm, "CPU %u/%7[A-Z]", &cpu, kind) != 2 ||
		    (strcmp(kind, "KVM") && strcmp(kind, "TCG")))
			continue;
		if ((int)cpu + 1 > out->nvcpu)
			out->nvcpu = (int)cpu + 1;
		if (cpu < HOST_QEMU_MAX_VCPUS)
			out->vcpu_tid[cpu] = (pid_t)tid;
	}
	closedir(dir);
}

/* Reads @proc/@pid/cmdline into @g if it is a QEMU guest matching @name
 * and @cid. Returns 1 on a match, else 0. */
static int match_pid(const char *proc, const char *pid, const char *name, unsigned int cid,
		     char *buf, struct host_qemu_guest *g)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/cmdline", proc, pid);
	n = read_file(path, buf, CMDLINE_MAX);
	if (n <= 0 || host_qemu_parse_cmdline(buf, (size_t)n, g))
		return 0;
	if ((name && strcmp(g->name, name)) || (cid && g->cid != cid))
		return 0;
	return 1;
}

int host_qemu_find(const char *proc_root, const char *name, unsigned int cid,
		   struct host_qemu_guest *out)
{
	const char *proc = proc_root ? proc_root : "/proc";
	struct host_qemu_guest g;
	int found = 0, ret;
	struct dirent *d;
	char *buf;
	DIR *dir;

	if ((!name || !*name) && !cid)
		return -EINVAL;
	buf = malloc(CMDLINE_MAX);
	dir = opendir(proc);
	if (!buf || !dir) {
		ret = buf ? -errno : -ENOMEM;
		goto out;
	}
	while ((d = readdir(dir))) {
		char *e;
		long pid = strtol(d->d_name, &e, 10);

		if (*e || pid <= 0 || !match_pid(proc, d->d_name, name, cid, buf, &g))
			continue;
		if (found++)
			break;
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "%s", g.name);
		out->cid = g.cid;
		out->pid = (pid_t)pid;
	}
	ret = found == 1 ? 0 : found ? -EEXIST : -ENOENT;
	if (!ret)
		read_vcpus(proc, out);
out:
	if (dir)
		closedir(dir);
	free(buf);
	return ret;
}
