/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for in-order reassembly of reliable streams: rel_rx
 * (psn order, sessions, datagrams kept past a gap) with wire_seq putting
 * messages back together, driven exactly as transport.c's tp_rel_recv,
 * tp_rel_keep, tp_rel_drain, tp_rel_take and tp_rel_try_held drive them,
 * with a channel queue that refuses on demand (backpressure).
 *
 * A sender model cuts messages (lengths from the input) into reliable
 * datagrams with wire_frag_build and wire_rel_put; the input picks which
 * psn of which session arrives next (anywhere: in order, duplicated,
 * beyond a gap, far ahead, from a stale session or a forged newer one),
 * starts new sessions (taken only once the bootstrap's agreement,
 * rel_rx_join, comes), abandons messages (a FWD mark at a later one),
 * and mixes in raw junk.  Checked after every step:
 *   - no crash, no leak (ASan), no read outside a datagram;
 *   - every delivered message is within max_message, with a valid channel;
 *   - without junk in the stream: each message of the session followed
 *     is delivered once, in order, whole and byte for byte (no message
 *     twice, none skipped but those a FWD mark abandoned); no datagram
 *     of a session not joined ever moves the receiver;
 *   - the kept datagrams are exactly those the bitmap says, each at its
 *     psn; memory is one partial message of at most max_message plus the
 *     REL_SACK_BITS slots;
 *   - finally, once the sender resends everything from the receiver's
 *     nxt in order (go-back-N), every message of its session arrives.
 *
 * The input: byte 0 the MTU, byte 1 the message count (1..8), then a
 * length byte pair per message, then records with a control byte c:
 *   c >> 6 == 0  psn nxt - 4 + (c & 63) of the current session
 *   c >> 6 == 1  psn from the next two bytes, session current - (c & 3),
 *                or with c & 4 current + 1 + (c & 3) (forged, or the
 *                next one before its agreement)
 *   c >> 6 == 2  c & 3: 0 a new session (with c & 4: the receiver joins
 *                the current one; with c & 8: FWD at message c >> 4 & 3),
 *                1 toggle refusing, 2 retry the held message (the service
 *                tick), 3 psn nxt + 1 + byte
 *   c >> 6 == 3  junk: the next byte is a length, then raw bytes (the
 *                trailer flag forced when c & 1)
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_relseq.c src/wire.c src/wire_rel.c
 *src/reliable.c src/log.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reliable.h"
#include "wire.h"
#include "fuzz.h"

#define MAX_MESSAGE 3000
#define MTU_MAX	    600
#define NMSG_MAX    8
#define SRC	    0x1234u
#define PEER	    3
#define CHAN	    "real"

/* The sender: the same message lengths in every session. */
struct sender {
	size_t mtu; /* datagram size, trailer included */
	int nmsg;
	size_t len[NMSG_MAX];
	uint32_t first[NMSG_MAX + 1]; /* psn of each message's fragment 0 */
	uint32_t sess;		      /* current session */
	uint32_t cached; /* msg_id of the message in msg (0: none) */
	uint8_t msg[MAX_MESSAGE];
};

/* The receiving side of one peer, as struct tp_rel holds it. */
struct receiver {
	struct rel_rx rx;
	struct wire_seq seq;
	int held;
	struct wire_msg hmsg;
	uint8_t ahead[REL_SACK_BITS][MTU_MAX];
	uint32_t ahead_len[REL_SACK_BITS];
	uint32_t ahead_psn[REL_SACK_BITS]; /* model only: what was kept */
	int refuse;			   /* the channel queue is full */
	int tainted;	    /* junk got into the stream: limits only */
	uint32_t want_sess; /* delivered so far of this session ... */
	int want;	    /* ... want messages, in order */
	size_t max_seq;	    /* largest partial buffer seen */
};

static struct sender S;
static struct receiver R;

/* Byte i of message k of session s: every message distinct. */
static uint8_t msg_byte(uint32_t s, int k, size_t i)
{
	return (uint8_t)(i * 7 + (size_t)k * 13 + s * 29 + (i >> 8));
}

/* Message k of session s into buf. */
static void msg_fill_buf(uint8_t *buf, uint32_t s, int k)
{
	size_t i;

	for (i = 0; i < S.len[k]; i++)
		buf[i] = msg_byte(s, k, i);
}

