/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a ca (issue 31): the challenge and response
 * of announce_auth.c carries each side's certificate and its signature
 * over both hellos (hello_cert_payload, the TCP handshake's payload), in
 * PROOF and CONFIRM, through the announce codec as the datagrams carry
 * them.  alpha (D) and beta (L) with their own certificates trust each
 * other, with or without a secret too.  Refused, with the reason a
 * peer's last_error gives: a node that says it is beta with gamma's
 * certificate (an impostor, as L and as D), beta with a certificate of
 * another CA, and a signature of another exchange (a replay).  The codec
 * keeps the step where it belongs, and the step of docs/certificates.md's
 * certificates fits a 1024-byte MTU and not a 512-byte one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "certs_harness.h"
#include "announce.h"
#include "ann_hello.h"
#include "cert.h"

/* One end: its hello, its exchange state, its key and certificate. */
struct end {
	struct hello me;
	struct ann_auth a;
	uint8_t fresh[HELLO_NONCE_LEN];
	struct ann_key key;
	struct cert *cert;
	uint8_t der[CERT_DER_MAX];
};

static struct end alpha, beta;
static char why[CERT_WHY_MAX];

/* The certificate of node in cadir (ca1, ca2), checked against ca1's CA
 * or cadir's own (own): opened as node, as a daemon does. */
static struct cert *open_cert(const char *cadir, const char *node, int own)
{
	char ca[96], cert[96], key[96];
	struct cert_files f = {ca, cert, key, NULL};
	struct cert *c = NULL;

	snprintf(ca, sizeof(ca), "%s/%s/ca.pem", dir, own ? cadir : "ca1");
	snprintf(cert, sizeof(cert), "%s/%s/%s.pem", dir, cadir, node);
	snprintf(key, sizeof(key), "%s/%s/%s.key", dir, cadir, node);
	if (cert_open(&c, &f, node, why, sizeof(why)))
		fail_msg("cert_open %s/%s: %s", cadir, node, why);
	return c;
}

/* End e named name at qpn, proving with certificate c (and secret, when
 * not NULL). */
static void end_init(struct end *e, const char *name, uint32_t qpn,
		     struct cert *c, const char *secret, uint8_t nonce)
{
	int n;

	memset(e, 0, sizeof(*e));
	hello_of(&e->me, name, qpn);
	memset(e->fresh, nonce, sizeof(e->fresh));
	e->cert = c;
	n = cert_der(c, e->der, sizeof(e->der));
	assert_true(n > 0);
	e->key.cert = c;
	e->key.der = e->der;
	e->key.derlen = (size_t)n;
	if (secret) {
		e->key.secret = secret;
		e->key.len = strlen(secret);
	}
}

/* alpha and beta with their own certificates of ca1 (and secret). */
static void good_ends(const char *secret)
{
	end_init(&alpha, "alpha", 0x11, open_cert("ca1", "alpha", 0), secret,
		 0xa0);
	end_init(&beta, "beta", 0x12, open_cert("ca1", "beta", 0), secret,
		 0xb0);
}

static int teardown(void **state)
{
	cert_close(alpha.cert);
	cert_close(beta.cert);
	alpha.cert = beta.cert = NULL;
	return 0;
}

/* A message as the wire carries it: encoded, then decoded (its DER
 * pointing into buf, which the caller keeps). */
static struct ann_msg wire(const struct ann_msg *m, uint8_t buf[ANN_MSG_MAX])
{
	struct ann_msg d;
	size_t n = ann_msg_encode(m, buf);

	assert_int_equal(
		n, ANN_WIRE_LEN +
			   (m->der ? BS_CERT_HEAD + m->derlen + m->siglen : 0));
	assert_int_equal(ann_msg_decode(&d, buf, n), 0);
	return d;
}

/* End e takes in; its return, *out, *who, and why. */
static int recv_at(struct end *e, const struct ann_msg *in, struct ann_msg *out,
		   struct hello *who)
{
	uint8_t buf[ANN_MSG_MAX];
	struct ann_msg w = wire(in, buf);
	int rc;

	why[0] = 0;
	rc = ann_auth_recv(&e->a, &e->key, &e->me, e->fresh, &w, out, who, why,
			   sizeof(why));
	e->fresh[0]++;
	return rc;
}

/* alpha (D) challenges beta (L), up to alpha's PROOF. */
static void to_proof(struct ann_msg *answer, struct ann_msg *proof)
{
	struct ann_msg chal;

	ann_auth_start(&alpha.a, &alpha.key, &alpha.me, alpha.fresh, &chal);
	alpha.fresh[0]++;
	assert_true(chal.h.flags & HELLO_F_CERT);
	assert_null(chal.der);
	assert_int_equal(recv_at(&beta, &chal, answer, NULL), ANN_AUTH_REPLY);
	assert_null(answer->der);
	assert_int_equal(recv_at(&alpha, answer, proof, NULL), ANN_AUTH_REPLY);
	assert_int_equal(proof->kind, ANN_PROOF);
	assert_non_null(proof->der);
}

/* The whole exchange: each trusts the other's hello as sent. */
static void exchange_good(const char *secret)
{
	struct ann_msg answer, proof, confirm;
	struct hello at_beta, at_alpha;

	good_ends(secret);
	to_proof(&answer, &proof);
	assert_int_equal(recv_at(&beta, &proof, &confirm, &at_beta),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(confirm.kind, ANN_CONFIRM);
	assert_non_null(confirm.der);
	assert_int_equal(recv_at(&alpha, &confirm, NULL, &at_alpha),
			 ANN_AUTH_OK);
	assert_string_equal(at_beta.name, "alpha");
	assert_int_equal(at_beta.addr.qpn, 0x11);
	assert_string_equal(at_alpha.name, "beta");
	assert_int_equal(at_alpha.addr.qpn, 0x12);
}

/* A ca alone: the certificates prove who each is, no HMAC. */
static void test_good_ca_only(void **state)
{
	exchange_good(NULL);
}

/* A secret and a ca: both hold. */
static void test_good_ca_and_secret(void **state)
{
	exchange_good("sesame-sesame-16");
}

/* A node that says it is beta, with gamma's certificate and key, as L:
 * alpha refuses its CONFIRM, and says why. */
static void test_impostor_as_l(void **state)
{
	struct ann_msg answer, proof, confirm;
	struct hello who;

	end_init(&alpha, "alpha", 0x11, open_cert("ca1", "alpha", 0), NULL,
		 0xa0);
	end_init(&beta, "beta", 0x12, open_cert("ca1", "gamma", 0), NULL, 0xb0);
	to_proof(&answer, &proof);
	assert_int_equal(recv_at(&beta, &proof, &confirm, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(recv_at(&alpha, &confirm, NULL, &who), -EACCES);
	assert_string_equal(why, "certificate names gamma, not beta");
	/* the exchange stands: a forged CONFIRM does not end it */
	assert_int_equal(ann_auth_resend(&alpha.a, &answer), 1);
	assert_int_equal(answer.kind, ANN_PROOF);
}

/* The same impostor as D: beta (now the real L, alpha) refuses its
 * PROOF and sends no CONFIRM. */
static void test_impostor_as_d(void **state)
{
	struct ann_msg answer, proof, out;
	struct hello who;

	/* alpha's end plays the impostor "beta" here: D with gamma's */
	end_init(&alpha, "beta", 0x66, open_cert("ca1", "gamma", 0), NULL,
		 0xa0);
	end_init(&beta, "alpha", 0x11, open_cert("ca1", "alpha", 0), NULL,
		 0xb0);
	to_proof(&answer, &proof);
	memset(&out, 0, sizeof(out));
	assert_int_equal(recv_at(&beta, &proof, &out, &who), -EACCES);
	assert_string_equal(why, "certificate names gamma, not beta");
	assert_int_equal(out.kind, 0);
}

/* beta with a certificate of another CA (its own CA trusts it). */
static void test_other_ca(void **state)
{
	struct ann_msg answer, proof, out;
	struct hello who;

	end_init(&alpha, "beta", 0x12, open_cert("ca2", "beta", 1), NULL, 0xa0);
	end_init(&beta, "alpha", 0x11, open_cert("ca1", "alpha", 0), NULL,
		 0xb0);
	to_proof(&answer, &proof);
	assert_int_equal(recv_at(&beta, &proof, &out, &who), -EACCES);
	assert_string_equal(why, "not signed by the cluster CA");
}

/* A signature from another exchange (its nonces, its hellos) does not
 * verify in this one: a recorded PROOF does not replay. */
static void test_replayed_signature(void **state)
{
	struct ann_msg answer, proof, old, confirm;
	struct hello who;

	good_ends(NULL);
	to_proof(&answer, &old);
	/* a new exchange both ways, the old signature in the new PROOF */
	memset(&alpha.a, 0, sizeof(alpha.a));
	memset(&beta.a, 0, sizeof(beta.a));
	to_proof(&answer, &proof);
	memcpy(proof.sig, old.sig, sizeof(proof.sig));
	proof.siglen = old.siglen;
	assert_int_equal(recv_at(&beta, &proof, &confirm, &who), -EACCES);
	assert_string_equal(why, "signature does not verify");
}

/* With a ca, a PROOF that carries no certificate is refused (a node
 * without one, or a stripped step). */
static void test_no_certificate(void **state)
{
	struct ann_msg answer, proof, out;
	struct hello who;

	good_ends(NULL);
	to_proof(&answer, &proof);
	/* the step stripped, the flag left: the codec refuses it */
	{
		uint8_t buf[ANN_MSG_MAX];
		size_t n;

		proof.der = NULL;
		n = ann_msg_encode(&proof, buf);
		assert_int_equal(ann_msg_decode(&out, buf, n), -EBADMSG);
	}
	/* as decoded by something else: ann_auth_recv refuses it too */
	assert_int_equal(ann_auth_recv(&beta.a, &beta.key, &beta.me, beta.fresh,
				       &proof, &out, &who, why, sizeof(why)),
			 -EACCES);
	assert_string_equal(why, "it sent no certificate, we have a ca");
}

/* The step only where it belongs: PROOF and CONFIRM with HELLO_F_CERT,
 * filling the body to its end. */
static void test_codec(void **state)
{
	struct ann_msg answer, proof, d;
	uint8_t buf[ANN_MSG_MAX + 1];
	size_t n;

	good_ends(NULL);
	to_proof(&answer, &proof);
	n = ann_msg_encode(&proof, buf);
	assert_int_equal(ann_msg_decode(&d, buf, n), 0);
	assert_int_equal(d.derlen, alpha.key.derlen);
	assert_memory_equal(d.der, alpha.der, d.derlen);
	/* a byte more, or one less */
	buf[n] = 0;
	assert_int_equal(ann_msg_decode(&d, buf, n + 1), -EBADMSG);
	assert_int_equal(ann_msg_decode(&d, buf, n - 1), -EBADMSG);
	/* on an ANSWER (no proof) the step is refused */
	buf[0] = ANN_ANSWER;
	memset(buf + ANN_WIRE_LEN - BS_PROOF_LEN, 0, BS_PROOF_LEN);
	assert_int_equal(ann_msg_decode(&d, buf, n), -EBADMSG);
	/* an ANNOUNCE with a certificate flag carries no step either */
	n = ann_msg_encode(&answer, buf);
	assert_int_equal(ann_msg_decode(&d, buf, n), 0);
	assert_null(d.der);
}

/* The step of docs/certificates.md's certificates (Ed25519, P-256) fits
 * a datagram at rxe's usual 1024-byte MTU, never at 512 (ann_open
 * refuses to start then, rather than send what would not arrive). */
static void test_fits_mtu(void **state)
{
	struct cert *ed = open_cert("ca1", "alpha", 0);
	struct cert *ec = open_cert("ca2", "alpha", 1);
	uint8_t der[CERT_DER_MAX];
	int ned = cert_der(ed, der, sizeof(der));
	int nec = cert_der(ec, der, sizeof(der));

	assert_true(ned > 0 && nec > 0);
	assert_true(ANN_CERT_DGRAM((size_t)ned) <= 1024);
	assert_true(ANN_CERT_DGRAM((size_t)nec) <= 1024);
	assert_true(ANN_CERT_DGRAM((size_t)ned) > 512);
	assert_true(ANN_CERT_DGRAM((size_t)nec) > 512);
	assert_true(WIRE_HDR_LEN + ANN_MSG_MAX <= WIRE_HDR_LEN + WIRE_ANN_MAX);
	cert_close(ed);
	cert_close(ec);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_good_ca_only),
		T(test_good_ca_and_secret),
		T(test_impostor_as_l),
		T(test_impostor_as_d),
		T(test_other_ca),
		T(test_replayed_signature),
		T(test_no_certificate),
		T(test_codec),
		cmocka_unit_test(test_fits_mtu),
	};

	return cmocka_run_group_tests_name("announce_cert", tests, certs_make,
					   certs_remove);
}
