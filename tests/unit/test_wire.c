/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for wire.c's formats: header encoding and its rejections,
 * fragment geometry at the edges, datagrams malformed in every field, the
 * in-order streams of reliable delivery and their trailer.  Reassembly of
 * datagram messages is test_wire_reasm.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"
#include "wire_msgs.h"

/* A valid DATA header to mutate. */
static struct wire_hdr hdr_good(void)
{
	struct wire_hdr h = {
		.version = WIRE_VERSION,
		.type = WIRE_DATA,
		.chan_len = 5,
		.flags = 0,
		.src = 0x01020304,
		.msg_id = 0xa1b2c3d4,
		.frag_idx = 2,
		.frag_cnt = 7,
		.total_len = 0x00123456,
	};
	return h;
}

/* FNV-1a 32-bit reference values. */
static void test_node_id(void **state __attribute__((unused)))
{
	assert_int_equal(wire_node_id(""), 0x811c9dc5u);
	assert_int_equal(wire_node_id("a"), 0xe40c292cu);
	assert_int_equal(wire_node_id("foobar"), 0xbf9cf968u);
	assert_int_not_equal(wire_node_id("node1"), wire_node_id("node2"));
}

/* Bytes on the wire are exactly the documented big-endian layout. */
static void test_hdr_roundtrip(void **state __attribute__((unused)))
{
	static const uint8_t want[WIRE_HDR_LEN] = {
		'I',  'B',  'F',  'S',	7,    1,    5,	  0x80,
		0x01, 0x02, 0x03, 0x04, 0xa1, 0xb2, 0xc3, 0xd4,
		0x00, 0x02, 0x00, 0x07, 0x00, 0x12, 0x34, 0x56,
	};
	uint8_t buf[WIRE_HDR_LEN + 1];
	struct wire_hdr h = hdr_good(), g;

	h.flags = 0x80;
	h.version = 77; /* encode writes WIRE_VERSION whatever is asked */
	wire_hdr_encode(&h, buf);
	assert_memory_equal(buf, want, WIRE_HDR_LEN);
	memset(&g, 0xee, sizeof(g));
	assert_int_equal(wire_hdr_decode(&g, buf, WIRE_HDR_LEN), 0);
	assert_int_equal(g.version, WIRE_VERSION);
	assert_int_equal(g.type, WIRE_DATA);
	assert_int_equal(g.chan_len, 5);
	assert_int_equal(g.flags, 0x80);
	assert_int_equal(g.src, 0x01020304);
	assert_int_equal(g.msg_id, 0xa1b2c3d4);
	assert_int_equal(g.frag_idx, 2);
	assert_int_equal(g.frag_cnt, 7);
	assert_int_equal(g.total_len, 0x00123456);

	/* Unaligned buffers work too. */
	wire_hdr_encode(&h, buf + 1);
	assert_int_equal(wire_hdr_decode(&g, buf + 1, WIRE_HDR_LEN), 0);
	assert_int_equal(g.msg_id, 0xa1b2c3d4);

	/* Extremes of every field survive. */
	h = hdr_good();
	h.src = h.msg_id = h.total_len = UINT32_MAX;
	h.frag_cnt = UINT16_MAX;
	h.frag_idx = UINT16_MAX - 1;
	h.chan_len = WIRE_CHAN_MAX;
	wire_hdr_encode(&h, buf);
	assert_int_equal(wire_hdr_decode(&g, buf, WIRE_HDR_LEN), 0);
	assert_int_equal(g.src, UINT32_MAX);
	assert_int_equal(g.total_len, UINT32_MAX);
	assert_int_equal(g.frag_cnt, UINT16_MAX);
	assert_int_equal(g.frag_idx, UINT16_MAX - 1);
	assert_int_equal(g.chan_len, WIRE_CHAN_MAX);

	/* ACK is known and may name no channel. */
	h = hdr_good();
	h.type = WIRE_ACK;
	h.chan_len = 0;
	wire_hdr_encode(&h, buf);
	assert_int_equal(wire_hdr_decode(&g, buf, WIRE_HDR_LEN), 0);
	assert_int_equal(g.type, WIRE_ACK);
}

