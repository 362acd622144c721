/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for budget.c, the daemon-wide memory budget (memory_limit).
 * The contract: nothing beyond the limit is ever charged; a refusal
 * (-ENOBUFS) charges nothing; a peer alone takes at most half; every
 * peer, however late and however full the others left it, finds its
 * floor, limit / (2 * npeers); what is given back is room again; a
 * forced charge (bytes put back) is never refused.
 */
#include <errno.h>
#include <stdlib.h>

#include "unit.h"

#include "budget.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* Take step bytes at a time for peer until refused: what it got. */
static uint64_t fill(struct budget *b, int peer, uint64_t step)
{
	uint64_t got = 0;

	while (budget_take(b, peer, step) == 0)
		got += step;
	return got;
}

/* A peer alone holds at most half: the rest waits for others. */
static void test_alone_half(void **state)
{
	struct budget b;

	assert_int_equal(budget_init(&b, 1200, 3), 0);
	assert_int_equal(b.floor, 200);
	assert_int_equal(fill(&b, 0, 10), 600);
	assert_int_equal(b.total, 600);
	assert_int_equal(budget_take(&b, 0, 1), -ENOBUFS);
	assert_int_equal(b.held[0], 600); /* a refusal charges nothing */
	budget_free(&b);
}

/*
 * A hog cannot starve the others: three hogs one after another, nothing
 * ever read; the second still gets more than its floor, the third its
 * floor at least, and the total never passes the limit.
 */
static void test_hog_cannot_starve(void **state)
{
	uint64_t got[3];
	struct budget b;
	int i;

	assert_int_equal(budget_init(&b, 1200, 3), 0);
	for (i = 0; i < 3; i++)
		got[i] = fill(&b, i, 1);
	print_message("hogs got %lu %lu %lu of 1200\n", (unsigned long)got[0],
		      (unsigned long)got[1], (unsigned long)got[2]);
	assert_int_equal(got[0], 600);
	assert_true(got[1] > b.floor);
	assert_true(got[2] >= b.floor);
	assert_true(b.total <= b.limit);
	assert_int_equal(b.total, got[0] + got[1] + got[2]);
	budget_free(&b);
}

/* Many peers, one hog taking big pieces: each other peer still finds
 * its floor, however many there are. */
static void test_floor_for_each(void **state)
{
	struct budget b;
	int i;

	assert_int_equal(budget_init(&b, 64 * 1024, 64), 0);
	assert_int_equal(b.floor, 512);
	fill(&b, 0, 100);
	for (i = 1; i < 64; i++)
		assert_true(fill(&b, i, 8) >= b.floor);
	assert_true(b.total <= b.limit);
	budget_free(&b);
}

/* Given back is room again; a forced charge passes any rule. */
static void test_give_and_force(void **state)
{
	struct budget b;

	assert_int_equal(budget_init(&b, 1000, 2), 0);
	assert_int_equal(fill(&b, 0, 100), 500); /* 1000 / (1 + 1) */
	budget_give(&b, 0, 500);
	assert_int_equal(b.total, 0);
	assert_int_equal(b.nholders, 0);
	assert_int_equal(budget_take(&b, 1, 400), 0); /* 1000 / 2 */
	assert_int_equal(budget_take(&b, 1, 200), -ENOBUFS);
	budget_force(&b, 1, 200);
	assert_int_equal(b.held[1], 600);
	assert_int_equal(b.total, 600);
	budget_give(&b, 1, 600);
	assert_int_equal(b.unused_floors, 2 * b.floor);
	budget_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alone_half),
		cmocka_unit_test(test_hog_cannot_starve),
		cmocka_unit_test(test_floor_for_each),
		cmocka_unit_test(test_give_and_force),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
