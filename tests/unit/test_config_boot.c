/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The config of bootstrap over the fabric (issue 19): [global] bootstrap
 * = tcp|multicast, announce_interval and its default (3 s, or a third of
 * a shorter peer_timeout), and the conflict: no group (multicast = no).
 * The interval spans the start-up announces only (issue 33), so any is
 * taken beside any peer_timeout.
 */
#include "config_harness.h"

static void t_bootstrap_default(void **state)
{
	good(NODE_A);
	assert_int_equal(cfg.bootstrap, BOOTSTRAP_TCP);
	assert_int_equal(cfg.announce_interval_ms, 3000);
}

static void t_bootstrap_values(void **state)
{
	good("[global]\nbootstrap = tcp\n" NODE_A);
	assert_int_equal(cfg.bootstrap, BOOTSTRAP_TCP);
	config_free(&cfg);
	good("[global]\nbootstrap = multicast\n" NODE_A);
	assert_int_equal(cfg.bootstrap, BOOTSTRAP_MULTICAST);
	assert_int_equal(cfg.announce_interval_ms, 3000);
	/* the node key of the same name is its TCP endpoint, as before */
	config_free(&cfg);
	good("[global]\nbootstrap = multicast\n[node alpha]\naddr = 10.0.2.15\n"
	     "bootstrap = 10.0.2.15:9000\n");
	assert_int_equal(cfg.nodes[0].bootstrap_port, 9000);
}

BAD(t_bootstrap_bad, "[global]\nbootstrap = udp\n" NODE_A, 2,
    "bootstrap: 'udp' is not tcp or multicast")

/* Announces are made at start only (issue 33): any interval is taken,
 * beside any peer_timeout, wherever its line is. */
static void t_interval_given(void **state)
{
	good("[global]\nbootstrap = multicast\nannounce_interval = "
	     "1s\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 1000);
	config_free(&cfg);
	good("[global]\nbootstrap = multicast\npeer_timeout = 3s\n"
	     "announce_interval = 1001ms\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 1001);
	config_free(&cfg);
	good("[global]\nannounce_interval = 5s\nbootstrap = multicast\n"
	     "peer_timeout = 1s\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 5000);
}

/* Unset, it follows a short peer_timeout wherever its line is. */
static void t_interval_follows_timeout(void **state)
{
	good("[global]\nbootstrap = multicast\npeer_timeout = 3s\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 1000);
	config_free(&cfg);
	good("[global]\npeer_timeout = 30ms\nbootstrap = multicast\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 10);
	config_free(&cfg);
	good("[global]\nbootstrap = multicast\npeer_timeout = 60s\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 3000);
}

BAD(t_interval_range, "[global]\nannounce_interval = 5ms\n" NODE_A, 2,
    "announce_interval: 5ms is out of range 10..86400000 ms")

/* Without bootstrap = multicast the interval is not checked. */
static void t_interval_tcp(void **state)
{
	good("[global]\npeer_timeout = 3s\nannounce_interval = 5s\n" NODE_A);
	assert_int_equal(cfg.announce_interval_ms, 5000);
}

BAD(t_no_group, "[global]\nbootstrap = multicast\nmulticast = no\n" NODE_A, 3,
    "bootstrap = multicast announces on the group, and multicast = no "
    "turns it off")
BAD(t_no_group_before,
    "[global]\nmulticast = no\nbootstrap = multicast\n" NODE_A, 3,
    "multicast = no turns it off")

static void t_group_auto_yes(void **state)
{
	good("[global]\nbootstrap = multicast\nmulticast = yes\n" NODE_A);
	assert_int_equal(cfg.multicast, MCAST_YES);
	config_free(&cfg);
	good("[global]\nbootstrap = multicast\nmulticast = auto\n" NODE_A);
	assert_int_equal(cfg.multicast, MCAST_AUTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_bootstrap_default),
		T(t_bootstrap_values),
		T(t_bootstrap_bad),
		T(t_interval_given),
		T(t_interval_follows_timeout),
		T(t_interval_range),
		T(t_interval_tcp),
		T(t_no_group),
		T(t_no_group_before),
		T(t_group_auto_yes),
	};

	return cmocka_run_group_tests_name("bootstrap", tests, NULL, NULL);
}
