/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for wire_reasm.c's reassembly table: nothing a peer sends
 *may crash it, leak, or deliver a message that breaks its own limits.
 *
 * The input is a list of records.  Each starts with a control byte:
 *   bits 0-2  peer (0..7)
 *   bit  3    the next 8 bytes describe a near-valid datagram (synth()),
 *             so the fuzzer reaches deep into reassembly soon; clear: a
 *             length byte (scaled by 1 + bits 6-7) and that many raw bytes
 *   bits 4-5  clock step: 0, 40, 80 or 120 ms
 *   bits 6-7  3: no datagram; expire (bit 3 clear) or forget the peer
 *             (bit 3 set)
 * 0xff ends the records.
 * A last part replays a real message (length and content from the input)
 * cut at an input-chosen MTU, shuffled, with duplicates and junk from
 * another peer, and checks it comes back byte for byte.
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_wire.c src/wire.c src/wire_reasm.c src/util.c
 *src/log.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "fuzz.h"

#define MAX_MESSAGE 2048
/* room for a few max-size partials: shares and the reserve bind */
#define MEM_LIMIT  (64 * 1024)
#define TIMEOUT_MS 100

/* A completed message must respect every limit; read all of it. */
static void check_msg(const struct wire_msg *m, int peer)
{
	size_t cl = strnlen(m->chan, sizeof(m->chan));
	volatile uint8_t sink = 0;
	size_t i;

	CHECK(m->peer == peer);
	CHECK(m->len <= MAX_MESSAGE);
	CHECK(cl >= 1 && cl <= WIRE_CHAN_MAX);
	CHECK(m->data != NULL);
	for (i = 0; i < m->len; i++)
		sink ^= ((const uint8_t *)m->data)[i];
	(void)sink;
}

/* The feed result must be one the API documents. */
static void check_rc(int rc)
{
	CHECK(rc == 0 || rc == 1 || rc == -WIRE_DROP_MALFORMED ||
	      rc == -WIRE_DROP_DUPLICATE || rc == -WIRE_DROP_TOO_BIG ||
	      rc == -WIRE_DROP_NO_MEMORY || rc == -WIRE_DROP_SHARE);
}

/*
 * A datagram that is nearly always well formed, from 8 input bytes: few
 * keys, so fragments of one message meet, and geometry that holds unless
 * p[7] bends it.  Returns its length.
 */
static size_t synth(uint8_t *buf, const uint8_t *p)
{
	static const char names[] = "abcd";
	struct wire_hdr h = {0};
	size_t room = (size_t)p[4] + 1, last = 1 + p[5] % room, plen;

	h.type = WIRE_DATA;
	h.chan_len = 1 + p[0] % 4;
	h.src = p[1] & 3;
	h.msg_id = p[2] & 7;
	h.frag_cnt = 1 + p[3] % 8;
	h.frag_idx = p[6] % h.frag_cnt;
	if (h.frag_cnt == 1)
		last = p[5] % (room + 1);
	h.total_len = (uint32_t)((h.frag_cnt - 1) * room + last);
	plen = h.frag_idx + 1 < h.frag_cnt ? room : last;
	if (p[7] & 0x80)
		plen = (plen + (int8_t)(p[7] << 1) / 2) & 0x1ff;
	if (p[7] & 0x40)
		h.total_len ^= 1u << (p[7] & 0x1f);
	wire_hdr_encode(&h, buf);
	memcpy(buf + WIRE_HDR_LEN, names, h.chan_len);
	memset(buf + WIRE_HDR_LEN + h.chan_len, p[2] ^ h.frag_idx, plen);
	return WIRE_HDR_LEN + h.chan_len + plen;
}

