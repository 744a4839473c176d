/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who may connect: allow lists of IP networks (IPv4 and IPv6, with prefix)
 * and vsock CIDs. Pure code: parsing and matching, no I/O, no globals.
 *
 * An IPv4-mapped IPv6 peer (::ffff:a.b.c.d, what a dual-stack socket
 * reports for an IPv4 client) is matched as the IPv4 address a.b.c.d
 * against the IPv4 rules only; an IPv6 rule written as ::ffff:a.b.c.d/N
 * is stored as the IPv4 rule a.b.c.d/(N-96). So one address is never
 * allowed under one spelling and refused under the other.
 */
#ifndef TSYNC_ACL_H
#define TSYNC_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Most rules of each kind one allow list holds. */
#define TSYNC_ACL_MAX_RULES 256

struct tsync_acl;

/* Allocates an empty allow list (allows nothing). Returns NULL on ENOMEM. */
struct tsync_acl *tsync_acl_new(void);
/* Frees @acl (NULL is fine). */
void tsync_acl_free(struct tsync_acl *acl);

/*
 * Adds an IP rule "ADDR" or "ADDR/PREFIX" (IPv4 dotted quad or IPv6, which
 * may be in brackets; no host names, no zone ids). Bits after the prefix
 * must be zero. Returns 0, or -EINVAL/-ENOSPC with a one-line reason in
 * @err.
 */
int tsync_acl_add_ip(struct tsync_acl *acl, const char *spec, char *err,
		     size_t errlen);
/*
 * Adds vsock CIDs from a comma-separated @list of "N", "N-M" (inclusive)
 * or "any". Returns 0, or -EINVAL/-ENOSPC with a reason in @err.
 */
int tsync_acl_add_cids(struct tsync_acl *acl, const char *list, char *err,
		       size_t errlen);

/* Returns the number of IP rules / CID rules in @acl. */
int tsync_acl_ip_rules(const struct tsync_acl *acl);
int tsync_acl_cid_rules(const struct tsync_acl *acl);

/*
 * Checks the peer address @sa (AF_INET, AF_INET6 or AF_VSOCK) against
 * @acl. Returns true if allowed; false otherwise with the reason in @why
 * (if not NULL).
 */
bool tsync_acl_allows(const struct tsync_acl *acl, const struct sockaddr *sa,
		      socklen_t len, char *why, size_t whylen);

/* Formats the rules of @acl ("127.0.0.1/32 ::1/128 cid 2") into @buf;
 * returns @buf. */
char *tsync_acl_format(const struct tsync_acl *acl, char *buf, size_t len);

#endif
