/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may hold a listener's slot (bootstrap_admit.c, issue 20), on real
 * sockets over loopback: the nodes are at 127.0.0.1, strangers connect
 * from 127.0.0.2 and up.  A stranger's address holds at most
 * BS_PER_SOURCE handshakes, strangers at most half the slots (the newest
 * evict the oldest), a node's address evicts the oldest stranger when
 * every slot is taken; accept4's EMFILE pauses the listener and is said
 * once; strict_source takes a node's addr or bootstrap host, IPv4 as
 * such or mapped into IPv6, and nothing else, and on RoCE a GID that is
 * one of the node's addresses or the session's source.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "unit.h"
#include "bootstrap.h"
#include "bootstrap_session.h"
#include "util.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define CONF                                                                   \
	"[global]\npeer_timeout = 2s\n"                                        \
	"[node alpha]\naddr = 127.0.0.1\nbootstrap = 127.0.0.1:1\n"            \
	"[node beta]\naddr = 127.0.0.1\nbootstrap = 10.9.0.2:9000\n"           \
	"[node gamma]\naddr = 10.9.0.3\n"                                      \
	"[node delta]\naddr = localhost\nbootstrap = 10.9.0.4:1\n"

static struct config cfg;
static struct bootstrap b;
static int lookups; /* getaddrinfo calls, all threads */

/* Every host-name lookup, counted; names in .invalid fail at once
 * (no DNS here), the rest are the resolver's. */
int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	int (*real)(const char *, const char *, const struct addrinfo *,
		    struct addrinfo **) = dlsym(RTLD_NEXT, "getaddrinfo");
	size_t n = node ? strlen(node) : 0;

	lookups++;
	if (n > 8 && !strcmp(node + n - 8, ".invalid"))
		return EAI_NONAME;
	return real(node, service, hints, res);
}
static struct sockaddr_in lsa;
static int clients[256], nclients;

/* A bootstrap with its listener on 127.0.0.1 (any port) and epoll. */
static int setup(void **state)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &b.lfd};
	char err[CONFIG_ERR_MAX];
	socklen_t len = sizeof(lsa);

	memset(&b, 0, sizeof(b));
	assert_int_equal(
		config_load_string(CONF, "t.ini", &cfg, err, sizeof(err)), 0);
	b.cfg = &cfg;
	b.timeout_ms = 5000;
	b.max_in = 4 * cfg.nnodes + 16;
	b.max_strangers = b.max_in / 2;
	TAILQ_INIT(&b.conns);
	TAILQ_INIT(&b.dead);
	TAILQ_INIT(&b.strangers);
	b.bp = calloc(cfg.nnodes, sizeof(*b.bp));
	assert_non_null(b.bp);
	assert_int_equal(bs_admit_open(&b), 0);
	b.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&lsa, 0, sizeof(lsa));
	lsa.sin_family = AF_INET;
	lsa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(b.lfd, (struct sockaddr *)&lsa, sizeof(lsa)), 0);
	assert_int_equal(listen(b.lfd, 256), 0);
	assert_int_equal(getsockname(b.lfd, (struct sockaddr *)&lsa, &len), 0);
	b.ep = epoll_create1(0);
	assert_int_equal(epoll_ctl(b.ep, EPOLL_CTL_ADD, b.lfd, &ev), 0);
	nclients = 0;
	return 0;
}

/* Free b's bs_peers, made as its nodes were first used, and their table. */
static void free_bp(struct bootstrap *bb)
{
	int i;

	for (i = 0; i < bb->cfg->nnodes; i++)
		free(bb->bp[i]);
	free(bb->bp);
}

/* Close everything: sessions, clients, listener. */
static int teardown(void **state)
{
	struct bs_conn *c;
	int i;

	while ((c = TAILQ_FIRST(&b.conns)))
		bs_conn_close(&b, c);
	while ((c = TAILQ_FIRST(&b.dead))) {
		TAILQ_REMOVE(&b.dead, c, link);
		free(c);
	}
	for (i = 0; i < nclients; i++)
		close(clients[i]);
	close(b.lfd);
	close(b.ep);
	bs_admit_close(&b);
	free_bp(&b);
	config_free(&cfg);
	return 0;
}

