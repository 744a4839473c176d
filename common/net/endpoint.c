// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Endpoint strings.
 *
 *   tcp:HOST:PORT     HOST is an IPv4 address, [IPv6] in brackets, or a name
 *   vsock:CID:PORT    CID is any, host, local, hypervisor or a number
 *   hvsock:PATH:PORT  PATH is the Unix socket of a Firecracker or
 *                     cloud-hypervisor guest's vsock device, PORT the
 *                     guest's vsock port (connect only)
 *
 * Parsing is strict: every malformed form gets a reason that names the
 * problem and the value, because this is what a user sees when they mistype.
 */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/vm_sockets.h>
#include <sys/socket.h>

#include "common/net/endpoint.h"

/*
 * Writes a formatted reason to @err and returns -EINVAL. Control characters
 * from the user's input become '?', so the reason is always one line.
 */
static int __attribute__((format(printf, 3, 4)))
ep_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		for (char *c = err; *c; c++)
			if (iscntrl((unsigned char)*c))
				*c = '?';
	}
	return -EINVAL;
}

/*
 * Parses a decimal unsigned number that must fill all of @s, at most @max.
 * Returns 0 and sets @out, -EINVAL for junk or empty, -ERANGE above @max.
 */
static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return -ERANGE;
	}
	*out = v;
	return 0;
}

/* Parses the port field; returns 0 or -EINVAL with a reason in @err. */
static int parse_port(const char *s, const char *whole, unsigned int flags,
		      uint16_t *port, char *err, size_t errlen)
{
	unsigned long long v;
	int ret;

	if (!*s)
		return ep_fail(err, errlen, "empty port in '%s'", whole);
	ret = parse_uint(s, 65535, &v);
	if (ret == -ERANGE)
		return ep_fail(err, errlen, "port '%s' out of range (%d-65535) in '%s'", s,
			       (flags & TSYNC_EP_ALLOW_PORT0) ? 0 : 1, whole);
	if (ret)
		return ep_fail(err, errlen, "port '%s' is not a number in '%s'", s, whole);
	if (v == 0 && !(flags & TSYNC_EP_ALLOW_PORT0))
		return ep_fail(err, errlen, "port 0 is not allowed in '%s'", whole);
	*port = (uint16_t)v;
	return 0;
}

/* Writes @c to @buf (5 bytes) as itself if printable, else as \xNN. */
static const char *show_char(char c, char *buf)
{
	if (isprint((unsigned char)c))
		snprintf(buf, 4, "%c", c);
	else
		snprintf(buf, 5, "\\x%02x", (unsigned char)c);
	return buf;
}

/*
 * Checks the inside of "[...]": an IPv6 address, optionally followed by
 * "%ZONE" (an interface name or number). Returns 0 or -EINVAL with a reason.
 */
static int check_ipv6(const char *host, size_t hlen, const char *whole,
		      char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 1], ch[5];
	const char *pct = memchr(host, '%', hlen);
	size_t alen = pct ? (size_t)(pct - host) : hlen;
	struct in6_addr a6;

	if (alen >= sizeof(addr))
		return ep_fail(err, errlen, "invalid IPv6 address '%.*s' in '%s'",
			       (int)alen, host, whole);
	memcpy(addr, host, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET6, addr, &a6) != 1)
		return ep_fail(err, errlen, "invalid IPv6 address '%s' in '%s'", addr, whole);
	if (!pct)
		return 0;
	if (pct + 1 == host + hlen)
		return ep_fail(err, errlen, "empty IPv6 zone after '%%' in '%s'", whole);
	for (const char *c = pct + 1; c < host + hlen; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-_", *c))
			return ep_fail(err, errlen, "invalid character '%s' in IPv6 zone in '%s'",
				       show_char(*c, ch), whole);
	return 0;
}

