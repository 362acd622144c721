/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for cert_verify: a peer's certificate (DER) and its
 * signature over the handshake, as they would arrive in a hello, checked
 * by alpha against a test CA and its CRL compiled in below.  Whatever the
 * bytes, it accepts (0) or refuses (-EACCES) with a reason fit for a log
 * line; it accepts only a node the CA certified and did not revoke
 * (alpha, beta, gamma: delta is revoked), and the same input twice the
 * same way.  The time is fixed (FUZZ_NOW), so the seeds mean the same
 * whatever the day.
 *
 * One input: a big-endian u16 length and that many bytes of certificate,
 * a u8 length and that many bytes of signature, then the node name it
 * claims (up to a NUL; none: "beta").  What is signed is cert_payload's
 * bytes for that name as signer and alpha as verifier, fixed fields.
 *
 * The fixtures were made with docs/certificates.md's commands (-days
 * 36500, and gamma's key P-256).  The seeds in tests/fuzz/corpus/cert
 * are written by this file built with FUZZ_CERT_MKSEEDS:
 *
 * cc -DFUZZ_CERT_MKSEEDS -D_GNU_SOURCE -Iinclude -o build/mkcertseeds \
 *	tests/fuzz/fuzz_cert.c src/cert.c src/util.c src/log.c -lcrypto &&
 *	build/mkcertseeds tests/fuzz/corpus/cert
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cert.h"
#include "fuzz.h"
#include "util.h"

/* 2027-01-01 UTC: inside every fixture's dates (2026-12-03 to 2126). */
#define FUZZ_NOW ((time_t)1798761600)

static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBRDCB96ADAgECAhRewIa3KbyBsxyeH8gXdeaiuASyQTAFBgMrZXAwFzEVMBMG\n"
	"A1UEAwwMaWJmcyBmdXp6IENBMCAXDTI2MTIwMzEzMTA1MloYDzIxMjYxMTA5MTMx\n"
	"MDUyWjAXMRUwEwYDVQQDDAxpYmZzIGZ1enogQ0EwKjAFBgMrZXADIQCIFGDS/t9z\n"
	"xpP3OC3wOE6OfYRBW5dNl0B2RpR9/R8QJqNTMFEwHQYDVR0OBBYEFBoAW62q860D\n"
	"Fr0d2ZM0V+gexXWgMB8GA1UdIwQYMBaAFBoAW62q860DFr0d2ZM0V+gexXWgMA8G\n"
	"A1UdEwEB/wQFMAMBAf8wBQYDK2VwA0EASUgZgQxMoaqNH9FlhywYL/hJWC2WTZIW\n"
	"N5b50QAwgY4AcJkgPp/2f/Bmf3T/d2qo/ZRgCkSNFGj2aPdhC6UXAA==\n"
	"-----END CERTIFICATE-----\n";

static const char crl_pem[] =
	"-----BEGIN X509 CRL-----\n"
	"MIHZMIGMAgEBMAUGAytlcDAXMRUwEwYDVQQDDAxpYmZzIGZ1enogQ0EXDTI2MTIw\n"
	"MzEzMTA1N1oYDzIxMjYxMTA5MTMxMDU3WjAVMBMCAhADFw0yNjEyMDMxMzEwNTda\n"
	"oDAwLjAfBgNVHSMEGDAWgBQaAFutqvOtAxa9HdmTNFfoHsV1oDALBgNVHRQEBAIC\n"
	"EAAwBQYDK2VwA0EA26CeO9ko1/2VMxm1Vy60fgQh3jKw6fz1e+LY9Fx7peIpD2W6\n"
	"SjiOtYO5BUBv8STOmLB8Pdyc2OxMDqLME/1aCw==\n"
	"-----END X509 CRL-----\n";

