// SPDX-License-Identifier: GPL-2.0-or-later
/* Allow lists of IP networks and vsock CIDs; see acl.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/vm_sockets.h>

#include "common/base/errbuf.h"
#include "agent/conn/acl.h"

struct ip_rule {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network byte order; 4 bytes for AF_INET */
	unsigned int prefix;	/* 0..32 or 0..128 */
};

struct cid_rule {
	uint32_t lo, hi;	/* inclusive */
};

struct tsync_acl {
	struct ip_rule ip[TSYNC_ACL_MAX_RULES];
	int nip;
	struct cid_rule cid[TSYNC_ACL_MAX_RULES];
	int ncid;
};

static const uint8_t v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* Allocates an empty list; see acl.h. */
struct tsync_acl *tsync_acl_new(void)
{
	return calloc(1, sizeof(struct tsync_acl));
}

/* Frees @acl; see acl.h. */
void tsync_acl_free(struct tsync_acl *acl)
{
	free(acl);
}

/* Returns the rule counts; see acl.h. */
int tsync_acl_ip_rules(const struct tsync_acl *acl)
{
	return acl ? acl->nip : 0;
}

int tsync_acl_cid_rules(const struct tsync_acl *acl)
{
	return acl ? acl->ncid : 0;
}

/* Returns 1 if the first @prefix bits of @a and @b are equal, else 0. */
static int prefix_equal(const uint8_t *a, const uint8_t *b, unsigned int prefix)
{
	unsigned int full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, full))
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((a[full] ^ b[full]) & mask)
			return 0;
	}
	return 1;
}

/* Returns 1 if any bit of @a after the first @prefix bits (of @bits) is
 * set. */
static int host_bits_set(const uint8_t *a, unsigned int prefix, unsigned int bits)
{
	for (unsigned int i = prefix; i < bits; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			return 1;
	return 0;
}

/* Parses a decimal prefix length 0..@max from @s; returns it or -1. */
static int parse_prefix(const char *s, unsigned int max)
{
	unsigned int v = 0;

	if (!*s || strlen(s) > 3)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (unsigned int)(*s - '0');
	}
	return v <= max ? (int)v : -1;
}

/* Adds an IP rule; see acl.h. */
int tsync_acl_add_ip(struct tsync_acl *acl, const char *spec, char *err,
		     size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	struct ip_rule r = { 0 };
	char *addr = buf, *slash;
	unsigned int bits;
	size_t n;

	if (!spec || !*spec) {
		tsync_set_err(err, errlen, "empty address");
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(buf)) {
		tsync_set_err(err, errlen, "'%.60s...' is too long for an address", spec);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	n = strlen(addr);
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr[n - 1] = '\0';
		addr++;
	}
	if (inet_pton(AF_INET, addr, r.addr) == 1) {
		r.family = AF_INET;
		bits = 32;
	} else if (!strchr(addr, '%') && inet_pton(AF_INET6, addr, r.addr) == 1) {
		r.family = AF_INET6;
		bits = 128;
	} else {
		tsync_set_err(err, errlen, "'%s' is not an IPv4 or IPv6 address (ADDR[/PREFIX])",
			spec);
		return -EINVAL;
	}
	r.prefix = bits;
	if (slash) {
		int p = parse_prefix(slash + 1, bits);

		if (p < 0) {
			tsync_set_err(err, errlen, "'%s': prefix '%s' is not a number 0-%u", spec,
				slash + 1, bits);
			return -EINVAL;
		}
		r.prefix = (unsigned int)p;
	}
	if (host_bits_set(r.addr, r.prefix, bits)) {
		tsync_set_err(err, errlen, "'%s' has bits set after the /%u prefix", spec, r.prefix);
		return -EINVAL;
	}
	/* ::ffff:a.b.c.d/N is the IPv4 rule a.b.c.d/(N-96) (see acl.h). */
	if (r.family == AF_INET6 && r.prefix >= 96 &&
	    !memcmp(r.addr, v4mapped_prefix, sizeof(v4mapped_prefix))) {
		memmove(r.addr, r.addr + 12, 4);
		memset(r.addr + 4, 0, 12);
		r.family = AF_INET;
		r.prefix -= 96;
	}
	if (acl->nip >= TSYNC_ACL_MAX_RULES) {
		tsync_set_err(err, errlen, "more than %d address rules", TSYNC_ACL_MAX_RULES);
		return -ENOSPC;
	}
	acl->ip[acl->nip++] = r;
	return 0;
}

/* Parses a CID (decimal, below VMADDR_CID_ANY) from [@s, @end); returns 0
 * or -EINVAL. */
