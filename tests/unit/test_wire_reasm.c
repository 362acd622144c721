/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for wire.c's reassembly: messages whole from their fragments
 * under reordering, loss, duplicates, interleaving and lies about
 * geometry, and within the size, memory and time limits.  Every completed
 * message is compared byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"
#include "wire_msgs.h"

/* One datagram is a message at once; nothing stays pending. */
static void test_single_fragment(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	size_t room = wire_frag_room(MTU, 4);
	uint8_t *msg = msg_make(room, 2);
	struct frags f = frags_make(msg, room, MTU, 9, 100, "chan");
	struct wire_msg m;

	assert_int_equal(f.n, 1);
	assert_int_equal(f.d[0].len, MTU);
	assert_int_equal(wire_reasm_feed(r, 3, f.d[0].b, f.d[0].len, 0, &m), 1);
	msg_check(&m, 3, 100, "chan", msg, room);
	assert_int_equal(wire_reasm_pending(r), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 0), -1);
	frags_free(&f);

	/* 1 byte */
	f = frags_make(msg, 1, MTU, 9, 101, "chan");
	feed_expect(r, 3, &f, NULL, 101, "chan", msg, 1);
	frags_free(&f);

	/* a byte more than one datagram takes two */
	free(msg);
	msg = msg_make(room + 1, 3);
	f = frags_make(msg, room + 1, MTU, 9, 102, "chan");
	assert_int_equal(f.n, 2);
	assert_int_equal(f.d[1].len, 24 + 4 + 1);
	feed_expect(r, 3, &f, NULL, 102, "chan", msg, room + 1);
	frags_free(&f);
	free(msg);
	wire_reasm_free(r);
}

/* An empty message is one fragment with no payload, delivered as such. */
static void test_empty_message(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(0, 0, 1000);
	struct frags f = frags_make(NULL, 0, MTU, 1, 5, "e");
	struct wire_msg m;

	assert_int_equal(f.n, 1);
	assert_int_equal(f.d[0].len, 25);
	assert_int_equal(wire_reasm_feed(r, 0, f.d[0].b, f.d[0].len, 0, &m), 1);
	assert_int_equal(m.len, 0);
	assert_non_null(m.data);
	assert_string_equal(m.chan, "e");
	free(m.data);
	/* a repeat is a duplicate */
	assert_int_equal(wire_reasm_feed(r, 0, f.d[0].b, f.d[0].len, 0, &m),
			 -WIRE_DROP_DUPLICATE);
	frags_free(&f);
	wire_reasm_free(r);
}

/* 1 MiB at several MTUs, in order. */
static void test_in_order(void **state __attribute__((unused)))
{
	static const size_t mtus[] = {256, 1024, 2048, 4096};
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t *msg = msg_make(MIB, 4);
	struct frags f;
	size_t i;

	for (i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		f = frags_make(msg, MIB, mtus[i], 1, (uint32_t)i, "big");
		assert_int_equal(f.n, wire_frag_count(MIB, mtus[i], 3));
		feed_expect(r, 0, &f, NULL, (uint32_t)i, "big", msg, MIB);
		assert_int_equal(wire_reasm_pending(r), 0);
		frags_free(&f);
	}
	free(msg);
	wire_reasm_free(r);
}

/* Last fragment first, then backwards. */
static void test_reversed(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t *msg = msg_make(MIB - 3, 5);
	struct frags f = frags_make(msg, MIB - 3, 1024, 1, 9, "rev");
	uint32_t *order = malloc(f.n * sizeof(*order)), i;

	assert_non_null(order);
	for (i = 0; i < f.n; i++)
		order[i] = f.n - 1 - i;
	feed_expect(r, 0, &f, order, 9, "rev", msg, MIB - 3);
	free(order);
	frags_free(&f);
	free(msg);
	wire_reasm_free(r);
}

