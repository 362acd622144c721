/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast's pure parts (announce.h): the announce datagram
 * round-trips around the hello's codec and refuses every malformed field;
 * an announce must name the QP and GID (or LID) it came from; what an
 * announce means for its node (alive, new, restarted), when silence takes
 * a node down, and the jitter of the announce timer; an announce from
 * another IPv4 address than its node's configured one is refused, on the
 * receive path already, before it takes a place in the inbox (S1).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "unit.h"
#include "announce.h"

#define DG_LEN (WIRE_HDR_LEN + ANN_WIRE_LEN)

/* An announce as the bed's beta would send it. */
static void msg_beta(struct ann_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = ANN_ANNOUNCE;
	m->h.version = HELLO_VERSION;
	strcpy(m->h.name, "beta");
	m->h.delivery = DELIVERY_DATAGRAM;
	m->h.addr.qpn = 0x000012;
	m->h.addr.qkey = 0x1b1f5000;
	m->h.addr.mtu = IBV_MTU_1024;
	m->h.addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	m->h.addr.gid.raw[10] = m->h.addr.gid.raw[11] = 0xff;
	m->h.addr.gid.raw[12] = 10;
	m->h.addr.gid.raw[15] = 15;
	m->h.addr.max_message = 1 << 20;
	m->h.addr.boot = 0xb0075eed;
	hello_encode(&m->h, m->hello);
}

/* beta's announce as a datagram in dg. */
static void dg_beta(uint8_t *dg)
{
	struct ann_msg m;

	msg_beta(&m);
	assert_int_equal(ann_datagram_build(dg, wire_node_id("beta"), &m),
			 DG_LEN);
}

/* Build, decode: every field back, the hello's bytes as sent. */
static void test_roundtrip(void **state)
{
	uint8_t dg[DG_LEN];
	struct ann_msg m, d;

	msg_beta(&m);
	assert_int_equal(ann_datagram_build(dg, wire_node_id("beta"), &m),
			 DG_LEN);
	assert_int_equal(ann_datagram_decode(&d, dg, sizeof(dg)), 0);
	assert_int_equal(d.kind, ANN_ANNOUNCE);
	assert_string_equal(d.h.name, "beta");
	assert_int_equal(d.h.addr.qpn, 0x12);
	assert_int_equal(d.h.addr.qkey, 0x1b1f5000);
	assert_int_equal(d.h.addr.mtu, IBV_MTU_1024);
	assert_int_equal(d.h.addr.max_message, 1 << 20);
	assert_int_equal(d.h.addr.boot, 0xb0075eed);
	assert_memory_equal(&d.h.addr.gid, &m.h.addr.gid, 16);
	assert_memory_equal(d.hello, m.hello, HELLO_WIRE_LEN);
}

