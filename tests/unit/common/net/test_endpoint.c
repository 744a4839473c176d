// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Endpoint parsing and formatting: every valid form, and malformed ones
 * with the exact reason the user would see.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <linux/vm_sockets.h>

#include "common/net/endpoint.h"

#define ANY 0xffffffffu
#define P0 TSYNC_EP_ALLOW_PORT0
#define SH TSYNC_EP_AGENT_SHORTHAND
#define L TSYNC_EP_LISTEN

struct valid_case {
	const char *str;
	unsigned int flags;
	enum tsync_ep_kind kind;
	const char *host;	/* TCP */
	uint32_t cid;		/* vsock */
	uint16_t port;
	const char *formatted;	/* tsync_endpoint_format() of the result */
};

static const struct valid_case valid[] = {
	/* TCP, IPv4 */
	{ "tcp:127.0.0.1:8823", 0, TSYNC_EP_TCP, "127.0.0.1", 0, 8823, "tcp:127.0.0.1:8823" },
	{ "tcp:0.0.0.0:1", 0, TSYNC_EP_TCP, "0.0.0.0", 0, 1, "tcp:0.0.0.0:1" },
	{ "tcp:255.255.255.255:65535", 0, TSYNC_EP_TCP, "255.255.255.255", 0, 65535,
	  "tcp:255.255.255.255:65535" },
	{ "tcp:10.0.0.2:00080", 0, TSYNC_EP_TCP, "10.0.0.2", 0, 80, "tcp:10.0.0.2:80" },
	/* TCP, IPv6 in brackets */
	{ "tcp:[::1]:80", 0, TSYNC_EP_TCP, "::1", 0, 80, "tcp:[::1]:80" },
	{ "tcp:[::]:8823", 0, TSYNC_EP_TCP, "::", 0, 8823, "tcp:[::]:8823" },
	{ "tcp:[2001:db8::42]:443", 0, TSYNC_EP_TCP, "2001:db8::42", 0, 443,
	  "tcp:[2001:db8::42]:443" },
	{ "tcp:[::ffff:192.0.2.1]:9", 0, TSYNC_EP_TCP, "::ffff:192.0.2.1", 0, 9,
	  "tcp:[::ffff:192.0.2.1]:9" },
	{ "tcp:[fe80::1%eth0]:80", 0, TSYNC_EP_TCP, "fe80::1%eth0", 0, 80,
	  "tcp:[fe80::1%eth0]:80" },
	{ "tcp:[fe80::1%2]:80", 0, TSYNC_EP_TCP, "fe80::1%2", 0, 80, "tcp:[fe80::1%2]:80" },
	/* TCP, names */
	{ "tcp:localhost:1", 0, TSYNC_EP_TCP, "localhost", 0, 1, "tcp:localhost:1" },
	{ "tcp:guest-1.example_lab.org:8823", 0, TSYNC_EP_TCP, "guest-1.example_lab.org", 0,
	  8823, "tcp:guest-1.example_lab.org:8823" },
	{ "tcp:vm3:2000", 0, TSYNC_EP_TCP, "vm3", 0, 2000, "tcp:vm3:2000" },
	{ "tcp:1e100.net:80", 0, TSYNC_EP_TCP, "1e100.net", 0, 80, "tcp:1e100.net:80" },
	/* port 0 only when allowed */
	{ "tcp:127.0.0.1:0", P0, TSYNC_EP_TCP, "127.0.0.1", 0, 0, "tcp:127.0.0.1:0" },
	{ "tcp:[::1]:0", P0, TSYNC_EP_TCP, "::1", 0, 0, "tcp:[::1]:0" },
	{ "vsock:any:0", P0, TSYNC_EP_VSOCK, NULL, ANY, 0, "vsock:any:0" },
	/* vsock */
	{ "vsock:any:8823", 0, TSYNC_EP_VSOCK, NULL, VMADDR_CID_ANY, 8823, "vsock:any:8823" },
	{ "vsock:host:1024", 0, TSYNC_EP_VSOCK, NULL, VMADDR_CID_HOST, 1024, "vsock:2:1024" },
	{ "vsock:local:5", 0, TSYNC_EP_VSOCK, NULL, 1, 5, "vsock:1:5" },
	{ "vsock:hypervisor:7", 0, TSYNC_EP_VSOCK, NULL, VMADDR_CID_HYPERVISOR, 7, "vsock:0:7" },
	{ "vsock:3:1024", 0, TSYNC_EP_VSOCK, NULL, 3, 1024, "vsock:3:1024" },
	{ "vsock:0:1", 0, TSYNC_EP_VSOCK, NULL, 0, 1, "vsock:0:1" },
	{ "vsock:4294967294:65535", 0, TSYNC_EP_VSOCK, NULL, 4294967294u, 65535,
	  "vsock:4294967294:65535" },
	/* agent shorthand: a bare number is a vsock CID on the default port */
	{ "3", SH, TSYNC_EP_VSOCK, NULL, 3, TSYNC_DEFAULT_PORT, "vsock:3:8823" },
	{ "0", SH, TSYNC_EP_VSOCK, NULL, 0, TSYNC_DEFAULT_PORT, "vsock:0:8823" },
	{ "4294967294", SH, TSYNC_EP_VSOCK, NULL, 4294967294u, TSYNC_DEFAULT_PORT,
	  "vsock:4294967294:8823" },
	/* ... and HOST:PORT is TCP */
	{ "guest1:2000", SH, TSYNC_EP_TCP, "guest1", 0, 2000, "tcp:guest1:2000" },
	{ "10.0.0.2:8823", SH, TSYNC_EP_TCP, "10.0.0.2", 0, 8823, "tcp:10.0.0.2:8823" },
	{ "[::1]:2000", SH, TSYNC_EP_TCP, "::1", 0, 2000, "tcp:[::1]:2000" },
	{ "localhost:0", SH | P0, TSYNC_EP_TCP, "localhost", 0, 0, "tcp:localhost:0" },
	/* full forms still work with the shorthand flag */
	{ "tcp:h:1", SH, TSYNC_EP_TCP, "h", 0, 1, "tcp:h:1" },
	{ "vsock:any:8823", SH, TSYNC_EP_VSOCK, NULL, ANY, 8823, "vsock:any:8823" },
	/* TSYNC_EP_LISTEN takes the forms one can listen on */
	{ "tcp:127.0.0.1:0", L | P0, TSYNC_EP_TCP, "127.0.0.1", 0, 0, "tcp:127.0.0.1:0" },
	{ "vsock:any:823", L, TSYNC_EP_VSOCK, NULL, ANY, 823, "vsock:any:823" },
};

