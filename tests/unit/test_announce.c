/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast's pure parts (announce.h): the announce datagram
 * round-trips around the hello's codec and refuses every malformed field;
 * an announce must name the QP and GID (or LID) it came from; what an
 * announce means for its node (alive, new, restarted); QUERY and MEET
 * round-trip, a query naming its target's wire id; what each kind makes
 * the thread do with a node known, wanted or up (hearing is not
 * installing); the start-up announces and the jitter of their timer; an
 * announce from
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
	k->known = 1;
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
	/* down again (its probe failed): the same boot comes back up */
	k.up = 0;
	assert_int_equal(ann_judge(&k, &m.h), ANN_UP);
}

/* QUERY carries its target's wire id (0: every node) and nothing else
 * beside the hello; MEET nothing but the hello; both without a nonce. */
static void test_query_meet(void **state)
{
	uint8_t dg[WIRE_HDR_LEN + ANN_MSG_MAX];
	struct ann_msg m, d;
	size_t n;

	msg_beta(&m);
	m.kind = ANN_QUERY;
	m.target = wire_node_id("alpha");
	hello_encode(&m.h, m.hello);
	n = ann_datagram_build(dg, wire_node_id("beta"), &m);
	assert_int_equal(n, DG_LEN);
	assert_int_equal(ann_datagram_decode(&d, dg, n), 0);
	assert_int_equal(d.kind, ANN_QUERY);
	assert_int_equal(d.target, wire_node_id("alpha"));
	assert_int_equal(util_get32(dg + WIRE_HDR_LEN + 132), d.target);
	/* a byte past the target's 4 is refused, as is any proof */
	dg[WIRE_HDR_LEN + 136] = 1;
	assert_int_equal(ann_datagram_decode(&d, dg, n), -EBADMSG);
	dg[WIRE_HDR_LEN + 136] = 0;
	dg[WIRE_HDR_LEN + 148] = 1;
	assert_int_equal(ann_datagram_decode(&d, dg, n), -EBADMSG);
	/* every node */
	m.target = 0;
	n = ann_datagram_build(dg, wire_node_id("beta"), &m);
	assert_int_equal(ann_datagram_decode(&d, dg, n), 0);
	assert_int_equal(d.target, 0);

	m.kind = ANN_MEET;
	n = ann_datagram_build(dg, wire_node_id("beta"), &m);
	assert_int_equal(ann_datagram_decode(&d, dg, n), 0);
	assert_int_equal(d.kind, ANN_MEET);
	assert_int_equal(d.target, 0);
	/* a MEET's echo is zero: a target there is refused */
	util_put32(dg + WIRE_HDR_LEN + 132, 7);
	assert_int_equal(ann_datagram_decode(&d, dg, n), -EBADMSG);
	/* the kind after MEET is none */
	util_put32(dg + WIRE_HDR_LEN + 132, 0);
	dg[WIRE_HDR_LEN] = ANN_KIND_MAX;
	assert_int_equal(ann_datagram_decode(&d, dg, n), -EBADMSG);
}

/* Hearing is not installing: what each kind does with a node not known,
 * known, wanted, up, or up and restarted (announce.h's table). */
