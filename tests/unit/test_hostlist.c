/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for hostlist.c: Slurm's hostlist syntax expanded to exact
 * names in order, every error it names with where, the -E2BIG cap and a
 * 10,000-name expansion.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "hostlist.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* expr expands to exactly the NULL-terminated names, in order. */
static void expect_names(const char *expr, const char *const *want)
{
	struct hostlist h;
	char err[128] = "untouched";
	size_t n = 0, i;

	while (want[n])
		n++;
	assert_int_equal(hostlist_expand(expr, 1000, &h, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(h.n, n);
	for (i = 0; i < n; i++)
		assert_string_equal(h.names[i], want[i]);
	hostlist_free(&h);
	assert_null(h.names);
	assert_int_equal(h.n, 0);
}

/* expr fails with rc, out left empty and a message holding `has`. */
static void expect_error(const char *expr, size_t max, int rc, const char *has)
{
	struct hostlist h = {(char **)&h, 99};
	char err[128] = "";

	assert_int_equal(hostlist_expand(expr, max, &h, err, sizeof(err)), rc);
	assert_null(h.names);
	assert_int_equal(h.n, 0);
	assert_true(err[0] != '\0');
	if (!strstr(err, has))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", expr, err, has);
}

/* Plain names, comma lists, and '.' and ':' as ordinary bytes. */
static void test_plain(void **state)
{
	expect_names("alpha", (const char *[]){"alpha", NULL});
	expect_names("a,b,c", (const char *[]){"a", "b", "c", NULL});
	expect_names("10.0.2.15:18601",
		     (const char *[]){"10.0.2.15:18601", NULL});
	expect_names("node-1.lab,x", (const char *[]){"node-1.lab", "x", NULL});
}

/* Lists and ranges inside one bracket. */
static void test_ranges(void **state)
{
	expect_names("cn[1-4,7]",
		     (const char *[]){"cn1", "cn2", "cn3", "cn4", "cn7", NULL});
	expect_names("cn[3]", (const char *[]){"cn3", NULL});
	expect_names("cn[5-5]", (const char *[]){"cn5", NULL});
	expect_names("cn[9,2,0]", (const char *[]){"cn9", "cn2", "cn0", NULL});
	expect_names("cn[0-2]", (const char *[]){"cn0", "cn1", "cn2", NULL});
	expect_names("[1-3]", (const char *[]){"1", "2", "3", NULL});
	expect_names(
		"10.0.2.[15-17]",
		(const char *[]){"10.0.2.15", "10.0.2.16", "10.0.2.17", NULL});
	expect_names("10.0.2.15:[18601-18603]",
		     (const char *[]){"10.0.2.15:18601", "10.0.2.15:18602",
				      "10.0.2.15:18603", NULL});
	expect_names("a,cn[1-2],b",
		     (const char *[]){"a", "cn1", "cn2", "b", NULL});
	expect_names("cn[999999998-999999999]",
		     (const char *[]){"cn999999998", "cn999999999", NULL});
}

/* Padding keeps the low bound's width; none without a leading zero. */
static void test_padding(void **state)
{
	expect_names("cn[001-003]",
		     (const char *[]){"cn001", "cn002", "cn003", NULL});
	expect_names("cn[8-10]", (const char *[]){"cn8", "cn9", "cn10", NULL});
	expect_names("[08-10]", (const char *[]){"08", "09", "10", NULL});
	expect_names("[098-100]", (const char *[]){"098", "099", "100", NULL});
	expect_names("[01-02,5,007]",
		     (const char *[]){"01", "02", "5", "007", NULL});
	expect_names("[9-011]", (const char *[]){"9", "10", "11", NULL});
}

/* 64 padded names, first and last. */
static void test_padding_064(void **state)
{
	struct hostlist h;
	char err[128], want[8];
	size_t i;

	assert_int_equal(
		hostlist_expand("cn[001-064]", 64, &h, err, sizeof(err)), 0);
	assert_int_equal(h.n, 64);
	for (i = 0; i < 64; i++) {
		snprintf(want, sizeof(want), "cn%03zu", i + 1);
		assert_string_equal(h.names[i], want);
	}
	hostlist_free(&h);
}

/* Several brackets multiply, leftmost slowest; text after a bracket. */
static void test_product(void **state)
{
	expect_names("rack[1-2]n[01-02]",
		     (const char *[]){"rack1n01", "rack1n02", "rack2n01",
				      "rack2n02", NULL});
	expect_names("cn[1-2]-ib", (const char *[]){"cn1-ib", "cn2-ib", NULL});
	expect_names("r[1,3]s[7]n[1-2]x",
		     (const char *[]){"r1s7n1x", "r1s7n2x", "r3s7n1x",
				      "r3s7n2x", NULL});
	expect_names("[1-2][1-2]",
		     (const char *[]){"11", "12", "21", "22", NULL});
	expect_names("a[1-2],b[5,7]c",
		     (const char *[]){"a1", "a2", "b5c", "b7c", NULL});
}

/* Empty expressions and items, and brackets that do not pair. */
static void test_bad_structure(void **state)
{
	struct hostlist h;

	expect_error("", 10, -EINVAL, "empty expression");
	assert_int_equal(hostlist_expand(NULL, 10, &h, NULL, 0), -EINVAL);
	expect_error("a,,b", 10, -EINVAL, "empty item at byte 2");
	expect_error("a,", 10, -EINVAL, "empty item at byte 2");
	expect_error(",a", 10, -EINVAL, "empty item at byte 0");
	expect_error(",", 10, -EINVAL, "empty item at byte 0");
	expect_error("cn[1-2", 10, -EINVAL, "unclosed '[' at byte 2");
	expect_error("cn[", 10, -EINVAL, "unclosed '[' at byte 2");
	expect_error("cn1]", 10, -EINVAL, "unmatched ']' at byte 3");
	expect_error("cn[1]]", 10, -EINVAL, "unmatched ']' at byte 5");
	expect_error("cn[1[2]]", 10, -EINVAL, "nested '[' at byte 4");
	expect_error("cn[[1]]", 10, -EINVAL, "nested '[' at byte 3");
	expect_error("cn[]", 10, -EINVAL, "empty brackets at byte 2");
}

/* What may stand inside a bracket, and how big numbers and names get. */
static void test_bad_bracket(void **state)
{
	char name[80];

	expect_error("cn[a]", 10, -EINVAL, "expected a digit at byte 3");
	expect_error("cn[1-x]", 10, -EINVAL, "found 'x'");
	expect_error("cn[1,]", 10, -EINVAL, "expected a digit at byte 5");
	expect_error("cn[,1]", 10, -EINVAL, "expected a digit at byte 3");
	expect_error("cn[-1]", 10, -EINVAL, "expected a digit at byte 3");
	expect_error("cn[1-]", 10, -EINVAL, "expected a digit at byte 5");
	expect_error("cn[1-2-3]", 10, -EINVAL, "expected ',' or ']' at byte 6");
	expect_error("cn[1 ]", 10, -EINVAL, "at byte 4, found byte 0x20");
	expect_error("cn[1\x01]", 10, -EINVAL, "found byte 0x01");
	expect_error("cn[4-2]", 10, -EINVAL, "range 4-2 at byte 3 runs back");
	expect_error("cn[1,10-09]", 10, -EINVAL, "range 10-09 at byte 5");
	expect_error("cn[1234567890]", 10, -EINVAL,
		     "number at byte 3 has more than 9 digits");
	expect_error("cn[1-0000000001]", 10, -EINVAL,
		     "number at byte 5 has more than 9 digits");
	memset(name, 'a', 63);
	name[63] = '\0';
	expect_names(name, (const char *[]){name, NULL});
	strcpy(name + 63, "b");
	expect_error(name, 10, -EINVAL, "item at byte 0 makes names longer");
}

/* A bracket's widest number counts, even past a narrow first one. */
static void test_long_names(void **state)
{
	char name[80], more[96];

	memset(name, 'a', 61);
	strcpy(name + 61, "[1-99]"); /* names of 62 and 63 bytes */
	snprintf(more, sizeof(more), "x,%s", name);
	{
		struct hostlist h;

		assert_int_equal(hostlist_expand(more, 100, &h, NULL, 0), 0);
		assert_int_equal(h.n, 100);
		assert_int_equal(strlen(h.names[1]), 62);
		assert_int_equal(strlen(h.names[99]), 63);
		hostlist_free(&h);
	}
	strcpy(name + 61, "[1-100]");
	snprintf(more, sizeof(more), "x,%s", name);
	expect_error(more, 1000, -EINVAL, "item at byte 2 makes names longer");
	strcpy(name + 61, "[1-0100]");
	expect_error(name, 1000, -EINVAL, "makes names longer than 63 bytes");
	expect_error("[1][2][3][4][5][6][7][8][9][0][1][2][3][4][5][6][7][8][9]"
		     "[0][1][2][3][4][5][6][7][8][9][0][1][2][3][4][5][6][7][8]"
		     "[9][0][1][2][3][4][5][6][7][8][9][0][1][2][3][4][5][6][7]"
		     "[8][9][0][1][2][3][4][5][6]",
		     10, -EINVAL, "makes names longer than 63 bytes");
}

/* More names than max: -E2BIG, counted before any is made. */
static void test_too_many(void **state)
{
	struct hostlist h;

	expect_error("cn[1-5]", 4, -E2BIG, "names 5 entries, over 4");
	expect_error("a,b,c", 2, -E2BIG, "over 2");
	expect_error("a", 0, -E2BIG, "over 0");
	expect_error("[0-999999999][0-999999999][0-999999999]", 1000, -E2BIG,
		     "names more than 1000 entries");
	/* syntax errors win, wherever they stand */
	expect_error("cn[1-999999],b[", 10, -EINVAL, "unclosed '[' at byte 14");
	assert_int_equal(hostlist_expand("cn[1-5]", 5, &h, NULL, 0), 0);
	assert_int_equal(h.n, 5);
	hostlist_free(&h);
	hostlist_free(NULL);
}

/* cn[00001-10000]: 10,000 names, five digits each. */
static void test_ten_thousand(void **state)
{
	struct hostlist h;
	char err[64];
	size_t i;

	assert_int_equal(
		hostlist_expand("cn[00001-10000]", 10000, &h, err, sizeof(err)),
		0);
	assert_int_equal(h.n, 10000);
	assert_string_equal(h.names[0], "cn00001");
	assert_string_equal(h.names[1], "cn00002");
	assert_string_equal(h.names[99], "cn00100");
	assert_string_equal(h.names[4999], "cn05000");
	assert_string_equal(h.names[9998], "cn09999");
	assert_string_equal(h.names[9999], "cn10000");
	for (i = 0; i < h.n; i++)
		assert_int_equal(strlen(h.names[i]), 7);
	hostlist_free(&h);
	assert_int_equal(
		hostlist_expand("cn[00001-10000]", 9999, &h, err, sizeof(err)),
		-E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_padding_064),
		cmocka_unit_test(test_product),
		cmocka_unit_test(test_bad_structure),
		cmocka_unit_test(test_bad_bracket),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_ten_thousand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