/* hvsock: a Firecracker or cloud-hypervisor guest's Unix socket. */
struct hvsock_case {
	const char *str;
	unsigned int flags;
	const char *path;
	uint16_t port;
	const char *formatted;
};

static const struct hvsock_case hvsock[] = {
	{ "hvsock:/run/fc/v.sock:8823", 0, "/run/fc/v.sock", 8823, "hvsock:/run/fc/v.sock:8823" },
	{ "hvsock:./v.sock:1", 0, "./v.sock", 1, "hvsock:./v.sock:1" },
	{ "hvsock:v:65535", 0, "v", 65535, "hvsock:v:65535" },
	/* the port follows the last colon: a path may hold colons and spaces */
	{ "hvsock:/tmp/a:b c/v.sock:823", 0, "/tmp/a:b c/v.sock", 823,
	  "hvsock:/tmp/a:b c/v.sock:823" },
	{ "hvsock:/v.sock:08823", SH, "/v.sock", 8823, "hvsock:/v.sock:8823" },
	{ "hvsock:/v.sock:8823", P0, "/v.sock", 8823, "hvsock:/v.sock:8823" },
};

struct bad_case {
	const char *str;
	unsigned int flags;
	const char *err;
};

#define FORMS ": use tcp:HOST:PORT, vsock:CID:PORT or hvsock:PATH:PORT"
#define SFORMS ": use tcp:HOST:PORT, vsock:CID:PORT, hvsock:PATH:PORT, HOST:PORT or CID"
#define LFORMS ": use tcp:HOST:PORT or vsock:CID:PORT"
#define NOLISTEN ": hvsock is how a host reaches a Firecracker or cloud-hypervisor guest; " \
		 "in the guest, listen on vsock:any:PORT"