/* msg_id of message k of session s. */
static uint32_t msg_id_of(uint32_t s, int k)
{
	return s << 8 | (uint32_t)k;
}

/* Datagram psn of session s as the sender builds it, with rflags; 0 past
 * the end. */
static size_t build(uint8_t *dg, uint32_t s, uint32_t psn, uint32_t rflags)
{
	struct wire_rel w;
	size_t len;
	int k;

	if (psn >= S.first[S.nmsg])
		return 0;
	for (k = 0; psn >= S.first[k + 1]; k++)
		;
	if (S.cached != msg_id_of(s, k)) {
		msg_fill_buf(S.msg, s, k);
		S.cached = msg_id_of(s, k);
	}
	len = wire_frag_build(dg, S.mtu - WIRE_REL_LEN, SRC, msg_id_of(s, k),
			      CHAN, S.msg, S.len[k], psn - S.first[k]);
	CHECK(len > 0 && len <= S.mtu - WIRE_REL_LEN);
	memset(&w, 0, sizeof(w));
	w.sess = s;
	w.psn = psn;
	w.rflags = rflags;
	return wire_rel_put(dg, len, &w);
}

/* The channel queue: takes a message unless told to refuse. */
static int deliver(const struct wire_msg *m)
{
	size_t cl = strnlen(m->chan, sizeof(m->chan));
	uint32_t s;
	int k;

	CHECK(m->peer == PEER);
	CHECK(m->len <= MAX_MESSAGE);
	CHECK(cl >= 1 && cl <= WIRE_CHAN_MAX);
	CHECK(m->len == 0 || m->data != NULL);
	if (R.refuse)
		return -1;
	if (!R.tainted) {
		s = m->msg_id >> 8;
		k = (int)(m->msg_id & 0xff);
		/* the session followed, the next message of it, as sent */
		CHECK(R.rx.joined && s == R.rx.sess);
		if (s != R.want_sess) {
			R.want_sess = s;
			R.want = 0;
		}
		CHECK(k == R.want && k < S.nmsg);
		CHECK(!strcmp(m->chan, CHAN) && m->len == S.len[k]);
		for (size_t i = 0; i < m->len; i++)
			CHECK(((uint8_t *)m->data)[i] == msg_byte(s, k, i));
		R.want++;
	}
	free(m->data);
	return 0;
}

/* tp_rel_try_held: offer the held message again. */
static void try_held(void)
{
	if (!R.held)
		return;
	if (!deliver(&R.hmsg)) {
		R.held = 0;
		R.rx.blocked = 0;
		rel_rx_advance(&R.rx);
		R.rx.ack_now = 1;
		return;
	}
	R.rx.ack_due = 1;
	R.rx.ack_now = 1;
}

/* tp_rel_drop_held: the stream is gone. */
static void drop_held(void)
{
	if (R.held)
		free(R.hmsg.data);
	R.held = 0;
	R.rx.blocked = 0;
	wire_seq_reset(&R.seq);
	memset(&R.rx.ahead, 0, sizeof(R.rx.ahead));
}

/* tp_rel_keep: keep psn past a gap. */
static void keep(uint32_t psn, const uint8_t *dg, size_t len)
{
	uint32_t k = psn % REL_SACK_BITS;

	if (len > MTU_MAX) {
		rel_rx_unhold(&R.rx, psn);
		return;
	}
	memcpy(R.ahead[k], dg, len);
	R.ahead_len[k] = (uint32_t)len;
	R.ahead_psn[k] = psn;
}

/* tp_rel_take: the datagram at nxt. */
static void take(const uint8_t *dg, size_t len)
{
	struct wire_msg msg;
	int rc;

	rc = wire_seq_feed(&R.seq, MAX_MESSAGE, PEER, dg, len, &msg);
	CHECK(rc == 0 || rc == 1 || rc == -WIRE_DROP_NO_MEMORY ||
	      rc == -WIRE_DROP_MALFORMED || rc == -WIRE_DROP_TOO_BIG);
	if (R.seq.buf) {
		CHECK(R.seq.total_len <= MAX_MESSAGE);
		CHECK(R.seq.next < R.seq.frag_cnt);
		if (R.seq.total_len > R.max_seq)
			R.max_seq = R.seq.total_len;
	}
	if (rc == 0) {
		rel_rx_advance(&R.rx);
	} else if (rc == 1) {
		CHECK(R.seq.buf == NULL);
		R.held = 1;
		R.hmsg = msg;
		try_held();
		if (R.held)
			R.rx.blocked = 1;
	} else if (rc != -WIRE_DROP_NO_MEMORY) {
		/* a sender we follow never sends these: junk did */
		CHECK(R.tainted);
		rel_rx_advance(&R.rx);
	}
}