/* Seeded shuffles at sizes around fragment boundaries. */
static void test_shuffled(void **state __attribute__((unused)))
{
	static const size_t lens[] = {2, 37, 38, 39, 1000, 4071, 4072, MIB};
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	struct frags f;
	uint32_t *order;
	uint8_t *msg;
	size_t i, mtu;
	uint64_t seed;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (seed = 1; seed <= 4; seed++) {
			mtu = lens[i] < 100 ? 24 + 2 + 1 + seed : 1024 * seed;
			msg = msg_make(lens[i], seed * 31 + i);
			f = frags_make(msg, lens[i], mtu, 7, (uint32_t)seed,
				       "sh");
			order = perm_make(f.n, seed * 1000 + i);
			feed_expect(r, 2, &f, order, (uint32_t)seed, "sh", msg,
				    lens[i]);
			assert_int_equal(wire_reasm_pending(r), 0);
			free(order);
			frags_free(&f);
			free(msg);
		}
		/* new msg_ids next round: forget the completed ones */
		wire_reasm_forget_peer(r, 2);
	}
	wire_reasm_free(r);
}

/* Expiry names the peer of every dropped message. */
static void test_expire_each_peer(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 100);
	uint8_t *msg = msg_make(5000, 9);
	struct frags f = frags_make(msg, 5000, 1024, 3, 1, "x");
	struct frags g = frags_make(msg, 5000, 1024, 4, 2, "x");
	unsigned counts[4] = {0};
	struct wire_msg m;

	assert_int_equal(wire_reasm_feed(r, 1, f.d[0].b, f.d[0].len, 0, &m), 0);
	assert_int_equal(wire_reasm_feed(r, 3, g.d[0].b, g.d[0].len, 0, &m), 0);
	assert_int_equal(wire_reasm_feed(r, 3, g.d[1].b, g.d[1].len, 50, &m),
			 0);
	assert_int_equal(wire_reasm_expire_each(r, 100, count_peer, counts), 2);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[3], 1);
	assert_int_equal(counts[0] + counts[2], 0);
	frags_free(&f);
	frags_free(&g);
	free(msg);
	wire_reasm_free(r);
}

/* A lost fragment: never completes, expires at the timeout exactly. */
static void test_loss_expire(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 500);
	uint8_t *msg = msg_make(100000, 6);
	struct frags f = frags_make(msg, 100000, 2048, 1, 1, "loss");
	struct frags g = frags_make(msg, 100000, 2048, 1, 2, "loss");
	struct wire_msg m;
	uint32_t i;

	for (i = 0; i < f.n; i++) {
		if (i == 17)
			continue;
		assert_int_equal(wire_reasm_feed(r, 1, f.d[i].b, f.d[i].len,
						 1000 + i, &m),
				 0);
	}
	/* second message, also incomplete, seen later */
	assert_int_equal(wire_reasm_feed(r, 1, g.d[0].b, g.d[0].len, 1200, &m),
			 0);
	assert_int_equal(wire_reasm_pending(r), 2);
	assert_int_equal(wire_reasm_next_timeout(r, 1000), 500);
	assert_int_equal(wire_reasm_expire(r, 1000), 0);
	assert_int_equal(wire_reasm_expire(r, 1499), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 1499), 1);
	assert_int_equal(wire_reasm_next_timeout(r, 1500), 0);
	assert_int_equal(wire_reasm_expire(r, 1500), 1);
	assert_int_equal(wire_reasm_pending(r), 1);
	assert_int_equal(wire_reasm_next_timeout(r, 1500), 200);
	assert_int_equal(wire_reasm_expire(r, 5000), 1);
	assert_int_equal(wire_reasm_pending(r), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 5000), -1);
	assert_int_equal(wire_reasm_expire(r, 9000), 0);

	/* the lost fragment arriving late starts a new partial, no crash */
	assert_int_equal(
		wire_reasm_feed(r, 1, f.d[17].b, f.d[17].len, 6000, &m), 0);
	assert_int_equal(wire_reasm_expire(r, 6500), 1);
	frags_free(&f);
	frags_free(&g);
	free(msg);
	wire_reasm_free(r);
}