static const struct bad_case bad[] = {
	{ "", 0, "empty endpoint" },
	{ "", SH, "empty endpoint" },
	/* TCP structure */
	{ "tcp:", 0, "missing ':PORT' in 'tcp:'" },
	{ "tcp:localhost", 0, "missing ':PORT' in 'tcp:localhost'" },
	{ "tcp::80", 0, "empty host in 'tcp::80'" },
	{ "tcp:localhost:", 0, "empty port in 'tcp:localhost:'" },
	/* TCP ports */
	{ "tcp:localhost:0", 0, "port 0 is not allowed in 'tcp:localhost:0'" },
	{ "tcp:localhost:00", 0, "port 0 is not allowed in 'tcp:localhost:00'" },
	{ "tcp:localhost:65536", 0,
	  "port '65536' out of range (1-65535) in 'tcp:localhost:65536'" },
	{ "tcp:localhost:65536", P0,
	  "port '65536' out of range (0-65535) in 'tcp:localhost:65536'" },
	{ "tcp:h:99999999999999999999999", 0,
	  "port '99999999999999999999999' out of range (1-65535) in 'tcp:h:99999999999999999999999'" },
	{ "tcp:localhost:80x", 0, "port '80x' is not a number in 'tcp:localhost:80x'" },
	{ "tcp:localhost:-1", 0, "port '-1' is not a number in 'tcp:localhost:-1'" },
	{ "tcp:localhost:+80", 0, "port '+80' is not a number in 'tcp:localhost:+80'" },
	{ "tcp:localhost: 80", 0, "port ' 80' is not a number in 'tcp:localhost: 80'" },
	{ "tcp:localhost:80\n", 0, "port '80?' is not a number in 'tcp:localhost:80?'" },
	{ "tcp:localhost:0x50", 0, "port '0x50' is not a number in 'tcp:localhost:0x50'" },
	/* IPv6 */
	{ "tcp:::1:80", 0, "IPv6 address must be in brackets in 'tcp:::1:80'" },
	{ "tcp:fe80::1:80", 0, "IPv6 address must be in brackets in 'tcp:fe80::1:80'" },
	{ "tcp:[::1:80", 0, "missing ']' after IPv6 address in 'tcp:[::1:80'" },
	{ "tcp:[]:80", 0, "empty IPv6 address in 'tcp:[]:80'" },
	{ "tcp:[::1]80", 0, "expected ':PORT' after ']' in 'tcp:[::1]80'" },
	{ "tcp:[::1]", 0, "expected ':PORT' after ']' in 'tcp:[::1]'" },
	{ "tcp:[::1]:", 0, "empty port in 'tcp:[::1]:'" },
	{ "tcp:[::1]:0", 0, "port 0 is not allowed in 'tcp:[::1]:0'" },
	{ "tcp:[::g]:80", 0, "invalid IPv6 address '::g' in 'tcp:[::g]:80'" },
	{ "tcp:[1:2:3:4:5:6:7:8:9]:80", 0,
	  "invalid IPv6 address '1:2:3:4:5:6:7:8:9' in 'tcp:[1:2:3:4:5:6:7:8:9]:80'" },
	{ "tcp:[1.2.3.4]:80", 0, "invalid IPv6 address '1.2.3.4' in 'tcp:[1.2.3.4]:80'" },
	{ "tcp:[localhost]:80", 0, "invalid IPv6 address 'localhost' in 'tcp:[localhost]:80'" },
	{ "tcp:[fe80::1%]:80", 0, "empty IPv6 zone after '%' in 'tcp:[fe80::1%]:80'" },
	{ "tcp:[fe80::1%e/0]:80", 0,
	  "invalid character '/' in IPv6 zone in 'tcp:[fe80::1%e/0]:80'" },
	/* host names and IPv4 */
	{ "tcp:a b:80", 0, "invalid character ' ' in host in 'tcp:a b:80'" },
	{ "tcp:a\tb:80", 0, "invalid character '\\x09' in host in 'tcp:a?b:80'" },
	{ "tcp:h/x:80", 0, "invalid character '/' in host in 'tcp:h/x:80'" },
	{ "tcp:a]:80", 0, "invalid character ']' in host in 'tcp:a]:80'" },
	{ "tcp:300.1.2.3:80", 0, "invalid IPv4 address '300.1.2.3' in 'tcp:300.1.2.3:80'" },
	{ "tcp:10.1:80", 0, "invalid IPv4 address '10.1' in 'tcp:10.1:80'" },
	{ "tcp:1.2.3.4.5:80", 0, "invalid IPv4 address '1.2.3.4.5' in 'tcp:1.2.3.4.5:80'" },
	{ "tcp:3:80", 0, "invalid IPv4 address '3' in 'tcp:3:80'" },
	/* vsock */
	{ "vsock:", 0, "missing ':PORT' in 'vsock:'" },
	{ "vsock:3", 0, "missing ':PORT' in 'vsock:3'" },
	{ "vsock::80", 0, "empty CID in 'vsock::80'" },
	{ "vsock:3:", 0, "empty port in 'vsock:3:'" },
	{ "vsock:4294967295:80", 0,
	  "CID '4294967295' out of range (0-4294967294) in 'vsock:4294967295:80'" },
	{ "vsock:99999999999999999999:80", 0,
	  "CID '99999999999999999999' out of range (0-4294967294) in 'vsock:99999999999999999999:80'" },
	{ "vsock:-1:80", 0,
	  "CID '-1' is not a number or any/host/local/hypervisor in 'vsock:-1:80'" },
	{ "vsock:ANY:80", 0,
	  "CID 'ANY' is not a number or any/host/local/hypervisor in 'vsock:ANY:80'" },
	{ "vsock:3x:80", 0,
	  "CID '3x' is not a number or any/host/local/hypervisor in 'vsock:3x:80'" },
	{ "vsock:123456789012345678901234567890123:80", 0,
	  "CID too long in 'vsock:123456789012345678901234567890123:80'" },
	{ "vsock:3:0", 0, "port 0 is not allowed in 'vsock:3:0'" },
	{ "vsock:any:0", 0, "port 0 is not allowed in 'vsock:any:0'" },
	{ "vsock:3:65536", 0, "port '65536' out of range (1-65535) in 'vsock:3:65536'" },
	{ "vsock:3:80:1", 0, "port '80:1' is not a number in 'vsock:3:80:1'" },
	/* schemes */
	{ "udp:1.2.3.4:80", 0, "unknown scheme 'udp' in 'udp:1.2.3.4:80'" FORMS },
	{ "TCP:1.2.3.4:80", 0, "unknown scheme 'TCP' in 'TCP:1.2.3.4:80'" FORMS },
	{ "vsok:3:80", 0, "unknown scheme 'vsok' in 'vsok:3:80'" FORMS },
	{ "1.2.3.4:80", 0, "'1.2.3.4:80' is not an endpoint" FORMS },
	{ " tcp:h:80", 0, "' tcp:h:80' is not an endpoint" FORMS },
	{ ":80", 0, "':80' is not an endpoint" FORMS },
	{ "3", 0, "'3' is not an endpoint" FORMS },
	{ "tcp", 0, "'tcp' is not an endpoint" FORMS },
	/* agent shorthand */
	{ "4294967295", SH, "CID '4294967295' out of range (0-4294967294)" },
	{ "guest", SH, "'guest' is not an endpoint" SFORMS },
	{ "3x", SH, "'3x' is not an endpoint" SFORMS },
	{ "-3", SH, "'-3' is not an endpoint" SFORMS },
	{ "http://x:80", SH, "unknown scheme 'http' in 'http://x:80'" SFORMS },
	/* a scheme in the shorthand: not "HOST:PORT" with an IPv6 host */
	{ "udp:1.2.3.4:5", SH, "unknown scheme 'udp' in 'udp:1.2.3.4:5'" SFORMS },
	{ "vsok:3:80", SH, "unknown scheme 'vsok' in 'vsok:3:80'" SFORMS },
	{ "abcd::1:80", SH, "IPv6 address must be in brackets in 'abcd::1:80'" },
	{ "guest:", SH, "empty port in 'guest:'" },
	{ ":80", SH, "empty host in ':80'" },
	{ "::1:80", SH, "IPv6 address must be in brackets in '::1:80'" },
	{ "guest:0", SH, "port 0 is not allowed in 'guest:0'" },
	/* hvsock */
	{ "hvsock:", 0, "missing ':PORT' in 'hvsock:'" },
	{ "hvsock:/run/v.sock", 0, "missing ':PORT' in 'hvsock:/run/v.sock'" },
	{ "hvsock::8823", 0, "empty socket path in 'hvsock::8823'" },
	{ "hvsock:/v.sock:", 0, "empty port in 'hvsock:/v.sock:'" },
	{ "hvsock:/v.sock:0", 0, "port 0 is not allowed in 'hvsock:/v.sock:0'" },
	{ "hvsock:/v.sock:65536", 0,
	  "port '65536' out of range (1-65535) in 'hvsock:/v.sock:65536'" },
	{ "hvsock:/v.sock:x", 0, "port 'x' is not a number in 'hvsock:/v.sock:x'" },
	{ "hvsock:/v.sock: 1", 0, "port ' 1' is not a number in 'hvsock:/v.sock: 1'" },
	{ "hvsock:/a\nb:80", 0, "invalid character '\\x0a' in socket path in 'hvsock:/a?b:80'" },
	{ "hvsock:/v.sock:8823", L, "cannot listen on 'hvsock:/v.sock:8823'" NOLISTEN },
	{ "hvsock:/v.sock:8823", L | P0, "cannot listen on 'hvsock:/v.sock:8823'" NOLISTEN },
	{ "HVSOCK:/v.sock:8823", 0, "unknown scheme 'HVSOCK' in 'HVSOCK:/v.sock:8823'" FORMS },
	{ "hvsok:/v.sock:8823", SH, "unknown scheme 'hvsok' in 'hvsok:/v.sock:8823'" SFORMS },
	/* the listening forms name only what listens */
	{ "udp:0.0.0.0:8823", L | P0, "unknown scheme 'udp' in 'udp:0.0.0.0:8823'" LFORMS },
	{ "8823", L, "'8823' is not an endpoint" LFORMS },
};

