/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host names in addr and bootstrap: loading keeps them as written and
 * looks nothing up (getaddrinfo is counted here), the resolvers look them
 * up through the system resolver ("localhost" is in every /etc/hosts,
 * and RFC 6761 promises that ".invalid" never resolves), and numeric
 * addresses are what they always were.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/ib.h>

#include "unit.h"
#include "config.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static struct config cfg;
static union config_sa bsa; /* a node's bootstrap sockaddr, as read */
static char err[CONFIG_ERR_MAX];
static int lookups; /* getaddrinfo calls that may ask a name service */

typedef int (*gai_fn)(const char *, const char *, const struct addrinfo *,
		      struct addrinfo **);

/* Count the lookups config_addr.c makes, then let libc make them. */
int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	static gai_fn real;

	if (!real)
		real = (gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
	if (!hints || !(hints->ai_flags & AI_NUMERICHOST))
		lookups++;
	return real(node, service, hints, res);
}

/* Every test starts from the freed state, with no lookup counted. */
static int setup(void **state)
{
	memset(&cfg, 0, sizeof(cfg));
	err[0] = '\0';
	lookups = 0;
	return 0;
}

/* Nothing may be left behind for the next one, or for valgrind. */
static int teardown(void **state)
{
	config_free(&cfg);
	return 0;
}

/* Parse text that must be accepted; show the message if it is not. */
static void good(const char *text)
{
	int rc = config_load_string(text, "t.ini", &cfg, err, sizeof(err));

	if (rc)
		print_error("unexpected error %d: %s\n", rc, err);
	assert_int_equal(rc, 0);
}

/* Parse text that must be refused with "t.ini:LINE: ...WHAT...". */
static void bad(const char *text, int line, const char *what)
{
	char where[32];
	int rc = config_load_string(text, "t.ini", &cfg, err, sizeof(err));

	snprintf(where, sizeof(where), "t.ini:%d: ", line);
	if (rc != -EINVAL || strncmp(err, where, strlen(where)) ||
	    !strstr(err, what))
		print_error("rc %d, message \"%s\"; wanted \"%s...%s\"\n", rc,
			    err, where, what);
	assert_int_equal(rc, -EINVAL);
	assert_memory_equal(err, where, strlen(where));
	assert_non_null(strstr(err, what));
	config_free(&cfg);
}

/* An IPv4 sockaddr's address and port, as text and a number. */
static void assert_in(const void *sa, socklen_t len, const char *ip, int port)
{
	const struct sockaddr_in *sin = sa;

	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(len, sizeof(*sin));
	assert_int_equal(sin->sin_addr.s_addr, inet_addr(ip));
	assert_int_equal(ntohs(sin->sin_port), port);
}

/* A name is kept as written, unresolved, and loading looks nothing up. */
static void t_name_kept(void **state)
{
	good("[node alpha]\naddr = nonexistent.invalid\n"
	     "[node beta]\naddr = localhost\nbootstrap = cn-01.example:7\n");
	assert_int_equal(lookups, 0);
	assert_string_equal(cfg.nodes[0].addr, "nonexistent.invalid");
	assert_int_equal(cfg.nodes[0].addr_sa.ss_family, AF_UNSPEC);
	assert_int_equal(cfg.nodes[0].addr_len, 0);
	assert_string_equal(cfg.nodes[0].bootstrap_host, "nonexistent.invalid");
	assert_int_equal(cfg.nodes[0].bootstrap_port, 17515);
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	assert_int_equal(bsa.ss_family, AF_UNSPEC);
	assert_string_equal(cfg.nodes[1].bootstrap_host, "cn-01.example");
	assert_int_equal(cfg.nodes[1].bootstrap_port, 7);
	config_node_bootstrap_sa(&cfg.nodes[1], &bsa);
	assert_int_equal(bsa.ss_family, AF_UNSPEC);
}

/* addr = %n-ib: each node's own name, kept as a name. */
static void t_name_percent_n(void **state)
{
	good("[node cn[001-003]]\naddr = %n-ib\n");
	assert_int_equal(cfg.nnodes, 3);
	assert_string_equal(cfg.nodes[2].addr, "cn003-ib");
	assert_int_equal(cfg.nodes[2].addr_sa.ss_family, AF_UNSPEC);
	assert_string_equal(cfg.nodes[2].bootstrap_host, "cn003-ib");
	assert_int_equal(lookups, 0);
}

