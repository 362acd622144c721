/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for cert.c: node certificates made with the openssl commands
 * of docs/certificates.md (tests/unit/mkcerts.sh runs them), loaded and
 * checked as a node checks its own at start and a peer's at a handshake:
 * the good case in Ed25519 and ECDSA P-256, a certificate naming gamma
 * presented as beta, another CA, expired, revoked, a rotated CA, the key
 * file's mode, a wrong signature, SAN before CN, and a reload that keeps
 * the old files when the new ones are bad.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "cert.h"
#include "unit.h"
#include "certs_harness.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

static char why[CERT_WHY_MAX];

/* DIR/rel, in one of a few rotating buffers. */
static const char *at(const char *rel)
{
	static char buf[8][128];
	static unsigned i;
	char *p = buf[i++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%.63s", dir, rel);
	return p;
}

/* Open as node with caN/node.pem and .key, under ca (and crl). */
static int open_as(struct cert **c, const char *ca, const char *cadir,
		   const char *node, const char *crl)
{
	char cert[64], key[64];
	struct cert_files f;

	snprintf(cert, sizeof(cert), "%s/%s.pem", cadir, node);
	snprintf(key, sizeof(key), "%s/%s.key", cadir, node);
	f = (struct cert_files){at(ca), at(cert), at(key),
				crl ? at(crl) : NULL};
	why[0] = '\0';
	return cert_open(c, &f, node, why, sizeof(why));
}

static struct cert *must_open(const char *ca, const char *cadir,
			      const char *node, const char *crl)
{
	struct cert *c = NULL;
	int rc = open_as(&c, ca, cadir, node, crl);

	if (rc)
		fail_msg("open %s/%s: %d: %s", cadir, node, rc, why);
	return c;
}

/* A certificate file's DER, read with libcrypto. */
static int der_of(const char *rel, uint8_t *buf)
{
	FILE *f = fopen(at(rel), "r");
	X509 *x;
	int n;

	assert_non_null(f);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	n = i2d_X509(x, &buf);
	X509_free(x);
	assert_true(n > 0 && n <= CERT_DER_MAX);
	return n;
}

/* The handshake bytes signer signs for verifier, with fixed fields. */
static int payload(const char *signer, const char *verifier,
		   uint8_t out[CERT_PAYLOAD_MAX])
{
	static const uint8_t n1[16] = {1, 2, 3}, n2[16] = {9, 8, 7};
	struct cert_proof p = {
		.signer = signer,
		.verifier = verifier,
		.signer_nonce = n1,
		.verifier_nonce = n2,
		.nonce_len = sizeof(n1),
		.signer_boot = 0x11223344,
		.verifier_boot = 0x55667788,
		.qpn = 0x123456,
		.gid = {0xfe, 0x80, [15] = 1},
		.lid = 7,
	};
	int n = cert_payload(&p, out);

	assert_true(n > 0);
	return n;
}

/* cert_verify now, into why, nothing kept. */
static int check(struct cert *c, const uint8_t *der, int n, const char *name,
		 const uint8_t *msg, int m, const uint8_t *sig, size_t siglen)
{
	why[0] = '\0';
	return cert_verify(c, der, (size_t)n, name, msg, (size_t)m, sig, siglen,
			   0, NULL, why, sizeof(why));
}

/* What signer (opened) proves to a verifier checking it as name. */
static int verify_from(struct cert *verifier, struct cert *signer,
		       const char *name, time_t now, struct cert_peer *out)
{
	uint8_t der[CERT_DER_MAX], msg[CERT_PAYLOAD_MAX], sig[CERT_SIG_MAX];
	size_t siglen;
	int n = cert_der(signer, der, sizeof(der)), m;

	assert_true(n > 0);
	m = payload(name, "beta", msg);
	assert_int_equal(cert_sign(signer, msg, (size_t)m, sig, &siglen), 0);
	why[0] = '\0';
	return cert_verify(verifier, der, (size_t)n, name, msg, (size_t)m, sig,
			   siglen, now, out, why, sizeof(why));
}

/* Beta takes alpha, each of the same CA: Ed25519, then ECDSA P-256;
 * what it keeps is alpha's certificate's fingerprint and end. */
static void test_good(void **state)
{
	const char *cadir[] = {"ca1", "ca2"};
	struct cert_peer p;
	size_t i;

	for (i = 0; i < 2; i++) {
		char ca[16];
		struct cert *beta, *alpha;

		snprintf(ca, sizeof(ca), "%s/ca.pem", cadir[i]);
		beta = must_open(ca, cadir[i], "beta", NULL);
		alpha = must_open(ca, cadir[i], "alpha", NULL);
		memset(&p, 0, sizeof(p));
		assert_int_equal(verify_from(beta, alpha, "alpha", 0, &p), 0);
		assert_int_equal(p.generation, 1);
		assert_true(p.not_after > time(NULL) + 300 * 86400);
		assert_true(p.fp[0] | p.fp[1] | p.fp[2] | p.fp[31]);
		cert_close(alpha);
		cert_close(beta);
	}
}

/* gamma's certificate and key, presented as beta: refused by a peer,
 * and by gamma's own daemon started as beta. */
static void test_names_another(void **state)
{
	struct cert *alpha = must_open("ca1/ca.pem", "ca1", "alpha", NULL);
	struct cert *gamma = must_open("ca1/ca.pem", "ca1", "gamma", NULL);
	struct cert_files f = {at("ca1/ca.pem"), at("ca1/gamma.pem"),
			       at("ca1/gamma.key"), NULL};
	struct cert *c = NULL;

	assert_int_equal(verify_from(alpha, gamma, "beta", 0, NULL), -EACCES);
	assert_string_equal(why, "certificate names gamma, not beta");
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(why, "gamma.pem: certificate names gamma, "
				    "not beta"));
	cert_close(gamma);
	cert_close(alpha);
}

