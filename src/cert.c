// SPDX-License-Identifier: BSD-2-Clause
/*
 * Node certificates (include/cert.h): the files loaded into one
 * generation, immutable once built and counted by reference, so that a
 * reload swaps the pointer under a short lock while signers and verifiers
 * go on with the generation they took.  libcrypto does all of the X.509
 * work; what is ours is which checks a node certificate must pass and
 * their reasons in config words.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cert.h"
#include "util.h"

/* A CA bundle or CRL of a large site fits many times over. */
#define CERT_FILE_MAX (4u << 20)

#define CERT_DOMAIN "ibfs-hello-v1"

_Static_assert(sizeof(CERT_DOMAIN) + 2 * (1 + UTIL_NAME_MAX) + 1 +
			       2 * CERT_NONCE_MAX + 30 <=
		       CERT_PAYLOAD_MAX,
	       "cert_payload's largest output fits CERT_PAYLOAD_MAX");

/* One set of files, checked; never changed once built. */
struct cert_gen {
	atomic_int refs;
	uint64_t generation;
	X509_STORE *store; /* the CAs as trust anchors, and the CRLs */
	STACK_OF(X509) * cas;
	X509 *own;
	EVP_PKEY *key;
	uint8_t der[CERT_DER_MAX];
	size_t derlen;
};

struct cert {
	pthread_mutex_t lock;
	struct cert_gen *cur; /* lock: the generation in use */
	/* main's (cert_open, cert_reload): the paths read at the next
	 * reload, and the name our certificate must carry */
	char *paths[4];
	char node[UTIL_NAME_MAX + 1];
};

static void why_set(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* A name from a certificate, fit to print: printable ASCII, cut. */
static void printable(char *dst, size_t dlen, const unsigned char *s, int n)
{
	size_t i;

	for (i = 0; i + 1 < dlen && i < (size_t)(n > 0 ? n : 0); i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	if (dlen)
		dst[i] = '\0';
}

static int asn1_time(const ASN1_TIME *t, time_t *out)
{
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm))
		return -EINVAL;
	*out = timegm(&tm);
	return 0;
}