/* Duplicate fragments are refused and do not disturb the message. */
static void test_duplicates(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t *msg = msg_make(50000, 7);
	struct frags f = frags_make(msg, 50000, 1024, 1, 1, "dup");
	struct wire_msg m;
	uint32_t i;
	uint8_t *bogus;

	for (i = 0; i + 1 < f.n; i++) {
		assert_int_equal(
			wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m), 0);
		assert_int_equal(
			wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m),
			-WIRE_DROP_DUPLICATE);
	}
	/* a duplicate with different bytes must not overwrite the first */
	bogus = malloc(f.d[0].len);
	assert_non_null(bogus);
	memcpy(bogus, f.d[0].b, f.d[0].len);
	memset(bogus + 24 + 3, 0xee, f.d[0].len - 24 - 3);
	assert_int_equal(wire_reasm_feed(r, 0, bogus, f.d[0].len, 0, &m),
			 -WIRE_DROP_DUPLICATE);
	i = f.n - 1;
	assert_int_equal(wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m), 1);
	msg_check(&m, 0, 1, "dup", msg, 50000);

	/* after completion: every fragment of it is a duplicate */
	for (i = 0; i < f.n; i++)
		assert_int_equal(
			wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m),
			-WIRE_DROP_DUPLICATE);
	assert_int_equal(wire_reasm_pending(r), 0);
	free(bogus);
	frags_free(&f);
	free(msg);
	wire_reasm_free(r);
}

/* The completed ring holds the last 64 msg_ids per peer, no more. */
static void test_completed_ring(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, MIB, 1000);
	uint8_t buf[64], msg[8] = "payload";
	struct wire_msg m;
	size_t l;
	uint32_t id;

	for (id = 0; id < 65; id++) {
		l = wire_frag_build(buf, 64, 1, id, "c", msg, 8, 0);
		assert_int_equal(wire_reasm_feed(r, 4, buf, l, 0, &m), 1);
		free(m.data);
	}
	/* 1..64 are remembered; 0 has been pushed out */
	for (id = 1; id < 65; id++) {
		l = wire_frag_build(buf, 64, 1, id, "c", msg, 8, 0);
		assert_int_equal(wire_reasm_feed(r, 4, buf, l, 0, &m),
				 -WIRE_DROP_DUPLICATE);
	}
	l = wire_frag_build(buf, 64, 1, 0, "c", msg, 8, 0);
	assert_int_equal(wire_reasm_feed(r, 4, buf, l, 0, &m), 1);
	msg_check(&m, 4, 0, "c", msg, 8);
	/* another peer, or another src from the same peer, is not a dup */
	l = wire_frag_build(buf, 64, 1, 5, "c", msg, 8, 0);
	assert_int_equal(wire_reasm_feed(r, 5, buf, l, 0, &m), 1);
	free(m.data);
	l = wire_frag_build(buf, 64, 2, 5, "c", msg, 8, 0);
	assert_int_equal(wire_reasm_feed(r, 4, buf, l, 0, &m), 1);
	free(m.data);
	wire_reasm_free(r);
}

/* Feed one whole message (src 1, channel "c") of msg_id id from peer 4,
 * unicast or to the group; wire_reasm_feed's answer. */
static int feed_id(struct wire_reasm *r, uint32_t id, int mcast)
{
	uint8_t buf[64], msg[8] = "payload";
	struct wire_msg m;
	size_t l = wire_frag_build(buf, 64, 1, id, "c", msg, 8, 0);
	int rc;

	if (mcast)
		wire_set_flag(buf, WIRE_FLAG_MCAST);
	rc = wire_reasm_feed(r, 4, buf, l, 0, &m);
	if (rc == 1)
		free(m.data);
	return rc;
}

/*
 * The ring is counted by msg_id bucket so that a new msg_id needs no scan;
 * the counts must follow the ring exactly: msg_ids that share a bucket
 * (256 apart) are told apart, one pushed out of the ring is forgotten
 * while another of its bucket is still remembered, and a group's msg_id
 * is not its unicast twin.
 */