/* A certificate of another CA is refused; with both CAs in `ca` (a
 * rotation), either is taken, and a node of either takes the other. */
static void test_other_ca_and_rotation(void **state)
{
	struct cert *beta1 = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	struct cert *alpha2 = must_open("ca2/ca.pem", "ca2", "alpha", NULL);
	struct cert *both1 = must_open("both.pem", "ca1", "beta", NULL);
	struct cert *both2 = must_open("both.pem", "ca2", "alpha", NULL);
	struct cert *alpha1 = must_open("ca1/ca.pem", "ca1", "alpha", NULL);

	assert_int_equal(verify_from(beta1, alpha2, "alpha", 0, NULL), -EACCES);
	assert_string_equal(why, "not signed by the cluster CA");
	assert_int_equal(verify_from(both1, alpha2, "alpha", 0, NULL), 0);
	assert_int_equal(verify_from(both1, alpha1, "alpha", 0, NULL), 0);
	assert_int_equal(verify_from(both2, both1, "beta", 0, NULL), 0);
	cert_close(alpha1);
	cert_close(both2);
	cert_close(both1);
	cert_close(alpha2);
	cert_close(beta1);
}

/* Expired: made so (openssl ca -enddate), or looked at after its end;
 * not valid yet before its start; and our own is refused at open. */
static void test_expired(void **state)
{
	struct cert *beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	struct cert *alpha = must_open("ca1/ca.pem", "ca1", "alpha", NULL);
	uint8_t der[CERT_DER_MAX], msg[CERT_PAYLOAD_MAX];
	struct cert_expiry e;
	struct cert *c = NULL;
	int n = der_of("ca1/expired.pem", der),
	    m = payload("beta", "beta", msg);

	assert_int_equal(check(beta, der, n, "beta", msg, m, msg, 64), -EACCES);
	assert_string_equal(why, "certificate expired 2025-11-30");
	assert_int_equal(cert_expiries(alpha, &e, 1), 1);
	assert_int_equal(
		verify_from(beta, alpha, "alpha", e.not_after - 60, NULL), 0);
	assert_int_equal(
		verify_from(beta, alpha, "alpha", e.not_after + 60, NULL),
		-EACCES);
	assert_non_null(strstr(why, "certificate expired 20"));
	assert_int_equal(verify_from(beta, alpha, "alpha", 86400, NULL),
			 -EACCES);
	assert_non_null(strstr(why, "certificate not valid before 20"));
	assert_int_equal(open_as(&c, "ca1/ca.pem", "ca1", "expired", NULL),
			 -EINVAL);
	assert_non_null(strstr(why, "certificate expired 2025-11-30"));
	cert_close(alpha);
	cert_close(beta);
}

/* gamma revoked in crl.pem: refused there, taken under the CRL before
 * it; alpha taken under both; gamma's own daemon refuses to start. */