/*
 * Checks a host name or IPv4 address. Something made only of digits and
 * dots must be a dotted-quad IPv4 address (getaddrinfo would otherwise
 * take "10.1" or "3" as inet_aton shorthands). Returns 0 or -EINVAL.
 */
static int check_host(const char *host, size_t hlen, const char *whole,
		      char *err, size_t errlen)
{
	char ch[5], addr[INET_ADDRSTRLEN + 1];
	struct in_addr a4;
	bool numeric = true;

	for (size_t i = 0; i < hlen; i++) {
		if (!isalnum((unsigned char)host[i]) && !strchr(".-_", host[i]))
			return ep_fail(err, errlen, "invalid character '%s' in host in '%s'",
				       show_char(host[i], ch), whole);
		if (!isdigit((unsigned char)host[i]) && host[i] != '.')
			numeric = false;
	}
	if (!numeric)
		return 0;
	if (hlen < sizeof(addr)) {
		memcpy(addr, host, hlen);
		addr[hlen] = '\0';
		if (inet_pton(AF_INET, addr, &a4) == 1)
			return 0;
	}
	return ep_fail(err, errlen, "invalid IPv4 address '%.*s' in '%s'", (int)hlen, host, whole);
}

/* Parses "HOST:PORT" or "[V6]:PORT" after "tcp:". */
static int parse_tcp(const char *rest, const char *whole, unsigned int flags,
		     struct tsync_endpoint *ep, char *err, size_t errlen)
{
	const char *colon, *host = rest;
	size_t hlen;

	if (*rest == '[') {
		const char *close = strchr(rest, ']');

		if (!close)
			return ep_fail(err, errlen, "missing ']' after IPv6 address in '%s'", whole);
		host = rest + 1;
		hlen = (size_t)(close - host);
		if (!hlen)
			return ep_fail(err, errlen, "empty IPv6 address in '%s'", whole);
		if (close[1] != ':')
			return ep_fail(err, errlen, "expected ':PORT' after ']' in '%s'", whole);
		colon = close + 1;
		if (check_ipv6(host, hlen, whole, err, errlen))
			return -EINVAL;
	} else {
		colon = strrchr(rest, ':');
		if (!colon)
			return ep_fail(err, errlen, "missing ':PORT' in '%s'", whole);
		hlen = (size_t)(colon - rest);
		if (!hlen)
			return ep_fail(err, errlen, "empty host in '%s'", whole);
		if (memchr(rest, ':', hlen))
			return ep_fail(err, errlen, "IPv6 address must be in brackets in '%s'", whole);
		if (check_host(rest, hlen, whole, err, errlen))
			return -EINVAL;
	}
	if (hlen >= sizeof(ep->host))
		return ep_fail(err, errlen, "host name too long (%zu bytes) in '%s'", hlen, whole);
	memcpy(ep->host, host, hlen);
	ep->host[hlen] = '\0';
	ep->kind = TSYNC_EP_TCP;
	return parse_port(colon + 1, whole, flags, &ep->port, err, errlen);
}

/* Parses "CID:PORT" after "vsock:". */
static int parse_vsock(const char *rest, const char *whole, unsigned int flags,
		       struct tsync_endpoint *ep, char *err, size_t errlen)
{
	const char *colon = strchr(rest, ':');
	char cid[32];
	size_t clen;
	unsigned long long v;
	int ret;