/* Every valid form parses to the expected fields and formats canonically. */
static void test_valid_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		const struct valid_case *c = &valid[i];
		struct tsync_endpoint ep;
		char err[256] = "", buf[320];
		int ret;

		ret = tsync_endpoint_parse(c->str, c->flags, &ep, err, sizeof(err));
		if (ret)
			fail_msg("'%s' (flags %u) rejected: %s", c->str, c->flags, err);
		assert_int_equal(ep.kind, c->kind);
		assert_int_equal(ep.port, c->port);
		if (c->kind == TSYNC_EP_TCP)
			assert_string_equal(ep.host, c->host);
		else
			assert_int_equal(ep.cid, c->cid);
		assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)),
				    c->formatted);
	}
}

/* The formatted form of every valid endpoint parses back to the same one. */
static void test_format_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		struct tsync_endpoint a, b;
		char err[256] = "", buf[320];

		assert_int_equal(tsync_endpoint_parse(valid[i].str, valid[i].flags, &a,
						      err, sizeof(err)), 0);
		tsync_endpoint_format(&a, buf, sizeof(buf));
		if (tsync_endpoint_parse(buf, P0, &b, err, sizeof(err)))
			fail_msg("'%s' formatted as '%s' does not parse: %s",
				 valid[i].str, buf, err);
		assert_int_equal(a.kind, b.kind);
		assert_int_equal(a.port, b.port);
		assert_int_equal(a.cid, b.cid);
		assert_string_equal(a.host, b.host);
	}
}