static void test_revoked(void **state)
{
	struct cert *crl =
		must_open("ca1/ca.pem", "ca1", "beta", "ca1/crl.pem");
	struct cert *crl0 =
		must_open("ca1/ca.pem", "ca1", "beta", "ca1/crl0.pem");
	struct cert *gamma = must_open("ca1/ca.pem", "ca1", "gamma", NULL);
	struct cert *alpha = must_open("ca1/ca.pem", "ca1", "alpha", NULL);
	struct cert *c = NULL;

	assert_int_equal(verify_from(crl, gamma, "gamma", 0, NULL), -EACCES);
	assert_string_equal(why, "certificate revoked");
	assert_int_equal(verify_from(crl0, gamma, "gamma", 0, NULL), 0);
	assert_int_equal(verify_from(crl, alpha, "alpha", 0, NULL), 0);
	assert_int_equal(
		open_as(&c, "ca1/ca.pem", "ca1", "gamma", "ca1/crl.pem"),
		-EINVAL);
	assert_non_null(strstr(why, "certificate revoked"));
	/* ca2 has no CRL in ca1's file: its nodes are refused, not let by. */
	assert_int_equal(open_as(&c, "both.pem", "ca2", "alpha", "ca1/crl.pem"),
			 -EINVAL);
	assert_non_null(strstr(why, "no CRL of its CA in crl"));
	/* Both CRLs (a rotation): each CA's certificates by its own. */
	cert_close(crl);
	crl = must_open("both.pem", "ca2", "beta", "bothcrl.pem");
	assert_int_equal(verify_from(crl, gamma, "gamma", 0, NULL), -EACCES);
	assert_string_equal(why, "certificate revoked");
	assert_int_equal(verify_from(crl, alpha, "alpha", 0, NULL), 0);
	cert_close(alpha);
	cert_close(gamma);
	cert_close(crl0);
	cert_close(crl);
}

/* The key file: 0644 refused (its own error), a directory and a
 * symbolic link refused, a key that is not the certificate's refused. */
static void test_key_file(void **state)
{
	struct cert_files f = {at("ca1/ca.pem"), at("ca1/beta.pem"),
			       at("ca1/beta.key"), NULL};
	struct cert *c = NULL;

	assert_int_equal(chmod(f.key, 0644), 0);
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "beta.key: mode 0644: group or others "
				    "may read it"));
	assert_int_equal(chmod(f.key, 0640), 0);
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -EPERM);
	assert_int_equal(chmod(f.key, 0600), 0);
	f.key = at("ca1/issued");
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "issued: not a regular file"));
	f.key = at("ca1/link.key");
	assert_int_equal(symlink(at("ca1/beta.key"), f.key), 0);
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -ELOOP);
	f.key = at("ca1/alpha.key");
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "alpha.key does not match cert"));
	f.key = at("ca1/nothere.key");
	assert_int_equal(cert_open(&c, &f, "beta", why, sizeof(why)), -ENOENT);
	assert_null(c);
}