/* Raw records: arbitrary datagrams, clock steps, expiry, forgetting. */
static size_t fuzz_raw(struct wire_reasm *r, const uint8_t *d, size_t n,
		       uint64_t *now)
{
	uint8_t buf[WIRE_HDR_LEN + 4 * 255 + 512];
	struct wire_msg m;
	size_t pos = 0, len;
	int peer, rc, t;
	uint8_t c;

	while (pos < n) {
		c = d[pos++];
		if (c == 0xff) /* end of raw records */
			break;
		peer = c & 7;
		*now += ((c >> 4) & 3) * 40u;
		if ((c >> 6) == 3) {
			if (c & 8)
				wire_reasm_forget_peer(r, peer);
			else
				wire_reasm_expire(r, *now);
			continue;
		}
		if (c & 8) {
			if (n - pos < 8)
				break;
			len = synth(buf, d + pos);
			pos += 8;
		} else {
			if (pos >= n)
				break;
			len = (size_t)d[pos++] * (1 + (c >> 6));
			if (len > n - pos)
				len = n - pos;
			memcpy(buf, d + pos, len);
			pos += len;
		}
		rc = wire_reasm_feed(r, peer, buf, len, *now, &m);
		check_rc(rc);
		if (rc == 1) {
			check_msg(&m, peer);
			free(m.data);
		}
		t = wire_reasm_next_timeout(r, *now);
		CHECK((t == -1) == (wire_reasm_pending(r) == 0));
		CHECK(wire_reasm_mem(r) <= MEM_LIMIT);
		CHECK(t <= TIMEOUT_MS);
	}
	return pos;
}

/*
 * A real message, shuffled with duplicates and some fragments left out:
 * it completes exactly when every fragment went in, with its own bytes.
 */
static void fuzz_replay(struct wire_reasm *r, const uint8_t *d, size_t n,
			uint64_t now)
{
	static const char chan[] = "replay";
	uint8_t dg[512], msg[MAX_MESSAGE];
	uint32_t cnt, i, fed = 0, seen[64] = {0};
	struct wire_msg m;
	size_t len, mtu, l, pos;
	int rc, done = 0;

	if (n < 4)
		return;
	/* peers 8 and 9 are its own: raw records use 0..7 */
	len = (((size_t)d[0] << 8) | d[1]) % (MAX_MESSAGE + 1);
	mtu = WIRE_HDR_LEN + sizeof(chan) - 1 + 1 + d[2] % 300;
	for (i = 0; i < len; i++)
		msg[i] = (uint8_t)(i * 31 + d[3]);
	cnt = wire_frag_count(len, mtu, sizeof(chan) - 1);
	CHECK(cnt >= 1 && cnt <= 64 * 64);
	if (cnt > 64 * 8)
		return;
	for (pos = 4; pos < n; pos++) {
		i = d[pos] % (cnt + 1);
		if (i == cnt) {
			/* junk from another peer in between */
			l = wire_frag_build(dg, mtu, 1, 77, chan, msg, len, 0);
			CHECK(l > 0);
			dg[l - 1] ^= 0x5a;
			rc = wire_reasm_feed(r, 8, dg, l, now, &m);
			check_rc(rc);
			if (rc == 1)
				free(m.data);
			continue;
		}
		l = wire_frag_build(dg, mtu, 0xabc, 1, chan, msg, len, i);
		CHECK(l > 0 && l <= mtu);
		rc = wire_reasm_feed(r, 9, dg, l, now, &m);
		if (done) {
			CHECK(rc == -WIRE_DROP_DUPLICATE);
			continue;
		}
		if (seen[i / 32] & (1u << (i % 32))) {
			CHECK(rc == -WIRE_DROP_DUPLICATE);
			continue;
		}
		if (rc == -WIRE_DROP_NO_MEMORY || rc == -WIRE_DROP_SHARE)
			return; /* raw records filled memory: fair */
		seen[i / 32] |= 1u << (i % 32);
		fed++;
		if (fed < cnt) {
			CHECK(rc == 0);
			continue;
		}
		CHECK(rc == 1);
		CHECK(m.len == len && m.peer == 9 && m.msg_id == 1);
		CHECK(strcmp(m.chan, chan) == 0);
		CHECK(len == 0 || memcmp(m.data, msg, len) == 0);
		free(m.data);
		done = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_reasm *r =
		wire_reasm_new(MAX_MESSAGE, MEM_LIMIT, TIMEOUT_MS);
	uint64_t now = 1000;
	size_t used;

	if (!r)
		return 0;
	used = fuzz_raw(r, data, size, &now);
	fuzz_replay(r, data + used, size - used, now);
	if (size & 1) {
		/* everything left is at most TIMEOUT_MS old; a slice a call */
		while (wire_reasm_expire(r, now + TIMEOUT_MS))
			;
		CHECK(wire_reasm_pending(r) == 0);
		CHECK(wire_reasm_mem(r) == 0);
	}
	wire_reasm_free(r); /* with partials left, when size is even */
	return 0;
}