/* "2026-11-30" (UTC) of an ASN1 time, "?" when it has none. */
static const char *asn1_date(const ASN1_TIME *t, char *buf, size_t len)
{
	struct tm tm;
	time_t when;

	if (asn1_time(t, &when) || !gmtime_r(&when, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d", &tm))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * Read a whole file: what names it in messages ("ca", "key"), and for a
 * key, no symbolic link and nobody but its owner (as secret_file).
 */
static int file_read(const char *path, const char *what, int secret, char **out,
		     size_t *outlen, char *why, size_t whylen)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	size_t got = 0;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | (secret ? O_NOFOLLOW : 0));
	if (fd < 0) {
		rc = -errno;
		why_set(why, whylen, "%s %.200s: %s", what, path,
			strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		why_set(why, whylen, "%s %.200s: not a regular file", what,
			path);
		rc = -EINVAL;
	} else if (secret && util_mode_exposed(st.st_mode)) {
		why_set(why, whylen,
			"%s %.200s: mode %04o: group or others may %s it; "
			"refusing it (chmod 600 it)",
			what, path, (unsigned int)(st.st_mode & 07777),
			util_mode_exposed(st.st_mode));
		rc = -EPERM;
	} else if ((size_t)st.st_size > CERT_FILE_MAX) {
		why_set(why, whylen, "%s %.200s: larger than %u bytes", what,
			path, CERT_FILE_MAX);
		rc = -EFBIG;
	} else if (!(buf = malloc((size_t)st.st_size + 1))) {
		rc = -ENOMEM;
	}
	while (!rc && got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			why_set(why, whylen, "%s %.200s: %s", what, path,
				strerror(-rc));
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (rc) {
		if (buf)
			explicit_bzero(buf, (size_t)st.st_size + 1);
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = got;
	return 0;
}

/*
 * After reading n PEM items: n when the reading stopped at the end of the
 * text; -EINVAL when none was read, or when it stopped on something
 * unreadable (a second CA cut in half is not to be dropped unsaid).
 */
static int pem_end(int n)
{
	unsigned long e = ERR_peek_last_error();

	if (n > 0 && e &&
	    (ERR_GET_LIB(e) != ERR_LIB_PEM ||
	     ERR_GET_REASON(e) != PEM_R_NO_START_LINE))
		n = -EINVAL;
	ERR_clear_error();
	return n ? n : -EINVAL;
}

/* Every PEM certificate in buf onto sk: how many, or -EINVAL. */
static int pem_certs(const char *buf, size_t len, STACK_OF(X509) * sk)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	X509 *x;
	int n = 0;

	if (!bio)
		return -ENOMEM;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		if (!sk_X509_push(sk, x)) {
			X509_free(x);
			n = -ENOMEM;
			break;
		}
		n++;
	}
	BIO_free(bio);
	return n < 0 ? n : pem_end(n);
}

/* Every PEM CRL in buf into store: how many, or -EINVAL. */
static int pem_crls(const char *buf, size_t len, X509_STORE *store)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	X509_CRL *crl;
	int n = 0, ok;

	if (!bio)
		return -ENOMEM;
	while ((crl = PEM_read_bio_X509_CRL(bio, NULL, NULL, NULL))) {
		ok = X509_STORE_add_crl(store, crl);
		X509_CRL_free(crl);
		if (!ok) {
			n = -ENOMEM;
			break;
		}
		n++;
	}
	BIO_free(bio);
	return n < 0 ? n : pem_end(n);
}

/* Never ask for a passphrase (the daemon has no terminal): refuse. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

/* Ed25519, or ECDSA on P-256: the keys whose signatures fit. */
static int key_supported(const EVP_PKEY *k)
{
	char group[32];

	if (EVP_PKEY_get_id(k) == EVP_PKEY_ED25519)
		return 1;
	return EVP_PKEY_get_id(k) == EVP_PKEY_EC &&
	       EVP_PKEY_get_group_name(k, group, sizeof(group), NULL) &&
	       !strcmp(group, SN_X9_62_prime256v1);
}

/* The chain's refusal in config words. */
static void chain_why(X509_STORE_CTX *ctx, int err, char *why, size_t len)
{
	X509 *bad = X509_STORE_CTX_get_current_cert(ctx);
	const char *whose = X509_STORE_CTX_get_error_depth(ctx) > 0
				    ? "the cluster CA's certificate"
				    : "certificate";
	char date[16];

	switch (err) {
	case X509_V_ERR_CERT_HAS_EXPIRED:
		why_set(why, len, "%s expired %s", whose,
			asn1_date(bad ? X509_get0_notAfter(bad) : NULL, date,
				  sizeof(date)));
		break;
	case X509_V_ERR_CERT_NOT_YET_VALID:
		why_set(why, len, "%s not valid before %s", whose,
			asn1_date(bad ? X509_get0_notBefore(bad) : NULL, date,
				  sizeof(date)));
		break;
	case X509_V_ERR_CERT_REVOKED:
		why_set(why, len, "certificate revoked");
		break;
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		why_set(why, len, "not signed by the cluster CA");
		break;
	case X509_V_ERR_UNABLE_TO_GET_CRL:
		why_set(why, len, "no CRL of its CA in crl");
		break;
	case X509_V_ERR_CRL_HAS_EXPIRED:
		why_set(why, len,
			"crl out of date (openssl ca -gencrl makes a new one)");
		break;
	case X509_V_ERR_CRL_NOT_YET_VALID:
		why_set(why, len, "crl not valid yet");
		break;
	case X509_V_ERR_CRL_SIGNATURE_FAILURE:
	case X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE:
		why_set(why, len, "crl not signed by the cluster CA");
		break;
	default:
		why_set(why, len, "certificate refused: %s",
			X509_verify_cert_error_string(err));
	}
}

/* x chains to one of gen's CAs at now, its CRL permitting. */
static int chain_check(const struct cert_gen *gen, X509 *x, time_t now,
		       char *why, size_t len)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc = 0;

	if (!ctx || !X509_STORE_CTX_init(ctx, gen->store, x, NULL)) {
		X509_STORE_CTX_free(ctx);
		ERR_clear_error();
		return -ENOMEM;
	}
	X509_STORE_CTX_set_time(ctx, 0, now);
	if (X509_verify_cert(ctx) != 1) {
		chain_why(ctx, X509_STORE_CTX_get_error(ctx), why, len);
		rc = -EACCES;
	}
	X509_STORE_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

/* The first DNS name of a SAN into first; 1 when one is node exactly,
 * 0 when none is, -1 when the SAN has no DNS name. */
static int san_names(const GENERAL_NAMES *gens, const char *node, char *first,
		     size_t flen)
{
	size_t nlen = strlen(node);
	int i, ndns = 0, match = 0;

	for (i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		const ASN1_IA5STRING *s;

		if (g->type != GEN_DNS)
			continue;
		s = g->d.dNSName;
		if (!ndns++)
			printable(first, flen, ASN1_STRING_get0_data(s),
				  ASN1_STRING_length(s));
		if ((size_t)ASN1_STRING_length(s) == nlen &&
		    !memcmp(ASN1_STRING_get0_data(s), node, nlen))
			match = 1;
	}
	return ndns ? match : -1;
}

/* The subject's last CN, in UTF-8, into first; 1 when it is node. */
static int cn_name(X509 *x, const char *node, char *first, size_t flen)
{
	const X509_NAME *sn = X509_get_subject_name(x);
	unsigned char *utf8 = NULL;
	int i = -1, last = -1, n, match;

	while ((i = X509_NAME_get_index_by_NID(sn, NID_commonName, i)) >= 0)
		last = i;
	if (last < 0)
		return -1;
	n = ASN1_STRING_to_UTF8(
		&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(sn, last)));
	if (n < 0) {
		ERR_clear_error();
		return -1;
	}
	printable(first, flen, utf8, n);
	match = (size_t)n == strlen(node) && !memcmp(utf8, node, (size_t)n);
	OPENSSL_free(utf8);
	return match;
}

