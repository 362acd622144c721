/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for util.c: the one name rule (what config, the hello, the
 * wire and the file tree each accept), the big-endian codec, GID text and
 * the clock.
 */
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "unit.h"
#include "util.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* Names of 1 to 63 bytes pass; empty, long, dotted or slashed ones fail. */
static void test_name_rule(void **state)
{
	char long63[64], long64[65];

	memset(long63, 'a', 63);
	long63[63] = '\0';
	memset(long64, 'a', 64);
	long64[64] = '\0';
	assert_null(util_name_problem("alpha"));
	assert_null(util_name_problem("a"));
	assert_null(util_name_problem("node-1.lab"));
	assert_null(util_name_problem("a.b"));
	assert_null(util_name_problem(long63));
	assert_string_equal(util_name_problem(long64),
			    "is longer than 63 bytes");
	assert_string_equal(util_name_problem(""), "is empty");
	assert_string_equal(util_name_problem(NULL), "is empty");
	assert_string_equal(util_name_problem("."), "starts with '.'");
	assert_string_equal(util_name_problem(".."), "starts with '.'");
	assert_string_equal(util_name_problem(".x"), "starts with '.'");
	assert_string_equal(util_name_problem("a/b"), "contains '/'");
	assert_string_equal(util_name_problem("/"), "contains '/'");
	assert_int_equal(util_name_len("chat"), 4);
	assert_int_equal(util_name_len(long63), 63);
	assert_int_equal(util_name_len(long64), 0);
	assert_int_equal(util_name_len(".status"), 0);
	assert_int_equal(util_name_len(NULL), 0);
}

/* Names off the wire carry a length and may hold any byte. */
static void test_name_rule_counted(void **state)
{
	assert_null(util_name_problem_n("chatter", 4));
	assert_string_equal(util_name_problem_n("ch\0t", 4),
			    "contains a NUL byte");
	assert_string_equal(util_name_problem_n("c/at", 4), "contains '/'");
	assert_string_equal(util_name_problem_n(".cat", 4), "starts with '.'");
	assert_string_equal(util_name_problem_n("cat", 0), "is empty");
	assert_string_equal(util_name_problem_n(NULL, 3), "is empty");
}

/* A control byte anywhere (a newline would forge a log line) fails,
 * counted or not, and a sender's fast path agrees; UTF-8 passes. */
static void test_name_control_bytes(void **state)
{
	static const char *const bad[] = {
		"peer\ngamma", "a\tb", "\x1b[31m", "x\x7f", "cr\r", "\x01",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_string_equal(util_name_problem(bad[i]),
				    "contains a control byte");
		assert_string_equal(util_name_problem_n(bad[i], strlen(bad[i])),
				    "contains a control byte");
		assert_int_equal(util_name_len(bad[i]), 0);
	}
	assert_null(util_name_problem("caf\xc3\xa9"));
	assert_int_equal(util_name_len("caf\xc3\xa9"), 5);
	assert_null(util_name_problem("a b~"));
}

/* Big-endian at odd addresses, both ways. */
static void test_codec(void **state)
{
	uint8_t b[8] = {0};

	util_put16(b + 1, 0x1234);
	util_put32(b + 3, 0xdeadbeef);
	assert_int_equal(b[1], 0x12);
	assert_int_equal(b[2], 0x34);
	assert_int_equal(b[3], 0xde);
	assert_int_equal(b[6], 0xef);
	assert_int_equal(util_get16(b + 1), 0x1234);
	assert_int_equal(util_get32(b + 3), 0xdeadbeef);
}

/* A GID prints as ibv_devinfo shows it. */
static void test_gid_str(void **state)
{
	union ibv_gid gid;
	char buf[UTIL_GID_STRLEN];

	memset(&gid, 0, sizeof(gid));
	gid.raw[10] = gid.raw[11] = 0xff;
	gid.raw[12] = 10;
	gid.raw[15] = 15;
	assert_string_equal(util_gid_str(&gid, buf, sizeof(buf)),
			    "::ffff:10.0.0.15");
	gid.raw[0] = 0xfe;
	gid.raw[1] = 0x80;
	assert_string_equal(util_gid_str(&gid, buf, sizeof(buf)),
			    "fe80::ffff:a00:f");
	assert_string_equal(util_gid_str(&gid, buf, 4), "?");
}

/* The clock never goes back. */
static void test_clock(void **state)
{
	uint64_t a = util_now_ms(), b = util_now_ms();

	assert_true(a > 0);
	assert_true(b >= a);
}

/* last_attempt= of .status: UTC ISO 8601 with ms, and "" for never. */
static void test_utc_str(void **state)
{
	char buf[UTIL_UTC_STRLEN];

	assert_string_equal(util_utc_str(0, buf, sizeof(buf)), "");
	assert_string_equal(util_utc_str(1796170503042LL, buf, sizeof(buf)),
			    "2026-12-02T00:15:03.042Z");
	assert_string_equal(util_utc_str(1000, buf, sizeof(buf)),
			    "1970-01-01T00:00:01.000Z");
	/* fixed width, so that later is greater as a string too */
	assert_int_equal(strlen(util_utc_str(util_wall_ms(), buf, sizeof(buf))),
			 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_rule),
		cmocka_unit_test(test_name_rule_counted),
		cmocka_unit_test(test_name_control_bytes),
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_gid_str),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_utc_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
