/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The key table as the one source of each key's default and its
 * ibfs.conf(5) entry (config_keys.c): every row documents its key, a
 * default the key's own range would refuse says in words what it means,
 * a config that leaves a key out gets the row's default, and the range
 * the page shows is the one the parser keeps.
 */
#include "config_harness.h"
#include "config_parse.h"

/* Each row, [global] and [node NAME]: a name once, and a paragraph. */
static void check_rows(const struct config_key *keys, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		assert_non_null(keys[i].name);
		assert_non_null(keys[i].doc);
		assert_true(strlen(keys[i].doc) > 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(keys[i].name, keys[j].name);
	}
}

static void t_rows_documented(void **state)
{
	check_rows(config_gkeys, GK_MAX);
	check_rows(config_nkeys, NK_MAX);
}

/* A default outside the key's values (-1: unset) must be one in words. */
static void t_default_in_range_or_told(void **state)
{
	const struct config_key *k;
	size_t n;

	for (k = config_gkeys; k < config_gkeys + GK_MAX; k++) {
		if (k->def_doc)
			continue;
		if (k->choices) {
			for (n = 0; k->choices[n]; n++)
				;
			assert_in_range(k->def, 0, n - 1);
		} else if (k->unit != UNIT_NONE || k->max) {
			assert_in_range((uint64_t)k->def, k->min, k->max);
		}
	}
}

/* The field of a key left out holds the row's default. */
static void t_defaults_from_rows(void **state)
{
	const struct config_key *k;
	uint64_t v64;
	uint32_t v32;

	good(NODE_A);
	for (k = config_gkeys; k < config_gkeys + GK_MAX; k++) {
		if (k->def_doc && k->def == 0)
			continue; /* derived once the file is read */
		if (k->size == sizeof(v64)) {
			memcpy(&v64, (char *)&cfg + k->off, sizeof(v64));
			assert_int_equal(v64, (uint64_t)k->def);
		} else if (k->size == sizeof(v32)) {
			memcpy(&v32, (char *)&cfg + k->off, sizeof(v32));
			assert_int_equal(v32, (uint32_t)k->def);
		}
	}
}

/* One past each number key's upper bound is refused as out of range. */
static void t_range_from_rows(void **state)
{
	const struct config_key *k;
	char text[256];

	for (k = config_gkeys; k < config_gkeys + GK_MAX; k++) {
		if ((k->unit != UNIT_NUM && k->unit != UNIT_MS) ||
		    k->max >= UINT32_MAX)
			continue;
		snprintf(text, sizeof(text), "[global]\n%s = %llu\n" NODE_A,
			 k->name, (unsigned long long)k->max + 1);
		bad(text, 2, "is out of range");
		config_free(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_rows_documented),
		T(t_default_in_range_or_told),
		T(t_defaults_from_rows),
		T(t_range_from_rows),
	};

	return cmocka_run_group_tests_name("config_keys", tests, NULL, NULL);
}
