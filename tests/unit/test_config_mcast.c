/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The config of MOUNT/all/ (issue 19): [global] multicast and
 * mcast_group, the group's default from the qkey, the node name 'all'
 * that the directory keeps for itself, and the controlled Q_Keys
 * (bit 31) that multicast cannot use.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "config_harness.h"

/*
 * The default groups, worked out once outside the code under test, in
 * Python: FNV-1a 32 (h = 0x811c9dc5; for each byte: h ^= b,
 * h = h * 0x01000193 mod 2^32) over the qkey's bytes big-endian, then
 * (h >> 16) ^ (h & 0xffff) as X.Y:
 *   0x1b1f5000: h 0x163527c7, 0x1635 ^ 0x27c7 = 0x31f2 -> 239.192.49.242
 *   0x11223344: h 0x9caba13d, 0x9cab ^ 0xa13d = 0x3d96 -> 239.192.61.150
 *   0x00001000: h 0xabbd9ba5, 0xabbd ^ 0x9ba5 = 0x3018 -> 239.192.48.24
 */
#define GROUP_DEFAULT_QKEY "239.192.49.242"
#define GROUP_11223344	   "239.192.61.150"
#define GROUP_4096	   "239.192.48.24"

/* cfg's group is the IPv4 text want, its sockaddr that address, port 0. */
static void want_group4(const char *want)
{
	const struct sockaddr_in *sin = (const void *)&cfg.mcast_sa;

	assert_string_equal(cfg.mcast_group, want);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(cfg.mcast_len, sizeof(*sin));
	assert_int_equal(sin->sin_addr.s_addr, inet_addr(want));
	assert_int_equal(sin->sin_port, 0);
}

/* ---- multicast ------------------------------------------------------- */

static void t_multicast_default(void **state)
{
	good(NODE_A);
	assert_int_equal(cfg.multicast, MCAST_AUTO);
	want_group4(GROUP_DEFAULT_QKEY);
}

static void t_multicast_values(void **state)
{
	static const struct {
		const char *text;
		enum config_mcast want;
	} cases[] = {
		{"[global]\nmulticast = auto\n" NODE_A, MCAST_AUTO},
		{"[global]\nmulticast = yes\n" NODE_A, MCAST_YES},
		{"[global]\nmulticast = no\n" NODE_A, MCAST_NO},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		good(cases[i].text);
		assert_int_equal(cfg.multicast, cases[i].want);
		/* the group is there whatever multicast says */
		want_group4(GROUP_DEFAULT_QKEY);
		config_free(&cfg);
	}
}

BAD(t_multicast_bad, "[global]\nmulticast = maybe\n" NODE_A, 2,
    "multicast: 'maybe' is not auto or yes or no")
BAD(t_multicast_case, "[global]\nmulticast = YES\n" NODE_A, 2,
    "multicast: 'YES' is not auto or yes or no")

/* ---- mcast_group ----------------------------------------------------- */

static void t_group_ipv4(void **state)
{
	static const char *const groups[] = {"224.0.0.1", "239.1.2.3",
					     "239.255.255.255"};
	char text[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		snprintf(text, sizeof(text), "[global]\nmcast_group = %s\n%s",
			 groups[i], NODE_A);
		good(text);
		want_group4(groups[i]);
		config_free(&cfg);
	}
}

static void t_group_ipv6(void **state)
{
	const struct sockaddr_in6 *s6 = (const void *)&cfg.mcast_sa;
	struct in6_addr want;

	good(NODE_A "[global]\nmcast_group = ff12::1:2\n");
	assert_string_equal(cfg.mcast_group, "ff12::1:2");
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(cfg.mcast_len, sizeof(*s6));
	assert_int_equal(inet_pton(AF_INET6, "ff12::1:2", &want), 1);
	assert_memory_equal(&s6->sin6_addr, &want, sizeof(want));
	assert_int_equal(s6->sin6_port, 0);
}

/* A group given wins over the qkey's, wherever either line is. */
static void t_group_given_with_qkey(void **state)
{
	good("[global]\nmcast_group = 239.1.2.3\nqkey = 0x11223344\n" NODE_A);
	want_group4("239.1.2.3");
}

