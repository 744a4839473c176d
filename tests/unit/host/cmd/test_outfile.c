// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host/outfile: guest file names as trace-cmd record makes them, and the
 * output directory check on real directories.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/cmd/outfile.h"

/* Checks one name. */
static void name_is(const char *output, const char *guest, const char *want)
{
	char buf[256];

	assert_int_equal(outfile_guest_path(output, guest, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

/* trace-cmd's trace_get_guest_file(): "-NAME" before the extension. */
static void test_names(void **state)
{
	char small[8];

	(void)state;
	name_is("trace.dat", "g", "trace-g.dat");
	name_is("run.dat", "g", "run-g.dat");
	name_is("/tmp/x/run.dat", "vm1", "/tmp/x/run-vm1.dat");
	name_is("run", "g", "run-g");
	name_is("run.2.dat", "g", "run.2-g.dat");
	name_is("out.d/run", "g", "out.d/run-g");	/* trace-cmd: out-g.d/run */
	name_is(".dat", "g", ".dat-g");
	name_is("dir/.dat", "g", "dir/.dat-g");
	assert_int_equal(outfile_guest_path("run.dat", "guest", small, sizeof(small)),
			 -ENAMETOOLONG);
}

/* A missing directory, a file as directory, a good one. */
static void test_dir(void **state)
{
	char dir[] = "/tmp/tsync-outfile-XXXXXX", out[128], err[512], want[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run.dat", dir);
	assert_int_equal(outfile_check_dir(out, err, sizeof(err)), 0);
	assert_int_equal(outfile_check_dir("run.dat", err, sizeof(err)), 0);
	assert_int_equal(outfile_check_dir("/run.dat", err, sizeof(err)), 0);

	snprintf(out, sizeof(out), "%s/no/such/run.dat", dir);
	assert_int_equal(outfile_check_dir(out, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "-o %s: directory %s/no/such does not exist "
		 "(create it: mkdir -p %s/no/such)", out, dir, dir);
	assert_string_equal(err, want);

	snprintf(out, sizeof(out), "%s/file", dir);
	fclose(fopen(out, "w"));
	snprintf(out, sizeof(out), "%s/file/run.dat", dir);
	assert_int_equal(outfile_check_dir(out, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "is not a directory"));
	snprintf(out, sizeof(out), "%s/file", dir);
	unlink(out);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
