// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shared-key authentication: the MACs against values computed with an
 * independent HMAC implementation (Python's hmac module), rejection of
 * every single-bit change, of swapped roles and of another key; key
 * files: permissions, size limits, non-regular files (a FIFO without a
 * writer must not block).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "common/wire/auth.h"

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/tsync-auth-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/key", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Writes @len bytes of @byte (or 1..len if @byte < 0) to the key file
 * with @mode. */
static void write_key(const struct fx *f, size_t len, int byte, mode_t mode)
{
	uint8_t buf[TSYNC_KEY_MAX + 16];
	int fd;

	assert_true(len <= sizeof(buf));
	for (size_t i = 0; i < len; i++)
		buf[i] = byte < 0 ? (uint8_t)(i + 1) : (uint8_t)byte;
	unlink(f->path);
	fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* Parses 64 hex digits into @out. */
static void unhex(const char *hex, uint8_t *out)
{
	for (int i = 0; i < TSYNC_MAC_LEN; i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

static void test_known_answers(void **state)
{
	struct fx *f = *state;
	uint8_t nh[TSYNC_NONCE_LEN], na[TSYNC_NONCE_LEN], mac[TSYNC_MAC_LEN], want[TSYNC_MAC_LEN];
	struct tsync_key *k = NULL;
	char err[256];

	/* key 01 02 .. 20, host nonce aa.., agent nonce 55.. */
	write_key(f, 32, -1, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), 0);
	memset(nh, 0xaa, sizeof(nh));
	memset(na, 0x55, sizeof(na));
	assert_int_equal(tsync_auth_mac(k, TSYNC_AUTH_AGENT, nh, na, mac), 0);
	unhex("6f93bfae8402a7781765ee2d00dd4260fc3ccd7c220f3b2a997d2d0dd5531e13", want);
	assert_memory_equal(mac, want, TSYNC_MAC_LEN);
	assert_true(tsync_auth_check(k, TSYNC_AUTH_AGENT, nh, na, mac));
	assert_int_equal(tsync_auth_mac(k, TSYNC_AUTH_HOST, nh, na, mac), 0);
	unhex("33e3a6aab235febde6b33cb1d2767f8ebe89cece1fd22c1d367e8b0572ca41d1", want);
	assert_memory_equal(mac, want, TSYNC_MAC_LEN);
	assert_true(tsync_auth_check(k, TSYNC_AUTH_HOST, nh, na, mac));
	assert_int_equal(tsync_auth_mac(k, 0, nh, na, mac), -EINVAL);
	tsync_key_free(k);
}

static void test_rejections(void **state)
{
	struct fx *f = *state;
	uint8_t nh[TSYNC_NONCE_LEN], na[TSYNC_NONCE_LEN], mac[TSYNC_MAC_LEN];
	struct tsync_key *k = NULL, *other = NULL;

	write_key(f, 32, 0x42, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, NULL, 0), 0);
	write_key(f, 32, 0x43, 0400);
	assert_int_equal(tsync_key_load(f->path, &other, NULL, 0), 0);
	assert_int_equal(tsync_auth_nonce(nh), 0);
	assert_int_equal(tsync_auth_nonce(na), 0);
	assert_memory_not_equal(nh, na, TSYNC_NONCE_LEN);

	assert_int_equal(tsync_auth_mac(k, TSYNC_AUTH_AGENT, nh, na, mac), 0);
	assert_true(tsync_auth_check(k, TSYNC_AUTH_AGENT, nh, na, mac));
	/* every single-bit change of the MAC is refused */
	for (int bit = 0; bit < 8 * TSYNC_MAC_LEN; bit++) {
		mac[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		assert_false(tsync_auth_check(k, TSYNC_AUTH_AGENT, nh, na, mac));
		mac[bit / 8] ^= (uint8_t)(1 << (bit % 8));
	}
	/* reflected to the other role, other nonces, another key: refused */
	assert_false(tsync_auth_check(k, TSYNC_AUTH_HOST, nh, na, mac));
	assert_false(tsync_auth_check(k, TSYNC_AUTH_AGENT, na, nh, mac));
	assert_false(tsync_auth_check(other, TSYNC_AUTH_AGENT, nh, na, mac));
	nh[TSYNC_NONCE_LEN - 1] ^= 1;
	assert_false(tsync_auth_check(k, TSYNC_AUTH_AGENT, nh, na, mac));
	assert_false(tsync_auth_check(NULL, TSYNC_AUTH_AGENT, nh, na, mac));
	tsync_key_free(k);
	tsync_key_free(other);
}

static void test_key_file_checks(void **state)
{
	struct fx *f = *state;
	struct tsync_key *k = NULL;
	char err[256];

	/* group or others may read (or write): refused, with the mode */
	write_key(f, 32, 1, 0640);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "accessible by group or others (mode 0640)"));
	assert_null(k);
	write_key(f, 32, 1, 0604);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EPERM);
	write_key(f, 32, 1, 0620);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EPERM);
	/* too short, minimum, maximum, too long */
	write_key(f, TSYNC_KEY_MIN - 1, 1, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at least"));
	write_key(f, TSYNC_KEY_MIN, 1, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), 0);
	tsync_key_free(k);
	k = NULL;
	write_key(f, TSYNC_KEY_MAX, 1, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), 0);
	tsync_key_free(k);
	k = NULL;
	write_key(f, TSYNC_KEY_MAX + 1, 1, 0600);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EFBIG);
	/* missing file, a directory */
	unlink(f->path);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, f->path));
	assert_int_equal(chmod(f->dir, 0700), 0);
	assert_int_equal(tsync_key_load(f->dir, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_null(k);
}

/*
 * A FIFO (or any file whose open() waits for a peer) must be refused at
 * once, not wait for a writer forever. The alarm bounds a regression: if
 * open() blocks, SIGALRM kills the test instead of hanging make check.
 */
static void test_key_file_fifo(void **state)
{
	struct fx *f = *state;
	struct tsync_key *k = NULL;
	char err[256];

	unlink(f->path);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	alarm(5);
	assert_int_equal(tsync_key_load(f->path, &k, err, sizeof(err)), -EINVAL);
	alarm(0);
	assert_null(k);
	assert_non_null(strstr(err, "not a regular file"));
	assert_non_null(strstr(err, "fifo"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_known_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_file_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_file_fifo, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
