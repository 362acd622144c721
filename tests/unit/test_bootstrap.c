/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap hello: a fixed big-endian layout that round-trips, and a
 * decoder that refuses bad magic, version, length, name and fields; and the
 * authentication proof: a known answer (from `openssl dgst -sha256 -hmac`),
 * and refusals for a wrong secret, a swapped label, another nonce or hello.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "unit.h"
#include "bootstrap.h"

/* A hello as the bed's alpha would send it. */
static void hello_alpha(struct hello *h)
{
	memset(h, 0, sizeof(*h));
	h->version = HELLO_VERSION;
	strcpy(h->name, "alpha");
	h->delivery = DELIVERY_DATAGRAM;
	h->addr.qpn = 0x000011;
	h->addr.qkey = 0x1b1f5000;
	h->addr.lid = 0;
	h->addr.mtu = IBV_MTU_1024;
	h->addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	h->addr.gid.raw[10] = h->addr.gid.raw[11] = 0xff;
	h->addr.gid.raw[12] = 10;
	h->addr.gid.raw[15] = 15;
}

/* Encode then decode gives back every field. */
static void test_roundtrip(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello h, d;

	hello_alpha(&h);
	h.addr.lid = 0x1234;
	h.delivery = DELIVERY_RELIABLE;
	h.addr.max_message = 0x000ff000;
	h.addr.boot = 0xb0075eed;
	assert_int_equal(hello_encode(&h, buf), HELLO_WIRE_LEN);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(d.addr.boot, 0xb0075eed); /* big-endian at 108 */
	assert_int_equal(buf[108], 0xb0);
	assert_int_equal(buf[111], 0xed);
	assert_int_equal(d.version, HELLO_VERSION);
	assert_string_equal(d.name, "alpha");
	assert_int_equal(d.delivery, DELIVERY_RELIABLE);
	assert_int_equal(d.addr.qpn, 0x11);
	assert_int_equal(d.addr.qkey, 0x1b1f5000);
	assert_int_equal(d.addr.lid, 0x1234);
	assert_int_equal(d.addr.mtu, IBV_MTU_1024);
	assert_int_equal(d.addr.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_memory_equal(&d.addr.gid, &h.addr.gid, sizeof(h.addr.gid));
	assert_int_equal(d.addr.max_message, 0x000ff000);
}

/* The layout is fixed and big-endian, whatever the host. */
static void test_layout(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN], want_qpn[4] = {0, 0, 0, 0x11};
	struct hello h;
	char name[CONFIG_NAME_MAX];
	int i;

	hello_alpha(&h);
	memset(buf, 0xee, sizeof(buf));
	hello_encode(&h, buf);
	assert_memory_equal(buf, "IBHH", 4);
	assert_int_equal(buf[4], 0);
	assert_int_equal(buf[5], HELLO_VERSION);
	memset(name, 0, sizeof(name));
	strcpy(name, "alpha");
	assert_memory_equal(buf + 8, name, sizeof(name)); /* NUL-padded */
	assert_memory_equal(buf + 72, want_qpn, 4);
	assert_int_equal(buf[82], IBV_MTU_1024);
	assert_memory_equal(buf + 84, h.addr.gid.raw, 16);
	for (i = 100; i < HELLO_WIRE_LEN; i++)
		assert_int_equal(buf[i], 0); /* flags, max_message, boot */
	/* max_message: big-endian at 104 */
	h.addr.max_message = 0x01020304;
	hello_encode(&h, buf);
	assert_int_equal(buf[104], 1);
	assert_int_equal(buf[107], 4);
	assert_int_equal(buf[108], 0);
}

/* A longest (63-byte) name survives. */
static void test_long_name(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello h, d;

	hello_alpha(&h);
	memset(h.name, 'n', CONFIG_NAME_MAX - 1);
	h.name[CONFIG_NAME_MAX - 1] = '\0';
	hello_encode(&h, buf);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_string_equal(d.name, h.name);
}