/* tp_rel_drain: what is kept and next in order now. */
static void drain(void)
{
	uint32_t k;

	while (!R.held && rel_rx_ready(&R.rx)) {
		k = R.rx.nxt % REL_SACK_BITS;
		CHECK(R.ahead_psn[k] == R.rx.nxt);
		rel_rx_unhold(&R.rx, R.rx.nxt);
		take(R.ahead[k], R.ahead_len[k]);
	}
}

/* tp_rel_recv, the data half: one datagram from the peer. */
static void recv_dg(const uint8_t *dg, size_t dlen, int junk)
{
	enum rel_verdict v;
	struct wire_hdr h;
	struct wire_rel w;
	uint32_t nxt = R.rx.nxt, sess = R.rx.sess;
	long plen;

	if (wire_hdr_decode(&h, dg, dlen) || h.src != SRC)
		return;
	plen = wire_rel_get(dg, dlen, &w);
	if (plen < 0 || h.type != WIRE_DATA)
		return;
	if ((w.rflags & WIRE_REL_FWD) && rel_rx_forward(&R.rx, w.sess, w.psn)) {
		CHECK(w.sess == sess && R.rx.nxt == w.psn &&
		      w.psn - nxt < 1u << 31);
		drop_held();
		if (junk)
			R.tainted = 1;
		/* the sender failed what came before: the next message of
		 * the session is the one that starts at psn */
		R.want_sess = w.sess;
		for (R.want = 0; R.want < S.nmsg && S.first[R.want] < w.psn;
		     R.want++)
			;
	}
	v = rel_rx_check(&R.rx, w.sess, w.psn);
	CHECK(v == REL_ACCEPT || v == REL_DUP || v == REL_OOO ||
	      v == REL_AHEAD || v == REL_FOREIGN);
	/* only the session joined moves anything */
	CHECK((v == REL_FOREIGN) == (!R.rx.joined || w.sess != R.rx.sess));
	CHECK(R.rx.sess == sess);
	if (v == REL_FOREIGN)
		CHECK(R.rx.nxt == nxt);
	if ((w.rflags & WIRE_REL_ACKREQ) && R.rx.joined)
		rel_rx_ask_ack(&R.rx);
	if (junk && (v == REL_ACCEPT || v == REL_AHEAD))
		R.tainted = 1;
	if (v == REL_AHEAD) {
		keep(w.psn, dg, (size_t)plen);
		return;
	}
	if (v != REL_ACCEPT)
		return;
	if (R.held)
		try_held();
	else
		take(dg, (size_t)plen);
	drain();
}

/* The receiver's invariants between datagrams. */
static void check_rx(void)
{
	rel_bits sack = rel_rx_sack(&R.rx);
	uint32_t i, k;

	if (!R.held)
		CHECK(!rel_rx_ready(&R.rx));
	CHECK(!R.rx.blocked == !R.held);
	for (i = 0; i < REL_SACK_BITS; i++) {
		if (!R.rx.ahead.w[i / 64]) {
			i |= 63; /* skip an empty word */
			continue;
		}
		if (!rel_bit(&R.rx.ahead, i))
			continue;
		k = (R.rx.nxt + i) % REL_SACK_BITS;
		CHECK(R.ahead_psn[k] == R.rx.nxt + i);
		CHECK(i == 0 || rel_bit(&sack, i - 1));
	}
	if (!R.rx.joined)
		CHECK(!rel_bits_any(&R.rx.ahead));
	if (!R.tainted && R.rx.joined && R.rx.sess <= S.sess)
		CHECK(R.rx.nxt <= S.first[S.nmsg]);
	CHECK(R.max_seq <= MAX_MESSAGE);
}

/* Feed psn of session s, if the sender ever sends it. */
static void send_psn(uint32_t s, uint32_t psn, uint32_t rflags)
{
	uint8_t dg[MTU_MAX];
	size_t len = build(dg, s, psn, rflags);

	if (len)
		recv_dg(dg, len, 0);
}

/* tp_rel_attach: the bootstrap met the sender's incarnation of the
 * current session (a new one only: the same is never joined twice). */
