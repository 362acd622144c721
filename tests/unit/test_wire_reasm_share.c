/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for wire_reasm.c's budget against a hostile peer: one
 * peer's partial messages cannot take another's room, tiny partials are
 * charged what they really cost and are bounded in number, expiry works
 * in slices of a bounded size, and a peer's group messages share its
 * share while reassembling apart from its unicast ones.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"
#include "wire_msgs.h"

/* The table tp_recv.c makes for max_message = 1 MiB. */
#define LIMIT (64 * MIB)

/* Heap bytes in use now, as malloc counts them. */
static size_t heap_used(void)
{
	return mallinfo2().uordblks;
}

/*
 * Peer 0 sends the first fragment of `n' max_message messages, ids from
 * id0; returns how many were taken, and checks the others were refused
 * as its share's.
 */
static unsigned flood_firsts(struct wire_reasm *r, int peer, unsigned n,
			     uint32_t id0, uint8_t flag)
{
	uint8_t *msg = msg_make(MIB, 3), buf[MTU];
	struct wire_msg m;
	unsigned i, taken = 0;
	size_t l;
	int rc;

	for (i = 0; i < n; i++) {
		l = wire_frag_build(buf, MTU, 1, id0 + i, "big", msg, MIB, 0);
		assert_true(l > 0);
		if (flag)
			wire_set_flag(buf, flag);
		rc = wire_reasm_feed(r, peer, buf, l, 0, &m);
		if (rc == 0)
			taken++;
		else
			assert_int_equal(rc, -WIRE_DROP_SHARE);
	}
	free(msg);
	return taken;
}

/*
 * 63 and more first fragments of 1 MiB messages from one peer leave room
 * for another peer's 1 MiB message, then a third's; the flooder's group
 * messages do not get around its share.
 */
static void test_second_peer_room(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, LIMIT, 1000);
	uint8_t *msg = msg_make(MIB, 5);
	struct frags f = frags_make(msg, MIB, MTU, 2, 9, "other");
	struct frags g = frags_make(msg, MIB, MTU, 2, 10, "other");
	unsigned taken;

	assert_true(f.n > 1);
	/* a peer alone takes all the budget but one message's room */
	taken = flood_firsts(r, 0, 100, 0, 0);
	assert_int_equal(taken, 62);
	assert_int_equal(wire_reasm_pending(r), 62);
	assert_true(wire_reasm_mem(r) > (size_t)62 * MIB);
	assert_true(wire_reasm_mem(r) <= LIMIT - MIB);
	/* its multicast ids are another sequence, but the same share */
	assert_int_equal(flood_firsts(r, 0, 5, 0, WIRE_FLAG_MCAST), 0);
	/* a second peer's whole message still goes through, and again */
	feed_expect(r, 1, &f, NULL, 9, "other", msg, MIB);
	feed_expect(r, 1, &g, NULL, 10, "other", msg, MIB);
	/* and then a third's */
	feed_expect(r, 2, &f, NULL, 9, "other", msg, MIB);
	assert_int_equal(wire_reasm_pending(r), 62);
	/* once the flood expires, the flooder starts over */
	assert_int_equal(wire_reasm_expire(r, 1000), 62);
	assert_int_equal(wire_reasm_mem(r), 0);
	assert_int_equal(flood_firsts(r, 0, 1, 1000, 0), 1);
	frags_free(&f);
	frags_free(&g);
	free(msg);
	wire_reasm_free(r);
}

/*
 * Two peers hold partials: each is held to half the budget, even with
 * room left, and a peer's second message may not take the last room.
 */
static void test_fair_share(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 8 * MIB, 1000);

	assert_int_equal(flood_firsts(r, 0, 3, 0, 0), 3);
	assert_int_equal(flood_firsts(r, 1, 10, 0, 0), 3);
	assert_int_equal(flood_firsts(r, 0, 10, 100, 0), 0);
	assert_int_equal(wire_reasm_pending(r), 6);
	wire_reasm_free(r);
}

/*
 * 414,000 partial messages of 2 bytes from one peer: it keeps at most
 * WIRE_REASM_PEER_PARTS, each charged its real cost (what the heap grew
 * by, no more), and another peer's messages still go through.
 */
