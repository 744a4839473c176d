// SPDX-License-Identifier: GPL-2.0-or-later
/* KVM's per-vCPU TSC files in debugfs: find, read, check (kvm_debugfs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <tracefs.h>

#include "common/base/errbuf.h"
#include "host/kvm/kvm_debugfs.h"

#define KVM_FILE_OFFSET	"tsc-offset"
#define KVM_FILE_RATIO	"tsc-scaling-ratio"
#define KVM_FILE_FRAC	"tsc-scaling-ratio-frac-bits"
#define KVM_FILE_NESTED	"guest_mode"
#define KVM_FILE_PID	"pid"

struct kvm_debugfs {
	char dir[PATH_MAX];	/* DEBUGFS/kvm/PID-FD */
	int ncpu;
	int *vcpu;		/* [guest CPU]: its vcpu number, ascending */
};

/* Writes the path of vCPU @vcpu's file @name (NULL: the vCPU's directory)
 * into @path. Returns 0, or -ENAMETOOLONG. */
static int vcpu_path(char *path, size_t len, const char *dir, int vcpu, const char *name)
{
	int n = name ? snprintf(path, len, "%s/vcpu%d/%s", dir, vcpu, name)
		     : snprintf(path, len, "%s/vcpu%d", dir, vcpu);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int kvm_debugfs_mount(char *dir, size_t len, char *why, size_t whylen)
{
	const char *d;

	if (geteuid() != 0) {
		tsync_set_err(why, whylen, "not root: KVM's debugfs files are root's");
		return -EPERM;
	}
	d = tracefs_debug_dir();	/* mounts it at /sys/kernel/debug if need be */
	if (!d) {
		tsync_set_err(why, whylen,
			      "no debugfs: not mounted, and it cannot be mounted at /sys/kernel/debug");
		return -ENODEV;
	}
	if ((size_t)snprintf(dir, len, "%s", d) >= len) {
		tsync_set_err(why, whylen, "debugfs path too long: %s", d);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Returns true if @dir/@name is a directory (d_type, or stat without it). */
static bool is_dir(const char *dir, const struct dirent *e)
{
	char path[PATH_MAX];
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Returns N if @name is "vcpuN" (N decimal, no sign), else -1. */
static int vcpu_number(const char *name)
{
	char *e;
	long v;

	if (strncmp(name, "vcpu", 4) || name[4] < '0' || name[4] > '9')
		return -1;
	v = strtol(name + 4, &e, 10);
	return *e || v > INT_MAX ? -1 : (int)v;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Lists the vcpu directories of @dir into *@vcpu (malloc'd, sorted; NULL
 * when there is none) and *@n. Returns 0 or -errno.
 */
static int list_vcpus(const char *dir, int **vcpu, int *n)
{
	int *v = NULL, cap = 0, cnt = 0, ret = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int num = vcpu_number(e->d_name);

		if (num < 0 || !is_dir(dir, e))
			continue;
		if (cnt == cap) {
			int *nv = realloc(v, (size_t)(cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv) {
				ret = -ENOMEM;
				goto out;
			}
			v = nv;
			cap = cap ? 2 * cap : 16;
		}
		v[cnt++] = num;
	}
	if (cnt)
		qsort(v, (size_t)cnt, sizeof(*v), cmp_int);
out:
	closedir(d);
	if (ret) {
		free(v);
		return ret;
	}
	*vcpu = v;
	*n = cnt;
	return 0;
}

/* Returns true if @name is "@pid-FD" (FD decimal). */
static bool vm_dir_of(const char *name, pid_t pid)
{
	char pfx[24];
	size_t l = (size_t)snprintf(pfx, sizeof(pfx), "%d-", (int)pid);

	if (strncmp(name, pfx, l) || !name[l])
		return false;
	return strspn(name + l, "0123456789") == strlen(name + l);
}

/* The one line for an opendir/open failure of @path. */
static int path_err(int err, const char *path, char *why, size_t whylen)
{
	if (err == -EACCES || err == -EPERM)
		tsync_set_err(why, whylen, "cannot read %s: %s (not root?)", path, strerror(-err));
	else
		tsync_set_err(why, whylen, "cannot read %s: %s", path, strerror(-err));
	return err;
}

/*
 * Finds the one VM of @pid with vCPUs under @kvm into @d (dir, vcpu,
 * ncpu). Returns 0 or -errno with @why.
 */
static int find_vm(const char *kvm, pid_t pid, struct kvm_debugfs *d, char *why, size_t whylen)
{
	char first[NAME_MAX + 1] = "";
	int found = 0, ret = 0;
	bool empty = false;
	struct dirent *e;
	DIR *dir = opendir(kvm);

	if (!dir) {
		ret = -errno;
		if (ret == -ENOENT) {
			tsync_set_err(why, whylen, "no KVM in debugfs: %s does not exist", kvm);
			return ret;
		}
		return path_err(ret, kvm, why, whylen);
	}
	while ((e = readdir(dir))) {
		char path[PATH_MAX];
		int *v = NULL, n = 0;

		if (!vm_dir_of(e->d_name, pid) || !is_dir(kvm, e))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", kvm, e->d_name) >= sizeof(path))
			continue;
		ret = list_vcpus(path, &v, &n);
		if (ret) {
			path_err(ret, path, why, whylen);
			goto out;
		}
		if (!n) {
			empty = true;
			continue;
		}
		if (found++) {
			free(v);
			tsync_set_err(why, whylen, "PID %d has two KVM VMs with vCPUs: %s and %s",
				      (int)pid, first, e->d_name);
			ret = -EEXIST;
			goto out;
		}
		snprintf(first, sizeof(first), "%s", e->d_name);
		snprintf(d->dir, sizeof(d->dir), "%s", path);
		d->vcpu = v;
		d->ncpu = n;
	}
	if (!found) {
		if (empty)
			tsync_set_err(why, whylen, "the KVM VM of PID %d in %s has no vCPU",
				      (int)pid, kvm);
		else
			tsync_set_err(why, whylen,
				      "no KVM VM of PID %d in %s (not a KVM guest, or not its QEMU)",
				      (int)pid, kvm);
		ret = -ENOENT;
	}
out:
	closedir(dir);
	return ret;
}

/* Returns true if @d's vCPU @vcpu has the file @name. */
static bool has_file(const struct kvm_debugfs *d, int vcpu, const char *name)
{
	char path[PATH_MAX];

	return !vcpu_path(path, sizeof(path), d->dir, vcpu, name) && access(path, F_OK) == 0;
}

/* Checks vCPU @vcpu's files: a tsc-offset, both scaling files or neither. */
static int check_vcpu(const struct kvm_debugfs *d, int vcpu, char *why, size_t whylen)
{
	bool ratio, frac;

	if (!has_file(d, vcpu, KVM_FILE_OFFSET)) {
		tsync_set_err(why, whylen, "%s/vcpu%d has no " KVM_FILE_OFFSET, d->dir, vcpu);
		return -ENOENT;
	}
	ratio = has_file(d, vcpu, KVM_FILE_RATIO);
	frac = has_file(d, vcpu, KVM_FILE_FRAC);
	if (ratio != frac) {
		tsync_set_err(why, whylen, "%s/vcpu%d has %s but not %s", d->dir, vcpu,
			      ratio ? KVM_FILE_RATIO : KVM_FILE_FRAC,
			      ratio ? KVM_FILE_FRAC : KVM_FILE_RATIO);
		return -EPROTO;
	}
	return 0;
}

int kvm_debugfs_open(const char *debugfs, pid_t pid, int nvcpu, struct kvm_debugfs **out,
		     char *why, size_t whylen)
{
	char sys[PATH_MAX], kvm[PATH_MAX];
	struct kvm_debugfs *d;
	int ret;

	if (pid <= 0) {
		tsync_set_err(why, whylen, "no PID: the guest's QEMU process is not known");
		return -EINVAL;
	}
	if (!debugfs) {
		ret = kvm_debugfs_mount(sys, sizeof(sys), why, whylen);
		if (ret)
			return ret;
		debugfs = sys;
	}
	if ((size_t)snprintf(kvm, sizeof(kvm), "%s/kvm", debugfs) >= sizeof(kvm)) {
		tsync_set_err(why, whylen, "debugfs path too long: %s", debugfs);
		return -ENAMETOOLONG;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		tsync_set_err(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = find_vm(kvm, pid, d, why, whylen);
	if (ret)
		goto fail;
	if (nvcpu > 0 && d->ncpu != nvcpu) {
		tsync_set_err(why, whylen, "%s has %d vCPU%s, the guest %d CPU%s", d->dir,
			      d->ncpu, d->ncpu == 1 ? "" : "s", nvcpu, nvcpu == 1 ? "" : "s");
		ret = -ECHILD;
		goto fail;
	}
	for (int i = 0; i < d->ncpu; i++) {
		ret = check_vcpu(d, d->vcpu[i], why, whylen);
		if (ret)
			goto fail;
	}
	*out = d;
	return 0;
fail:
	kvm_debugfs_close(d);
	return ret;
}

int kvm_debugfs_ncpu(const struct kvm_debugfs *d)
{
	return d->ncpu;
}

int kvm_debugfs_cpu_of(const struct kvm_debugfs *d, int vcpu)
{
	for (int i = 0; i < d->ncpu; i++)
		if (d->vcpu[i] == vcpu)
			return i;
	return -1;
}

const char *kvm_debugfs_path(const struct kvm_debugfs *d)
{
	return d->dir;
}

/*
 * Reads vCPU @vcpu's file @name as a decimal number: signed if @sign.
 * Returns 0 and *@v (the bits of an int64 when signed), -ENOENT if the
 * file is not there (with @why only if @must), -EPROTO or -errno.
 */
static int read_num(const struct kvm_debugfs *d, int vcpu, const char *name, bool sign,
		    bool must, uint64_t *v, char *why, size_t whylen)
{
	char path[PATH_MAX], buf[64], *e;
	ssize_t n;
	int fd, ret = 0;

	*v = 0;
	if (vcpu_path(path, sizeof(path), d->dir, vcpu, name)) {
		tsync_set_err(why, whylen, "%s/vcpu%d: path too long", d->dir, vcpu);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret != -ENOENT || must)
			path_err(ret, path, why, whylen);
		return ret;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		ret = path_err(-errno, path, why, whylen);
		goto out;
	}
	buf[n] = '\0';
	e = buf;
	errno = 0;
	if (sign)
		*v = (uint64_t)strtoll(buf, &e, 10);
	else
		*v = buf[0] == '-' ? (errno = ERANGE, 0) : strtoull(buf, &e, 10);
	if (errno || e == buf || (*e && strcmp(e, "\n"))) {
		tsync_set_err(why, whylen, "%s: not a number: '%.*s'", path,
			      (int)strcspn(buf, "\n"), buf);
		ret = -EPROTO;
	}
out:
	close(fd);
	return ret;
}

int kvm_debugfs_read(const struct kvm_debugfs *d, int cpu, struct kvm_debugfs_vcpu *v,
		     char *why, size_t whylen)
{
	uint64_t x = 0;
	int vcpu, ret, rf;

	if (cpu < 0 || cpu >= d->ncpu) {
		tsync_set_err(why, whylen, "guest CPU %d out of range (%d vCPUs)", cpu, d->ncpu);
		return -EINVAL;
	}
	vcpu = d->vcpu[cpu];
	memset(v, 0, sizeof(*v));
	v->vcpu = vcpu;
	ret = read_num(d, vcpu, KVM_FILE_NESTED, false, false, &x, why, whylen);
	if (ret && ret != -ENOENT)
		return ret;
	v->guest_mode = ret ? -1 : x != 0;
	ret = read_num(d, vcpu, KVM_FILE_OFFSET, true, true, &x, why, whylen);
	if (ret)
		return ret;
	v->offset = (int64_t)x;
	ret = read_num(d, vcpu, KVM_FILE_RATIO, false, false, &v->ratio, why, whylen);
	if (ret && ret != -ENOENT)
		return ret;
	rf = ret;
	ret = read_num(d, vcpu, KVM_FILE_FRAC, false, false, &v->frac, why, whylen);
	if (ret && ret != -ENOENT)
		return ret;
	if (!rf != !ret) {
		tsync_set_err(why, whylen, "%s/vcpu%d has %s but not %s", d->dir, vcpu,
			      rf ? KVM_FILE_FRAC : KVM_FILE_RATIO,
			      rf ? KVM_FILE_RATIO : KVM_FILE_FRAC);
		return -EPROTO;
	}
	v->scaling = !ret;
	ret = read_num(d, vcpu, KVM_FILE_PID, false, false, &x, why, whylen);
	if (ret && ret != -ENOENT)
		return ret;
	v->tid = ret || x > INT_MAX ? 0 : (pid_t)x;
	return 0;
}

int kvm_debugfs_tsc(const struct kvm_debugfs *d, int cpu, struct kvm_tsc *k,
		    char *why, size_t whylen)
{
	struct kvm_debugfs_vcpu v;
	uint64_t after = 0;
	int ret;

	ret = kvm_debugfs_read(d, cpu, &v, why, whylen);
	if (ret)
		return ret;
	if (v.guest_mode >= 0) {
		ret = read_num(d, v.vcpu, KVM_FILE_NESTED, false, true, &after, why, whylen);
		if (ret)
			return ret;
	}
	if (v.guest_mode == 1 || after) {
		tsync_set_err(why, whylen,
			      "%s/vcpu%d runs a nested guest (guest_mode 1): its tsc-offset is L2's",
			      d->dir, v.vcpu);
		return -EBUSY;
	}
	ret = kvm_tsc_init(k, v.offset, v.scaling, v.ratio, v.frac);
	if (ret)
		tsync_set_err(why, whylen, "%s/vcpu%d: scaling ratio %llu with %llu fraction bits",
			      d->dir, v.vcpu, (unsigned long long)v.ratio,
			      (unsigned long long)v.frac);
	return ret;
}

void kvm_debugfs_close(struct kvm_debugfs *d)
{
	if (!d)
		return;
	free(d->vcpu);
	free(d);
}

int kvm_debugfs_usable(const char *debugfs, pid_t pid, int nvcpu, const char *clock,
		       char *why, size_t whylen)
{
	struct kvm_debugfs *d;
	struct kvm_tsc k;
	int ret;

	if (!kvm_tsc_clock_ok(clock)) {
		tsync_set_err(why, whylen, "clock %s is not " KVM_TSC_CLOCK
			      ": KVM's offsets are in TSC cycles", clock ? clock : "(none)");
		return -ENOTSUP;
	}
	ret = kvm_debugfs_open(debugfs, pid, nvcpu, &d, why, whylen);
	if (ret)
		return ret;
	for (int i = 0; i < d->ncpu && !ret; i++)
		ret = kvm_debugfs_tsc(d, i, &k, why, whylen);
	kvm_debugfs_close(d);
	return ret;
}