	if (!colon)
		return ep_fail(err, errlen, "missing ':PORT' in '%s'", whole);
	clen = (size_t)(colon - rest);
	if (!clen)
		return ep_fail(err, errlen, "empty CID in '%s'", whole);
	if (clen >= sizeof(cid))
		return ep_fail(err, errlen, "CID too long in '%s'", whole);
	memcpy(cid, rest, clen);
	cid[clen] = '\0';
	if (!strcmp(cid, "any"))
		ep->cid = VMADDR_CID_ANY;
	else if (!strcmp(cid, "host"))
		ep->cid = VMADDR_CID_HOST;
	else if (!strcmp(cid, "local"))
		ep->cid = 1;	/* VMADDR_CID_LOCAL */
	else if (!strcmp(cid, "hypervisor"))
		ep->cid = VMADDR_CID_HYPERVISOR;
	else {
		ret = parse_uint(cid, 0xfffffffeULL, &v);
		if (ret == -ERANGE)
			return ep_fail(err, errlen, "CID '%s' out of range (0-4294967294) in '%s'", cid, whole);
		if (ret)
			return ep_fail(err, errlen, "CID '%s' is not a number or any/host/local/hypervisor in '%s'",
				       cid, whole);
		ep->cid = (uint32_t)v;
	}
	ep->kind = TSYNC_EP_VSOCK;
	return parse_port(colon + 1, whole, flags, &ep->port, err, errlen);
}

/*
 * Parses "PATH:PORT" after "hvsock:". PATH runs to the last ':' (a path
 * may hold colons, a port never does) and must fit a sockaddr_un.
 */
static int parse_hvsock(const char *rest, const char *whole, unsigned int flags,
			struct tsync_endpoint *ep, char *err, size_t errlen)
{
	const char *colon = strrchr(rest, ':');
	size_t plen;
	char ch[5];

	if (flags & TSYNC_EP_LISTEN)
		return ep_fail(err, errlen, "cannot listen on '%s': hvsock is how a host reaches "
			       "a Firecracker or cloud-hypervisor guest; in the guest, listen on "
			       "vsock:any:PORT", whole);
	if (!colon)
		return ep_fail(err, errlen, "missing ':PORT' in '%s'", whole);
	plen = (size_t)(colon - rest);
	if (!plen)
		return ep_fail(err, errlen, "empty socket path in '%s'", whole);
	if (plen >= sizeof(ep->path))
		return ep_fail(err, errlen, "socket path too long (%zu bytes, at most %zu) in '%s'",
			       plen, sizeof(ep->path) - 1, whole);
	for (size_t i = 0; i < plen; i++)
		if (iscntrl((unsigned char)rest[i]))
			return ep_fail(err, errlen, "invalid character '%s' in socket path in '%s'",
				       show_char(rest[i], ch), whole);
	memcpy(ep->path, rest, plen);
	ep->path[plen] = '\0';
	ep->kind = TSYNC_EP_HVSOCK;
	return parse_port(colon + 1, whole, flags, &ep->port, err, errlen);
}

/*
 * Explains why @str, which has no known scheme, is not an endpoint: an
 * unknown "word:" scheme, or a missing scheme. Returns -EINVAL.
 */
static int unknown_form(const char *str, unsigned int flags, char *err,
			size_t errlen)
{
	const char *colon = strchr(str, ':');
	const char *forms = (flags & TSYNC_EP_LISTEN) ?
		"tcp:HOST:PORT or vsock:CID:PORT" :
		(flags & TSYNC_EP_AGENT_SHORTHAND) ?
		"tcp:HOST:PORT, vsock:CID:PORT, hvsock:PATH:PORT, HOST:PORT or CID" :
		"tcp:HOST:PORT, vsock:CID:PORT or hvsock:PATH:PORT";
	bool word = colon && colon > str;

	for (const char *c = str; word && c < colon; c++)
		if (!isalpha((unsigned char)*c))
			word = false;
	if (word)
		return ep_fail(err, errlen, "unknown scheme '%.*s' in '%s': use %s",
			       (int)(colon - str), str, str, forms);
	return ep_fail(err, errlen, "'%s' is not an endpoint: use %s", str, forms);
}

/*
 * In the agent shorthand, tells "udp:1.2.3.4:80" (a scheme this parser
 * does not know) from "HOST:PORT": a word of letters, a colon, and more
 * colons after it, that is not an unbracketed IPv6 address ("abcd::1:80",
 * which gets the brackets advice instead).
 */