/* Encode h, let mutate spoil it, expect decode to refuse. */
static void hdr_expect_bad(const struct wire_hdr *h, size_t len, int byte,
			   uint8_t val)
{
	uint8_t buf[WIRE_HDR_LEN];
	struct wire_hdr g, keep;

	wire_hdr_encode(h, buf);
	if (byte >= 0)
		buf[byte] = val;
	memset(&g, 0x5a, sizeof(g));
	keep = g;
	assert_int_equal(wire_hdr_decode(&g, buf, len), -EBADMSG);
	assert_memory_equal(&g, &keep, sizeof(g)); /* untouched on error */
}

/* Every malformed header is refused with -EBADMSG. */
static void test_hdr_malformed(void **state __attribute__((unused)))
{
	struct wire_hdr h = hdr_good(), g;
	uint8_t buf[WIRE_HDR_LEN];
	size_t l;

	for (l = 0; l < WIRE_HDR_LEN; l++)
		hdr_expect_bad(&h, l, -1, 0);
	wire_hdr_encode(&h, buf);
	assert_int_equal(wire_hdr_decode(&g, NULL, 100), -EBADMSG);

	hdr_expect_bad(&h, WIRE_HDR_LEN, 0, 'J');  /* magic */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 3, 'T');  /* magic */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 4, 0);	   /* version */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 4, 2);	   /* version (old) */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 4, 3);	   /* version (old) */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 5, 0);	   /* type */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 5, 3);	   /* type */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 5, 0xff); /* type */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 6, 0);	   /* DATA, no name */
	hdr_expect_bad(&h, WIRE_HDR_LEN, 6, WIRE_CHAN_MAX + 1);
	hdr_expect_bad(&h, WIRE_HDR_LEN, 6, 0xff);

	h.frag_cnt = 0;
	h.frag_idx = 0;
	hdr_expect_bad(&h, WIRE_HDR_LEN, -1, 0);
	h.frag_cnt = 7;
	h.frag_idx = 7;
	hdr_expect_bad(&h, WIRE_HDR_LEN, -1, 0);
	h.frag_idx = 0xffff;
	hdr_expect_bad(&h, WIRE_HDR_LEN, -1, 0);

	h = hdr_good();
	h.type = WIRE_ACK;
	h.chan_len = WIRE_CHAN_MAX + 1;
	hdr_expect_bad(&h, WIRE_HDR_LEN, -1, 0);
}

/* Room is what a datagram leaves after header and name, or 0. */
static void test_frag_room(void **state __attribute__((unused)))
{
	assert_int_equal(wire_frag_room(4096, 1), 4096 - 24 - 1);
	assert_int_equal(wire_frag_room(4096, 63), 4096 - 24 - 63);
	assert_int_equal(wire_frag_room(26, 1), 1);
	assert_int_equal(wire_frag_room(25, 1), 0);
	assert_int_equal(wire_frag_room(24, 1), 0);
	assert_int_equal(wire_frag_room(0, 1), 0);
	assert_int_equal(wire_frag_room(10, 200), 0);
	assert_int_equal(wire_frag_room(SIZE_MAX, SIZE_MAX), 0);
}

/* Counts at the edges: empty, 1 byte, one datagram, one byte more, 1 MiB. */
static void test_frag_count_edges(void **state __attribute__((unused)))
{
	size_t room = wire_frag_room(MTU, 4);

	assert_int_equal(wire_frag_count(0, MTU, 4), 1);
	assert_int_equal(wire_frag_count(1, MTU, 4), 1);
	assert_int_equal(wire_frag_count(room - 1, MTU, 4), 1);
	assert_int_equal(wire_frag_count(room, MTU, 4), 1);
	assert_int_equal(wire_frag_count(room + 1, MTU, 4), 2);
	assert_int_equal(wire_frag_count(2 * room, MTU, 4), 2);
	assert_int_equal(wire_frag_count(2 * room + 1, MTU, 4), 3);
	assert_int_equal(wire_frag_count(MIB, MTU, 4), (MIB + room - 1) / room);
	assert_int_equal(wire_frag_count(MIB, MTU, 4), 258);
	assert_int_equal(wire_frag_count(MIB, 2048, 4), 520);
	assert_int_equal(wire_frag_count(MIB, 1024, 4), 1053);
	/* frag_cnt is a u16: 65535 fragments at most, then 0 (EMSGSIZE) */
	assert_int_equal(wire_frag_count(65535 * room, MTU, 4), 65535);
	assert_int_equal(wire_frag_count(65535 * room + 1, MTU, 4), 0);
	assert_int_equal(wire_frag_count(65535, 26, 1), 65535);
	assert_int_equal(wire_frag_count(65536, 26, 1), 0);
	/* no room for payload, or beyond total_len's u32 */
	assert_int_equal(wire_frag_count(0, 25, 1), 0);
	assert_int_equal(wire_frag_count(1, 25, 1), 0);
	assert_int_equal(
		wire_frag_count((size_t)UINT32_MAX + 1, SIZE_MAX / 2, 1), 0);
}

