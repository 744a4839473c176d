// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/guest/agent_arg.c: the -A arguments of sync and record,
 * trace-cmd's forms (local QEMU guests from a fixture /proc tree) and
 * tsync's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/guest/agent_arg.h"
#include "tests/unit/tmp_fixture.h"

/* AGENT alone is named guestN; AGENT@NAME carries NAME. */
static void test_names(void **state)
{
	struct host_agent_arg a;
	char err[200];

	(void)state;
	assert_int_equal(host_agent_arg_parse("tcp:127.0.0.1:8823", 3, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "guest3");
	assert_int_equal(a.ep.port, 8823);
	assert_int_equal(host_agent_arg_parse("tcp:127.0.0.1:9000@vm-1.a_b", 0, &a, err,
					      sizeof(err)), 0);
	assert_string_equal(a.name, "vm-1.a_b");
	assert_int_equal(a.ep.port, 9000);
	/* the last @ separates the name: "5@x" is no address */
	assert_int_equal(host_agent_arg_parse("5@x@y", 0, &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(host_agent_arg_parse("5@y", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "y");
	assert_int_equal(a.ep.cid, 5);
}

static char root[64];

/* A fixture /proc: QEMU guest "vm1" with CID 5 (pid 100), "novsock" without
 * a vsock device (pid 200). */
static int setup(void **state)
{
	static const char vm1[] = "qemu-system-x86_64\0-name\0guest=vm1,debug-threads=on\0"
				  "-device\0vhost-vsock-pci,guest-cid=5\0";
	static const char novsock[] = "qemu-system-x86_64\0-name\0novsock\0";
	char path[128];
	FILE *f;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_agent_arg.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/100", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/200", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/100/cmdline", root);
	assert_non_null(f = fopen(path, "w"));
	fwrite(vm1, 1, sizeof(vm1) - 1, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/200/cmdline", root);
	assert_non_null(f = fopen(path, "w"));
	fwrite(novsock, 1, sizeof(novsock) - 1, f);
	fclose(f);
	return 0;
}

/* Removes the fake /proc tree. */
static int teardown(void **state)
{
	(void)state;
	return fixture_rmtree(root);
}

/* trace-cmd's forms: NAME@CID[:PORT], CID[:PORT], NAME, HOST:PORT. */
static void test_tracecmd_forms(void **state)
{
	struct host_agent_arg a;
	char err[256];

	(void)state;
	assert_int_equal(host_agent_arg_parse_in(root, "web@7:900", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "web");
	assert_int_equal(a.ep.kind, TSYNC_EP_VSOCK);
	assert_int_equal(a.ep.cid, 7);
	assert_int_equal(a.ep.port, 900);
	assert_int_equal(host_agent_arg_parse_in(root, "web@7", 0, &a, err, sizeof(err)), 0);
	assert_int_equal(a.ep.port, TSYNC_DEFAULT_PORT);
	/* a CID names the guest after its QEMU process, else after itself */
	assert_int_equal(host_agent_arg_parse_in(root, "5", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "vm1");
	assert_int_equal(a.ep.cid, 5);
	assert_int_equal(host_agent_arg_parse_in(root, "9:1234", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "9");
	assert_int_equal(a.ep.cid, 9);
	assert_int_equal(a.ep.port, 1234);
	/* a name: the local QEMU guest's CID */
	assert_int_equal(host_agent_arg_parse_in(root, "vm1", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "vm1");
	assert_int_equal(a.ep.kind, TSYNC_EP_VSOCK);
	assert_int_equal(a.ep.cid, 5);
	assert_int_equal(host_agent_arg_parse_in(root, "vm1:77", 0, &a, err, sizeof(err)), 0);
	assert_int_equal(a.ep.kind, TSYNC_EP_VSOCK);
	assert_int_equal(a.ep.port, 77);
	/* HOST:PORT is TCP, named after the host */
	assert_int_equal(host_agent_arg_parse_in(root, "127.0.0.1:5000", 0, &a, err,
						 sizeof(err)), 0);
	assert_int_equal(a.ep.kind, TSYNC_EP_TCP);
	assert_string_equal(a.ep.host, "127.0.0.1");
	assert_int_equal(a.ep.port, 5000);
	assert_string_equal(a.name, "127.0.0.1");
	assert_int_equal(host_agent_arg_parse_in(root, "localhost:5000", 0, &a, err,
						 sizeof(err)), 0);
	assert_int_equal(a.ep.kind, TSYNC_EP_TCP);
	assert_string_equal(a.ep.host, "localhost");

	assert_int_equal(host_agent_arg_parse_in(root, "nosuch", 0, &a, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "no QEMU guest named 'nosuch' runs here (-A NAME@CID, CID, "
			    "or HOST:PORT for a TCP agent)");
	assert_int_equal(host_agent_arg_parse_in(root, "novsock", 0, &a, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "QEMU guest 'novsock' (pid 200) has no vhost-vsock device "
			    "(guest-cid=): give -A HOST:PORT --name novsock for a TCP agent");
	assert_int_equal(host_agent_arg_parse_in(root, "a@2", 0, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid CID '2' (a number above 2)");
	assert_int_equal(host_agent_arg_parse_in(root, "a@3:x", 0, &a, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "invalid port 'x'");
	assert_int_equal(host_agent_arg_parse_in(root, "host.example:0", 0, &a, err,
						 sizeof(err)), -EINVAL);
	assert_int_equal(host_agent_arg_parse_in(root, "host.example", 0, &a, err,
						 sizeof(err)), -EINVAL);
	assert_string_equal(err, "'host.example': a TCP agent needs a port (HOST:PORT)");
}

/* tcmd: marks a trace-cmd agent; a bare CID then means its port 823. */
static void test_tcmd(void **state)
{
	struct host_agent_arg a;
	char err[200];

	(void)state;
	assert_int_equal(host_agent_arg_parse("tcmd:3", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tcmd");
	assert_int_equal(a.ep.kind, TSYNC_EP_VSOCK);
	assert_int_equal(a.ep.cid, 3);
	assert_int_equal(a.ep.port, 823);
	assert_int_equal(host_agent_arg_parse("tcmd:127.0.0.1:1234@vm", 0, &a, err,
					      sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tcmd");
	assert_int_equal(a.ep.kind, TSYNC_EP_TCP);
	assert_int_equal(a.ep.port, 1234);
	assert_string_equal(a.name, "vm");
	assert_int_equal(host_agent_arg_parse("tcmd:vsock:4:900", 0, &a, err, sizeof(err)), 0);
	assert_int_equal(a.ep.port, 900);
	assert_int_equal(host_agent_arg_parse("3", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tsync");
	assert_int_equal(a.ep.port, 8823);
	assert_int_equal(host_agent_arg_parse("tcmd:", 0, &a, err, sizeof(err)), -EINVAL);
	/* every -A form takes the prefix; without a port, trace-cmd's */
	assert_int_equal(host_agent_arg_parse_in(root, "tcmd:web@7", 0, &a, err, sizeof(err)),
			 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tcmd");
	assert_string_equal(a.name, "web");
	assert_int_equal(a.ep.cid, 7);
	assert_int_equal(a.ep.port, 823);
	assert_int_equal(host_agent_arg_parse_in(root, "tcmd:7@web", 0, &a, err, sizeof(err)),
			 0);
	assert_string_equal(a.name, "web");
	assert_int_equal(a.ep.port, 823);
	assert_int_equal(host_agent_arg_parse_in(root, "tcmd:vm1", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tcmd");
	assert_int_equal(a.ep.cid, 5);
	assert_int_equal(a.ep.port, 823);
	assert_int_equal(host_agent_arg_parse_in(root, "tcmd:5:900", 0, &a, err, sizeof(err)),
			 0);
	assert_string_equal(a.name, "vm1");
	assert_int_equal(a.ep.port, 900);
	assert_int_equal(host_agent_arg_parse_in(root, "tcmd:localhost:5000", 0, &a, err,
						 sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tcmd");
	assert_int_equal(a.ep.kind, TSYNC_EP_TCP);
	assert_string_equal(a.ep.host, "localhost");
	assert_int_equal(a.ep.port, 5000);
	/* trace-cmd's forms without the prefix stay tsync's protocol */
	assert_int_equal(host_agent_arg_parse_in(root, "web@7", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(peer_dialect_name(a.dialect), "tsync");
	assert_int_equal(a.ep.port, TSYNC_DEFAULT_PORT);
}

/* Bad names and addresses are refused with a reason. */
static void test_refusals(void **state)
{
	static const char *const bad[] = {
		"tcp:127.0.0.1:1@", "tcp:127.0.0.1:1@a b", "tcp:127.0.0.1:1@a/b",
		"tcp:127.0.0.1:1@0123456789012345678901234567890123456789012345678901234567890123",
		"nonsense:1:2", "@name", "",
	};
	struct host_agent_arg a;
	char err[200], long_arg[400];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(host_agent_arg_parse(bad[i], 0, &a, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != '\0');
	}
	memset(long_arg, 'a', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	assert_int_equal(host_agent_arg_parse(long_arg, 0, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
}

/* --vm: a PID that exists, or a local QEMU guest's -name. */
static void test_vm(void **state)
{
	pid_t pid = 0;
	char err[200];

	(void)state;
	assert_int_equal(host_agent_vm(root, "200", &pid, err, sizeof(err)), 0);
	assert_int_equal(pid, 200);
	assert_int_equal(host_agent_vm(root, "vm1", &pid, err, sizeof(err)), 0);
	assert_int_equal(pid, 100);
	assert_int_equal(host_agent_vm(root, "300", &pid, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--vm 300: no such process");
	assert_int_equal(host_agent_vm(root, "nosuch", &pid, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--vm nosuch: no QEMU guest of that -name runs here (a PID, "
			    "or a guest's -name)");
	assert_int_equal(host_agent_vm(root, "0", &pid, err, sizeof(err)), -EINVAL);
}

/* --vm in a list of agents: for the last one, and only after an -A (a
 * PID of this process, under the real /proc). */
static void test_list_vm(void **state)
{
	struct host_agent_arg a[2] = { { .vm_pid = 0 }, { .vm_pid = 0 } };
	char err[200], self[32];

	(void)state;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	assert_int_equal(host_agent_list_vm(a, 0, self, err, sizeof(err)), -1);
	assert_string_equal(err, "--vm follows the -A it is for");
	assert_int_equal(host_agent_list_vm(a, 2, self, err, sizeof(err)), 0);
	assert_int_equal(a[1].vm_pid, getpid());
	assert_int_equal(a[0].vm_pid, 0);
}

/* The target: --vm's PID, else a vsock guest's QEMU by its CID, else none. */
static void test_target(void **state)
{
	struct tsync_endpoint vs = { .kind = TSYNC_EP_VSOCK, .cid = 5, .port = 823 };
	struct tsync_endpoint other = { .kind = TSYNC_EP_VSOCK, .cid = 6, .port = 823 };
	struct tsync_endpoint tcp = { .kind = TSYNC_EP_TCP, .port = 9 };
	struct sync_target t;

	(void)state;
	host_agent_target(&t, root, NULL, &vs, "vm1", 0);
	assert_int_equal(t.vm_pid, 100);
	assert_string_equal(t.name, "vm1");
	assert_ptr_equal(t.ep, &vs);
	host_agent_target(&t, root, NULL, &other, "x", 0);
	assert_int_equal(t.vm_pid, 0);
	host_agent_target(&t, root, NULL, &tcp, "x", 0);
	assert_int_equal(t.vm_pid, 0);
	host_agent_target(&t, root, NULL, &tcp, "x", 4321);
	assert_int_equal(t.vm_pid, 4321);
	assert_int_equal(t.nvcpu, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_tracecmd_forms),
		cmocka_unit_test(test_tcmd),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_list_vm),
		cmocka_unit_test(test_target),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
