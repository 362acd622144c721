/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap's certificate step (issue 31, bootstrap_cert.c): what one
 * side makes for a session the other checks, for the node its hello
 * names, over both nonces, both boot ids and the sender's QPN, GID and
 * LID.  beta's own step passes; gamma's certificate sent as beta, another
 * CA's beta, an expired beta, and a step whose QPN was changed after it
 * was signed are refused, each with its reason in config words (what the
 * peer's last_error says).  The certificates are docs/certificates.md's,
 * made by tests/unit/mkcerts.sh as test_cert makes them.  And the
 * daemon's own files at start: a key others may read, or another node's
 * certificate, is a config error at its key's FILE:LINE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "unit.h"
#include "certs_harness.h"
#include "bootstrap.h"
#include "bootstrap_session.h"
#include "cert.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

static char why[CERT_WHY_MAX];

static const char *at(const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, rel);
	return buf;
}

/* node's certificate of cadir, under ca1's CA. */
static struct cert *open_node(const char *cadir, const char *node)
{
	char ca[96], cert[96], key[96], rel[32];
	struct cert_files f = {at("ca1/ca.pem", ca, sizeof(ca)), cert, key,
			       NULL};
	struct cert *c = NULL;

	if (strcmp(cadir, "ca1"))
		f.ca = at("ca2/ca.pem", ca, sizeof(ca));
	snprintf(rel, sizeof(rel), "%s/%s.pem", cadir, node);
	at(rel, cert, sizeof(cert));
	snprintf(rel, sizeof(rel), "%s/%s.key", cadir, node);
	at(rel, key, sizeof(key));
	if (cert_open(&c, &f, node, why, sizeof(why)))
		fail_msg("cert_open %s/%s: %s", cadir, node, why);
	return c;
}

/* One side of a session: its bootstrap (our hello named name) and its
 * session (the other side's hello in h). */
struct side {
	struct bootstrap b;
	struct bs_conn c;
	uint8_t buf[2][BS_MSG_MAX]; /* c's, as bs_conn_new gives them */
};

static void side_init(struct side *s, struct cert *cert, const char *name,
		      uint32_t qpn, uint8_t nonce)
{
	memset(s, 0, sizeof(*s));
	s->c.tx = s->buf[0];
	s->c.rx = s->buf[1];
	s->b.cert = cert;
	s->b.secret = "";
	s->b.me.version = HELLO_VERSION;
	snprintf(s->b.me.name, sizeof(s->b.me.name), "%s", name);
	s->b.me.addr.qpn = qpn;
	s->b.me.addr.boot = 1000 + qpn;
	s->b.me.addr.lid = 7;
	s->b.me.addr.gid.raw[15] = (uint8_t)qpn;
	s->b.me.flags = HELLO_F_CERT;
	memset(s->c.nonce, nonce, sizeof(s->c.nonce));
}

/* Each side's hello (with its nonce) as the other received it. */
static void meet(struct side *a, struct side *b)
{
	a->c.h = b->b.me;
	memcpy(a->c.h.nonce, b->c.nonce, HELLO_NONCE_LEN);
	b->c.h = a->b.me;
	memcpy(b->c.h.nonce, a->c.nonce, HELLO_NONCE_LEN);
}

/* from's step, as to reaches its end: 0 or -EACCES with why. */
static int deliver(struct side *from, struct side *to)
{
	size_t len = 0;

	assert_int_equal(bs_cert_make(&from->b, &from->c, to->c.rx, &len), 0);
	to->c.rxlen = len;
	why[0] = '\0';
	return bs_cert_check(&to->b, &to->c, why, sizeof(why));
}

static struct side alpha, beta;

/* beta, as itself: accepted both ways, and the head says how much
 * follows it. */
static void t_own(void **state)
{
	struct cert *ca = open_node("ca1", "alpha"),
		    *cb = open_node("ca1", "beta");

	side_init(&alpha, ca, "alpha", 0x11, 0xa1);
	side_init(&beta, cb, "beta", 0x22, 0xb2);
	meet(&alpha, &beta);
	assert_int_equal(deliver(&beta, &alpha), 0);
	assert_int_equal(deliver(&alpha, &beta), 0);
	/* what bs_check_proof reads first: the head alone */
	alpha.c.rxwant = bs_proof_want(&alpha.b);
	assert_int_equal(alpha.c.rxwant, BS_CERT_HEAD);
	assert_int_equal(bs_cert_more(&alpha.b, &alpha.c), 1);
	assert_int_equal(alpha.c.rxwant, alpha.c.rxlen);
	assert_int_equal(bs_cert_more(&alpha.b, &alpha.c), 0);
	cert_close(ca);
	cert_close(cb);
}

