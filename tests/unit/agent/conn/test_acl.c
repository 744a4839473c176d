// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Allow lists: parsing of ADDR[/PREFIX] and CID lists (valid forms and the
 * reasons of invalid ones), and matching of real socket addresses,
 * IPv4-mapped IPv6 peers included.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <linux/vm_sockets.h>

#include "agent/conn/acl.h"

/* Builds a sockaddr for @addr (IPv4 or IPv6 text) in @ss; returns its
 * length. */
static socklen_t mk_ip(struct sockaddr_storage *ss, const char *addr)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(1234);
		return sizeof(*in);
	}
	assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(1234);
	return sizeof(*in6);
}

/* Returns whether @acl allows the IP @addr. */
static bool allows_ip(const struct tsync_acl *acl, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len = mk_ip(&ss, addr);
	char why[128] = "";
	bool ok = tsync_acl_allows(acl, (struct sockaddr *)&ss, len, why, sizeof(why));

	if (!ok)
		assert_non_null(strstr(why, "--allow"));
	return ok;
}

/* Returns whether @acl allows vsock CID @cid. */
static bool allows_cid(const struct tsync_acl *acl, uint32_t cid)
{
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = cid, .svm_port = 5 };

	return tsync_acl_allows(acl, (struct sockaddr *)&vm, sizeof(vm), NULL, 0);
}

static void test_empty_allows_nothing(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();

	(void)state;
	assert_non_null(acl);
	assert_false(allows_ip(acl, "127.0.0.1"));
	assert_false(allows_ip(acl, "::1"));
	assert_false(allows_cid(acl, 2));
	assert_int_equal(tsync_acl_ip_rules(acl), 0);
	assert_int_equal(tsync_acl_cid_rules(acl), 0);
	tsync_acl_free(acl);
	/* NULL list or address: refused, not a crash */
	assert_false(tsync_acl_allows(NULL, NULL, 0, NULL, 0));
}

