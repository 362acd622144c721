/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for reliable.c's receiver on its own: when an ack must go at
 * once and when it may wait for a tick, what an ack carries (credit, the
 * cumulative ack, the selective ack, NAK), the credit of a stream
 * whose whole message waits for queue space, and the refusal codes: in
 * standalone acks only, for REL_SACK_BITS psns.
 */
#include "unit.h"
#include "reliable.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/*
 * Delayed acks: on a one-way stream a standalone ack is urgent only at a
 * new session, every REL_ACK_EVERY datagrams arrived (taken or held past
 * a gap), on a gap (NAK), a duplicate or the sender's request; the rest
 * wait for the timer tick.
 */
static void test_ack_urgency(void **state)
{
	struct rel_rx rx;
	uint32_t i;

	rel_rx_init(&rx, 64);
	rel_rx_join(&rx, 5);
	assert_int_equal(rel_rx_check(&rx, 5, 0), REL_ACCEPT);
	rel_rx_advance(&rx);
	assert_true(rel_rx_ack_urgent(&rx)); /* a new session */
	rel_rx_acked(&rx);
	for (i = 1; i < REL_ACK_EVERY; i++) {
		assert_int_equal(rel_rx_check(&rx, 5, i), REL_ACCEPT);
		rel_rx_advance(&rx);
		assert_true(rx.ack_due);
		assert_false(rel_rx_ack_urgent(&rx));
	}
	assert_int_equal(rel_rx_check(&rx, 5, i), REL_ACCEPT);
	rel_rx_advance(&rx);
	assert_true(rel_rx_ack_urgent(&rx)); /* REL_ACK_EVERY arrived */
	rel_rx_acked(&rx);
	assert_false(rel_rx_ack_urgent(&rx));
	/* a duplicate: the sender did not hear us */
	assert_int_equal(rel_rx_check(&rx, 5, 3), REL_DUP);
	assert_true(rel_rx_ack_urgent(&rx));
	rel_rx_acked(&rx);
	/* a gap: NAK at once */
	assert_int_equal(rel_rx_check(&rx, 5, rx.nxt + 2), REL_AHEAD);
	assert_true(rx.nak_due);
	assert_true(rel_rx_ack_urgent(&rx));
	rel_rx_acked(&rx);
	/* held past the gap: the sender counts these as on the wire until
	 * a sack says otherwise, so they are acked as often as taken ones */
	for (i = 0; i + 1 < REL_ACK_EVERY; i++) {
		assert_int_equal(rel_rx_check(&rx, 5, rx.nxt + 3 + i),
				 REL_AHEAD);
		assert_false(rel_rx_ack_urgent(&rx));
	}
	assert_int_equal(rel_rx_check(&rx, 5, rx.nxt + 3 + i), REL_AHEAD);
	assert_true(rel_rx_ack_urgent(&rx));
	rel_rx_acked(&rx);
	/* the sender asks: it has nothing more to send */
	rel_rx_ask_ack(&rx);
	assert_true(rel_rx_ack_urgent(&rx));
}

/*
 * The ack half of a trailer: credit only before the stream is joined; a
 * DATA datagram (no room for the sack) carries no ack while datagrams are
 * held past a gap, and the ack due goes alone at once; a standalone one
 * carries the sack.  A held message means credit 0 until it goes in.
 */
static void test_ack_take(void **state)
{
	struct rel_rx rx;
	struct rel_ack a;

	rel_rx_init(&rx, 64);
	rel_rx_ask_ack(&rx); /* not joined: nothing to ask for */
	assert_false(rel_rx_ack_pending(&rx));
	rel_rx_ack_take(&rx, 0, &a);
	assert_int_equal(a.credit, 64);
	assert_false(a.ack);
	assert_int_equal(rel_rx_check(&rx, 9, 0), REL_FOREIGN);
	rel_rx_join(&rx, 9);
	assert_int_equal(rel_rx_check(&rx, 9, 0), REL_ACCEPT);
	rel_rx_advance(&rx);
	rel_rx_ack_take(&rx, 0, &a);
	assert_true(a.ack);
	assert_false(a.sack);
	assert_int_equal(a.sess, 9);
	assert_int_equal(a.nxt, 1);
	assert_false(rel_rx_ack_pending(&rx)); /* it went */
	assert_int_equal(rel_rx_check(&rx, 9, 3), REL_AHEAD);
	rel_rx_ack_take(&rx, 0, &a);
	assert_false(a.ack);
	assert_true(rel_rx_ack_wanted(&rx, 0)); /* alone, at once */
	rel_rx_ack_take(&rx, 1, &a);
	assert_true(a.ack && a.sack && a.nak);
	assert_true(rel_bit(&a.bits, 1)); /* psn 3 = nxt + 1 + 1 */
	assert_false(rel_rx_ack_wanted(&rx, 1));
	rel_rx_block(&rx);
	rel_rx_ack_take(&rx, 1, &a);
	assert_int_equal(a.credit, 0);
	/* refused: not held; the stream moves on, and says so at once */
	rel_rx_unblock_refused(&rx, REL_CODE_FULL);
	assert_true(rel_rx_ack_wanted(&rx, 0));
	assert_int_equal(rel_rx_next(&rx), 2);
	rel_rx_ack_take(&rx, 0, &a); /* no room for the codes: none goes */
	assert_false(a.ack);
	assert_true(rel_rx_ack_wanted(&rx, 0));
	rel_rx_ack_take(&rx, 1, &a);
	assert_true(a.ack && a.refuse);
	assert_int_equal(a.credit, 64);
	assert_int_equal(rel_codes_get(&a.codes, a.nxt, 1), REL_CODE_FULL);
	assert_int_equal(rel_codes_get(&a.codes, a.nxt, 0), REL_CODE_NONE);
}

/*
 * A refusal's code stays in every ack for REL_SACK_BITS psns (the
 * sender's una is never further back), then leaves, and acks may ride
 * on DATA again.
 */
static void test_refusal_span(void **state)
{
	struct rel_rx rx;
	struct rel_ack a;
	uint32_t psn;

	rel_rx_init(&rx, 64);
	rel_rx_join(&rx, 3);
	assert_int_equal(rel_rx_check(&rx, 3, 0), REL_ACCEPT);
	rel_rx_refuse(&rx, REL_CODE_NOSPC);
	for (psn = 1; psn < REL_SACK_BITS; psn++) {
		assert_int_equal(rel_rx_check(&rx, 3, psn), REL_ACCEPT);
		rel_rx_advance(&rx);
		rel_rx_ack_take(&rx, 0, &a);
		assert_false(a.ack);
		rel_rx_ack_take(&rx, 1, &a);
		assert_true(a.ack && a.refuse);
		assert_int_equal(rel_codes_get(&a.codes, a.nxt, 0),
				 REL_CODE_NOSPC);
	}
	assert_int_equal(rel_rx_check(&rx, 3, psn), REL_ACCEPT);
	rel_rx_advance(&rx); /* psn 0 left the span */
	rel_rx_ack_take(&rx, 0, &a);
	assert_true(a.ack);
	assert_false(a.refuse);
	/* a new session forgets them */
	rel_rx_refuse(&rx, REL_CODE_FULL);
	rel_rx_drop(&rx);
	rel_rx_ack_take(&rx, 0, &a);
	assert_true(a.ack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_urgency),
		cmocka_unit_test(test_ack_take),
		cmocka_unit_test(test_refusal_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