/* Every hvsock form parses to its path and port, formats canonically and
 * parses back. */
static void test_hvsock_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hvsock) / sizeof(hvsock[0]); i++) {
		const struct hvsock_case *c = &hvsock[i];
		struct tsync_endpoint ep, back;
		char err[256] = "", buf[320];

		if (tsync_endpoint_parse(c->str, c->flags, &ep, err, sizeof(err)))
			fail_msg("'%s' (flags %u) rejected: %s", c->str, c->flags, err);
		assert_int_equal(ep.kind, TSYNC_EP_HVSOCK);
		assert_string_equal(ep.path, c->path);
		assert_int_equal(ep.port, c->port);
		assert_string_equal(ep.host, "");
		assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)), c->formatted);
		assert_int_equal(tsync_endpoint_parse(buf, 0, &back, err, sizeof(err)), 0);
		assert_string_equal(back.path, ep.path);
		assert_int_equal(back.port, ep.port);
	}
}

/* Every malformed form is rejected with -EINVAL and the exact reason. */
static void test_malformed_forms(void **state)
{
	(void)state;
	assert_true(sizeof(bad) / sizeof(bad[0]) >= 20);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tsync_endpoint ep;
		char err[512] = "";
		int ret;

		ret = tsync_endpoint_parse(bad[i].str, bad[i].flags, &ep, err, sizeof(err));
		if (ret != -EINVAL)
			fail_msg("'%s' (flags %u): expected -EINVAL, got %d", bad[i].str,
				 bad[i].flags, ret);
		if (strcmp(err, bad[i].err))
			fail_msg("'%s' (flags %u):\n  expected: %s\n  got:      %s",
				 bad[i].str, bad[i].flags, bad[i].err, err);
		/* one line, whatever bytes the input had */
		for (const char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				fail_msg("'%s': control character in error '%s'", bad[i].str, err);
	}
}