/* Connect to the listener from src (blocking: the backlog takes it). */
static int dial_from(const char *src)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	inet_pton(AF_INET, src, &sa.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&lsa, sizeof(lsa)), 0);
	clients[nclients++] = fd;
	return fd;
}

/* Whether the daemon closed client fd (EOF, or a reset). */
static int closed(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN);
}

/* One stranger's address: four handshakes, the fifth and sixth closed. */
static void t_per_source(void **state)
{
	int i;

	for (i = 0; i < 6; i++)
		dial_from("127.0.0.2");
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nin, BS_PER_SOURCE);
	assert_int_equal(b.nstrangers, BS_PER_SOURCE);
	for (i = 0; i < 6; i++)
		assert_int_equal(closed(clients[i]), i >= BS_PER_SOURCE);
}

/* Strangers hold half the slots; the newest evict the oldest. */
static void t_strangers_share(void **state)
{
	char src[32];
	int i, n = 5 * BS_PER_SOURCE;

	assert_int_equal(b.max_strangers, 16);
	for (i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "127.0.0.%d", 2 + i / BS_PER_SOURCE);
		dial_from(src);
	}
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nstrangers, b.max_strangers);
	assert_int_equal(b.nin, b.max_strangers);
	for (i = 0; i < n; i++)
		assert_int_equal(closed(clients[i]), i < n - b.max_strangers);
}

/* With every slot taken, a node's address evicts the oldest stranger; a
 * stranger then evicts only strangers, never a node's handshake.
 * (alpha and beta share 127.0.0.1: it holds 2 * BS_PER_SOURCE.) */
static void t_node_evicts_stranger(void **state)
{
	char src[32];
	int i, first_node, newest;

	b.max_in = b.max_strangers + 2 * BS_PER_SOURCE - 1;
	for (i = 0; i < b.max_strangers; i++) {
		snprintf(src, sizeof(src), "127.0.1.%d", 2 + i);
		dial_from(src);
	}
	first_node = nclients;
	while (nclients < first_node + b.max_in - b.max_strangers)
		dial_from("127.0.0.1");
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nin, b.max_in);
	assert_false(closed(clients[0]));
	newest = dial_from("127.0.0.1");
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nin, b.max_in);
	assert_int_equal(b.nstrangers, b.max_strangers - 1);
	assert_true(closed(clients[0]));
	assert_false(closed(newest));
	dial_from("127.0.2.2");
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nin, b.max_in);
	assert_true(closed(clients[1]));
	for (i = first_node; i < nclients; i++)
		assert_false(closed(clients[i]));
}

/*
 * Out of descriptors: the spare takes one connection, a node's address
 * closing a stranger's handshake for it; the listener pauses, is said
 * once, comes back.
 */
static void t_emfile_pause(void **state)
{
	struct rlimit old, low;
	int64_t now = util_now_ms();
	int fd, i, stranger;

	stranger = dial_from("127.0.0.2");
	bs_accept(&b, now);
	assert_int_equal(b.nstrangers, 1);
	for (i = 0; i < 3; i++)
		dial_from("127.0.0.1");
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	fd = dup(0); /* the lowest free descriptor: the limit is just it */
	close(fd);
	low = old;
	low.rlim_cur = (rlim_t)fd;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	bs_accept(&b, now);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(b.nin, 1);
	assert_int_equal(b.nstrangers, 0);
	assert_true(closed(stranger));
	assert_true(b.spare_fd >= 0);
	assert_int_equal(b.fd_short, 1);
	assert_true(b.accept_paused_until == now + BS_ACCEPT_PAUSE_MS);
	/* due at the pause's end, and listening again after it */
	assert_true(bs_accept_timer(&b, now, now + 60000) ==
		    now + BS_ACCEPT_PAUSE_MS);
	bs_accept_timer(&b, now + BS_ACCEPT_PAUSE_MS, now + 60000);
	assert_true(b.accept_paused_until == 0);
	bs_accept(&b, now + BS_ACCEPT_PAUSE_MS);
	assert_int_equal(b.nin, 3);
	for (i = 1; i < nclients; i++)
		assert_false(closed(clients[i]));
	/* the shortage is over only after a whole quiet period */
	assert_int_equal(b.fd_short, 1);
}