/* The fixed layout: wire header, kind, padding, the hello at 4, zeros. */
static void test_layout(void **state)
{
	uint8_t dg[DG_LEN], boot[4] = {0xb0, 0x07, 0x5e, 0xed};
	const uint8_t *b = dg + WIRE_HDR_LEN;
	struct wire_hdr h;
	int i;

	dg_beta(dg);
	assert_int_equal(wire_hdr_decode(&h, dg, sizeof(dg)), 0);
	assert_int_equal(h.type, WIRE_ANN);
	assert_int_equal(wire_peek_type(dg, sizeof(dg)), WIRE_ANN);
	assert_int_equal(h.chan_len, 0);
	assert_int_equal(h.frag_idx, 0);
	assert_int_equal(h.frag_cnt, 1);
	assert_int_equal(h.total_len, ANN_WIRE_LEN);
	assert_int_equal(h.src, wire_node_id("beta"));
	assert_int_equal(b[0], ANN_ANNOUNCE);
	assert_int_equal(b[1] | b[2] | b[3], 0);
	assert_memory_equal(b + 4, "IBHH", 4);
	assert_memory_equal(b + 4 + 108, boot, 4); /* the hello's boot word */
	for (i = 4 + HELLO_WIRE_LEN; i < ANN_WIRE_LEN; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(wire_peek_type(dg, WIRE_HDR_LEN - 1), 0);
}

/* Decode dg with byte off changed to v: refused. */
static void refused_with(size_t off, uint8_t v)
{
	uint8_t dg[DG_LEN];
	struct ann_msg d;

	dg_beta(dg);
	dg[off] = v;
	assert_int_equal(ann_datagram_decode(&d, dg, sizeof(dg)), -EBADMSG);
}

/* Every field a stranger could get wrong, one at a time. */
static void test_malformed(void **state)
{
	const size_t b = WIRE_HDR_LEN, hello = b + 4;
	static const struct {
		size_t off;
		uint8_t v;
	} cases[] = {
		{4, 4},			      /* wire version */
		{5, WIRE_DATA},		      /* type */
		{5, 9},			      /* type */
		{6, 1},			      /* a channel */
		{19, 2},		      /* frag_cnt 2 */
		{16 + 1, 1},		      /* frag_idx 1 */
		{23, ANN_WIRE_LEN - 1},	      /* total_len */
		{8, 0x55},		      /* src: not beta's id */
		{WIRE_HDR_LEN, 0},	      /* kind 0 */
		{WIRE_HDR_LEN, ANN_KIND_MAX}, /* kind past the last */
		{WIRE_HDR_LEN + 2, 1},	      /* padding */
		{hello, 'X'},		      /* the hello's magic */
		{hello + 5, 9},		      /* its version */
		{hello + 6, 7},		      /* its delivery */
		{hello + 8, '.'},	      /* its name */
		{hello + 82, 0},	      /* its MTU */
		{hello + 100, 0x80},	      /* its flags */
		{b + 4 + HELLO_WIRE_LEN, 1},  /* an echo */
		{b + ANN_WIRE_LEN - 1, 1},    /* a proof */
	};
	uint8_t dg[DG_LEN + 1];
	struct ann_msg d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused_with(cases[i].off, cases[i].v);
	/* boot 0: an announce always has one */
	dg_beta(dg);
	memset(dg + hello + 108, 0, 4);
	assert_int_equal(ann_datagram_decode(&d, dg, DG_LEN), -EBADMSG);
	/* lengths: short, long, the bare header, nothing */
	dg_beta(dg);
	assert_int_equal(ann_datagram_decode(&d, dg, DG_LEN - 1), -EBADMSG);
	assert_int_equal(ann_datagram_decode(&d, dg, DG_LEN + 1), -EBADMSG);
	assert_int_equal(ann_datagram_decode(&d, dg, WIRE_HDR_LEN), -EBADMSG);
	assert_int_equal(ann_datagram_decode(&d, dg, 0), -EBADMSG);
	assert_int_equal(ann_msg_decode(&d, NULL, ANN_WIRE_LEN), -EBADMSG);
	/* the body alone decodes, as the codec's own entry */
	assert_int_equal(ann_msg_decode(&d, dg + WIRE_HDR_LEN, ANN_WIRE_LEN),
			 0);
}

/* Nobody announces another node's QP: QPN and GID, or LID, must match. */
static void test_from(void **state)
{
	union ibv_gid other;
	struct ann_msg m;

	msg_beta(&m);
	assert_int_equal(ann_msg_from(&m, 0x12, &m.h.addr.gid, 0), 0);
	assert_int_equal(ann_msg_from(&m, 0x13, &m.h.addr.gid, 0), -EPERM);
	other = m.h.addr.gid;
	other.raw[15] ^= 1;
	assert_int_equal(ann_msg_from(&m, 0x12, &other, 0), -EPERM);
	/* without a GRH (IB in one subnet): the LID */
	m.h.addr.lid = 7;
	assert_int_equal(ann_msg_from(&m, 0x12, NULL, 7), 0);
	assert_int_equal(ann_msg_from(&m, 0x12, NULL, 8), -EPERM);
	assert_int_equal(ann_msg_from(&m, 0x13, NULL, 7), -EPERM);
}

/*
 * An announce must come from where the config puts its node, when the
 * config gives a numeric addr and the GID is an IP address of its family
 * (RoCE): beta's GID is ::ffff:10.0.0.15, or 2001:db8::15 over IPv6.
 * Other GIDs and addrs given as names cannot be checked and pass.
 */
static void test_addr_fits(void **state)
{
	struct config_node n;
	struct sockaddr_in *sin = (struct sockaddr_in *)&n.addr_sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&n.addr_sa;
	struct ann_msg m;

	msg_beta(&m);
	memset(&n, 0, sizeof(n));
	sin->sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "10.0.0.15", &sin->sin_addr), 1);
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_YES);
	assert_int_equal(inet_pton(AF_INET, "10.0.0.16", &sin->sin_addr), 1);
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_NO);
	/* a GID that is no IPv4 address (InfiniBand's): not checked */
	m.h.addr.gid.raw[0] = 0xfe;
	m.h.addr.gid.raw[1] = 0x80;
	m.h.addr.gid.raw[10] = m.h.addr.gid.raw[11] = 0;
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_UNKNOWN);
	/* an IPv6 addr against a global IPv6 GID */
	memset(&n, 0, sizeof(n));
	sin6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::15", &sin6->sin6_addr),
			 1);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::15", m.h.addr.gid.raw),
			 1);
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_YES);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::16", m.h.addr.gid.raw),
			 1);
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_NO);
	/* addr a host name, not looked up yet */
	msg_beta(&m);
	n.addr_sa.ss_family = AF_UNSPEC;
	assert_int_equal(ann_addr_fits(&n, &m.h.addr), ANN_ADDR_UNKNOWN);
}

/*
 * S1: what the progress thread queues.  A name the config lacks, or a
 * node's announce from an address the config says is not its own (under
 * strict_source), never takes a place in the announce thread's inbox,
 * where a stranger's flood would keep the nodes' own out; the node's
 * own, an address nothing tells about, and strict_source = no pass.
 */