/* A NULL string is an empty endpoint, not a crash. */
static void test_null_string(void **state)
{
	struct tsync_endpoint ep;
	char err[64] = "";

	(void)state;
	assert_int_equal(tsync_endpoint_parse(NULL, 0, &ep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty endpoint");
}

/* Host names up to the buffer size are taken; one byte more is refused. */
static void test_host_length(void **state)
{
	struct tsync_endpoint ep;
	char str[TSYNC_EP_HOST_MAX + 32], want[TSYNC_EP_HOST_MAX + 128], err[512];

	(void)state;
	/* longest that fits: TSYNC_EP_HOST_MAX - 1 characters */
	snprintf(str, sizeof(str), "tcp:%0*d:80", TSYNC_EP_HOST_MAX - 1, 0);
	memset(str + 4, 'a', TSYNC_EP_HOST_MAX - 1);
	assert_int_equal(tsync_endpoint_parse(str, 0, &ep, err, sizeof(err)), 0);
	assert_int_equal(strlen(ep.host), TSYNC_EP_HOST_MAX - 1);
	assert_int_equal(ep.port, 80);

	snprintf(str, sizeof(str), "tcp:%0*d:80", TSYNC_EP_HOST_MAX, 0);
	memset(str + 4, 'a', TSYNC_EP_HOST_MAX);
	assert_int_equal(tsync_endpoint_parse(str, 0, &ep, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "host name too long (%d bytes) in '%s'",
		 TSYNC_EP_HOST_MAX, str);
	assert_string_equal(err, want);
}

/* No error buffer, or a tiny one, is handled: nothing written past it. */
static void test_err_buffer(void **state)
{
	struct tsync_endpoint ep;
	char err[16];

	(void)state;
	assert_int_equal(tsync_endpoint_parse("tcp:x:0", 0, &ep, NULL, 0), -EINVAL);
	memset(err, 'Z', sizeof(err));
	assert_int_equal(tsync_endpoint_parse("tcp:x:0", 0, &ep, err, 8), -EINVAL);
	assert_string_equal(err, "port 0 ");
	assert_int_equal(err[8], 'Z');
}

/* The TCP host field never carries brackets; a name with ':' formats in them. */
static void test_format_tcp_v6(void **state)
{
	struct tsync_endpoint ep = { .kind = TSYNC_EP_TCP, .port = 1 };
	char buf[64];

	(void)state;
	strcpy(ep.host, "::1");
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)), "tcp:[::1]:1");
	strcpy(ep.host, "127.0.0.1");
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)), "tcp:127.0.0.1:1");
	/* truncation stays terminated */
	assert_string_equal(tsync_endpoint_format(&ep, buf, 6), "tcp:1");
}

