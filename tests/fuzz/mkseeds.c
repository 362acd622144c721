/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Seed corpora for the fuzz targets, made with the real encoders so that
 * the fuzzer starts from what peers actually send: hellos (hello_encode),
 * reliable datagrams and standalone ACKs with a sack (wire_frag_build,
 * wire_rel_put, wire_ack_build), and reliable streams in, out of and
 * across order.  `make fuzz-seeds` rebuilds tests/fuzz/corpus/ with it;
 * the files are committed, so fuzz-regress needs no generator.
 *
 *   mkseeds DIR   writes DIR/{ann,bshake,hello,rel,relseq,wire}/seed-*
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "bootstrap.h"
#include "wire.h"

#define REL_SESS 0x5e55u /* fuzz_rel.c's SESS */
#define SRC	 0x1234u /* fuzz_relseq.c's SRC */

/* A growing seed file. */
struct seed {
	uint8_t b[8192];
	size_t n;
};

static const char *outdir;

/* Append n bytes. */
static void put(struct seed *s, const void *p, size_t n)
{
	if (s->n + n > sizeof(s->b)) {
		fprintf(stderr, "mkseeds: seed too long\n");
		exit(1);
	}
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

/* Append one byte. */
static void put8(struct seed *s, unsigned v)
{
	uint8_t b = (uint8_t)v;

	put(s, &b, 1);
}

/* Write s as DIR/target/seed-name. */
static void save(const char *target, const char *name, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/seed-%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static size_t cert_step(uint8_t out[BS_CERT_MSG_MAX]);

/* Hellos as daemons send them: datagram, reliable, authenticated. */
static void seeds_hello(void)
{
	struct hello h;
	struct seed s;
	int i;

	memset(&h, 0, sizeof(h));
	h.version = HELLO_VERSION;
	strcpy(h.name, "alpha");
	h.delivery = DELIVERY_DATAGRAM;
	h.addr.qpn = 0x11;
	h.addr.qkey = 0x11111111;
	h.addr.lid = 0;
	h.addr.mtu = IBV_MTU_1024;
	h.addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	h.addr.gid.raw[10] = h.addr.gid.raw[11] = 0xff;
	h.addr.gid.raw[12] = 10;
	h.addr.gid.raw[15] = 1;
	s.n = hello_encode(&h, s.b);
	save("hello", "datagram", &s);

	strcpy(h.name, "node-b.2");
	h.delivery = DELIVERY_RELIABLE;
	h.addr.qpn = 0xffffff;
	h.addr.lid = 7;
	h.addr.mtu = IBV_MTU_4096;
	h.addr.link_layer = IBV_LINK_LAYER_INFINIBAND;
	h.addr.max_message = 1 << 20;
	s.n = hello_encode(&h, s.b);
	save("hello", "reliable", &s);

	h.flags = HELLO_F_AUTH;
	for (i = 0; i < HELLO_NONCE_LEN; i++)
		h.nonce[i] = (uint8_t)(i * 37 + 1);
	s.n = hello_encode(&h, s.b);
	/* the proof that follows it on the socket, as the secret too */
	memset(s.b + s.n, 0x5a, BS_PROOF_LEN);
	s.n += BS_PROOF_LEN;
	save("hello", "auth", &s);

	/* with a ca: the nonce, and the certificate step after it */
	h.flags = HELLO_F_CERT;
	s.n = hello_encode(&h, s.b);
	s.n += cert_step(s.b + s.n);
	save("hello", "cert", &s);
}

/*
 * beta's certificate step as it follows the hello (bs_cert_encode): the
 * certificate and signature of fuzz_cert's seed-beta (u16 length, DER,
 * u8 length, signature), which make fuzz-cert wrote; its length.
 */
static size_t cert_step(uint8_t out[BS_CERT_MSG_MAX])
{
	char path[4096];
	uint8_t in[BS_CERT_MSG_MAX];
	size_t n, derlen;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cert/seed-beta", outdir);
	f = fopen(path, "rb");
	n = f ? fread(in, 1, sizeof(in), f) : 0;
	if (f)
		fclose(f);
	derlen = n >= 2 ? (size_t)in[0] << 8 | in[1] : 0;
	if (!derlen || derlen > CERT_DER_MAX || n < 3 + derlen ||
	    n < 3 + derlen + in[2 + derlen] || !in[2 + derlen]) {
		fprintf(stderr, "mkseeds: %s: no certificate\n", path);
		exit(1);
	}
	return bs_cert_encode(out, in + 2, derlen, in + 3 + derlen,
			      in[2 + derlen]);
}

/* A bshake seed: the case byte, beta's hello (name, flags), then tail. */
static void bshake(const char *name, unsigned mode, const char *who,
		   const void *tail, size_t tlen)
{
	struct hello h;
	struct seed s;

	memset(&h, 0, sizeof(h));
	h.version = HELLO_VERSION;
	snprintf(h.name, sizeof(h.name), "%s", who);
	h.delivery = DELIVERY_DATAGRAM;
	h.addr.qpn = 0x12;
	h.addr.qkey = 0x1b1f5000;
	h.addr.mtu = IBV_MTU_1024;
	h.addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	h.addr.gid.raw[10] = h.addr.gid.raw[11] = 0xff;
	if (mode & 1) {
		h.flags = HELLO_F_AUTH;
		memset(h.nonce, 0x42, HELLO_NONCE_LEN);
	}
	if (mode & 0x100) { /* not a case bit: beta sends its certificate */
		h.flags |= HELLO_F_CERT;
		memset(h.nonce, 0x42, HELLO_NONCE_LEN);
	}
	s.n = 0;
	put8(&s, mode & 0xff);
	s.n += hello_encode(&h, s.b + s.n);
	put(&s, tail, tlen);
	save("bshake", name, &s);
}

/* fuzz_bshake: each case of fuzz_bshake.c, with what a peer then sends. */
static void seeds_bshake(void)
{
	uint8_t tail[BS_PROOF_LEN + 4], cert[BS_CERT_MSG_MAX];
	size_t tlen;

	memset(tail, 0x5a, BS_PROOF_LEN);
	memcpy(tail + BS_PROOF_LEN, "IBHR", 4);
	bshake("incoming-ready", 0, "beta", "IBHR", 4);
	bshake("incoming-bye", 0, "beta", "IBHRIBHY", 8);
	bshake("outgoing", 2, "beta", "IBHY", 4);
	bshake("incoming-auth", 1, "beta", tail, sizeof(tail));
	bshake("outgoing-auth", 3, "beta", tail, BS_PROOF_LEN);
	bshake("stranger", 4, "beta", "IBHR", 4);
	bshake("control-byte", 0, "be\nta", "IBHR", 4);
	bshake("not-configured", 0, "delta", "", 0);
	tlen = cert_step(cert);
	bshake("incoming-cert", 0x100, "beta", cert, tlen);
	bshake("incoming-auth-cert", 0x101, "beta", cert, tlen);
}

/* fuzz_ann: an announce as a daemon sends it, its queries and MEET, and
 * a challenge. */
static void seeds_ann(void)
{
	uint8_t step[BS_CERT_MSG_MAX];
	size_t n, derlen, siglen;
	struct ann_msg m;
	struct seed s;
	int i;

	memset(&m, 0, sizeof(m));
	m.kind = ANN_ANNOUNCE;
	m.h.version = HELLO_VERSION;
	strcpy(m.h.name, "beta");
	m.h.addr.qpn = 0x12;
	m.h.addr.qkey = 0x1b1f5000;
	m.h.addr.mtu = IBV_MTU_1024;
	m.h.addr.gid.raw[10] = m.h.addr.gid.raw[11] = 0xff;
	m.h.addr.max_message = 1 << 20;
	m.h.addr.boot = 0xb0075eed;
	hello_encode(&m.h, m.hello);
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	save("ann", "announce", &s);
	/* on demand: a query for alpha, one for every node, a MEET */
	m.kind = ANN_QUERY;
	m.target = wire_node_id("alpha");
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	save("ann", "query", &s);
	m.target = 0;
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	save("ann", "query-all", &s);
	m.kind = ANN_MEET;
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	save("ann", "meet", &s);
	m.kind = ANN_CHALLENGE;
	m.h.flags = HELLO_F_AUTH;
	for (i = 0; i < HELLO_NONCE_LEN; i++)
		m.h.nonce[i] = (uint8_t)(i * 37 + 1);
	hello_encode(&m.h, m.hello);
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	save("ann", "challenge", &s);
	/* with a ca: a PROOF and its certificate step */
	m.kind = ANN_PROOF;
	m.h.flags = HELLO_F_CERT;
	hello_encode(&m.h, m.hello);
	memset(m.echo, 0x42, HELLO_NONCE_LEN);
	n = cert_step(step);
	bs_cert_head(step, &derlen, &siglen);
	m.der = step + BS_CERT_HEAD;
	m.derlen = (uint16_t)derlen;
	m.siglen = (uint8_t)siglen;
	memcpy(m.sig, step + BS_CERT_HEAD + derlen, siglen);
	s.n = ann_datagram_build(s.b, wire_node_id("beta"), &m);
	if (s.n != WIRE_HDR_LEN + ANN_WIRE_LEN + n) {
		fprintf(stderr, "mkseeds: the proof's certificate step\n");
		exit(1);
	}
	save("ann", "proof-cert", &s);
}

/* A raw-datagram record of fuzz_rel.c (kind 0, up to 255 bytes). */
static void rel_raw(struct seed *s, const uint8_t *dg, size_t len)
{
	put8(s, 0);
	put8(s, (unsigned)len);
	put(s, dg, len);
}

/* fuzz_rel: a sender, a DATA with a piggy-backed ack, a sacking ACK. */
static void seeds_rel(void)
{
	static const char msg[] = "hello, reliable world";
	uint8_t dg[512];
	struct wire_rel w;
	struct seed s;
	size_t len;
	int k;

	s.n = 0;
	put8(&s, 0);	     /* window: the default */
	put8(&s, 9);	     /* message sizes */
	put8(&s, 0x80 | 40); /* send 40 */
	len = wire_frag_build(dg, 256 - WIRE_REL_LEN, SRC, 1, "chat", msg,
			      sizeof(msg), 0);
	memset(&w, 0, sizeof(w));
	w.sess = 77;
	w.psn = 0;
	w.ack_sess = REL_SESS;
	w.ack = 4;
	w.credit = 512;
	w.rflags = WIRE_REL_ACK | WIRE_REL_ACKREQ;
	len = wire_rel_put(dg, len, &w);
	rel_raw(&s, dg, len);
	put8(&s, 0x80 | 20); /* send 20 more */
	memset(&w, 0, sizeof(w));
	w.ack_sess = REL_SESS;
	w.ack = 6;
	w.credit = 256;
	w.rflags = WIRE_REL_ACK | WIRE_REL_NAK | WIRE_REL_SACK;
	for (k = 0; k < WIRE_SACK_WORDS; k++)
		w.sack[k] = k ? 0 : 0xf0f0ull;
	len = wire_ack_build(dg, SRC, &w);
	rel_raw(&s, dg, len);
	put8(&s, 0x80 | 63);
	put8(&s, 0xc0 | 20); /* 140 ms: the timer fires */
	put8(&s, 0x80 | 5);
	w.ack = 10;
	w.rflags = WIRE_REL_ACK;
	len = wire_ack_build(dg, SRC, &w);
	rel_raw(&s, dg, len);
	save("rel", "data-ack-sack", &s);

	/* synthesised acks (kind 1) and a silence long enough to time out */
	s.n = 0;
	put8(&s, 30);
	put8(&s, 200);
	put8(&s, 0x80 | 63);
	put8(&s, 0x40);
	put(&s, "\x00\x08\x40\x08\x03\x00\x05\x00\x00\x00\x00\x00", 12);
	put8(&s, 0x80 | 63);
	put8(&s, 0x40);
	put(&s, "\x00\x10\x40\x0a\x81\x00\x00\x00\x00\x00\x00\x00", 12);
	for (k = 0; k < 8; k++)
		put8(&s, 0xc0 | 63);
	save("rel", "synth-timeout", &s);
}

/* fuzz_relseq header: MTU byte, message count, length pairs. */
static void relseq_head(struct seed *s, unsigned mtu, unsigned n,
			const unsigned *lens)
{
	unsigned k;

	put8(s, mtu);
	put8(s, n - 1);
	for (k = 0; k < n; k++) {
		put8(s, lens[k] >> 8);
		put8(s, lens[k] & 0xff);
	}
}

/* fuzz_relseq: in order, a gap and its repair, backpressure, sessions,
 * forgeries and forward marks. */
static void seeds_relseq(void)
{
	static const unsigned lens[] = {0, 1, 300, 2999, 77, 1000};
	struct seed s;
	int k;

	/* everything in order: psn nxt each time */
	s.n = 0;
	relseq_head(&s, 100, 6, lens);
	for (k = 0; k < 40; k++)
		put8(&s, 4);
	save("relseq", "in-order", &s);

	/* a hole at nxt, datagrams kept past it, then the hole */
	s.n = 0;
	relseq_head(&s, 40, 6, lens);
	for (k = 0; k < 10; k++)
		put8(&s, 4);
	for (k = 6; k < 30; k++)
		put8(&s, (unsigned)k);
	put8(&s, 4);
	put8(&s, 4 + 3); /* a duplicate of something kept */
	put8(&s, 0x83);	 /* far ahead */
	put8(&s, 200);
	save("relseq", "gap", &s);

	/* the queue refuses a whole message, then takes it; new session */
	s.n = 0;
	relseq_head(&s, 255, 4, lens + 1);
	put8(&s, 0x81); /* refuse */
	for (k = 0; k < 8; k++)
		put8(&s, 4);
	put8(&s, 0x82); /* retry: still refused */
	put8(&s, 0x81); /* take */
	put8(&s, 4);	/* the last fragment again: held goes in */
	put8(&s, 0x80); /* new session */
	put8(&s, 4);
	put8(&s, 0x41); /* a stale one */
	put(&s, "\x00\x02", 2);
	put8(&s, 0xc1); /* junk */
	put8(&s, 8);
	put(&s, "IBFS\x05\x01\x01\x00", 8);
	save("relseq", "refuse-session", &s);

	/* issue 20: a forged "newer" session at psn 0, then the stream goes
	 * on; a new session taken only once joined; a FWD past a message
	 * abandoned mid-way */
	s.n = 0;
	relseq_head(&s, 60, 6, lens);
	for (k = 0; k < 6; k++)
		put8(&s, 4);
	put8(&s, 0x44); /* session current + 1, psn 0 */
	put(&s, "\x00\x00", 2);
	put8(&s, 0x4c); /* ... with a FWD mark, far ahead */
	put(&s, "\x00\x40", 2);
	for (k = 0; k < 6; k++)
		put8(&s, 4);
	put8(&s, 0x80 | 0x08 | 0x30); /* FWD at message 3 */
	for (k = 0; k < 6; k++)
		put8(&s, 4);
	put8(&s, 0x80); /* a new session: refused until joined */
	put8(&s, 4);
	put8(&s, 0x84); /* joined */
	for (k = 0; k < 6; k++)
		put8(&s, 4);
	save("relseq", "forged-fwd-join", &s);
}

/* fuzz_wire: raw records of real fragments, then a replay. */
static void seeds_wire(void)
{
	static const char msg[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	uint8_t dg[256];
	struct seed s;
	size_t len;
	uint32_t i;

	s.n = 0;
	for (i = 0; i < 3; i++) {
		len = wire_frag_build(dg, WIRE_HDR_LEN + 4 + 16, 5, 9, "chat",
				      msg, sizeof(msg), 2 - i);
		put8(&s, 0x01); /* peer 1, raw */
		put8(&s, (unsigned)len);
		put(&s, dg, len);
	}
	put8(&s, 0xff);
	put(&s, "\x01\x00\x40\x07\x00\x01\x02\x03\x02\x01\x00", 11);
	save("wire", "three-frags", &s);

	s.n = 0;
	put(&s, "\x08\x00\x01\x02\x03\x04\x05\x06\x07", 9);
	put(&s, "\x18\x01\x01\x02\x03\x04\x05\x06\x07", 9);
	put8(&s, 0xc0);
	put8(&s, 0xff);
	save("wire", "synth", &s);

	/* peer 0 starts 32 messages of max size, past its share; then
	 * peer 1's message goes in whole */
	s.n = 0;
	for (i = 0; i < 32; i++) {
		uint8_t p[8] = {
			0, (uint8_t)(i & 3), (uint8_t)(i >> 2), 7, 255, 255, 0,
			0};

		put8(&s, 0x08);
		put(&s, p, sizeof(p));
	}
	for (i = 0; i < 8; i++) {
		uint8_t p[8] = {0, 0, 0, 7, 255, 255, (uint8_t)i, 0};

		put8(&s, 0x09);
		put(&s, p, sizeof(p));
	}
	put8(&s, 0xff);
	save("wire", "share", &s);
}

/* Write every target's seeds under argv[1]. */
int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	seeds_hello();
	seeds_bshake();
	seeds_ann();
	seeds_rel();
	seeds_relseq();
	seeds_wire();
	return 0;
}