static void test_admit(void **state)
{
	static const char text[] = "[global]\n%s"
				   "[node alpha]\naddr = 10.0.0.14\n"
				   "[node beta]\naddr = 10.0.0.15\n"
				   "[node gamma]\naddr = gamma.example\n";
	char conf[256], err[CONFIG_ERR_MAX];
	struct config cfg;
	struct ann_msg m;

	snprintf(conf, sizeof(conf), text, "");
	assert_int_equal(
		config_load_string(conf, "t.ini", &cfg, err, sizeof(err)), 0);
	msg_beta(&m); /* from 10.0.0.15, beta's addr */
	assert_int_equal(ann_admit(&cfg, &m), 1);
	m.h.addr.gid.raw[15] = 99; /* a stranger at 10.0.0.99 */
	assert_int_equal(ann_admit(&cfg, &m), -EPERM);
	strcpy(m.h.name, "gamma"); /* a host name: looked up only once met */
	assert_int_equal(ann_admit(&cfg, &m), 2);
	strcpy(m.h.name, "delta");
	assert_int_equal(ann_admit(&cfg, &m), -ENOENT);
	config_free(&cfg);

	snprintf(conf, sizeof(conf), text, "strict_source = no\n");
	assert_int_equal(
		config_load_string(conf, "t.ini", &cfg, err, sizeof(err)), 0);
	msg_beta(&m);
	m.h.addr.gid.raw[15] = 99;
	assert_int_equal(ann_admit(&cfg, &m), 1);
	config_free(&cfg);
}

/* What is known of beta once installed from m. */
static void known_from(struct ann_known *k, const struct ann_msg *m)
{
	memset(k, 0, sizeof(*k));
	k->up = 1;
	k->boot = m->h.addr.boot;
	k->addr = m->h.addr;
	k->heard_ms = 1000;
}

/* Alive, new, or restarted: a new boot id, QPN, GID, LID, qkey or MTU. */
static void test_judge(void **state)
{
	struct ann_known k = {0};
	struct ann_msg m;
	struct hello h;

	msg_beta(&m);
	assert_int_equal(ann_judge(&k, &m.h), ANN_UP);
	known_from(&k, &m);
	assert_int_equal(ann_judge(&k, &m.h), ANN_SAME);
	h = m.h;
	h.addr.boot++;
	assert_int_equal(ann_judge(&k, &h), ANN_RESTART); /* same QPN */
	h = m.h;
	h.addr.qpn++;
	assert_int_equal(ann_judge(&k, &h), ANN_RESTART);
	h = m.h;
	h.addr.gid.raw[15]++;
	assert_int_equal(ann_judge(&k, &h), ANN_RESTART);
	h = m.h;
	h.addr.lid++;
	assert_int_equal(ann_judge(&k, &h), ANN_RESTART);
	h = m.h;
	h.addr.mtu = IBV_MTU_2048;
	assert_int_equal(ann_judge(&k, &h), ANN_RESTART);
	/* down again (silent): the same boot comes back up */
	k.up = 0;
	assert_int_equal(ann_judge(&k, &m.h), ANN_UP);
}

/* Down after peer_timeout of silence, not a millisecond before; our
 * own losses are not the node's silence, for one timeout more at most. */
static void test_silent(void **state)
{
	struct ann_known k;
	struct ann_msg m;

	msg_beta(&m);
	known_from(&k, &m);
	assert_false(ann_silent(&k, 1000, 3000, 0));
	assert_false(ann_silent(&k, 3999, 3000, 0));
	assert_true(ann_silent(&k, 4000, 3000, 0));
	assert_true(ann_silent(&k, 100000, 3000, 0));
	assert_int_equal(ann_silent_at(&k, 3000, 0), 4000);
	/* we lost announces at 2500 (our inbox was full): from then on */
	assert_false(ann_silent(&k, 4000, 3000, 2500));
	assert_false(ann_silent(&k, 5499, 3000, 2500));
	assert_true(ann_silent(&k, 5500, 3000, 2500));
	assert_int_equal(ann_silent_at(&k, 3000, 2500), 5500);
	/* a loss before it was last heard changes nothing */
	assert_true(ann_silent(&k, 4000, 3000, 900));
	/* losses buy one timeout at most: a flood of our inbox (heard at
	 * 1000, losing ever since) still takes it down at 1000 + 2 * 3000 */
	assert_int_equal(ann_silent_at(&k, 3000, 99000), 7000);
	assert_false(ann_silent(&k, 6999, 3000, 99000));
	assert_true(ann_silent(&k, 7000, 3000, 99000));
	k.up = 0; /* down already: nothing more to say */
	assert_false(ann_silent(&k, 100000, 3000, 0));
}

/* The timer: interval +-50 %, the whole range reachable. */
static void test_next(void **state)
{
	uint32_t r;

	assert_int_equal(ann_next(1000, 3000, 0), 1000 + 1500);
	assert_int_equal(ann_next(1000, 3000, 3000), 1000 + 4500);
	assert_int_equal(ann_next(1000, 3000, 3001), 1000 + 1500);
	for (r = 0; r < 100000; r += 7) {
		int64_t t = ann_next(0, 3000, r * 2654435761u);

		assert_in_range(t, 1500, 4500);
	}
	assert_in_range(ann_next(0, 10, 0xffffffffu), 5, 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_from),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_silent),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_addr_fits),
		cmocka_unit_test(test_admit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