/* name's first len bytes of from, then what follows (NULL: nothing). */
static void write_cut(const char *name, const char *from, long len,
		      const char *more)
{
	char buf[8192];
	FILE *f = fopen(at(from), "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(len <= (long)n);
	f = fopen(at(name), "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
	if (more)
		fputs(more, f);
	assert_int_equal(fclose(f), 0);
}

/* A CA bundle whose second CA is cut short is refused, not read as one
 * CA; text between and after the certificates is no harm; an empty crl
 * file is refused. */
static void test_bad_files(void **state)
{
	struct cert *c = NULL;
	struct stat st;

	assert_int_equal(stat(at("both.pem"), &st), 0);
	write_cut("cut.pem", "both.pem", st.st_size - 100, NULL);
	assert_int_equal(open_as(&c, "cut.pem", "ca1", "beta", NULL), -EINVAL);
	assert_non_null(strstr(why, "cut.pem: not PEM certificates, or one "
				    "unreadable"));
	write_cut("notes.pem", "both.pem", st.st_size, "old CA: gone\n");
	assert_int_equal(open_as(&c, "notes.pem", "ca2", "beta", NULL), 0);
	cert_close(c);
	write_cut("empty.pem", "both.pem", 0, NULL);
	assert_int_equal(open_as(&c, "ca1/ca.pem", "ca1", "beta", "empty.pem"),
			 -EINVAL);
	assert_non_null(strstr(why, "empty.pem: not PEM CRLs"));
	assert_int_equal(open_as(&c, "empty.pem", "ca1", "beta", NULL),
			 -EINVAL);
}

/* A signature over other bytes, one bit flipped, another node's, none:
 * each refused; the unflipped one taken. */
static void test_wrong_signature(void **state)
{
	struct cert *beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	struct cert *alpha = must_open("ca1/ca.pem", "ca1", "alpha", NULL);
	struct cert *gamma = must_open("ca1/ca.pem", "ca1", "gamma", NULL);
	uint8_t der[CERT_DER_MAX], msg[CERT_PAYLOAD_MAX], sig[CERT_SIG_MAX];
	size_t siglen;
	int n = cert_der(alpha, der, sizeof(der)),
	    m = payload("alpha", "beta", msg);

	assert_int_equal(cert_sign(alpha, msg, (size_t)m, sig, &siglen), 0);
	assert_int_equal(siglen, 64);
	assert_int_equal(check(beta, der, n, "alpha", msg, m, sig, siglen), 0);
	msg[m - 1] ^= 1; /* the LID: another address than was signed */
	assert_int_equal(check(beta, der, n, "alpha", msg, m, sig, siglen),
			 -EACCES);
	assert_string_equal(why, "signature does not verify");
	msg[m - 1] ^= 1;
	sig[5] ^= 0x10;
	assert_int_equal(check(beta, der, n, "alpha", msg, m, sig, siglen),
			 -EACCES);
	assert_int_equal(cert_sign(gamma, msg, (size_t)m, sig, &siglen), 0);
	assert_int_equal(check(beta, der, n, "alpha", msg, m, sig, siglen),
			 -EACCES);
	assert_string_equal(why, "signature does not verify");
	assert_int_equal(check(beta, der, n, "alpha", msg, m, sig, 0), -EACCES);
	cert_close(gamma);
	cert_close(alpha);
	cert_close(beta);
}

/* No DNS SAN: the CN names the node; a SAN present: the CN is not read. */
static void test_san_then_cn(void **state)
{
	struct cert *beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	struct cert *eps = must_open("ca1/ca.pem", "ca1", "epsilon", NULL);
	struct cert *zeta = must_open("ca1/ca.pem", "ca1", "zeta", NULL);
	struct cert *c = NULL;

	assert_int_equal(verify_from(beta, eps, "epsilon", 0, NULL), 0);
	assert_int_equal(verify_from(beta, eps, "epsilo", 0, NULL), -EACCES);
	assert_string_equal(why, "certificate names epsilon, not epsilo");
	/* zeta's CN says beta, its SAN zeta: it is zeta, never beta. */
	assert_int_equal(verify_from(beta, zeta, "beta", 0, NULL), -EACCES);
	assert_string_equal(why, "certificate names zeta, not beta");
	assert_int_equal(open_as(&c, "ca1/ca.pem", "ca1", "zeta", NULL), 0);
	cert_close(c);
	cert_close(zeta);
	cert_close(eps);
	cert_close(beta);
}

/* Bytes that are no certificate, and the CA's own certificate (which
 * chains to itself) presented as a node's. */
static void test_not_a_node_cert(void **state)
{
	struct cert *beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	uint8_t der[CERT_DER_MAX], msg[64] = {0};
	int n = der_of("ca1/ca.pem", der);

	assert_int_equal(check(beta, der, n, "beta", msg, sizeof(msg), msg, 64),
			 -EACCES);
	assert_string_equal(why, "certificate is a CA's, not a node's");
	assert_int_equal(
		check(beta, der, n - 1, "beta", msg, sizeof(msg), msg, 64),
		-EACCES);
	assert_string_equal(why, "certificate unreadable (not DER X.509)");
	assert_int_equal(check(beta, msg, sizeof(msg), "beta", msg, sizeof(msg),
			       msg, 64),
			 -EACCES);
	assert_int_equal(cert_der(beta, der, 10), -ENOSPC);
	cert_close(beta);
}

/* A reload to bad files keeps the good ones (and the generation); to
 * good ones swaps them: here a rotated CA that lets ca2's nodes in. */
static void test_reload(void **state)
{
	struct cert *beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
	struct cert *alpha2 = must_open("ca2/ca.pem", "ca2", "alpha", NULL);
	struct cert_files bad = {at("ca2/ca.pem"), at("ca1/beta.pem"),
				 at("ca1/beta.key"), NULL};
	struct cert_files rot = {at("both.pem"), at("ca1/beta.pem"),
				 at("ca1/beta.key"), NULL};
	struct cert_peer p;

	assert_int_equal(cert_reload(beta, NULL, why, sizeof(why)), 0);
	assert_int_equal(cert_generation(beta), 2);
	assert_int_equal(cert_reload(beta, &bad, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not signed by the cluster CA"));
	assert_int_equal(cert_generation(beta), 2);
	assert_int_equal(verify_from(beta, alpha2, "alpha", 0, NULL), -EACCES);
	assert_int_equal(cert_reload(beta, &rot, why, sizeof(why)), 0);
	assert_int_equal(cert_generation(beta), 3);
	assert_int_equal(verify_from(beta, alpha2, "alpha", 0, &p), 0);
	assert_int_equal(p.generation, 3);
	/* The paths are kept: a plain reload reads both.pem again. */
	assert_int_equal(cert_reload(beta, NULL, why, sizeof(why)), 0);
	assert_int_equal(verify_from(beta, alpha2, "alpha", 0, NULL), 0);
	cert_close(alpha2);
	cert_close(beta);
}

struct verifier {
	struct cert *beta, *alpha;
	int fails;
};

/* Another thread's handshakes, as the bootstrap thread's would run. */
static void *verify_loop(void *arg)
{
	struct verifier *v = arg;
	uint8_t der[CERT_DER_MAX], msg[CERT_PAYLOAD_MAX], sig[CERT_SIG_MAX];
	char mywhy[CERT_WHY_MAX];
	size_t siglen;
	int i, n, m = payload("alpha", "beta", msg);

	n = cert_der(v->alpha, der, sizeof(der));
	for (i = 0; i < 200; i++)
		if (cert_sign(v->alpha, msg, (size_t)m, sig, &siglen) ||
		    cert_verify(v->beta, der, (size_t)n, "alpha", msg,
				(size_t)m, sig, siglen, 0, NULL, mywhy,
				sizeof(mywhy)))
			v->fails++;
	return NULL;
}

/* Reloads on main while two threads sign and verify: none of theirs
 * fails, and every reload counts. */
static void test_reload_while_verifying(void **state)
{
	struct verifier v[2];
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++) {
		v[i].beta = must_open("ca1/ca.pem", "ca1", "beta", NULL);
		v[i].alpha = must_open("ca1/ca.pem", "ca1", "alpha", NULL);
		v[i].fails = 0;
		assert_int_equal(
			pthread_create(&t[i], NULL, verify_loop, &v[i]), 0);
	}
	for (i = 0; i < 20; i++) {
		assert_int_equal(
			cert_reload(v[i % 2].beta, NULL, why, sizeof(why)), 0);
		assert_int_equal(
			cert_reload(v[i % 2].alpha, NULL, why, sizeof(why)), 0);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(v[i].fails, 0);
		assert_int_equal(cert_generation(v[i].beta), 11);
		cert_close(v[i].alpha);
		cert_close(v[i].beta);
	}
}

/* The signed bytes: the domain first, every field in them. */
static void test_payload(void **state)
{
	static const uint8_t n[CERT_NONCE_MAX + 1];
	uint8_t a[CERT_PAYLOAD_MAX], b[CERT_PAYLOAD_MAX];
	struct cert_proof p = {"alpha", "beta", n, n, 16, 1, 2, 3, {0}, 4};
	int la = cert_payload(&p, a), lb;

	assert_int_equal(la, 14 + 6 + 5 + 1 + 32 + 30);
	assert_memory_equal(a, "ibfs-hello-v1", 14);
	p.lid = 5;
	lb = cert_payload(&p, b);
	assert_int_equal(la, lb);
	assert_memory_not_equal(a, b, (size_t)la);
	/* Who signs and who checks are not interchangeable. */
	p = (struct cert_proof){"beta", "alpha", n, n, 16, 1, 2, 3, {0}, 4};
	assert_int_equal(cert_payload(&p, b), la);
	assert_memory_not_equal(a, b, (size_t)la);
	p.nonce_len = CERT_NONCE_MAX + 1;
	assert_int_equal(cert_payload(&p, b), -EINVAL);
	p.nonce_len = 16;
	p.signer = "";
	assert_int_equal(cert_payload(&p, b), -EINVAL);
}

/* ibfs -t's figures: our certificate's end, then each CA's. */
static void test_expiries(void **state)
{
	struct cert *c = must_open("both.pem", "ca1", "beta", NULL);
	struct cert_expiry e[4];
	time_t now = time(NULL);

	assert_int_equal(cert_expiries(c, e, 4), 3);
	assert_string_equal(e[0].subject, "/CN=beta");
	assert_string_equal(e[1].subject, "/CN=ibfs cluster CA");
	assert_in_range(cert_days_left(e[0].not_after, now), 364, 365);
	assert_in_range(cert_days_left(e[1].not_after, now), 3649, 3650);
	assert_int_equal(cert_days_left(now - 3600, now), -1);
	assert_int_equal(cert_days_left(now + 86399, now), 0);
	assert_int_equal(cert_expiries(c, e, 1), 1);
	cert_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_names_another),
		cmocka_unit_test(test_other_ca_and_rotation),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_revoked),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_wrong_signature),
		cmocka_unit_test(test_san_then_cn),
		cmocka_unit_test(test_not_a_node_cert),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_while_verifying),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_expiries),
	};

	return cmocka_run_group_tests(tests, certs_make, certs_remove);
}