static void test_completed_ring_buckets(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, MIB, 1000);
	uint32_t id;

	assert_int_equal(feed_id(r, 7, 0), 1);
	assert_int_equal(feed_id(r, 7 + 256, 0), 1);
	assert_int_equal(feed_id(r, 7 + 512, 0), 1);
	assert_int_equal(feed_id(r, 7 + 256, 0), -WIRE_DROP_DUPLICATE);
	assert_int_equal(feed_id(r, 7, 1), 1);
	assert_int_equal(feed_id(r, 7, 1), -WIRE_DROP_DUPLICATE);
	/* 60 more push 7 out; 263, 519 and the group's 7 stay */
	for (id = 1000; id < 1061; id++)
		assert_int_equal(feed_id(r, id, 0), 1);
	assert_int_equal(feed_id(r, 7, 0), 1);
	assert_int_equal(feed_id(r, 7 + 512, 0), -WIRE_DROP_DUPLICATE);
	/* 64 more in bucket 7's neighbours: every older one is forgotten */
	for (id = 2000; id < 2064; id++)
		assert_int_equal(feed_id(r, id, 0), 1);
	assert_int_equal(feed_id(r, 7 + 256, 0), 1);
	assert_int_equal(feed_id(r, 7 + 512, 0), 1);
	assert_int_equal(feed_id(r, 7, 1), 1);
	assert_int_equal(feed_id(r, 2063, 0), -WIRE_DROP_DUPLICATE);
	wire_reasm_free(r);
}

/* 3 peers x 4 msg_ids, every fragment interleaved in a seeded order. */
static void test_interleaved(void **state __attribute__((unused)))
{
	enum { NP = 3, NM = 4, N = NP * NM };
	static const char *chans[NM] = {"a", "bb", "ccc", "dddd"};
	struct wire_reasm *r = wire_reasm_new(MIB, 8 * MIB, 1000);
	struct frags f[N];
	uint8_t *msg[N];
	size_t len[N];
	uint32_t next[N], *order, total = 0, i, k, done = 0;
	struct wire_msg m;
	int rc, j, peer;

	for (j = 0; j < N; j++) {
		len[j] = 1000 + (size_t)j * 7919;
		msg[j] = msg_make(len[j], 100 + (uint64_t)j);
		peer = j / NM;
		f[j] = frags_make(msg[j], len[j], 512 + 256 * (j % 3),
				  wire_node_id("src") + (uint32_t)peer,
				  (uint32_t)(j % NM), chans[j % NM]);
		next[j] = 0;
		total += f[j].n;
	}
	/* a shuffled list of message numbers, each f[j].n times */
	order = malloc(total * sizeof(*order));
	assert_non_null(order);
	for (j = 0, k = 0; j < N; j++)
		for (i = 0; i < f[j].n; i++)
			order[k++] = (uint32_t)j;
	rnd_seed(77);
	for (i = total; i > 1; i--) {
		k = (uint32_t)(rnd() % i);
		j = (int)order[i - 1];
		order[i - 1] = order[k];
		order[k] = (uint32_t)j;
	}
	for (i = 0; i < total; i++) {
		j = (int)order[i];
		k = next[j]++;
		rc = wire_reasm_feed(r, j / NM, f[j].d[k].b, f[j].d[k].len, 0,
				     &m);
		if (next[j] < f[j].n) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, 1);
		msg_check(&m, j / NM, (uint32_t)(j % NM), chans[j % NM], msg[j],
			  len[j]);
		done++;
	}
	assert_int_equal(done, N);
	assert_int_equal(wire_reasm_pending(r), 0);
	for (j = 0; j < N; j++) {
		frags_free(&f[j]);
		free(msg[j]);
	}
	free(order);
	wire_reasm_free(r);
}