/* Each fragment: header, name, then its slice at idx * room. */
static void test_frag_build_layout(void **state __attribute__((unused)))
{
	const size_t mtu = 64, room = 64 - 24 - 3;
	size_t len = 2 * room + 5, l;
	uint8_t *msg = msg_make(len, 1), buf[64];
	struct wire_hdr h;
	uint32_t i;

	assert_int_equal(wire_frag_count(len, mtu, 3), 3);
	for (i = 0; i < 3; i++) {
		memset(buf, 0xcc, sizeof(buf));
		l = wire_frag_build(buf, mtu, 42, 7, "abc", msg, len, i);
		assert_int_equal(l, 24 + 3 + (i < 2 ? room : 5));
		assert_int_equal(wire_hdr_decode(&h, buf, l), 0);
		assert_int_equal(h.type, WIRE_DATA);
		assert_int_equal(h.src, 42);
		assert_int_equal(h.msg_id, 7);
		assert_int_equal(h.frag_idx, i);
		assert_int_equal(h.frag_cnt, 3);
		assert_int_equal(h.total_len, len);
		assert_int_equal(h.chan_len, 3);
		assert_int_equal(h.flags, 0);
		assert_memory_equal(buf + 24, "abc", 3);
		assert_memory_equal(buf + 27, msg + i * room, l - 27);
	}
	/* exactly one datagram's worth fills it to the byte */
	l = wire_frag_build(buf, mtu, 1, 1, "abc", msg, room, 0);
	assert_int_equal(l, mtu);
	/* empty: header and name only */
	l = wire_frag_build(buf, mtu, 1, 1, "abc", NULL, 0, 0);
	assert_int_equal(l, 27);
	assert_int_equal(wire_hdr_decode(&h, buf, l), 0);
	assert_int_equal(h.frag_cnt, 1);
	assert_int_equal(h.total_len, 0);
	free(msg);
}

/* Bad arguments build nothing. */
static void test_frag_build_bad(void **state __attribute__((unused)))
{
	char longname[WIRE_CHAN_MAX + 2];
	uint8_t msg[100] = {0}, buf[128];

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, "c", msg, 100, 1), 0);
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, "", msg, 10, 0), 0);
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, NULL, msg, 10, 0), 0);
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, longname, msg, 1, 0),
			 0);
	longname[WIRE_CHAN_MAX] = '\0';
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, longname, msg, 1, 0),
			 24 + WIRE_CHAN_MAX + 1);
	assert_int_equal(wire_frag_build(buf, 25, 1, 1, "c", msg, 0, 0), 0);
	/* the receiver's name rule: no control byte is ever sent */
	assert_int_equal(wire_frag_build(buf, 128, 1, 1, "a\nb", msg, 1, 0), 0);
}