static const char alpha_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBSjCB/aADAgECAgIQADAFBgMrZXAwFzEVMBMGA1UEAwwMaWJmcyBmdXp6IENB\n"
	"MCAXDTI2MTIwMzEzMTA1MloYDzIxMjYxMTA5MTMxMDUyWjAQMQ4wDAYDVQQDDAVh\n"
	"bHBoYTAqMAUGAytlcAMhAP71B/Q+t0YT/wGzacapiy51XLarf5pAIvkGPjGWNbGz\n"
	"o3IwcDAMBgNVHRMBAf8EAjAAMA4GA1UdDwEB/wQEAwIHgDAQBgNVHREECTAHggVh\n"
	"bHBoYTAdBgNVHQ4EFgQUPGYzfAYfAwg0faX8EEYMMGxGKVcwHwYDVR0jBBgwFoAU\n"
	"GgBbrarzrQMWvR3ZkzRX6B7FdaAwBQYDK2VwA0EAHNx2ERnWTtPZ2OR2GC1j/27d\n"
	"FncIn3TIG4G+9zsbkfk64x8477YETlDgRI05aoX3flkbQCYAmXoQV7+lchRyAg==\n"
	"-----END CERTIFICATE-----\n";

static const char alpha_key[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MC4CAQAwBQYDK2VwBCIEIEnVvOzzIV5G9LCekg/QJawXdDI8IL26VHWSiPQXFI/E\n"
	"-----END PRIVATE KEY-----\n";

#ifdef FUZZ_CERT_MKSEEDS
static const char beta_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBSDCB+6ADAgECAgIQATAFBgMrZXAwFzEVMBMGA1UEAwwMaWJmcyBmdXp6IENB\n"
	"MCAXDTI2MTIwMzEzMTA1MloYDzIxMjYxMTA5MTMxMDUyWjAPMQ0wCwYDVQQDDARi\n"
	"ZXRhMCowBQYDK2VwAyEAO6q9UcKu+C15ywkmxH+lAp5i2ZU527BRF8jWP/+ghVaj\n"
	"cTBvMAwGA1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQDAgeAMA8GA1UdEQQIMAaCBGJl\n"
	"dGEwHQYDVR0OBBYEFJs+y4qqqz92wZPDR8Oqnm3Iyro+MB8GA1UdIwQYMBaAFBoA\n"
	"W62q860DFr0d2ZM0V+gexXWgMAUGAytlcANBABvwPxbmbk4l2o5v+98Rgnc4Rmin\n"
	"/OEZIC7iT2/LSi70KkXbmwQWzRAcHnCmXz1aH+vyRnQMtlXRsKBfjpp8uw0=\n"
	"-----END CERTIFICATE-----\n";

static const char beta_key[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MC4CAQAwBQYDK2VwBCIEIBTtyqRXMohuUq8r6LrFCtbHAmZ966T+qNBVK+Ro3fOa\n"
	"-----END PRIVATE KEY-----\n";

static const char gamma_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBejCCASygAwIBAgICEAIwBQYDK2VwMBcxFTATBgNVBAMMDGliZnMgZnV6eiBD\n"
	"QTAgFw0yNjEyMDMxMzEwNTNaGA8yMTI2MTEwOTEzMTA1M1owEDEOMAwGA1UEAwwF\n"
	"Z2FtbWEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARILlu6Z1ebA0fBunO+z5Hs\n"
	"dxDZ1dAFB/bgueE3Bq3rsyuWlWefotXFlJStcqpJinXRYVuf7nNzTcEjddYXMOTw\n"
	"o3IwcDAMBgNVHRMBAf8EAjAAMA4GA1UdDwEB/wQEAwIHgDAQBgNVHREECTAHggVn\n"
	"YW1tYTAdBgNVHQ4EFgQUBi78ocjMD4r2H8pND/xvyW+NnGEwHwYDVR0jBBgwFoAU\n"
	"GgBbrarzrQMWvR3ZkzRX6B7FdaAwBQYDK2VwA0EAffKgfYaOuYZcVY6FeUK2xJq0\n"
	"7dIgv8XMEAwjYuO+2yymRsDCD9Rx7paru8Mbje7kukD5f9kLcLQYBvRpHXkLAA==\n"
	"-----END CERTIFICATE-----\n";

static const char gamma_key[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgWAL1rQe517WQ3/CH\n"
	"doib71Dv7w1ql2wVh+caaPrYvpyhRANCAARILlu6Z1ebA0fBunO+z5HsdxDZ1dAF\n"
	"B/bgueE3Bq3rsyuWlWefotXFlJStcqpJinXRYVuf7nNzTcEjddYXMOTw\n"
	"-----END PRIVATE KEY-----\n";

static const char delta_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBSjCB/aADAgECAgIQAzAFBgMrZXAwFzEVMBMGA1UEAwwMaWJmcyBmdXp6IENB\n"
	"MCAXDTI2MTIwMzEzMTA1N1oYDzIxMjYxMTA5MTMxMDU3WjAQMQ4wDAYDVQQDDAVk\n"
	"ZWx0YTAqMAUGAytlcAMhAL+oZAs7TlEuaMAQa1eBKcHylenmRuAYSOpMwxm8iD5x\n"
	"o3IwcDAMBgNVHRMBAf8EAjAAMA4GA1UdDwEB/wQEAwIHgDAQBgNVHREECTAHggVk\n"
	"ZWx0YTAdBgNVHQ4EFgQUYiyxI2Ko9vZyvF3hAlK7Sw/aTmcwHwYDVR0jBBgwFoAU\n"
	"GgBbrarzrQMWvR3ZkzRX6B7FdaAwBQYDK2VwA0EAG+DCwBiszTo5+pEDyXjYGlWz\n"
	"tA07MC6wTnvIG+5e+CBLChJU3KNCNoSiJutctPME6fSM2T1hLR7RM9mgpThvCg==\n"
	"-----END CERTIFICATE-----\n";

static const char delta_key[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MC4CAQAwBQYDK2VwBCIEIHYdHuqYqIm+kBNj1HKAOEEteM0wBwazmvqTG5LfwGUO\n"
	"-----END PRIVATE KEY-----\n";

#endif

static struct cert *alpha;

/* Text into dir/name, mode 0600 (a key must be). */
static int put(const char *dir, const char *name, const char *text, char *path,
	       size_t len)
{
	size_t n = strlen(text);
	int fd, ok;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ok = write(fd, text, n) == (ssize_t)n;
	return close(fd) || !ok ? -1 : 0;
}

/* node's certificate and key opened under the CA (and CRL, when crl),
 * the files removed at once: the daemon holds them in memory. */
static struct cert *open_fixture(const char *pem, const char *key,
				 const char *crl, const char *node)
{
	char dir[] = "/tmp/fuzz_cert.XXXXXX", p[4][64], why[CERT_WHY_MAX];
	struct cert_files f = {p[0], p[1], p[2], crl ? p[3] : NULL};
	struct cert *c = NULL;
	int i;

	CHECK(mkdtemp(dir));
	CHECK(!put(dir, "ca.pem", ca_pem, p[0], sizeof(p[0])));
	CHECK(!put(dir, "node.pem", pem, p[1], sizeof(p[1])));
	CHECK(!put(dir, "node.key", key, p[2], sizeof(p[2])));
	CHECK(!put(dir, "crl.pem", crl ? crl : "", p[3], sizeof(p[3])));
	if (cert_open(&c, &f, node, why, sizeof(why)))
		fprintf(stderr, "fuzz_cert: %s\n", why);
	for (i = 0; i < 4; i++)
		unlink(p[i]);
	rmdir(dir);
	CHECK(c);
	return c;
}

/* What signer signs for alpha, with fixed fields: -EINVAL for a name
 * cert_payload refuses. */
static int fuzz_payload(const char *signer, uint8_t out[CERT_PAYLOAD_MAX])
{
	static const uint8_t mine[16] = {0x5a}, yours[16] = {0xa5};
	struct cert_proof p = {
		.signer = signer,
		.verifier = "alpha",
		.signer_nonce = mine,
		.verifier_nonce = yours,
		.nonce_len = sizeof(mine),
		.signer_boot = 0xb0070001,
		.verifier_boot = 0xb0070002,
		.qpn = 0x000123,
		.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2},
		.lid = 0,
	};

	return cert_payload(&p, out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	alpha = open_fixture(alpha_pem, alpha_key, crl_pem, "alpha");
	return 0;
}

/* A refusal's reason goes to the log and .status: never a control byte. */
static void check_why(const char *why)
{
	size_t i, n = strnlen(why, CERT_WHY_MAX);

	CHECK(n > 0 && n < CERT_WHY_MAX);
	for (i = 0; i < n; i++)
		CHECK((unsigned char)why[i] >= 0x20 && why[i] != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[UTIL_NAME_MAX + 1] = "beta", why[CERT_WHY_MAX];
	uint8_t msg[CERT_PAYLOAD_MAX], *der;
	size_t derlen, siglen, off, n;
	struct cert_peer p;
	int rc, m;

	if (size < 3)
		return 0;
	derlen = util_get16(data);
	if (2 + derlen + 1 > size)
		return 0;
	siglen = data[2 + derlen];
	off = 3 + derlen;
	if (off + siglen > size)
		return 0;
	n = strnlen((const char *)data + off + siglen,
		    size - off - siglen < UTIL_NAME_MAX ? size - off - siglen
							: UTIL_NAME_MAX);
	if (n) {
		memcpy(name, data + off + siglen, n);
		name[n] = '\0';
	}
	m = fuzz_payload(name, msg);
	if (m < 0)
		m = 0;
	/* An exact-size heap copy, so that ASan sees any read past it. */
	der = malloc(derlen ? derlen : 1);
	if (!der)
		return 0;
	memcpy(der, data + 2, derlen);
	rc = cert_verify(alpha, der, derlen, name, msg, (size_t)m, data + off,
			 siglen, FUZZ_NOW, &p, why, sizeof(why));
	CHECK(rc == 0 || rc == -EACCES || rc == -ENOMEM);
	if (rc == -EACCES)
		check_why(why);
	if (rc == 0) {
		CHECK(!strcmp(name, "alpha") || !strcmp(name, "beta") ||
		      !strcmp(name, "gamma"));
		CHECK(p.generation == 1 && p.not_after > FUZZ_NOW);
	}
	CHECK(cert_verify(alpha, der, derlen, name, msg, (size_t)m, data + off,
			  siglen, FUZZ_NOW, NULL, why, sizeof(why)) == rc);
	free(der);
	return 0;
}

#ifdef FUZZ_CERT_MKSEEDS
/* One seed: cert's DER, a signature by it over the payload for signer
 * (its first byte flipped when flip), the name claimed. */
static void seed(const char *dir, const char *file, struct cert *c,
		 const char *signer, const char *claim, int flip)
{
	uint8_t buf[2 + CERT_DER_MAX + 1 + CERT_SIG_MAX + UTIL_NAME_MAX];
	uint8_t msg[CERT_PAYLOAD_MAX];
	char path[256];
	size_t siglen;
	int n = cert_der(c, buf + 2, CERT_DER_MAX), m;
	FILE *f;

	m = fuzz_payload(signer, msg);
	CHECK(n > 0 && m > 0);
	util_put16(buf, (uint16_t)n);
	CHECK(!cert_sign(c, msg, (size_t)m, buf + 3 + n, &siglen));
	buf[2 + n] = (uint8_t)siglen;
	buf[3 + n] ^= (uint8_t)flip;
	memcpy(buf + 3 + n + siglen, claim, strlen(claim));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wb");
	CHECK(f);
	CHECK(fwrite(buf, 3 + n + siglen + strlen(claim), 1, f) == 1);
	CHECK(!fclose(f));
}

int main(int argc, char **argv)
{
	struct cert *beta, *gamma, *delta;

	CHECK(argc == 2);
	LLVMFuzzerInitialize(&argc, &argv);
	beta = open_fixture(beta_pem, beta_key, NULL, "beta");
	gamma = open_fixture(gamma_pem, gamma_key, NULL, "gamma");
	delta = open_fixture(delta_pem, delta_key, NULL, "delta");
	seed(argv[1], "seed-beta", beta, "beta", "beta", 0);
	seed(argv[1], "seed-gamma-p256", gamma, "gamma", "gamma", 0);
	seed(argv[1], "seed-gamma-as-beta", gamma, "beta", "beta", 0);
	seed(argv[1], "seed-beta-badsig", beta, "beta", "beta", 1);
	seed(argv[1], "seed-delta-revoked", delta, "delta", "delta", 0);
	seed(argv[1], "seed-alpha-self", alpha, "alpha", "alpha", 0);
	cert_close(delta);
	cert_close(gamma);
	cert_close(beta);
	cert_close(alpha);
	return 0;
}
#endif
