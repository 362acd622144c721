/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Node certificates: who a peer is, not only that it is a member.  The
 * cluster CA (`ca`, PEM, one or several certificates so that a CA can be
 * rotated), this node's certificate and key (`cert`, `key`: Ed25519 or
 * ECDSA P-256) and the optional revocation list (`crl`).  libcrypto does
 * every part of it: parsing, the chain, the dates, the CRL, signatures.
 * docs/certificates.md gives the openssl commands that make the files.
 *
 * The node name a certificate carries: its subjectAltName DNS entries, or,
 * only when it has no DNS entry at all, its subject CN (the last, the most
 * specific, when there are several).  That is RFC 6125's rule (and
 * OpenSSH's for host certificates: the names listed, nothing guessed): a
 * SAN is the one field made for names, a CN is a label some tools fill
 * with anything, so it is read only from a certificate that names nothing
 * else.  A name matches byte for byte: no wildcard, no partial label, no
 * case folding (node names are file names, and "Beta" is not "beta").
 *
 * Every file in `ca` is a trust anchor (partial chains allowed): a
 * peer's certificate must be signed by one of them, directly; a peer
 * sends no intermediates.  With `crl`, each CA whose certificates are
 * checked needs its CRL in that file (several allowed), and a CRL past
 * its next update refuses every certificate of its CA: libcrypto's rule,
 * fail closed.
 *
 * Errors: internal functions return 0 or -errno; a `why` buffer (at least
 * CERT_WHY_MAX bytes is enough) gets the reason in config words, for the
 * caller to log and to keep as a peer's last_error.
 *
 * Threads: cert_open and cert_close on main, with no other call in
 * flight on that struct cert.  cert_reload on one thread at a time (main.c's
 * SIGHUP thread), concurrently with the rest.  Everything else from any
 * thread, concurrently (the bootstrap and announce threads sign and
 * verify): each call takes the current files under a short lock and works
 * on them with none held, so a reload never changes them under it.
 */
#ifndef IBFS_CERT_H
#define IBFS_CERT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define CERT_WHY_MAX 256
/* Largest certificate (DER) we send or take: room for a name, two
 * extensions and a P-256 or Ed25519 key, many times over. */
#define CERT_DER_MAX 2048
/* Largest signature: ECDSA P-256 in DER (Ed25519's is 64). */
#define CERT_SIG_MAX 72
#define CERT_FP_LEN  32 /* SHA-256 of the certificate's DER */
/* Longest nonce cert_payload takes. */
#define CERT_NONCE_MAX 32
/* cert_payload's largest output. */
#define CERT_PAYLOAD_MAX 256
/* How many CAs cert_expiries reports (more may be loaded). */
#define CERT_CA_MAX 16

/* The paths, as the config gives them (%n already expanded); crl NULL
 * or "" when there is none. */
struct cert_files {
	const char *ca;
	const char *cert;
	const char *key;
	const char *crl;
};

struct cert;

/*
 * Load the files and check them as a peer would check us: the key file
 * is a regular file, not a symbolic link (-ELOOP), that nobody but its
 * owner may read, write or run (-EPERM: the key file's own error, for the
 * caller's exit 2), the key is Ed25519 or P-256 without a passphrase and
 * matches the certificate, the certificate chains to `ca` now, is not
 * revoked, and names node.  0, or -errno from reading a file, -EPERM,
 * -EINVAL (not a regular file; anything wrong in the contents), -EFBIG
 * (over 4 MiB), -ENOMEM; why says which file and what, in config words.
 */
int cert_open(struct cert **out, const struct cert_files *files,
	      const char *node, char *why, size_t whylen);

/* Free it all.  NULL is fine. */
void cert_close(struct cert *c);

/*
 * SIGHUP: read the same paths again (or files, when not NULL) and check
 * them as cert_open does; only when all is good, use them from now on and
 * bump the generation.  On error the files in use stay, and why says what
 * is wrong with the new ones.
 */
int cert_reload(struct cert *c, const struct cert_files *files, char *why,
		size_t whylen);

/*
 * Which files are in use: 1 at open, one more per successful reload.  A
 * caller's verified-peer cache keeps it beside each entry, so that a
 * reload (a new CA, a new CRL) sends every peer through cert_verify again
 * at its next handshake.
 */
uint64_t cert_generation(struct cert *c);

/* Our certificate in DER for the hello: its length, or -ENOSPC when len
 * is too small (CERT_DER_MAX always does). */
int cert_der(struct cert *c, uint8_t *buf, size_t len);

/* Sign msg with our key (Ed25519, or ECDSA P-256 over SHA-256): the
 * signature's length (at most CERT_SIG_MAX) in *siglen.  0 or -EIO. */
int cert_sign(struct cert *c, const void *msg, size_t len,
	      uint8_t sig[CERT_SIG_MAX], size_t *siglen);

/* What a caller keeps of a peer verified once per incarnation. */
struct cert_peer {
	uint8_t fp[CERT_FP_LEN]; /* SHA-256 of its DER: same cert or not */
	time_t not_after;	 /* verify again once past it */
	uint64_t generation;	 /* cert_generation it was checked under */
};

/*
 * A peer's certificate as it arrived (der, derlen) for the node it claims
 * to be (name), and its signature over msg: 0 when the certificate chains
 * to `ca`, is valid at now (0: the clock), is not revoked, names name, and
 * sig verifies with its key; then *out (may be NULL) says what to cache.
 * -EACCES when refused (why: "certificate names gamma, not beta",
 * "certificate expired 2026-11-30", "not signed by the cluster CA",
 * "certificate revoked", "signature does not verify", ...), -ENOMEM or
 * -EIO (libcrypto failed: not the peer's fault).
 */
int cert_verify(struct cert *c, const uint8_t *der, size_t derlen,
		const char *name, const void *msg, size_t msglen,
		const uint8_t *sig, size_t siglen, time_t now,
		struct cert_peer *out, char *why, size_t whylen);

/*
 * What one side signs in a handshake, so that both build the same bytes:
 * it proves that signer, at this incarnation, answering the verifier's
 * fresh challenge, is at this QPN, GID and LID.  The caller's fields; the
 * layout is cert_payload's.
 */
struct cert_proof {
	const char *signer;   /* node name of who signs */
	const char *verifier; /* node name of who checks */
	const uint8_t *signer_nonce;
	const uint8_t *verifier_nonce; /* the challenge being answered */
	size_t nonce_len;	       /* both nonces', 1..CERT_NONCE_MAX */
	uint32_t signer_boot;
	uint32_t verifier_boot;
	uint32_t qpn; /* the signer's */
	uint8_t gid[16];
	uint16_t lid;
};

/*
 * The canonical bytes of p into out (CERT_PAYLOAD_MAX): "ibfs-hello-v1"
 * and a NUL (domain separation: these bytes are never valid as anything
 * else signed with the key), then each name and nonce as a length byte and
 * its bytes, then the boot ids, QPN, GID and LID, big-endian.  Its length,
 * or -EINVAL when a name or nonce is empty or too long.
 */
int cert_payload(const struct cert_proof *p, uint8_t out[CERT_PAYLOAD_MAX]);

/* One certificate's end, for `ibfs -t`. */
struct cert_expiry {
	char subject[80]; /* its subject, one line, cut */
	time_t not_after;
};

/*
 * Our certificate's end in out[0], then each CA's (up to max in all):
 * how many were written.  cert_days_left says what a user reads.
 */
int cert_expiries(struct cert *c, struct cert_expiry *out, size_t max);

/* Whole days from now to not_after, negative once past it. */
long cert_days_left(time_t not_after, time_t now);

#endif
