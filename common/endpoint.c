// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Endpoint strings.
 *
 *   tcp:HOST:PORT     HOST is an IPv4 address, [IPv6] in brackets, or a name
 *   vsock:CID:PORT    CID is any, host, local, hypervisor or a number
 *
 * Parsing is strict: every malformed form gets a reason that names the
 * problem and the value, because this is what a user sees when they mistype.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/vm_sockets.h>
#include <sys/socket.h>

#include "common/endpoint.h"

/* Writes a formatted reason to @err and returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
ep_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
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
		return ep_fail(err, errlen, "port '%s' out of range (1-65535) in '%s'", s, whole);
	if (ret)
		return ep_fail(err, errlen, "port '%s' is not a number in '%s'", s, whole);
	if (v == 0 && !(flags & TSYNC_EP_ALLOW_PORT0))
		return ep_fail(err, errlen, "port 0 is not allowed in '%s'", whole);
	*port = (uint16_t)v;
	return 0;
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
		if (memchr(host, '[', hlen))
			return ep_fail(err, errlen, "unexpected '[' in '%s'", whole);
		for (size_t i = 0; i < hlen; i++)
			if (!isxdigit((unsigned char)host[i]) && host[i] != ':' &&
			    host[i] != '.' && host[i] != '%')
				return ep_fail(err, errlen, "invalid character '%c' in IPv6 address in '%s'",
					       host[i], whole);
	} else {
		colon = strrchr(rest, ':');
		if (!colon)
			return ep_fail(err, errlen, "missing ':PORT' in '%s'", whole);
		hlen = (size_t)(colon - rest);
		if (!hlen)
			return ep_fail(err, errlen, "empty host in '%s'", whole);
		if (memchr(rest, ':', hlen))
			return ep_fail(err, errlen, "IPv6 address must be in brackets in '%s'", whole);
		for (size_t i = 0; i < hlen; i++)
			if (!isalnum((unsigned char)rest[i]) && !strchr(".-_", rest[i]))
				return ep_fail(err, errlen, "invalid character '%c' in host in '%s'",
					       rest[i], whole);
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
			return ep_fail(err, errlen, "CID '%s' is not a number or any/host/local in '%s'",
				       cid, whole);
		ep->cid = (uint32_t)v;
	}
	ep->kind = TSYNC_EP_VSOCK;
	return parse_port(colon + 1, whole, flags, &ep->port, err, errlen);
}

/* Parses an endpoint string; see endpoint.h. */
int tsync_endpoint_parse(const char *str, unsigned int flags,
			 struct tsync_endpoint *ep, char *err, size_t errlen)
{
	unsigned long long v;

	memset(ep, 0, sizeof(*ep));
	if (!str || !*str)
		return ep_fail(err, errlen, "empty endpoint");
	if (!strncmp(str, "tcp:", 4))
		return parse_tcp(str + 4, str, flags, ep, err, errlen);
	if (!strncmp(str, "vsock:", 6))
		return parse_vsock(str + 6, str, flags, ep, err, errlen);
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
		if (strchr(str, ':') && !strstr(str, "://"))
			return parse_tcp(str, str, flags, ep, err, errlen);
	}
	{
		const char *colon = strchr(str, ':');
		int n = colon ? (int)(colon - str) : (int)strlen(str);

		if (colon)
			return ep_fail(err, errlen, "unknown scheme '%.*s' in '%s' (use tcp: or vsock:)",
				       n, str, str);
		return ep_fail(err, errlen, "'%s' is not an endpoint (use tcp:HOST:PORT or vsock:CID:PORT)",
			       str);
	}
}

/* Formats @ep as a string; see endpoint.h. */
char *tsync_endpoint_format(const struct tsync_endpoint *ep, char *buf,
			    size_t len)
{
	if (ep->kind == TSYNC_EP_VSOCK)
		snprintf(buf, len, "vsock:%u:%u", ep->cid, ep->port);
	else if (strchr(ep->host, ':'))
		snprintf(buf, len, "tcp:[%s]:%u", ep->host, ep->port);
	else
		snprintf(buf, len, "tcp:%s:%u", ep->host, ep->port);
	return buf;
}