/* x names node: its SAN's DNS names, or its CN when it has none. */
static int name_check(X509 *x, const char *node, char *why, size_t len)
{
	char first[UTIL_NAME_MAX + 1] = "";
	GENERAL_NAMES *gens;
	int crit = -1, found = -1;

	gens = X509_get_ext_d2i(x, NID_subject_alt_name, &crit, NULL);
	if (!gens && crit != -1) {
		/* Two SANs, or one unreadable: never fall back to the CN. */
		why_set(why, len, "certificate's subjectAltName unreadable");
		ERR_clear_error();
		return -EACCES;
	}
	if (gens)
		found = san_names(gens, node, first, sizeof(first));
	GENERAL_NAMES_free(gens);
	if (found < 0)
		found = cn_name(x, node, first, sizeof(first));
	if (found > 0)
		return 0;
	if (found < 0)
		why_set(why, len,
			"certificate names no node (no subjectAltName DNS "
			"name, no CN), not %s",
			node);
	else
		why_set(why, len, "certificate names %s, not %s", first, node);
	return -EACCES;
}

/*
 * Everything a node certificate must be, ours or a peer's: signed by a
 * CA, valid at now, not revoked, no CA itself, for signatures, with a key
 * we can check, and naming node.
 */
static int node_check(const struct cert_gen *gen, X509 *x, const char *node,
		      time_t now, char *why, size_t len)
{
	EVP_PKEY *pub = X509_get0_pubkey(x);
	int rc;

	rc = chain_check(gen, x, now, why, len);
	if (rc)
		return rc;
	if (X509_check_ca(x)) {
		why_set(why, len, "certificate is a CA's, not a node's");
		return -EACCES;
	}
	if (!(X509_get_key_usage(x) & KU_DIGITAL_SIGNATURE)) {
		why_set(why, len, "certificate's key usage forbids signing");
		return -EACCES;
	}
	if (!pub || !key_supported(pub)) {
		ERR_clear_error();
		why_set(why, len,
			"certificate's key is not Ed25519 or ECDSA P-256");
		return -EACCES;
	}
	return name_check(x, node, why, len);
}

static void gen_put(struct cert_gen *gen)
{
	if (!gen || atomic_fetch_sub(&gen->refs, 1) != 1)
		return;
	X509_STORE_free(gen->store);
	sk_X509_pop_free(gen->cas, X509_free);
	X509_free(gen->own);
	EVP_PKEY_free(gen->key);
	free(gen);
}

/* The current generation, with a reference the caller puts. */
static struct cert_gen *gen_get(struct cert *c)
{
	struct cert_gen *gen;

	pthread_mutex_lock(&c->lock);
	gen = c->cur;
	atomic_fetch_add(&gen->refs, 1);
	pthread_mutex_unlock(&c->lock);
	return gen;
}

