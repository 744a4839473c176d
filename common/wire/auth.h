/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Optional mutual authentication with a shared key (--key-file on both
 * sides): an HMAC-SHA256 challenge-response inside the hello.
 *
 *   host -> agent   HELLO        caps |= AUTH_HMAC, nonce = Nh (random)
 *   agent -> host   HELLO_REPLY  caps |= AUTH_HMAC, nonce = Na (random),
 *                                mac = HMAC(K, "tsync-agent" Nh Na)
 *   host -> agent   AUTH         mac = HMAC(K, "tsync-host" Na Nh)
 *
 * (Documentation/protocol.md, 6.3; the labels without a NUL.)
 *
 * Each side checks the other's MAC in constant time (CRYPTO_memcmp) and
 * closes with ERROR AUTH on a mismatch. The labels differ, so a MAC cannot
 * be reflected back to its sender; both nonces are fresh per connection
 * (getrandom), so a recorded exchange cannot be replayed. An agent with
 * a key requires the exchange on control connections; a data stream may
 * do it too (if its HELLO offers it), and otherwise names its session by
 * its id and 32-byte random secret, which only the authenticated control
 * connection received. Nothing is encrypted: the key proves who is talking, it does
 * not hide what they say.
 *
 * The key is the key file's bytes (at least TSYNC_KEY_MIN, e.g.
 * `head -c 32 /dev/urandom > key`). A key file that group or others may
 * read or write is refused.
 */
#ifndef TSYNC_AUTH_H
#define TSYNC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define TSYNC_KEY_MIN 16
#define TSYNC_KEY_MAX 4096

struct tsync_key;

enum tsync_auth_role {
	TSYNC_AUTH_AGENT = 1,	/* the agent's answer to the host's nonce */
	TSYNC_AUTH_HOST = 2,	/* the host's answer to the agent's nonce */
};

/*
 * Reads the key from @path: a regular file, not accessible by group or
 * others, of TSYNC_KEY_MIN..TSYNC_KEY_MAX bytes. The file is opened
 * without blocking and checked before a byte is read, so a FIFO or device
 * is refused at once instead of waiting for a peer. Returns 0 and the key in
 * @out, or -errno with a one-line reason in @err.
 */
int tsync_key_load(const char *path, struct tsync_key **out, char *err,
		   size_t errlen);
/* Wipes and frees @k (NULL is fine). */
void tsync_key_free(struct tsync_key *k);

/* Fills @nonce with fresh random bytes. Returns 0 or -errno. */
int tsync_auth_nonce(uint8_t nonce[TSYNC_NONCE_LEN]);

/*
 * Computes the MAC @role sends: HMAC-SHA256 over the role's label and the
 * two nonces in the order above. Returns 0 or -EIO.
 */
int tsync_auth_mac(const struct tsync_key *k, enum tsync_auth_role role,
		   const uint8_t host_nonce[TSYNC_NONCE_LEN],
		   const uint8_t agent_nonce[TSYNC_NONCE_LEN],
		   uint8_t mac[TSYNC_MAC_LEN]);
/* Returns true if @mac is what @role must send (constant-time compare). */
bool tsync_auth_check(const struct tsync_key *k, enum tsync_auth_role role,
		      const uint8_t host_nonce[TSYNC_NONCE_LEN],
		      const uint8_t agent_nonce[TSYNC_NONCE_LEN],
		      const uint8_t mac[TSYNC_MAC_LEN]);

#endif