/* Datagrams that are wrong on their own are malformed, whatever else. */
static void test_malformed_dgrams(void **state __attribute__((unused)))
{
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	uint8_t buf[1024];
	struct wire_hdr h;
	struct wire_msg m;
	size_t l;

#define BAD(len_)                                                              \
	assert_int_equal(wire_reasm_feed(r, 0, buf, (len_), 0, &m),            \
			 -WIRE_DROP_MALFORMED)

	memset(buf, 0, sizeof(buf));
	BAD(0);
	BAD(23);
	BAD(200);
	assert_int_equal(wire_reasm_feed(r, 0, NULL, 0, 0, &m),
			 -WIRE_DROP_MALFORMED);
	/* channel name cut short */
	h = mm_hdr(0);
	l = dg_raw(buf, &h, "chan", 0, 0);
	BAD(l - 1);
	BAD(WIRE_HDR_LEN);
	/* ACK is not for reassembly */
	h.type = WIRE_ACK;
	l = dg_raw(buf, &h, "chan", 100, 0);
	BAD(l);
	/* NUL inside the name */
	h = mm_hdr(0);
	l = dg_raw(buf, &h, "c\0an", 100, 0);
	BAD(l);
	/* single fragment whose payload is not total_len */
	h.frag_cnt = 1;
	h.total_len = 10;
	l = dg_raw(buf, &h, "chan", 9, 0);
	BAD(l);
	l = dg_raw(buf, &h, "chan", 11, 0);
	BAD(l);
	/* non-last with no payload, or more than the whole message */
	h = mm_hdr(0);
	l = dg_raw(buf, &h, "chan", 0, 0);
	BAD(l);
	h.total_len = 50;
	l = dg_raw(buf, &h, "chan", 100, 0);
	BAD(l);
	/* room 100 implies 10 fragments for 950, not 12 nor 9 */
	h = mm_hdr(0);
	h.frag_cnt = 12;
	l = dg_raw(buf, &h, "chan", 100, 0);
	BAD(l);
	h.frag_cnt = 9;
	l = dg_raw(buf, &h, "chan", 100, 0);
	BAD(l);
	/* a last fragment of zero bytes in a multi-fragment message */
	h = mm_hdr(9);
	l = dg_raw(buf, &h, "chan", 0, 0);
	BAD(l);
	/* a multi-fragment empty message */
	h = mm_hdr(0);
	h.total_len = 0;
	l = dg_raw(buf, &h, "chan", 0, 0);
	BAD(l);
	/* one that covers the whole of a u32 total_len */
	h = mm_hdr(9);
	h.frag_cnt = 0xffff;
	h.frag_idx = 0xfffe;
	h.total_len = UINT32_MAX;
	l = dg_raw(buf, &h, "chan", 100, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
			 -WIRE_DROP_TOO_BIG);
#undef BAD
	assert_int_equal(wire_reasm_pending(r), 0);
	wire_reasm_free(r);
}

/* A channel name with a control byte (a newline, an escape, DEL) off the
 * wire is malformed: it would become a file name and a log line. */
static void test_malformed_names(void **state __attribute__((unused)))
{
	static const char *const bad[] = {"c\nan", "\x1b[1m", "cha\x7f",
					  "\tab"};
	struct wire_reasm *r = wire_reasm_new(MIB, 4 * MIB, 1000);
	struct wire_hdr h = mm_hdr(0);
	uint8_t buf[1024];
	struct wire_msg m;
	size_t i, l;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		l = dg_raw(buf, &h, bad[i], 100, 0);
		assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m),
				 -WIRE_DROP_MALFORMED);
	}
	l = dg_raw(buf, &h, "chan", 100, 0);
	assert_int_equal(wire_reasm_feed(r, 0, buf, l, 0, &m), 0);
	wire_reasm_free(r);
}

/*
 * In-order reassembly (reliable streams): messages back to back, one and
 * many fragments, byte-exact, with no clock involved at all.
 */
static void test_seq_in_order(void **state __attribute__((unused)))
{
	struct wire_seq s = {0};
	uint8_t *big = msg_make(MIB, 30), *small = msg_make(10, 31);
	struct frags f = frags_make(big, MIB, 1024, 1, 7, "rel");
	struct frags g = frags_make(small, 10, 1024, 1, 8, "rel");
	struct wire_msg m;
	uint32_t i;
	int round;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < f.n; i++)
			assert_int_equal(wire_seq_feed(&s, MIB, 3, f.d[i].b,
						       f.d[i].len, &m),
					 i + 1 < f.n ? 0 : 1);
		msg_check(&m, 3, 7, "rel", big, MIB);
		assert_int_equal(
			wire_seq_feed(&s, MIB, 3, g.d[0].b, g.d[0].len, &m), 1);
		msg_check(&m, 3, 8, "rel", small, 10);
	}
	frags_free(&f);
	frags_free(&g);
	free(big);
	free(small);
}