/* A step made for another session (a QPN other than the hello's, or the
 * other side's nonce not the one it answers) does not verify. */
static void t_replayed(void **state)
{
	struct cert *ca = open_node("ca1", "alpha"),
		    *cb = open_node("ca1", "beta");
	size_t len = 0;

	side_init(&alpha, ca, "alpha", 0x11, 0xa1);
	side_init(&beta, cb, "beta", 0x22, 0xb2);
	meet(&alpha, &beta);
	assert_int_equal(bs_cert_make(&beta.b, &beta.c, alpha.c.rx, &len), 0);
	alpha.c.rxlen = len;
	alpha.c.h.addr.qpn = 0x23; /* beta's hello said another QPN */
	assert_int_equal(bs_cert_check(&alpha.b, &alpha.c, why, sizeof(why)),
			 -EACCES);
	assert_string_equal(why, "signature does not verify");
	alpha.c.h.addr.qpn = 0x22;
	alpha.c.nonce[0] ^= 1; /* alpha's challenge in a later session */
	assert_int_equal(bs_cert_check(&alpha.b, &alpha.c, why, sizeof(why)),
			 -EACCES);
	assert_string_equal(why, "signature does not verify");
	cert_close(ca);
	cert_close(cb);
}

/* gamma, holding its own certificate and key, says hello as beta. */
static void t_gamma_as_beta(void **state)
{
	struct cert *ca = open_node("ca1", "alpha"),
		    *cg = open_node("ca1", "gamma");
	struct side gamma;

	side_init(&alpha, ca, "alpha", 0x11, 0xa1);
	side_init(&gamma, cg, "beta", 0x33, 0xc3);
	meet(&alpha, &gamma);
	assert_int_equal(deliver(&gamma, &alpha), -EACCES);
	assert_string_equal(why, "certificate names gamma, not beta");
	cert_close(ca);
	cert_close(cg);
}

/* beta's certificate from another CA. */
static void t_other_ca(void **state)
{
	struct cert *ca = open_node("ca1", "alpha"),
		    *cb = open_node("ca2", "beta");

	side_init(&alpha, ca, "alpha", 0x11, 0xa1);
	side_init(&beta, cb, "beta", 0x22, 0xb2);
	meet(&alpha, &beta);
	assert_int_equal(deliver(&beta, &alpha), -EACCES);
	assert_string_equal(why, "not signed by the cluster CA");
	cert_close(ca);
	cert_close(cb);
}

/* beta's expired certificate (its key is beta's): signed, but refused. */
static void t_expired(void **state)
{
	struct cert *ca = open_node("ca1", "alpha"),
		    *cb = open_node("ca1", "beta");
	uint8_t payload[CERT_PAYLOAD_MAX], sig[CERT_SIG_MAX], der[CERT_DER_MAX];
	uint8_t *p = der;
	struct hello me;
	char path[96];
	size_t siglen;
	FILE *f;
	X509 *x;
	int n, derlen;

	side_init(&alpha, ca, "alpha", 0x11, 0xa1);
	side_init(&beta, cb, "beta", 0x22, 0xb2);
	meet(&alpha, &beta);
	f = fopen(at("ca1/expired.pem", path, sizeof(path)), "r");
	assert_non_null(f);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	derlen = i2d_X509(x, &p);
	X509_free(x);
	me = beta.b.me;
	memcpy(me.nonce, beta.c.nonce, HELLO_NONCE_LEN);
	n = hello_cert_payload(&me, &beta.c.h, payload);
	assert_true(n > 0);
	assert_int_equal(cert_sign(cb, payload, (size_t)n, sig, &siglen), 0);
	alpha.c.rxlen =
		bs_cert_encode(alpha.c.rx, der, (size_t)derlen, sig, siglen);
	assert_int_equal(bs_cert_check(&alpha.b, &alpha.c, why, sizeof(why)),
			 -EACCES);
	assert_string_equal(why, "certificate expired 2025-11-30");
	cert_close(ca);
	cert_close(cb);
}