/* Not a multicast group, a name, or not an address: refused on line 3. */
static void t_group_refused(void **state)
{
	static const char *const vals[] = {
		"10.0.0.1",	     /* unicast */
		"223.255.255.255",   /* just below 224.0.0.0/4 */
		"240.0.0.1",	     /* just above it */
		"fe80::1",	     /* IPv6 unicast */
		"::ffff:239.1.2.3",  /* v4-mapped: not ff00::/8 */
		"mcast.example.com", /* a host name: never looked up */
		"localhost",
		"239.1",		/* short IPv4: inet_pton refuses it */
		"239.1.2.3:4791",	/* no port */
		"[ff02::1]",		/* no brackets */
		"ff02::1::2",		/* garbage */
		"ff0e:0:0:0:0:0:0:1:2", /* nine groups */
		"ff02::1%lo",		/* a scope: no interfaces */
		"ff02::1%1",
		/* longer than the field: never cut to fit */
		"ff0e:0000:0000:0000:0000:0000:0000:0001%"
		"abcdefghijklmnopqrstuvwxyz",
	};
	char text[256], what[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		snprintf(text, sizeof(text),
			 "[global]\nport = 1\nmcast_group = %s\n%s", vals[i],
			 NODE_A);
		snprintf(what, sizeof(what),
			 "mcast_group: '%s' is not an IPv4 or IPv6 multicast "
			 "group",
			 vals[i]);
		bad(text, 3, what);
	}
}

/* ---- the default group follows the qkey ------------------------------ */

static void t_default_qkey_before(void **state)
{
	good("[global]\nqkey = 0x11223344\n" NODE_A);
	want_group4(GROUP_11223344);
}

/* [global] after the nodes, the qkey its last line: read at the end. */
static void t_default_qkey_after(void **state)
{
	good(NODE_A "[global]\nmulticast = yes\nqkey = 4096\n");
	want_group4(GROUP_4096);
}

/* ---- the node name 'all' --------------------------------------------- */

BAD(t_node_all, NODE_A "[node all]\naddr = 10.0.0.1\n", 3,
    "node name 'all' is reserved (MOUNT/all/ sends to every node)")
BAD(t_node_all_hostlist, NODE_A "[node a[1-2],all]\naddr = 10.0.0.1\n", 3,
    "node name 'all' is reserved")

/* Only the exact name is the directory's. */
static void t_node_all_lookalikes(void **state)
{
	good("[node ALL,all1,al[1-2]]\naddr = 10.0.0.1\n"
	     "bootstrap = 10.0.0.1:[18601-18604]\n");
	assert_int_equal(cfg.nnodes, 4);
	assert_string_equal(cfg.nodes[0].name, "ALL");
	assert_string_equal(cfg.nodes[1].name, "all1");
	assert_int_equal(config_node_index(&cfg, "all"), -1);
}

/* ---- controlled Q_Keys ----------------------------------------------- */

#define QKEY_31_WHY "qkey: 0x80000000 has bit 31 set, a controlled Q_Key"

BAD(t_qkey31_auto, "[global]\nqkey = 0x80000000\n" NODE_A, 2, QKEY_31_WHY)
/* the qkey's line, though multicast comes after it */
BAD(t_qkey31_yes, "[global]\nqkey = 2147483648\nmulticast = yes\n" NODE_A, 2,
    QKEY_31_WHY)
BAD(t_qkey31_says_how, NODE_A "[global]\nmulticast = auto\nqkey = 0xffffffff\n",
    5, "(clear the bit, or set multicast = no)")

static void t_qkey31_multicast_no(void **state)
{
	good("[global]\nqkey = 0x80000000\nmulticast = no\n" NODE_A);
	assert_int_equal(cfg.qkey, 0x80000000u);
	assert_int_equal(cfg.multicast, MCAST_NO);
	config_free(&cfg);
	good("[global]\nmulticast = auto\nqkey = 0x7fffffff\n" NODE_A);
	assert_int_equal(cfg.qkey, 0x7fffffff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_multicast_default),
		T(t_multicast_values),
		T(t_multicast_bad),
		T(t_multicast_case),
		T(t_group_ipv4),
		T(t_group_ipv6),
		T(t_group_given_with_qkey),
		T(t_group_refused),
		T(t_default_qkey_before),
		T(t_default_qkey_after),
		T(t_node_all),
		T(t_node_all_hostlist),
		T(t_node_all_lookalikes),
		T(t_qkey31_auto),
		T(t_qkey31_yes),
		T(t_qkey31_says_how),
		T(t_qkey31_multicast_no),
	};

	return cmocka_run_group_tests_name("mcast", tests, NULL, NULL);
}
