// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/peer/peer.c: the dialect an AGENT's prefix picks, the
 * dialects' facts, and what each refuses before connecting. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/peer/peer.h"

/* "tcmd:" names trace-cmd's dialect, anything else tsync's. */
static void test_dialect(void **state)
{
	const struct peer_ops *d;
	const char *rest;

	(void)state;
	d = peer_dialect("tcmd:3", &rest);
	assert_string_equal(peer_dialect_name(d), "tcmd");
	assert_string_equal(rest, "3");
	assert_int_equal(peer_dialect_port(d), 823);
	d = peer_dialect("tcmd:", &rest);
	assert_string_equal(peer_dialect_name(d), "tcmd");
	assert_string_equal(rest, "");
	d = peer_dialect("3", &rest);
	assert_string_equal(peer_dialect_name(d), "tsync");
	assert_string_equal(rest, "3");
	assert_int_equal(peer_dialect_port(d), 8823);
	/* a prefix only where it starts */
	d = peer_dialect("vsock:3:8823@tcmd:x", &rest);
	assert_string_equal(peer_dialect_name(d), "tsync");
	assert_string_equal(rest, "vsock:3:8823@tcmd:x");
}

/* trace-cmd's protocol has no authentication and a fixed probe count;
 * tsync's takes both. */
static void test_check(void **state)
{
	const struct peer_ops *tcmd, *tsync;
	struct peer_opts o = { .key_file = "/k" };
	struct round_opts ro = { .fixed_count = true, .nprobes = 50 };
	const char *rest;
	char err[200];

	(void)state;
	tcmd = peer_dialect("tcmd:3", &rest);
	tsync = peer_dialect("3", &rest);
	assert_int_equal(peer_check(tcmd, &o, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--key-file does not apply to a trace-cmd agent (its "
			    "protocol has no authentication)");
	o.key_file = NULL;
	assert_int_equal(peer_check(tcmd, &o, &ro, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--loops does not apply to a trace-cmd agent (its PTP "
			    "always sends 339 probes)");
	ro.fixed_count = false;
	assert_int_equal(peer_check(tcmd, &o, &ro, err, sizeof(err)), 0);
	assert_int_equal(peer_check(tcmd, &o, NULL, err, sizeof(err)), 0);
	o.key_file = "/k";
	ro.fixed_count = true;
	assert_int_equal(peer_check(tsync, &o, &ro, err, sizeof(err)), 0);
}

/* A stream that belongs to no peer is only closed. */
static void test_stream_close_no_peer(void **state)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	peer_stream_close(NULL, fd);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	peer_free(NULL);
}

/* round_host_cpu(): --host-cpu wins; else the guest CPU's number plus
 * apart, modulo the host's CPUs. */
static void test_round_host_cpu(void **state)
{
	struct round_opts o = { .host_cpu = -1 };

	(void)state;
	assert_int_equal(round_host_cpu(&o, 0, 2, 0), 0);
	assert_int_equal(round_host_cpu(&o, 1, 2, 0), 1);
	assert_int_equal(round_host_cpu(&o, 5, 4, 0), 1);
	assert_int_equal(round_host_cpu(&o, 0, 2, 1), 1);
	assert_int_equal(round_host_cpu(&o, 1, 2, 1), 0);
	assert_int_equal(round_host_cpu(&o, 3, 4, 1), 0);
	assert_int_equal(round_host_cpu(&o, 7, 1, 1), 0);	/* one host CPU */
	assert_int_equal(round_host_cpu(&o, 7, 0, 1), 0);	/* none known */
	o.host_cpu = 3;
	assert_int_equal(round_host_cpu(&o, 0, 2, 0), 3);
	assert_int_equal(round_host_cpu(&o, 1, 2, 1), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dialect),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_stream_close_no_peer),
		cmocka_unit_test(test_round_host_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
