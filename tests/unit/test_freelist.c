/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for freelist.c, the blocks kept for reuse.  The contract: a
 * block put back is the next one got (no allocation); no more than max
 * are ever kept, the rest go back to the heap at once; drain frees every
 * block kept, and the list is usable after.  Heap use is read from
 * glibc's mallinfo2 so that a block kept past its bound, or left at
 * drain, fails in make unit itself; under valgrind, whose allocator
 * mallinfo2 does not see, its leak check is what catches the second.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "freelist.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* Blocks past glibc's tcache (1,032 bytes), which would hold freed
 * blocks as in use: the heap counts below then see every free. */
enum { SIZE = 2048, MAX = 4, MANY = 64 };

/* Bytes the heap holds for the program now. */
static size_t heap_used(void)
{
	return mallinfo2().uordblks;
}

/* Whether heap_used counts (glibc's allocator, not valgrind's). */
static int heap_counted(void)
{
	return mallinfo2().arena > 0;
}

/* A block put back is the one the next get returns: LIFO, no malloc. */
static void test_reuse(void **state)
{
	struct freelist fl;
	void *a, *b;

	freelist_init(&fl, SIZE, MAX);
	a = freelist_get(&fl);
	assert_non_null(a);
	memset(a, 0xab, SIZE); /* every byte of size is the caller's */
	freelist_put(&fl, a);
	assert_int_equal(fl.n, 1);
	b = freelist_get(&fl);
	assert_ptr_equal(a, b);
	assert_int_equal(fl.n, 0);
	freelist_put(&fl, b);
	freelist_put(&fl, NULL); /* nothing */
	assert_int_equal(fl.n, 1);
	freelist_drain(&fl);
}

/* Puts past max free at once: a burst leaves max blocks behind. */
static void test_bounded(void **state)
{
	struct freelist fl;
	void *v[MANY];
	size_t before, kept;
	int i;

	freelist_init(&fl, SIZE, MAX);
	before = heap_used();
	for (i = 0; i < MANY; i++) {
		v[i] = freelist_get(&fl);
		assert_non_null(v[i]);
	}
	for (i = 0; i < MANY; i++)
		freelist_put(&fl, v[i]);
	assert_int_equal(fl.n, MAX);
	if (heap_counted()) {
		kept = heap_used() - before;
		assert_true(kept >= MAX * SIZE);
		assert_true(kept < (MAX + 1) * (SIZE + 32));
	}
	freelist_drain(&fl);
}

/* Drain gives every kept block back; the list works on after. */
static void test_drain(void **state)
{
	struct freelist fl;
	size_t before;
	void *v[MAX];
	int i;

	freelist_init(&fl, SIZE, MAX);
	before = heap_used();
	for (i = 0; i < MAX; i++)
		v[i] = freelist_get(&fl);
	for (i = 0; i < MAX; i++)
		freelist_put(&fl, v[i]);
	freelist_drain(&fl);
	assert_int_equal(fl.n, 0);
	assert_null(fl.head);
	if (heap_counted())
		assert_int_equal(heap_used(), before);
	v[0] = freelist_get(&fl);
	assert_non_null(v[0]);
	freelist_put(&fl, v[0]);
	freelist_drain(&fl);
	if (heap_counted())
		assert_int_equal(heap_used(), before);
}

/* A block smaller than the link is made large enough to hold it. */
static void test_small_blocks(void **state)
{
	struct freelist fl;
	void *a, *b;

	freelist_init(&fl, 1, MAX);
	assert_true(fl.size >= sizeof(void *));
	a = freelist_get(&fl);
	b = freelist_get(&fl);
	freelist_put(&fl, a);
	freelist_put(&fl, b);
	assert_ptr_equal(freelist_get(&fl), b);
	assert_ptr_equal(freelist_get(&fl), a);
	freelist_put(&fl, a);
	freelist_put(&fl, b);
	freelist_drain(&fl);
}

/* max 0 keeps nothing: every put frees. */
static void test_keep_none(void **state)
{
	struct freelist fl;

	freelist_init(&fl, SIZE, 0);
	freelist_put(&fl, freelist_get(&fl));
	assert_int_equal(fl.n, 0);
	assert_null(fl.head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_small_blocks),
		cmocka_unit_test(test_keep_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