static void test_tiny_partials(void **state __attribute__((unused)))
{
	enum { N = 414000 };
	struct wire_reasm *r = wire_reasm_new(MIB, LIMIT, 1000);
	const uint8_t two[2] = {7, 8};
	uint8_t buf[64];
	struct wire_msg m;
	unsigned i, taken = 0, refused = 0;
	size_t l, heap0 = heap_used(), grew;
	int rc;

	for (i = 0; i < N; i++) {
		/* mtu 26: one payload byte a fragment, so 2 fragments */
		l = wire_frag_build(buf, WIRE_HDR_LEN + 1 + 1, 1, i, "t", two,
				    2, 0);
		rc = wire_reasm_feed(r, 0, buf, l, 0, &m);
		taken += rc == 0;
		refused += rc == -WIRE_DROP_SHARE;
	}
	grew = heap_used() - heap0;
	assert_int_equal(taken, WIRE_REASM_PEER_PARTS);
	assert_int_equal(refused, N - WIRE_REASM_PEER_PARTS);
	assert_int_equal(wire_reasm_pending(r), WIRE_REASM_PEER_PARTS);
	/* charged all it holds: every partial 256 bytes or more, and more
	 * than the heap grew by (the peer's own entry aside) */
	assert_true(wire_reasm_mem(r) >= (size_t)WIRE_REASM_PEER_PARTS * 256);
	assert_true(wire_reasm_mem(r) <= (size_t)WIRE_REASM_PEER_PARTS * 512);
	assert_true(grew <= wire_reasm_mem(r) + 4096);
	/* another peer is not held by peer 0's count */
	for (i = 0; i < 2; i++) {
		l = wire_frag_build(buf, WIRE_HDR_LEN + 1 + 1, 1, 5, "t", two,
				    2, i);
		rc = wire_reasm_feed(r, 1, buf, l, 0, &m);
		assert_int_equal(rc, i);
	}
	msg_check(&m, 1, 5, "t", two, 2);
	assert_int_equal(wire_reasm_forget_peer(r, 0), WIRE_REASM_PEER_PARTS);
	assert_int_equal(wire_reasm_mem(r), 0);
	wire_reasm_free(r);
}

/*
 * 3000 partials due at once: one expiry pass drops the slice bound and
 * no more, oldest first; next_timeout says 0 until all have gone.
 */
static void test_expire_slices(void **state __attribute__((unused)))
{
	enum { N = 3000 };
	struct wire_reasm *r = wire_reasm_new(MIB, LIMIT, 100);
	const uint8_t two[2] = {1, 2};
	unsigned per[3] = {0, 0, 0}, i, n, left = N;
	uint8_t buf[64];
	struct wire_msg m;
	size_t l;

	for (i = 0; i < N; i++) {
		l = wire_frag_build(buf, WIRE_HDR_LEN + 1 + 1, 1, i, "e", two,
				    2, 1);
		assert_int_equal(
			wire_reasm_feed(r, (int)(i % 3), buf, l, i / 10, &m),
			0);
	}
	/* at 149 those first seen before 50 are due: 500 of them */
	assert_int_equal(wire_reasm_expire_each(r, 149, count_peer, per), 500);
	left -= 500;
	assert_int_equal(wire_reasm_next_timeout(r, 149), 1);
	while (left) {
		n = wire_reasm_expire_each(r, 1000, count_peer, per);
		assert_int_equal(n, left < WIRE_REASM_EXPIRE_SLICE
					    ? left
					    : WIRE_REASM_EXPIRE_SLICE);
		left -= n;
		assert_int_equal(wire_reasm_pending(r), left);
		assert_int_equal(wire_reasm_next_timeout(r, 1000),
				 left ? 0 : -1);
	}
	assert_int_equal(per[0] + per[1] + per[2], N);
	assert_int_equal(per[0], N / 3);
	assert_int_equal(wire_reasm_mem(r), 0);
	wire_reasm_free(r);
}

/* A peer's unicast and group messages with one msg_id stay apart. */
static void test_mcast_apart(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, LIMIT, 1000);
	uint8_t *a = msg_make(5000, 7), *b = msg_make(5000, 8);
	struct frags fa = frags_make(a, 5000, 1024, 1, 4, "x");
	struct frags fb = frags_make(b, 5000, 1024, 1, 4, "x");
	struct wire_msg m;
	uint32_t i;
	int rc;

	for (i = 0; i < fb.n; i++)
		wire_set_flag(fb.d[i].b, WIRE_FLAG_MCAST);
	for (i = 0; i < fa.n; i++) {
		rc = wire_reasm_feed(r, 0, fa.d[i].b, fa.d[i].len, 0, &m);
		assert_int_equal(rc, i + 1 < fa.n ? 0 : 1);
		if (rc == 1)
			msg_check(&m, 0, 4, "x", a, 5000);
		rc = wire_reasm_feed(r, 0, fb.d[i].b, fb.d[i].len, 0, &m);
		assert_int_equal(rc, i + 1 < fb.n ? 0 : 1);
		if (rc == 1)
			msg_check(&m, 0, 4, "x", b, 5000);
	}
	/* each is remembered done on its own sequence */
	assert_int_equal(wire_reasm_feed(r, 0, fb.d[0].b, fb.d[0].len, 0, &m),
			 -WIRE_DROP_DUPLICATE);
	frags_free(&fa);
	frags_free(&fb);
	free(a);
	free(b);
	wire_reasm_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_peer_room),
		cmocka_unit_test(test_fair_share),
		cmocka_unit_test(test_tiny_partials),
		cmocka_unit_test(test_expire_slices),
		cmocka_unit_test(test_mcast_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