/* A session from src (an IPv4 or IPv6 text address). */
static struct bs_conn from(const char *src)
{
	struct bs_conn c;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&c.src;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&c.src;

	memset(&c, 0, sizeof(c));
	if (strchr(src, ':')) {
		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, src, &s6->sin6_addr);
	} else {
		s4->sin_family = AF_INET;
		inet_pton(AF_INET, src, &s4->sin_addr);
	}
	return c;
}

/* strict_source: addr or bootstrap host, mapped or not; else refused. */
static void t_strict_source(void **state)
{
	struct bs_conn c;
	int64_t then;

	c = from("127.0.0.1");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from("10.9.0.2");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from("::ffff:10.9.0.2");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from("10.9.0.3");
	assert_false(bs_source_ok(&b, &c, 1));
	assert_true(bs_source_ok(&b, &c, 2));
	c = from("127.0.0.2");
	assert_false(bs_source_ok(&b, &c, 1));
	assert_false(bs_source_ok(&b, &c, 2));
	c = from("::1");
	assert_false(bs_source_ok(&b, &c, 1));
	memset(&c, 0, sizeof(c)); /* AF_UNSPEC: not an IP source at all */
	assert_false(bs_source_ok(&b, &c, 1));
	/* a host name: looked up once, and not again for a mismatch soon
	 * after (localhost is 127.0.0.1 in /etc/hosts) */
	c = from("127.0.0.1");
	assert_true(bs_source_ok(&b, &c, 3));
	assert_true(b.bp[3]->name_ms != 0 && b.bp[3]->name_ok[0]);
	then = b.bp[3]->name_ms -= 1000; /* a lookup would set it anew */
	c = from("127.0.0.5");
	assert_false(bs_source_ok(&b, &c, 3));
	assert_false(bs_source_ok(&b, &c, 3));
	assert_true(b.bp[3]->name_ms == then);
	c = from("10.9.0.4");
	assert_true(bs_source_ok(&b, &c, 3));
	cfg.strict_source = 0;
	c = from("127.0.0.2");
	assert_true(bs_source_ok(&b, &c, 1));
	assert_true(bs_source_ok(&b, &c, 2));
}

/* A session from src whose hello announces RoCE GID gid (text). */
static struct bs_conn from_gid(const char *src, const char *gid)
{
	struct bs_conn c = from(src);

	c.h.addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	assert_int_equal(inet_pton(AF_INET6, gid, c.h.addr.gid.raw), 1);
	return c;
}

/*
 * strict_source ties a RoCE GID to the node: beta, from its own host,
 * announcing gamma's address as its GID, is refused; its own addresses
 * and its source are taken; a link-local or InfiniBand GID names no
 * address, and strict_source = no takes any.
 */
static void t_strict_gid(void **state)
{
	struct bs_conn c;

	c = from_gid("127.0.0.1", "::ffff:127.0.0.1");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from_gid("127.0.0.1", "::ffff:10.9.0.2");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from_gid("127.0.0.1", "::ffff:10.9.0.3");
	assert_false(bs_source_ok(&b, &c, 1));
	c = from_gid("127.0.0.1", "2001:db8::3");
	assert_false(bs_source_ok(&b, &c, 1));
	c = from_gid("10.9.0.3", "::ffff:10.9.0.3");
	assert_true(bs_source_ok(&b, &c, 2));
	c = from_gid("127.0.0.1", "fe80::3");
	assert_true(bs_source_ok(&b, &c, 1));
	c = from_gid("127.0.0.1", "::ffff:10.9.0.3");
	c.h.addr.link_layer = IBV_LINK_LAYER_INFINIBAND;
	assert_true(bs_source_ok(&b, &c, 1));
	cfg.strict_source = 0;
	c = from_gid("127.0.0.1", "::ffff:10.9.0.3");
	assert_true(bs_source_ok(&b, &c, 1));
}