/*
 * A gap, a repeat, a fragment of another message, a message started over
 * the unfinished one, or one over max_message: the partial is dropped and
 * the next message that starts at fragment 0 goes through.
 */
static void test_seq_broken(void **state __attribute__((unused)))
{
	struct wire_seq s = {0};
	uint8_t *msg = msg_make(20000, 32);
	struct frags f = frags_make(msg, 20000, 1024, 1, 9, "rel");
	struct frags g = frags_make(msg, 20000, 1024, 1, 10, "rel");
	struct wire_msg m;
	uint32_t i;

	assert_true(f.n > 4);
	/* gap: 0, 2 */
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[0].b, f.d[0].len, &m),
			 0);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[2].b, f.d[2].len, &m),
			 -WIRE_DROP_MALFORMED);
	assert_null(s.buf);
	/* repeat: 0, 1, 1 */
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[0].b, f.d[0].len, &m),
			 0);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[1].b, f.d[1].len, &m),
			 0);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[1].b, f.d[1].len, &m),
			 -WIRE_DROP_MALFORMED);
	/* another message's middle, then a start over an unfinished one */
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[0].b, f.d[0].len, &m),
			 0);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, g.d[1].b, g.d[1].len, &m),
			 -WIRE_DROP_MALFORMED);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[0].b, f.d[0].len, &m),
			 0);
	assert_int_equal(wire_seq_feed(&s, MIB, 0, g.d[0].b, g.d[0].len, &m),
			 -WIRE_DROP_MALFORMED);
	/* a middle fragment with nothing started */
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[3].b, f.d[3].len, &m),
			 -WIRE_DROP_MALFORMED);
	/* bigger than this end takes */
	assert_int_equal(wire_seq_feed(&s, 10000, 0, f.d[0].b, f.d[0].len, &m),
			 -WIRE_DROP_TOO_BIG);
	assert_null(s.buf);
	/* and a whole one still completes */
	for (i = 0; i < g.n; i++)
		assert_int_equal(
			wire_seq_feed(&s, MIB, 0, g.d[i].b, g.d[i].len, &m),
			i + 1 < g.n ? 0 : 1);
	msg_check(&m, 0, 10, "rel", msg, 20000);
	/* reset frees a partial */
	assert_int_equal(wire_seq_feed(&s, MIB, 0, f.d[0].b, f.d[0].len, &m),
			 0);
	assert_non_null(s.buf);
	wire_seq_reset(&s);
	assert_null(s.buf);
	frags_free(&f);
	frags_free(&g);
	free(msg);
}

/*
 * The reliable trailer: the fixed 24 bytes last, at the documented
 * offsets; the sack before them only with WIRE_REL_SACK (a DATA datagram
 * is cut for mtu - WIRE_REL_LEN and never carries one); a datagram without
 * the flag or too short for what rflags says is refused; a bare ACK
 * parses as one.
 */