static void test_decide(void **state)
{
	uint32_t me = wire_node_id("alpha"), other = wire_node_id("gamma");
	struct ann_known k = {0};
	struct ann_msg m, r;

	msg_beta(&m);
	r = m;
	r.h.addr.boot++; /* beta restarted */
	/* a group announce: remembered, unless in use here */
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_KNOW);
	assert_int_equal(ann_decide(&k, 1, &m, me), ANN_DO_INSTALL);
	known_from(&k, &m);
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_KNOW);
	assert_int_equal(ann_decide(&k, 1, &m, me), ANN_DO_KNOW);
	assert_int_equal(ann_decide(&k, 0, &r, me), ANN_DO_INSTALL);
	/* a MEET: it installed us; taken silently unless up as it says */
	m.kind = r.kind = ANN_MEET;
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_KNOW);
	assert_int_equal(ann_decide(&k, 0, &r, me), ANN_DO_TAKE);
	k.up = 0;
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_TAKE);
	/* a query for another node: its asker remembered, nothing sent */
	m.kind = r.kind = ANN_QUERY;
	m.target = r.target = other;
	assert_int_equal(ann_decide(&k, 1, &m, me), ANN_DO_KNOW);
	/* for us: installed and met, or, up already, met */
	m.target = r.target = me;
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_INSTALL);
	known_from(&k, &m);
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_MEET);
	assert_int_equal(ann_decide(&k, 0, &r, me), ANN_DO_INSTALL);
	/* for every node: answered only where the asker is not up as it
	 * says, so a warm cluster does not answer a cold node's query */
	m.target = r.target = 0;
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_KNOW);
	assert_int_equal(ann_decide(&k, 0, &r, me), ANN_DO_INSTALL);
	k.up = 0;
	assert_int_equal(ann_decide(&k, 0, &m, me), ANN_DO_INSTALL);
}

/* A wanted node: installed from what was heard of it (no datagram to
 * the group), else asked for, first perhaps with every other wanted,
 * then alone. */
static void test_seek_step(void **state)
{
	struct ann_known k = {0};
	struct ann_msg m;

	assert_int_equal(ann_seek_step(&k, 0), ANN_STEP_ANY);
	assert_int_equal(ann_seek_step(&k, 1), ANN_STEP_QUERY);
	msg_beta(&m);
	known_from(&k, &m);
	k.up = 0; /* heard, not installed */
	assert_int_equal(ann_seek_step(&k, 0), ANN_STEP_INSTALL);
	assert_int_equal(ann_seek_step(&k, 1), ANN_STEP_INSTALL);
	k.up = 1; /* installed, yet not up: its probe failed; ask for it */
	assert_int_equal(ann_seek_step(&k, 0), ANN_STEP_ANY);
	assert_int_equal(ann_seek_step(&k, 1), ANN_STEP_QUERY);
}

/* Nodes asked for at once go in one query for every node only when they
 * are a good part of the config (the first write to all/), by name when
 * a few of a large cluster (an all-to-all among 32 of 10,000), so that
 * those few do not make every node install the asker. */
static void test_query_all(void **state)
{
	assert_false(ann_query_all(0, 4));
	assert_false(ann_query_all(1, 4)); /* one: by name */
	assert_true(ann_query_all(2, 4));
	assert_true(ann_query_all(3, 4));
	assert_false(ann_query_all(31, 10000));
	assert_false(ann_query_all(2499, 10000));
	assert_true(ann_query_all(2500, 10000));
	assert_true(ann_query_all(9999, 10000));
}

/* ANN_STARTUP_MAX announces at start: ~interval/3 and ~interval after
 * the first (+-50 % each), then never. */
static void test_startup(void **state)
{
	uint32_t r;

	assert_int_equal(ann_startup_next(0, 1, 3000, 0), 500);
	assert_int_equal(ann_startup_next(0, 2, 3000, 0), 1000);
	for (r = 0; r < 100000; r += 7) {
		assert_in_range(ann_startup_next(0, 1, 3000, r * 2654435761u),
				500, 1500);
		assert_in_range(ann_startup_next(0, 2, 3000, r * 2654435761u),
				1000, 3000);
	}
	assert_int_equal(ann_startup_next(0, ANN_STARTUP_MAX, 3000, 0),
			 INT64_MAX);
	assert_int_equal(ann_startup_next(0, ANN_STARTUP_MAX + 1, 3000, 0),
			 INT64_MAX);
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
		cmocka_unit_test(test_query_meet),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_seek_step),
		cmocka_unit_test(test_query_all),
		cmocka_unit_test(test_startup),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_addr_fits),
		cmocka_unit_test(test_admit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