static bool looks_like_scheme(const char *str)
{
	const char *colon = strchr(str, ':'), *last = strrchr(str, ':');
	struct in6_addr a6;
	char v6[INET6_ADDRSTRLEN + 1];

	if (!colon || colon == str || last == colon)
		return false;
	for (const char *c = str; c < colon; c++)
		if (!isalpha((unsigned char)*c))
			return false;
	if ((size_t)(last - str) < sizeof(v6)) {
		memcpy(v6, str, (size_t)(last - str));
		v6[last - str] = '\0';
		if (inet_pton(AF_INET6, v6, &a6) == 1)
			return false;
	}
	return true;
}

/* The schemes, each with its parser. */
static const struct {
	const char *prefix;
	int (*parse)(const char *rest, const char *whole, unsigned int flags,
		     struct tsync_endpoint *ep, char *err, size_t errlen);
} schemes[] = {
	{ "tcp:", parse_tcp },
	{ "vsock:", parse_vsock },
	{ "hvsock:", parse_hvsock },
};

/* Returns the index in schemes[] of the scheme @str starts with, or -1. */
static int scheme_of(const char *str)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncmp(str, schemes[i].prefix, strlen(schemes[i].prefix)))
			return (int)i;
	return -1;
}

/* True if @str starts with a known scheme; see endpoint.h. */
bool tsync_endpoint_has_scheme(const char *str)
{
	return str && scheme_of(str) >= 0;
}

/* True if @ep's ports are vsock ports; see endpoint.h. */
bool tsync_endpoint_vsock_ports(const struct tsync_endpoint *ep)
{
	return ep->kind == TSYNC_EP_VSOCK || ep->kind == TSYNC_EP_HVSOCK;
}

/* Parses an endpoint string; see endpoint.h. */
int tsync_endpoint_parse(const char *str, unsigned int flags,
			 struct tsync_endpoint *ep, char *err, size_t errlen)
{
	unsigned long long v;
	int s;

	memset(ep, 0, sizeof(*ep));
	if (!str || !*str)
		return ep_fail(err, errlen, "empty endpoint");
	s = scheme_of(str);
	if (s >= 0)
		return schemes[s].parse(str + strlen(schemes[s].prefix), str, flags, ep, err,
					errlen);
	if (flags & TSYNC_EP_AGENT_SHORTHAND) {
		int ret = parse_uint(str, 0xfffffffeULL, &v);

		if (!ret) {
			ep->kind = TSYNC_EP_VSOCK;
			ep->cid = (uint32_t)v;
			ep->port = TSYNC_DEFAULT_PORT;
			return 0;
		}
		if (ret == -ERANGE)
			return ep_fail(err, errlen, "CID '%s' out of range (0-4294967294)", str);
		if (strchr(str, ':') && !strstr(str, "://") && !looks_like_scheme(str))
			return parse_tcp(str, str, flags, ep, err, errlen);
	}
	return unknown_form(str, flags, err, errlen);
}

/* Formats @ep as a string; see endpoint.h. */
char *tsync_endpoint_format(const struct tsync_endpoint *ep, char *buf,
			    size_t len)
{
	if (ep->kind == TSYNC_EP_HVSOCK)
		snprintf(buf, len, "hvsock:%s:%u", ep->path,
			 ep->vsock_port32 ? ep->vsock_port32 : ep->port);
	else if (ep->kind == TSYNC_EP_VSOCK && ep->cid == VMADDR_CID_ANY)
		snprintf(buf, len, "vsock:any:%u", ep->port);
	else if (ep->kind == TSYNC_EP_VSOCK)
		snprintf(buf, len, "vsock:%u:%u", ep->cid,
			 ep->vsock_port32 ? ep->vsock_port32 : ep->port);
	else if (strchr(ep->host, ':'))
		snprintf(buf, len, "tcp:[%s]:%u", ep->host, ep->port);
	else
		snprintf(buf, len, "tcp:%s:%u", ep->host, ep->port);
	return buf;
}