static int parse_cid(const char *s, const char *end, uint32_t *cid)
{
	uint64_t v = 0;

	if (s == end || end - s > 10)
		return -EINVAL;
	for (; s < end; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v >= VMADDR_CID_ANY)
		return -EINVAL;
	*cid = (uint32_t)v;
	return 0;
}

/* Adds CID rules; see acl.h. */
int tsync_acl_add_cids(struct tsync_acl *acl, const char *list, char *err,
		       size_t errlen)
{
	const char *p = list;

	if (!list || !*list) {
		tsync_set_err(err, errlen, "empty CID list");
		return -EINVAL;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		const char *dash;
		struct cid_rule r;
		int len;

		if (!end)
			end = p + strlen(p);
		len = (int)(end - p);
		dash = memchr(p, '-', (size_t)len);
		if (len == 3 && !strncmp(p, "any", 3)) {
			r = (struct cid_rule){ 0, VMADDR_CID_ANY - 1 };
		} else if (dash) {
			if (parse_cid(p, dash, &r.lo) || parse_cid(dash + 1, end, &r.hi) ||
			    r.lo > r.hi) {
				tsync_set_err(err, errlen, "'%.*s' is not a CID range N-M (N <= M)",
					len, p);
				return -EINVAL;
			}
		} else {
			if (parse_cid(p, end, &r.lo)) {
				tsync_set_err(err, errlen, "'%.*s' is not a CID (a number, a range N-M, or any)",
					len, p);
				return -EINVAL;
			}
			r.hi = r.lo;
		}
		if (acl->ncid >= TSYNC_ACL_MAX_RULES) {
			tsync_set_err(err, errlen, "more than %d CID rules", TSYNC_ACL_MAX_RULES);
			return -ENOSPC;
		}
		acl->cid[acl->ncid++] = r;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* Checks an IP address (@family, @addr) against the IP rules. */
static bool ip_allowed(const struct tsync_acl *acl, int family, const uint8_t *addr)
{
	for (int i = 0; i < acl->nip; i++)
		if (acl->ip[i].family == family &&
		    prefix_equal(acl->ip[i].addr, addr, acl->ip[i].prefix))
			return true;
	return false;
}

/* Checks a peer; see acl.h. */
bool tsync_acl_allows(const struct tsync_acl *acl, const struct sockaddr *sa,
		      socklen_t len, char *why, size_t whylen)
{
	if (!acl || !sa) {
		tsync_set_err(why, whylen, "no allow list");
		return false;
	}
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (len < sizeof(*in))
			break;
		if (ip_allowed(acl, AF_INET, (const uint8_t *)&in->sin_addr))
			return true;
		tsync_set_err(why, whylen, "address not in the --allow list");
		return false;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		const uint8_t *a = (const uint8_t *)&in6->sin6_addr;

		if (len < sizeof(*in6))
			break;
		if (!memcmp(a, v4mapped_prefix, sizeof(v4mapped_prefix))) {
			if (ip_allowed(acl, AF_INET, a + 12))
				return true;
		} else if (ip_allowed(acl, AF_INET6, a)) {
			return true;
		}
		tsync_set_err(why, whylen, "address not in the --allow list");
		return false;
	}
	case AF_VSOCK: {
		const struct sockaddr_vm *vm = (const struct sockaddr_vm *)sa;

		if (len < sizeof(*vm))
			break;
		for (int i = 0; i < acl->ncid; i++)
			if (vm->svm_cid >= acl->cid[i].lo && vm->svm_cid <= acl->cid[i].hi)
				return true;
		tsync_set_err(why, whylen, "CID %u not in the --allow-cid list", vm->svm_cid);
		return false;
	}
	default:
		tsync_set_err(why, whylen, "address family %d not allowed", sa->sa_family);
		return false;
	}
	tsync_set_err(why, whylen, "truncated peer address (%u bytes)", (unsigned int)len);
	return false;
}

/* Formats the rules; see acl.h. */
char *tsync_acl_format(const struct tsync_acl *acl, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int i = 0; acl && i < acl->nip && off < len; i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(acl->ip[i].family, acl->ip[i].addr, a, sizeof(a));
		off += (size_t)snprintf(buf + off, len - off, "%s%s/%u", off ? " " : "",
					a, acl->ip[i].prefix);
	}
	for (int i = 0; acl && i < acl->ncid && off < len; i++) {
		if (acl->cid[i].lo == acl->cid[i].hi)
			off += (size_t)snprintf(buf + off, len - off, "%scid %u",
						off ? " " : "", acl->cid[i].lo);
		else
			off += (size_t)snprintf(buf + off, len - off, "%scid %u-%u",
						off ? " " : "", acl->cid[i].lo,
						acl->cid[i].hi);
	}
	return buf;
}