/* `ca` into the store (each a trust anchor) and `crl` beside it. */
static int gen_load_ca(struct cert_gen *gen, const struct cert_files *f,
		       char *why, size_t len)
{
	char *buf;
	size_t blen;
	int i, rc, crl = f->crl && f->crl[0];

	rc = file_read(f->ca, "ca", 0, &buf, &blen, why, len);
	if (rc)
		return rc;
	rc = pem_certs(buf, blen, gen->cas);
	free(buf);
	if (rc < 0) {
		why_set(why, len,
			"ca %.200s: not PEM certificates, or one unreadable",
			f->ca);
		return rc;
	}
	for (i = 0; i < sk_X509_num(gen->cas); i++)
		if (!X509_STORE_add_cert(gen->store,
					 sk_X509_value(gen->cas, i)))
			ERR_clear_error(); /* the same CA twice: once will do */
	X509_STORE_set_flags(gen->store,
			     X509_V_FLAG_PARTIAL_CHAIN |
				     (crl ? X509_V_FLAG_CRL_CHECK : 0));
	if (!crl)
		return 0;
	rc = file_read(f->crl, "crl", 0, &buf, &blen, why, len);
	if (rc)
		return rc;
	rc = pem_crls(buf, blen, gen->store);
	free(buf);
	if (rc < 0)
		why_set(why, len, "crl %.200s: not PEM CRLs, or one unreadable",
			f->crl);
	return rc < 0 ? rc : 0;
}

/* `cert` (the first certificate in it) and `key`, which must match. */
static int gen_load_own(struct cert_gen *gen, const struct cert_files *f,
			char *why, size_t len)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	char *buf;
	size_t blen;
	BIO *bio;
	int rc;

	if (!sk)
		return -ENOMEM;
	rc = file_read(f->cert, "cert", 0, &buf, &blen, why, len);
	if (!rc) {
		rc = pem_certs(buf, blen, sk);
		free(buf);
		if (rc < 0)
			why_set(why, len,
				"cert %.200s: not PEM certificates, or one "
				"unreadable",
				f->cert);
		else
			gen->own = sk_X509_shift(sk);
	}
	sk_X509_pop_free(sk, X509_free);
	if (rc < 0)
		return rc;
	rc = file_read(f->key, "key", 1, &buf, &blen, why, len);
	if (rc)
		return rc;
	bio = BIO_new_mem_buf(buf, (int)blen);
	if (bio)
		gen->key =
			PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	explicit_bzero(buf, blen);
	free(buf);
	ERR_clear_error();
	if (!gen->own || !gen->key) {
		why_set(why, len,
			"key %.200s: no PEM private key without a passphrase "
			"in it",
			f->key);
		return -EINVAL;
	}
	return 0;
}

/* Our certificate and key as a peer checks them, and its DER kept. */
static int gen_check_own(struct cert_gen *gen, const struct cert_files *f,
			 const char *node, char *why, size_t len)
{
	char sub[CERT_WHY_MAX];
	unsigned char *p = gen->der;
	int n, rc;

	if (!key_supported(gen->key)) {
		why_set(why, len, "key %.200s: not Ed25519 or ECDSA P-256",
			f->key);
		return -EINVAL;
	}
	if (X509_check_private_key(gen->own, gen->key) != 1) {
		ERR_clear_error();
		why_set(why, len, "key %.200s does not match cert %.200s",
			f->key, f->cert);
		return -EINVAL;
	}
	rc = node_check(gen, gen->own, node, time(NULL), sub, sizeof(sub));
	if (rc) {
		why_set(why, len, "cert %.200s: %s", f->cert, sub);
		return -EINVAL;
	}
	n = i2d_X509(gen->own, NULL);
	if (n <= 0 || n > CERT_DER_MAX) {
		ERR_clear_error();
		why_set(why, len, "cert %.200s: larger than %d bytes (DER)",
			f->cert, CERT_DER_MAX);
		return -EINVAL;
	}
	gen->derlen = (size_t)i2d_X509(gen->own, &p);
	return 0;
}

/* A new generation from f, checked for node; *out or -errno and why. */
static int gen_build(const struct cert_files *f, const char *node,
		     struct cert_gen **out, char *why, size_t len)
{
	struct cert_gen *gen = calloc(1, sizeof(*gen));
	int rc;

	if (!f || !f->ca || !f->cert || !f->key || !node) {
		free(gen);
		why_set(why, len, "ca, cert and key must all be set");
		return -EINVAL;
	}
	if (!gen)
		return -ENOMEM;
	atomic_init(&gen->refs, 1);
	gen->store = X509_STORE_new();
	gen->cas = sk_X509_new_null();
	rc = !gen->store || !gen->cas ? -ENOMEM : 0;
	if (!rc)
		rc = gen_load_ca(gen, f, why, len);
	if (!rc)
		rc = gen_load_own(gen, f, why, len);
	if (!rc)
		rc = gen_check_own(gen, f, node, why, len);
	ERR_clear_error();
	if (rc) {
		gen_put(gen);
		return rc;
	}
	*out = gen;
	return 0;
}