/* Encode alpha into buf for the negative cases. */
static void good(uint8_t *buf)
{
	struct hello h;

	hello_alpha(&h);
	hello_encode(&h, buf);
}

static void test_bad_magic(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[0] ^= 0x20;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

static void test_bad_version(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[5] = HELLO_VERSION + 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EPROTO);
	buf[4] = 1;
	buf[5] = HELLO_VERSION;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EPROTO);
}

static void test_truncated(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	assert_int_equal(hello_decode(&d, buf, HELLO_WIRE_LEN - 1), -EBADMSG);
	assert_int_equal(hello_decode(&d, buf, 0), -EBADMSG);
	assert_int_equal(hello_decode(&d, NULL, HELLO_WIRE_LEN), -EBADMSG);
}

static void test_unterminated_name(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	memset(buf + 8, 'x', CONFIG_NAME_MAX);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

/* Names that config would refuse are refused on the wire too. */
static void test_bad_names(void **state)
{
	static const char *const bad[] = {
		"",	   "a/b",     ".hidden", "be\nta", "x\rpeer gamma up",
		"\x1b]0;", "del\x7f",
	};
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		good(buf);
		memset(buf + 8, 0, CONFIG_NAME_MAX);
		memcpy(buf + 8, bad[i], strlen(bad[i]));
		assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	}
}

/* Fields out of range: delivery, QPN (0 or over 24 bits), MTU. */
static void test_bad_fields(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[6] = 7;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	memset(buf + 72, 0, 4);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[72] = 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[82] = 0;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[82] = IBV_MTU_4096 + 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

/* The flags word and nonce at 100 and 112; no nonce on the wire without AUTH.
 */
static void test_auth_fields(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN], want_flags[4] = {0, 0, 0, 1};
	struct hello h, d;
	int i;

	hello_alpha(&h);
	h.flags = HELLO_F_AUTH;
	for (i = 0; i < HELLO_NONCE_LEN; i++)
		h.nonce[i] = 0xa0 + i;
	assert_int_equal(hello_encode(&h, buf), HELLO_WIRE_LEN);
	assert_memory_equal(buf + 100, want_flags, 4);
	for (i = 104; i < 112; i++)
		assert_int_equal(buf[i], 0); /* reserved */
	assert_memory_equal(buf + 112, h.nonce, HELLO_NONCE_LEN);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(d.flags, HELLO_F_AUTH);
	assert_memory_equal(d.nonce, h.nonce, HELLO_NONCE_LEN);

	/* Without the flag, a stale nonce is neither sent nor read. */
	h.flags = 0;
	hello_encode(&h, buf);
	for (i = 112; i < HELLO_WIRE_LEN; i++)
		assert_int_equal(buf[i], 0);
	memset(buf + 112, 0x5a, HELLO_NONCE_LEN);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(d.flags, 0);
	for (i = 0; i < HELLO_NONCE_LEN; i++)
		assert_int_equal(d.nonce[i], 0);

	/* Unknown flag bits are refused. */
	buf[100] = 0x80;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

/* Fixed inputs of the known-answer tests. */
static const char kat_secret[] = "hunter2";
static uint8_t kat_nonce[HELLO_NONCE_LEN], kat_hd[HELLO_WIRE_LEN],
	kat_hl[HELLO_WIRE_LEN];

/* nonce a0..af, hello_d 00..7f, hello_l ff..80. */
static void kat_init(void)
{
	int i;

	for (i = 0; i < HELLO_NONCE_LEN; i++)
		kat_nonce[i] = 0xa0 + i;
	for (i = 0; i < HELLO_WIRE_LEN; i++) {
		kat_hd[i] = i;
		kat_hl[i] = 0xff - i;
	}
}

/*
 * HMAC-SHA256("hunter2", label || nonce || hello_d || hello_l), as
 * `openssl dgst -sha256 -hmac hunter2` prints it for those bytes.
 */
static const uint8_t kat_d[BS_PROOF_LEN] = {
	0x68, 0xfc, 0x5e, 0x4f, 0x5c, 0x16, 0x90, 0x3a, 0xb8, 0x51, 0xa1,
	0x1b, 0x2f, 0xb2, 0xd4, 0xfd, 0x69, 0x07, 0x91, 0x3e, 0x91, 0x1f,
	0xed, 0x65, 0xec, 0x57, 0x28, 0xe4, 0xd6, 0xf0, 0xaa, 0x86,
};
static const uint8_t kat_l[BS_PROOF_LEN] = {
	0x88, 0xe4, 0x57, 0xb5, 0x4c, 0xfb, 0x9f, 0xb7, 0x04, 0xaf, 0x51,
	0x63, 0xa4, 0xfe, 0x0a, 0xbf, 0x1b, 0x3b, 0xec, 0x93, 0x86, 0xe7,
	0x76, 0xdf, 0xee, 0x4b, 0xd6, 0x32, 0x61, 0x04, 0x3f, 0xe1,
};

/* Both directions match the precomputed answers and verify. */
static void test_proof_known_answer(void **state)
{
	uint8_t p[BS_PROOF_LEN];

	kat_init();
	assert_int_equal(bootstrap_proof(kat_secret, strlen(kat_secret),
					 BS_ROLE_DIALER, kat_nonce, kat_hd,
					 kat_hl, p),
			 0);
	assert_memory_equal(p, kat_d, BS_PROOF_LEN);
	assert_int_equal(bootstrap_proof(kat_secret, strlen(kat_secret),
					 BS_ROLE_LISTENER, kat_nonce, kat_hd,
					 kat_hl, p),
			 0);
	assert_memory_equal(p, kat_l, BS_PROOF_LEN);
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_DIALER, kat_nonce,
					       kat_hd, kat_hl, kat_d),
			 0);
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_LISTENER, kat_nonce,
					       kat_hd, kat_hl, kat_l),
			 0);
}

