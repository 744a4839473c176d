// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host/qemu: QEMU command lines (-name guest=... and the legacy form,
 * vhost-vsock guest-cid=, non-QEMU processes), and the scan of a fixture
 * tree laid out as /proc: found by name, by CID, by both; vCPU threads
 * from "CPU N/KVM" and "CPU N/TCG"; two guests of one name; no guest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "host/guest/qemu.h"
#include "tests/unit/tmp_fixture.h"

/* Writes @len bytes of @data to @dir/@rel (directories made). */
static void put(const char *dir, const char *rel, const char *data, size_t len)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* A command line: words separated by '|', stored NUL-separated. */
static void put_cmdline(const char *dir, int pid, const char *words)
{
	char rel[64], buf[1024];
	size_t n = strlen(words) + 1;

	snprintf(buf, sizeof(buf), "%s", words);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	snprintf(rel, sizeof(rel), "%d/cmdline", pid);
	put(dir, rel, buf, n);
}

static void put_thread(const char *dir, int pid, int tid, const char *comm)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/task/%d/comm", pid, tid);
	put(dir, rel, comm, strlen(comm));
}

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_qemu.XXXXXX");
	assert_non_null(mkdtemp(root));
	/* a KVM guest with vsock, debug-threads on */
	put_cmdline(root, 100, "/usr/bin/qemu-system-x86_64|-enable-kvm|-name|"
		    "guest=vm1,debug-threads=on|-smp|2|-device|"
		    "vhost-vsock-pci,id=vsock0,guest-cid=5");
	put_thread(root, 100, 100, "qemu-system-x86\n");
	put_thread(root, 100, 103, "CPU 1/KVM\n");
	put_thread(root, 100, 102, "CPU 0/KVM\n");
	put_thread(root, 100, 104, "IO mon_iothread\n");
	/* a TCG guest, legacy -name, no vsock */
	put_cmdline(root, 200, "qemu-system-aarch64|--name|vm2,process=vm2|-accel|tcg");
	put_thread(root, 200, 201, "CPU 0/TCG\n");
	/* two guests named "twin" */
	put_cmdline(root, 300, "qemu-kvm|-name|twin|-device|vhost-vsock-pci,guest-cid=7");
	put_cmdline(root, 301, "qemu-kvm|-name|twin|-device|vhost-vsock-pci,guest-cid=8");
	/* not QEMU, though it mentions one */
	put_cmdline(root, 400, "/bin/bash|-c|qemu-system-x86_64 -name guest=vm1");
	/* not a process */
	put(root, "self", "x", 1);
	return 0;
}

/* Removes the fake /proc tree. */
static int teardown(void **state)
{
	(void)state;
	return fixture_rmtree(root);
}

static void test_cmdline(void **state)
{
	static const char named[] = "qemu-system-x86_64\0-name\0guest=a,,b,debug-threads=on\0";
	static const char plain[] = "/usr/bin/python3\0-name\0x\0";
	static const char badcid[] = "qemu-system-x86_64\0-device\0vhost-vsock-pci,guest-cid=2\0";
	struct host_qemu_guest g;

	(void)state;
	assert_int_equal(host_qemu_parse_cmdline(named, sizeof(named) - 1, &g), 0);
	assert_string_equal(g.name, "a,b");	/* ",," is an escaped comma */
	assert_int_equal(g.cid, 0);
	assert_int_equal(host_qemu_parse_cmdline(plain, sizeof(plain) - 1, &g), -ENOENT);
	/* CIDs 0-2 are reserved (hypervisor, local, host) */
	assert_int_equal(host_qemu_parse_cmdline(badcid, sizeof(badcid) - 1, &g), 0);
	assert_int_equal(g.cid, 0);
}

static void test_find(void **state)
{
	struct host_qemu_guest g;

	(void)state;
	assert_int_equal(host_qemu_find(root, "vm1", 0, &g), 0);
	assert_int_equal(g.pid, 100);
	assert_int_equal(g.cid, 5);
	assert_int_equal(g.nvcpu, 2);
	assert_int_equal(g.vcpu_tid[0], 102);
	assert_int_equal(g.vcpu_tid[1], 103);

	assert_int_equal(host_qemu_find(root, NULL, 5, &g), 0);
	assert_string_equal(g.name, "vm1");
	assert_int_equal(host_qemu_find(root, "vm1", 6, &g), -ENOENT);

	assert_int_equal(host_qemu_find(root, "vm2", 0, &g), 0);
	assert_int_equal(g.pid, 200);
	assert_int_equal(g.cid, 0);
	assert_int_equal(g.nvcpu, 1);
	assert_int_equal(g.vcpu_tid[0], 201);

	assert_int_equal(host_qemu_find(root, "twin", 0, &g), -EEXIST);
	assert_int_equal(host_qemu_find(root, "twin", 8, &g), 0);
	assert_int_equal(g.pid, 301);
	assert_int_equal(g.nvcpu, 0);

	assert_int_equal(host_qemu_find(root, "nosuch", 0, &g), -ENOENT);
	assert_int_equal(host_qemu_find(root, NULL, 0, &g), -EINVAL);
	assert_int_equal(host_qemu_find("/nonexistent-proc", "vm1", 0, &g), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