/* A vsock port above 65535 (vsock_port32, a peer's report) formats whole. */
static void test_format_vsock_port32(void **state)
{
	struct tsync_endpoint ep = { .kind = TSYNC_EP_VSOCK, .cid = 3, .port = 823 };
	char buf[64];

	(void)state;
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)), "vsock:3:823");
	ep.port = 0;
	ep.vsock_port32 = 1479105456u;
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)),
			    "vsock:3:1479105456");
}

/* Socket paths up to sun_path's size are taken; one byte more is refused. */
static void test_hvsock_path_length(void **state)
{
	struct tsync_endpoint ep;
	char str[TSYNC_EP_PATH_MAX + 32], want[TSYNC_EP_PATH_MAX + 128], err[512];

	(void)state;
	snprintf(str, sizeof(str), "hvsock:/%0*d:8823", TSYNC_EP_PATH_MAX - 2, 0);
	assert_int_equal(tsync_endpoint_parse(str, 0, &ep, err, sizeof(err)), 0);
	assert_int_equal(strlen(ep.path), TSYNC_EP_PATH_MAX - 1);
	assert_int_equal(ep.port, 8823);

	snprintf(str, sizeof(str), "hvsock:/%0*d:8823", TSYNC_EP_PATH_MAX - 1, 0);
	assert_int_equal(tsync_endpoint_parse(str, 0, &ep, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "socket path too long (%d bytes, at most %d) in '%s'",
		 TSYNC_EP_PATH_MAX, TSYNC_EP_PATH_MAX - 1, str);
	assert_string_equal(err, want);
}

/* An hvsock port above 65535 (vsock_port32, a peer's report) formats whole,
 * and hvsock's ports are vsock's. */
static void test_format_hvsock_port32(void **state)
{
	struct tsync_endpoint ep = { .kind = TSYNC_EP_HVSOCK, .port = 823 };
	struct tsync_endpoint tcp = { .kind = TSYNC_EP_TCP, .port = 823 };
	char buf[64];

	(void)state;
	strcpy(ep.path, "/v.sock");
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)), "hvsock:/v.sock:823");
	ep.port = 0;
	ep.vsock_port32 = 1479105456u;
	assert_string_equal(tsync_endpoint_format(&ep, buf, sizeof(buf)),
			    "hvsock:/v.sock:1479105456");
	assert_true(tsync_endpoint_vsock_ports(&ep));
	ep.kind = TSYNC_EP_VSOCK;
	assert_true(tsync_endpoint_vsock_ports(&ep));
	assert_false(tsync_endpoint_vsock_ports(&tcp));
}

/* The schemes the parser knows, and only those, are schemes. */
static void test_has_scheme(void **state)
{
	static const char *const yes[] = { "tcp:h:1", "vsock:3:1", "hvsock:/v:1", "hvsock:",
					   "tcp:" };
	static const char *const no[] = { "", "3", "h:1", "[::1]:1", "udp:h:1", "hvsock",
					  "TCP:h:1", " tcp:h:1", "guest@3" };

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!tsync_endpoint_has_scheme(yes[i]))
			fail_msg("'%s' has a scheme", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (tsync_endpoint_has_scheme(no[i]))
			fail_msg("'%s' has no scheme", no[i]);
	assert_false(tsync_endpoint_has_scheme(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_forms),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_hvsock_forms),
		cmocka_unit_test(test_malformed_forms),
		cmocka_unit_test(test_null_string),
		cmocka_unit_test(test_host_length),
		cmocka_unit_test(test_err_buffer),
		cmocka_unit_test(test_format_tcp_v6),
		cmocka_unit_test(test_format_vsock_port32),
		cmocka_unit_test(test_hvsock_path_length),
		cmocka_unit_test(test_format_hvsock_port32),
		cmocka_unit_test(test_has_scheme),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