/* A head that announces nothing, or too much, is malformed. */
static void t_head(void **state)
{
	uint8_t h[BS_CERT_HEAD] = {0, 0, 64, 0};
	size_t d, s;

	assert_int_equal(bs_cert_head(h, &d, &s), -EBADMSG);
	h[0] = (CERT_DER_MAX + 1) >> 8;
	h[1] = (CERT_DER_MAX + 1) & 0xff;
	assert_int_equal(bs_cert_head(h, &d, &s), -EBADMSG);
	h[0] = 1;
	h[1] = 0;
	h[2] = CERT_SIG_MAX + 1;
	assert_int_equal(bs_cert_head(h, &d, &s), -EBADMSG);
	h[2] = CERT_SIG_MAX;
	assert_int_equal(bs_cert_head(h, &d, &s), 0);
	assert_int_equal(d, 256);
	assert_int_equal(s, CERT_SIG_MAX);
}

/* A hello that says it brings a certificate keeps its nonce. */
static void t_hello_flag(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello h, d;

	memset(&h, 0, sizeof(h));
	h.version = HELLO_VERSION;
	snprintf(h.name, sizeof(h.name), "beta");
	h.delivery = DELIVERY_DATAGRAM;
	h.addr.qpn = 0x22;
	h.addr.mtu = IBV_MTU_1024;
	h.flags = HELLO_F_CERT;
	memset(h.nonce, 0x5a, sizeof(h.nonce));
	hello_encode(&h, buf);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(d.flags, HELLO_F_CERT);
	assert_memory_equal(d.nonce, h.nonce, HELLO_NONCE_LEN);
}

/* The daemon's own files at start (config_cert_open): good ones open;
 * a key group or others may read, or gamma's certificate for beta, is a
 * config error at the line of its key, as exit 2 says it. */
static void t_config_cert_open(void **state)
{
	char text[1024], err[CONFIG_ERR_MAX], key[96];
	struct config cfg;
	struct cert *c;

	snprintf(text, sizeof(text),
		 "[global]\nca = %s/ca1/ca.pem\ncert = %s/ca1/%%n.pem\n"
		 "key = %s/ca1/%%n.key\n"
		 "[node alpha]\naddr = 10.0.2.15\nbootstrap = 10.0.2.15:1\n"
		 "[node beta]\naddr = 10.0.2.15\nbootstrap = 10.0.2.15:2\n",
		 dir, dir, dir);
	assert_int_equal(
		config_load_string(text, "t.ini", &cfg, err, sizeof(err)), 0);
	assert_int_equal(config_select_local(&cfg, "alpha", err, sizeof(err)),
			 0);
	assert_int_equal(config_cert_open(&cfg, &c, err, sizeof(err)), 0);
	assert_non_null(c);
	cert_close(c);
	/* alpha's key readable by others: refused at key's line */
	snprintf(key, sizeof(key), "%s/ca1/alpha.key", dir);
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(config_cert_open(&cfg, &c, err, sizeof(err)), -EPERM);
	assert_null(c);
	assert_non_null(strstr(err, "t.ini:4: key "));
	assert_non_null(strstr(err, "mode 0644: group or others may read it"));
	assert_int_equal(chmod(key, 0600), 0);
	/* beta's name with gamma's files: refused at cert's line */
	config_free(&cfg);
	snprintf(text, sizeof(text),
		 "[global]\nca = %s/ca1/ca.pem\ncert = %s/ca1/gamma.pem\n"
		 "key = %s/ca1/gamma.key\n"
		 "[node beta]\naddr = 10.0.2.15\n",
		 dir, dir, dir);
	assert_int_equal(
		config_load_string(text, "t.ini", &cfg, err, sizeof(err)), 0);
	assert_int_equal(config_select_local(&cfg, "beta", err, sizeof(err)),
			 0);
	assert_int_equal(config_cert_open(&cfg, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.ini:3: cert "));
	assert_non_null(strstr(err, "certificate names gamma, not beta"));
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_own),
		cmocka_unit_test(t_replayed),
		cmocka_unit_test(t_gamma_as_beta),
		cmocka_unit_test(t_other_ca),
		cmocka_unit_test(t_expired),
		cmocka_unit_test(t_head),
		cmocka_unit_test(t_hello_flag),
		cmocka_unit_test(t_config_cert_open),
	};

	return cmocka_run_group_tests_name("bootstrap_cert", tests, certs_make,
					   certs_remove);
}
