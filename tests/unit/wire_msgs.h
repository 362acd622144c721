/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the wire tests (test_wire.c, test_wire_reasm.c) build their cases
 * from: deterministic messages, the datagrams wire_frag_build cuts them
 * into, orders to feed them in, raw datagrams with any header, and checks
 * that a reassembled message is byte for byte the one sent.
 */
#ifndef IBFS_WIRE_MSGS_H
#define IBFS_WIRE_MSGS_H

#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"

#define MTU 4096
#define MIB (1024 * 1024)

/* One datagram as a receiver would see it. */
struct dg {
	uint8_t *b;
	size_t len;
};

/* A whole message cut into datagrams. */
struct frags {
	struct dg *d;
	uint32_t n;
};

/* Deterministic xorshift64, so failures reproduce. */
static uint64_t rnd_state;

/* Reseed the generator. */
static inline void rnd_seed(uint64_t s)
{
	rnd_state = s ? s : 0x9e3779b97f4a7c15ull;
}

/* Next pseudo-random 64-bit value. */
static inline uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A message of len bytes whose content depends on seed. */
static inline uint8_t *msg_make(size_t len, uint64_t seed)
{
	uint8_t *m = malloc(len ? len : 1);
	size_t i;

	assert_non_null(m);
	rnd_seed(seed);
	for (i = 0; i < len; i++)
		m[i] = (uint8_t)rnd();
	return m;
}

/* Cut msg into datagrams exactly as a sender would. */
static inline struct frags frags_make(const uint8_t *msg, size_t len,
				      size_t mtu, uint32_t src, uint32_t msg_id,
				      const char *chan)
{
	struct frags f;
	uint32_t i;

	f.n = wire_frag_count(len, mtu, strlen(chan));
	assert_true(f.n >= 1);
	f.d = calloc(f.n, sizeof(*f.d));
	assert_non_null(f.d);
	for (i = 0; i < f.n; i++) {
		f.d[i].b = malloc(mtu);
		assert_non_null(f.d[i].b);
		f.d[i].len = wire_frag_build(f.d[i].b, mtu, src, msg_id, chan,
					     msg, len, i);
		assert_true(f.d[i].len > 0);
		assert_true(f.d[i].len <= mtu);
	}
	return f;
}

/* Release what frags_make made. */
static inline void frags_free(struct frags *f)
{
	uint32_t i;

	for (i = 0; i < f->n; i++)
		free(f->d[i].b);
	free(f->d);
}

/* A permutation of 0..n-1, shuffled by the seeded generator. */
static inline uint32_t *perm_make(uint32_t n, uint64_t seed)
{
	uint32_t *p = malloc(n * sizeof(*p));
	uint32_t i, j, t;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = i;
	rnd_seed(seed);
	for (i = n; i > 1; i--) {
		j = (uint32_t)(rnd() % i);
		t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

/* Count expiries per peer (arg: unsigned[]), as the transport does for
 * .status: wire_reasm_expire_each's callback. */
static inline void count_peer(void *arg, int peer)
{
	((unsigned *)arg)[peer]++;
}

/* Check a completed message against what was sent, then free it. */
static inline void msg_check(struct wire_msg *m, int peer, uint32_t msg_id,
			     const char *chan, const uint8_t *want, size_t len)
{
	assert_int_equal(m->peer, peer);
	assert_int_equal(m->msg_id, msg_id);
	assert_string_equal(m->chan, chan);
	assert_int_equal(m->len, len);
	assert_non_null(m->data);
	if (len)
		assert_memory_equal(m->data, want, len);
	free(m->data);
	m->data = NULL;
}

/*
 * Feed all of f in the order given (NULL: in order); the last one fed
 * must complete and nothing before it.  Other partials may stay pending.
 */
static inline void feed_expect(struct wire_reasm *r, int peer, struct frags *f,
			       const uint32_t *order, uint32_t msg_id,
			       const char *chan, const uint8_t *msg, size_t len)
{
	struct wire_msg m;
	uint32_t i, k;
	int rc;

	for (i = 0; i < f->n; i++) {
		k = order ? order[i] : i;
		rc = wire_reasm_feed(r, peer, f->d[k].b, f->d[k].len, 0, &m);
		if (i + 1 < f->n) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, 1);
			msg_check(&m, peer, msg_id, chan, msg, len);
		}
	}
}

/* Write a raw datagram with any header, name and payload length. */
static inline size_t dg_raw(uint8_t *buf, const struct wire_hdr *h,
			    const char *chan, size_t plen, uint8_t fill)
{
	wire_hdr_encode(h, buf);
	memcpy(buf + WIRE_HDR_LEN, chan, h->chan_len);
	memset(buf + WIRE_HDR_LEN + h->chan_len, fill, plen);
	return WIRE_HDR_LEN + h->chan_len + plen;
}

/* The fragment header of message (src 1, msg_id 1, "chan", 950 bytes). */
static inline struct wire_hdr mm_hdr(uint16_t idx)
{
	struct wire_hdr h = {
		.type = WIRE_DATA,
		.chan_len = 4,
		.src = 1,
		.msg_id = 1,
		.frag_idx = idx,
		.frag_cnt = 10,
		.total_len = 950,
	};
	return h;
}

#endif