static void test_rel_trailer(void **state __attribute__((unused)))
{
	uint8_t buf[256];
	uint8_t msg[10] = "0123456789";
	struct wire_rel r =
				{
					.sess = 0x01020304,
					.psn = 0xfffffffe,
					.ack_sess = 7,
					.ack = 0x80000001,
					.credit = 128,
					.rflags = WIRE_REL_ACK | WIRE_REL_NAK,
				},
			g;
	struct wire_hdr h;
	size_t len;
	long plen;

	r.sack[0] = 0x5ull; /* not sent: no WIRE_REL_SACK */
	len = wire_frag_build(buf, 200, 9, 1, "c", msg, sizeof(msg), 0);
	assert_true(len > 0);
	len = wire_rel_put(buf, len, &r);
	assert_int_equal(len, WIRE_HDR_LEN + 1 + sizeof(msg) + WIRE_REL_LEN);
	/* big-endian; sess first, rflags last */
	assert_int_equal(buf[len - 24], 0x01);
	assert_int_equal(buf[len - 21], 0x04);
	assert_int_equal(buf[len - 12], 0x80);
	assert_int_equal(buf[len - 1], WIRE_REL_ACK | WIRE_REL_NAK);
	plen = wire_rel_get(buf, len, &g);
	assert_int_equal(plen, WIRE_HDR_LEN + 1 + sizeof(msg));
	assert_int_equal(g.sess, r.sess);
	assert_int_equal(g.psn, r.psn);
	assert_int_equal(g.ack_sess, r.ack_sess);
	assert_int_equal(g.ack, r.ack);
	assert_int_equal(g.credit, r.credit);
	assert_int_equal(g.rflags, r.rflags);
	assert_int_equal(g.sack[0], 0);
	assert_int_equal(wire_hdr_decode(&h, buf, (size_t)plen), 0);
	assert_true(h.flags & WIRE_FLAG_REL);
	assert_int_equal(wire_rel_get(buf, WIRE_HDR_LEN + WIRE_REL_LEN - 1, &g),
			 -EBADMSG);
	buf[7] &= (uint8_t)~WIRE_FLAG_REL;
	assert_int_equal(wire_rel_get(buf, len, &g), -EBADMSG);

	/* a standalone ACK with the sack, most significant word first */
	r.rflags |= WIRE_REL_SACK;
	r.sack[WIRE_SACK_WORDS - 1] = 0x8000000000000001ull;
	r.sack[1] = 0x0123456789abcdefull;
	len = wire_ack_build(buf, 9, &r);
	assert_int_equal(len, WIRE_HDR_LEN + WIRE_REL_SACK_LEN + WIRE_REL_LEN);
	assert_int_equal(buf[WIRE_HDR_LEN], 0x80);
	assert_int_equal(buf[WIRE_HDR_LEN + 7], 0x01);
	assert_int_equal(buf[len - WIRE_REL_LEN - 16], 0x01);
	assert_int_equal(buf[len - WIRE_REL_LEN - 1], 0x05);
	assert_int_equal(wire_rel_get(buf, len, &g), WIRE_HDR_LEN);
	assert_int_equal(wire_hdr_decode(&h, buf, WIRE_HDR_LEN), 0);
	assert_int_equal(h.type, WIRE_ACK);
	assert_memory_equal(g.sack, r.sack, sizeof(r.sack));
	/* the flag says a sack is there, the datagram is too short for it */
	memmove(buf + WIRE_HDR_LEN, buf + len - WIRE_REL_LEN, WIRE_REL_LEN);
	assert_int_equal(wire_rel_get(buf, WIRE_HDR_LEN + WIRE_REL_LEN, &g),
			 -EBADMSG);
}

/* A probe is a bare header carrying its token; one with a channel, a
 * body or fragments is refused. */
static void test_probe_codec(void **state __attribute__((unused)))
{
	uint8_t buf[WIRE_PROBE_LEN];
	struct wire_hdr h;
	uint8_t type;

	for (type = WIRE_PING; type <= WIRE_PONG; type++) {
		assert_int_equal(
			wire_probe_build(buf, type, 0x11223344, 0xdeadbeef),
			WIRE_PROBE_LEN);
		assert_int_equal(wire_hdr_decode(&h, buf, sizeof(buf)), 0);
		assert_int_equal(h.type, type);
		assert_int_equal(h.src, 0x11223344);
		assert_int_equal(h.msg_id, 0xdeadbeef);
		assert_int_equal(h.chan_len, 0);
		assert_int_equal(h.total_len, 0);
		hdr_expect_bad(&h, WIRE_HDR_LEN, 6, 1);	 /* a channel */
		hdr_expect_bad(&h, WIRE_HDR_LEN, 23, 1); /* a body */
		hdr_expect_bad(&h, WIRE_HDR_LEN, 19, 2); /* fragments */
	}
	hdr_expect_bad(&h, WIRE_HDR_LEN, 5, WIRE_PONG + 1); /* no such type */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_id),
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_hdr_malformed),
		cmocka_unit_test(test_probe_codec),
		cmocka_unit_test(test_frag_room),
		cmocka_unit_test(test_frag_count_edges),
		cmocka_unit_test(test_frag_build_layout),
		cmocka_unit_test(test_frag_build_bad),
		cmocka_unit_test(test_malformed_names),
		cmocka_unit_test(test_malformed_dgrams),
		cmocka_unit_test(test_seq_in_order),
		cmocka_unit_test(test_seq_broken),
		cmocka_unit_test(test_rel_trailer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