/* A different secret (even one byte longer or shorter) fails. */
static void test_proof_wrong_secret(void **state)
{
	static const char *const wrong[] = {"hunter3", "hunter", "hunter22"};
	size_t i;

	kat_init();
	for (i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++)
		assert_int_equal(
			bootstrap_proof_check(wrong[i], strlen(wrong[i]),
					      BS_ROLE_DIALER, kat_nonce, kat_hd,
					      kat_hl, kat_d),
			-EACCES);
}

/* A reflected proof (the other direction's label) fails both ways. */
static void test_proof_swapped_label(void **state)
{
	kat_init();
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_LISTENER, kat_nonce,
					       kat_hd, kat_hl, kat_d),
			 -EACCES);
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_DIALER, kat_nonce,
					       kat_hd, kat_hl, kat_l),
			 -EACCES);
}

/* A replay against a fresh nonce, swapped or altered hellos: all fail. */
static void test_proof_replay(void **state)
{
	uint8_t n2[HELLO_NONCE_LEN], h2[HELLO_WIRE_LEN];
	uint8_t p[BS_PROOF_LEN];

	kat_init();
	memcpy(n2, kat_nonce, sizeof(n2));
	n2[0] ^= 1;
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_DIALER, n2, kat_hd,
					       kat_hl, kat_d),
			 -EACCES);
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_DIALER, kat_nonce,
					       kat_hl, kat_hd, kat_d),
			 -EACCES);
	memcpy(h2, kat_hd, sizeof(h2));
	h2[72 + 3] ^= 1; /* another QPN */
	assert_int_equal(bootstrap_proof_check(kat_secret, strlen(kat_secret),
					       BS_ROLE_DIALER, kat_nonce, h2,
					       kat_hl, kat_d),
			 -EACCES);
	/* No secret, no proof. */
	assert_int_equal(bootstrap_proof("", 0, BS_ROLE_DIALER, kat_nonce,
					 kat_hd, kat_hl, p),
			 -EINVAL);
}