/*
 * A stranger's hellos naming 100 nodes written with host names, again
 * and again, cost each node one lookup when first named, and then at
 * most BS_NAME_LOOKUPS a while (BS_NAME_RECHECK_MS) for all of them,
 * not one each: the bootstrap thread is not kept in the resolver.
 */
static void t_names_bounded(void **state)
{
	char err[CONFIG_ERR_MAX];
	struct bootstrap nb;
	struct config ncfg;
	struct bs_conn c = from("127.0.0.9");
	int round, i;

	memset(&ncfg, 0, sizeof(ncfg));
	assert_int_equal(config_load_string("[node alpha]\naddr = 127.0.0.1\n"
					    "[node h[1-100]]\n"
					    "addr = %n.invalid\n",
					    "t.ini", &ncfg, err, sizeof(err)),
			 0);
	memset(&nb, 0, sizeof(nb));
	nb.cfg = &ncfg;
	nb.bp = calloc(ncfg.nnodes, sizeof(*nb.bp));
	assert_non_null(nb.bp);
	lookups = 0;
	for (i = 1; i <= 100; i++)
		assert_false(bs_source_ok(&nb, &c, i));
	assert_true(lookups <= 2 * 100); /* addr and bootstrap, once each */
	for (round = 0; round < 10; round++) {
		/* as if every node's last lookup were a while ago */
		for (i = 1; i <= 100; i++)
			nb.bp[i]->name_ms -= BS_NAME_RECHECK_MS;
		lookups = 0;
		for (i = 1; i <= 100; i++)
			assert_false(bs_source_ok(&nb, &c, i));
		assert_true(lookups <= 2 * BS_NAME_LOOKUPS);
	}
	free_bp(&nb);
	config_free(&ncfg);
}

/*
 * S3: a node's address holds BS_PER_SOURCE handshakes for each node the
 * config puts there, and closes only its own for room, never another
 * node's: a user of alpha's and beta's host (127.0.0.1) cannot push out
 * delta's handshake (its bootstrap host, 127.0.0.4, in this test).
 */
static void t_node_source_bounded(void **state)
{
	struct sockaddr_in *s4 =
		(struct sockaddr_in *)cfg.nodes[3].bootstrap_own;
	int i, delta;

	assert_non_null(s4); /* not its addr's host: a sockaddr of its own */
	inet_pton(AF_INET, "127.0.0.4", &s4->sin_addr);
	bs_admit_close(&b);
	assert_int_equal(bs_admit_open(&b), 0);
	b.max_in = 2 * BS_PER_SOURCE + 1;
	delta = dial_from("127.0.0.4");
	for (i = 0; i < 3 * BS_PER_SOURCE; i++)
		dial_from("127.0.0.1");
	bs_accept(&b, util_now_ms());
	assert_int_equal(b.nin, 2 * BS_PER_SOURCE + 1);
	assert_false(closed(delta));
	for (i = 1; i < nclients; i++)
		assert_int_equal(closed(clients[i]), i > 2 * BS_PER_SOURCE);
}

/* Whether the listener has a connection waiting. */
static int pending(void)
{
	struct pollfd p = {.fd = b.lfd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/* A wake-up takes at most BS_ACCEPT_BATCH connections: a flood leaves
 * the rest to the next (the listener is level-triggered). */
static void t_accept_batch(void **state)
{
	char src[32];
	int i;

	for (i = 0; i < BS_ACCEPT_BATCH + 10; i++) {
		snprintf(src, sizeof(src), "127.0.%d.%d", 3 + i / 200,
			 2 + i % 200);
		dial_from(src);
	}
	bs_accept(&b, util_now_ms());
	assert_true(pending());
	bs_accept(&b, util_now_ms());
	assert_false(pending());
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_per_source),	   T(t_strangers_share),
		T(t_node_evicts_stranger), T(t_emfile_pause),
		T(t_strict_source),	   T(t_strict_gid),
		T(t_names_bounded),	   T(t_accept_batch),
		T(t_node_source_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