/* The same msg_id from two peers (and two srcs) are different messages. */
static void test_same_msg_id(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t *a = msg_make(30000, 11), *b = msg_make(30000, 12);
	uint8_t *c = msg_make(20000, 13);
	struct frags fa = frags_make(a, 30000, 1024, 1, 42, "x");
	struct frags fb = frags_make(b, 30000, 1024, 1, 42, "x");
	struct frags fc = frags_make(c, 20000, 1024, 2, 42, "x");
	struct wire_msg m;
	uint32_t i;

	for (i = 0; i + 1 < fa.n; i++) {
		assert_int_equal(
			wire_reasm_feed(r, 1, fa.d[i].b, fa.d[i].len, 0, &m),
			0);
		assert_int_equal(
			wire_reasm_feed(r, 2, fb.d[i].b, fb.d[i].len, 0, &m),
			0);
		if (i + 1 < fc.n)
			assert_int_equal(wire_reasm_feed(r, 1, fc.d[i].b,
							 fc.d[i].len, 0, &m),
					 0);
	}
	assert_int_equal(wire_reasm_pending(r), 3);
	i = fb.n - 1;
	assert_int_equal(wire_reasm_feed(r, 2, fb.d[i].b, fb.d[i].len, 0, &m),
			 1);
	msg_check(&m, 2, 42, "x", b, 30000);
	i = fc.n - 1;
	assert_int_equal(wire_reasm_feed(r, 1, fc.d[i].b, fc.d[i].len, 0, &m),
			 1);
	msg_check(&m, 1, 42, "x", c, 20000);
	i = fa.n - 1;
	assert_int_equal(wire_reasm_feed(r, 1, fa.d[i].b, fa.d[i].len, 0, &m),
			 1);
	msg_check(&m, 1, 42, "x", a, 30000);
	frags_free(&fa);
	frags_free(&fb);
	frags_free(&fc);
	free(a);
	free(b);
	free(c);
	wire_reasm_free(r);
}

/*
 * Start a 10-fragment message (room 100) with fragment 0, feed a spoiled
 * datagram, expect MALFORMED, then finish the real message intact.
 */
static void mismatch_case(const struct wire_hdr *bad, const char *chan,
			  size_t plen)
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	const size_t mtu = 24 + 4 + 100, len = 950;
	uint8_t *msg = msg_make(len, 21), buf[1024];
	struct frags f = frags_make(msg, len, mtu, 1, 1, "chan");
	struct wire_msg m;
	size_t l;
	uint32_t i;

	assert_int_equal(f.n, 10);
	assert_int_equal(wire_reasm_feed(r, 0, f.d[0].b, f.d[0].len, 0, &m), 0);
	l = dg_raw(buf, bad, chan, plen, 0xee);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
			 -WIRE_DROP_MALFORMED);
	assert_int_equal(wire_reasm_pending(r), 1);
	for (i = 1; i < f.n; i++)
		assert_int_equal(
			wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m),
			i + 1 < f.n ? 0 : 1);
	msg_check(&m, 0, 1, "chan", msg, len);
	frags_free(&f);
	free(msg);
	wire_reasm_free(r);
}

/* A fragment that disagrees on frag_cnt is dropped; the partial stays. */
static void test_mismatch_frag_cnt(void **state __attribute__((unused)))
{
	struct wire_hdr h = mm_hdr(3);

	/* self-consistent on its own (11 x 95 -> 950), but not this msg */
	h.frag_cnt = 11;
	mismatch_case(&h, "chan", 90);
	/* geometry that can be no one's: 11 fragments of 100 > 950 */
	h.frag_cnt = 11;
	mismatch_case(&h, "chan", 100);
}

/* A fragment that disagrees on total_len is dropped. */
static void test_mismatch_total_len(void **state __attribute__((unused)))
{
	struct wire_hdr h = mm_hdr(3);

	h.total_len = 951;
	mismatch_case(&h, "chan", 100);
	h.total_len = 1000;
	mismatch_case(&h, "chan", 100);
	h = mm_hdr(9);
	h.total_len = 960; /* last of 60: consistent alone, not here */
	mismatch_case(&h, "chan", 60);
}

/* A fragment with another room (payload size) is dropped. */
static void test_mismatch_room(void **state __attribute__((unused)))
{
	struct wire_hdr h = mm_hdr(3);

	mismatch_case(&h, "chan", 99);
	mismatch_case(&h, "chan", 101);
	mismatch_case(&h, "chan", 96); /* 10 x 96 still covers 950 */
	h = mm_hdr(9);
	mismatch_case(&h, "chan", 49);
	mismatch_case(&h, "chan", 51);
	/* last of 59 implies room 99 */
	mismatch_case(&h, "chan", 59);
}