static void paths_free(struct cert *c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c->paths); i++) {
		free(c->paths[i]);
		c->paths[i] = NULL;
	}
}

/* Keep f's paths for the next reload. */
static int paths_keep(struct cert *c, const struct cert_files *f)
{
	const char *src[] = {f->ca, f->cert, f->key, f->crl ? f->crl : ""};
	char *dup[ARRAY_SIZE(src)];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(src); i++) {
		dup[i] = strdup(src[i]);
		if (!dup[i]) {
			while (i--)
				free(dup[i]);
			return -ENOMEM;
		}
	}
	paths_free(c);
	memcpy(c->paths, dup, sizeof(dup));
	return 0;
}

int cert_open(struct cert **out, const struct cert_files *files,
	      const char *node, char *why, size_t whylen)
{
	struct cert *c;
	int rc;

	if (!node || util_name_problem(node)) {
		why_set(why, whylen, "node name not valid");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	snprintf(c->node, sizeof(c->node), "%s", node);
	rc = gen_build(files, node, &c->cur, why, whylen);
	if (!rc)
		rc = paths_keep(c, files);
	if (rc) {
		cert_close(c);
		return rc;
	}
	c->cur->generation = 1;
	*out = c;
	return 0;
}

void cert_close(struct cert *c)
{
	if (!c)
		return;
	gen_put(c->cur);
	paths_free(c);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int cert_reload(struct cert *c, const struct cert_files *files, char *why,
		size_t whylen)
{
	const struct cert_files same = {c->paths[0], c->paths[1], c->paths[2],
					c->paths[3]};
	struct cert_gen *gen, *old;
	int rc;

	if (!files)
		files = &same;
	rc = gen_build(files, c->node, &gen, why, whylen);
	if (rc)
		return rc;
	if (files != &same) {
		rc = paths_keep(c, files);
		if (rc) {
			gen_put(gen);
			return rc;
		}
	}
	pthread_mutex_lock(&c->lock);
	old = c->cur;
	gen->generation = old->generation + 1;
	c->cur = gen;
	pthread_mutex_unlock(&c->lock);
	gen_put(old);
	return 0;
}

uint64_t cert_generation(struct cert *c)
{
	uint64_t g;

	pthread_mutex_lock(&c->lock);
	g = c->cur->generation;
	pthread_mutex_unlock(&c->lock);
	return g;
}

int cert_der(struct cert *c, uint8_t *buf, size_t len)
{
	struct cert_gen *gen = gen_get(c);
	int rc = (int)gen->derlen;

	if (len < gen->derlen)
		rc = -ENOSPC;
	else
		memcpy(buf, gen->der, gen->derlen);
	gen_put(gen);
	return rc;
}

/* Ed25519 signs the message itself; ECDSA its SHA-256. */
static const EVP_MD *sig_md(const EVP_PKEY *k)
{
	return EVP_PKEY_get_id(k) == EVP_PKEY_ED25519 ? NULL : EVP_sha256();
}

int cert_sign(struct cert *c, const void *msg, size_t len,
	      uint8_t sig[CERT_SIG_MAX], size_t *siglen)
{
	struct cert_gen *gen = gen_get(c);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = -EIO;

	*siglen = CERT_SIG_MAX;
	if (md &&
	    EVP_DigestSignInit(md, NULL, sig_md(gen->key), NULL, gen->key) ==
		    1 &&
	    EVP_DigestSign(md, sig, siglen, msg, len) == 1)
		rc = 0;
	EVP_MD_CTX_free(md);
	ERR_clear_error();
	gen_put(gen);
	return rc;
}

/* sig over msg by x's key: 0, -EACCES, or -EIO. */
static int sig_check(X509 *x, const void *msg, size_t msglen,
		     const uint8_t *sig, size_t siglen)
{
	EVP_PKEY *pub = X509_get0_pubkey(x);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = -EIO;

	if (md && pub &&
	    EVP_DigestVerifyInit(md, NULL, sig_md(pub), NULL, pub) == 1)
		rc = EVP_DigestVerify(md, sig, siglen, msg, msglen) == 1
			     ? 0
			     : -EACCES;
	EVP_MD_CTX_free(md);
	ERR_clear_error();
	return rc;
}

/* What the caller caches of a verified x. */
static int peer_fill(X509 *x, uint64_t generation, struct cert_peer *out)
{
	unsigned int n = 0;

	if (X509_digest(x, EVP_sha256(), out->fp, &n) != 1 ||
	    n != CERT_FP_LEN ||
	    asn1_time(X509_get0_notAfter(x), &out->not_after))
		return -EIO;
	out->generation = generation;
	return 0;
}

int cert_verify(struct cert *c, const uint8_t *der, size_t derlen,
		const char *name, const void *msg, size_t msglen,
		const uint8_t *sig, size_t siglen, time_t now,
		struct cert_peer *out, char *why, size_t whylen)
{
	const unsigned char *p = der;
	struct cert_gen *gen;
	X509 *x = NULL;
	int rc;

	if (util_name_problem(name)) {
		why_set(why, whylen, "claims no valid node name");
		return -EACCES;
	}
	if (derlen && derlen <= CERT_DER_MAX)
		x = d2i_X509(NULL, &p, (long)derlen);
	if (!x || p != der + derlen) {
		X509_free(x);
		ERR_clear_error();
		why_set(why, whylen, "certificate unreadable (not DER X.509)");
		return -EACCES;
	}
	gen = gen_get(c);
	rc = node_check(gen, x, name, now ? now : time(NULL), why, whylen);
	if (!rc) {
		rc = siglen && siglen <= CERT_SIG_MAX
			     ? sig_check(x, msg, msglen, sig, siglen)
			     : -EACCES;
		if (rc == -EACCES)
			why_set(why, whylen, "signature does not verify");
		else if (rc)
			why_set(why, whylen, "signature not checked: %s",
				strerror(-rc));
	}
	if (!rc && out)
		rc = peer_fill(x, gen->generation, out);
	gen_put(gen);
	X509_free(x);
	return rc;
}

int cert_payload(const struct cert_proof *p, uint8_t out[CERT_PAYLOAD_MAX])
{
	size_t ls = p->signer ? strlen(p->signer) : 0;
	size_t lv = p->verifier ? strlen(p->verifier) : 0;
	size_t n = sizeof(CERT_DOMAIN);

	if (!ls || ls > UTIL_NAME_MAX || !lv || lv > UTIL_NAME_MAX ||
	    !p->nonce_len || p->nonce_len > CERT_NONCE_MAX ||
	    !p->signer_nonce || !p->verifier_nonce)
		return -EINVAL;
	/* sizeof counts the NUL: the prefix ends unambiguously. */
	memcpy(out, CERT_DOMAIN, n);
	out[n++] = (uint8_t)ls;
	memcpy(out + n, p->signer, ls);
	n += ls;
	out[n++] = (uint8_t)lv;
	memcpy(out + n, p->verifier, lv);
	n += lv;
	out[n++] = (uint8_t)p->nonce_len;
	memcpy(out + n, p->signer_nonce, p->nonce_len);
	n += p->nonce_len;
	memcpy(out + n, p->verifier_nonce, p->nonce_len);
	n += p->nonce_len;
	util_put32(out + n, p->signer_boot);
	util_put32(out + n + 4, p->verifier_boot);
	util_put32(out + n + 8, p->qpn);
	memcpy(out + n + 12, p->gid, sizeof(p->gid));
	util_put16(out + n + 28, p->lid);
	return (int)(n + 30);
}

static void expiry_of(X509 *x, struct cert_expiry *e)
{
	X509_NAME_oneline(X509_get_subject_name(x), e->subject,
			  sizeof(e->subject));
	if (asn1_time(X509_get0_notAfter(x), &e->not_after))
		e->not_after = 0;
}

int cert_expiries(struct cert *c, struct cert_expiry *out, size_t max)
{
	struct cert_gen *gen = gen_get(c);
	size_t n = 0;
	int i;

	if (max)
		expiry_of(gen->own, &out[n++]);
	for (i = 0; i < sk_X509_num(gen->cas) && n < max; i++)
		expiry_of(sk_X509_value(gen->cas, i), &out[n++]);
	gen_put(gen);
	return (int)n;
}

long cert_days_left(time_t not_after, time_t now)
{
	long long d = (long long)not_after - (long long)now;

	/* Floor, so that a few hours past the end is day -1, not 0. */
	return (long)(d >= 0 ? d / 86400 : -((-d + 86399) / 86400));
}