static void test_ipv4_prefixes(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();
	char err[160];

	(void)state;
	assert_int_equal(tsync_acl_add_ip(acl, "127.0.0.1", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_add_ip(acl, "10.1.0.0/16", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_add_ip(acl, "192.168.3.128/25", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_ip_rules(acl), 3);

	assert_true(allows_ip(acl, "127.0.0.1"));
	assert_false(allows_ip(acl, "127.0.0.2"));
	assert_true(allows_ip(acl, "10.1.0.0"));
	assert_true(allows_ip(acl, "10.1.255.255"));
	assert_false(allows_ip(acl, "10.2.0.1"));
	assert_false(allows_ip(acl, "10.0.255.255"));
	assert_true(allows_ip(acl, "192.168.3.128"));
	assert_true(allows_ip(acl, "192.168.3.255"));
	assert_false(allows_ip(acl, "192.168.3.127"));
	/* IPv4 rules never match a native IPv6 peer */
	assert_false(allows_ip(acl, "::1"));
	assert_false(allows_ip(acl, "::7f00:1"));	/* IPv4-compatible, not mapped */
	tsync_acl_free(acl);
}

static void test_zero_prefix_allows_family(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();

	(void)state;
	assert_int_equal(tsync_acl_add_ip(acl, "0.0.0.0/0", NULL, 0), 0);
	assert_true(allows_ip(acl, "1.2.3.4"));
	assert_true(allows_ip(acl, "255.255.255.255"));
	assert_false(allows_ip(acl, "2001:db8::1"));
	assert_int_equal(tsync_acl_add_ip(acl, "::/0", NULL, 0), 0);
	assert_true(allows_ip(acl, "2001:db8::1"));
	tsync_acl_free(acl);
}

static void test_ipv6_prefixes(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();
	char err[160];

	(void)state;
	assert_int_equal(tsync_acl_add_ip(acl, "::1", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_add_ip(acl, "[2001:db8:ab::]/48", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_add_ip(acl, "fe80::/10", err, sizeof(err)), 0);
	assert_true(allows_ip(acl, "::1"));
	assert_false(allows_ip(acl, "::2"));
	assert_true(allows_ip(acl, "2001:db8:ab::1"));
	assert_true(allows_ip(acl, "2001:db8:ab:ffff::1"));
	assert_false(allows_ip(acl, "2001:db8:aa::1"));
	assert_false(allows_ip(acl, "2001:db8:ac::1"));
	assert_true(allows_ip(acl, "febf::1"));
	assert_false(allows_ip(acl, "fec0::1"));
	/* an IPv6 rule does not admit IPv4 peers */
	assert_false(allows_ip(acl, "127.0.0.1"));
	tsync_acl_free(acl);
}

static void test_v4_mapped_peers_match_ipv4_rules(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();

	(void)state;
	assert_int_equal(tsync_acl_add_ip(acl, "127.0.0.1", NULL, 0), 0);
	assert_true(allows_ip(acl, "::ffff:127.0.0.1"));
	assert_false(allows_ip(acl, "::ffff:127.0.0.2"));
	tsync_acl_free(acl);

	/* IPv6 allow-all does not open IPv4 through mapped addresses */
	acl = tsync_acl_new();
	assert_int_equal(tsync_acl_add_ip(acl, "::/0", NULL, 0), 0);
	assert_false(allows_ip(acl, "::ffff:10.0.0.1"));
	assert_false(allows_ip(acl, "10.0.0.1"));
	tsync_acl_free(acl);

	/* a mapped rule is an IPv4 rule: matches both spellings */
	acl = tsync_acl_new();
	assert_int_equal(tsync_acl_add_ip(acl, "::ffff:10.0.0.0/104", NULL, 0), 0);
	assert_true(allows_ip(acl, "10.200.0.1"));
	assert_true(allows_ip(acl, "::ffff:10.200.0.1"));
	assert_false(allows_ip(acl, "11.0.0.1"));
	tsync_acl_free(acl);
}

struct bad_ip {
	const char *spec;
	const char *reason;	/* substring of the error */
};

static void test_invalid_ip_rules(void **state)
{
	static const struct bad_ip bad[] = {
		{ "", "empty" },
		{ "localhost", "not an IPv4 or IPv6 address" },
		{ "127.0.0.1/33", "prefix '33' is not a number 0-32" },
		{ "::1/129", "prefix '129' is not a number 0-128" },
		{ "10.0.0.0/", "prefix '' is not a number" },
		{ "10.0.0.0/-1", "prefix '-1'" },
		{ "10.0.0.0/8x", "prefix '8x'" },
		{ "10.0.0.1/8", "bits set after the /8 prefix" },
		{ "fe80::1/10", "bits set after the /10 prefix" },
		{ "fe80::1%eth0", "not an IPv4 or IPv6 address" },
		{ "1.2.3", "not an IPv4 or IPv6 address" },
		{ "1.2.3.4.5", "not an IPv4 or IPv6 address" },
		{ "[127.0.0.1", "not an IPv4 or IPv6 address" },
		{ "0123456789012345678901234567890123456789012345678901234567890", "too long" },
	};
	struct tsync_acl *acl = tsync_acl_new();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[160] = "";

		assert_int_equal(tsync_acl_add_ip(acl, bad[i].spec, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].reason))
			fail_msg("'%s': got '%s', want '%s'", bad[i].spec, err, bad[i].reason);
	}
	assert_int_equal(tsync_acl_ip_rules(acl), 0);
	tsync_acl_free(acl);
}

static void test_cids(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();
	char err[160];

	(void)state;
	assert_int_equal(tsync_acl_add_cids(acl, "2", err, sizeof(err)), 0);
	assert_true(allows_cid(acl, 2));
	assert_false(allows_cid(acl, 3));
	assert_false(allows_cid(acl, 1));
	assert_int_equal(tsync_acl_add_cids(acl, "3,10-20", err, sizeof(err)), 0);
	assert_int_equal(tsync_acl_cid_rules(acl), 3);
	assert_true(allows_cid(acl, 3));
	assert_true(allows_cid(acl, 10));
	assert_true(allows_cid(acl, 15));
	assert_true(allows_cid(acl, 20));
	assert_false(allows_cid(acl, 21));
	assert_false(allows_cid(acl, 9));
	/* CID rules do not admit IP peers */
	assert_false(allows_ip(acl, "127.0.0.1"));
	assert_string_equal(tsync_acl_format(acl, err, sizeof(err)), "cid 2 cid 3 cid 10-20");
	tsync_acl_free(acl);

	acl = tsync_acl_new();
	assert_int_equal(tsync_acl_add_cids(acl, "any", err, sizeof(err)), 0);
	assert_true(allows_cid(acl, 0));
	assert_true(allows_cid(acl, 2));
	assert_true(allows_cid(acl, 0xfffffffeu));
	tsync_acl_free(acl);
}

static void test_invalid_cids(void **state)
{
	static const char *const bad[] = {
		"", ",", "2,", ",2", "x", "2-", "-2", "5-3", "4294967295", "99999999999",
		"2 ", "1-2-3", "anything",
	};
	struct tsync_acl *acl = tsync_acl_new();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[160] = "";

		if (tsync_acl_add_cids(acl, bad[i], err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
	tsync_acl_free(acl);
}

static void test_why_names_the_cid(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = 77 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	char why[128];

	(void)state;
	assert_int_equal(tsync_acl_add_cids(acl, "2", NULL, 0), 0);
	assert_false(tsync_acl_allows(acl, (struct sockaddr *)&vm, sizeof(vm), why, sizeof(why)));
	assert_string_equal(why, "CID 77 not in the --allow-cid list");
	/* a truncated address is refused */
	vm.svm_cid = 2;
	assert_false(tsync_acl_allows(acl, (struct sockaddr *)&vm, 4, why, sizeof(why)));
	assert_non_null(strstr(why, "truncated"));
	assert_false(tsync_acl_allows(acl, (struct sockaddr *)&in, 2, why, sizeof(why)));
	tsync_acl_free(acl);
}

static void test_rule_limit_and_format(void **state)
{
	struct tsync_acl *acl = tsync_acl_new();
	char err[160], buf[64];

	(void)state;
	assert_int_equal(tsync_acl_add_ip(acl, "::ffff:127.0.0.1", NULL, 0), 0);
	assert_string_equal(tsync_acl_format(acl, buf, sizeof(buf)), "127.0.0.1/32");
	for (int i = 1; i < TSYNC_ACL_MAX_RULES; i++)
		assert_int_equal(tsync_acl_add_ip(acl, "10.0.0.0/8", NULL, 0), 0);
	assert_int_equal(tsync_acl_add_ip(acl, "10.0.0.0/8", err, sizeof(err)), -ENOSPC);
	/* formatting never overruns a small buffer */
	memset(buf, 'x', sizeof(buf));
	tsync_acl_format(acl, buf, 16);
	assert_int_equal(strlen(buf), 15);
	assert_int_equal(buf[16], 'x');
	tsync_acl_free(acl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_allows_nothing),
		cmocka_unit_test(test_ipv4_prefixes),
		cmocka_unit_test(test_zero_prefix_allows_family),
		cmocka_unit_test(test_ipv6_prefixes),
		cmocka_unit_test(test_v4_mapped_peers_match_ipv4_rules),
		cmocka_unit_test(test_invalid_ip_rules),
		cmocka_unit_test(test_cids),
		cmocka_unit_test(test_invalid_cids),
		cmocka_unit_test(test_why_names_the_cid),
		cmocka_unit_test(test_rule_limit_and_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