/* A fragment naming another channel is dropped. */
static void test_mismatch_channel(void **state __attribute__((unused)))
{
	struct wire_hdr h = mm_hdr(3);

	mismatch_case(&h, "chaN", 100);
	h.chan_len = 3;
	mismatch_case(&h, "cha", 100);
	h.chan_len = 5;
	mismatch_case(&h, "chanx", 100);
}

/* The last fragment arriving first fixes room by itself. */
static void test_last_first(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t buf[1024];
	struct wire_hdr h = mm_hdr(9);
	struct wire_msg m;
	size_t l;

	/* 950 - 7 = 943 is not 9 x anything: no sender writes this */
	l = dg_raw(buf, &h, "chan", 7, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
			 -WIRE_DROP_MALFORMED);
	/* 950 - 500 = 450 = 9 x 50, but the last cannot exceed room */
	l = dg_raw(buf, &h, "chan", 500, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
			 -WIRE_DROP_MALFORMED);
	/* last of 50 -> room 100; then a fragment of 101 is refused */
	l = dg_raw(buf, &h, "chan", 50, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m), 0);
	h = mm_hdr(0);
	l = dg_raw(buf, &h, "chan", 101, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
			 -WIRE_DROP_MALFORMED);
	l = dg_raw(buf, &h, "chan", 100, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m), 0);
	assert_int_equal(wire_reasm_pending(r), 1);
	wire_reasm_free(r);
}

/* Beyond max_message: TOO_BIG at any fragment; at the limit: fine. */
static void test_too_big(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(10000, MIB, 1000);
	uint8_t *msg = msg_make(10001, 31);
	struct frags f = frags_make(msg, 10001, 1024, 1, 1, "big");
	struct frags g = frags_make(msg, 10000, 1024, 1, 2, "big");
	struct frags s = frags_make(msg, 1000, 1024, 1, 3, "big");
	struct wire_msg m;
	uint32_t i;

	for (i = 0; i < f.n; i++)
		assert_int_equal(
			wire_reasm_feed(r, 0, f.d[i].b, f.d[i].len, 0, &m),
			-WIRE_DROP_TOO_BIG);
	assert_int_equal(wire_reasm_pending(r), 0);
	feed_expect(r, 0, &g, NULL, 2, "big", msg, 10000);
	wire_reasm_free(r);

	/* single fragment too */
	r = wire_reasm_new(999, MIB, 1000);
	assert_int_equal(wire_reasm_feed(r, 0, s.d[0].b, s.d[0].len, 0, &m),
			 -WIRE_DROP_TOO_BIG);
	wire_reasm_free(r);
	frags_free(&f);
	frags_free(&g);
	frags_free(&s);
	free(msg);
}

/* Partials together stay under mem_limit; completing one frees room. */
static void test_memory_limit(void **state __attribute__((unused)))
{
	const size_t len = 100000;
	struct wire_reasm *r = wire_reasm_new(MIB, len * 5 / 2, 1000);
	uint8_t *msg = msg_make(len, 41);
	struct frags f[3];
	struct frags big = frags_make(msg, len, 128000, 1, 9, "m");
	struct wire_msg m;
	uint32_t i;
	int j;

	for (j = 0; j < 3; j++)
		f[j] = frags_make(msg, len, 1024, 1, (uint32_t)j, "m");
	assert_int_equal(
		wire_reasm_feed(r, 0, f[0].d[0].b, f[0].d[0].len, 0, &m), 0);
	assert_int_equal(
		wire_reasm_feed(r, 0, f[1].d[5].b, f[1].d[5].len, 0, &m), 0);
	/* a third would pass 2.5 x len */
	assert_int_equal(
		wire_reasm_feed(r, 0, f[2].d[0].b, f[2].d[0].len, 0, &m),
		-WIRE_DROP_NO_MEMORY);
	assert_int_equal(wire_reasm_pending(r), 2);
	/* fragments of the ones held still go in */
	for (i = 1; i < f[0].n; i++)
		assert_int_equal(wire_reasm_feed(r, 0, f[0].d[i].b,
						 f[0].d[i].len, 0, &m),
				 i + 1 < f[0].n ? 0 : 1);
	msg_check(&m, 0, 0, "m", msg, len);
	/* now there is room again */
	feed_expect(r, 0, &f[2], NULL, 2, "m", msg, len);
	assert_int_equal(wire_reasm_pending(r), 1);
	/* a whole message in one datagram is never held: no limit */
	assert_int_equal(big.n, 1);
	wire_reasm_free(r);
	r = wire_reasm_new(MIB, 10, 1000);
	assert_int_equal(wire_reasm_feed(r, 0, big.d[0].b, big.d[0].len, 0, &m),
			 1);
	msg_check(&m, 0, 9, "m", msg, len);
	assert_int_equal(
		wire_reasm_feed(r, 0, f[0].d[0].b, f[0].d[0].len, 0, &m),
		-WIRE_DROP_NO_MEMORY);
	assert_int_equal(wire_reasm_pending(r), 0);
	for (j = 0; j < 3; j++)
		frags_free(&f[j]);
	frags_free(&big);
	free(msg);
	wire_reasm_free(r);
}

