// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared-key HMAC-SHA256 challenge-response; see auth.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/base/errbuf.h"
#include "common/wire/auth.h"

struct tsync_key {
	size_t len;
	uint8_t bytes[TSYNC_KEY_MAX];
};

/* Names the kind of a non-regular file for an error message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return "special file";
}

/* Opens the key file for reading. Returns the fd or -errno with a reason
 * (and the fix for the common cases) in @err. */
static int key_open(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO (or a device) must not wait for a peer;
	 * what it is gets checked on the open file (key_check_file()).
	 * Symlinks are followed: a link to a key kept elsewhere is a normal
	 * setup, and the checks apply to the file it names. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int ret;

	if (fd >= 0)
		return fd;
	ret = -errno;
	if (ret == -ENOENT)
		tsync_set_err(err, errlen, "key file %s: %s: give the file that holds the "
			      "shared key (the agent's --key-file), or make one: head -c 32 "
			      "/dev/urandom > FILE; chmod 600 FILE", path, strerror(errno));
	else if (ret == -EACCES)
		tsync_set_err(err, errlen, "key file %s: %s: run as its owner (or root), "
			      "or check the directories on its path", path, strerror(errno));
	else
		tsync_set_err(err, errlen, "key file %s: %s", path, strerror(errno));
	return ret;
}

/* Checks the open key file @fd (fstat of the open file: what is checked is
 * what is read): a regular file, not over TSYNC_KEY_MAX, private to its
 * owner. Returns 0 or -errno with a reason in @err. */
static int key_check_file(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int ret = -errno;

		tsync_set_err(err, errlen, "key file %s: %s", path, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		tsync_set_err(err, errlen, "key file %s is not a regular file (it is a %s)",
			      path, file_kind(st.st_mode));
		return -EINVAL;
	}
	if (st.st_size > TSYNC_KEY_MAX) {
		tsync_set_err(err, errlen, "key file %s is longer than %d bytes", path,
			      TSYNC_KEY_MAX);
		return -EFBIG;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		tsync_set_err(err, errlen, "key file %s is accessible by group or others "
			"(mode %04o): refused, chmod 600 it", path,
			(unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* Reads the key from @fd into @k: TSYNC_KEY_MIN to TSYNC_KEY_MAX bytes (the
 * file may have grown since key_check_file()). Returns 0 or -errno with a
 * reason in @err. */
static int key_read(int fd, struct tsync_key *k, const char *path, char *err, size_t errlen)
{
	uint8_t extra;
	ssize_t n;

	while (k->len < sizeof(k->bytes)) {
		n = read(fd, k->bytes + k->len, sizeof(k->bytes) - k->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;

			tsync_set_err(err, errlen, "key file %s: %s", path, strerror(-ret));
			return ret;
		}
		if (n == 0)
			break;
		k->len += (size_t)n;
	}
	if (k->len == sizeof(k->bytes) && read(fd, &extra, 1) == 1) {
		tsync_set_err(err, errlen, "key file %s is longer than %d bytes", path, TSYNC_KEY_MAX);
		return -EFBIG;
	}
	if (k->len < TSYNC_KEY_MIN) {
		tsync_set_err(err, errlen, "key file %s has %zu bytes, at least %d needed "
			"(head -c 32 /dev/urandom > FILE)", path, k->len, TSYNC_KEY_MIN);
		return -EINVAL;
	}
	return 0;
}

/* Reads and checks the key file; see auth.h. */
int tsync_key_load(const char *path, struct tsync_key **out, char *err,
		   size_t errlen)
{
	struct tsync_key *k = NULL;
	int fd, ret;

	fd = key_open(path, err, errlen);
	if (fd < 0)
		return fd;
	ret = key_check_file(fd, path, err, errlen);
	if (ret)
		goto fail;
	k = calloc(1, sizeof(*k));
	if (!k) {
		ret = -ENOMEM;
		tsync_set_err(err, errlen, "out of memory");
		goto fail;
	}
	ret = key_read(fd, k, path, err, errlen);
	if (ret)
		goto fail;
	close(fd);
	*out = k;
	return 0;
fail:
	tsync_key_free(k);
	close(fd);
	return ret;
}

/* Wipes and frees the key; see auth.h. */
void tsync_key_free(struct tsync_key *k)
{
	if (!k)
		return;
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

/* Fresh random bytes; see auth.h. */
int tsync_auth_nonce(uint8_t nonce[TSYNC_NONCE_LEN])
{
	size_t got = 0;

	while (got < TSYNC_NONCE_LEN) {
		ssize_t n = getrandom(nonce + got, TSYNC_NONCE_LEN - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

/* HMAC of the role's label and both nonces; see auth.h. */
int tsync_auth_mac(const struct tsync_key *k, enum tsync_auth_role role,
		   const uint8_t host_nonce[TSYNC_NONCE_LEN],
		   const uint8_t agent_nonce[TSYNC_NONCE_LEN],
		   uint8_t mac[TSYNC_MAC_LEN])
{
	/* Documentation/protocol.md, 6.3: the labels without their NUL */
	static const char agent_label[] = "tsync-agent";
	static const char host_label[] = "tsync-host";
	uint8_t msg[sizeof(agent_label) + 2 * TSYNC_NONCE_LEN];
	const uint8_t *first, *second;
	unsigned int maclen = 0;
	size_t len;

	if (!k || (role != TSYNC_AUTH_AGENT && role != TSYNC_AUTH_HOST))
		return -EINVAL;
	/* the label, then the challenge answered, then the other nonce */
	if (role == TSYNC_AUTH_AGENT) {
		len = sizeof(agent_label) - 1;
		memcpy(msg, agent_label, len);
		first = host_nonce;
		second = agent_nonce;
	} else {
		len = sizeof(host_label) - 1;
		memcpy(msg, host_label, len);
		first = agent_nonce;
		second = host_nonce;
	}
	memcpy(msg + len, first, TSYNC_NONCE_LEN);
	memcpy(msg + len + TSYNC_NONCE_LEN, second, TSYNC_NONCE_LEN);
	len += 2 * TSYNC_NONCE_LEN;
	if (!HMAC(EVP_sha256(), k->bytes, (int)k->len, msg, len, mac, &maclen) ||
	    maclen != TSYNC_MAC_LEN)
		return -EIO;
	return 0;
}

/* Constant-time check of a received MAC; see auth.h. */
bool tsync_auth_check(const struct tsync_key *k, enum tsync_auth_role role,
		      const uint8_t host_nonce[TSYNC_NONCE_LEN],
		      const uint8_t agent_nonce[TSYNC_NONCE_LEN],
		      const uint8_t mac[TSYNC_MAC_LEN])
{
	uint8_t want[TSYNC_MAC_LEN];
	bool ok;

	if (tsync_auth_mac(k, role, host_nonce, agent_nonce, want))
		return false;
	ok = CRYPTO_memcmp(want, mac, TSYNC_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}