/* 10,000 named nodes load with no lookup at all. */
static void t_name_10000(void **state)
{
	good("[node cn[00001-10000]]\naddr = %n-ib\n");
	assert_int_equal(cfg.nnodes, 10000);
	assert_string_equal(cfg.nodes[9999].addr, "cn10000-ib");
	assert_int_equal(lookups, 0);
}

/* Numeric addresses load as before and are copied, never looked up. */
static void t_numeric_copied(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;

	good("[node a]\naddr = 10.0.2.15\nbootstrap = 10.0.2.16:18601\n"
	     "[node b]\naddr = gid:fe80::1\nbootstrap = [fd00::2]:1\n");
	assert_int_equal(cfg.nodes[0].addr_sa.ss_family, AF_INET);
	assert_int_equal(
		config_node_addr(&cfg.nodes[0], &ss, &len, err, sizeof(err)),
		0);
	assert_in(&ss, len, "10.0.2.15", 0);
	assert_int_equal(config_node_bootstrap(&cfg.nodes[0], &ss, &len, err,
					       sizeof(err)),
			 0);
	assert_in(&ss, len, "10.0.2.16", 18601);
	assert_int_equal(
		config_node_addr(&cfg.nodes[1], &ss, &len, err, sizeof(err)),
		0);
	assert_int_equal(ss.ss_family, AF_IB);
	assert_int_equal(len, sizeof(struct sockaddr_ib));
	assert_memory_equal(&ss, &cfg.nodes[1].addr_sa, len);
	assert_int_equal(config_node_bootstrap(&cfg.nodes[1], &ss, &len, err,
					       sizeof(err)),
			 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(lookups, 0);
}

/* localhost resolves through /etc/hosts, to IPv4 first. */
static void t_resolve_localhost(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;

	good("[node a]\naddr = localhost\n"
	     "[node b]\naddr = 10.0.2.15\nbootstrap = localhost:18601\n");
	assert_int_equal(
		config_node_addr(&cfg.nodes[0], &ss, &len, err, sizeof(err)),
		0);
	assert_in(&ss, len, "127.0.0.1", 0);
	assert_int_equal(config_node_bootstrap(&cfg.nodes[0], &ss, &len, err,
					       sizeof(err)),
			 0);
	assert_in(&ss, len, "127.0.0.1", 17515);
	assert_int_equal(config_node_bootstrap(&cfg.nodes[1], &ss, &len, err,
					       sizeof(err)),
			 0);
	assert_in(&ss, len, "127.0.0.1", 18601);
	assert_true(lookups >= 3);
	/* the config keeps the name: the next call looks it up again */
	assert_int_equal(cfg.nodes[0].addr_sa.ss_family, AF_UNSPEC);
}

/* A name that never resolves: EHOSTUNREACH, "NAME: why". */
static void t_resolve_invalid(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;

	good("[node a]\naddr = nonexistent.invalid\n");
	assert_int_equal(
		config_node_addr(&cfg.nodes[0], &ss, &len, err, sizeof(err)),
		-EHOSTUNREACH);
	assert_memory_equal(err, "nonexistent.invalid: ", 21);
	assert_true(strlen(err) > 21);
	assert_int_equal(config_node_bootstrap(&cfg.nodes[0], &ss, &len, err,
					       sizeof(err)),
			 -EHOSTUNREACH);
	assert_memory_equal(err, "nonexistent.invalid: ", 21);
}

/* In config words, at the line of the key that named it. */
static void t_resolve_config_words(void **state)
{
	static const char want_a[] =
		"t.ini:4: node beta: addr 'nonexistent.invalid' does not "
		"resolve: ";
	static const char want_b[] =
		"t.ini:5: node beta: bootstrap 'x.invalid' does not resolve: ";
	struct sockaddr_storage ss;
	socklen_t len;

	good("[node alpha]\naddr = localhost\n[node beta]\n"
	     "addr = nonexistent.invalid\nbootstrap = x.invalid:9\n"
	     "[node gamma]\naddr = 10.0.0.3\n");
	assert_int_equal(
		config_resolve_addr(&cfg, 0, &ss, &len, err, sizeof(err)), 0);
	assert_in(&ss, len, "127.0.0.1", 0);
	assert_int_equal(
		config_resolve_addr(&cfg, 1, &ss, &len, err, sizeof(err)),
		-EHOSTUNREACH);
	assert_memory_equal(err, want_a, strlen(want_a));
	assert_int_equal(
		config_resolve_bootstrap(&cfg, 1, &ss, &len, err, sizeof(err)),
		-EHOSTUNREACH);
	assert_memory_equal(err, want_b, strlen(want_b));
	assert_int_equal(
		config_resolve_bootstrap(&cfg, 2, &ss, &len, err, sizeof(err)),
		0);
	assert_in(&ss, len, "10.0.0.3", 17515);
}

/* The daemon's own names are resolved once, into its node. */
static void t_resolve_local(void **state)
{
	const struct config_node *me;

	good("[node alpha]\naddr = localhost\nbootstrap = localhost:18601\n"
	     "[node beta]\naddr = nonexistent.invalid\n");
	assert_int_equal(config_select_local(&cfg, "alpha", err, sizeof(err)),
			 0);
	assert_int_equal(config_resolve_local(&cfg, err, sizeof(err)), 0);
	me = &cfg.nodes[0];
	assert_in(&me->addr_sa, me->addr_len, "127.0.0.1", 0);
	config_node_bootstrap_sa(me, &bsa);
	assert_in(&bsa, me->bootstrap_len, "127.0.0.1", 18601);
	assert_string_equal(me->addr, "localhost");
	/* a peer's name is left for when it is met */
	assert_int_equal(cfg.nodes[1].addr_sa.ss_family, AF_UNSPEC);
	assert_int_equal(config_select_local(&cfg, "beta", err, sizeof(err)),
			 0);
	assert_int_equal(config_resolve_local(&cfg, err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "t.ini:5: node beta: addr "
				    "'nonexistent.invalid' does not resolve"));
}

/* What is not an address, a name or a GID is refused at its line. */
static void t_name_form(void **state)
{
	good("[node a]\naddr = cn_01.rack-2.example.\n");
	assert_int_equal(cfg.nodes[0].addr_sa.ss_family, AF_UNSPEC);
	config_free(&cfg);
	bad("[node a]\naddr = -cn1\n", 2, "addr: '-cn1' is not an IPv4/IPv6");
	bad("[node a]\naddr = cn1-\n", 2, "addr: 'cn1-' is not");
	bad("[node a]\naddr = cn1-.x\n", 2, "addr: 'cn1-.x' is not");
	bad("[node a]\naddr = a b\n", 2, "addr: 'a b' is not");
	bad("[node a]\naddr = 1.2.3\n", 2, "addr: '1.2.3' is not");
	bad("[node a]\naddr = "
	    "a123456789012345678901234567890123456789012345678901234567890123"
	    "\n",
	    2, "is not an IPv4/IPv6 address, a host name or gid:GID");
	bad("[node a]\naddr = 10.0.0.1\nbootstrap = bad_host!:1\n", 3,
	    "bootstrap: 'bad_host!' is not an IPv4/IPv6 address or a host "
	    "name");
	bad("[node a]\naddr = 10.0.0.1\nbootstrap = [localhost]:1\n", 3,
	    "bootstrap: 'localhost' is not a numeric IPv4/IPv6 address");
}

/* Two named endpoints are one when written alike (in any case). */
static void t_name_same_bootstrap(void **state)
{
	bad("[node a]\naddr = localhost\n[node b]\naddr = LocalHost\n", 3,
	    "node 'b' reuses bootstrap LocalHost:17515 of 'a'");
	bad("[node n[1-2]]\naddr = cn.example\n", 1,
	    "node 'n2' reuses bootstrap cn.example:17515 of 'n1'");
	/* a name and a number are not compared: that would be a lookup */
	good("[node a]\naddr = localhost\n[node b]\naddr = 127.0.0.1\n"
	     "[node c]\naddr = localhost\nbootstrap = localhost:18516\n");
	assert_int_equal(lookups, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* Loading names, then resolving them. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_name_kept),
		T(t_name_percent_n),
		T(t_name_10000),
		T(t_numeric_copied),
		T(t_resolve_localhost),
		T(t_resolve_invalid),
		T(t_resolve_config_words),
		T(t_resolve_local),
		T(t_name_form),
		T(t_name_same_bootstrap),
	};

	return cmocka_run_group_tests_name("config_addr", tests, NULL, NULL);
}