/* forget_peer drops exactly that peer's partials and its ring. */
static void test_forget_peer(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 8 * MIB, 1000);
	uint8_t *msg = msg_make(5000, 51);
	struct frags f[4];
	struct wire_msg m;
	uint32_t i;
	int j;

	for (j = 0; j < 4; j++)
		f[j] = frags_make(msg, 5000, 1024, 1, (uint32_t)j, "fp");
	/* peer 1: ids 0, 1, 2 partial; peer 2: ids 0, 3 partial */
	for (j = 0; j < 3; j++)
		assert_int_equal(wire_reasm_feed(r, 1, f[j].d[0].b,
						 f[j].d[0].len, 0, &m),
				 0);
	assert_int_equal(
		wire_reasm_feed(r, 2, f[0].d[0].b, f[0].d[0].len, 0, &m), 0);
	assert_int_equal(
		wire_reasm_feed(r, 2, f[3].d[0].b, f[3].d[0].len, 0, &m), 0);
	/* peer 1 completes id 3 */
	for (i = 0; i < f[3].n; i++)
		assert_int_equal(wire_reasm_feed(r, 1, f[3].d[i].b,
						 f[3].d[i].len, 0, &m),
				 i + 1 < f[3].n ? 0 : 1);
	msg_check(&m, 1, 3, "fp", msg, 5000);
	assert_int_equal(
		wire_reasm_feed(r, 1, f[3].d[0].b, f[3].d[0].len, 0, &m),
		-WIRE_DROP_DUPLICATE);
	assert_int_equal(wire_reasm_pending(r), 5);

	assert_int_equal(wire_reasm_forget_peer(r, 1), 3);
	assert_int_equal(wire_reasm_pending(r), 2);
	assert_int_equal(wire_reasm_forget_peer(r, 1), 0);
	assert_int_equal(wire_reasm_forget_peer(r, 7), 0);
	/* peer 1 restarted: id 3 is new again, id 0 starts over */
	feed_expect(r, 1, &f[3], NULL, 3, "fp", msg, 5000);
	assert_int_equal(wire_reasm_pending(r), 2);
	/* peer 2's partials were untouched and finish */
	for (i = 1; i < f[0].n; i++)
		assert_int_equal(wire_reasm_feed(r, 2, f[0].d[i].b,
						 f[0].d[i].len, 0, &m),
				 i + 1 < f[0].n ? 0 : 1);
	msg_check(&m, 2, 0, "fp", msg, 5000);
	assert_int_equal(wire_reasm_forget_peer(r, 2), 1);
	assert_int_equal(wire_reasm_pending(r), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 0), -1);
	for (j = 0; j < 4; j++)
		frags_free(&f[j]);
	free(msg);
	wire_reasm_free(r);
}