static void join(void)
{
	if (R.rx.joined && R.rx.sess == S.sess)
		return;
	rel_rx_join(&R.rx, S.sess);
	drop_held();
	R.want_sess = S.sess;
	R.want = 0;
}

/* The sender resends from the receiver's nxt: all of it must arrive. */
static void finish(void)
{
	uint32_t end = S.first[S.nmsg], guard = 0;

	R.refuse = 0;
	try_held();
	drain();
	if (!R.rx.joined || R.rx.sess != S.sess)
		join(); /* the bootstrap agrees on the current session */
	CHECK(R.rx.joined && R.rx.sess == S.sess);
	while (R.rx.nxt < end) {
		CHECK(guard++ <= end);
		send_psn(S.sess, R.rx.nxt, 0);
		check_rx();
	}
	CHECK(!R.held && R.seq.buf == NULL);
	CHECK(R.want_sess == S.sess && R.want == S.nmsg);
}

/* The sender's messages from the input's head; returns where the records
 * start. */
static size_t setup(const uint8_t *data, size_t size)
{
	size_t pos = 2, room;
	int k;

	memset(&S, 0, sizeof(S));
	memset(&R, 0, sizeof(R));
	/* room for the header, "real" and a byte or more of payload */
	S.mtu = WIRE_HDR_LEN + sizeof(CHAN) - 1 + WIRE_REL_LEN + 1 +
		data[0] * 2u;
	if (S.mtu > MTU_MAX)
		S.mtu = MTU_MAX;
	S.nmsg = 1 + data[1] % NMSG_MAX;
	S.sess = 1;
	room = wire_frag_room(S.mtu - WIRE_REL_LEN, sizeof(CHAN) - 1);
	for (k = 0; k < S.nmsg; k++) {
		if (size - pos >= 2) {
			S.len[k] = ((size_t)data[pos] << 8 | data[pos + 1]) %
				   (MAX_MESSAGE + 1);
			pos += 2;
		}
		/* keep a run's psns few: at most 128 fragments a message */
		if (S.len[k] > 128 * room)
			S.len[k] = 128 * room;
		S.first[k + 1] = S.first[k] +
				 wire_frag_count(S.len[k], S.mtu - WIRE_REL_LEN,
						 sizeof(CHAN) - 1);
	}
	rel_rx_init(&R.rx, REL_WINDOW_DEFAULT);
	join();
	return pos;
}

/* One run: set up the sender, play the records, then finish. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t junk[MTU_MAX];
	size_t pos, len;
	uint32_t psn, s;
	uint8_t c;

	if (size < 2)
		return 0;
	pos = setup(data, size);
	while (pos < size) {
		c = data[pos++];
		switch (c >> 6) {
		case 0:
			send_psn(S.sess, R.rx.nxt - 4 + (c & 63), 0);
			break;
		case 1:
			if (size - pos < 2) {
				pos = size;
				break;
			}
			psn = (uint32_t)data[pos] << 8 | data[pos + 1];
			pos += 2;
			s = c & 3;
			if (c & 4)
				send_psn(S.sess + 1 + s, psn,
					 c & 8 ? WIRE_REL_FWD : 0);
			else if (s < S.sess) /* sessions are 1.. */
				send_psn(S.sess - s, psn, 0);
			break;
		case 2:
			if ((c & 3) == 0 && (c & 4)) {
				join();
			} else if ((c & 3) == 0 && (c & 8)) {
				s = (uint32_t)(c >> 4 & 3) % (uint32_t)S.nmsg;
				send_psn(S.sess, S.first[s], WIRE_REL_FWD);
			} else if ((c & 3) == 0) {
				S.sess++;
			} else if ((c & 3) == 1) {
				R.refuse = !R.refuse;
			} else if ((c & 3) == 2) {
				try_held();
				drain();
			} else if (pos < size) {
				send_psn(S.sess, R.rx.nxt + 1 + data[pos++], 0);
			}
			break;
		default:
			if (pos >= size)
				break;
			len = data[pos++];
			if (len > size - pos)
				len = size - pos;
			memcpy(junk, data + pos, len);
			pos += len;
			if ((c & 1) && len > 7)
				junk[7] |= WIRE_FLAG_REL;
			recv_dg(junk, len, 1);
			break;
		}
		check_rx();
	}
	if (!R.tainted)
		finish();
	drop_held();
	return 0;
}
