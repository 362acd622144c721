/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric's keys (issue 21): [global] pkey, sl and traffic_class, as
 * perftest's --pkey_index, --sl and --tclass.  Unset, each is -1 (the
 * route's, or the P_Key at index 0); set, it is range-checked here, and
 * only [global] takes them (a QP has one P_Key; see ibfs.conf(5)).
 */
#include "config_harness.h"

/* ---- good cases ------------------------------------------------------ */

static void t_fabric_defaults(void **state)
{
	good(NODE_A);
	assert_int_equal(cfg.pkey, -1);
	assert_int_equal(cfg.sl, -1);
	assert_int_equal(cfg.traffic_class, -1);
}

static void t_fabric_values(void **state)
{
	good("[global]\npkey = 0xffff\nsl = 15\ntraffic_class = 0xb8\n" NODE_A);
	assert_int_equal(cfg.pkey, 0xffff);
	assert_int_equal(cfg.sl, 15);
	assert_int_equal(cfg.traffic_class, 0xb8);
}

/* The ends of each range, decimal and hex, and a limited member. */
static void t_fabric_bounds(void **state)
{
	good("[global]\npkey = 1\nsl = 0\ntraffic_class = 0\n" NODE_A);
	assert_int_equal(cfg.pkey, 1);
	assert_int_equal(cfg.sl, 0);
	assert_int_equal(cfg.traffic_class, 0);
	config_free(&cfg);
	good("[global]\npkey = 0x7fff\ntraffic_class = 255\n" NODE_A);
	assert_int_equal(cfg.pkey, 0x7fff);
	assert_int_equal(cfg.sl, -1);
	assert_int_equal(cfg.traffic_class, 255);
	config_free(&cfg);
	good("[global]\npkey = 32769\n" NODE_A);
	assert_int_equal(cfg.pkey, 0x8001);
}

/* ---- bad cases ------------------------------------------------------- */

BAD(t_sl_16, "[global]\nsl = 16\n" NODE_A, 2, "sl: 16 is out of range 0..15")
BAD(t_sl_word, "[global]\nsl = high\n" NODE_A, 2, "sl: 'high' is not a number")
BAD(t_sl_negative, "[global]\nsl = -1\n" NODE_A, 2, "sl: '-1' is not a number")
BAD(t_tclass_256, "[global]\ntraffic_class = 256\n" NODE_A, 2,
    "traffic_class: 256 is out of range 0..255")
BAD(t_pkey_big, "[global]\npkey = 0x10000\n" NODE_A, 2,
    "pkey: 0x10000 is out of range 1..65535")
BAD(t_pkey_zero, "[global]\npkey = 0\n" NODE_A, 2,
    "pkey: 0 is out of range 1..65535")
BAD(t_pkey_8000, "[global]\npkey = 0x8000\n" NODE_A, 2,
    "pkey: 0x8000 is no partition (its low 15 bits are 0)")
BAD(t_pkey_junk, "[global]\npkey = default\n" NODE_A, 2,
    "pkey: 'default' is not a number")
BAD(t_pkey_in_node, NODE_A "pkey = 0xffff\n", 3,
    "unknown key 'pkey' in [node alpha]")
BAD(t_sl_in_node, NODE_A "sl = 1\n", 3, "unknown key 'sl' in [node alpha]")
BAD(t_tclass_twice, "[global]\ntraffic_class = 1\ntraffic_class = 2\n" NODE_A,
    3, "duplicate key 'traffic_class' (first at line 2)")

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_fabric_defaults), T(t_fabric_values), T(t_fabric_bounds),
		T(t_sl_16),	      T(t_sl_word),	  T(t_sl_negative),
		T(t_tclass_256),      T(t_pkey_big),	  T(t_pkey_zero),
		T(t_pkey_8000),	      T(t_pkey_junk),	  T(t_pkey_in_node),
		T(t_sl_in_node),      T(t_tclass_twice),
	};

	return cmocka_run_group_tests_name("fabric", tests, NULL, NULL);
}
