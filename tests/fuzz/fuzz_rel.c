/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the reliable trailer and what a sender does with
 * the acks in it: wire_rel_get on whatever arrives, DATA datagrams with
 * the trailer and standalone ACKs with the 512-bit selective ack and the
 * refusal codes alike, then rel_tx_ack on a sender with messages in
 * flight (refusals put them on their channel's wait list, or fail them).
 *
 * Decoding must never read outside the datagram, must say where the
 * payload ends consistently with the flags, and what it accepts must
 * encode back (wire_rel_put) to the very same bytes.  The sender must keep
 * its own invariants whatever the acks claim: una <= nxt <= end, una <=
 * top <= end, top - una within the window, pipe within what is in flight,
 * the forward mark (after a peer timeout) between una and end,
 * each message finished exactly once and acked only when all of it is,
 * timeouts within their bounds.
 *
 * The input is a list of records, each starting with a control byte c:
 *   c >> 6 == 0  a raw datagram: the next byte is its length (0..255,
 *                plus 64 * (c & 3)), then that many bytes
 *   c >> 6 == 1  an ACK built by wire_ack_build from the next 12 bytes:
 *                ack relative to una, credit, rflags, a sack pattern
 *                (with WIRE_REL_CODES, refusal codes made of it too)
 *   c >> 6 == 2  let rel_tx_next send up to (c & 63) datagrams
 *   c >> 6 == 3  the clock steps (c & 63) * 7 ms, then rel_tx_tick
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_rel.c src/wire.c src/wire_rel.c src/reliable.c
 *src/log.c
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reliable.h"
#include "wire.h"
#include "fuzz.h"

#define SESS	     0x5e55u
#define PEER_TIMEOUT 2000
#define NMSG	     64 /* messages a run may queue, ids 0..NMSG-1 */

/* One run: the sender, its clock and what became of each message. */
struct run {
	struct rel_tx tx;
	uint64_t now;
	uint32_t sess;
	int queued, finished[NMSG];
	uint64_t probes; /* timer and tail probes when an ack last came */
};

/* Big-endian u32 at p. */
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* a - b as a signed distance in psn space. */
static int32_t dist(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/*
 * Decode a datagram's trailer and check the decoder against the format:
 * the payload end, and a byte-exact round trip through wire_rel_put.
 * Returns the payload end (or -EBADMSG) with *w filled.
 */
static long check_trailer(const uint8_t *dg, size_t len, struct wire_rel *w)
{
	static const uint64_t zero[WIRE_SACK_WORDS];
	static const uint64_t zcodes[WIRE_REL_PLANES][WIRE_SACK_WORDS];
	size_t extra;
	uint8_t *copy = malloc(len ? len : 1), *re;
	long end;

	/* exact-size heap copy: ASan sees a read past the end */
	CHECK(copy != NULL);
	memcpy(copy, dg, len);
	memset(w, 0xa5, sizeof(*w));
	end = wire_rel_get(copy, len, w);
	if (end < 0) {
		CHECK(end == -EBADMSG);
		CHECK(len < WIRE_HDR_LEN + WIRE_REL_LEN ||
		      !(dg[7] & WIRE_FLAG_REL) ||
		      (be32(dg + len - 4) & (WIRE_REL_SACK | WIRE_REL_CODES)));
		free(copy);
		return end;
	}
	CHECK(dg[7] & WIRE_FLAG_REL);
	CHECK(len >= WIRE_HDR_LEN + WIRE_REL_LEN);
	CHECK(end >= WIRE_HDR_LEN);
	extra = (w->rflags & WIRE_REL_SACK ? WIRE_REL_SACK_LEN : 0) +
		(w->rflags & WIRE_REL_CODES ? WIRE_REL_CODES_LEN : 0);
	CHECK((size_t)end == len - WIRE_REL_LEN - extra);
	if (!(w->rflags & WIRE_REL_SACK))
		CHECK(!memcmp(w->sack, zero, sizeof(zero)));
	if (!(w->rflags & WIRE_REL_CODES))
		CHECK(!memcmp(w->codes, zcodes, sizeof(zcodes)));
	CHECK(w->sess == be32(dg + len - 24) && w->psn == be32(dg + len - 20));
	CHECK(w->ack == be32(dg + len - 12));
	/* What precedes the trailer, with the trailer put back, is it. */
	re = malloc(len);
	CHECK(re != NULL);
	memcpy(re, dg, (size_t)end);
	re[7] &= (uint8_t)~WIRE_FLAG_REL;
	CHECK(wire_rel_put(re, (size_t)end, w) == len);
	CHECK(!memcmp(re, dg, len));
	free(re);
	free(copy);
	return end;
}

/* The sender's invariants, after anything at all. */
static void check_tx(const struct run *u)
{
	const struct rel_tx *tx = &u->tx;
	const struct rel_msg *m;
	uint32_t frags = 0;

	CHECK(dist(tx->nxt, tx->una) >= 0 && dist(tx->end, tx->nxt) >= 0);
	CHECK(dist(tx->top, tx->una) >= 0 && dist(tx->end, tx->top) >= 0);
	CHECK(tx->top - tx->una <= tx->window);
	/* the forward mark is at or past una until acked, and was queued */
	if (tx->fwd_on)
		CHECK(dist(tx->fwd, tx->una) >= 0 &&
		      dist(tx->end, tx->fwd) >= 0);
	CHECK(tx->window <= REL_SACK_BITS);
	/* A probe resends una even if it is still counted (the next ack
	 * recounts), so the pipe may exceed the span by one per probe. */
	CHECK(tx->pipe <=
	      tx->top - tx->una + (tx->rtos + tx->tail_probes - u->probes));
	CHECK(tx->rto_ms >= REL_RTO_MIN_MS && tx->rto_ms <= REL_RTO_MAX_MS);
	CHECK(tx->rto_base >= REL_RTO_MIN_MS && tx->rto_base <= REL_RTO_MAX_MS);
	CHECK(!tx->head == !tx->tail);
	if (!tx->head) {
		CHECK(tx->una == tx->end);
		return;
	}
	/* The queue covers [head->first_psn, end) with una inside its head. */
	CHECK(dist(tx->una, tx->head->first_psn) >= 0);
	CHECK(dist(tx->head->first_psn + tx->head->nfrag, tx->una) > 0);
	for (m = tx->head; m; m = m->next) {
		CHECK(m->first_psn == tx->head->first_psn + frags);
		frags += m->nfrag;
		if (!m->next)
			CHECK(m == tx->tail);
	}
	CHECK(tx->head->first_psn + frags == tx->end);
}

/* Take the finished messages: each once, acked ones wholly acked. */
static void take_done(struct run *u)
{
	struct rel_msg *m, *next;

	for (m = rel_tx_take_done(&u->tx); m; m = next) {
		next = m->next;
		CHECK(m->msg_id < NMSG && !u->finished[m->msg_id]);
		u->finished[m->msg_id] = 1;
		CHECK(m->status == 0 || m->status == -ETIMEDOUT ||
		      m->status == -ENOTCONN || m->status == -ENOSPC ||
		      m->status == -EINVAL || m->status == -EMSGSIZE);
		if (m->status == 0)
			CHECK(dist(u->tx.una, m->first_psn + m->nfrag) >= 0);
		free(m);
	}
}

/* Keep the sender busy: queue a message whenever its queue runs dry. */
static void refill(struct run *u, uint8_t nfrag)
{
	struct rel_msg *m;

	if (u->tx.head || u->queued >= NMSG)
		return;
	m = calloc(1, sizeof(*m));
	CHECK(m != NULL);
	m->nfrag = 1 + nfrag % 200;
	m->msg_id = (uint32_t)u->queued++;
	rel_tx_queue(&u->tx, m, u->now);
	m = calloc(1, sizeof(*m));
	CHECK(m != NULL);
	m->nfrag = 1 + (nfrag >> 3);
	m->msg_id = (uint32_t)u->queued++;
	rel_tx_queue(&u->tx, m, u->now);
}

/* An ack as the receiver would send it, from 12 input bytes. */
static size_t synth_ack(uint8_t *buf, const struct run *u, const uint8_t *p)
{
	struct wire_rel w;
	int j, k;

	memset(&w, 0, sizeof(w));
	w.ack_sess = p[0] & 0x80 ? u->sess + (p[0] & 1) : u->sess;
	/* around una, mostly within what went out */
	w.ack = u->tx.una + (uint32_t)(int8_t)p[1] + (p[0] & 0x40 ? 0 : 128);
	w.credit = (uint32_t)p[2] << 2;
	w.rflags = WIRE_REL_ACK | (p[3] & (WIRE_REL_NAK | WIRE_REL_ACKREQ |
					   WIRE_REL_SACK | 0x30));
	for (k = 0; k < WIRE_SACK_WORDS; k++)
		if (p[4 + k] & 1)
			w.sack[k] =
				(uint64_t)p[4 + k] * 0x0101010101010101ull >>
				(p[3] >> 6);
	if (w.rflags & WIRE_REL_CODES)
		for (j = 0; j < WIRE_REL_PLANES; j++)
			for (k = 0; k < WIRE_SACK_WORDS; k++)
				w.codes[j][k] = w.sack[k] >> (j * 3 + 1);
	return wire_ack_build(buf, 0x1234, &w);
}

/* One datagram from the peer: decode it and give its ack to the sender. */
static void feed(struct run *u, const uint8_t *dg, size_t len)
{
	struct wire_hdr h;
	struct wire_rel w;
	rel_codes codes;
	rel_bits s;
	long end;

	end = check_trailer(dg, len, &w);
	/* the transport decodes the header first; the trailer needs that */
	if (wire_hdr_decode(&h, dg, len) || end < 0)
		return;
	if (h.type == WIRE_ACK)
		CHECK((size_t)end >= WIRE_HDR_LEN);
	if (!(w.rflags & WIRE_REL_ACK))
		return;
	memcpy(s.w, w.sack, sizeof(s.w));
	memcpy(codes.plane, w.codes, sizeof(codes.plane));
	if (rel_tx_ack(&u->tx, w.ack_sess, w.ack, w.credit,
		       !!(w.rflags & WIRE_REL_NAK), s,
		       w.rflags & WIRE_REL_CODES ? &codes : NULL, u->now)) {
		CHECK(w.ack_sess == u->tx.sess);
		/* recounted; a probe not sent yet may still add one */
		u->probes = u->tx.rtos + u->tx.tail_probes - !!u->tx.probe;
	} else {
		CHECK(w.ack_sess != u->tx.sess);
	}
}

/* rel_tx_next as the flush loop calls it, up to n times. */
static void send_some(struct run *u, unsigned n)
{
	struct rel_msg *m;
	uint32_t frag, psn;
	int go;

	while (n--) {
		go = rel_tx_next(&u->tx, u->now, &m, &frag, &psn);
		CHECK(go == 0 || go == REL_GO || go == REL_GO_LAST);
		if (!go)
			break;
		CHECK(dist(psn, u->tx.una) >= 0 && dist(u->tx.end, psn) > 0);
		CHECK(frag < m->nfrag && psn == m->first_psn + frag);
		check_tx(u);
	}
}

/* The whole run: records until the input ends, then tear down. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run u;
	uint8_t buf[WIRE_HDR_LEN + WIRE_REL_CODES_LEN + WIRE_REL_SACK_LEN +
		    WIRE_REL_LEN];
	size_t pos = 0, len;
	uint8_t c;
	int k;

	if (size < 2)
		return 0;
	memset(&u, 0, sizeof(u));
	u.now = 1000;
	u.sess = SESS;
	rel_tx_init(&u.tx, SESS, data[0] * 3u, PEER_TIMEOUT);
	pos = 2;
	refill(&u, data[1]);
	check_tx(&u);
	while (pos < size) {
		c = data[pos++];
		switch (c >> 6) {
		case 0:
			if (pos >= size)
				break;
			len = data[pos++] + 64u * (c & 3);
			if (len > size - pos)
				len = size - pos;
			feed(&u, data + pos, len);
			pos += len;
			break;
		case 1:
			if (size - pos < 12) {
				pos = size;
				break;
			}
			len = synth_ack(buf, &u, data + pos);
			pos += 12;
			feed(&u, buf, len);
			break;
		case 2:
			send_some(&u, c & 63);
			break;
		default:
			u.now += (c & 63) * 7u;
			/* a peer timeout abandons what was queued, in the
			 * same session (reliable.h) */
			rel_tx_tick(&u.tx, u.now);
			CHECK(u.tx.sess == u.sess);
			break;
		}
		check_tx(&u);
		take_done(&u);
		refill(&u, c);
		check_tx(&u);
	}
	rel_tx_reset(&u.tx, -ENOTCONN, u.sess + 1);
	take_done(&u);
	for (k = 0; k < u.queued; k++)
		CHECK(u.finished[k]);
	return 0;
}