/* A longer buffer is fine: the hello is its first HELLO_WIRE_LEN bytes. */
static void test_longer_buffer(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN + 16];
	struct hello d;

	memset(buf, 0x55, sizeof(buf));
	good(buf);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_string_equal(d.name, "alpha");
}

/* hello_make: what the transport says, and the local node's name,
 * delivery and max_message; the transport's boot id and no nonce. */
static void test_make(void **state)
{
	struct config_node nodes[2];
	struct config cfg;
	struct tp_info ti;
	struct hello h;

	memset(nodes, 0, sizeof(nodes));
	memset(&cfg, 0, sizeof(cfg));
	memset(&ti, 0, sizeof(ti));
	nodes[0].name = "alpha";
	nodes[1].name = "beta";
	nodes[1].delivery = DELIVERY_RELIABLE;
	cfg.nodes = nodes;
	cfg.nnodes = 2;
	cfg.local = 1;
	cfg.max_message = 1 << 20;
	ti.qpn = 0x12;
	ti.qkey = 0x1b1f5000;
	ti.lid = 7;
	ti.mtu = IBV_MTU_2048;
	ti.link_layer = IBV_LINK_LAYER_INFINIBAND;
	ti.gid.raw[15] = 9;
	ti.boot = 0xb0075eed;
	memset(&h, 0xee, sizeof(h));
	hello_make(&h, &cfg, &ti);
	assert_int_equal(h.version, HELLO_VERSION);
	assert_string_equal(h.name, "beta");
	assert_int_equal(h.delivery, DELIVERY_RELIABLE);
	assert_int_equal(h.addr.qpn, 0x12);
	assert_int_equal(h.addr.qkey, 0x1b1f5000);
	assert_int_equal(h.addr.lid, 7);
	assert_int_equal(h.addr.mtu, IBV_MTU_2048);
	assert_int_equal(h.addr.link_layer, IBV_LINK_LAYER_INFINIBAND);
	assert_int_equal(h.addr.gid.raw[15], 9);
	assert_int_equal(h.addr.max_message, 1 << 20);
	assert_int_equal(h.flags, 0);
	assert_int_equal(h.addr.boot, 0xb0075eed);
}

/* The one rule of both bootstraps, in config words: the delivery the
 * config gives the node, and one qkey everywhere. */
static void test_refusal(void **state)
{
	char buf[PEER_ERROR_MAX];
	struct hello h;

	hello_alpha(&h);
	assert_null(hello_refusal(&h, DELIVERY_DATAGRAM, 0x1b1f5000, buf,
				  sizeof(buf)));
	h.delivery = DELIVERY_RELIABLE;
	assert_string_equal(hello_refusal(&h, DELIVERY_DATAGRAM, 0x1b1f5000,
					  buf, sizeof(buf)),
			    "it has delivery = reliable, this node's config "
			    "says datagram (man ibfs.conf)");
	hello_alpha(&h);
	h.addr.qkey = 0x1b1f5001;
	assert_string_equal(hello_refusal(&h, DELIVERY_DATAGRAM, 0x1b1f5000,
					  buf, sizeof(buf)),
			    "it has qkey = 0x1b1f5001, this node's config "
			    "says 0x1b1f5000 (one qkey on every node: man "
			    "ibfs.conf)");
	/* it fits whole in last_error, with the widest qkeys */
	h.addr.qkey = 0xffffffff;
	hello_refusal(&h, DELIVERY_DATAGRAM, 0x80000000, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf) - 1);
	assert_non_null(strstr(buf, "0x80000000 (one qkey"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unterminated_name),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_longer_buffer),
		cmocka_unit_test(test_auth_fields),
		cmocka_unit_test(test_proof_known_answer),
		cmocka_unit_test(test_proof_wrong_secret),
		cmocka_unit_test(test_proof_swapped_label),
		cmocka_unit_test(test_proof_replay),
		cmocka_unit_test(test_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