/* next_timeout follows the oldest partial; a clock step back is harmless. */
static void test_next_timeout(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 8 * MIB, 300);
	uint8_t *msg = msg_make(5000, 61);
	struct frags f[3];
	struct wire_msg m;
	uint32_t i;
	int j;

	assert_int_equal(wire_reasm_next_timeout(r, 0), -1);
	assert_int_equal(wire_reasm_next_timeout(r, UINT64_MAX), -1);
	for (j = 0; j < 3; j++)
		f[j] = frags_make(msg, 5000, 1024, 1, (uint32_t)j, "t");
	assert_int_equal(
		wire_reasm_feed(r, 0, f[0].d[0].b, f[0].d[0].len, 100, &m), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 100), 300);
	assert_int_equal(wire_reasm_next_timeout(r, 250), 150);
	/* later fragments do not refresh the age */
	assert_int_equal(
		wire_reasm_feed(r, 0, f[0].d[1].b, f[0].d[1].len, 350, &m), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 350), 50);
	/* a second, newer partial; then the clock steps back */
	assert_int_equal(
		wire_reasm_feed(r, 0, f[1].d[0].b, f[1].d[0].len, 380, &m), 0);
	assert_int_equal(
		wire_reasm_feed(r, 0, f[2].d[0].b, f[2].d[0].len, 50, &m), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 399), 1);
	assert_int_equal(wire_reasm_next_timeout(r, 500), 0);
	assert_int_equal(wire_reasm_next_timeout(r, 20), 380);
	assert_int_equal(wire_reasm_expire(r, 20), 0);
	/* completing the oldest moves the deadline to the next one */
	for (i = 2; i < f[0].n; i++)
		assert_int_equal(wire_reasm_feed(r, 0, f[0].d[i].b,
						 f[0].d[i].len, 400, &m),
				 i + 1 < f[0].n ? 0 : 1);
	msg_check(&m, 0, 0, "t", msg, 5000);
	assert_int_equal(wire_reasm_next_timeout(r, 400), 280);
	assert_int_equal(wire_reasm_expire(r, 680), 2);
	assert_int_equal(wire_reasm_next_timeout(r, 680), -1);
	for (j = 0; j < 3; j++)
		frags_free(&f[j]);
	free(msg);
	wire_reasm_free(r);
}

/* Thousands of partials grow the table; removals keep the rest findable. */
static void test_many_partials(void **state __attribute__((unused)))
{
	enum { N = 3000 };
	struct wire_reasm *r = wire_reasm_new(MIB, 64 * MIB, 1000);
	uint8_t msg[300], buf[128];
	uint32_t *order = perm_make(N, 99), i, k;
	struct wire_msg m;
	size_t l;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	/* 3 fragments each (room 100): feed fragments 0 and 1 */
	for (i = 0; i < N; i++)
		for (k = 0; k < 2; k++) {
			l = wire_frag_build(buf, 24 + 1 + 100, i % 5, i, "p",
					    msg, sizeof(msg), k);
			assert_int_equal(
				wire_reasm_feed(r, (int)(i % 7), buf, l, i, &m),
				0);
		}
	assert_int_equal(wire_reasm_pending(r), N);
	/* finish them in a shuffled order */
	for (k = 0; k < N; k++) {
		i = order[k];
		l = wire_frag_build(buf, 24 + 1 + 100, i % 5, i, "p", msg,
				    sizeof(msg), 2);
		assert_int_equal(
			wire_reasm_feed(r, (int)(i % 7), buf, l, 0, &m), 1);
		msg_check(&m, (int)(i % 7), i, "p", msg, sizeof(msg));
		assert_int_equal(wire_reasm_pending(r), N - k - 1);
	}
	free(order);
	wire_reasm_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_fragment),
		cmocka_unit_test(test_empty_message),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_reversed),
		cmocka_unit_test(test_shuffled),
		cmocka_unit_test(test_loss_expire),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_completed_ring),
		cmocka_unit_test(test_completed_ring_buckets),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_same_msg_id),
		cmocka_unit_test(test_mismatch_frag_cnt),
		cmocka_unit_test(test_mismatch_total_len),
		cmocka_unit_test(test_mismatch_room),
		cmocka_unit_test(test_mismatch_channel),
		cmocka_unit_test(test_last_first),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_forget_peer),
		cmocka_unit_test(test_next_timeout),
		cmocka_unit_test(test_expire_each_peer),
		cmocka_unit_test(test_many_partials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
